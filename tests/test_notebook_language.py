"""A notebook says its language: a Chinese notebook's checks speak Chinese in every front end.

A kernel run headless (nbclient, nbconvert, an editor's notebook view) is never told which file it
runs, so the checks cannot read the notebook's metadata there; the build writes the language into
the setup cell of every notebook in another language (course/localized.py), and
$ATTENTION_COURSE_LANG still wins over it.
"""
from __future__ import annotations

import nbformat
import pytest

from autograder.i18n import ENVIRONMENT
from course import localized
from course.builder import layout
from course.execute import run_notebook

ROOT = layout.ROOT
SECTION = "01_scores"  # the shortest run; every notebook's setup cell is built the same way
CHINESE_SOURCE = ROOT / f"assignments/zh/source/{SECTION}/{SECTION}.ipynb"
ENGLISH_PASS, CHINESE_PASS = "ok  ", "通过  "  # how a passed check's line starts (core.po: "ok  {title}")


def check_lines(nb: nbformat.NotebookNode) -> list[str]:
    """Every line the notebook's check cells printed."""
    return [line for cell in nb.cells if cell.cell_type == "code" and "check" in cell.source
            for output in cell.get("outputs", []) if output.get("output_type") == "stream"
            for line in output.get("text", "").splitlines()]


def run_headless(nb: nbformat.NotebookNode) -> list[str]:
    run = run_notebook(nb, timeout=120, cwd=CHINESE_SOURCE.parent)
    assert run.ok, f"cell {run.error_cell} raised {run.ename}: {run.evalue}"
    return check_lines(run.notebook)


@pytest.fixture
def no_language_in_environment(monkeypatch):
    monkeypatch.delenv(ENVIRONMENT, raising=False)  # the kernel inherits this process's environment


def test_every_chinese_notebook_declares_its_language_in_its_setup_cell():
    for section_id in sorted(p.name for p in (ROOT / "assignments/zh/source").iterdir() if p.is_dir()):
        for rel in (f"assignments/zh/source/{section_id}/{section_id}.ipynb", f"student_template/zh/{section_id}.ipynb"):
            nb = nbformat.read(ROOT / rel, as_version=4)
            setup = [c for c in nb.cells if c.cell_type == "code" and localized.language_declaration("zh") in c.source]
            assert len(setup) == 1, f"{rel}: no setup cell says the notebook's language"


def test_a_chinese_notebook_run_headless_prints_its_checks_in_chinese(no_language_in_environment):
    lines = run_headless(nbformat.read(CHINESE_SOURCE, as_version=4))
    assert any(line.startswith(CHINESE_PASS) for line in lines), lines
    assert [line for line in lines if line.startswith(ENGLISH_PASS)] == []


def test_the_environment_still_chooses_the_language(monkeypatch):
    monkeypatch.setenv(ENVIRONMENT, "en")
    lines = run_headless(nbformat.read(CHINESE_SOURCE, as_version=4))
    assert any(line.startswith(ENGLISH_PASS) for line in lines), lines
    assert [line for line in lines if line.startswith(CHINESE_PASS)] == []


def test_a_chinese_failing_check_cell_joins_title_and_message_in_chinese():
    """A failing check cell's line is the check's title, then its message: joined in Chinese by one
    separator of its own, a dash (as the report's Markdown joins them), so the colons inside the
    message are not read as a third and fourth level; never ASCII ': ' beside Chinese words."""
    from autograder import i18n
    from autograder.notebook import cell_verdict  # importing it sets the language: Chinese after it

    i18n.set_language("zh")
    try:
        verdict = cell_verdict([("softmax 得到笔记本中给出的注意力权重", "softmax(x)：数值不对", "check"),
                                ("softmax 的权重为正", None, "")])
    finally:
        i18n.set_language("en")
    assert verdict == "softmax 得到笔记本中给出的注意力权重——softmax(x)：数值不对"
