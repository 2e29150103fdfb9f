"""One grading in several checkouts, interleaved with the floor: which change made it cheaper.

    .venv/bin/python benchmarks/grade_ab.py [--rounds N] [--env LABEL:NAME=VALUE ...] LABEL=CHECKOUT ...

Runs `python -m autograder grade examples/correct` in each CHECKOUT (a copy of
the repository: `git archive REV | tar -x -C DIR`; it is imported from there,
since `-m` puts the working directory first on the path) and the floor,
`python -c "import torch"`, round after round, the order reversed every other
round, so that the machine's load weighs on every side alike. Prints wall and
CPU time of each (CPU of every process the command starts, from a cpuacct cgroup
of its own, as grade_speed.py counts it) and the medians of the per-round
ratios to the floor. Each checkout gets its bytecode first (grade_speed's
compile_bytecode): where PYTHONDONTWRITEBYTECODE is set, a checkout without it
compiles the grader on every run (about 0.1 s of CPU). `--env plain:AUTOGRADER_TORCH_SHORTCUTS=off`
runs the checkout labelled plain with that variable set (one checkout may appear under two labels):
what grading costs on torch's plain paths (autograder/worker/lazy_torch.py).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from grade_speed import FLOOR, GRADE, Meter, compile_bytecode  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def measure(checkouts: dict, rounds: int, settings: dict) -> dict:
    plans = {"floor": (FLOOR, ROOT, None)}
    for label, folder in checkouts.items():
        env = {**os.environ, **settings[label]} if label in settings else None
        plans[label] = (GRADE, Path(folder), env)
    meter, runs = Meter(), {label: [] for label in plans}
    try:
        if meter.cgroup is None:
            raise SystemExit("no cpuacct cgroup here: the workers' CPU could not be counted")
        for number in range(rounds):
            for label in list(plans) if number % 2 == 0 else list(plans)[::-1]:
                runs[label].append(meter.run(*plans[label]))
    finally:
        meter.close()
    return runs


def report(runs: dict) -> str:
    floor = runs["floor"]
    lines = []
    for label, measured in runs.items():
        wall, cpu = (statistics.median(x[i] for x in measured) for i in (0, 1))
        line = f"{label:10s} wall {wall:.3f} s  CPU {cpu:.3f} s"
        if label != "floor":
            wall_ratio = statistics.median(w / f for (w, _), (f, _) in zip(measured, floor))
            cpu_ratio = statistics.median(c / f for (_, c), (_, f) in zip(measured, floor))
            line += f"  ({wall_ratio:.3f}x, {cpu_ratio:.3f}x the floor)"
        lines.append(line)
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("checkouts", nargs="+", metavar="LABEL=CHECKOUT")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--env", action="append", default=[], metavar="LABEL:NAME=VALUE")
    args = parser.parse_args()
    checkouts = dict(item.split("=", 1) for item in args.checkouts)
    settings: dict = {}
    for item in args.env:
        label, setting = item.split(":", 1)
        name, value = setting.split("=", 1)
        settings.setdefault(label, {})[name] = value
    for folder in checkouts.values():
        compile_bytecode(Path(folder))
    load_before = os.getloadavg()
    runs = measure(checkouts, args.rounds, settings)
    print(f"load average before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f}; {args.rounds} rounds")
    print(report(runs))


if __name__ == "__main__":
    main()
