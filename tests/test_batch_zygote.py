"""A batch's zygote: what it prepares once for every child (modules imported, memory in huge pages),
and that its children are the same children for it.
"""
from __future__ import annotations

import os

import pytest

from autograder.sandbox.limits import Limits
from autograder.sandbox.zygote import Zygote
from autograder.worker import huge_pages  # it imports nothing of the worker's folder

MAPS = """\
55d000000000-55d000a00000 rw-p 00000000 00:00 0                          [heap]
7f0000100000-7f0000700000 rw-p 00000000 00:00 0 \n\
7f0000800000-7f0000900000 rw-p 00000000 00:00 0 \n\
7f1000000000-7f1000400000 rw-p 00001000 08:01 1234                       /usr/lib/libtorch_cpu.so
7f2000000000-7f2000400000 r--p 00000000 00:00 0 \n\
7f3000000000-7f3000400000 rw-s 00000000 00:05 77                         /dev/shm/x
7ffc00000000-7ffc00400000 rw-p 00000000 00:00 0                          [stack]
"""


def test_only_the_anonymous_private_memory_is_collapsed_in_whole_huge_pages():
    mib = 1024 * 1024
    assert huge_pages.writable_private_ranges(MAPS) == [
        (0x55d000000000, 0x55d000000000 + 10 * mib),  # the heap: 10 MiB, already aligned
        (0x7f0000200000, 0x7f0000600000),  # 1..7 MiB: the aligned 2..6 MiB inside it
    ]  # 1 MiB alone holds no huge page; files, read-only, shared and the stack are left alone


def probe_imports(zygote: Zygote) -> tuple[list, object]:
    """(the sandbox layers of a child, what it says about pandas in its sys.modules)."""
    child = zygote.spawn(Limits(), {"names": ["preloaded"]})
    try:
        cells = [{"label": "probe", "source": "import sys\ndef preloaded():\n    return 'pandas' in sys.modules\n"}]
        loaded, status = child.request({"op": "load", "cells": cells}, 60)
        assert status == "ok" and loaded["defined"] == ["preloaded"], (status, loaded)
        reply, status = child.request({"op": "call", "target": {"name": "preloaded"}, "args": [],
                                       "kwargs": {"__dict__": []}}, 60)
        assert status == "ok" and reply["ok"], (status, reply)
        layers = [{k: v for k, v in layer.items() if k != "uid"} for layer in zygote.sandbox["layers"]]  # uid: one per child
        return layers, reply["value"]
    finally:
        child.kill()


def test_a_batch_zygote_preloads_and_its_children_are_confined_alike():
    plain = Zygote()
    batch = Zygote(preload=("pandas", "no_such_module_here"), huge_pages=True)  # a missing one is skipped
    try:
        plain_layers, plain_found = probe_imports(plain)
        batch_layers, batch_found = probe_imports(batch)
    finally:
        plain.close()
        batch.close()
    assert (plain_found, batch_found) == (False, True)
    assert batch_layers == plain_layers


def anon_huge_kib(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as rollup:
            lines = [line for line in rollup if line.startswith("AnonHugePages:")]
    except OSError:
        return None
    return int(lines[0].split()[1]) if lines else None


def test_a_batch_zygote_holds_its_memory_in_huge_pages():
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as setting:
            if "[never]" in setting.read():
                pytest.skip("degraded: transparent huge pages are turned off on this machine")
    except OSError:
        pytest.skip("degraded: no transparent huge pages here")
    if tuple(int(x) for x in os.uname().release.split(".")[:2] if x.isdigit()) < (6, 1):
        pytest.skip("degraded: MADV_COLLAPSE needs Linux 6.1")
    zygote = Zygote(warm_meta=True, huge_pages=True)  # as a batch starts it
    try:
        zygote.probe()  # answered once the zygote has collapsed its memory and serves
        collapsed = anon_huge_kib(zygote.process.pid)
    finally:
        zygote.close()
    if collapsed is None:
        pytest.skip("degraded: the zygote's memory map is not readable here")
    assert collapsed >= 64 * 1024, f"{collapsed} KiB in huge pages"
