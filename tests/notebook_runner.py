"""Run a released notebook's code with chosen answers in its solution cells, and say which of its
locked check cells pass: what a student sees in Jupyter, without a kernel per run.

    python tests/notebook_runner.py SECTION_ID < variants.json > outcomes.json

variants.json is a list of {"id": ..., "replacements": {graded name: code}, "stubs": [graded name]}:
each variant starts from the reference answers and replaces the named definitions (as the mistake
catalogues do for the grader); a graded name in "stubs" (optional) keeps the released notebook's own
cell, the stub a student starts from. The output maps each variant's id to {check cell's grade_id: None when it passed,
else the error's last line}. Every variant runs in a fresh namespace; a failing cell does not stop
the ones after it (as nbgrader's autograde runs them). The heatmaps are not drawn: the notebook's
own stand-in for them is used.

It runs as its own process, one per section, so the notebooks' seeds, warning filters and printed
output never touch the test process.
"""
from __future__ import annotations

import contextlib
import io
import json
import linecache
import sys
import traceback
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(Path(__file__).resolve().parent)]

import nbformat  # noqa: E402

from autograder.core.sections import BY_ID  # noqa: E402
from course.builder import examples, layout  # noqa: E402
from support import replace_def  # noqa: E402


def answers_for(section, replacements: dict) -> dict[str, str]:
    answers = examples.correct_answers(section)
    for name, code in replacements.items():
        owner = next(graded for graded, source in answers.items() if _defines(source, name))
        answers[owner] = replace_def(answers[owner], name, code)
    return answers


def _defines(source: str, name: str) -> bool:
    return f"def {name}(" in source or f"class {name}(" in source


def last_line(error: BaseException) -> str:
    return traceback.format_exception_only(type(error), error)[-1].strip()


def run_variant(notebook, answers: dict[str, str]) -> dict[str, str | None]:
    namespace: dict = {"__name__": "__main__"}
    outcomes: dict[str, str | None] = {}
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        meta = cell.metadata.get("nbgrader", {})
        source = answers.get(meta.get("grade_id"), cell.source) if meta.get("solution") else cell.source
        error = None
        filename = f"<notebook cell {index}>"  # its lines where tracebacks and inspect look, as Jupyter keeps them
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            try:
                exec(compile(source, filename, "exec"), namespace)
            except Exception as raised:  # what the student's code raises is the outcome, not a crash
                error = last_line(raised)
        if meta.get("grade"):
            outcomes[meta["grade_id"]] = error
    return outcomes


def main() -> int:
    section = BY_ID[sys.argv[1]]
    notebook = nbformat.read(ROOT / layout.RELEASED_NB.format(id=section.id), as_version=4)
    variants = json.load(sys.stdin)
    report = {}
    for variant in variants:
        answers = answers_for(section, variant["replacements"])
        for name in variant.get("stubs", ()):
            del answers[name]  # its cell as released: the stub
        report[variant["id"]] = run_variant(notebook, answers)
    json.dump(report, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
