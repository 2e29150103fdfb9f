"""`classroom-roster`: GitHub Classroom's grades export of an assignment -> roster.txt, as
ci/clone_roster.sh reads it."""
from __future__ import annotations

import csv
import re
import subprocess

import pytest

from support import ROOT

from autograder.cli import main

# the export's columns this command relies on, as GitHub documents the assignment's grades (others ignored)
COLUMNS = ["assignment_name", "assignment_url", "starter_code_url", "github_username", "roster_identifier",
           "student_repository_name", "student_repository_url", "points_awarded"]


def export(tmp_path, rows: list[dict], columns=COLUMNS):
    path = tmp_path / "grades.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, columns)
        writer.writeheader()
        for row in rows:
            writer.writerow({column: row.get(column, "") for column in columns})
    return path


def student(user: str, identifier: str, url: str) -> dict:
    return {"assignment_name": "week 2: softmax", "github_username": user, "roster_identifier": identifier,
            "student_repository_name": url.rsplit("/", 1)[-1], "student_repository_url": url}


CLASS = [student("alice-gh", "s1001", "https://github.com/attention-2026/week2-alice-gh"),
         student("bob-gh", "张伟", "https://github.com/attention-2026/week2-bob-gh.git"),
         student("carol-gh", "s1003", ""),  # has not accepted the assignment: no repository yet
         student("", "s1004", "")]  # nor has dan, whose GitHub username the export does not know yet


def test_the_export_becomes_the_roster_clone_roster_reads(tmp_path, capsys):
    out = tmp_path / "roster.txt"
    assert main(["classroom-roster", str(export(tmp_path, CLASS)), "--out", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert lines == ["alice-gh attention-2026/week2-alice-gh", "bob-gh attention-2026/week2-bob-gh"]
    err = capsys.readouterr().err
    assert "carol-gh has no repository yet" in err and "s1004 has no repository yet" in err
    # every name is one ci/clone_roster.sh accepts
    accepted = re.compile(r"^[\w.-]+$")
    assert all(accepted.match(line.split()[0]) and not line.startswith(".") for line in lines)
    # and the script reads it: each repository is looked up (here on a host with none)
    done = subprocess.run(["bash", str(ROOT / "ci" / "clone_roster.sh"), str(out), str(tmp_path / "submitted")],
                          capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "GIT_BASE_URL": (tmp_path / "nohost").as_uri()})
    assert "could not clone attention-2026/week2-alice-gh for alice-gh" in done.stderr, done.stderr
    assert "bad student name" not in done.stderr


@pytest.mark.parametrize("rows, columns, says", [
    (CLASS, [c for c in COLUMNS if c != "student_repository_url"], "no column student_repository_url"),
    ([student("x", "s1", "https://github.com/o/r"), student("x", "s2", "https://github.com/o/r2")], COLUMNS,
     "line 3: x is listed twice"),
    ([student("x", "s1", "not a url")], COLUMNS, "line 2: 'not a url' is not a repository's URL"),
    ([student("x", "s1", "https://github.com/o")], COLUMNS, "is not a repository's URL"),
])
def test_a_bad_export_is_one_line_and_exit_2(tmp_path, capsys, rows, columns, says):
    assert main(["classroom-roster", str(export(tmp_path, rows, columns))]) == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1, err


def test_a_name_no_folder_can_have_is_refused_with_the_other_column_named(tmp_path, capsys):
    path = export(tmp_path, [CLASS[0], student("ann-gh", "Ann Lee", "https://github.com/o/week2-ann-gh")])
    assert main(["classroom-roster", str(path), "--by", "roster_identifier"]) == 2
    assert "line 3: 'Ann Lee' cannot name a student's folder" in capsys.readouterr().err
    assert main(["classroom-roster", str(path)]) == 0
    assert capsys.readouterr().out.startswith("alice-gh attention-2026/week2-alice-gh\n")


@pytest.mark.parametrize("identifier", ["José", "Zoë-Ångström", "张伟", "o.brien_2"])
def test_an_identifier_in_any_script_names_a_folder_clone_roster_clones(tmp_path, capsys, identifier):
    """Accented and Chinese identifiers pass both the command and ci/clone_roster.sh."""
    path = export(tmp_path, [student("x-gh", identifier, "https://github.com/o/week2-x-gh")])
    out = tmp_path / "roster.txt"
    assert main(["classroom-roster", str(path), "--by", "roster_identifier", "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == f"{identifier} o/week2-x-gh\n"
    done = subprocess.run(["bash", str(ROOT / "ci" / "clone_roster.sh"), str(out), str(tmp_path / "submitted")],
                          capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "GIT_BASE_URL": (tmp_path / "nohost").as_uri()})
    assert f"could not clone o/week2-x-gh for {identifier}" in done.stderr, done.stderr
    assert "bad student name" not in done.stderr


@pytest.mark.parametrize("name", [".hidden", "a/b", 'say"hi', "back\\slash", "it's"])
def test_clone_roster_refuses_a_name_that_cannot_be_a_folder_or_json(tmp_path, name):
    roster = tmp_path / "roster.txt"
    roster.write_text(f"{name} o/r\n", encoding="utf-8")
    done = subprocess.run(["bash", str(ROOT / "ci" / "clone_roster.sh"), str(roster), str(tmp_path / "dest")],
                          capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode != 0 and "bad student name" in done.stderr, done.stderr
