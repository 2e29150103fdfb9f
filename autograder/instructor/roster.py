"""The students of a class folder: who they are and where each one's submission is.

Students are the sub-folders of a folder (or of its submitted/, for an nbgrader
course folder) that hold at least one section's file, or any notebook or Python
file at all (core/matching: a notebook under another name is matched by its
cells; one that is not still gives the student a row saying what was found);
`batch` grades them and `similarity` compares them.
"""
from __future__ import annotations

import logging
from pathlib import Path

from autograder.core.sections import SECTIONS
from autograder.core.matching import holds_anything, own_names, shown_name
from autograder.core.submission import UsageError, section_file
from autograder.i18n import _f

logger = logging.getLogger(__name__)


def discover(folder: Path) -> dict[str, Path]:
    """Student name -> their submission folder, sorted by name."""
    if not folder.is_dir():
        raise UsageError(_f("{folder}: no such folder", folder=folder))
    if (folder / "submitted").is_dir():  # an nbgrader course folder
        folder = folder / "submitted"
    students = {}
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if entry.name.startswith(".") or not entry.is_dir():
            continue
        if entry.is_symlink():  # a roster folder is made by git or nbgrader, never a link
            logger.warning(_f("autograder: warning: {entry}: a link, not a student's folder; left out", entry=entry))
            continue
        # a folder with a notebook under no section's name is a student's too: their row says what was found
        if any(section_file(entry, section) is not None for section in SECTIONS) or holds_anything(entry):
            students[student_id(entry.name)] = entry
    return students


def files_status(sections: list) -> list[str]:
    """grades.csv's words on how a student's files were found, one part per case (empty when by their names):
    a section taken from a file by its cells, one held by several notebooks, notebooks that no section took."""
    parts, unmatched = [], {}
    # a file some section took (by its name or its cells) or that several claim is no unmatched one
    used = {name for section in SECTIONS for name in own_names(section)}
    used |= {s.handed_in_as for s in sections} | {f for s in sections if s.ambiguous for f in s.files_found}
    for section in sections:
        if section.handed_in_as:
            parts.append(_f("{section} from {file}", section=section.id, file=repr(shown_name(section.handed_in_as))))
        elif section.ambiguous:
            parts.append(_f("{section} not graded, several notebooks hold it: {files}", section=section.id,
                            files=", ".join(repr(shown_name(f)) for f in section.files_found)))
        else:
            notebooks = tuple(f for f in section.files_found if f.endswith(".ipynb") and f not in used)
            if notebooks:
                unmatched.setdefault(notebooks, []).append(section.id)
    for notebooks, ids in unmatched.items():
        parts.append(_f("{sections} not found in {files}", sections=", ".join(ids),
                        files=", ".join(repr(shown_name(f)) for f in notebooks)))
    return parts


def student_id(folder_name: str) -> str:
    """The id of a student: their folder's name, verbatim; bytes that are not UTF-8 (possible in a
    Linux file name, impossible in JSON or CSV) are shown as backslash escapes."""
    return folder_name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
