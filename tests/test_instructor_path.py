"""The instructor's path, end to end, with notebooks as students really leave them.

Replayed as a new instructor would follow README.md and docs/instructors.md:
copy `assignments/` to the hub, release 02_softmax with nbgrader, collect a
small class, grade it with `batch --gradebook --report`, then let nbgrader's
own commands show the result (generate_feedback, export). The class:

    alice   the correct notebook
    bob     the partial one (some of the points)
    carol   the released notebook, untouched
    dave    the correct notebook, freely edited: a `%%time` on a solution cell, a `%pip`
            line, prints, a markdown cell of his own, and a leftover `time.sleep(45)` cell
    erin    handed in another section, never this one

About 20 s, most of it nbgrader's own commands.
"""
from __future__ import annotations

import csv
import functools
import json
import shutil

import nbformat
import pytest

from support import EXAMPLES, ROOT
from test_nbgrader_cycle import export_rows, hand_in, hand_in_class, nbgrader, run_cli

SECTION = "02_softmax"


@functools.cache
def expected() -> dict:
    """Each student's points for SECTION: full marks for alice and dave, bob's as `grade` gives the
    partial example (some of the points), none for carol and erin."""
    from support import zygote

    from autograder.core.grade import run_checks
    from autograder.core.submission import locate

    full, partial = (run_checks(locate(EXAMPLES / example, SECTION), "cpu", launcher=zygote()).score
                     for example in ("correct", "partial"))
    assert full > partial > 0
    return {"alice": full, "bob": partial, "carol": 0.0, "dave": full, "erin": 0.0}


def full_marks() -> float:
    return expected()["alice"]



def freely_edited(target):
    """The correct notebook as a student who edits freely leaves it."""
    nb = nbformat.read(EXAMPLES / "correct" / f"{SECTION}.ipynb", as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code" and "def softmax(" in cell.source:
            cell.source = "%%time\n" + cell.source  # timed while working on it, left in
            break
    nb.cells.insert(1, nbformat.v4.new_markdown_cell("My notes: softmax is exp over sum."))
    nb.cells.insert(2, nbformat.v4.new_code_cell("%pip install --quiet tqdm\nprint('dave was here')"))
    nb.cells.append(nbformat.v4.new_code_cell("import time\ntime.sleep(45)  # waiting for a plot"))
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, target)
    return target


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    hub = tmp_path_factory.mktemp("hub")
    course = hub / "course"
    shutil.copytree(ROOT / "assignments", course)  # as an instructor copies it: no link may point out
    nbgrader(course, "generate_assignment", SECTION, "--force")
    released = course / "release" / SECTION
    hand_in_class(course, SECTION, released / f"{SECTION}.ipynb")
    freely_edited(course / "submitted" / "dave" / SECTION / f"{SECTION}.ipynb")
    hand_in(course, "erin", "01_scores", EXAMPLES / "correct" / "01_scores.ipynb")
    out = hub / "grades"
    done = run_cli("batch", course / "submitted", "--section", SECTION, "--gradebook", course / "gradebook.db",
                   "--report", "--out", out, "--cell-timeout", "3", "--jobs", "2")
    return course, released, out, done


def grades(out) -> dict:
    with open(out / "grades.csv", newline="", encoding="utf-8") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


def result_of(out, student) -> dict:
    return json.loads((out / "students" / f"{student}.json").read_text(encoding="utf-8"))


def test_the_release_carries_the_self_check(graded):
    _, released, _, _ = graded
    assert (released / "README.md").is_file()
    assert list((released / "grader").glob("*.whl"))


def test_batch_grades_everyone_as_nbgrader_would(graded):
    _, _, out, done = graded
    assert done.returncode == 0, done.stderr
    table = grades(out)
    assert {student: float(row[SECTION]) for student, row in table.items()} == expected()
    # erin handed in another section: the status names the one she did not hand in, as data (its id)
    assert {student: row["status"] for student, row in table.items()} == {
        **{student: "graded" for student in table if student != "erin"}, "erin": "graded, not handed in: 02_softmax"}


def test_the_free_editor_keeps_every_point_and_is_told_what_was_left_out(graded):
    _, _, out, _ = graded
    dave = result_of(out, "dave")
    assert dave["score"] == full_marks()
    assert "interrupted after 3 s" in dave["output"]  # the leftover sleep: that cell only
    assert "%pip is not run while grading" in dave["output"]
    report = (out / "feedback" / "dave" / "report.html").read_text(encoding="utf-8")
    assert "dave was here" in report  # what the code printed, shown in the report


def test_a_section_not_handed_in_is_said_so(graded):
    _, _, out, _ = graded
    erin = result_of(out, "erin")
    assert {test["tags"][-1] for test in erin["tests"]} == {"not_handed_in"}
    assert "was not handed in" in erin["output"]


def test_nbgrader_shows_the_same_points_and_the_feedback(graded):
    course, _, out, _ = graded
    rows = export_rows(course)
    for student, score in expected().items():
        if student == "erin":
            continue  # nothing handed in for this section: nothing recorded
        assert rows[(SECTION, student)] == (score, full_marks()), student  # one weighting: the grader's points
    nbgrader(course, "generate_feedback", SECTION, "--force")
    for student in ("alice", "bob", "carol", "dave"):
        page = (course / "feedback" / student / SECTION / f"{SECTION}.html").read_text(encoding="utf-8")
        assert f"Score: {expected()[student]:g}" in page or f"Score: {expected()[student]}" in page, student
    bob = (course / "feedback" / "bob" / SECTION / f"{SECTION}.html").read_text(encoding="utf-8")
    assert "looks like" in bob  # the grader's message for the failed check reaches the student
    for student in expected():
        assert (out / "feedback" / student / "report.html").is_file(), student
