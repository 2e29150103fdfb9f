"""When a student handed a section in, for the submission nbgrader records (instructor/gradebook.py).

It comes from what the instructor controls, never from a file the student wrote
(`submission_time`), in this order:

1. The roster record `SUBMITTED/.roster/<student>.json` that `ci/clone_roster.sh`
   writes beside the clones (outside every student's folder; a student name
   cannot start with a dot): the time of the last commit, no later than the
   time it was fetched. A commit's time is what the student's git wrote, so it
   can be set back; the fetch time is the bound the instructor controls (to
   enforce a deadline, clone at the deadline).
2. nbgrader's `<student>/<section>/timestamp.txt`, only for a folder nbgrader
   collected: no roster record for the class (no `.roster` folder) and no
   `.git` in the student's folder. In a git checkout that file is the student's.
3. Otherwise the section file's modification time, which the clone or the
   collection set when it wrote the file.

`handed_in` gives the same time as one comparable form, ISO 8601 in UTC: the batch keeps it in
each section's provenance (the time of the file that section was graded from), so that the
gradebook and grades.csv follow a resubmission and `merge` keeps the newest handed-in file.
"""
from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from autograder.core.files import Refused, lexists_inside, read_inside
from autograder.core.sections import BY_ID
from autograder.core.submission import section_file

ROSTER = ".roster"  # SUBMITTED/.roster/<student>.json, written by ci/clone_roster.sh
SMALL_FILE = 64 * 1024  # a roster record or a timestamp.txt is a line or two


def submission_time(folder: Path | None, section_id: str) -> tuple[str | None, str]:
    """(time of the section's submission or None, where it came from: "roster", "nbgrader", "file")."""
    if folder is None:
        return None, ""
    cloned = (folder.parent / ROSTER).is_dir()
    if cloned:
        stamp = _roster_time(folder)
        if stamp:
            return stamp, "roster"
    elif not lexists_inside(folder, ".git"):  # collected by nbgrader: its timestamp.txt
        stamp = _nbgrader_time(folder, section_id)
        if stamp:
            return stamp, "nbgrader"
    stamp = _file_time(folder, section_id)
    return (stamp, "file") if stamp else (None, "")


def handed_in(folder: Path | None, section_id: str) -> str | None:
    """When the section's file was handed in (submission_time), as ISO 8601 in UTC; None when unknown."""
    stamp, _ = submission_time(folder, section_id)
    moment = as_utc(stamp) if stamp else None
    return moment.isoformat() if moment else None


def as_utc(text) -> datetime | None:
    """A time as nbgrader ("2026-11-20 10:00:00.000000 UTC", or a zone's name) or ISO 8601 writes it,
    in UTC; a time without a zone is nbgrader's, which are in UTC. None when it is no time."""
    parts = str(text).strip().split(" ")
    zone = timezone.utc
    if len(parts) == 3:  # nbgrader's "date time zone", the zone a name ("UTC", "Europe/Berlin")
        try:
            zone = timezone.utc if parts[2] in ("UTC", "Z") else ZoneInfo(parts[2])
        except (ValueError, ZoneInfoNotFoundError):
            return None
        parts = parts[:2]
    try:
        moment = datetime.fromisoformat(" ".join(parts).replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.astimezone(timezone.utc) if moment.tzinfo else moment.replace(tzinfo=zone).astimezone(timezone.utc)


def _small_text(root: Path, relative: str) -> str | None:
    """A short text file below `root`, read without following links; None when absent or unreadable."""
    try:
        return read_inside(root, relative, limit=SMALL_FILE).decode("utf-8")
    except (Refused, UnicodeDecodeError):
        return None


def _utc(text) -> datetime | None:
    try:
        moment = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.astimezone(timezone.utc) if moment.tzinfo else None  # a time without a zone means nothing


def _roster_time(folder: Path) -> str | None:
    """The last commit's time from the roster record, but never later than the fetch (which the instructor ran)."""
    text = _small_text(folder.parent, f"{ROSTER}/{folder.name}.json")
    try:
        record = json.loads(text) if text else None
    except json.JSONDecodeError:
        return None
    if not isinstance(record, dict):
        return None
    times = [t for t in (_utc(record.get("commit_time")), _utc(record.get("fetched_at"))) if t is not None]
    return min(times).isoformat() if times else None


def _nbgrader_time(folder: Path, section_id: str) -> str | None:
    text = _small_text(folder, f"{section_id}/timestamp.txt")
    lines = text.strip().splitlines() if text else []
    return lines[0].strip() if lines else None


def _file_time(folder: Path, section_id: str) -> str | None:
    """When the section's file was written into the folder (its mtime, not followed if a link)."""
    relative = section_file(folder, BY_ID[section_id]) if section_id in BY_ID else None
    try:
        moment = os.lstat(folder / relative).st_mtime if relative else None
    except OSError:
        return None
    return None if moment is None else datetime.fromtimestamp(moment, timezone.utc).isoformat()
