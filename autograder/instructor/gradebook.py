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
`nbgrader export` reports. The build gives each notebook's test cells the
grader's maximum of that section between them (one weighting: the points of the
section's checks), and the student's share is carried over: with `s` of `m`
points from the grader, every autograded (code) grade cell of the notebook gets
`auto_score = cell points * s / m`. Consequently

    nbgrader export's score / max_score  ==  grades.csv's section column / the section's max

and, the maxima being equal, the same points. The grades are written as
*automatic* scores: a manual grade an instructor entered in the formgrader keeps
precedence (nbgrader's rule) and is never overwritten; the summary counts them.
Cells that are not autograded code cells (manually graded answers, tasks) are
left untouched.

A bonus section (the registry's `bonus`) is extra credit, here as in grades.csv:
the build gives its test cells 0 points, so nbgrader's maximum leaves it out, and
the student's `s` points are written as the cells' `extra_credit` (shared out
evenly, automatic score 0), which nbgrader adds to the score only. nbgrader's
total is then ours: the sections' points, bonus included, over the core maximum.

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

The autograded notebook, for `nbgrader generate_feedback` and the formgrader
-----------------------------------------------------------------------------
For every section score recorded, the student's notebook is also written where
nbgrader's own `autograde` would leave it, `COURSE/autograded/<student>/<section>/<section>.ipynb`
(COURSE: the folder holding the students' `submitted/` folder, else the gradebook
file's folder). Its autograded test cells carry the grader's results as their
outputs: the section's score, its notes and every check with its points and, when
it failed, its message, all under the first test cell (a pointer under the
others), since the hidden checks are not one per cell. With the submission, its
grades and its comments already in the gradebook (`add_submission` creates a grade
per graded cell and a comment per answer cell), `nbgrader generate_feedback
<section>` then writes `feedback/<student>/<section>/<section>.html` with the
scores and those messages, and `nbgrader release_feedback` hands it back. An
instructor's comments typed in the formgrader are never touched.

A notebook is the student's file, so it is rebuilt rather than copied, because
the feedback page renders it as HTML: the outputs the student saved are dropped
(the grader's are plain-text stream outputs, which nbconvert escapes); each
cell's nbgrader metadata, and the source of every locked cell, come from the
gradebook (as nbgrader's autograde restores them); a Markdown cell is rendered
only when it is one of the instructor's (the released notebook's, or a locked
cell), any other one is shown as text in a fenced block; a graded cell the
student deleted comes back from the gradebook so that its score shows. A file
that is not a notebook gives a notebook of the gradebook's cells, with the
grader's message saying why.

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

from autograder.core.files import Refused, lexists_inside, read_inside
from autograder.core.sections import is_bonus
from autograder.core.submission import UsageError


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
    """The notebook's autograded (code) grade cells: those with points, and in a bonus section's
    notebook the test cells, which carry 0 points (their points are extra credit)."""
    bonus = is_bonus(notebook.name)
    return [cell for cell in notebook.grade_cells if cell.cell_type == "code" and (cell.max_score or bonus)]


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
    autograded: list[str] = field(default_factory=list)  # autograded notebooks written


def section_points(result: dict, section_id: str) -> tuple[float, float]:
    from autograder.core.results import check_max_points

    score = maximum = 0.0
    for test in result.get("tests", []):
        tags = test.get("tags") or []
        if tags and tags[0] == section_id:
            score += float(test.get("score", 0) or 0)
            maximum += check_max_points(test)  # a bonus check's own points (its max_score is 0)
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
    from autograder.core.sections import BY_ID
    from autograder.core.submission import section_file

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
    bonus = is_bonus(section_id)  # its points go to nbgrader's extra credit, not to the score
    before = notebook.score
    manual = 0
    nb_max = 0.0
    graded = [grade for grade in notebook.grades if isinstance(grade.cell, GradeCell)
              and grade.cell.cell_type == "code" and (grade.cell.max_score or bonus)]
    for grade in graded:  # not a task or a manually graded answer: those are left alone
        cell = grade.cell
        if bonus:  # 0-point test cells: nbgrader's score is auto score + extra credit, its maximum stays 0
            grade.auto_score, grade.extra_credit = 0.0, score / len(graded)
        else:
            grade.auto_score = float(cell.max_score) * fraction
        nb_max += float(cell.max_score or 0)
        if grade.manual_score is not None:
            manual += 1
        else:
            grade.needs_manual_grade = False
    gradebook.db.commit()
    gradebook.db.refresh(notebook)
    after = notebook.score
    summary.manual_kept += manual
    line = (f"{section_id} {student}: {score:g}/{maximum:g} -> {after:.4g}/{nb_max:g} in nbgrader"
            + (" (bonus: as extra credit)" if bonus else "")
            + (" (new submission)" if created else f" (was {before:.4g})" if abs(before - after) > 1e-9 else ""))
    if manual:
        line += f" ({manual} manual grade(s) kept: they take precedence)"
    summary.written.append(line)


def record_results(text: str, results: dict[str, dict], folders: dict[str, Path], section_ids: list[str],
                   log=None) -> Recorded:
    """Record every student's score of each of `section_ids` (results: student -> results.json)."""
    from autograder.core.sections import BY_ID
    from autograder.core.submission import section_file

    log = log or (lambda line: print(line, file=sys.stderr))
    summary = Recorded()
    course = course_directory(text, folders)
    if course is None:
        summary.skipped.append("autograded notebooks: no course directory (grade nbgrader's submitted/ folder "
                               "or give --gradebook as the path of the course's gradebook.db)")
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
                if course is not None:
                    write_autograded(gradebook, course, student, section_id, result, folder, summary)
    finally:
        gradebook.close()
    for line in summary.written:
        log(f"gradebook: {line}")
    for line in summary.skipped:
        log(f"gradebook: skipped {line}")
    print(f"gradebook: {len(summary.written)} section score(s) written, {summary.created} submission(s) "
          f"created, {summary.manual_kept} manual grade(s) kept, {len(summary.skipped)} skipped ({text})")
    if summary.autograded:
        print(f"gradebook: {len(summary.autograded)} autograded notebook(s) written in "
              f"{course / AUTOGRADED}; next: `nbgrader generate_feedback` in {course}")
    return summary


# --------------------------------------------------------------------------- the autograded notebook

AUTOGRADED = "autograded"  # nbgrader's CourseDirectory.autograded_directory (the course's nbgrader_config.py)
RELEASE = "release"


def course_directory(text: str, folders: dict[str, Path]) -> Path | None:
    """nbgrader's course directory: the parent of the students' submitted/ folder, else the gradebook file's folder."""
    for folder in folders.values():
        if folder is not None and folder.parent.name == "submitted":
            return folder.parent.parent
    _, path = database_url(text)
    return path.parent if path is not None else None


def folder_name(student: str) -> str | None:
    """`student` as one folder name under autograded/, or None when it cannot be one."""
    if student in ("", ".", "..") or any(c in student for c in "/\\\0") or student != student.strip("\n"):
        return None
    return student


def _source(cell) -> str:
    """A cell's source as text, whatever shape the student's file gave it."""
    source = cell.get("source", "") if isinstance(cell, dict) else ""
    if isinstance(source, list):
        source = "".join(part for part in source if isinstance(part, str))
    return source if isinstance(source, str) else ""


def as_plain_markdown(text: str) -> str:
    """Student text in a Markdown cell, shown as itself: a fenced block, which Markdown never interprets
    (the feedback page renders Markdown cells as HTML, and a student's cell could hold a script)."""
    from autograder.feedback.formats import fenced, plain_text

    return "\n".join(fenced(plain_text(text)))


def _read_notebook(root: Path, relative: str | None, limit: int = 16 * 1024 * 1024):
    """The notebook `root/relative` (read without following links) or None when it is not one."""
    import nbformat

    if not relative or not relative.endswith(".ipynb"):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # nbformat's comments on an old or odd notebook
            notebook = nbformat.reads(read_inside(root, relative, limit=limit).decode("utf-8"), as_version=4)
    except Exception:  # not UTF-8, not JSON, not a notebook, a link: the grader said why; cells come from the gradebook
        return None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    return notebook if isinstance(cells, list) else None


def released_markdown(course: Path, section_id: str) -> set[str]:
    """The instructor's Markdown cells of the released notebook: shown rendered; any other is the student's."""
    released = _read_notebook(course, f"{RELEASE}/{section_id}/{section_id}.ipynb")
    if released is None:
        return set()
    return {_source(c) for c in released.cells if isinstance(c, dict) and c.get("cell_type") == "markdown"}


def _nbgrader_metadata(name: str, cells: dict) -> dict:
    """The cell's nbgrader metadata as the gradebook has it (the student's copy is never trusted)."""
    grade = cells["grade"].get(name)
    metadata = {"grade": grade is not None, "grade_id": name, "locked": bool(cells["source"][name].locked),
                "schema_version": 3, "solution": name in cells["solution"], "task": name in cells["task"]}
    if grade is not None or name in cells["task"]:
        metadata["points"] = float((grade or cells["task"][name]).max_score or 0)
    return metadata


def _gradebook_cells(notebook) -> dict:
    return {"source": {c.name: c for c in notebook.source_cells},
            "grade": {c.name: c for c in notebook.grade_cells},
            "solution": {c.name for c in notebook.solution_cells},
            "task": {c.name: c for c in notebook.task_cells}}


def _trusted_cell(name: str, student_source: str | None, cells: dict):
    """The cell `name` of the gradebook, with the student's source where the cell was theirs to write."""
    import nbformat

    stored = cells["source"][name]
    source = (stored.source or "") if stored.locked or student_source is None else student_source
    if stored.cell_type == "markdown":
        # an unlocked Markdown answer is the student's text: shown as text, never rendered
        cell = nbformat.v4.new_markdown_cell(source if stored.locked else as_plain_markdown(source))
    else:
        cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = _nbgrader_metadata(name, cells)
    return cell


def rebuilt_cells(submitted, cells: dict, known_markdown: set[str]) -> list:
    """The student's cells made safe to render: outputs dropped (they are whatever the student saved),
    nbgrader metadata and locked cells from the gradebook, Markdown not the instructor's shown as text.
    Graded cells the student deleted come back from the gradebook at the end, so every score shows."""
    import nbformat

    rebuilt, used = [], set()
    for cell in submitted.cells if submitted is not None else []:
        if not isinstance(cell, dict):
            continue
        meta = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
        nbgrader = meta.get("nbgrader") if isinstance(meta.get("nbgrader"), dict) else {}
        name = nbgrader.get("grade_id")
        if isinstance(name, str) and name in cells["source"] and name not in used:
            used.add(name)
            rebuilt.append(_trusted_cell(name, _source(cell), cells))
        elif cell.get("cell_type") == "code":
            rebuilt.append(nbformat.v4.new_code_cell(_source(cell)))
        elif cell.get("cell_type") == "markdown" and _source(cell) in known_markdown:
            rebuilt.append(nbformat.v4.new_markdown_cell(_source(cell)))
        elif _source(cell).strip():  # a student's Markdown or raw cell
            rebuilt.append(nbformat.v4.new_markdown_cell(as_plain_markdown(_source(cell))))
    graded = set(cells["grade"]) | set(cells["solution"]) | set(cells["task"])
    for name in cells["source"]:
        if name in graded and name not in used:
            rebuilt.append(_trusted_cell(name, None, cells))
    return rebuilt


def section_feedback(result: dict, section_id: str) -> list[str]:
    """The grader's notes and per-check results of one section, as plain lines."""
    from autograder.feedback.formats import plain_text
    from autograder.core.results import check_max_points, notes_from_output

    notes = notes_from_output(str(result.get("output") or "")).get(section_id, [])
    lines = [f"note: {plain_text(note.strip())}" for note in notes]
    prefix = f"{section_id}: "
    for test in result.get("tests", []):
        tags = test.get("tags") or []
        if not tags or tags[0] != section_id:
            continue
        name = str(test.get("name", ""))
        name = name[len(prefix):] if name.startswith(prefix) else name
        score, maximum = float(test.get("score", 0) or 0), check_max_points(test)  # a bonus check's own points
        mark = "passed" if score >= maximum else "FAILED"
        lines.append(f"{mark}: {plain_text(name)} ({score:g} / {maximum:g})")
        message = plain_text(test.get("output") or "").strip("\n")
        lines += [f"    {line}" for line in message.splitlines()] if score < maximum and message else []
    return lines


def _stream(text: str):
    import nbformat

    # a stream output is plain text: nbconvert and the formgrader escape it, whatever the student wrote
    return nbformat.v4.new_output("stream", name="stdout", text=text)


def attach_feedback(cells: list, result: dict, section_id: str) -> str | None:
    """The grader's results as the outputs of the autograded cells: all of them under the first,
    a pointer to it under the others. Returns the first one's grade_id (None if there is none)."""
    bonus = is_bonus(section_id)  # a bonus section's test cells carry 0 points (extra credit)
    graded = [c for c in cells if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("grade")
              and (c.metadata["nbgrader"].get("points") or bonus)]
    if not graded:
        return None
    score, maximum = section_points(result, section_id)
    head = (f"The course's hidden checks of {section_id}: {score:g} / {maximum:g} points. "
            + ("This section is a bonus: its points are extra credit, shared out over the test cells of this "
               "notebook, which count for 0 points (they add to your score, not to the maximum)." if bonus else
               "Each test cell of this notebook gets that fraction of its points."))
    first = graded[0].metadata["nbgrader"]["grade_id"]
    for index, cell in enumerate(graded):
        text = [head] + (section_feedback(result, section_id) if index == 0
                         else [f"The checks and their messages are under test cell {first}."])
        cell.outputs = [_stream("\n".join(text) + "\n")]
    return first


def autograded_notebook(notebook, folder: Path | None, section_id: str, result: dict, known_markdown: set[str]):
    """nbgrader's autograded copy of the student's notebook, with the grader's results in it."""
    import nbformat

    from autograder.core.sections import BY_ID
    from autograder.core.submission import section_file

    relative = section_file(folder, BY_ID[section_id]) if folder is not None and section_id in BY_ID else None
    submitted = _read_notebook(folder, relative) if relative else None
    cells = rebuilt_cells(submitted, _gradebook_cells(notebook), known_markdown)
    attach_feedback(cells, result, section_id)
    built = nbformat.v4.new_notebook(cells=cells)
    built.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    built.metadata["language_info"] = {"name": "python"}
    return built


def write_autograded(gradebook, course: Path, student: str, section_id: str, result: dict,
                     folder: Path | None, summary: Recorded) -> None:
    """Write autograded/<student>/<section>/<section>.ipynb, which generate_feedback and the formgrader read."""
    import nbformat

    from autograder.core.files import write_atomically

    name = folder_name(student)
    if name is None:
        summary.skipped.append(f"{section_id} {student!r}: no autograded notebook (the name cannot be a folder name)")
        return
    notebook = gradebook.find_notebook(section_id, section_id)
    built = autograded_notebook(notebook, folder, section_id, result, released_markdown(course, section_id))
    target = course / AUTOGRADED / name / section_id / f"{section_id}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomically(target, nbformat.writes(built))
    summary.autograded.append(str(target))
