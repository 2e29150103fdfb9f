"""The student trial of part 2 (sections 08-13): what a new student's own code gets, line by line.

    python benchmarks/student_trial_part2.py [--section 12_rope] [--no-notebook] [--out DIR]

The student's work is data (tests/catalogues/student_trial_part2.py): a correct version of each graded name in
a style of its own, and realistic mistakes made on top of it. Each is graded as a student meets it: the
self-check (`check`, the visible checks) in English and in Chinese, the instructor's `grade` (every check),
and the released notebook run headless (tests/notebook_runner.py) with its check cells speaking each language.
For each entry the table gives the first failing line of its function (the first failing check whose cell is
that name's), in both languages, and the points of that name in the self-check and in the grade.

Writes DIR/student-trial-part2.json (the data) and DIR/student-trial-part2.md (the table, derived from it);
DIR defaults to benchmarks/results.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from catalogues.student_trial_part2 import CORRECT, MISTAKES, STYLE  # noqa: E402
from support import correct_source, grade_source, hints_given, replace_def  # noqa: E402

from autograder import i18n  # noqa: E402
from autograder.checks import homes  # noqa: E402

LANGUAGES = ("en", "zh")


def student_code(entry: dict) -> dict:
    """Every graded name of the entry's section as the student wrote it: their correct style, `name` replaced."""
    return {**STYLE[entry["section"]], **entry["replacements"]}


def source_of(entry: dict) -> str:
    source = correct_source(entry["section"])
    for name, code in student_code(entry).items():
        source = replace_def(source, name, code)
    return source


def first_line(result, section_id: str, name: str) -> dict | None:
    """The first failing check of `result` whose cell is `name`'s: its title, message and named mistake."""
    home = homes(section_id)
    for check in result.checks:
        if not check.passed and home.get(check.id, ("",))[0] == name:
            return {"title": check.name, "message": check.message, "mistake": check.mistake}
    return None


def points(result, section_id: str, name: str) -> list[float]:
    home = homes(section_id)
    mine = [c for c in result.checks if home.get(c.id, ("",))[0] == name]
    return [round(sum(c.points for c in mine), 2), round(sum(c.max_points for c in mine), 2)]


def graded(entry: dict) -> dict:
    section_id, name, source = entry["section"], entry["name"], source_of(entry)
    row = {key: entry[key] for key in ("section", "name", "what", "says", "knowable")}
    for language in LANGUAGES:
        i18n.set_language(language)
        result = grade_source(section_id, source, visible_only=True)
        row[f"check_{language}"] = first_line(result, section_id, name)
        row["check_points"] = points(result, section_id, name)
    i18n.set_language("en")
    result = grade_source(section_id, source)
    row["grade_first"] = first_line(result, section_id, name)
    row["grade_points"] = points(result, section_id, name)
    row["grade_lost"] = [c.name for c in result.checks if not c.passed]  # in the order the grade shows them
    row["grade_hints"] = sorted(hints_given(result))
    return row


def notebook_lines(section_id: str, entries: list[dict], language: str) -> list[str | None]:
    """Each entry's first failing check cell of its name in the released notebook run headless, or None."""
    variants = [{"id": str(i), "replacements": student_code(entry)} for i, entry in enumerate(entries)]
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "notebook_runner.py"), section_id],
                          input=json.dumps(variants), capture_output=True, text=True, timeout=900,
                          env={**os.environ, "ATTENTION_COURSE_LANG": language}, cwd=ROOT)
    if done.returncode:
        raise SystemExit(f"the notebook runner failed on {section_id}: {done.stderr[-2000:]}")
    outcomes = json.loads(done.stdout)
    lines = []
    for i, entry in enumerate(entries):
        cells = {cell: error for cell, error in outcomes[str(i)].items()
                 if cell.removeprefix("test_").rstrip("_0123456789") == entry["name"] and error}
        lines.append(next(iter(cells.values()), None))
    return lines


def verdict(row: dict) -> str:
    """What the row's data say, the finding kinds of the trial: a correct style losing points, a mistake not caught
    or caught by the grade only, a first line naming a mistake not made, or not naming one whose output gives it
    away (the entry's `knowable`), a Chinese line left in English."""
    got, full = row["check_points"]
    grade_got, grade_full = row["grade_points"]
    if row["what"].startswith("correct"):
        return "full marks" if got == full and grade_got == grade_full else "CORRECT STYLE LOSES POINTS"
    if grade_got == grade_full:
        return "NOT CAUGHT"
    if got == full:
        return "GRADE-ONLY CATCH"
    line, says = row["check_en"], row["says"].lower()
    if line["mistake"] and not (says and says in line["mistake"].lower()):
        return "NAMES A MISTAKE NOT MADE"
    if row["check_zh"]["message"] == line["message"]:
        return "ENGLISH ON A CHINESE SCREEN"
    if says and says in (line["title"] + " " + line["message"]).lower():
        return "named in the first line"
    if says:
        return "FIRST LINE DOES NOT NAME IT"
    return f"NOT NAMED, though knowable ({row['knowable']})" if row["knowable"] else "caught; its error quoted"


def cell(text: str | None) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


def shown(line: dict | None) -> str:
    return "passes" if line is None else f"**{line['title']}**: {line['message']}"


def table(rows: list[dict]) -> str:
    head = ["section", "name", "what the student wrote", "first line (check, English)", "first line (check, Chinese)",
            "notebook cell (en / zh)", "points check / grade", "verdict"]
    out = ["# Student trial of part 2 (sections 08-13)", "",
           "Written by `python benchmarks/student_trial_part2.py` from tests/catalogues/student_trial_part2.py; "
           "the data in student-trial-part2.json.", "",
           "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        nb = " / ".join(cell(row.get(f"notebook_{lang}")) or "passes" for lang in LANGUAGES) \
            if "notebook_en" in row else "not run"
        pts = f"{row['check_points'][0]:g}/{row['check_points'][1]:g} · {row['grade_points'][0]:g}/{row['grade_points'][1]:g}"
        out.append("| " + " | ".join([row["section"], f"`{row['name']}`", cell(row["what"]), cell(shown(row["check_en"])),
                                      cell(shown(row["check_zh"])), nb, pts, verdict(row)]) + " |")
    counts = {}
    for row in rows:
        counts.setdefault(row["section"], [0, 0])[row["what"].startswith("correct")] += 1
    out += ["", "| section | mistakes | correct styles |", "|---|---|---|"]
    out += [f"| {section} | {m} | {c} |" for section, (m, c) in counts.items()]
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--section", help="one section id (default: all of part 2)")
    parser.add_argument("--no-notebook", action="store_true", help="skip the headless notebook runs")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args(argv)
    entries = [e for e in CORRECT + MISTAKES if args.section in (None, e["section"])]
    entries.sort(key=lambda e: (e["section"], not e["what"].startswith("correct")))
    rows = [graded(entry) for entry in entries]
    if not args.no_notebook:
        for section_id in sorted({e["section"] for e in entries}):
            mine = [i for i, e in enumerate(entries) if e["section"] == section_id]
            for language in LANGUAGES:
                for i, line in zip(mine, notebook_lines(section_id, [entries[i] for i in mine], language)):
                    rows[i][f"notebook_{language}"] = line
    stem = "student-trial-part2" + (f"-{args.section}" if args.section else "")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{stem}.json").write_text(json.dumps(rows, ensure_ascii=False, indent=1) + "\n")
    (args.out / f"{stem}.md").write_text(table(rows))
    print(args.out / f"{stem}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
