"""Whose scores stand: this grader's (`batch --gradebook`) or those of nbgrader's own `autograde`.

Both write the same two things: the scores of a student's section in the gradebook and the
notebook `autograded/<student>/<section>/<section>.ipynb`. Either one silently replaced the
other's until the batch marked what it wrote: beside each autograded notebook it writes, the
batch keeps MARK, a small record of that notebook's SHA-256.

What nbgrader's autograde does afterwards: without --force it leaves a student's section alone
when its autograded folder exists (and the submission's timestamp.txt is not newer than the one
the batch copied there); with --force, or for a newer submission, it deletes the folder (MARK
with it), grades the notebook's visible test cells and writes its own scores over the batch's.

What the batch does next time: where the autograded notebook is not the one MARK names (MARK
deleted, or the notebook rewritten), nbgrader's autograde (or a person) wrote it after the batch,
so its scores stand: the batch leaves that student's section alone in the gradebook and in
autograded/, says so in one line, and replaces them only with `batch --force`.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from autograder.core.files import Refused, lexists_inside, read_inside, write_atomically

MARK = ".attention-course-batch.json"  # generate_feedback copies it on into feedback/; release_feedback takes only the .html
MARK_LIMIT = 64 * 1024
NOTEBOOK_LIMIT = 64 * 1024 * 1024  # an autograded notebook carries the student's code and the grader's outputs


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_mark(folder: Path, notebook_text: str) -> None:
    """Record, beside the notebook just written, that this grader wrote it."""
    record = {"written_by": "batch --gradebook", "notebook_sha256": _digest(notebook_text.encode("utf-8"))}
    write_atomically(folder / MARK, json.dumps(record) + "\n")


def written_by_another(folder: Path, section_id: str) -> bool:
    """Whether `folder` (autograded/<student>/<section>/) holds a notebook this grader did not write last."""
    notebook = f"{section_id}.ipynb"
    if not lexists_inside(folder, notebook):
        return False  # nothing there to lose
    try:
        record = json.loads(read_inside(folder, MARK, limit=MARK_LIMIT))
        written = _digest(read_inside(folder, notebook, limit=NOTEBOOK_LIMIT))
    except (Refused, ValueError):  # no mark, a mark that is not ours, a notebook past any we write
        return True
    return not isinstance(record, dict) or record.get("notebook_sha256") != written
