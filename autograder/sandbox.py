"""The sandbox of the worker children, as the trusted side sees it.

The layers themselves are set up inside each child (autograder/worker/sandbox.py
and confine.py); the zygote passes on what each child reported. This module
turns that report into the one line the grader prints, and lets tests ask
which layers are in force on this machine (a test that needs a missing layer
is reported as degraded, not passed).
"""
from __future__ import annotations

GIB, MIB = 1024**3, 1024**2

# names of layers a test may require -> how the child's report names them
LAYER_PREFIX = {
    "network": "network namespace",
    "mount": "mount namespace",
    "hidden": "answers hidden",
    "readonly": "read-only filesystem",
    "pid": "PID namespace",
    "proc": "private /proc",
    "unprivileged": "unprivileged user",
}


def _size(value: int) -> str:
    if value >= GIB and value % GIB == 0:
        return f"{value // GIB} GiB"
    if value >= MIB:
        return f"{value / MIB:g} MiB"
    return f"{value} bytes"


def describe(report: dict | None, limits) -> str:
    """E.g. "sandbox: network namespace, ..., rlimits (memory 4 GiB, ...); missing: ..."."""
    if not report:
        return "sandbox: no worker was started"
    layers = [x for x in report.get("layers", []) if not x.startswith("rlimit:")]
    set_limits = {x.split(":", 1)[1] for x in report.get("layers", []) if x.startswith("rlimit:")}
    parts = []
    for key, text in (("memory_bytes", f"memory {_size(limits.memory_bytes)}"),
                      ("cpu_seconds", f"cpu {limits.cpu_seconds:g} s"),
                      ("file_bytes", f"files {_size(limits.file_bytes)}"),
                      ("processes", f"processes {limits.processes}")):
        if key in set_limits:
            parts.append(text)
    timeouts = f"timeouts ({limits.call_seconds:g} s per call, {limits.load_seconds:g} s per load)"
    line = "sandbox: " + ", ".join(layers + [f"rlimits ({', '.join(parts)})", timeouts])
    missing = list(report.get("missing", []))
    missing += [f"rlimit {key}" for key in ("memory_bytes", "cpu_seconds", "file_bytes", "processes")
                if key not in set_limits]
    if missing:
        line += "; missing: " + ", ".join(missing)
    return line


def has_layer(report: dict | None, name: str) -> bool:
    """Whether the layer `name` (a key of LAYER_PREFIX) was in force in the reporting child."""
    prefix = LAYER_PREFIX[name]
    return bool(report) and any(x.startswith(prefix) for x in report.get("layers", []))


def probe(zygote, limits=None) -> dict:
    """Start one child of `zygote` without student code, and return its report."""
    from autograder.workers import Limits

    if zygote.sandbox is None:
        child = zygote.spawn(limits or Limits(), {"names": []})
        child.kill()
    return zygote.sandbox


def measure(zygote, rounds: int = 10) -> dict:
    """Median seconds to start, load (nothing) and kill one section's worker, sandbox on and off."""
    import statistics
    import time

    from autograder.workers import Limits

    times = {True: [], False: []}
    for _ in range(rounds):
        for on in (True, False):
            started = time.perf_counter()
            child = zygote.spawn(Limits(sandbox=on), {"names": []})
            child.request({"op": "load", "cells": []}, 30)
            child.kill()
            times[on].append(time.perf_counter() - started)
    return {"on": statistics.median(times[True]), "off": statistics.median(times[False])}


def main(argv=None) -> int:
    """`python -m autograder.sandbox [--measure N]`: the sandbox line of this machine, and its cost."""
    import argparse

    from autograder.workers import Limits, Zygote

    parser = argparse.ArgumentParser(prog="python -m autograder.sandbox")
    parser.add_argument("--measure", type=int, default=0, metavar="N",
                        help="also time N alternating worker starts with the sandbox on and off")
    args = parser.parse_args(argv)
    zygote = Zygote()
    try:
        probe(zygote)
        print(zygote.sandbox_line(Limits()))
        if args.measure > 0:
            result = measure(zygote, args.measure)
            print(f"per section: {result['on'] * 1000:.0f} ms with the sandbox, {result['off'] * 1000:.0f} ms "
                  f"without: {(result['on'] - result['off']) * 1000:+.0f} ms "
                  f"(x6 sections: {(result['on'] - result['off']) * 6:+.2f} s)")
    finally:
        zygote.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
