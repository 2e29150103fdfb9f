"""worker/lazy_torch.py: the shortcuts through torch's private parts, and torch's plain paths beside them.

Each shortcut must notice a torch whose private part is shaped otherwise and leave torch as it is;
and a grading must come out the same whichever path ran: the shortcuts only save imports.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
import torch
from catalogues import CATALOGUES
from support import correct_source, graded, zygote
from torch.utils._python_dispatch import TorchDispatchMode

from autograder.core.grade import run_checks
from autograder.core.submission import locate
from autograder.sandbox.limits import Limits, minimal_env
from autograder.sandbox.zygote import Zygote
from autograder.worker import lazy_torch

# the correct solution and catalogue mistakes of the sections that reach every shortcut: the meta
# device's kernels (06), nn.MultiheadAttention's shape check (05's reference, a student's own use of
# it), every op through the dispatch watch; passed checks, lost points, a named mistake and an error
CASES = [("05_padding_mask", None), ("05_padding_mask", "wraps nn.MultiheadAttention"), ("06_multihead", None),
         ("06_multihead", "scale by sqrt(d_out)"), ("06_multihead", "split_heads with a bare view")]


def case_source(section_id: str, mistake_id: str | None) -> str:
    if mistake_id is None:
        return correct_source(section_id)
    mistakes = {mistake.id: mistake for mistake in CATALOGUES[section_id].MISTAKES}
    return mistakes[mistake_id].source(section_id)


def grade_all(launcher) -> list:
    results = []
    with tempfile.TemporaryDirectory() as folder:
        for number, (section_id, mistake_id) in enumerate(CASES):
            path = Path(folder) / str(number) / f"{section_id}.py"
            path.parent.mkdir()
            path.write_text(case_source(section_id, mistake_id))
            results.append(graded(run_checks(locate(path), "cpu", launcher=launcher)))
    return results


COMPILER_LOADED = """
import sys

def compiler_loaded():
    return "torch._dynamo" in sys.modules
"""


def compiler_loaded(launcher) -> bool:
    """Whether a worker of `launcher` finds torch's compiler imported: what the plain paths pay for."""
    child = launcher.spawn(Limits(), {"names": ["compiler_loaded"]})
    try:
        loaded, status = child.request({"op": "load", "cells": [{"label": "cell", "source": COMPILER_LOADED}]}, 60)
        assert status == "ok" and loaded["ok"], (status, loaded)
        reply, status = child.request({"op": "call", "target": {"name": "compiler_loaded"}, "args": [],
                                       "kwargs": {"__dict__": []}}, 60)
        assert status == "ok" and reply["ok"], (status, reply)
        return reply["value"]
    finally:
        child.kill()


@pytest.fixture
def plain_torch(monkeypatch):
    """torch's plain paths in this process and in the workers it starts from now on."""
    monkeypatch.setenv(lazy_torch.SWITCH, "off")
    monkeypatch.setattr(torch, "_check_with", getattr(torch._check_with, "plain", torch._check_with))


def test_the_shortcuts_and_the_plain_paths_grade_alike(plain_torch, monkeypatch):
    with monkeypatch.context() as shortcuts:  # the grader as it runs: every shortcut taken
        shortcuts.delenv(lazy_torch.SWITCH)
        with_shortcuts = grade_all(zygote())
        assert compiler_loaded(zygote()) is False
    assert getattr(torch._check_with, "quick", False)
    monkeypatch.setattr(torch, "_check_with", torch._check_with.plain)
    plain_zygote = Zygote()  # its workers are told to take the plain paths (minimal_env passes the switch)
    try:
        plain = grade_all(plain_zygote)
        assert compiler_loaded(plain_zygote) is True  # its workers did take the plain paths
        assert not getattr(torch._check_with, "quick", False)  # the grader's own checks took torch's too
    finally:
        plain_zygote.close()
    for case, got, expected in zip(CASES, plain, with_shortcuts):
        assert got == expected, case
    lost = [check for result in plain for _id, _notes, checks in result[2:] for check in checks if check[1] < check[2]]
    assert lost  # the comparison covers failed checks with their messages, not only passed ones


def test_the_switch_reaches_the_workers(monkeypatch):
    monkeypatch.setenv(lazy_torch.SWITCH, "off")
    assert minimal_env()[lazy_torch.SWITCH] == "off" and not lazy_torch.shortcuts_wanted()


def test_a_check_with_of_other_arguments_is_left_as_it_is(monkeypatch):
    def other(cond, message=None):  # torch's function as a later release might define it
        return None

    monkeypatch.setattr(torch, "_check_with", other)
    assert lazy_torch.quick_shape_checks() is False
    assert torch._check_with is other


def test_a_wrapper_of_another_shape_is_left_as_it_is(monkeypatch):
    def other_wrapper(fn, recursive=True):  # a wrapper with the same closure that caches elsewhere
        def inner(*args, **kwargs):
            return fn(*args, **kwargs) if recursive else None

        return inner

    def kernel():
        return 1

    monkeypatch.setattr(torch._compile, "_disable_dynamo", other_wrapper)
    wrapped = other_wrapper(kernel)  # kept alive: the collector would find it
    assert lazy_torch.defer_dynamo() == 0
    assert not hasattr(kernel, lazy_torch.ATTRIBUTE) and wrapped() == 1


@pytest.mark.parametrize("switch, as_written", [("on", True), ("off", False)])
def test_a_dispatch_mode_keeps_its_handler_only_with_the_shortcuts(monkeypatch, switch, as_written):
    monkeypatch.setenv(lazy_torch.SWITCH, switch)

    class Mode(lazy_torch.DispatchAsWritten, TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    assert lazy_torch.dispatch_as_written(Mode) is as_written


def test_a_wrapped_function_that_keeps_no_attributes_stays_wrapped(monkeypatch):
    def same_shape(fn, recursive=True):  # torch's wrapper as this release writes it, in short
        def inner(*args, **kwargs):
            return (getattr(fn, "__dynamo_disable", None) or fn)(*args, **kwargs) if recursive else None

        return inner

    def kernel():
        return 1

    monkeypatch.setattr(torch._compile, "_disable_dynamo", same_shape)
    wrapped = [same_shape(kernel), same_shape(len)]  # a builtin takes no attribute: it keeps torch's path
    assert lazy_torch.defer_dynamo() == 1
    assert hasattr(kernel, lazy_torch.ATTRIBUTE) and wrapped[0]() == 1 and wrapped[1]([1, 2]) == 2
