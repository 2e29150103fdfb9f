"""The gradebook's submission time comes from what the instructor controls, never from a student's file.

A student's git repository is theirs: a `01_scores/timestamp.txt` committed
there (say, dated 2000) must not become the submission time. ci/clone_roster.sh
records the fetch and the commit in DEST/.roster/<student>.json, outside every
student's folder; nbgrader's timestamp.txt counts only in a folder nbgrader
collected; otherwise the section file's modification time does.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from autograder.instructor.submission_time import submission_time
from support import EXAMPLES, ROOT, venv_path

SECTION = "01_scores"
FORGED = "2000-01-01 00:00:00.000000 UTC"
COMMITTED = "2026-11-20T10:00:00+00:00"


def student_folder(parent: Path, name: str, *, git: bool, forged: bool = True) -> Path:
    """A student's folder with the section's notebook; `git`: a checkout (a .git inside)."""
    folder = parent / name
    (folder / SECTION).mkdir(parents=True)
    (folder / SECTION / f"{SECTION}.ipynb").write_bytes((EXAMPLES / "correct" / f"{SECTION}.ipynb").read_bytes())
    if forged:
        (folder / SECTION / "timestamp.txt").write_text(FORGED)
    if git:
        (folder / ".git").mkdir()
    return folder


def is_recent(stamp: str) -> bool:
    moment = datetime.fromisoformat(stamp)
    return abs(datetime.now(timezone.utc) - moment) < timedelta(minutes=10)


def test_a_git_checkout_never_supplies_its_own_timestamp(tmp_path):
    folder = student_folder(tmp_path / "submitted", "mallory", git=True)
    stamp, source = submission_time(folder, SECTION)
    assert source == "file" and not stamp.startswith("2000")
    assert is_recent(stamp)  # when the notebook was written here (the clone)


def test_nbgrader_collected_folder_keeps_its_timestamp(tmp_path):
    folder = student_folder(tmp_path / "submitted", "ann", git=False)
    assert submission_time(folder, SECTION) == (FORGED, "nbgrader")


def test_a_roster_class_ignores_timestamp_txt_even_without_git(tmp_path):
    submitted = tmp_path / "submitted"
    folder = student_folder(submitted, "ann", git=False)
    (submitted / ".roster").mkdir()  # the class was cloned: its student has no record (a failed clone)
    stamp, source = submission_time(folder, SECTION)
    assert source == "file" and is_recent(stamp)


def test_the_roster_record_is_used_and_bounded_by_the_fetch(tmp_path):
    submitted = tmp_path / "submitted"
    ann = student_folder(submitted, "ann", git=True)
    bob = student_folder(submitted, "bob", git=True)
    (submitted / ".roster").mkdir()
    (submitted / ".roster" / "ann.json").write_text(json.dumps(
        {"student": "ann", "fetched_at": "2026-11-25T09:00:00+00:00", "commit_time": COMMITTED}))
    # bob's git says his commit is from tomorrow: it cannot postdate the fetch
    (submitted / ".roster" / "bob.json").write_text(json.dumps(
        {"student": "bob", "fetched_at": "2026-11-25T09:00:00+00:00", "commit_time": "2026-11-26T09:00:00Z"}))
    assert submission_time(ann, SECTION) == (COMMITTED, "roster")
    assert submission_time(bob, SECTION) == ("2026-11-25T09:00:00+00:00", "roster")


def test_a_linked_roster_record_is_not_followed(tmp_path):
    submitted = tmp_path / "submitted"
    folder = student_folder(submitted, "ann", git=True)
    (folder / "record.json").write_text(json.dumps({"commit_time": "2000-01-01T00:00:00+00:00"}))
    (submitted / ".roster").mkdir()
    (submitted / ".roster" / "ann.json").symlink_to(folder / "record.json")
    stamp, source = submission_time(folder, SECTION)
    assert source == "file" and not stamp.startswith("2000")


def git(*args, cwd, env=None):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, **(env or {})})


def test_clone_roster_records_fetch_and_commit_beside_the_clones(tmp_path):
    work = tmp_path / "repo"
    student_folder(tmp_path, "repo", git=False)  # the student's repository: a forged timestamp.txt committed
    git("init", "-q", "-b", "main", cwd=work)
    git("add", "-A", cwd=work)
    dated = {"GIT_AUTHOR_DATE": COMMITTED, "GIT_COMMITTER_DATE": COMMITTED, "GIT_AUTHOR_NAME": "m",
             "GIT_AUTHOR_EMAIL": "m@x", "GIT_COMMITTER_NAME": "m", "GIT_COMMITTER_EMAIL": "m@x"}
    git("commit", "-q", "-m", "hand in", cwd=work, env=dated)
    (tmp_path / "mirror" / "course").mkdir(parents=True)
    git("clone", "-q", "--bare", str(work), str(tmp_path / "mirror" / "course" / "mallory.git"), cwd=tmp_path)
    roster = tmp_path / "roster.txt"
    roster.write_text("mallory course/mallory\nghost course/missing\n")
    submitted = tmp_path / "submitted"
    done = subprocess.run(["bash", str(ROOT / "ci" / "clone_roster.sh"), str(roster), str(submitted)],
                          env={**os.environ, "GIT_BASE_URL": (tmp_path / "mirror").as_uri(),
                               "GIT_CONFIG_GLOBAL": os.devnull},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "1 cloned, 1 failed" in done.stdout
    record = json.loads((submitted / ".roster" / "mallory.json").read_text())
    assert record["student"] == "mallory" and record["commit_time"] == COMMITTED
    assert is_recent(record["fetched_at"]) and len(record["commit"]) == 40
    assert not (submitted / ".roster" / "ghost.json").exists()
    assert (submitted / "mallory" / SECTION / "timestamp.txt").read_text() == FORGED
    assert submission_time(submitted / "mallory", SECTION) == (COMMITTED, "roster")


def test_the_roster_folder_is_no_student(tmp_path):
    """batch never takes .roster for a student's folder, and clone_roster refuses the name."""
    from autograder.instructor.batch import discover

    submitted = tmp_path / "submitted"
    student_folder(submitted, "ann", git=True)
    student_folder(submitted, ".roster", git=False)
    assert list(discover(submitted)) == ["ann"]
    roster = tmp_path / "roster.txt"
    roster.write_text(".roster course/x\n")
    done = subprocess.run(["bash", str(ROOT / "ci" / "clone_roster.sh"), str(roster), str(tmp_path / "dest")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "bad student name" in done.stderr


@pytest.mark.parametrize("text", ["", "not json", "[]", '{"commit_time": "yesterday"}'])
def test_an_unreadable_roster_record_falls_back_to_the_file_time(tmp_path, text):
    submitted = tmp_path / "submitted"
    folder = student_folder(submitted, "ann", git=True)
    (submitted / ".roster").mkdir()
    (submitted / ".roster" / "ann.json").write_text(text)
    stamp, source = submission_time(folder, SECTION)
    assert source == "file" and is_recent(stamp)


# --------------------------------------------------------------------------- a resubmission's time

FIRST, LATE = "2026-11-01 09:00:00.000000 UTC", "2026-11-03 09:00:00.000000 UTC"  # as nbgrader writes them
DUE = "2026-11-02T00:00:00+00:00"


@pytest.mark.parametrize("text, utc", [
    ("2026-11-01 09:00:00.000000 UTC", "2026-11-01T09:00:00+00:00"),
    ("2026-11-01 10:00:00.000000 Europe/Berlin", "2026-11-01T09:00:00+00:00"),
    ("2026-11-01T10:00:00+01:00", "2026-11-01T09:00:00+00:00"),
    ("2026-11-01T09:00:00Z", "2026-11-01T09:00:00+00:00"),
    ("2026-11-01 09:00:00", "2026-11-01T09:00:00+00:00"),  # nbgrader's times without a zone are UTC
    ("yesterday", None), ("2026-11-01 09:00:00 Nowhere/City", None),
])
def test_handed_in_times_are_compared_in_utc(text, utc):
    from autograder.instructor.submission_time import as_utc

    moment = as_utc(text)
    assert (moment.isoformat() if moment else None) == utc


def graded_section(student: str, points: float, handed: str):
    """A student's stored grade of SECTION, graded from a file handed in at `handed`."""
    from autograder.core.results import CheckResult, GradeResult, SectionResult
    from autograder.instructor.student_files import Stored
    from autograder.instructor.submission_time import as_utc

    check = CheckResult(SECTION, "a", 10.0, points, "")
    grade = GradeResult(student, "cpu", [SectionResult(SECTION, SECTION, [check])])
    return Stored(student, grade, {"student": student, "sections": [SECTION],
                                   "graded": {SECTION: {"handed_in": as_utc(handed).isoformat()}}})


def test_the_gradebook_submission_follows_a_resubmission(tmp_path, monkeypatch):
    """dave hands in on time, then a fix after the deadline: nbgrader's submission (its time and
    lateness) follows the file graded, not the first hand-in."""
    from nbgrader.api import Gradebook

    monkeypatch.setenv("PATH", venv_path(os.environ.get("PATH", "")))  # nbgrader creates its database with alembic

    from autograder.instructor.gradebook import Recorded, record_student

    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url) as gradebook:
        gradebook.add_assignment(SECTION, duedate=DUE)
        gradebook.add_notebook(SECTION, SECTION)
        gradebook.add_grade_cell("test_dot_scores", SECTION, SECTION, max_score=10.0, cell_type="code")
    lateness = []
    for handed in (FIRST, LATE):
        summary = Recorded()
        with Gradebook(url) as gradebook:
            record_student(gradebook, None, "dave", graded_section("dave", 10.0, handed), None, [SECTION], summary)
        with Gradebook(url) as gradebook:
            submission = gradebook.find_submission(SECTION, "dave")
            lateness.append((submission.timestamp.isoformat(), submission.total_seconds_late))
    assert lateness == [("2026-11-01T09:00:00", 0), ("2026-11-03T09:00:00", 33 * 3600)]
    assert summary.written[-1].endswith("(handed in again: 2026-11-03T09:00:00+00:00)")


def test_grades_csv_says_when_the_graded_file_was_handed_in(tmp_path):
    """nbgrader's collected folder: timestamp.txt of the first hand-in, then of a fix; grades.csv's
    handed_in follows the fix once it is graded."""
    import csv

    submitted = tmp_path / "submitted"
    folder = student_folder(submitted, "dave", git=False, forged=False)
    times = []
    for stamp, notebook in ((FIRST, ROOT / "student_template"), (LATE, EXAMPLES / "correct")):
        (folder / SECTION / "timestamp.txt").write_text(stamp)
        (folder / SECTION / f"{SECTION}.ipynb").write_bytes((notebook / f"{SECTION}.ipynb").read_bytes())
        done = subprocess.run([sys.executable, "-m", "autograder", "batch", str(submitted), "--out",
                               str(tmp_path / "grades"), "--device", "cpu", "--section", SECTION],
                              cwd=ROOT, capture_output=True, text=True, timeout=600,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert done.returncode == 0, done.stderr
        with open(tmp_path / "grades" / "grades.csv", newline="") as handle:
            (row,) = csv.DictReader(handle)
        times.append((row["handed_in"], float(row[SECTION]) > 0))
    assert times == [("2026-11-01T09:00:00+00:00", False), ("2026-11-03T09:00:00+00:00", True)]
