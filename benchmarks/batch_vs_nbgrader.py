"""Time grading a synthetic class: `autograder batch --jobs 1`, `--jobs 2`, and `nbgrader autograde`.

    PYTHONPATH=. .venv/bin/python benchmarks/batch_vs_nbgrader.py [--students 30] [--section ID ...]
                                                                 [--repeat 3] [--skip-nbgrader] [--keep DIR]

The class: students take turns being correct (examples/correct), partial
(examples/partial) and blank (the released student_template/), every 7th
hands in notebooks that are not JSON; all six sections unless --section says
otherwise. It is laid out as nbgrader's submitted/<student>/<assignment>/
<assignment>.ipynb inside a scratch copy of assignments/, and graded three
ways in one run: batch with one job, batch with two, and nbgrader's own
autograde (generate_assignment, then autograde, per section). Each grader
starts from nothing (no earlier results). Not part of the test suite: with
nbgrader it takes about fifteen minutes on 2 cores.

The two batch runs alternate --repeat times and the medians are compared,
since a shared machine's speed drifts from minute to minute. Besides the
whole run, each batch is timed from its first graded student to its last:
the steady rate, without the start-up (two torch imports and the meta-device
warm-up, paid once per batch however large the class).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.core.sections import SECTIONS  # noqa: E402

EXAMPLES = ROOT / "examples"


KINDS = {"correct": EXAMPLES / "correct", "partial": EXAMPLES / "partial", "blank": ROOT / "student_template"}


def make_class(course: Path, students: int, section_ids: list[str]) -> None:
    for i in range(students):
        name = f"student{i:03d}"
        kind = list(KINDS)[i % len(KINDS)]
        for section in section_ids:
            source = KINDS[kind] / f"{section}.ipynb"
            if not source.exists():
                continue
            folder = course / "submitted" / name / section
            folder.mkdir(parents=True, exist_ok=True)
            if i % 7 == 6:
                (folder / source.name).write_text("not a notebook {", encoding="utf-8")
            else:
                shutil.copy(source, folder / source.name)


def timed(command: list[str], cwd: Path, env: dict | None = None) -> tuple[float, int, str]:
    started = time.monotonic()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    return time.monotonic() - started, done.returncode, (done.stdout + done.stderr)[-2000:]


def timed_batch(command: list[str], cwd: Path, env: dict) -> tuple[float, float | None, int, str]:
    """(whole run, seconds per student between the first and the last graded one, exit, output tail)."""
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    finished, tail = [], []
    for line in process.stdout:
        tail = (tail + [line])[-40:]
        if line.startswith(("graded ", "error ")):
            finished.append(time.monotonic() - started)
    status = process.wait()
    seconds = time.monotonic() - started
    steady = (finished[-1] - finished[0]) / (len(finished) - 1) if len(finished) > 2 else None
    return seconds, steady, status, "".join(tail)[-2000:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--section", action="append", help="section(s) to grade (default: all six)")
    parser.add_argument("--repeat", type=int, default=3, help="batch runs of each kind (median reported)")
    parser.add_argument("--skip-nbgrader", action="store_true")
    parser.add_argument("--keep", type=Path, help="build the class here and keep it")
    args = parser.parse_args()
    repeat = max(1, args.repeat)
    sections = args.section or [section.id for section in SECTIONS]

    scratch = args.keep or Path(tempfile.mkdtemp(prefix="attn-bench-"))
    course = scratch / "course"
    shutil.copytree(ROOT / "assignments", course, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("gradebook.db", "release", "submitted", "autograded", "feedback"))
    make_class(course, args.students, sections)
    python = sys.executable
    # nbgrader runs `alembic` from PATH: put this interpreter's scripts folder first
    env = dict(os.environ, PYTHONPATH=str(ROOT),
               PATH=os.pathsep.join([str(Path(python).parent), os.environ.get("PATH", "")]))
    rows, steady = [], {}
    runs: dict[int, list] = {1: [], 2: []}
    for _ in range(repeat):
        for jobs in (1, 2):
            out = scratch / f"batch-jobs{jobs}"
            shutil.rmtree(out, ignore_errors=True)  # from nothing every time: no result is reused
            command = [python, "-m", "autograder", "batch", str(course / "submitted"), "--out", str(out),
                       "--device", "cpu", "--jobs", str(jobs)]
            if len(sections) == 1:  # several: batch grades every section
                command += ["--section", sections[0]]
            runs[jobs].append(timed_batch(command, ROOT, env))
    for jobs in (1, 2):
        ordered = sorted(runs[jobs], key=lambda run: run[0])
        seconds, _, _, tail = ordered[len(ordered) // 2]
        status = max(run[2] for run in ordered)  # any failed run shows
        rows.append((f"autograder batch --jobs {jobs}", seconds, status, tail))
        rates = sorted(run[1] for run in ordered if run[1] is not None)
        steady[jobs] = rates[len(rates) // 2] if rates else None
        print(f"batch --jobs {jobs}: " + ", ".join(f"{run[0]:.1f} s" for run in runs[jobs]), flush=True)
    nbgrader_seconds = 0.0
    if not args.skip_nbgrader:
        for section in sections:  # released first, as an instructor would (not timed)
            seconds, status, tail = timed([python, "-m", "nbgrader", "generate_assignment", section, "--force",
                                           "--log-level=WARN"], course, env)
            if status != 0:
                rows.append((f"nbgrader generate_assignment {section}", seconds, status, tail))
        for section in sections:
            seconds, status, tail = timed([python, "-m", "nbgrader", "autograde", section, "--create", "--force",
                                           "--log-level=WARN"], course, env)
            rows.append((f"nbgrader autograde {section}", seconds, status, tail))
            nbgrader_seconds += seconds

    print(f"{args.students} students, sections {', '.join(sections)}, {os.cpu_count()} cores; class in {scratch}")
    print(f"{'grader':<40} {'seconds':>8} {'s/student':>10} {'exit':>5}")
    for label, seconds, status, _ in rows:
        print(f"{label:<40} {seconds:8.1f} {seconds / args.students:10.2f} {status:5d}")
    one, two = rows[0][1], rows[1][1]
    print(f"\nbatch --jobs 2 is {one / two:.2f}x faster than --jobs 1 (medians of {repeat} runs each)")
    if steady[1] and steady[2]:
        print(f"steady rate, first to last graded student: {steady[1]:.3f} s/student with --jobs 1, "
              f"{steady[2]:.3f} with --jobs 2: {steady[1] / steady[2]:.2f}x")
    if nbgrader_seconds:
        print(f"nbgrader autograde, all {len(sections)} sections: {nbgrader_seconds:.1f} s; "
              f"batch is {nbgrader_seconds / min(one, two):.1f}x faster (its faster run)")
    for label, _, status, tail in rows:
        if status == 0:
            continue
        if label.startswith("nbgrader autograde") and "NotJSONError" in tail:
            # expected: nbgrader cannot open the notebooks that are not JSON, and exits 1
            print(f"{label}: exit {status}: it could not read the notebooks that are not JSON (as expected)")
        else:
            print(f"\n--- {label} (exit {status}):\n{tail}")
    if args.keep is None:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
