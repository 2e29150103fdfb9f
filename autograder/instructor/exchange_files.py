"""The two files nbgrader's feedback steps read beside an autograded notebook: timestamp.txt and
submission_secret.txt, in `autograded/<student>/<section>/`.

Where nbgrader's own files come from: `nbgrader submit` writes both into the student's submission
(and the same two into the student's own cached copy of it); `nbgrader collect` brings them into
`submitted/<student>/<section>/`; `nbgrader autograde` copies every file of that folder that is not
a notebook into `autograded/<student>/<section>/`; `nbgrader generate_feedback` copies them again
into `feedback/<student>/<section>/`. There `nbgrader release_feedback` reads both, and stops with
an error where one is missing: the secret names the released page (the MD5 of the secret and the
notebook's name), and `nbgrader fetch_feedback` finds the page by computing the same name from the
secret in the student's cached copy. The timestamp is the submission's time: release_feedback
logs it, and autograde and generate_feedback compare the two folders' timestamps to tell whether
a newer submission must be processed again.

So the batch writes both beside each autograded notebook:

- the secret of an nbgrader-collected submission (no roster record, no `.git`: the same rule as
  instructor/submission_time.py), so that the student's fetch_feedback finds the page; otherwise
  the one already written there by an earlier run; otherwise a new random one (a class cloned
  from git never submitted through the exchange, so no student holds a secret to match);
- the submission's time as instructor/submission_time.py gives it, in nbgrader's own format, or
  nbgrader's timestamp.txt as collected.

The student's files are read only through core/files.read_inside (no link followed, a few KiB at most).
"""
from __future__ import annotations

import re
import secrets
from datetime import datetime, timezone
from pathlib import Path

from autograder.core.files import Refused, lexists_inside, read_inside, write_atomically
from autograder.instructor.submission_time import ROSTER, submission_time

TIMESTAMP = "timestamp.txt"
SECRET = "submission_secret.txt"
SMALL_FILE = 4096  # a secret is 128 hexadecimal digits, a timestamp one short line
NBGRADER_TIME = "%Y-%m-%d %H:%M:%S.%f %Z"  # how `nbgrader submit` writes timestamp.txt
_SECRET = re.compile(r"[0-9a-f]{16,1024}")
_TIMESTAMP = re.compile(r"[0-9][0-9 :.+\-TZUCa-z]{9,60}")


def collected_by_nbgrader(folder: Path | None) -> bool:
    """Whether `folder` is a student's folder nbgrader collected: no roster record, not a git checkout."""
    return folder is not None and not (folder.parent / ROSTER).is_dir() and not lexists_inside(folder, ".git")


def _small_text(root: Path, relative: str) -> str | None:
    try:
        return read_inside(root, relative, limit=SMALL_FILE).decode("ascii").strip()
    except (Refused, UnicodeDecodeError):
        return None


def submission_secret(folder: Path | None, section_id: str, target: Path) -> str:
    """The secret that names the student's released feedback page (see the module's docstring)."""
    if collected_by_nbgrader(folder):
        found = _small_text(folder, f"{section_id}/{SECRET}")
        if found and _SECRET.fullmatch(found):
            return found
    kept = _small_text(target, SECRET) if target.is_dir() else None
    return kept if kept and _SECRET.fullmatch(kept) else secrets.token_hex(64)


def nbgrader_timestamp(folder: Path | None, section_id: str) -> str:
    """The submission's time as nbgrader writes it in timestamp.txt ("2026-11-20 10:00:00.000000 UTC")."""
    stamp, origin = submission_time(folder, section_id)
    if stamp and origin == "nbgrader" and _TIMESTAMP.fullmatch(stamp):
        return stamp  # nbgrader's own line, as collected
    try:
        moment = datetime.fromisoformat(stamp) if stamp and origin != "nbgrader" else None
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        moment = datetime.now(timezone.utc)  # no time known: when it was graded
    return moment.astimezone(timezone.utc).strftime(NBGRADER_TIME)


def write_exchange_files(target: Path, folder: Path | None, section_id: str) -> None:
    """timestamp.txt and submission_secret.txt in `target`, the student's autograded/<student>/<section>/."""
    secret = submission_secret(folder, section_id, target)
    write_atomically(target / TIMESTAMP, nbgrader_timestamp(folder, section_id))
    write_atomically(target / SECRET, secret)
