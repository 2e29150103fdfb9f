"""A three-week term graded as an instructor grades it, sharded and not, in English or Chinese.

    .venv/bin/python benchmarks/term_trial.py [--lang en|zh] [--work DIR] [--students N]

Builds a class in nbgrader's layout (`submitted/<student>/<section>/<section>.ipynb`) from the bundled
examples (correct, partial, blank, the .py answers) and, week by week (assignments.toml's week1 to
week3), changes it as a term does: a student who joins in week 2, one who leaves after week 1, a
resubmission after week 1 was graded, notebooks renamed by the student ("02_softmax (1).ipynb", a
notebook of one section handed in under another's folder), a notebook over the size limit. Each week
it runs the commands the guide gives (docs/instructors.md):

    python -m autograder batch submitted --assignment weekN --shard K/2 --out shard-K --report
    python -m autograder merge shard-1 shard-2 --out merged
    python -m autograder batch submitted --assignment weekN --out single --report [--similarity in week 3]

and prints, from the grades' own records (students/*.json, never a rendered table): each student's
points per section in the merged shards and in the single run (they must be equal), who has a
feedback page or is named among those nbgrader cannot reach, and the similarity pairs (no blank
student may be in one). Exits 1 when any of these fails.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.core.files import MAX_SUBMISSION_FILE  # noqa: E402
from autograder.instructor.assignments import read_assignments  # noqa: E402
from autograder.instructor.student_files import STUDENTS  # noqa: E402
from autograder.instructor.term import stored_students  # noqa: E402

WEEKS = ("week1", "week2", "week3")
KINDS = {"correct": ROOT / "examples" / "correct", "partial": ROOT / "examples" / "partial",
         "blank": ROOT / "student_template"}


def template(lang: str) -> Path:
    return ROOT / "student_template" / "zh" if lang == "zh" else ROOT / "student_template"


def hand_in(submitted: Path, student: str, section: str, source: Path, name: str | None = None) -> None:
    """`source` as the student's notebook of `section` (under the name `name`, else the section's own)."""
    folder = submitted / student / section
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.ipynb"):
        old.unlink()
    shutil.copyfile(source, folder / (name or f"{section}.ipynb"))


def the_class(students: int) -> dict[str, str]:
    """student -> the kind of work they hand in; the named roles first, then as many more as asked."""
    roles = {"ann": "correct", "bo": "correct", "chen": "partial", "dai": "partial", "fay": "blank",
             "gus": "blank", "jun": "renamed", "kim": "too big", "mo": "leaves", "lee": "joins"}
    kinds = ("correct", "partial", "blank")
    extra = {f"s{index:02d}": kinds[index % 3] for index in range(max(0, students - len(roles)))}
    return {**roles, **extra}


def week_changes(submitted: Path, week: str, sections: list[str], roles: dict[str, str], lang: str) -> list[str]:
    """Hand in `week`'s sections as each role does; the changes of the term on top. What changed, as lines."""
    said = []
    blank = template(lang)
    for student, role in roles.items():
        if role == "joins" and week == "week1":
            continue
        if role == "leaves" and week != "week1":
            if (submitted / student).exists():
                shutil.rmtree(submitted / student)
                said.append(f"{student} left the class (folder removed)")
            continue
        kind = {"renamed": "correct", "too big": "correct", "leaves": "partial", "joins": "correct"}.get(role, role)
        for section in sections:
            source = (KINDS[kind] if kind != "blank" else blank) / f"{section}.ipynb"
            if role == "renamed" and section == sections[-1]:
                hand_in(submitted, student, section, source, f"{section} (1).ipynb")
                said.append(f"{student} handed {section} in as '{section} (1).ipynb'")
            elif role == "too big" and section == sections[0]:
                hand_in(submitted, student, section, source)
                with open(submitted / student / section / f"{section}.ipynb", "ab") as padded:
                    padded.truncate(MAX_SUBMISSION_FILE + 1024)
                said.append(f"{student}'s {section} is over the size limit ({MAX_SUBMISSION_FILE // 2**20} MB)")
            else:
                hand_in(submitted, student, section, source)
    if week == "week2":  # dai resubmits week 1's last section, right this time, after it was graded
        first = read_assignments(ROOT / "assignments.toml")["week1"][-1]
        hand_in(submitted, "dai", first, KINDS["correct"] / f"{first}.ipynb")
        later = time.time() + 60
        os.utime(submitted / "dai" / first / f"{first}.ipynb", (later, later))
        said.append(f"dai resubmitted {first} (correct) after week 1 was graded")
    return said


def autograder(*args: str, lang: str | None) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "autograder", *args, *(["--lang", lang] if lang else [])]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=1800)


def points(folder: Path) -> dict[str, dict[str, float]]:
    """student -> section -> points, from the stored records."""
    return {student: {section.id: round(sum(c.points for c in section.checks), 4) for section in stored.grade.sections}
            for student, stored in stored_students(folder / STUDENTS).items()}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lang", default="en", choices=("en", "zh"))
    parser.add_argument("--work", type=Path, help="where to build the class (default: a temporary folder)")
    parser.add_argument("--students", type=int, default=12)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="term-trial-"))
    submitted, roles = work / "submitted", the_class(args.students)
    weeks = read_assignments(ROOT / "assignments.toml")
    failures = []
    for week in WEEKS:
        sections = weeks[week]
        print(f"\n## {week}: {', '.join(sections)} ({args.lang})")
        for line in week_changes(submitted, week, sections, roles, args.lang):
            print(f"- {line}")
        started = time.perf_counter()
        runs = [autograder("batch", str(submitted), "--assignment", week, "--shard", f"{k}/2",
                           "--out", str(work / f"shard-{k}"), "--report", lang=args.lang) for k in (1, 2)]
        runs.append(autograder("merge", str(work / "shard-1"), str(work / "shard-2"), "--out", str(work / "merged"),
                               lang=args.lang))
        single_args = ["batch", str(submitted), "--assignment", week, "--out", str(work / "single"), "--report"]
        runs.append(autograder(*single_args, *(["--similarity"] if week == WEEKS[-1] else []), lang=args.lang))
        seconds = time.perf_counter() - started
        for run in runs:
            if run.returncode not in (0, 1):
                failures.append(f"{week}: {' '.join(run.args[3:6])} exited {run.returncode}: {run.stderr[-400:]}")
        if week == "week2":  # the resubmission this run does not grade is named, with the command that grades it
            named = [line for line in (runs[-1].stdout + runs[-1].stderr).splitlines()
                     if line.startswith("dai") and "--section 02_softmax" in line]
            print(f"the single run says: {named[0] if named else 'NOTHING of dai'}")
            if not named:
                failures.append(f"{week}: dai's resubmitted 02_softmax kept without a word")
        merged, single = points(work / "merged"), points(work / "single")
        assigned = [s for w in WEEKS[:WEEKS.index(week) + 1] for s in weeks[w]]
        print(f"\n{seconds:.0f} s for both shards, the merge and the single run\n")
        print("| student | role | " + " | ".join(assigned) + " | merged = single | feedback |")
        print("|---|---|" + "---|" * len(assigned) + "---|---|")
        unreached = runs[-1].stdout + runs[-1].stderr
        for student in sorted(set(merged) | set(single)):
            same = merged.get(student) == single.get(student)
            page = (work / "single" / "feedback" / student / "report.html").is_file()
            named = student in unreached and "nbgrader" in unreached
            cells = [f"{single.get(student, {}).get(s, '')}" for s in assigned]
            print(f"| {student} | {roles.get(student, '')} | " + " | ".join(cells)
                  + f" | {'yes' if same else 'NO'} | {'page' if page else ('named' if named else 'NONE')} |")
            if not same:
                failures.append(f"{week}: {student}: merged {merged.get(student)} != single {single.get(student)}")
            if not page and not named:
                failures.append(f"{week}: {student}: no feedback page and not named")
    similarity = json.loads((work / "single" / "similarity.json").read_text(encoding="utf-8"))
    blank = {s for s, role in roles.items() if role == "blank"}
    flagged = [(sid, p["student_a"], p["student_b"]) for sid, data in similarity["sections"].items()
               for p in data["pairs"] if {p["student_a"], p["student_b"]} & blank]
    print(f"\nsimilarity: {sum(len(d['pairs']) for d in similarity['sections'].values())} pair(s); "
          f"pairs with a blank student: {len(flagged)}")
    failures += [f"similarity: blank student in a pair {pair}" for pair in flagged]
    print(f"\nwork folder: {work}")
    for failure in failures:
        print(f"FAILED: {failure}")
    print("\nall checks held" if not failures else f"\n{len(failures)} check(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
