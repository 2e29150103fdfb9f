"""Grading's speed against its floor, one `python -c "import torch"`, in one run.

    .venv/bin/python benchmarks/grade_speed.py [--repeat N] [--class-size 40] [--out FILE]

Measures, as fresh processes, in rounds that interleave every measurement with
the floor (so that the machine's load, which changes over a run, weighs on
both sides of each ratio alike):

- `grade examples/correct` (six sections and the bonus, every check);
- `check` run in a copy of examples/correct (the students' self-check, with
  the feedback report it writes to ./feedback/);
- `batch` of a class of N copies of the examples (correct, partial and plain
  Python in turn) at --jobs 1 and --jobs 2, and of one student: the marginal
  cost of a student is (time(N) - time(1)) / (N - 1) (in the first
  --batch-repeat rounds only: they take most of the time).

Wall time, and CPU time of the whole process tree: from a cpuacct cgroup of its
own where the machine lets us make one (every process the command starts is
counted, the sandboxed workers included), else from the kernel's accounting of
waited-for children (the workers, reaped by their zygote, are then left out;
the JSON says which; `cpu_waited_ratio` is always the latter, what `time`
reports). Ratios are medians of the per-round ratios. Then one run
of each verb with its phases timed (grade_phases.py). Writes FILE (default
benchmarks/results/grade-speed.json) and prints a summary. About 3 minutes on
an idle 2-core machine with the defaults.
"""
from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grade_phases  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ("correct", "partial", "correct_py")
TARGETS = {"grade_wall": 1.4, "grade_cpu": 2.3, "check_wall": 1.4, "jobs2_speedup": 1.8, "marginal_jobs2_s": 0.3}
CGROUP_ROOT = Path("/sys/fs/cgroup/cpuacct")
# The floor, and one grading of the correct examples (run in a checkout: the path is relative to it)
FLOOR = [sys.executable, "-c", "import torch"]
GRADE = [sys.executable, "-m", "autograder", "grade", "examples/correct", "--format", "json", "--output", os.devnull]


class Meter:
    """Runs a command and returns (wall s, CPU s of its whole tree)."""

    def __init__(self):
        self.cgroup = None
        self.waited = []  # CPU of the waited-for processes only (what `time` reports), run by run
        try:
            path = CGROUP_ROOT / f"grade-speed-{os.getpid()}"
            path.mkdir()
            self.cgroup = path
        except OSError:
            pass
        self.method = "cpuacct cgroup (every process)" if self.cgroup else \
            "rusage of waited-for children (sandboxed workers not counted)"

    def run(self, command: list[str], cwd: Path, env: dict | None = None) -> tuple[float, float]:
        if self.cgroup:
            usage = self.cgroup / "cpuacct.usage"
            usage.write_text("0")
            command = ["sh", "-c", f'echo $$ > {self.cgroup / "cgroup.procs"} && exec "$@"', "sh"] + command
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(command, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.waited.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
        if self.cgroup:
            return wall, int(usage.read_text()) / 1e9
        return wall, self.waited[-1]

    def close(self):
        if self.cgroup:
            for _ in range(50):  # the last processes of a run may take a moment to leave
                try:
                    self.cgroup.rmdir()
                    return
                except OSError:
                    time.sleep(0.1)


def make_class(folder: Path, size: int) -> Path:
    """`size` students, each a copy of one of the examples, in turn."""
    for index in range(size):
        shutil.copytree(ROOT / "examples" / EXAMPLES[index % len(EXAMPLES)], folder / f"student{index:03d}")
    return folder


def commands(scratch: Path, class_size: int) -> dict:
    python = sys.executable
    big, one = make_class(scratch / "class", class_size), make_class(scratch / "one", 1)
    selfcheck = scratch / "selfcheck"
    shutil.copytree(ROOT / "examples" / "correct", selfcheck)

    def batch(folder, jobs, name):
        return [python, "-m", "autograder", "batch", str(folder), "--jobs", str(jobs), "--force",
                "--out", str(scratch / f"out-{name}")]

    return {
        "floor": (FLOOR, ROOT),
        "grade": (GRADE, ROOT),
        "check": ([python, "-m", "autograder", "check"], selfcheck),
        "batch_1": (batch(one, 1, "one"), ROOT),
        f"batch_{class_size}_jobs1": (batch(big, 1, "jobs1"), ROOT),
        f"batch_{class_size}_jobs2": (batch(big, 2, "jobs2"), ROOT),
    }


def measure(repeat: int, batch_repeat: int, class_size: int) -> dict:
    meter = Meter()
    runs, waited = {}, {}
    try:
        with tempfile.TemporaryDirectory() as scratch:
            plan = commands(Path(scratch), class_size)
            for round_number in range(repeat):
                # each verb beside a floor of its own round: the pairs share the load of the moment
                for name in [n for n in plan if n != "floor"]:
                    if name.startswith("batch") and round_number >= batch_repeat:
                        continue
                    for label in (name, "floor") if round_number % 2 else ("floor", name):
                        command, cwd = plan[label]
                        if label == "check":
                            shutil.rmtree(cwd / "feedback", ignore_errors=True)
                        key = label if label != "floor" else f"floor|{name}"
                        runs.setdefault(key, []).append(meter.run(command, cwd))
                        waited.setdefault(key, []).append(meter.waited[-1])
    finally:
        meter.close()
    return {"runs": runs, "waited": waited, "cpu_method": meter.method}


def summarise(runs: dict, waited: dict, class_size: int) -> dict:
    def median(values):
        return round(statistics.median(values), 3)

    out = {"floor": {"wall_s": median([w for k, v in runs.items() if k.startswith("floor|") for w, _ in v]),
                     "cpu_s": median([c for k, v in runs.items() if k.startswith("floor|") for _, c in v])}}
    for name in [k for k in runs if not k.startswith("floor|")]:
        mine, floors = runs[name], runs[f"floor|{name}"]
        out[name] = {"wall_s": median([w for w, _ in mine]), "cpu_s": median([c for _, c in mine]),
                     "wall_ratio": median([w / f for (w, _), (f, _) in zip(mine, floors)]),
                     "cpu_ratio": median([c / f for (_, c), (_, f) in zip(mine, floors)]),
                     # CPU as `time` counts it (the workers, reaped by their zygote, left out), for comparison
                     "cpu_waited_ratio": median([c / f for c, f in zip(waited[name], waited[f"floor|{name}"])])}
    one = out["batch_1"]
    for jobs in (1, 2):
        whole = out[f"batch_{class_size}_jobs{jobs}"]
        whole["marginal_wall_s_per_student"] = round((whole["wall_s"] - one["wall_s"]) / (class_size - 1), 3)
        whole["marginal_cpu_s_per_student"] = round((whole["cpu_s"] - one["cpu_s"]) / (class_size - 1), 3)
    out["jobs2_speedup"] = round(out[f"batch_{class_size}_jobs1"]["wall_s"]
                                 / out[f"batch_{class_size}_jobs2"]["wall_s"], 3)
    return out


def verdicts(summary: dict, class_size: int) -> dict:
    jobs2 = summary[f"batch_{class_size}_jobs2"]
    return {
        f"grade wall <= {TARGETS['grade_wall']}x floor": summary["grade"]["wall_ratio"] <= TARGETS["grade_wall"],
        f"grade CPU <= {TARGETS['grade_cpu']}x floor": summary["grade"]["cpu_ratio"] <= TARGETS["grade_cpu"],
        f"check (with its report) wall <= {TARGETS['check_wall']}x floor":
            summary["check"]["wall_ratio"] <= TARGETS["check_wall"],
        f"batch --jobs 2 >= {TARGETS['jobs2_speedup']}x --jobs 1": summary["jobs2_speedup"] >= TARGETS["jobs2_speedup"],
        f"batch --jobs 2 marginal <= {TARGETS['marginal_jobs2_s']} s/student":
            jobs2["marginal_wall_s_per_student"] <= TARGETS["marginal_jobs2_s"],
    }


def phases() -> dict:
    """One timed run of each verb: where its time goes (trusted side, and the zygote alone)."""
    grade, _ = grade_phases.trusted_timeline("grade", str(ROOT / "examples" / "correct"), report=False)
    with tempfile.TemporaryDirectory() as scratch:
        shutil.copytree(ROOT / "examples" / "correct", Path(scratch) / "mine")
        check, _ = grade_phases.trusted_timeline("check", str(Path(scratch) / "mine"))
    columns = ["phase", "start_s", "took_s"]
    return {"columns": columns, "grade": grade, "check": check, "worker_zygote_alone": grade_phases.zygote_timeline()}


def compile_bytecode(root: Path) -> None:
    """The floor's torch has its bytecode compiled at install; so must the grader's own modules in
    `root`, or a machine that sets PYTHONDONTWRITEBYTECODE recompiles them on every run (~0.12 s of
    CPU) and the figures would time the compiler, not the grader."""
    for package in ("autograder", "solutions"):
        compileall.compile_dir(root / package, quiet=1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3, help="rounds (default %(default)s)")
    parser.add_argument("--batch-repeat", type=int, default=2, help="rounds with the batches (default %(default)s)")
    parser.add_argument("--class-size", type=int, default=40)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "grade-speed.json")
    args = parser.parse_args()
    compile_bytecode(ROOT)
    load_before, started = os.getloadavg(), time.time()
    measured = measure(args.repeat, min(args.batch_repeat, args.repeat), args.class_size)
    summary = summarise(measured["runs"], measured["waited"], args.class_size)
    result = {
        "command": " ".join(["python benchmarks/grade_speed.py"] + sys.argv[1:]),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
                    "load_before": [round(x, 2) for x in load_before],
                    "load_after": [round(x, 2) for x in os.getloadavg()]},
        "rounds": args.repeat, "class_size": args.class_size, "cpu_method": measured["cpu_method"],
        "summary": summary, "targets": verdicts(summary, args.class_size),
        "runs": {k: [[round(w, 3), round(c, 3)] for w, c in v] for k, v in measured["runs"].items()},
        "phases": phases(),
        "seconds": round(time.time() - started, 1),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    floor = summary["floor"]
    print(f"floor (python -c 'import torch'): {floor['wall_s']} s wall, {floor['cpu_s']} s CPU "
          f"(CPU: {measured['cpu_method']}); load {result['machine']['load_before']} -> "
          f"{result['machine']['load_after']}")
    for name, row in summary.items():
        if isinstance(row, dict) and name != "floor":
            extra = "".join(f", {k} {v}" for k, v in row.items() if k.startswith("marginal"))
            print(f"{name}: {row['wall_s']} s wall ({row['wall_ratio']}x), {row['cpu_s']} s CPU "
                  f"({row['cpu_ratio']}x; {row['cpu_waited_ratio']}x counted as `time` does){extra}")
    print(f"batch of {args.class_size}: --jobs 2 is {summary['jobs2_speedup']}x --jobs 1")
    for target, met in result["targets"].items():
        print(f"  {'met ' if met else 'MISS'}  {target}")
    print(f"written: {args.out}")


if __name__ == "__main__":
    main()
