"""Feedback nbgrader will not hand back: the sections graded from a file under another name.

The grader takes a section from a notebook under another name or in a subfolder by its cells
(core/matching: `Untitled.ipynb`, `work/02_softmax.ipynb`), and grades it. nbgrader cannot follow:
its feedback page is made from the autograded notebook of the section's own name, and
`nbgrader fetch_feedback` looks for the page of each notebook the student submitted, by that
notebook's name and content. The student whose file had another name gets no page, and nbgrader
says nothing or "Could not find feedback for '.../Untitled'". So the batch names each such
student and section, one line each with what to do, and the class report lists them: their
`--report` page (feedback/<student>/report.html) is the feedback that reaches them.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autograder.core.matching import shown_name
from autograder.core.sections import BY_ID
from autograder.feedback.formats import terminal_text
from autograder.i18n import _, _f
from autograder.instructor.student_files import Stored, student_paths

COLUMNS = ["student", "section", "file", "notebook"]


@dataclass(frozen=True)
class Unreached:
    """A section nbgrader will not hand back: the student, the section, the file it was graded from
    and the name nbgrader knows it by."""
    student: str
    section: str
    file: str
    notebook: str


def unreached(results: dict[str, Stored]) -> list[Unreached]:
    """Every section of `results` graded from a file that is not under the section's own name."""
    found = []
    for student in sorted(results):
        for section in results[student].grade.sections:
            if section.handed_in_as:
                notebook = BY_ID[section.id].notebook if section.id in BY_ID else section.id
                found.append(Unreached(student, section.id, shown_name(section.handed_in_as), notebook))
    return found


def nbgrader_course(submitted: Path, gradebook: str | None) -> bool:
    """Whether the class comes through nbgrader (its feedback pages are how feedback goes back):
    `--gradebook` given, or SUBMITTED_DIR is an nbgrader course folder or its submitted/ folder."""
    if gradebook is not None:
        return True
    course = submitted if (submitted / "submitted").is_dir() else submitted.parent
    return any((course / name).is_file() for name in ("nbgrader_config.py", "gradebook.db"))


def advice(item: Unreached, out: Path, reports: bool) -> str:
    """One line: who, which section, and what to do."""
    page = out / student_paths(item.student)["feedback"] / "report.html"
    hand = (_f("hand them {page}", page=page) if reports
            else _("run the batch with --report and hand them the page it writes"))
    return _f("feedback: {student} {section}: graded from {file}, not {notebook}, so nbgrader's fetch_feedback "
              "will not find its page; {hand}, or ask them to name it {notebook} and submit again",
              student=terminal_text(item.student), section=item.section, file=repr(item.file),
              notebook=item.notebook, hand=hand)


def say_unreached(results: dict[str, Stored], out: Path, reports: bool, say=print) -> int:
    """The batch's lines, one per section nbgrader will not hand back; returns how many."""
    items = unreached(results)
    for item in items:
        say(advice(item, out, reports))
    return len(items)


def unreached_table(results: dict[str, Stored]):
    """The class report's table of them."""
    import pandas as pd

    return pd.DataFrame([vars(item) for item in unreached(results)], columns=COLUMNS)


def heading() -> str:
    return _("Feedback nbgrader will not hand back (graded from a file under another name): hand back their "
             "report instead")
