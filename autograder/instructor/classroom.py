"""The `classroom-roster` verb: roster.txt from GitHub Classroom's grades export of an assignment.

    python -m autograder classroom-roster EXPORT.csv [--by github_username|roster_identifier] [--out roster.txt]

GitHub Classroom hands each student a repository per assignment and lists them, one row per
student, in the assignment's grades export (the same fields as its REST API's "assignment
grades": assignment_name, assignment_url, starter_code_url, github_username, roster_identifier,
student_repository_name, student_repository_url, ...). This reads the two it needs, the student's
name and the repository's URL, and writes the roster ci/clone_roster.sh reads: `<student>
<owner/repository>` a line. Other columns are ignored, so a column GitHub adds changes nothing.

A row without a repository (a student who has not accepted the assignment yet, whose GitHub
username the export may not know either) has nothing to clone: it is left out and said on stderr,
a line each, named by whichever column names them. A name that clone_roster.sh would refuse (it
becomes a folder name: letters of any script, accented ones included, digits, `.`, `_`, `-`, not
starting with a dot), a URL that is not a repository's, or a student listed twice stops the
command with one line (exit status 2), so that no student is lost silently.
"""
from __future__ import annotations

import csv
import logging
import re
import sys
from pathlib import Path
from urllib.parse import urlsplit

from autograder.core.files import write_atomically
from autograder.core.submission import UsageError
from autograder.i18n import _, _f

logger = logging.getLogger(__name__)

NAME_COLUMNS = ("github_username", "roster_identifier")  # --by: which column names the student
REPOSITORY_COLUMN = "student_repository_url"
# what ci/clone_roster.sh accepts as a student's name (the name of the student's folder): letters and
# digits of any script (José, 张伟), `_`, `-`, and `.` after the first character
STUDENT_NAME = re.compile(r"[\w-][\w.-]*")
REPOSITORY_PATH = re.compile(r"/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?")


def read_rows(path: Path) -> list[dict[str, str]]:
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:  # a spreadsheet may add a BOM
            return list(csv.DictReader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise UsageError(_f("{path}: not a readable CSV file ({error})", path=path, error=error)) from None


def repository_of(url: str) -> str | None:
    """"owner/name" of a repository's URL (https://github.com/owner/name), or None."""
    parts = urlsplit(url.strip())
    found = REPOSITORY_PATH.fullmatch(parts.path)
    return f"{found[1]}/{found[2]}" if parts.scheme in ("https", "http") and parts.netloc and found else None


def roster_lines(path: Path, by: str, skipped) -> list[str]:
    """The roster's lines for the export at `path`; `skipped(name)` is told of each student without a
    repository."""
    rows = read_rows(path)
    columns = list(rows[0]) if rows else []
    for column in (by, REPOSITORY_COLUMN):
        if column not in columns:
            raise UsageError(_f("{path}: no column {column}: expected GitHub Classroom's grades export of an "
                                "assignment (its columns: {columns})", path=path, column=column,
                                columns=", ".join(columns) or "-"))
    lines, seen = [], set()
    for number, row in enumerate(rows, start=2):  # line 1 is the header
        name, url = (row.get(by) or "").strip(), (row.get(REPOSITORY_COLUMN) or "").strip()
        if not url:  # not accepted yet: nothing to clone, whatever names them (or nothing does yet)
            known = name or next(((row.get(column) or "").strip() for column in NAME_COLUMNS
                                  if (row.get(column) or "").strip()), "")
            skipped(known or _f("line {line}", line=number))
            continue
        if not STUDENT_NAME.fullmatch(name):
            raise UsageError(_f("{path}, line {line}: {name} cannot name a student's folder (letters, digits, "
                                ". _ - only); try --by {other}", path=path, line=number, name=repr(name),
                                other=next(c for c in NAME_COLUMNS if c != by)))
        if name in seen:
            raise UsageError(_f("{path}, line {line}: {name} is listed twice", path=path, line=number, name=name))
        seen.add(name)
        repository = repository_of(url)
        if repository is None:
            raise UsageError(_f("{path}, line {line}: {url} is not a repository's URL", path=path, line=number,
                                url=repr(url)))
        lines.append(f"{name} {repository}")
    return lines


def add_verbs(verbs) -> None:
    verb = verbs.add_parser("classroom-roster", help=_("roster.txt (for ci/clone_roster.sh) from GitHub Classroom's "
                            "grades export of an assignment"))
    verb.add_argument("export", type=Path, help=_("the assignment's grades export (CSV)"))
    verb.add_argument("--by", choices=NAME_COLUMNS, default=NAME_COLUMNS[0],
                      help=_("the column that names each student (default %(default)s)"))
    verb.add_argument("--out", type=Path, help=_("write the roster to this file (default: stdout)"))
    verb.set_defaults(main=main)


def main(args) -> int:
    def skipped(name: str) -> None:
        logger.warning(_f("classroom-roster: {name} has no repository yet (the assignment not accepted): left out",
                          name=name))

    lines = roster_lines(args.export, args.by, skipped)
    text = "".join(line + "\n" for line in lines)
    if args.out is None:
        sys.stdout.write(text)
    else:
        write_atomically(args.out, text)
        logger.info(_f("{count} students in {path}", count=len(lines), path=args.out))
    return 0
