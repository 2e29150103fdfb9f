"""The class table, DIR/grades.csv and DIR/grades.md, made from the students' stored grades (and
DIR/index.json, which names each student's files: student_files.write_index).

One row per student: a column per section assigned so far, the total, the maximum, the status
(which says, as section ids, the sections the student did not hand in), the sandbox tier and when
the student last handed in a file that was graded (`handed_in`: a resubmission's time, once graded). An id that a spreadsheet would take for a formula (e.g. "=1+1") is written "'=1+1".
"""
from __future__ import annotations

from pathlib import Path

from autograder.core.extract import TAMPERING, TOO_BIG, UNREADABLE
from autograder.core.files import spreadsheet_safe, write_atomically
from autograder.i18n import N_, _, _f
from autograder.instructor.roster import files_status
from autograder.instructor.student_files import HANDED_IN, Stored, write_index
from autograder.instructor.submission_time import as_utc
from autograder.instructor.term import assigned_sections

GRADES = "grades.csv"
GRADES_MARKDOWN = "grades.md"


def section_scores(stored: Stored) -> dict[str, float]:
    """{section id: points} of the sections the student's grade holds (none for a section it lacks)."""
    scores: dict[str, float] = {}
    for section in stored.grade.sections:
        scores[section.id] = scores.get(section.id, 0.0) + section.score
    return scores


def last_handed_in(stored: Stored) -> str:
    """When the student handed in the newest of the files their grade's sections were graded from
    (ISO 8601, UTC, to the second; "" when no time is known)."""
    held = {section.id for section in stored.grade.sections}
    times = [as_utc(entry[HANDED_IN]) for section_id, entry in stored.graded.items()
             if section_id in held and entry.get(HANDED_IN)]
    times = [moment for moment in times if moment is not None]
    return max(times).isoformat(timespec="seconds") if times else ""


def not_handed_in(stored: Stored) -> list[str]:
    """The ids of the sections the student did not hand in: every check of each failed for that reason."""
    return [section.id for section in stored.grade.sections if section.not_handed_in]


# the words of a refusal's reason (extract.REFUSALS) in grades.csv's status and in "who needs help"
REFUSAL_WORDS = {TOO_BIG: N_("notebook too big"), UNREADABLE: N_("unreadable notebook"), TAMPERING: N_("tampering")}


def refused(stored: Stored) -> list[tuple[str, str]]:
    """[(section id, why: one of extract.REFUSALS)] of the sections the grader refused to grade."""
    return [(section.id, section.refused) for section in stored.grade.sections if section.refused]


def refused_words(stored: Stored) -> str:
    """The refused sections and why, in the reader's language: "02_softmax (notebook too big)"."""
    return ", ".join(_f("{section} ({why})", section=section_id, why=_(REFUSAL_WORDS[why]))
                     for section_id, why in refused(stored))


def status_of(stored: Stored) -> str:
    """grades.csv's status, in the batch's language: "grader error"; "refused: " with each section the
    grader refused and why (a notebook too big, unreadable, or reaching into the grader: never
    "graded", its zero is no grade of the work); else "graded". Then ", not handed in: " with the ids
    of the sections missing, space-separated (e.g. "graded, not handed in: 03_trainable_qkv
    04_causal_mask"), and how the student's files were found where not by their names
    (roster.files_status), each after "; "."""
    if stored.grader_errors:
        return _("grader error")
    status = _f("refused: {sections}", sections=refused_words(stored)) if refused(stored) else _("graded")
    missing = not_handed_in(stored)
    if missing:
        status = _f("{status}, not handed in: {sections}", status=status, sections=" ".join(missing))
    return status + "".join(f"; {part}" for part in files_status(stored.grade.sections))


def class_table(results: dict[str, Stored]):
    """One row per student; a column per section assigned so far (term.assigned_sections), and no
    column for a section never assigned. A batch grades every student of the folder for each section
    assigned (term.the_class); only `merge` of folders of different sections can leave a student
    without a grade of one: their cell is empty, their total and maximum those of their grade."""
    import pandas as pd

    section_ids = assigned_sections(results.values())
    rows = []
    for student in sorted(results):
        grade = results[student].grade
        row = {"student": spreadsheet_safe(student)}  # an id "=cmd()" must not run in a spreadsheet
        scores = section_scores(results[student])
        row.update({k: round(scores[k], 4) if k in scores else None for k in section_ids})
        row["total"] = round(grade.score, 4)
        row["max_score"] = round(grade.max_score, 4)
        row["status"] = status_of(results[student])
        row["sandbox"] = grade.sandbox + (" (weak)" if grade.weak else "")
        row["handed_in"] = last_handed_in(results[student])
        rows.append(row)
    columns = ["student"] + section_ids + ["total", "max_score", "status", "sandbox", "handed_in"]
    return pd.DataFrame(rows, columns=columns)


def markdown_table(table) -> str:
    """grades.csv as a Markdown table (a CI job's summary page): every cell plain text."""
    from autograder.feedback.formats import md_text

    def text(cell) -> str:  # an empty cell (a section the student has no grade of) stays empty
        return "" if isinstance(cell, float) and cell != cell else str(cell)

    def row(cells) -> str:
        return "| " + " | ".join(md_text(text(cell)) for cell in cells) + " |"

    lines = [row(table.columns), "|" + "---|" * len(table.columns)]
    lines += [row(values) for values in table.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def write_table(out: Path, results: dict[str, Stored]) -> Path:
    """DIR/grades.csv, and the same table as DIR/grades.md for a summary page."""
    path = out / GRADES
    table = class_table(results)
    write_atomically(path, table.to_csv(index=False))
    write_atomically(out / GRADES_MARKDOWN, markdown_table(table))
    write_index(out, results)  # which files are whose: the ids as given, beside the names they became
    return path
