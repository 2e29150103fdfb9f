"""What a confined worker can reach: the network, other processes, other processes' GPU memory.

Another process (`hold_pattern`) fills GPU memory with a 64-bit pattern and
keeps it; a second one fills it and exits. Then a worker child, started as
every grading starts one, runs `probe` as student code would run: it tries to
connect out, lists the processes it can see, and on a GPU takes a large block
of fresh GPU memory and counts the words that hold the pattern. A worker that
can read what another process holds or left on the GPU would find it there.
"""
from __future__ import annotations

import subprocess
import sys
import time

PATTERN = 0x5EC2E7C0DE5EC2E7  # as a signed 64-bit integer below
BLOCK_BYTES = 1024**3

PROBE = '''
import os
import socket

def probe(pattern, block_bytes, device):
    found = {}
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(3)
        s.connect(("1.1.1.1", 53))
        found["network"] = "connected to 1.1.1.1:53"
    except OSError as error:
        found["network"] = "refused: " + (error.strerror or type(error).__name__)
    mine = {os.getpid(), os.getppid()}
    try:
        seen = [int(p) for p in os.listdir("/proc") if p.isdigit()]
        found["processes"] = "%d visible, %d besides itself and its parent" % (
            len(seen), len([p for p in seen if p not in mine]))
    except OSError as error:
        found["processes"] = "none: " + (error.strerror or type(error).__name__)
    if device == "cuda":
        import torch
        block = torch.empty(block_bytes // 8, dtype=torch.int64, device="cuda")
        # counted a slice at a time: a sum over the whole (block == pattern) widens it to int64 first,
        # a second block's worth, past the worker's GPU memory cap (seen on an H200)
        found["gpu_pattern_words"] = str(sum(int((part == pattern).sum()) for part in block.split(1 << 24)))
    return found
'''

HOLDER = '''
import sys, time, torch
block = torch.full((int(sys.argv[1]) // 8,), int(sys.argv[2]), dtype=torch.int64, device="cuda")
torch.cuda.synchronize()
print("ready", flush=True)
if sys.argv[3] == "hold":
    sys.stdin.read()  # until the caller closes it
'''


def signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def hold_pattern(keep: bool) -> subprocess.Popen:
    """A process that fills BLOCK_BYTES of GPU memory with PATTERN; it keeps it when `keep`, else exits."""
    process = subprocess.Popen([sys.executable, "-c", HOLDER, str(BLOCK_BYTES), str(signed(PATTERN)),
                                "hold" if keep else "leave"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               text=True)
    line = process.stdout.readline()
    if line.strip() != "ready":
        process.kill()
        raise RuntimeError("the process holding the GPU pattern did not start")
    if not keep:
        process.wait(timeout=60)
    return process


def run_probe(device: str) -> dict:
    """The probe's findings from a worker child confined as grading confines one, on `device`."""
    from autograder.sandbox.limits import Limits
    from autograder.sandbox.zygote import Zygote
    from autograder.worker import wire

    zygote = Zygote()
    try:
        limits = Limits()
        child = zygote.spawn(limits, {"names": ["probe"], "device": device,
                                      "gpu_memory_bytes": 2 * BLOCK_BYTES})
        try:
            reply, status = child.request({"op": "load", "cells": [{"label": "probe", "source": PROBE}]}, 60)
            if reply is None or not reply.get("ok"):
                raise RuntimeError(f"the probe did not load ({status})")
            reply, status = child.request({"op": "call", "target": {"name": "probe"},
                                           "args": wire.encode_args([signed(PATTERN), BLOCK_BYTES, device]),
                                           "kwargs": {"__dict__": []}}, 60)
        finally:
            child.kill()
        if reply is None or not reply.get("ok"):
            raise RuntimeError(f"the probe failed: {status}, {(reply or {}).get('error')}")
        found = wire.decode(reply["value"])
        found["sandbox"] = zygote.sandbox_line(limits)
        return found
    finally:
        zygote.close()


def isolation(device: str) -> dict:
    """The probe's findings, with the pattern held by another process (and left by a third) on a GPU."""
    started = time.monotonic()
    holder = None
    try:
        if device == "cuda":
            hold_pattern(keep=False)
            holder = hold_pattern(keep=True)
        found = run_probe(device)
    finally:
        if holder is not None:
            holder.stdin.close()
            holder.wait(timeout=60)
    found["seconds"] = round(time.monotonic() - started, 2)
    return found


def verdict(found: dict, device: str) -> list[str]:
    """What the probe found that a confined worker must not reach ([] when it reached nothing)."""
    problems = []
    if not str(found.get("network", "")).startswith("refused"):
        problems.append(f"the worker reached the network: {found.get('network')}")
    if device == "cuda" and found.get("gpu_pattern_words") != "0":
        problems.append(f"the worker read another process's GPU memory: {found.get('gpu_pattern_words')} "
                        "words of its pattern")
    return problems
