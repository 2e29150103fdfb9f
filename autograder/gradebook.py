"""Record a batch's section scores in nbgrader's gradebook (`batch --gradebook`).

    python -m autograder batch submitted/ --out grades/ --section 02_softmax \\
        --gradebook sqlite:///path/to/gradebook.db     # or just the path of gradebook.db

After the batch, every graded student's score of each graded section is written
into the gradebook through nbgrader's own API (`nbgrader.api.Gradebook`), so that
`nbgrader export` and the formgrader show it.

How a score is stored
---------------------
A section is an nbgrader assignment of the same name holding one notebook of the
same name; `nbgrader generate_assignment` (or `nbgrader db assignment add` plus a
release) records its graded cells, and their points make up the `max_score` that
`nbgrader export` reports. The hidden checks have their own points, so the
student's fraction of the section is carried over: with `s` of `m` points from
the grader, every autograded (code) grade cell of the notebook gets
`auto_score = cell points * s / m`. Consequently

    nbgrader export's score / max_score  ==  grades.csv's section column / the section's max

(the same percentage, on nbgrader's scale of points). The grades are written as
*automatic* scores: a manual grade an instructor entered in the formgrader keeps
precedence (nbgrader's rule) and is never overwritten; the summary counts them.
Cells that are not autograded code cells (manually graded answers, tasks) are
left untouched.

What is created: the student (`update_or_create_student`, names untouched) and
the submission when it does not exist yet (`add_submission`, with its time as
below). Nothing else is
created: a missing assignment or notebook is an error raised before any grading
(release it with nbgrader first), and so is a gradebook file that does not exist
or is not an nbgrader database (nbgrader would silently create an empty one).

The submission time
-------------------
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

Not recorded, and said so: students with a grader error (their zero is a
placeholder, not a grade) and sections a student did not hand in (no submission
is invented for them; an existing one is left as it is).
"""
from __future__ import annotations

import json
import os
import sys
import warnings
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from autograder.files import Refused, lexists_inside, read_inside
from autograder.submission import UsageError


class GradebookError(UsageError):
    """The gradebook is missing, unreadable or lacks a section's assignment (exit status 2)."""


# --------------------------------------------------------------------------- opening


def database_url(text: str) -> tuple[str, Path | None]:
    """(SQLAlchemy URL, the SQLite file or None) of a `--gradebook` argument: a URL or a path."""
    if "://" in text:
        if text.startswith("sqlite:///"):
            name = text[len("sqlite:///"):]
            return text, Path(name) if name and name != ":memory:" else None
        return text, None  # another database server: nbgrader's business
    path = Path(text).expanduser().resolve()
    return f"sqlite:///{path}", path


def _course_ids(url: str) -> list[str]:
    """The course ids in the database; raises GradebookError when it is no nbgrader gradebook."""
    import sqlalchemy

    engine = sqlalchemy.create_engine(url)
    try:
        with engine.connect() as connection:
            tables = set(sqlalchemy.inspect(connection).get_table_names())
            if not {"assignment", "notebook", "grade_cells", "student", "grade"} <= tables:
                raise GradebookError(f"--gradebook {url}: not an nbgrader gradebook (no nbgrader tables)")
            if "course" not in tables:
                return []
            return [row[0] for row in connection.execute(sqlalchemy.text("SELECT id FROM course"))]
    except sqlalchemy.exc.SQLAlchemyError as error:
        raise GradebookError(f"--gradebook {url}: cannot read it: {str(error).splitlines()[0]}") from None
    finally:
        engine.dispose()


def open_gradebook(text: str):
    """nbgrader's Gradebook for a `--gradebook` argument; never creates a database."""
    url, path = database_url(text)
    if path is not None and not path.is_file():
        raise GradebookError(f"--gradebook {text}: no such file (create it with nbgrader, e.g. "
                             "`nbgrader generate_assignment`, in the course directory)")
    courses = _course_ids(url)
    from nbgrader.api import Gradebook

    try:
        # With the course id already stored, nbgrader adds no second course row.
        return Gradebook(url, course_id=courses[0]) if len(courses) == 1 else Gradebook(url)
    except Exception as error:  # e.g. a database of an older nbgrader: `nbgrader db upgrade`
        raise GradebookError(f"--gradebook {text}: {type(error).__name__}: {str(error).splitlines()[0]}") from None


def autograded_cells(notebook) -> list:
    return [cell for cell in notebook.grade_cells if cell.cell_type == "code" and cell.max_score]


def check_sections(text: str, section_ids: list[str]) -> None:
    """Before grading: the gradebook opens and holds every section to record, with its graded cells."""
    from nbgrader.api import MissingEntry

    gradebook = open_gradebook(text)
    try:
        for section_id in section_ids:
            try:
                notebook = gradebook.find_notebook(section_id, section_id)
            except MissingEntry:
                raise GradebookError(
                    f"--gradebook: no assignment {section_id!r} with a notebook {section_id!r} in the gradebook; "
                    f"run `nbgrader generate_assignment {section_id}` in the course directory first"
                    + ("" if len(section_ids) == 1 else ", or grade one released section with --section")) from None
            if not autograded_cells(notebook):
                raise GradebookError(f"--gradebook: notebook {section_id!r} has no autograded cells in the "
                                     f"gradebook; run `nbgrader generate_assignment {section_id} --force` first")
    finally:
        gradebook.close()


# --------------------------------------------------------------------------- writing


@dataclass
class Recorded:
    written: list[str] = field(default_factory=list)  # one line per grade written
    created: int = 0  # submissions created
    manual_kept: int = 0  # grade cells whose manual grade keeps precedence
    skipped: list[str] = field(default_factory=list)


def section_points(result: dict, section_id: str) -> tuple[float, float]:
    score = maximum = 0.0
    for test in result.get("tests", []):
        tags = test.get("tags") or []
        if tags and tags[0] == section_id:
            score += float(test.get("score", 0) or 0)
            maximum += float(test.get("max_score", 0) or 0)
    return score, maximum


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
    from autograder.sections import BY_ID
    from autograder.submission import section_file

    relative = section_file(folder, BY_ID[section_id]) if section_id in BY_ID else None
    try:
        moment = os.lstat(folder / relative).st_mtime if relative else None
    except OSError:
        return None
    return None if moment is None else datetime.fromtimestamp(moment, timezone.utc).isoformat()


def record(gradebook, student: str, section_id: str, score: float, maximum: float,
           folder: Path | None, summary: Recorded) -> None:
    """Write one student's section score (`score` of the grader's `maximum`) into the gradebook."""
    from nbgrader.api import GradeCell, MissingEntry

    gradebook.update_or_create_student(student)
    created = False
    try:
        gradebook.find_submission(section_id, student)
    except MissingEntry:
        extra = {}
        stamp, _ = submission_time(folder, section_id)
        if stamp:
            extra["timestamp"] = stamp
        with warnings.catch_warnings():
            # nbgrader's add_submission builds its rows in a way SQLAlchemy 2 comments on (SAWarning)
            warnings.simplefilter("ignore")
            try:
                gradebook.add_submission(section_id, student, **extra)
            except Exception:  # a timestamp nbgrader cannot parse: the submission without it
                if not extra:
                    raise
                gradebook.add_submission(section_id, student)
        summary.created += 1
        created = True
    notebook = gradebook.find_submission_notebook(section_id, section_id, student)
    fraction = score / maximum if maximum > 0 else 0.0
    before = notebook.score
    manual = 0
    nb_max = 0.0
    for grade in notebook.grades:
        cell = grade.cell
        if not isinstance(cell, GradeCell) or cell.cell_type != "code" or not cell.max_score:
            continue  # not an autograded grade cell (a task, a manually graded answer)
        grade.auto_score = float(cell.max_score) * fraction
        nb_max += float(cell.max_score)
        if grade.manual_score is not None:
            manual += 1
        else:
            grade.needs_manual_grade = False
    gradebook.db.commit()
    gradebook.db.refresh(notebook)
    after = notebook.score
    summary.manual_kept += manual
    line = (f"{section_id} {student}: {score:g}/{maximum:g} -> {after:.4g}/{nb_max:g} in nbgrader"
            + (" (new submission)" if created else f" (was {before:.4g})" if abs(before - after) > 1e-9 else ""))
    if manual:
        line += f" ({manual} manual grade(s) kept: they take precedence)"
    summary.written.append(line)


def record_results(text: str, results: dict[str, dict], folders: dict[str, Path], section_ids: list[str],
                   log=None) -> Recorded:
    """Record every student's score of each of `section_ids` (results: student -> results.json)."""
    from autograder.sections import BY_ID
    from autograder.submission import section_file

    log = log or (lambda line: print(line, file=sys.stderr))
    summary = Recorded()
    gradebook = open_gradebook(text)
    try:
        for student in sorted(results):
            result = results[student]
            extra = result.get("extra_data") or {}
            if extra.get("grader_errors"):
                summary.skipped.append(f"{student}: grader error, nothing recorded (grade again first)")
                continue
            graded = extra.get("sections") or section_ids
            for section_id in section_ids:
                folder = folders.get(student)
                if section_id not in graded:
                    summary.skipped.append(f"{section_id} {student}: not graded in this result")
                    continue
                if folder is not None and section_file(folder, BY_ID[section_id]) is None:
                    summary.skipped.append(f"{section_id} {student}: no notebook handed in, nothing recorded")
                    continue
                score, maximum = section_points(result, section_id)
                record(gradebook, student, section_id, score, maximum, folder, summary)
    finally:
        gradebook.close()
    for line in summary.written:
        log(f"gradebook: {line}")
    for line in summary.skipped:
        log(f"gradebook: skipped {line}")
    print(f"gradebook: {len(summary.written)} section score(s) written, {summary.created} submission(s) "
          f"created, {summary.manual_kept} manual grade(s) kept, {len(summary.skipped)} skipped ({text})")
    return summary
