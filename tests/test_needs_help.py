"""The class report's list of who needs help (instructor/needs_help.py): the reasons, their order,
and the words in the reader's language."""
from __future__ import annotations

import csv

from support import store_grade

from autograder.core.results import CheckResult, GradeResult, SectionResult
from autograder.instructor.class_report import build
from autograder.instructor.grades_table import write_table
from autograder.instructor.needs_help import LOW_SHARE, who_needs_help
from autograder.instructor.student_files import read_student

BONUS = "07_positional_encoding"


def section(section_id: str, *checks: tuple[float, float, str]) -> SectionResult:
    """A section whose checks are (points, max_points, kind of the failure)."""
    return SectionResult(section_id, section_id, checks=[
        CheckResult(section_id, f"check {index}", max_points, points, "" if points >= max_points else "wrong",
                    kind if points < max_points else "") for index, (points, max_points, kind) in enumerate(checks)])


def grade(student: str, *sections: SectionResult) -> GradeResult:
    return GradeResult(submission=student, device="cpu", sections=list(sections))


CLASS = {
    # most urgent first, as the list must give them
    "erin": (grade("erin"), ["IndexError: the job's reply held no grade"]),
    "dave": (grade("dave", section("01_scores", (4, 4, "")), section("02_softmax", (0, 4, "not_handed_in"))), []),
    "carol": (grade("carol", section("01_scores", (0, 4, "stub")), section("02_softmax", (0, 4, "missing"))), []),
    # 3 / 8 of the core sections: low, though the bonus points take the total to 6
    "frank": (grade("frank", section("01_scores", (3, 4, "check")), section("02_softmax", (0, 4, "raised")),
                    section(BONUS, (3, 3, ""))), []),
    "bob": (grade("bob", section("01_scores", (1, 4, "check")), section("02_softmax", (0, 4, "stub"))), []),
    # exactly half: not under it
    "alice": (grade("alice", section("01_scores", (4, 4, "")), section("02_softmax", (0, 4, "check"))), []),
    # the bonus section not handed in: it is optional
    "zoe": (grade("zoe", section("01_scores", (4, 4, "")), section("02_softmax", (4, 4, "")),
                  section(BONUS, (0, 3, "not_handed_in"))), []),
}


def graded_class(folder):
    for result, errors in CLASS.values():
        store_grade(folder, result, grader_errors=errors)
    results = {student: read_student(folder / "students" / f"{student}.json") for student in CLASS}
    write_table(folder, results)
    return results


def test_the_students_who_need_help_most_urgent_first_and_why(tmp_path):
    found = who_needs_help(graded_class(tmp_path))
    assert [(item.student, item.reason) for item in found] == [
        ("erin", "grader_error"), ("dave", "not_handed_in"), ("carol", "blank"), ("bob", "low"), ("frank", "low")]
    assert found[1].sections == ("02_softmax",)
    assert (found[4].score, found[4].max_score) == (3, 8)  # the core sections' points, without the bonus
    assert LOW_SHARE == 0.5 and found[3].explanation == "1 / 8: under 50% of the maximum"


def test_the_class_report_lists_them_with_the_reason_as_data_and_words(tmp_path):
    graded_class(tmp_path)
    build(tmp_path)
    with open(tmp_path / "class_needs_help.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["student"] for row in rows] == ["erin", "dave", "carol", "bob", "frank"]
    assert rows[1]["reason"] == "not_handed_in" and rows[1]["sections"] == "02_softmax"
    assert rows[1]["explanation"] == "not handed in: 02_softmax"
    page = (tmp_path / "class_report.html").read_text(encoding="utf-8")
    assert "Students who need help, most urgent first (low: under 50% of the maximum)" in page
    assert page.index("erin") < page.index("handed in, but nothing implemented")


def test_the_reasons_are_said_in_chinese(tmp_path, chinese):
    found = who_needs_help(graded_class(tmp_path))
    words = [item.explanation for item in found]
    assert words[1] == "未提交：02_softmax" and "50%" in words[3], words
    assert not any(english in text for text in words
                   for english in ("grader", "handed", "implemented", "maximum", "under"))
