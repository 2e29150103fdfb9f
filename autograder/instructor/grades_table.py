"""The class table, DIR/grades.csv and DIR/grades.md, made from the students' stored grades (and
DIR/index.json, which names each student's files: student_files.write_index).

One row per student: a column per graded section, the total, the maximum, the status and the
sandbox tier. An id that a spreadsheet would take for a formula (e.g. "=1+1") is written "'=1+1".
"""
from __future__ import annotations

from pathlib import Path

from autograder.core.files import spreadsheet_safe, write_atomically
from autograder.core.sections import SECTIONS
from autograder.instructor.roster import files_status
from autograder.instructor.student_files import Stored, write_index

GRADES = "grades.csv"
GRADES_MARKDOWN = "grades.md"


def section_scores(stored: Stored) -> dict[str, float]:
    scores = {section.id: 0.0 for section in SECTIONS}
    for section in stored.grade.sections:
        if section.id in scores:
            scores[section.id] += section.score
    return scores


def status_of(stored: Stored) -> str:
    """grades.csv's status: "graded", "grader error", or "graded, flagged: tampering" for the instructor;
    after "graded", how the student's files were found where not by their names (roster.files_status)."""
    if stored.grader_errors:
        return "grader error"
    # how the files were found (roster.files_status): a section under another name, or not found at all
    found = "".join(f"; {part}" for part in files_status(stored.grade.sections))
    if any(check.kind == "tampering" for section in stored.grade.sections for check in section.checks):
        return "graded, flagged: tampering" + found
    return "graded" + found


def class_table(results: dict[str, Stored]):
    import pandas as pd

    graded = set()
    for stored in results.values():
        graded.update(stored.sections or [s.id for s in SECTIONS])
    section_ids = [s.id for s in SECTIONS if s.id in graded] or [s.id for s in SECTIONS]
    rows = []
    for student in sorted(results):
        grade = results[student].grade
        row = {"student": spreadsheet_safe(student)}  # an id "=cmd()" must not run in a spreadsheet
        scores = section_scores(results[student])
        row.update({k: round(scores[k], 4) for k in section_ids})
        row["total"] = round(grade.score, 4)
        row["max_score"] = round(grade.max_score, 4)
        row["status"] = status_of(results[student])
        row["sandbox"] = grade.sandbox + (" (weak)" if grade.weak else "")
        rows.append(row)
    columns = ["student"] + section_ids + ["total", "max_score", "status", "sandbox"]
    return pd.DataFrame(rows, columns=columns)


def markdown_table(table) -> str:
    """grades.csv as a Markdown table (a CI job's summary page): every cell plain text."""
    from autograder.feedback.formats import md_text

    def row(cells) -> str:
        return "| " + " | ".join(md_text(str(cell)) for cell in cells) + " |"

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
