"""Sharded grading cannot lose a newer grade.

A student belongs to one shard by a hash of their id (a student who joins or leaves moves nobody
else); a shard's folder sets aside the results of students it no longer owns; `merge` keeps, per
student and section, the result of the newest handed-in file whatever the order of the folders,
and says which result it replaced. The whole path, on the GitHub workflow's own commands, is
tests/test_ci_commands.py's sharded-term test.
"""
from __future__ import annotations

import itertools
import json

import pytest

from autograder.core.results import CheckResult, GradeResult, SectionResult
from autograder.instructor.merge import merge
from autograder.instructor.shards import OTHER_SHARDS, in_shard, set_aside, shard_of
from autograder.instructor.student_files import GRADED, HANDED_IN, STUDENTS, grader_hash, made_by
from autograder.instructor.term import stored_students
from support import store_grade

CLASS = [f"student-{i:02d}" for i in range(40)] + ["王小明", "José", "=cmd()"]


@pytest.mark.parametrize("count", [2, 3, 4, 7])
def test_every_student_is_in_exactly_one_shard(count):
    parts = [in_shard(CLASS, (k, count)) for k in range(1, count + 1)]
    assert sorted(itertools.chain(*parts)) == sorted(CLASS)
    assert all(1 <= shard_of(name, count) <= count for name in CLASS)


@pytest.mark.parametrize("count", [2, 3, 4])
@pytest.mark.parametrize("change", ["leaves", "joins"])
def test_a_roster_change_moves_nobody_else(count, change):
    """One student leaving or joining keeps every other student in their shard (a shard's folder,
    kept between runs, keeps skipping their unchanged work)."""
    after = CLASS[1:] if change == "leaves" else CLASS + ["newcomer"]
    before = {k: set(in_shard(CLASS, (k, count))) for k in range(1, count + 1)}
    now = {k: set(in_shard(after, (k, count))) for k in range(1, count + 1)}
    stayed = set(CLASS) & set(after)
    assert all(before[k] & stayed == now[k] & stayed for k in before)


def graded_file(folder, student: str, sections: dict[str, dict]):
    """A batch's file of `sections` ({id: OLDER or NEWER's fields}): each graded from its file
    ("files") handed in at "handed", worth "points" of 10."""
    results, graded = [], {}
    for section, fields in sections.items():
        check = CheckResult(section, "a", 10.0, fields["points"], "" if fields["points"] >= 10 else "wrong")
        results.append(SectionResult(section, section, [check]))
        graded[section] = {**made_by(fields["files"], grader_hash(), "cpu"), "graded_at": fields["graded_at"],
                           **({HANDED_IN: fields["handed"]} if fields.get("handed") else {})}
    last = max(fields["graded_at"] for fields in sections.values())
    return store_grade(folder, GradeResult(student, "cpu", results), sections=list(sections), graded_at=last,
                       grader_sha256=grader_hash(), **{GRADED: graded})


def stored_in(folder, student: str, **fields):
    return graded_file(folder, student, {"01_scores": fields})


def test_set_aside_moves_the_students_another_shard_owns(tmp_path):
    names = CLASS[:12]
    for name in names:
        stored_in(tmp_path, name, **OLDER)
    said = []
    kept = set_aside(tmp_path, tmp_path / STUDENTS, stored_students(tmp_path / STUDENTS), (2, 3), said.append)
    assert sorted(kept) == in_shard(names, (2, 3)) == sorted(stored_students(tmp_path / STUDENTS))
    moved = sorted(p.name for p in (tmp_path / OTHER_SHARDS).iterdir())
    assert len(moved) == len(said) == len(names) - len(kept) > 0
    assert all("belongs to shard" in line for line in said)


# (older, newer): the fix handed in after the first hand-in scores more; each written by its own run
OLDER = dict(points=4.0, handed="2026-11-01T09:00:00+00:00", files="first", graded_at="2026-11-05T06:00:00+00:00")
NEWER = dict(points=10.0, handed="2026-11-03T09:00:00+00:00", files="fix", graded_at="2026-11-04T06:00:00+00:00")


@pytest.mark.parametrize("order", ["older first", "newer first"])
def test_merge_keeps_the_newest_handed_in_file_whatever_the_order(tmp_path, order, capsys):
    """The older hand-in was graded later (a stale shard's file): the newer hand-in still wins,
    in both orders of the folders, and the line says which result was replaced."""
    stored_in(tmp_path / "a", "erin-01", **OLDER)
    stored_in(tmp_path / "b", "erin-01", **NEWER)
    folders = [tmp_path / "a", tmp_path / "b"]
    if order == "newer first":
        folders.reverse()
    assert merge(folders, tmp_path / "all") == 0
    merged = json.loads((tmp_path / "all" / STUDENTS / "erin-01.json").read_text())
    assert merged["score"] == 10.0
    assert merged["extra_data"][GRADED]["01_scores"][HANDED_IN] == NEWER["handed"]
    (line,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("merge: ")]
    assert line.startswith(f"merge: erin-01 01_scores: kept {tmp_path / 'b' / STUDENTS / 'erin-01.json'} "
                           f"(handed in 2026-11-03T09:00:00+00:00, 10 points), replaced ")
    assert line.endswith("(handed in 2026-11-01T09:00:00+00:00, 4 points)")


def test_merge_joins_sections_each_from_its_newest_file(tmp_path, capsys):
    """Two sections, the newer hand-in of each in a different folder."""
    graded_file(tmp_path / "a", "dave", {"01_scores": OLDER, "02_softmax": {**NEWER, "points": 7.0}})
    graded_file(tmp_path / "b", "dave", {"01_scores": NEWER, "02_softmax": {**OLDER, "points": 1.0}})
    for folders in ([tmp_path / "a", tmp_path / "b"], [tmp_path / "b", tmp_path / "a"]):
        assert merge(folders, tmp_path / "all") == 0
        merged = json.loads((tmp_path / "all" / STUDENTS / "dave.json").read_text())
        assert merged["score"] == 17.0, folders
    assert capsys.readouterr().out.count("merge: dave ") == 4


def test_the_same_file_in_two_folders_is_no_replacement(tmp_path, capsys):
    stored_in(tmp_path / "a", "ann", **NEWER)
    stored_in(tmp_path / "b", "ann", **{**NEWER, "graded_at": "2026-11-06T00:00:00+00:00"})
    assert merge([tmp_path / "a", tmp_path / "b"], tmp_path / "all") == 0
    assert "merge: " not in capsys.readouterr().out
