"""The class table, DIR/grades.csv and DIR/grades.md, made from the students' stored grades.

One row per student: a column per section assigned so far, the total, the maximum, the status
and the sandbox tier. An id that a spreadsheet would take for a formula (e.g. "=1+1") is written "'=1+1".
"""
from __future__ import annotations

from pathlib import Path

from autograder.core.files import spreadsheet_safe, write_atomically
from autograder.instructor.student_files import Stored
from autograder.instructor.term import assigned_sections

GRADES = "grades.csv"
GRADES_MARKDOWN = "grades.md"


def section_scores(stored: Stored) -> dict[str, float]:
    """{section id: points} of the sections the student's grade holds (none for a section it lacks)."""
    scores: dict[str, float] = {}
    for section in stored.grade.sections:
        scores[section.id] = scores.get(section.id, 0.0) + section.score
    return scores


def status_of(stored: Stored) -> str:
    """grades.csv's status: "graded", "grader error", or "graded, flagged: tampering" for the instructor."""
    if stored.grader_errors:
        return "grader error"
    if any(check.kind == "tampering" for section in stored.grade.sections for check in section.checks):
        return "graded, flagged: tampering"
    return "graded"


def class_table(results: dict[str, Stored]):
    """One row per student; a column per section assigned so far (term.assigned_sections), and no
    column for a section never assigned. A student without a grade of an assigned section (not in
    the run that graded it) has an empty cell there; their total and maximum are those of their grade."""
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
        rows.append(row)
    columns = ["student"] + section_ids + ["total", "max_score", "status", "sandbox"]
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
    return path
