"""Wall time and peak memory of the similarity report for a whole class, at several class sizes.

    .venv/bin/python benchmarks/similarity_speed.py [--students 100 200 300] [--seed 0]

Writes a synthetic class of notebooks (every section): each student's graded
code mixes the three independent solutions of tests/similarity_corpus.py
function by function, under random disguises (tests/similarity_disguises.py),
with a helper of their own; one student in twenty hands in a disguised copy of
a classmate. Then runs `python -m autograder similarity` on it as a fresh
process, as an instructor would, and reports its wall time and peak memory.
The goal: 300 students x 7 sections within 60 s on a 2-core machine, and memory
that grows linearly with the class.
"""
import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the corpus and the disguises the tests use

from similarity_corpus import FAMILY_B, FAMILY_C  # noqa: E402
from similarity_disguises import DISGUISES, combined  # noqa: E402

from autograder.core.sections import SECTIONS  # noqa: E402
from course.builder.examples import correct_answers  # noqa: E402


def blocks_of(source: str) -> dict[str, str]:
    import re

    parts = re.split(r"(?m)^# %% (\w+)\n", source)
    return {parts[i]: parts[i + 1].strip() + "\n" for i in range(1, len(parts), 2)}


def own_helper(rng: random.Random, index: int) -> str:
    """A small function only this student wrote: code that matches nobody's."""
    ops = ["+", "-", "*", "/"]
    terms = " ".join(f"{rng.choice(ops)} x.{rng.choice(['sum', 'mean', 'amax', 'std'])}(dim={rng.randint(-2, 1)})"
                     for _ in range(rng.randint(2, 5)))
    return f"\n\ndef my_helper_{index}(x):\n    y = x {terms}\n    return y * {rng.random():.4f}\n"


def student_blocks(rng: random.Random, section, families, index: int) -> list[tuple[str, str]]:
    blocks = [(name, rng.choice(families)[name]) for name in section.names]
    disguise = rng.choice([*DISGUISES.values(), combined, None])
    if disguise is not None:
        blocks = disguise(blocks, set(section.names))
    name, source = blocks[-1]
    return blocks[:-1] + [(name, source + own_helper(rng, index))]


def write_notebook(template, folder: Path, section, blocks) -> None:
    notebook = nbformat.from_dict(template)
    answers = dict(blocks)
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and meta.get("grade_id") in answers:
            cell.source = answers[meta["grade_id"]]
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, folder / section.notebook)


def make_class(folder: Path, students: int, seed: int) -> None:
    rng = random.Random(seed)
    for section in SECTIONS:
        template = nbformat.read(ROOT / "student_template" / section.notebook, as_version=4)
        # the reference and each other hand written for the section (part 2's sections have none yet: their
        # students differ by the disguises and their own helpers)
        families = [dict(correct_answers(section))] + [blocks_of(hand[section.id]) for hand in (FAMILY_B, FAMILY_C)
                                                       if section.id in hand]
        written: list[list] = []
        for index in range(students):
            if index % 20 == 19:  # a disguised copy of the previous student
                blocks = combined(written[-1], set(section.names))
            else:
                blocks = student_blocks(rng, section, families, index)
            written.append(blocks)
            write_notebook(template, folder / f"student{index:04d}", section, blocks)


def measure(folder: Path, out: Path) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak resident MiB) of one `similarity` run in a fresh process. The
    CPU time (its processes', user and system) says what the run costs on a machine others share too."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "autograder", "similarity", str(folder), "--out", str(out)],
                   cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu, after.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--students", type=int, nargs="+", default=[100, 200, 300])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    for count in sorted(args.students):  # ascending: RUSAGE_CHILDREN's peak is the largest child's so far
        with tempfile.TemporaryDirectory(prefix="similarity-bench-") as tmp:
            folder = Path(tmp) / "class"
            make_class(folder, count, args.seed)
            load = os.getloadavg()[0]
            wall, cpu, peak = measure(folder, Path(tmp) / "out")
        print(f"similarity: {count} students x {len(SECTIONS)} sections: {wall:.1f} s wall, {cpu:.1f} s CPU, "
              f"peak memory {peak:.0f} MiB (load average {load:.1f} on {os.cpu_count()} CPUs)"
              + (" (goal: within 60 s)" if count == 300 else ""))


if __name__ == "__main__":
    main()
