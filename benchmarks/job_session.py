"""What a batch job's one pytest session saves: the trusted side's CPU per student, with and without it.

    .venv/bin/python benchmarks/job_session.py [--students N] [--rounds R]

In one process with one zygote (as a batch job has), grades N students (the
examples correct, partial and correct_py in turn) once with a pytest run of its
own per student, as `grade` does, and once inside one session
(core/check_session.py), as a batch job does, round after round, the order
reversed every other round. Prints the CPU time of this process per student
(the trusted side: the workers' CPU is the same either way) and checks that
both ways grade every student alike.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
EXAMPLES = ("correct", "partial", "correct_py")


def graded(result) -> list:
    return [(c.section, c.id, c.points, c.message, c.mistake) for s in result.sections for c in s.checks]


def grade_all(students: list[Path], zygote, session=None) -> tuple[float, list]:
    from autograder.core.grade import run_checks
    from autograder.core.submission import locate

    started, results = time.process_time(), []
    for folder in students:
        results.append(graded(run_checks(locate(folder), "cpu", launcher=zygote, session=session)))
    return (time.process_time() - started) / len(students), results


def grade_in_session(students: list[Path], zygote) -> tuple[float, list]:
    from autograder.core.check_session import serve_in_session

    graded_there = []
    if not serve_in_session(lambda session: graded_there.append(grade_all(students, zygote, session))):
        raise SystemExit("the session did not start")
    return graded_there[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    import torch

    from autograder.core.grade import preload_checks
    from autograder.sandbox.zygote import Zygote

    torch.set_num_threads(1)  # as a batch job does
    preload_checks()
    zygote = Zygote(warm_meta=True, preload=("pandas",), huge_pages=True)
    students = [ROOT / "examples" / EXAMPLES[i % len(EXAMPLES)] for i in range(args.students)]
    times = {"own run": [], "session": []}
    try:
        grade_all(students[:1], zygote)  # the first grading imports the check modules: not counted
        for number in range(args.rounds):
            ways = ["own run", "session"] if number % 2 == 0 else ["session", "own run"]
            outcomes = {}
            for way in ways:
                times[way].append(grade_in_session(students, zygote) if way == "session"
                                  else grade_all(students, zygote))
                outcomes[way] = times[way][-1][1]
            if outcomes["own run"] != outcomes["session"]:
                raise SystemExit("the session graded a student differently from a run of its own")
    finally:
        zygote.close()
    for way, runs in times.items():
        cpu = [seconds for seconds, _results in runs]
        print(f"{way:8}: {statistics.median(cpu) * 1000:6.1f} ms of CPU per student (rounds: "
              + ", ".join(f"{c * 1000:.1f}" for c in cpu) + ")")
    print(f"{args.students} students a round, {args.rounds} rounds; the same grades both ways")


if __name__ == "__main__":
    main()
