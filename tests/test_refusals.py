"""No silent zero: a section the grader refused is a status, not "graded".

A notebook over the size limit (saved outputs), one that is no readable notebook, and one whose
code reaches into the grader all score 0; their status in grades.csv says "refused" and why,
"who needs help" lists every such student, and the student's own message says what to do, in the
student's language.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from autograder.core.files import MAX_SUBMISSION_FILE
from autograder.core.grade import run_checks
from autograder.core.submission import locate
from autograder.i18n import language, set_language
from autograder.instructor.grades_table import status_of
from autograder.instructor.needs_help import who_needs_help
from autograder.instructor.student_files import Stored
from support import EXAMPLES, zygote

SECTION = "01_scores"


def with_big_outputs(path: Path) -> None:
    """The correct notebook, saved with outputs over the size limit (a printed tensor, say)."""
    notebook = json.loads((EXAMPLES / "correct" / f"{SECTION}.ipynb").read_text(encoding="utf-8"))
    cell = next(cell for cell in notebook["cells"] if cell["cell_type"] == "code")
    cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "0.123 " * (MAX_SUBMISSION_FILE // 5)}]
    path.write_text(json.dumps(notebook), encoding="utf-8")


def not_utf8(path: Path) -> None:
    path.write_bytes(b"\xff\xfe{ not a notebook")


def not_a_notebook(path: Path) -> None:
    path.write_text('{"cells": "none"}', encoding="utf-8")


def reaching_into_the_grader(path: Path) -> None:
    notebook = json.loads((EXAMPLES / "correct" / f"{SECTION}.ipynb").read_text(encoding="utf-8"))
    notebook["cells"].append({"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                              "source": "import gc\n_everything = gc.get_objects()\n"})
    path.write_text(json.dumps(notebook), encoding="utf-8")


# (how the notebook is broken, the refusal's kind, its words in the status, the fix the student reads (en, zh))
REFUSALS = [
    (with_big_outputs, "too_big", "notebook too big", ("clear its outputs", "清除它的输出")),
    (not_utf8, "unreadable", "unreadable notebook", ("restore it from git", "从 git 恢复")),
    (not_a_notebook, "unreadable", "unreadable notebook", ("hand in the .ipynb file", "提交 Jupyter 保存的 .ipynb")),
    (reaching_into_the_grader, "tampering", "tampering", ("remove that code", "删掉那段代码")),
]


def graded(tmp_path: Path, breaks, student: str = "ann") -> Stored:
    folder = tmp_path / student
    folder.mkdir()
    breaks(folder / f"{SECTION}.ipynb")
    result = run_checks(locate(folder, SECTION), "cpu", launcher=zygote())
    return Stored(student, result, {"student": student})


@pytest.fixture
def chinese():
    before = language()
    set_language("zh")
    yield
    set_language(before)


@pytest.mark.parametrize("breaks, kind, words, fix", REFUSALS, ids=lambda value: getattr(value, "__name__", None))
def test_a_refused_section_is_a_status_with_its_reason(tmp_path, breaks, kind, words, fix):
    stored = graded(tmp_path, breaks)
    (section,) = stored.grade.sections
    assert section.score == 0 and section.refused == kind
    assert status_of(stored) == f"refused: {SECTION} ({words})"
    assert fix[0] in section.checks[0].message  # what the student reads says what to do
    (attention,) = who_needs_help({"ann": stored})
    assert attention.reason == "refused" and attention.sections == (SECTION,)
    assert f"{SECTION} ({words})" in attention.explanation


@pytest.mark.parametrize("breaks, kind, words, fix", REFUSALS, ids=lambda value: getattr(value, "__name__", None))
def test_the_student_reads_the_fix_in_their_language(tmp_path, breaks, kind, words, fix, chinese):
    stored = graded(tmp_path, breaks)
    (section,) = stored.grade.sections
    assert fix[1] in section.checks[0].message, section.checks[0].message
    assert status_of(stored).startswith("已拒绝评分：")


def test_who_needs_help_lists_every_refused_student_before_the_merely_missing(tmp_path):
    """A class of four, each refused for another reason, and one who handed in nothing: all five listed."""
    results = {}
    for index, (breaks, *_) in enumerate(REFUSALS):
        results[f"s{index}"] = graded(tmp_path, breaks, f"s{index}")
    (tmp_path / "nobody").mkdir()
    results["nobody"] = Stored("nobody", run_checks(locate(tmp_path / "nobody", SECTION), "cpu", launcher=zygote()),
                               {"student": "nobody"})
    listed = [(item.student, item.reason) for item in who_needs_help(results)]
    assert listed == [("s0", "refused"), ("s1", "refused"), ("s2", "refused"), ("s3", "refused"),
                      ("nobody", "not_handed_in")]


def test_a_correct_notebook_is_graded_not_refused(tmp_path):
    stored = graded(tmp_path, lambda path: shutil.copy(EXAMPLES / "correct" / f"{SECTION}.ipynb", path))
    assert stored.grade.sections[0].refused == "" and status_of(stored) == "graded"
