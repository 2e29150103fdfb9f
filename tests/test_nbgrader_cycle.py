"""The nbgrader cycle: release with nbgrader, grade with `batch --gradebook`, read back with nbgrader.

A temporary course directory gets the committed nbgrader configuration and the
sources of 01_scores and 02_softmax; `nbgrader generate_assignment` releases
them (and creates the gradebook). Three students hand in 01_scores in nbgrader's
`submitted/<student>/<assignment>/` layout: alice the correct example, bob the
partial one, carol a file that is not JSON. The batch's grades.csv must equal
`grade` of each student, and nbgrader's gradebook (read back with its API and
with `nbgrader export`) must hold the same fraction of each section on nbgrader's
points (see autograder/instructor/gradebook.py for the mapping).

nbgrader's own `autograde` is run too: the visible test cells of the released
notebook give the correct submission full points, and a UserWarning emitted by
student code (PyTorch's and the warnings module's) does not zero a test cell,
because a check cell keeps what the student's code warns while checked off stderr
(nbgrader gives 0 to a test cell that writes to stderr: the control student shows
that rule at work), while the student's own cells still show their warnings.

The cycle and autograde take about a minute (nbgrader's start-up, kernels,
grading): they are marked slow. The refusals and the score mapping on a
gradebook built in-process are fast and run by default.
"""
from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from support import EXAMPLES, ROOT, zygote

SECTIONS = ("01_scores", "02_softmax")
GRADED = "01_scores"  # the batch grades one section: one nbgrader assignment
STUDENTS = ("alice", "bob", "carol")


def nbgrader_env() -> dict:
    # nbgrader runs `alembic` and the kernel from PATH: the interpreter's own scripts first
    return dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))


def nbgrader(course: Path, *args, timeout=600):
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args, "--log-level=WARN"], cwd=course,
                          env=nbgrader_env(), capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def run_cli(*args, timeout=600):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def make_course(course: Path) -> Path:
    """A course directory with 01_scores and 02_softmax released by nbgrader; returns the gradebook."""
    course.mkdir()
    shutil.copy(ROOT / "assignments" / "nbgrader_config.py", course)
    for section in SECTIONS:
        shutil.copytree(ROOT / "assignments" / "source" / section, course / "source" / section)
    nbgrader(course, "generate_assignment", "*", "--force")
    for section in SECTIONS:
        assert (course / "release" / section / f"{section}.ipynb").is_file()
    gradebook = course / "gradebook.db"
    assert gradebook.is_file()
    return gradebook


def hand_in(course: Path, student: str, section: str, notebook: Path | None = None, text: str | None = None):
    folder = course / "submitted" / student / section
    folder.mkdir(parents=True, exist_ok=True)
    if notebook is not None:
        shutil.copy(notebook, folder / f"{section}.ipynb")
    else:
        (folder / f"{section}.ipynb").write_text(text, encoding="utf-8")
    return folder


def hand_in_class(course: Path, section: str, carol: Path | None = None, carol_text: str | None = None):
    """The usual class: alice hands in the correct example, bob the partial one, carol `carol`."""
    hand_in(course, "alice", section, EXAMPLES / "correct" / f"{section}.ipynb")
    hand_in(course, "bob", section, EXAMPLES / "partial" / f"{section}.ipynb")
    hand_in(course, "carol", section, carol, carol_text)


def export_rows(course: Path) -> dict:
    """(assignment, student) -> (score, max_score) of `nbgrader export`'s CSV."""
    nbgrader(course, "export", "--to", "export.csv")
    with open(course / "export.csv", newline="") as handle:
        return {(row["assignment"], row["student_id"]): (float(row["score"]), float(row["max_score"]))
                for row in csv.DictReader(handle)}


# --------------------------------------------------------------------------- fast: refusals, the mapping


def test_a_gradebook_that_does_not_exist_is_refused_before_grading(tmp_path):
    submitted = tmp_path / "submitted"
    hand_in(tmp_path, "alice", GRADED, EXAMPLES / "correct" / f"{GRADED}.ipynb")
    done = run_cli("batch", submitted, "--out", tmp_path / "out", "--device", "cpu", "--section", GRADED,
                   "--gradebook", f"sqlite:///{tmp_path / 'gradebook.db'}")
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("autograder: error: --gradebook") and done.stderr.count("\n") == 1
    assert "no such file" in done.stderr
    assert not (tmp_path / "gradebook.db").exists()  # nbgrader would have created an empty one
    assert not (tmp_path / "out").exists()  # nothing graded

    from autograder.instructor.gradebook import GradebookError, check_sections

    with pytest.raises(GradebookError, match="no such file"):
        check_sections(str(tmp_path / "gradebook.db"), [GRADED])  # a path rather than a URL
    assert not (tmp_path / "gradebook.db").exists()


def test_a_file_that_is_no_gradebook_is_refused(tmp_path):
    from autograder.instructor.gradebook import GradebookError, check_sections

    not_a_database = tmp_path / "grades.csv"
    not_a_database.write_text("student,total\n")
    with pytest.raises(GradebookError, match="cannot read"):
        check_sections(str(not_a_database), [GRADED])
    import sqlite3

    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(GradebookError, match="not an nbgrader gradebook"):
        check_sections(str(other), [GRADED])
    assert [row[0] for row in sqlite3.connect(other).execute("SELECT name FROM sqlite_master")] == ["t"]


def small_gradebook(path: Path, points=(1.0, 1.0, 2.0)):
    """A gradebook as generate_assignment leaves it: 01_scores with three autograded cells."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{path}", course_id="attention-course") as gradebook:
        gradebook.add_assignment(GRADED)
        gradebook.add_notebook(GRADED, GRADED)
        for index, value in enumerate(points):
            gradebook.add_grade_cell(f"test_{index}", GRADED, GRADED, max_score=value, cell_type="code")
        gradebook.add_assignment("02_softmax")  # released without its notebook: refused
    return path


def result(score: float, maximum: float, section=GRADED, errors=()):
    """A stored grade: `score` of `maximum` in `section` (one check), 5 of 5 in another, as the batch keeps it."""
    from autograder.core.results import CheckResult, GradeResult, SectionResult
    from autograder.instructor.student_files import Stored

    grade = GradeResult("", "cpu", [SectionResult(section, section, [CheckResult(section, "a", maximum, score)]),
                                    SectionResult("other", "other", [CheckResult("other", "b", 5.0, 5.0)])])
    return Stored("", grade, {"sections": [section], "grader_errors": list(errors)})


def test_scores_are_recorded_as_fractions_of_nbgrader_points(tmp_path, capsys, caplog, monkeypatch):
    from nbgrader.api import Gradebook

    from autograder.instructor.gradebook import GradebookError, check_sections, record_results

    monkeypatch.setenv("PATH", nbgrader_env()["PATH"])  # a new gradebook asks `alembic` for its version
    path = small_gradebook(tmp_path / "gradebook.db")
    check_sections(str(path), [GRADED])
    with pytest.raises(GradebookError, match="generate_assignment 02_softmax"):
        check_sections(str(path), ["02_softmax"])
    with pytest.raises(GradebookError, match="no assignment '03_trainable_qkv'"):
        check_sections(str(path), ["03_trainable_qkv"])
    # a term's run of several sections records those the gradebook has, and names the others
    assert check_sections(str(path), [GRADED, "03_trainable_qkv"]) == [GRADED]
    assert any("not recorded: 03_trainable_qkv" in line for line in caplog.messages)  # a warning, logged
    folders = {}
    for name in ("ann", "ben", "eve", "kim"):
        folders[name] = hand_in(tmp_path, name, GRADED, EXAMPLES / "correct" / f"{GRADED}.ipynb").parent
    (folders["ann"] / GRADED / "timestamp.txt").write_text("2026-11-20 10:00:00.000000 UTC")
    (folders["kim"] / GRADED / f"{GRADED}.ipynb").unlink()  # kim handed in nothing for this section
    results = {"ann": result(10.0, 10.0), "ben": result(2.5, 10.0), "eve": result(0.0, 0.0, errors=["boom"]),
               "kim": result(0.0, 10.0)}
    summary = record_results(str(path), results, folders, [GRADED], log=lambda line: None)
    assert len(summary.written) == 2 and summary.created == 2 and len(summary.skipped) == 2
    with Gradebook(f"sqlite:///{path}") as gradebook:
        assert gradebook.find_submission(GRADED, "ann").score == pytest.approx(4.0)
        assert gradebook.find_submission(GRADED, "ben").score == pytest.approx(1.0)  # 2.5/10 of 4 points
        assert str(gradebook.find_submission(GRADED, "ann").timestamp).startswith("2026-11-20 10:00:00")
        assert not gradebook.find_submission(GRADED, "ann").needs_manual_grade
        assert {s.id for s in gradebook.students} == {"ann", "ben"}  # eve (grader error), kim: nothing
        # an instructor's manual grade keeps precedence over the next recording
        grade = gradebook.find_grade("test_2", GRADED, GRADED, "ben")
        grade.manual_score = 2.0
        gradebook.db.commit()
    summary = record_results(str(path), {"ben": result(5.0, 10.0)}, folders, [GRADED], log=lambda line: None)
    assert summary.created == 0 and summary.manual_kept == 1
    assert "(was 2.5)" in summary.written[0] and "manual grade(s) kept" in summary.written[0]
    with Gradebook(f"sqlite:///{path}") as gradebook:
        assert gradebook.find_submission(GRADED, "ben").score == pytest.approx(0.5 + 0.5 + 2.0)
        assert gradebook.find_grade("test_2", GRADED, GRADED, "ben").auto_score == pytest.approx(1.0)
    assert "2 section score(s) written" in capsys.readouterr().out


# --------------------------------------------------------------------------- slow: the whole cycle


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    course = tmp_path_factory.mktemp("nbgrader") / "course"
    gradebook = make_course(course)
    hand_in_class(course, GRADED, carol_text="this is not JSON {")
    return course, gradebook


@pytest.mark.slow
def test_batch_records_in_the_gradebook_what_grade_gives(course):
    from nbgrader.api import Gradebook

    from autograder.feedback.formats import as_json
    from autograder.core.grade import run_checks
    from autograder.core.submission import locate

    course, gradebook = course
    out = course / "grades"
    done = run_cli("batch", course / "submitted", "--out", out, "--device", "cpu", "--section", GRADED,
                   "--jobs", "2", "--gradebook", f"sqlite:///{gradebook}")
    assert done.returncode == 0, done.stderr
    assert "3 section score(s) written, 3 submission(s) created" in done.stdout

    import pandas as pd

    table = pd.read_csv(out / "grades.csv").set_index("student")
    assert list(table.index) == list(STUDENTS)
    expected = {}
    for student in STUDENTS:
        graded = json.loads(as_json(run_checks(locate(course / "submitted" / student, GRADED), "cpu",
                                               launcher=zygote())))
        expected[student] = (graded["score"], graded["max_score"])
        assert table.loc[student, GRADED] == pytest.approx(graded["score"]), student
        assert table.loc[student, "max_score"] == pytest.approx(graded["max_score"]), student
    assert expected["alice"][0] == expected["alice"][1] > 0 and expected["carol"][0] == 0

    with Gradebook(f"sqlite:///{gradebook}") as book:
        points = book.find_notebook(GRADED, GRADED).max_score
        assert points > 0
        for student, (score, maximum) in expected.items():
            assert book.find_submission(GRADED, student).score == pytest.approx(points * score / maximum)
    rows = export_rows(course)
    for student, (score, maximum) in expected.items():
        assert rows[(GRADED, student)] == pytest.approx((points * score / maximum, points)), student
        assert rows[("02_softmax", student)][0] == 0  # released, not graded: untouched

    # again, with the path instead of the URL: nothing regraded, the same grades written, nothing created
    again = run_cli("batch", course / "submitted", "--out", out, "--device", "cpu", "--section", GRADED,
                    "--gradebook", gradebook)
    assert again.returncode == 0, again.stderr
    assert "3 section score(s) written, 0 submission(s) created" in again.stdout
    assert export_rows(course) == rows


def warning_notebook(correct: Path, target: Path, stderr_in_test_cell: bool = False) -> None:
    """The correct notebook whose dot_scores warns (PyTorch and the warnings module) on every call,
    even with the filters reset; with `stderr_in_test_cell`, dot_scores also writes a line straight to
    the process's stderr (file descriptor 2, past any Python-level capture), which the kernel shows in
    the test cell that called it (the control: what nbgrader does to such a cell)."""
    nb = nbformat.read(correct, as_version=4)
    extra = '''

import warnings

_dot_scores_as_written = dot_scores


def dot_scores(query, inputs):
    warnings.simplefilter("always")
    torch.tensor(query)  # PyTorch's own UserWarning: copy-constructing a tensor from a tensor
    warnings.warn("a warning from the student's code", UserWarning)
    return _dot_scores_as_written(query, inputs)


warnings.warn("a warning while the solution cell runs", UserWarning)
'''
    if stderr_in_test_cell:
        extra = extra.replace('    return _dot_scores_as_written', '    import os\n    os.write(2, b"a line on stderr\\n")\n'
                                                                      '    return _dot_scores_as_written')
    ids = {cell.metadata.get("nbgrader", {}).get("grade_id"): cell for cell in nb.cells}
    ids["dot_scores"].source += extra
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, target)


@pytest.mark.slow
def test_nbgrader_autograde_gives_full_points_and_ignores_warnings(course, tmp_path):
    from nbgrader.api import Gradebook

    source, _ = course
    work = tmp_path / "course"  # a copy: autograde writes its own scores into the gradebook
    work.mkdir()
    for name in ("nbgrader_config.py", "gradebook.db"):
        shutil.copy(source / name, work / name)
    for name in ("source", "release"):
        shutil.copytree(source / name, work / name)
    correct = EXAMPLES / "correct" / f"{GRADED}.ipynb"
    hand_in(work, "alice", GRADED, correct)
    warning_notebook(correct, work / "submitted" / "wendy" / GRADED / f"{GRADED}.ipynb")
    warning_notebook(correct, work / "submitted" / "victor" / GRADED / f"{GRADED}.ipynb", stderr_in_test_cell=True)
    nbgrader(work, "autograde", GRADED, "--force")

    with Gradebook(f"sqlite:///{work / 'gradebook.db'}") as book:
        points = book.find_notebook(GRADED, GRADED).max_score
        scores = {s: book.find_submission(GRADED, s).score for s in ("alice", "wendy", "victor")}
        test_cell = book.find_grade("test_dot_scores", GRADED, GRADED, "victor")
        control = (test_cell.auto_score, test_cell.max_score)
    assert points > 0
    assert scores["alice"] == points  # every visible test cell passes on the correct submission
    assert scores["wendy"] == points  # the checks kept the student's warnings off stderr
    # the control: a test cell whose checked code writes to stderr is zeroed by nbgrader (that one at
    # least: other check cells whose checks call dot_scores are too)
    lost = control[1]
    assert control[0] == 0 and lost > 0 and scores["victor"] <= points - lost
    autograded = nbformat.read(work / "autograded" / "wendy" / GRADED / f"{GRADED}.ipynb", as_version=4)
    for cell in autograded.cells:
        if cell.metadata.get("nbgrader", {}).get("grade"):
            assert not [o for o in cell.get("outputs", []) if o.get("name") == "stderr"], cell.source[:80]


def test_a_timestamp_committed_to_a_student_repository_is_not_recorded(tmp_path, monkeypatch):
    """A git checkout's timestamp.txt is the student's own file: the gradebook gets the clone's time instead."""
    from nbgrader.api import Gradebook

    from autograder.instructor.gradebook import record_results

    monkeypatch.setenv("PATH", nbgrader_env()["PATH"])
    path = small_gradebook(tmp_path / "gradebook.db")
    folder = hand_in(tmp_path, "mallory", GRADED, EXAMPLES / "correct" / f"{GRADED}.ipynb").parent
    (folder / GRADED / "timestamp.txt").write_text("2000-01-01 00:00:00.000000 UTC")
    (folder / ".git").mkdir()  # a clone of the student's repository
    record_results(str(path), {"mallory": result(10.0, 10.0)}, {"mallory": folder}, [GRADED], log=lambda line: None)
    with Gradebook(f"sqlite:///{path}") as gradebook:
        stamp = gradebook.find_submission(GRADED, "mallory").timestamp
    from datetime import datetime, timedelta, timezone

    now = datetime.now(timezone.utc).replace(tzinfo=None)  # nbgrader keeps UTC without a zone
    assert stamp is not None and abs(now - stamp) < timedelta(hours=1), stamp  # the clone's time, not 2000


@pytest.mark.slow
def test_a_bonus_section_is_extra_credit_in_nbgrader(tmp_path):
    """nbgrader counts a bonus section as we do: its points add to the score, not to the maximum
    (its test cells carry 0 points; `batch --gradebook` writes the points as extra credit)."""
    from autograder.core.sections import BONUS

    if not BONUS:
        pytest.skip("the course has no bonus section")
    section = BONUS[0].id
    course = tmp_path / "course"
    course.mkdir()
    shutil.copy(ROOT / "assignments" / "nbgrader_config.py", course)
    shutil.copytree(ROOT / "assignments" / "source" / section, course / "source" / section)
    nbgrader(course, "generate_assignment", section, "--force")
    hand_in(course, "alice", section, EXAMPLES / "correct" / f"{section}.ipynb")
    hand_in(course, "bob", section, EXAMPLES / "partial" / f"{section}.ipynb")
    out = tmp_path / "grades"
    done = run_cli("batch", course / "submitted", "--out", out, "--device", "cpu", "--section", section,
                   "--gradebook", course / "gradebook.db")
    assert done.returncode == 0, done.stderr
    assert "(bonus: as extra credit)" in done.stderr
    with open(out / "grades.csv", newline="") as handle:
        table = {row["student"]: (float(row[section]), float(row["max_score"])) for row in csv.DictReader(handle)}
    assert table["alice"][0] > 0 and table["alice"][1] == 0  # ours: a bonus adds nothing to the maximum
    rows = export_rows(course)
    for student, (score, _) in table.items():
        assert rows[(section, student)] == (score, 0.0), student  # nbgrader's: the same score, a maximum of 0
