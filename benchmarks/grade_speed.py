"""Wall time of grading a complete six-section submission, beside the floor of importing torch.

    .venv/bin/python benchmarks/grade_speed.py [SUBMISSION] [--repeat N]

Both are measured in the same run as fresh processes, so the ratio is what a
student or a CI job sees. The goal is a ratio of at most 2.
"""
import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def wall(command) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("submission", nargs="?", default="examples/correct")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    floor = [wall([sys.executable, "-c", "import torch"]) for _ in range(args.repeat)]
    grading = [wall([sys.executable, "-m", "autograder", "grade", args.submission, "--format", "json",
                     "--output", "/dev/null"]) for _ in range(args.repeat)]
    f, g = statistics.median(floor), statistics.median(grading)
    print(f"python -c 'import torch': median {f:.2f} s over {args.repeat} runs")
    print(f"grade {args.submission}: median {g:.2f} s over {args.repeat} runs")
    print(f"ratio: {g / f:.2f} (goal: at most 2)")


if __name__ == "__main__":
    main()
