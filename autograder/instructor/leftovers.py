"""What an earlier batch run left in its output folder that the next run must not keep.

A killed run's temporary files (written beside their target, then renamed: student_files), and the
feedback reports of an earlier `--report`, which are renderings of the students' records and could
disagree with the grades a later run writes.
"""
from __future__ import annotations

from pathlib import Path

from autograder.instructor.student_files import FEEDBACK, STUDENTS, remove_stale_temporaries


def remove_feedback(out: Path) -> None:
    """Remove OUT/feedback/ (the reports of an earlier `--report`) before a run changes the grades.

    The reports are renderings of the students' records in OUT/students/, never read back: a run
    without --report that changed a grade would leave a report that disagrees with grades.csv, to
    be handed back by mistake. Removing them loses nothing (`--report` writes every one again from
    the records, for unchanged students too); marking them stale would still leave them to be
    handed back. A link is unlinked, never followed: where it points is not the batch's."""
    import shutil

    folder = out / FEEDBACK
    if folder.is_symlink() or folder.is_file():
        folder.unlink()
    elif folder.is_dir():
        shutil.rmtree(folder)


def remove_leftovers(out: Path) -> None:
    """What an earlier run left that this one must not keep: a killed run's temporary files, and
    the feedback reports (remove_feedback)."""
    remove_stale_temporaries(out / STUDENTS)
    remove_stale_temporaries(out)
    remove_feedback(out)
