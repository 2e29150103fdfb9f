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
section's checks), each test cell `test_<name>` the points of the checks about
`<name>`, and each cell gets what the grader gave those checks
(instructor/cell_scores.py): a failed function's cell 0, a correct one all its
points. Consequently

    nbgrader export's score / max_score  ==  grades.csv's section column / the section's max

and, the maxima being equal, the same points. The grades are written as
*automatic* scores: a manual grade an instructor entered in the formgrader keeps
precedence (nbgrader's rule) and is never overwritten; the summary counts them.
Cells that are not autograded code cells (manually graded answers, tasks) are
left untouched.

A bonus section (the registry's `bonus`) is extra credit, here as in grades.csv:
the build gives its test cells 0 points, so nbgrader's maximum leaves it out, and
the student's points are written as the cells' `extra_credit` (each cell its
checks' points, automatic score 0), which nbgrader adds to the score only. nbgrader's
total is then ours: the sections' points, bonus included, over the core maximum.

What is created: the student (`update_or_create_student`, names untouched) and
the submission when it does not exist yet (`add_submission`, with the time the
file graded was handed in: its provenance, instructor/submission_time.py). An
existing submission's time moves to a resubmission's, so nbgrader's lateness
follows the file graded. Nothing else is
created: a section whose assignment is not in the gradebook yet is named before
any grading and not recorded (release it with nbgrader to record it); a gradebook
that holds none of the sections graded, a gradebook file that does not exist or
is not an nbgrader database (nbgrader would silently create an empty one) is an
error raised before any grading.

With each section score recorded, the student's autograded notebook is written
for `nbgrader generate_feedback` (instructor/autograded.py), with the two files
nbgrader's feedback steps read beside it (instructor/exchange_files.py) and the
mark that tells the next batch whether nbgrader's own autograde wrote over it
since (instructor/autograded_mark.py: its scores then stand, unless --force). The scores and
messages come from each student's stored grade (instructor/student_files.py),
never from the results.json rendered beside it.

Not recorded, and said so: students with a grader error (their zero is a
placeholder, not a grade) and sections a student did not hand in (no submission
is invented for them; an existing one is left as it is).
"""
from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from autograder.core.results import SectionResult
from autograder.core.sections import BY_ID, is_bonus
from autograder.core.submission import UsageError, section_file
from autograder.i18n import _, _f
from autograder.instructor.autograded import AUTOGRADED, folder_name, write_autograded
from autograder.instructor.autograded_mark import written_by_another
from autograder.instructor.cell_scores import cell_shares
from autograder.instructor.student_files import HANDED_IN, Stored
from autograder.instructor.submission_time import submission_time

logger = logging.getLogger(__name__)


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


def course_directory(text: str, folders: dict[str, Path]) -> Path | None:
    """nbgrader's course directory: the parent of the students' submitted/ folder, else the gradebook file's folder."""
    for folder in folders.values():
        if folder is not None and folder.parent.name == "submitted":
            return folder.parent.parent
    _, path = database_url(text)
    return path.parent if path is not None else None


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


def check_sections(text: str, section_ids: list[str]) -> list[str]:
    """Before grading: the gradebook opens, and which of `section_ids` it holds (each an assignment of
    that name with its notebook and graded cells): those are recorded, the others named as skipped.
    GradebookError when it holds none of them, or holds one without graded cells."""
    from nbgrader.api import MissingEntry

    present = []
    gradebook = open_gradebook(text)
    try:
        for section_id in section_ids:
            try:
                notebook = gradebook.find_notebook(section_id, section_id)
            except MissingEntry:
                continue
            if not autograded_cells(notebook):
                raise GradebookError(f"--gradebook: notebook {section_id!r} has no autograded cells in the "
                                     f"gradebook; run `nbgrader generate_assignment {section_id} --force` first")
            present.append(section_id)
    finally:
        gradebook.close()
    if not present:
        first = section_ids[0]
        raise GradebookError(f"--gradebook: no assignment {first!r} with a notebook {first!r} in the gradebook"
                             + ("" if len(section_ids) == 1 else " (nor of any other section graded)")
                             + f"; run `nbgrader generate_assignment {first}` in the course directory first")
    skipped = [section_id for section_id in section_ids if section_id not in present]
    if skipped:
        logger.warning(_f("gradebook: not in the gradebook, so not recorded: {sections} (release them with "
                          "`nbgrader generate_assignment` to record them)", sections=", ".join(skipped)))
    return present


# --------------------------------------------------------------------------- writing


@dataclass
class Recorded:
    written: list[str] = field(default_factory=list)  # one line per grade written
    created: int = 0  # submissions created
    manual_kept: int = 0  # grade cells whose manual grade keeps precedence
    skipped: list[str] = field(default_factory=list)
    autograded: list[str] = field(default_factory=list)  # autograded notebooks written
    kept: list[str] = field(default_factory=list)  # sections whose scores nbgrader's autograde wrote after ours


def section_of(stored: Stored, section_id: str) -> SectionResult:
    """The section of a stored grade (an empty one, 0 of 0 points, where the grade has none)."""
    found = [section for section in stored.grade.sections if section.id == section_id]
    return found[0] if found else SectionResult(section_id, BY_ID[section_id].title if section_id in BY_ID else "")


def add_submission(gradebook, student: str, section_id: str, folder: Path | None, handed: str | None = None) -> str:
    """Create the student's submission of the section if there is none yet ("created"), or move an
    existing one's time to a resubmission's ("moved"; else ""). `handed`: when the file graded was
    handed in (its provenance), else the time submission_time gives the folder now."""
    from nbgrader.api import MissingEntry
    from nbgrader.utils import parse_utc

    stamp = handed or submission_time(folder, section_id)[0]
    try:
        submission = gradebook.find_submission(section_id, student)
    except MissingEntry:
        submission = None
    if submission is not None:
        try:
            moment = parse_utc(stamp) if stamp else None
        except (ValueError, OverflowError):  # a time nbgrader cannot read: the submission's stays
            moment = None
        if moment is None or submission.timestamp == moment:
            return ""
        submission.timestamp = moment  # the resubmission's time: nbgrader's lateness follows it
        gradebook.db.commit()
        return "moved"
    extra = {"timestamp": stamp} if stamp else {}
    with warnings.catch_warnings():
        # nbgrader's add_submission builds its rows in a way SQLAlchemy 2 comments on (SAWarning)
        warnings.simplefilter("ignore")
        try:
            gradebook.add_submission(section_id, student, **extra)
        except Exception:  # a timestamp nbgrader cannot parse: the submission without it
            if not extra:
                raise
            gradebook.add_submission(section_id, student)
    return "created"


def record(gradebook, student: str, section: SectionResult, folder: Path | None, summary: Recorded,
           handed: str | None = None) -> None:
    """Write one student's section into the gradebook: each test cell what the grader gave the checks
    about its graded name (instructor/cell_scores.py), the section's score in all; the submission's
    time that of the file graded (`handed`)."""
    from nbgrader.api import GradeCell

    section_id, score, maximum = section.id, section.score, section.max_score
    gradebook.update_or_create_student(student)
    submission = add_submission(gradebook, student, section_id, folder, handed)
    created = submission == "created"
    summary.created += created
    notebook = gradebook.find_submission_notebook(section_id, section_id, student)
    bonus = is_bonus(section_id)  # its points go to nbgrader's extra credit, not to the score
    before = notebook.score
    manual = 0
    nb_max = 0.0
    graded = [grade for grade in notebook.grades if isinstance(grade.cell, GradeCell)
              and grade.cell.cell_type == "code" and (grade.cell.max_score or bonus)]
    shares = cell_shares(section, [(grade.cell.name, float(grade.cell.max_score or 0)) for grade in graded], bonus)
    for grade in graded:  # not a task or a manually graded answer: those are left alone
        # a bonus section's 0-point cells: nbgrader's score is auto score + extra credit, its maximum stays 0
        grade.auto_score = shares[grade.cell.name].points
        if bonus:
            grade.extra_credit = shares[grade.cell.name].extra
        nb_max += float(grade.cell.max_score or 0)
        if grade.manual_score is not None:
            manual += 1
        else:
            grade.needs_manual_grade = False
    gradebook.db.commit()
    gradebook.db.refresh(notebook)
    after = notebook.score
    summary.manual_kept += manual
    # the line, then each remark that applies, in the batch's language (each a template of its own)
    line = _f("{section} {student}: {score:g}/{maximum:g} -> {after:.4g}/{nb_max:g} in nbgrader", section=section_id,
              student=student, score=score, maximum=maximum, after=after, nb_max=nb_max)
    remarks = [_("bonus: as extra credit")] if bonus else []
    if created:
        remarks.append(_("new submission"))
    elif abs(before - after) > 1e-9:
        remarks.append(_f("was {before:.4g}", before=before))
    if submission == "moved":
        remarks.append(_f("handed in again: {time}", time=handed))
    if manual:
        remarks.append(_f("{count} manual grade(s) kept: they take precedence", count=manual))
    for remark in remarks:
        line = _f("{line} ({remark})", line=line, remark=remark)
    summary.written.append(line)


def autograded_by_another(course: Path | None, student: str, section_id: str) -> bool:
    """Whether the student's autograded notebook of the section was written after this grader's, by
    nbgrader's autograde or a person (instructor/autograded_mark.py): then its scores stand."""
    name = folder_name(student)
    if course is None or name is None:
        return False
    return written_by_another(course / AUTOGRADED / name / section_id, section_id)


def record_section(gradebook, course: Path | None, student: str, section: SectionResult, folder: Path | None,
                   summary: Recorded, force: bool = False, handed: str | None = None) -> None:
    """One student's section: its score in the gradebook, and the autograded notebook in the course;
    neither where nbgrader's autograde wrote them after this grader, unless `force`."""
    if not force and autograded_by_another(course, student, section.id):
        summary.kept.append(f"{section.id} {student}")
        return
    record(gradebook, student, section, folder, summary, handed)
    if course is None:
        return
    written = write_autograded(gradebook, course, student, section, folder)
    if written is None:
        summary.skipped.append(_f("{section} {student}: no autograded notebook (the name cannot be a folder name)",
                                  section=section.id, student=repr(student)))
    else:
        summary.autograded.append(str(written))


def record_student(gradebook, course: Path | None, student: str, stored: Stored, folder: Path | None,
                   section_ids: list[str], summary: Recorded, force: bool = False) -> None:
    """Every section of `section_ids` that the student's stored grade holds and that was handed in."""
    if stored.grader_errors:
        summary.skipped.append(_f("{student}: grader error, nothing recorded (grade again first)", student=student))
        return
    graded = [section.id for section in stored.grade.sections]
    for section_id in section_ids:
        if section_id not in graded:
            summary.skipped.append(_f("{section} {student}: not graded in this result", section=section_id,
                                      student=student))
        elif folder is not None and section_file(folder, BY_ID[section_id]) is None:
            summary.skipped.append(_f("{section} {student}: no notebook handed in, nothing recorded",
                                      section=section_id, student=student))
        else:
            record_section(gradebook, course, student, section_of(stored, section_id), folder, summary, force,
                           stored.graded.get(section_id, {}).get(HANDED_IN))


def record_results(text: str, results: dict[str, Stored], folders: dict[str, Path], section_ids: list[str],
                   log=None, force: bool = False) -> Recorded:
    """Record every student's score of each of `section_ids` (results: student -> their stored grade);
    with `force`, also over the scores nbgrader's autograde wrote after this grader's."""
    log = log or logger.info
    summary = Recorded()
    course = course_directory(text, folders)
    if course is None:
        summary.skipped.append(_("autograded notebooks: no course directory (grade nbgrader's submitted/ folder "
                                 "or give --gradebook as the path of the course's gradebook.db)"))
    gradebook = open_gradebook(text)
    try:
        for student in sorted(results):
            record_student(gradebook, course, student, results[student], folders.get(student), section_ids, summary,
                           force)
    finally:
        gradebook.close()
    for line in summary.written:
        log(_f("gradebook: {line}", line=line))
    for line in summary.skipped:
        log(_f("gradebook: skipped {line}", line=line))
    print(_f("gradebook: {written} section score(s) written, {created} submission(s) created, {kept} manual "
             "grade(s) kept, {skipped} skipped ({text})", written=len(summary.written), created=summary.created,
             kept=summary.manual_kept, skipped=len(summary.skipped), text=text))
    if summary.kept:
        print(_f("gradebook: kept the scores nbgrader's autograde wrote after this grader's for {count} section(s) "
                 "({which}); give --force to replace them with this grader's", count=len(summary.kept),
                 which=", ".join(summary.kept)))
    if summary.autograded:
        print(_f("gradebook: {count} autograded notebook(s) written in {folder}; next: `nbgrader generate_feedback` "
                 "in {course}", count=len(summary.autograded), folder=course / AUTOGRADED, course=course))
    return summary
