"""The instructor's side in Chinese (`--lang zh`): grades.csv's status, the gradebook's lines, the
nbgrader feedback page's grader text and the class report's headings carry no English sentence.

bob's partial 01_scores, graded in Chinese, handed in as Untitled.ipynb (taken by its cells), with
02_softmax over the size limit and 03 not handed in: each part of the status has its words.
"""
from __future__ import annotations

import os
import re
import shutil

import pytest

from autograder.core.files import MAX_SUBMISSION_FILE
from autograder.core.grade import run_checks
from autograder.core.submission import locate
from autograder.i18n import language, set_language
from autograder.instructor.student_files import Stored
from support import EXAMPLES, ROOT, venv_path, zygote
from test_i18n import english_sentence

SECTIONS = ["01_scores", "02_softmax", "03_trainable_qkv"]


@pytest.fixture(scope="module")
def chinese_grade(tmp_path_factory):
    """bob's grade, graded in Chinese (the language set for the whole module's tests)."""
    before = language()
    set_language("zh")
    folder = tmp_path_factory.mktemp("class") / "bob"
    folder.mkdir()
    shutil.copy(EXAMPLES / "partial" / "01_scores.ipynb", folder / "Untitled.ipynb")
    (folder / "02_softmax.ipynb").write_text(" " * (MAX_SUBMISSION_FILE + 1))
    result = run_checks(locate(folder, SECTIONS), "cpu", launcher=zygote())
    yield Stored("bob", result, {"student": "bob", "sections": SECTIONS})
    set_language(before)


def no_english(lines) -> list[str]:
    return [line for line in lines if english_sentence(line)]


def test_the_status_is_in_chinese(chinese_grade):
    from autograder.instructor.grades_table import status_of

    status = status_of(chinese_grade)
    assert status.startswith("已拒绝评分：02_softmax（笔记本过大），未提交：03_trainable_qkv"), status
    assert "01_scores 取自 'Untitled.ipynb'" in status and no_english([status]) == []


def test_the_feedback_page_s_grader_text_is_in_chinese(chinese_grade):
    """What the autograded notebook's test cells show (nbgrader generate_feedback renders it)."""
    import nbformat

    from autograder.instructor.autograded import attach_feedback

    notebook = nbformat.read(ROOT / "student_template" / "zh" / "01_scores.ipynb", as_version=4)
    attach_feedback(notebook.cells, chinese_grade.grade.sections[0])
    shown = [output.text for cell in notebook.cells if cell.cell_type == "code" for output in cell.get("outputs", [])
             if output.get("output_type") == "stream" and "隐藏检查" in output.text]
    assert shown, "no grader text under the test cells"
    lines = [line for text in shown for line in text.splitlines()]
    assert any(line.startswith(("通过：", "未通过：")) for line in lines)
    assert no_english(lines) == []


def test_the_gradebook_lines_are_in_chinese(chinese_grade, tmp_path, monkeypatch):
    from nbgrader.api import Gradebook

    from autograder.instructor.gradebook import Recorded, record_student

    monkeypatch.setenv("PATH", venv_path(os.environ.get("PATH", "")))  # nbgrader creates its database with alembic
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url) as gradebook:
        gradebook.add_assignment("01_scores")
        gradebook.add_notebook("01_scores", "01_scores")
        gradebook.add_grade_cell("test_dot_scores", "01_scores", "01_scores", max_score=10.0, cell_type="code")
    summary = Recorded()
    with Gradebook(url) as gradebook:
        record_student(gradebook, None, "bob", chinese_grade, None, ["01_scores", "04_causal_mask"], summary)
    assert summary.written and summary.skipped
    assert "nbgrader 中为" in summary.written[0] and "新的提交" in summary.written[0]
    assert no_english(summary.written + summary.skipped) == []


def test_the_class_report_s_headings_are_in_chinese(chinese_grade, tmp_path):
    from autograder.instructor.class_report import build
    from autograder.instructor.grades_table import write_table
    from support import store_grade

    store_grade(tmp_path, chinese_grade.grade, sections=SECTIONS)
    write_table(tmp_path, {"bob": chinese_grade})
    page = build(tmp_path).read_text(encoding="utf-8")
    headings = re.findall(r"<h[12][^>]*>(.*?)</h[12]>", page)
    assert len(headings) >= 7
    assert no_english(headings) == []
