"""The GPU check's timings on the CPU (benchmarks/gpu_check.py's steps `timings` and `scaling`).

timings: `grade examples/correct --device cpu` against its floor, `python -c "import torch"`,
each run alone (no other step of the check running) a few times, wall and CPU medians and their
ratios, and the first run apart (a cold start pays for reading torch and the course from disk).
On the GPU machine the parity step's CPU grade took 11.9 s against 2.8 s on the 2-core
development machine: this step tells a slow machine (the floor slow too, the ratio as here)
from a slow first run (the first far above the median) and from contention (CPU seconds far
below wall seconds).

scaling: a class of copies of the examples (correct, partial and the blank template, in turn)
graded on the CPU by `batch --jobs J` for each J, each into a fresh folder: wall seconds,
students per second, CPU seconds per student (the kernel's account of waited-for children, from
getrusage(RUSAGE_CHILDREN) before and after: a lower bound, see CPU_METHOD), and whether every J gave every student the same
grades as the first J. A J above the machine's CPU count is skipped, saying so.
"""
from __future__ import annotations

import csv
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KINDS = {"correct": ROOT / "examples" / "correct", "partial": ROOT / "examples" / "partial",
         "blank": ROOT / "student_template"}
SCALING_JOBS = (1, 4, 8, 14)
CLASS_SIZE = 42
# as benchmarks/grade_speed.py found, this leaves out the sandboxed workers (their zygote reaps them, and
# is not itself waited for): a lower bound, to compare between J rather than with grade_speed's cgroup figure
CPU_METHOD = "getrusage(RUSAGE_CHILDREN) deltas: waited-for processes only, the sandboxed workers left out"
NOT_COMPARED = ("sandbox",)  # the sandbox line names the tier, the same for every J; the rest are grades


def run(command: list[str], timeout: float = 600, env: dict | None = None) -> tuple[subprocess.CompletedProcess, float]:
    done, wall, _ = measured(command, timeout, env)
    return done, wall


def measured(command: list[str], timeout: float = 600,
             env: dict | None = None) -> tuple[subprocess.CompletedProcess, float, float]:
    """(result, wall seconds, CPU seconds of the children) of one command run from the repository."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(
                              filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])), **(env or {})})
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return done, wall, cpu


def repeated(command: list[str], repeat: int) -> dict:
    """Medians of `repeat` runs of a command that must succeed, and the first run apart."""
    walls, cpus = [], []
    for _ in range(repeat):
        done, wall, cpu = measured(command, timeout=300)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command[1:])} exited {done.returncode}: {done.stderr.strip()[-300:]}")
        walls.append(round(wall, 2))
        cpus.append(round(cpu, 2))
    return {"wall_s": round(statistics.median(walls), 2), "cpu_s": round(statistics.median(cpus), 2),
            "first_wall_s": walls[0], "runs_wall_s": walls, "runs_cpu_s": cpus}


def step_timings(cuda: bool, record: dict, repeat: int = 3) -> None:
    timings = record["timings"]
    floor = repeated([sys.executable, "-c", "import torch"], repeat)
    alone = repeated([sys.executable, "-m", "autograder", "grade", "examples/correct", "--device", "cpu",
                      "--format", "json", "--output", os.devnull], repeat)
    record["cpu_alone"] = {"import_torch": floor, "grade_correct_cpu": alone,
                           "wall_ratio": round(alone["wall_s"] / floor["wall_s"], 2),
                           "cpu_ratio": round(alone["cpu_s"] / max(floor["cpu_s"], 0.01), 2),
                           "cpu_method": CPU_METHOD}
    timings["import_torch_s"] = floor["wall_s"]
    timings["grade_correct_cpu_alone_s"] = alone["wall_s"]
    timings["grade_correct_cpu_alone_over_import_torch"] = record["cpu_alone"]["wall_ratio"]
    if "grade_correct_cpu_s" in timings:  # the parity step's grade, the first of the run
        timings["grade_correct_cpu_over_import_torch"] = round(timings["grade_correct_cpu_s"] / floor["wall_s"], 2)
    if cuda:
        cuda_timings(record, repeat)


def cuda_timings(record: dict, repeat: int) -> None:
    timings = record["timings"]
    started = repeated([sys.executable, "-c", "import torch; torch.zeros(1, device='cuda'); "
                                              "torch.cuda.synchronize()"], repeat)
    timings["import_torch_and_cuda_context_s"] = started["wall_s"]
    timings["cuda_context_s"] = round(started["wall_s"] - timings["import_torch_s"], 2)
    match = re.search(r"context started in ([0-9.]+) s", record["sandbox_lines"].get("cuda", ""))
    if match:
        timings["worker_cuda_context_s"] = float(match.group(1))
    if "grade_correct_cuda_s" in timings:
        timings["grade_correct_cuda_over_import_torch"] = round(
            timings["grade_correct_cuda_s"] / timings["import_torch_s"], 2)


# ------------------------------------------------------------------------------------- scaling

def make_class(folder: Path, size: int) -> dict[str, str]:
    """student -> the kind of copy they handed in, `size` students, the kinds in turn."""
    kinds = {}
    for index in range(size):
        kind = list(KINDS)[index % len(KINDS)]
        student = f"student{index:03d}"
        shutil.copytree(KINDS[kind], folder / student, ignore=shutil.ignore_patterns("grader", "README.md"))
        kinds[student] = kind
    return kinds


def graded_batch(submitted: Path, out: Path, jobs: int) -> dict:
    """One `batch --jobs J` on the CPU: its figures and each student's grades (grades.csv's row)."""
    done, wall, cpu = measured([sys.executable, "-m", "autograder", "batch", str(submitted), "--out", str(out),
                                "--jobs", str(jobs), "--device", "cpu"], timeout=420)
    if done.returncode != 0 or not (out / "grades.csv").exists():
        raise RuntimeError(f"batch --jobs {jobs} exited {done.returncode}: {done.stderr.strip()[-400:]}")
    with open(out / "grades.csv", newline="") as handle:
        grades = {row["student"]: {k: v for k, v in row.items() if k not in NOT_COMPARED}
                  for row in csv.DictReader(handle)}
    return {"wall_s": wall, "cpu_s": cpu, "grades": grades}


def differing(reference: dict, grades: dict) -> list[str]:
    """The students whose grades are not the same in both tables (one missing counts)."""
    return sorted(s for s in set(reference) | set(grades) if reference.get(s) != grades.get(s))


def step_scaling(scratch: Path, jobs_list: tuple[int, ...], class_size: int, record: dict) -> None:
    cpus = os.cpu_count() or 1
    kinds = make_class(scratch / "scaling-class", class_size)
    rows, reference = [], None
    for jobs in jobs_list:
        if jobs > cpus:
            record["skipped"][f"batch scaling at {jobs} jobs"] = f"more jobs than this machine's {cpus} CPUs"
            continue
        print(f"gpu_check: scaling: {class_size} students, --jobs {jobs} ...", file=sys.stderr, flush=True)
        found = graded_batch(scratch / "scaling-class", scratch / f"scaling-{jobs}-jobs", jobs)
        reference = reference or (jobs, found["grades"])
        different = differing(reference[1], found["grades"])
        rows.append({"jobs": jobs, "students": len(found["grades"]), "wall_s": round(found["wall_s"], 2),
                     "students_per_s": round(len(found["grades"]) / found["wall_s"], 2),
                     "cpu_s_per_student": round(found["cpu_s"] / max(len(found["grades"]), 1), 3),
                     "same_grades": not different})
        if different:
            record["failures"].append(f"batch scaling: with --jobs {jobs}, {len(different)} students grade "
                                      f"differently from --jobs {reference[0]}: {different[:3]}")
    record["batch_scaling"] = {"students": class_size, "cpus": cpus, "device": "cpu",
                               "kinds": {k: list(kinds.values()).count(k) for k in KINDS},
                               "cpu_method": CPU_METHOD, "rows": rows}
    print(scaling_text(record["batch_scaling"]), file=sys.stderr, flush=True)


def scaling_text(scaling: dict) -> str:
    """The scaling table as printed: one line a J."""
    lines = [f"  batch scaling, {scaling['students']} students on the CPU ({scaling['cpus']} CPUs):",
             f"  {'jobs':>6} {'wall s':>8} {'students/s':>11} {'CPU s/student':>14}  same grades"]
    for row in scaling["rows"]:
        lines.append(f"  {row['jobs']:>6} {row['wall_s']:>8.2f} {row['students_per_s']:>11.2f} "
                     f"{row['cpu_s_per_student']:>14.3f}  {'yes' if row['same_grades'] else 'NO'}")
    return "\n".join(lines)


def jobs_option(text: str) -> tuple[int, ...]:
    """--scaling-jobs: positive whole numbers, comma-separated."""
    import argparse

    try:
        values = tuple(int(part) for part in text.split(","))
    except ValueError:
        values = ()
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected job counts like 1,4,8,14, got {text!r}")
    return values
