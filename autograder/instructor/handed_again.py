"""Sections handed in again after they were graded, which this run does not grade: said, never silent.

A run grades its own sections (--assignment, --section) and the earlier ones a student has no good
grade for yet (term.to_grade). A section graded in an earlier week whose file has changed since (a
resubmission after that week's run) keeps its grade until a run grades it again, by the instructor's
choice: to hold a deadline, grade what was handed in by then. The batch names each such section,
with the command that grades it again, so that an old grade is never kept without a word.
"""
from __future__ import annotations

from pathlib import Path

from autograder.core.matching import find_section
from autograder.core.sections import BY_ID
from autograder.instructor.student_files import Stored, section_hash


def handed_in_again(previous: Stored | None, folder: Path, earlier: list[str]) -> list[str]:
    """The sections of `earlier` (graded before, not graded by this run) whose file in `folder` differs
    from the one their stored grade was graded from; a section no longer handed in is not one."""
    if previous is None:
        return []
    changed = []
    for section_id in earlier:
        kept = previous.graded.get(section_id, {}).get("files_sha256")
        section = BY_ID.get(section_id)
        if kept is None or section is None:
            continue
        located = find_section(folder, section)  # looked up once: for its presence and for its hash
        if located.relative is not None and section_hash(folder, section, located) != kept:
            changed.append(section_id)
    return changed
