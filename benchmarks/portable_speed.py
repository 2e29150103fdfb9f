"""The students' self-check on the portable worker path against the fork path, on one machine.

    .venv/bin/python benchmarks/portable_speed.py [--rounds N] [--checkout DIR] [--out FILE]

Students on Windows run `check` on the portable worker path (one spawned worker
interpreter, pipes; sandbox/portable.py); on Linux it takes the fork path (a
zygote that forks a sandboxed child per section; sandbox/zygote.py). This
builds the interpreter with Windows' Python surface that the tests use
(tests/windows_python.py) and runs `python -m autograder check` in a copy of
examples/correct (every section, and the feedback report it writes) with it
and with this machine's own Python, in turn, round after round, the order
reversed every other round, so that the load of a shared machine weighs on
both alike. Reports the medians of each and the median of the per-round ratios
(portable / fork), and checks from each run's JSON result which path it took
(the fork path's tier is never "none"; the portable path's always is). Then one
timed run of each (grade_phases.py): where the portable path's time goes (its
process's start, the wait for its greeting, each request by op), beside the
fork path's phases. Writes FILE (default benchmarks/results/portable-speed.json)
and prints a summary. `--checkout DIR` measures the grader of another copy of the
repository (`git archive REV | tar -x -C DIR`: an earlier revision), put first on
the import path of both interpreters (the portable worker runs that copy's
worker/boot.py, found beside the grader imported).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
ROOT = BENCHMARKS.parent
sys.path.insert(0, str(BENCHMARKS))
sys.path.insert(1, str(ROOT / "tests"))
import grade_phases  # noqa: E402
import windows_python  # noqa: E402
from grade_speed import compile_bytecode  # noqa: E402

TARGET_RATIO = 1.3  # the portable self-check's wall time, at most this many times the fork path's
PATHS = ("fork", "portable")


def environment(checkout: Path | None) -> dict:
    """This machine's environment without the grader's own switches (AUTOGRADER_WORKER would pick a
    path), with `checkout` first on the import path where one is measured."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("AUTOGRADER_")}
    if checkout is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(checkout)] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


def run_check(python: str, folder: Path, env: dict) -> tuple[float, str]:
    """One `check` in `folder` (its feedback/ removed first): (wall seconds, the tier its JSON names)."""
    shutil.rmtree(folder / "feedback", ignore_errors=True)
    result = folder.parent / f"{folder.name}-result.json"
    command = [python, "-m", "autograder", "check", "--json", str(result)]
    started = time.perf_counter()
    subprocess.run(command, cwd=folder, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    return wall, json.loads(result.read_text(encoding="utf-8"))["extra_data"]["sandbox"]


def measure(pythons: dict, folders: dict, rounds: int, env: dict) -> dict:
    """Wall seconds of each path, round by round, the order reversed every other round."""
    runs = {name: [] for name in PATHS}
    for number in range(rounds):
        for name in PATHS if number % 2 == 0 else PATHS[::-1]:
            wall, tier = run_check(pythons[name], folders[name], env)
            if (tier == "none") != (name == "portable"):
                raise SystemExit(f"the {name} run took the other path (its tier: {tier})")
            runs[name].append(round(wall, 3))
    return runs


def summarise(runs: dict) -> dict:
    ratios = [p / f for f, p in zip(runs["fork"], runs["portable"])]
    return {"fork_wall_s": round(statistics.median(runs["fork"]), 3),
            "portable_wall_s": round(statistics.median(runs["portable"]), 3),
            "ratio": round(statistics.median(ratios), 3),
            "ratio_range": [round(min(ratios), 3), round(max(ratios), 3)]}


def grouped(events: list) -> list:
    """The timeline, with the portable path's events summed by kind: its requests by op (a call is a
    few ms; a check makes hundreds), and its waits for the worker's greeting (one per section)."""
    kept, by_kind = [], {}
    for name, at, took in events:
        if name.startswith("portable request: "):
            name = "portable requests: " + name.split(": ", 1)[1].split(" (", 1)[0]
        elif not name.startswith("portable "):
            kept.append([name, at, took])
            continue
        first, total, count = by_kind.get(name, (at, 0.0, 0))
        by_kind[name] = (first, total + took, count + 1)
    kept += [[f"{name} ({count}, summed; the first at start_s)", round(first, 4), round(total, 4)]
             for name, (first, total, count) in by_kind.items()]
    return sorted(kept, key=lambda event: event[1])


def phases(pythons: dict, folders: dict, env: dict) -> dict:
    """One timed run of each path (grade_phases.py), the portable path's requests summed by op."""
    timelines = {}
    for name in PATHS:
        shutil.rmtree(folders[name] / "feedback", ignore_errors=True)
        events, _ = grade_phases.trusted_timeline("check", str(folders[name]), python=pythons[name], env=env)
        timelines[name] = grouped(events)
    return {"columns": ["phase", "start_s", "took_s"], **timelines}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7, help="rounds of one run each (default %(default)s)")
    parser.add_argument("--checkout", type=Path, help="a copy of the repository to measure instead of this one")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "portable-speed.json")
    args = parser.parse_args()
    checkout = args.checkout.resolve() if args.checkout else None
    compile_bytecode(checkout or ROOT)
    env, started, load_before = environment(checkout), time.time(), os.getloadavg()
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        pythons = {"fork": sys.executable, "portable": windows_python.build(scratch / "windows-python")}
        folders = {name: scratch / name / "mine" for name in PATHS}
        for folder in folders.values():
            shutil.copytree(ROOT / "examples" / "correct", folder)
        runs = measure(pythons, folders, args.rounds, env)
        timelines = phases(pythons, folders, env)
    summary = summarise(runs)
    result = {
        "command": " ".join(["python benchmarks/portable_speed.py"] + sys.argv[1:]),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
                    "load_before": [round(x, 2) for x in load_before],
                    "load_after": [round(x, 2) for x in os.getloadavg()]},
        "checkout": str(checkout) if checkout else "this one", "rounds": args.rounds, "summary": summary, "target_ratio": TARGET_RATIO,
        "target_met": summary["ratio"] <= TARGET_RATIO, "runs_wall_s": runs, "phases": timelines,
        "seconds": round(time.time() - started, 1),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"check on examples/correct ({checkout or ROOT}), {args.rounds} rounds, load {result['machine']['load_before']} -> "
          f"{result['machine']['load_after']}")
    print(f"fork path (this machine's Python): {summary['fork_wall_s']} s wall (median)")
    print(f"portable path (Windows' Python surface): {summary['portable_wall_s']} s wall (median)")
    print(f"ratio (median of the rounds' portable / fork): {summary['ratio']} "
          f"(from {summary['ratio_range'][0]} to {summary['ratio_range'][1]}); "
          f"{'met' if result['target_met'] else 'MISSED'}: <= {TARGET_RATIO}")
    for name in PATHS:
        print(f"{name} path, one run's phases (start s, took s)\n{grade_phases.show(timelines[name])}")
    print(f"written: {args.out}")


if __name__ == "__main__":
    main()
