"""`python -m autograder.sandbox [--measure N] [--lang en|zh]`: the sandbox tier this machine gives, and why.

Starts one worker child without student code (on the path `start_launcher`
picks), prints the tier it reached and the layers behind it (tiers.py), then,
with --measure, the cost of a section's worker with and without confinement.
"""
from __future__ import annotations

from autograder.i18n import ENVIRONMENT, LANGUAGES, _, _f, resolve, set_language
from autograder.sandbox import tiers
from autograder.sandbox.launch import start_launcher
from autograder.sandbox.limits import Limits


def measure(launcher, rounds: int = 10) -> dict:
    """Median seconds to start, load (nothing) and kill one section's worker, sandbox on and off."""
    import statistics
    import time

    times = {True: [], False: []}
    for _round in range(rounds):
        for on in (True, False):
            started = time.perf_counter()
            child = launcher.spawn(Limits(sandbox=on), {"names": []})
            child.request({"op": "load", "cells": []}, 30)
            child.kill()
            times[on].append(time.perf_counter() - started)
    return {"on": statistics.median(times[True]), "off": statistics.median(times[False])}


def explain(report: dict) -> list[str]:
    """Lines saying which tier was reached and what kept the stronger one away."""
    level = tiers.tier(report)
    lines = [_f("sandbox tier: {tier}", tier=level)]
    missing = tiers.missing_words(report)
    if level == tiers.NAMESPACES:
        lines.append("  " + _("why: namespaces were granted (network, mount and PID), the strongest tier"))
    elif level == tiers.LANDLOCK:
        lines.append("  " + _f("why: namespaces are not granted here ({missing}); Landlock, seccomp and a "
                               "subreaper hold instead", missing=_("; ").join(missing[:3])))
    else:
        where, fix = tiers.advice(report)
        lines.append("  " + _f("why: neither tier holds ({missing})", missing=_("; ").join(missing[:5])))
        lines.append(f"  {where}: {fix}")
        lines.append("  " + _("hidden grading refuses to run here unless given --sandbox weak"))
    return lines


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m autograder.sandbox")
    parser.add_argument("--measure", type=int, default=0, metavar="N",
                        help="also time N alternating worker starts with the sandbox on and off")
    parser.add_argument("--lang", choices=tuple(LANGUAGES), default=None,
                        help=f"language of the lines (default: ${ENVIRONMENT}, then en)")
    args = parser.parse_args(argv)
    try:
        set_language(resolve(args.lang))
    except ValueError as error:
        parser.error(str(error))
    launcher = start_launcher()
    try:
        report = launcher.probe()
        print("\n".join(explain(report)))
        print(launcher.sandbox_line(Limits()))
        if args.measure > 0 and launcher.kind == "fork":
            result = measure(launcher, args.measure)
            print(_f("per section's worker: {on:.0f} ms with the sandbox, {off:.0f} ms without: {more:+.0f} ms each",
                     on=result["on"] * 1000, off=result["off"] * 1000, more=(result["on"] - result["off"]) * 1000))
    finally:
        launcher.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
