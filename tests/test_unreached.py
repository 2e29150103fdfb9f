"""Every student reached: a section graded from a file under another name gets no nbgrader
feedback page, so the batch names each one with what to do, and the class report lists them.

The class, an nbgrader course: ann hands in 01_scores.ipynb as released, bob renamed it
Untitled.ipynb, cal moved it into a subfolder. The grader grades all three; nbgrader's
fetch_feedback would find ann's page only.
"""
from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import EXAMPLES, ROOT

SECTION = "01_scores"
NOTEBOOK = EXAMPLES / "correct" / f"{SECTION}.ipynb"
# student -> where their notebook is, in their nbgrader submission folder
HANDED_IN = {"ann": f"{SECTION}/{SECTION}.ipynb", "bob": f"{SECTION}/Untitled.ipynb",
             "cal": f"{SECTION}/work/{SECTION}.ipynb"}


def course(root: Path, config: bool = True) -> Path:
    """An nbgrader course folder (nbgrader_config.py beside submitted/), or a plain one."""
    if config:
        (root / "nbgrader_config.py").parent.mkdir(parents=True, exist_ok=True)
        (root / "nbgrader_config.py").write_text("c = get_config()\n")
    for student, relative in HANDED_IN.items():
        path = root / "submitted" / student / relative
        path.parent.mkdir(parents=True)
        shutil.copy(NOTEBOOK, path)
    return root / "submitted"


def run(*args) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("course")
    submitted = course(root)
    out = root / "grades"
    done = run("batch", submitted, "--out", out, "--device", "cpu", "--section", SECTION, "--report")
    return out, done


def test_the_batch_names_each_student_nbgrader_will_not_reach(graded):
    out, done = graded
    lines = [line for line in done.stdout.splitlines() if line.startswith("feedback: ")]
    assert [line.split()[1] for line in lines] == ["bob", "cal"]
    bob, cal = lines
    page = out / "feedback" / "bob" / "report.html"
    assert bob == (f"feedback: bob {SECTION}: graded from '{SECTION}/Untitled.ipynb', not {SECTION}.ipynb, so "
                   f"nbgrader's fetch_feedback will not find its page; hand them {page}, or ask them to name it "
                   f"{SECTION}.ipynb and submit again")
    assert page.is_file()  # the page that reaches them is ready
    assert f"'{SECTION}/work/{SECTION}.ipynb'" in cal and (out / "feedback" / "cal" / "report.html").is_file()


def test_the_class_report_lists_them(graded):
    out, _ = graded
    run("report", out)
    with open(out / "class_unreached.csv", newline="", encoding="utf-8") as handle:
        rows = [(row["student"], row["section"], row["file"]) for row in csv.DictReader(handle)]
    assert rows == [("bob", SECTION, f"{SECTION}/Untitled.ipynb"), ("cal", SECTION, f"{SECTION}/work/{SECTION}.ipynb")]
    assert 'id="unreached"' in (out / "class_report.html").read_text(encoding="utf-8")


def test_without_report_the_line_says_to_write_the_pages(tmp_path):
    from autograder.instructor.unreached import Unreached, advice

    line = advice(Unreached("bob", SECTION, "Untitled.ipynb", f"{SECTION}.ipynb"), tmp_path, reports=False)
    assert "run the batch with --report and hand them the page it writes" in line


@pytest.mark.parametrize("layout, expected", [("nbgrader_config.py", True), ("gradebook.db", True), (None, False)])
def test_only_a_class_that_comes_through_nbgrader_is_told(tmp_path, layout, expected):
    from autograder.instructor.unreached import nbgrader_course

    (tmp_path / "submitted").mkdir()
    if layout:
        (tmp_path / layout).write_text("")
    assert nbgrader_course(tmp_path / "submitted", None) == expected
    assert nbgrader_course(tmp_path, None) == expected  # the course folder itself given
    assert nbgrader_course(tmp_path / "submitted", "gradebook.db")  # --gradebook: nbgrader's, whatever the folder
