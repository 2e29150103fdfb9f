"""The worker runs a call under its op-by-op watch (worker/watching.Watch) only when the call needs it.

The watch is a Python handler on every aten op a call dispatches: tens of microseconds an op, thousands
of ops a grading. A call needs it when its graded name is bound by a forbidden API, when it guards devices
(the meta device, a default device), when it measures (13's tiles) or when its check counts the ops (the
no-loop checks: count_ops). Any other call runs as torch runs it; and a check that reads `ops` without
asking for them gets None, never a count of 0 that would pass a no-loop check.
"""
from __future__ import annotations

import pytest
import torch
from support import zygote

from autograder.core.call_request import call_message, decode_reply
from autograder.sandbox.limits import Limits

CELL = """
import torch
from torch.utils._python_dispatch import _get_current_dispatch_mode

def watched(x):
    return _get_current_dispatch_mode() is not None, (x * 2).sum()
"""


@pytest.fixture(scope="module")
def worker():
    child = zygote().spawn(Limits(), {"names": ["watched"]})
    try:
        loaded, status = child.request({"op": "load", "cells": [{"label": "cell", "source": CELL}]}, 60)
        assert status == "ok" and loaded["ok"], (status, loaded)
        yield child
    finally:
        child.kill()


def call(child, **options):
    message = call_message({"name": "watched"}, [torch.ones(3)], {}, seed=None, mode=None, return_args=False,
                           device=None, backward=None, noncontiguous=False, count_ops=options.pop("count_ops", False))
    message.update(options)
    reply, status = child.request(message, 60)
    assert status == "ok" and reply["ok"], (status, reply)
    return reply


def test_a_call_that_needs_no_watch_runs_unwatched_and_counts_nothing(worker):
    reply = decode_reply("watched", call(worker))
    assert reply.value[0] is False
    assert reply.ops is None


def test_a_call_that_counts_its_ops_runs_watched(worker):
    reply = decode_reply("watched", call(worker, count_ops=True), counted=True)
    assert reply.value[0] is True
    assert reply.ops >= 2  # the product and the sum


def test_a_call_that_guards_devices_runs_watched(worker):
    assert decode_reply("watched", call(worker, guard_devices=True)).value[0] is True
