"""A new student's trial of the course, rerunnable: what each tried answer meets, in both languages.

    python benchmarks/student_trial.py [SECTION_ID ...] [--out FILE]

The trial's answers are the catalogues' own data (tests/catalogues/mistakes_<id>.py): TRIAL_MISTAKES
(support.Mistake, each with the line it must get) and TRIAL_STYLES (description -> the correct code
that replaces the reference's definitions). Each answer goes through what a student runs:
  - the released notebook (student_template/<id>.ipynb and student_template/zh/<id>.ipynb), every cell
    executed headless as tests/notebook_runner.py does, the answer in its solution cells: the first line
    of the check cell of the answer's graded name, as the student sees it in each language;
  - the self-check (`python -m autograder check`: the visible checks) and the grade (`grade`: visible and
    hidden checks), in the sandbox's zygote as the tests grade: the points of that name's checks.
A row's name is the first replaced name whose check cell fails in English (else the first replaced).
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import io
import linecache
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PART_1 = ["01_scores", "02_softmax", "03_trainable_qkv", "04_causal_mask", "05_padding_mask", "06_multihead",
          "07_positional_encoding"]
FORBIDS = "which this section forbids"  # what a forbidden API's catalogued line says
NOTEBOOKS = {"en": "student_template/{id}.ipynb", "zh": "student_template/zh/{id}.ipynb"}


def first_lines(section, notebook, replacements: dict) -> dict[str, str]:
    """Graded name -> the first line its check cell shows ("" when the cell passed), the notebook's cells run in
    order with `replacements` in place of the reference answers (tests/notebook_runner.py's way, first line kept)."""
    from notebook_runner import answers_for

    answers = answers_for(section, replacements)
    namespace: dict = {"__name__": "__main__"}
    lines = {}
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        meta = cell.metadata.get("nbgrader", {})
        source = answers.get(meta.get("grade_id"), cell.source) if meta.get("solution") else cell.source
        filename = f"<notebook cell {index}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        said = ""
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            try:
                exec(compile(source, filename, "exec"), namespace)
            except Exception as raised:  # the student's error is the outcome
                text = str(raised).strip()
                said = text.splitlines()[0] if text and type(raised).__name__ == "NotebookCheckFailed" else (
                    f"{type(raised).__name__}: {text.splitlines()[0] if text else ''}")
        if meta.get("grade"):
            lines[meta["grade_id"].removeprefix("test_")] = said
    return lines


def points(result, section, name: str) -> tuple[float, float]:
    """(points earned, points possible) of the checks whose cell is `name`'s."""
    from autograder.checks import declared
    from autograder.core.sections import home

    checks = declared(section.id)
    mine = [c for c in result.checks if c.name in checks and home(checks[c.name], section) == name]
    return sum(c.points for c in mine), sum(c.max_points for c in mine)


def summed(pairs) -> tuple[float, float]:
    pairs = list(pairs)
    return sum(p[0] for p in pairs), sum(p[1] for p in pairs)


def written(section_id: str, replacements: dict) -> str:
    """The first line of the answer that the reference's own definition of that name does not have: what the
    student wrote, in one line."""
    from support import correct_source

    tree = ast.parse(source := correct_source(section_id))
    for name, code in replacements.items():
        node = next((n for n in tree.body if getattr(n, "name", None) == name), None)
        reference = {line.strip() for line in (ast.get_source_segment(source, node) or "").splitlines()}
        for line in code.splitlines():
            if line.strip() and line.strip() not in reference and not line.strip().startswith(("#", "def ", "class ")):
                return line.strip()
    return next(iter(replacements.values())).strip().splitlines()[0]


def trial_entries(section_id: str):
    """(kind, id, replacements, expected first line or None) of the section's trial answers."""
    from catalogues import CATALOGUES

    catalogue = CATALOGUES[section_id]
    for mistake in getattr(catalogue, "TRIAL_MISTAKES", ()):
        # correct code but for an API the section forbids (the notebook says so before the task): told in its cell
        kind = "forbidden API" if mistake.says == FORBIDS else "mistake"
        yield kind, mistake.id, mistake.replacements, mistake.says
    for description, replacements in getattr(catalogue, "TRIAL_STYLES", {}).items():
        yield "style", description, replacements, None


def run_section(section_id: str, say) -> list[dict]:
    import nbformat

    from autograder import i18n
    from autograder.core.sections import BY_ID
    from support import grade_source, self_check

    section = BY_ID[section_id]
    notebooks = {language: nbformat.read(ROOT / path.format(id=section_id), as_version=4)
                 for language, path in NOTEBOOKS.items()}
    rows = []
    for kind, entry_id, replacements, says in trial_entries(section_id):
        seen = {}
        for language, notebook in notebooks.items():
            i18n.set_language(language)
            seen[language] = first_lines(section, notebook, replacements)
        i18n.set_language("en")
        # a mistake's row: its name whose cell fails first; a style's: every name it replaces, points summed
        names = list(replacements)
        failing = [n for n in names if seen["en"].get(n)]
        shown = failing[0] if failing else names[0]
        counted = names if kind == "style" else [shown]
        source = correct_source_with(section_id, replacements)
        checked, graded = self_check(section_id, source), grade_source(section_id, source)
        rows.append({"section": section_id, "kind": kind, "id": entry_id,
                     "name": ", ".join(names) if kind == "style" else shown,
                     "written": written(section_id, replacements), "en": seen["en"].get(shown, ""),
                     "zh": seen["zh"].get(shown, ""), "says": says,
                     "self_check": summed(points(checked, section, n) for n in counted),
                     "grade": summed(points(graded, section, n) for n in counted)})
        say(f"{section_id} {kind}: {entry_id}")
    return rows


def correct_source_with(section_id: str, replacements: dict) -> str:
    from support import correct_source, replace_def

    source = correct_source(section_id)
    for name, code in replacements.items():
        source = replace_def(source, name, code)
    return source


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ") or "(passes)"


def score(pair: tuple[float, float]) -> str:
    return f"{pair[0]:g}/{pair[1]:g}"


def findings(rows: list[dict]) -> list[str]:
    """What the trial looks for, from the rows alone: a correct style that loses points or fails a cell; a mistake
    the grade catches and its own notebook cell does not; a mistake nothing catches; a first line without the words
    its catalogue entry expects."""
    found = []
    for row in rows:
        where = f"{row['section']} {row['id']}"
        lost_grade, lost_check = row["grade"][0] < row["grade"][1], row["self_check"][0] < row["self_check"][1]
        if row["kind"] == "style" and (lost_grade or lost_check or row["en"] or row["zh"]):
            found.append(f"- a correct style loses points or fails its cell: {where}")
        elif row["kind"] != "style" and lost_grade and not (row["en"] and row["zh"] and lost_check):
            found.append(f"- caught by the grade, not by its own cell and the self-check in both languages: {where}")
        elif row["kind"] != "style" and not lost_grade:
            found.append(f"- no check catches it, the grade's included: {where}")
        elif row["says"] and row["says"].lower() not in row["en"].lower():
            found.append(f"- the first line does not say {row['says']!r}: {where}")
    return found


def markdown(rows: list[dict], sections: list[str]) -> str:
    count = {kind: sum(row["kind"] == kind for row in rows) for kind in ("mistake", "forbidden API", "style")}
    lines = [f"A new student's trial of sections {', '.join(sections)}: {count['mistake']} mistakes, "
             f"{count['style']} correct styles and {count['forbidden API']} answers calling an API the section "
             "forbids (benchmarks/student_trial.py; the answers are the catalogues' TRIAL_MISTAKES and TRIAL_STYLES). "
             "Each row: the first line of the name's check cell in the released notebook (headless), English and "
             "Chinese, and that name's points (a style's: all its names') in the self-check and in the grade.", "",
             "| section | kind | name | answer | what the student wrote | first line (English) | first line (中文) "
             "| self-check | grade |", "|---|---|---|---|---|---|---|---:|---:|"]
    for row in rows:
        lines.append(f"| {row['section']} | {row['kind']} | {row['name']} | {cell(row['id'])} | `{cell(row['written'])}` "
                     f"| {cell(row['en'])} | {cell(row['zh'])} | {score(row['self_check'])} | {score(row['grade'])} |")
    lines += ["", "Findings the table shows by itself:", *(findings(rows) or ["- none"])]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sections", nargs="*", default=PART_1, help="section ids (default: part 1, 01-07)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "student-trial-part1.md")
    options = parser.parse_args(argv)
    sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
    started = time.monotonic()
    rows = []
    for section_id in options.sections:
        rows += run_section(section_id, lambda text: print(text, file=sys.stderr))
    options.out.write_text(markdown(rows, options.sections), encoding="utf-8")
    print(f"{options.out}: {len(rows)} answers ({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
