"""The students of a class folder: who they are and where each one's submission is.

Students are the sub-folders of a folder (or of its submitted/, for an nbgrader
course folder) that hold at least one section's file; `batch` grades them and
`similarity` compares them.
"""
from __future__ import annotations

import sys
from pathlib import Path

from autograder.core.sections import SECTIONS
from autograder.core.submission import UsageError, section_file
from autograder.i18n import _f


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
            print(_f("autograder: warning: {entry}: a link, not a student's folder; left out", entry=entry),
                  file=sys.stderr)
            continue
        if any(section_file(entry, section) is not None for section in SECTIONS):
            students[student_id(entry.name)] = entry
    return students


def student_id(folder_name: str) -> str:
    """The id of a student: their folder's name, verbatim; bytes that are not UTF-8 (possible in a
    Linux file name, impossible in JSON or CSV) are shown as backslash escapes."""
    return folder_name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
