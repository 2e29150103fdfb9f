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
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from autograder.instructor.submission_time import submission_time
from support import EXAMPLES, ROOT

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
