"""Handing feedback back through nbgrader after `batch --gradebook`, and whose scores stand.

nbgrader's `release_feedback` reads `timestamp.txt` and `submission_secret.txt` beside each
feedback page (`generate_feedback` copies them from `autograded/<student>/<section>/`), and a
student's `fetch_feedback` finds the released page by the secret their `submit` wrote: so the
batch writes both beside each autograded notebook, the secret the student's own where nbgrader
collected the submission. The batch also marks the autograded notebooks it wrote, so that scores
nbgrader's own `autograde` wrote later are kept (and said so) unless `batch --force`.

Fast: the two files and the mark, in-process on a gradebook built with nbgrader's API. Slow (about
70 s: nbgrader's start-ups and one `autograde`): the whole exchange, release_assignment to
fetch_feedback, with nbgrader's real commands in a scratch course and exchange.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from support import EXAMPLES, ROOT
from test_nbgrader_cycle import nbgrader_env, run_cli
from test_nbgrader_round_trip import SECTION, section_result, tiny_gradebook

STUDENT_SECRET = "ab12" * 32  # as `nbgrader submit` writes it: 128 hexadecimal digits


def collected(root: Path, student: str, secret: str = STUDENT_SECRET) -> Path:
    """A student's folder as `nbgrader collect` leaves it: the notebook, timestamp.txt, the secret."""
    folder = root / "submitted" / student
    (folder / SECTION).mkdir(parents=True)
    shutil.copy(EXAMPLES / "partial" / f"{SECTION}.ipynb", folder / SECTION / f"{SECTION}.ipynb")
    (folder / SECTION / "timestamp.txt").write_text("2026-11-20 10:00:00.000000 UTC")
    (folder / SECTION / "submission_secret.txt").write_text(secret)
    return folder


# --------------------------------------------------------------------------- fast: the two files


def test_a_collected_submission_keeps_its_secret_and_time(tmp_path):
    from autograder.instructor.exchange_files import write_exchange_files

    folder = collected(tmp_path, "alice")
    target = tmp_path / "autograded" / "alice" / SECTION
    target.mkdir(parents=True)
    write_exchange_files(target, folder, SECTION)
    assert (target / "submission_secret.txt").read_text() == STUDENT_SECRET  # fetch_feedback's key
    assert (target / "timestamp.txt").read_text() == "2026-11-20 10:00:00.000000 UTC"


def test_a_cloned_submission_gets_a_secret_of_its_own_kept_from_run_to_run(tmp_path):
    from nbgrader.utils import parse_utc

    from autograder.instructor.exchange_files import write_exchange_files

    folder = collected(tmp_path, "mallory")
    (folder / ".git").mkdir()  # a git checkout: its files are the student's, not nbgrader's
    target = tmp_path / "autograded" / "mallory" / SECTION
    target.mkdir(parents=True)
    write_exchange_files(target, folder, SECTION)
    secret = (target / "submission_secret.txt").read_text()
    assert secret != STUDENT_SECRET and len(secret) == 128 and int(secret, 16) >= 0
    stamp = (target / "timestamp.txt").read_text()
    assert parse_utc(stamp) is not None and stamp != "2026-11-20 10:00:00.000000 UTC"  # not the student's file
    write_exchange_files(target, folder, SECTION)
    assert (target / "submission_secret.txt").read_text() == secret  # the page keeps its name


@pytest.mark.parametrize("planted", ["link", "junk"])
def test_a_secret_that_is_a_link_or_not_a_secret_is_not_used(tmp_path, planted):
    from autograder.instructor.exchange_files import write_exchange_files

    folder = collected(tmp_path, "eve")
    secret = folder / SECTION / "submission_secret.txt"
    secret.unlink()
    if planted == "link":
        (tmp_path / "elsewhere.txt").write_text(STUDENT_SECRET)
        secret.symlink_to(tmp_path / "elsewhere.txt")
    else:
        secret.write_text("../../" + "x" * 200)
    target = tmp_path / "autograded" / "eve" / SECTION
    target.mkdir(parents=True)
    write_exchange_files(target, folder, SECTION)
    written = (target / "submission_secret.txt").read_text()
    assert written != STUDENT_SECRET and len(written) == 128 and int(written, 16) >= 0


# --------------------------------------------------------------------------- fast: whose scores stand


def scores(path: Path, student: str) -> float:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{path}") as gradebook:
        return gradebook.find_submission(SECTION, student).score


def test_scores_nbgrader_autograde_wrote_later_stand_unless_forced(tmp_path, monkeypatch):
    from nbgrader.api import Gradebook

    from autograder.instructor.gradebook import record_results

    monkeypatch.setenv("PATH", nbgrader_env()["PATH"])  # a new gradebook asks `alembic` for its version
    path = tiny_gradebook(tmp_path / "gradebook.db")
    folder = collected(tmp_path, "mallory")
    results, folders = {"mallory": section_result()}, {"mallory": folder}
    first = record_results(str(path), results, folders, [SECTION], log=lambda line: None)
    assert len(first.written) == 1 and not first.kept
    ours = scores(path, "mallory")
    notebook = tmp_path / "autograded" / "mallory" / SECTION / f"{SECTION}.ipynb"
    # again: the notebook is the batch's own, so the batch writes over it
    again = record_results(str(path), results, folders, [SECTION], log=lambda line: None)
    assert len(again.written) == 1 and not again.kept

    # what `nbgrader autograde --force` does: the folder deleted, its own notebook and scores written
    shutil.rmtree(notebook.parent)
    notebook.parent.mkdir()
    nbformat.write(nbformat.v4.new_notebook(), notebook)
    with Gradebook(f"sqlite:///{path}") as gradebook:
        for grade in gradebook.find_submission_notebook(SECTION, SECTION, "mallory").grades:
            grade.auto_score = grade.max_score
        gradebook.db.commit()
    theirs = scores(path, "mallory")
    assert theirs != ours
    kept = record_results(str(path), results, folders, [SECTION], log=lambda line: None)
    assert kept.kept == [f"{SECTION} mallory"] and not kept.written
    assert scores(path, "mallory") == theirs
    assert nbformat.read(notebook, as_version=4).cells == []  # nbgrader's notebook, untouched

    # a notebook rewritten in place, the mark left: still not the batch's
    forced = record_results(str(path), results, folders, [SECTION], log=lambda line: None, force=True)
    assert len(forced.written) == 1 and scores(path, "mallory") == pytest.approx(ours)
    notebook.write_text(notebook.read_text() + " ")
    assert record_results(str(path), results, folders, [SECTION], log=lambda line: None).kept


# --------------------------------------------------------------------------- slow: nbgrader's exchange


def handback_env(home: Path) -> dict:
    """nbgrader's environment, with the student's home (nbgrader's cache is under it) and the folder of
    nbconvert's templates named (the feedback page's), for an interpreter whose own data folder lacks them."""
    import nbconvert

    env = nbgrader_env()
    templates = Path(nbconvert.__file__).resolve().parents[4] / "share" / "jupyter"
    env["JUPYTER_PATH"] = os.pathsep.join([str(templates), env.get("JUPYTER_PATH", "")])
    env["HOME"] = str(home)
    return env


def nbgrader_in(cwd: Path, env: dict, *args):
    done = subprocess.run([sys.executable, "-m", "nbgrader", *args, "--log-level=WARN"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


@pytest.mark.slow
def test_feedback_goes_back_through_nbgrader_after_the_batch(tmp_path):
    """release_assignment, fetch_assignment, submit, collect, batch --gradebook, generate_feedback,
    release_feedback, fetch_feedback: the student finds the page with the grader's score."""
    course, exchange, home = tmp_path / "course", tmp_path / "exchange", tmp_path / "alice"
    for folder in (course, exchange, home):
        folder.mkdir()
    env = handback_env(home)
    shutil.copy(ROOT / "assignments" / "nbgrader_config.py", course)
    shutil.copytree(ROOT / "assignments" / "source" / SECTION, course / "source" / SECTION)
    where = [f"--Exchange.root={exchange}", "--course=attention-course"]
    student = where + [f"--Exchange.cache={home / 'cache'}", "--student=alice"]
    nbgrader_in(course, env, "generate_assignment", SECTION, "--force")
    nbgrader_in(course, env, "release_assignment", SECTION, *where)
    nbgrader_in(home, env, "fetch_assignment", SECTION, *student)
    shutil.copy(EXAMPLES / "partial" / f"{SECTION}.ipynb", home / SECTION / f"{SECTION}.ipynb")
    nbgrader_in(home, env, "submit", SECTION, *student)
    nbgrader_in(course, env, "collect", SECTION, *where)

    out = tmp_path / "grades"
    batch = ["batch", course / "submitted", "--out", out, "--device", "cpu", "--section", SECTION,
             "--gradebook", course / "gradebook.db"]
    done = run_cli(*batch)
    assert done.returncode == 0, done.stderr
    ours = scores(course / "gradebook.db", "alice")
    assert 0 < ours < 10
    nbgrader_in(course, env, "generate_feedback", SECTION)
    nbgrader_in(course, env, "release_feedback", SECTION, *where)
    nbgrader_in(home, env, "fetch_feedback", SECTION, *student)
    pages = list((home / SECTION / "feedback").glob(f"*/{SECTION}.html"))
    assert len(pages) == 1, pages
    page = pages[0].read_text(encoding="utf-8")
    assert f"(Score: {round(ours, 2)} / 10" in page
    from autograder.checks import homes
    from autograder.instructor.student_files import read_student

    section = next(s for s in read_student(out / "students" / "alice.json").grade.sections if s.id == SECTION)
    cells: dict[str, list] = {}
    for check in section.checks:  # each test cell: what the grader gave the checks about its name
        cells.setdefault(f"test_{homes(SECTION)[check.id][0]}", []).append(check)
    for name, checks in cells.items():
        given, most = sum(c.points for c in checks), sum(c.max_points for c in checks)
        assert f'href="#{name}">Test cell</a> (Score: {round(given, 2)} / {round(most, 2)})' in page, name

    # nbgrader's own autograde afterwards: its scores stand, and the batch says so, until --force
    nbgrader_in(course, env, "autograde", SECTION, "--force")
    theirs = scores(course / "gradebook.db", "alice")
    assert theirs != ours
    again = run_cli(*batch)
    assert again.returncode == 0, again.stderr
    assert "kept the scores nbgrader's autograde wrote after this grader's for 1 section(s)" in again.stdout
    assert scores(course / "gradebook.db", "alice") == theirs
    forced = run_cli(*batch, "--force")
    assert forced.returncode == 0, forced.stderr
    assert scores(course / "gradebook.db", "alice") == pytest.approx(ours)


# --------------------------------------------------------------------------- fast: each test cell's score


def released_gradebook(path: Path):
    """The gradebook generate_assignment makes of the committed 02_softmax: its cells, points and sources."""
    from nbgrader.api import Gradebook

    nb = nbformat.read(ROOT / "assignments" / "source" / SECTION / f"{SECTION}.ipynb", as_version=4)
    with Gradebook(f"sqlite:///{path}", course_id="attention-course") as gradebook:
        gradebook.add_assignment(SECTION)
        gradebook.add_notebook(SECTION, SECTION)
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if not meta.get("grade_id"):
                continue
            gradebook.add_source_cell(meta["grade_id"], SECTION, SECTION, cell_type=cell.cell_type,
                                      locked=meta.get("locked", False), source=cell.source, checksum="x")
            if meta.get("grade"):
                gradebook.add_grade_cell(meta["grade_id"], SECTION, SECTION, max_score=meta["points"],
                                         cell_type=cell.cell_type)
            if meta.get("solution"):
                gradebook.add_solution_cell(meta["grade_id"], SECTION, SECTION)
    return path


def test_each_test_cell_scores_what_the_grader_gave_its_checks(tmp_path, monkeypatch):
    from nbgrader.api import Gradebook

    from autograder.checks import homes
    from autograder.instructor.gradebook import record_results
    from autograder.instructor.student_files import Stored
    from test_nbgrader_round_trip import graded

    monkeypatch.setenv("PATH", nbgrader_env()["PATH"])
    path = released_gradebook(tmp_path / "gradebook.db")
    folder = collected(tmp_path, "bob")  # the partial example: some functions right, some wrong
    result = graded(folder, "bob")
    section = next(s for s in result.sections if s.id == SECTION)
    about = homes(SECTION)
    expected: dict[str, list] = {}
    for check in section.checks:
        expected.setdefault(f"test_{about[check.id][0]}", []).append(check)
    record_results(str(path), {"bob": Stored("bob", result, {"grader_errors": []})}, {"bob": folder}, [SECTION],
                   log=lambda line: None)
    with Gradebook(f"sqlite:///{path}") as gradebook:
        cells = {grade.cell.name: (grade.auto_score, grade.max_score)
                 for grade in gradebook.find_submission_notebook(SECTION, SECTION, "bob").grades
                 if grade.cell.name.startswith("test_")}
        total = gradebook.find_submission(SECTION, "bob").score
    assert set(cells) == set(expected)
    for name, checks in expected.items():
        assert cells[name] == pytest.approx((sum(c.points for c in checks), sum(c.max_points for c in checks))), name
    assert total == pytest.approx(section.score)
    assert any(score < most for score, most in cells.values()), cells  # a function with a failed check: below its most
    assert any(score == most > 0 for score, most in cells.values()), cells  # a correct one's: all its points
    notebook = nbformat.read(tmp_path / "autograded" / "bob" / SECTION / f"{SECTION}.ipynb", as_version=4)
    for cell in notebook.cells:
        name = cell.metadata.get("nbgrader", {}).get("grade_id")
        if name in expected:  # under each test cell, the checks that scored it and no other
            text = cell.outputs[0].text
            assert all(check.name in text for check in expected[name]), name
            others = [c for n, checks in expected.items() if n != name for c in checks]
            assert not any(f": {check.name} (" in text for check in others), name
