"""A term in one output folder: each run adds its sections to what the folder already holds.

An instructor grades a few sections a week into one `--out` folder. Each student's file
(students/<student>.json, instructor/student_files.py) holds every section graded for them so far:
a run replaces the sections it grades and keeps the others. Which sections have been assigned so
far is read from the students' files themselves (their provenance's "sections"), never kept
anywhere else, so a folder and its record cannot disagree and `merge` needs nothing more.

A section that was never assigned is nowhere: not in a student's grade, not a column of
grades.csv, not a test of results.json, not in the maximum. An assigned section that a student
did not hand in is a zero, "not handed in", like any failure.

The class is every student ever graded into the folder and every student of this run's
SUBMITTED_DIR (`the_class`). A student of the folder whom a run does not find has handed in
nothing for it: the run grades them from an empty folder, so that each of its sections is "not
handed in" for them too, and every student of the folder holds the same sections and the same
maximum after every run.
"""
from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

from autograder.core.results import GradeResult
from autograder.core.sections import SECTIONS
from autograder.i18n import language
from autograder.instructor.student_files import GRADED, HANDED_IN, Stored, made_by, read_student


def in_course_order(section_ids) -> list[str]:
    wanted = set(section_ids)
    return [section.id for section in SECTIONS if section.id in wanted]


def held(stored: Stored) -> list[str]:
    """The sections a stored grade holds a result for."""
    return [section.id for section in stored.grade.sections]


def assigned_to(stored: Stored) -> list[str]:
    """The sections assigned to this student so far (an older file: those its grade holds)."""
    return in_course_order((stored.sections or []) + held(stored))


def assigned_sections(results) -> list[str]:
    """The sections assigned so far in a folder: every section any of its students was graded for."""
    return in_course_order(section_id for stored in results for section_id in assigned_to(stored))


def stored_students(students_dir: Path) -> dict[str, Stored]:
    """Every readable student file of a folder: {student: their stored grade}."""
    found = {}
    for path in sorted(Path(students_dir).glob("*.json")):
        stored = read_student(path)
        if stored is not None:
            found[stored.student] = stored
    return found


def the_class(submitted: dict[str, Path], known, nothing: Path) -> dict[str, Path]:
    """{student: the folder to grade them from}: the students of SUBMITTED_DIR (`submitted`) from
    their own folders, and each student of the output folder (`known`) without one from `nothing`,
    an empty folder, in which every section is "not handed in"."""
    folders = {name: nothing for name in known}
    folders.update(submitted)
    return dict(sorted(folders.items()))


def to_grade(previous: Stored | None, run_sections: list[str], assigned: list[str]) -> list[str]:
    """The sections a run asks of one student: its own, and each section assigned earlier that the
    student has no good grade for yet (new to the class, or graded with errors)."""
    graded = previous.graded if previous is not None else {}
    return in_course_order(list(run_sections) + [s for s in assigned if s not in graded])


def combined(previous: GradeResult | None, new: GradeResult) -> GradeResult:
    """`new`'s sections, and the sections of `previous` that `new` does not grade, in the course's
    order. The rest (device, sandbox tier, torch, time) is the new run's, unless it graded nothing."""
    if previous is None:
        return new
    ids = {section.id for section in new.sections}
    kept = [s for s in previous.sections if s.id not in ids]
    order = {section.id: index for index, section in enumerate(SECTIONS)}
    sections = sorted(kept + list(new.sections), key=lambda section: order.get(section.id, len(order)))
    base = new if new.sections else previous
    # a section graded without a sandbox stays marked so, whichever run graded it
    return replace(base, submission=new.submission, sections=sections, grader_errors=list(new.grader_errors),
                   weak=new.weak or (previous.weak and bool(kept)))


def provenance_after(previous: Stored | None, run: dict, hashes: dict[str, str], grader: str, device: str,
                     ok: bool, handed: dict[str, str | None] | None = None) -> dict:
    """A student's provenance after a run graded the sections of `hashes` ({id: file hash}): the run's
    own (`run`: student, time, errors ...) with the sections assigned to them and, per section, what
    it was graded from and when that file was handed in (`handed`: {id: ISO time}, where known). A
    section graded with errors loses its entry, so the next run grades it again."""
    graded = {k: v for k, v in (previous.graded if previous else {}).items() if k not in hashes}
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    handed = handed or {}
    if ok:
        graded.update({section_id: {**made_by(files, grader, device, language()), "graded_at": now,
                                    **({HANDED_IN: handed[section_id]} if handed.get(section_id) else {})}
                       for section_id, files in hashes.items()})
    assigned = in_course_order((assigned_to(previous) if previous else []) + list(hashes))
    return {**run, "sections": assigned, GRADED: {k: graded[k] for k in in_course_order(graded)},
            "grader_sha256": grader, "device": device, "graded_at": now}
