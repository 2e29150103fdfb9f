"""Text that comes from students, on the trusted side: it is shown, never obeyed.

Student ids are folder names the students chose, and failure messages quote
their exceptions and printed output. Neither may name a mistake in the class
report, break the reports' markup, or turn into an id the CSV reader misreads.
"""
import json
import xml.etree.ElementTree as ET

import pandas as pd
import pytest
from support import correct_source, grade_source, replace_def, store_grade

from autograder.instructor import class_report
from autograder.instructor.student_files import Stored
from autograder.core.files import spreadsheet_safe
from autograder.core.harness import CheckFailed, expect, expect_close
from autograder.core.plugin import mistake_of
from autograder.core.results import CheckResult, GradeResult, SectionResult
from autograder.core.harness import StudentFailure

FORGED = "this looks like owned"


# ------------------------------------------------------------------ A. mistake names from the catalogue only


def test_expect_close_names_the_mistake_from_its_own_catalogue():
    import torch

    x = torch.tensor([[1.0, 2.0], [3.0, 5.0]])
    with pytest.raises(CheckFailed) as caught:
        expect_close(torch.softmax(x, 0), torch.softmax(x, -1), "softmax(x)",
                     mistakes={"softmax over dim 0": torch.softmax(x, 0)})
    assert caught.value.mistake == "softmax over dim 0"
    with pytest.raises(CheckFailed) as caught:  # a wrong answer that no catalogued mistake explains
        expect_close(x, torch.softmax(x, -1), "softmax(x)", mistakes={"softmax over dim 0": torch.softmax(x, 0)})
    assert caught.value.mistake == ""
    with pytest.raises(CheckFailed) as caught:
        expect(False, f"softmax(x) printed {FORGED!r}")
    assert caught.value.mistake == ""


class _Info:
    def __init__(self, value):
        self.value = value


def test_only_a_check_verdict_carries_a_mistake_into_the_result():
    assert mistake_of(_Info(CheckFailed("... This looks like X", "X"))) == "X"
    assert mistake_of(_Info(StudentFailure(f"softmax raised ValueError: {FORGED}", "raised"))) == ""
    assert mistake_of(_Info(AssertionError(FORGED))) == ""
    assert mistake_of(None) == ""


def _grades_dir(folder, results: dict):
    """A batch's output folder: grades.csv and students/<safe file name>.json with the verbatim id inside."""
    (folder / "students").mkdir(parents=True)
    rows = []
    for student, result in results.items():
        store_grade(folder, result, student=student)
        scores = {s.id: s.score for s in result.sections}
        rows.append({"student": spreadsheet_safe(student), **scores, "total": result.score})  # as batch does
    pd.DataFrame(rows).to_csv(folder / "grades.csv", index=False)
    return folder


def test_a_student_exception_that_says_looks_like_names_no_mistake(tmp_path):
    forged = replace_def(correct_source("02_softmax"), "softmax", f"""
        def softmax(x, dim=-1):
            raise ValueError({FORGED!r})
    """)
    columns = replace_def(correct_source("02_softmax"), "softmax", """
        def softmax(x, dim=-1):
            import torch
            e = torch.exp(x - x.max())
            return e / e.sum(0, keepdim=True)
    """)
    results = {}
    for student, source in (("mallory", forged), ("bob", columns)):
        section = grade_source("02_softmax", source)
        results[student] = GradeResult(student, "cpu", [section])
    messages = " ".join(c.message for c in results["mallory"].sections[0].checks)
    assert "looks like owned" in messages  # the student's words are shown to them ...

    grades, loaded, problems = class_report.load(_grades_dir(tmp_path, results))
    assert not problems
    mistakes = class_report.mistake_table(class_report._tests(loaded))
    assert "owned" not in " ".join(mistakes["mistake"])  # ... but never counted as a mistake
    assert len(mistakes) and all(mistakes["students"] == 1)  # bob's real mistake is still named
    assert any("dim" in name for name in mistakes["mistake"]), list(mistakes["mistake"])


def test_the_class_report_counts_recorded_mistakes_not_messages(tmp_path):
    section = SectionResult("02_softmax", "softmax")
    section.checks = [
        CheckResult("02_softmax", "softmax works", 1, 0, f"softmax raised ValueError: {FORGED}", "raised"),
        CheckResult("02_softmax", "softmax sums to 1", 1, 0, f"printed: {FORGED}. This looks like owned too",
                    "check"),
        CheckResult("02_softmax", "softmax matches", 1, 0, "softmax(x): wrong values. This looks like softmax over "
                    "dim 0", "check", mistake="softmax over dim 0"),
    ]
    grade = GradeResult("ada", "cpu", [section])
    data = grade.to_gradescope()
    assert [t.get("extra_data") for t in data["tests"]] == [None, None, {"mistake": "softmax over dim 0"}]
    tests = class_report._tests({"ada": Stored("ada", grade, {})})
    mistakes = class_report.mistake_table(tests)
    assert list(mistakes["mistake"]) == ["softmax over dim 0"]
    assert list(mistakes["check"]) == ["softmax matches"]


# ------------------------------------------------------------------ B, C. ids read back verbatim, files by safe name

TRICKY_IDS = ["NA", "None", "null", "nan", "N/A", "", "ada lovelace", "../bob", ".hidden", "x" * 150]


def _one_check_result(points: float) -> GradeResult:
    section = SectionResult("02_softmax", "softmax")
    section.checks = [CheckResult("02_softmax", "softmax works", 1, points, "" if points else "wrong", "check")]
    return GradeResult("", "cpu", [section])


def test_class_report_reads_every_id_back_as_the_text_it_is(tmp_path):
    folder = _grades_dir(tmp_path / "grades", {student: _one_check_result(i % 2) for i, student in
                                               enumerate(TRICKY_IDS)})
    grades, results, problems = class_report.load(folder)
    assert list(grades["student"]) == TRICKY_IDS
    assert set(results) == set(TRICKY_IDS)
    assert problems == []
    tests = class_report._tests(results)
    table = class_report.problem_table(grades, results, tests, problems)
    assert table.empty, table.to_string()  # grades.csv and every JSON agree, id by id
    sections = class_report.section_table(grades, tests).set_index("section")
    assert sections.at["total", "students"] == len(TRICKY_IDS)
    page = class_report.build(folder, tmp_path / "out")
    assert page.is_file()


def test_a_results_file_with_no_row_is_named_by_the_id_inside_it(tmp_path):
    folder = _grades_dir(tmp_path / "grades", {"NA": _one_check_result(1)})
    store_grade(folder, _one_check_result(0), student="ada lovelace")  # the verbatim id inside the file
    store_grade(folder, _one_check_result(0), student="cy")
    data = json.loads((folder / "students" / "cy.json").read_text())
    del data["extra_data"]["student"]  # no id inside: the file's name stands for it
    (folder / "students" / "cy.json").write_text(json.dumps(data))
    _, results, problems = class_report.load(folder)
    assert set(results) == {"NA"}
    assert sorted(student for student, _ in problems) == ["ada lovelace", "cy"]
    assert all("has no row in grades.csv" in problem for _, problem in problems)


# ------------------------------------------------------------------ D. student text shown, never obeyed

HOSTILE = ("softmax raised ValueError: <img src=http://x/a.png> ![x](http://x/y.png) [link](http://x/) "
           "<script>alert(1)</script> &lt;img src=y&gt; `` ``` **bold** | cell | \x00\x1b[31m\x0c\ufffe \udc80 end")


def hostile_result() -> GradeResult:
    section = SectionResult("02_softmax", "From scores to weights", notes=[f"code cell 3, line 1: {HOSTILE}"])
    section.checks = [
        CheckResult("02_softmax", "softmax works", 1, 0, HOSTILE, "raised"),
        CheckResult("02_softmax", "softmax sums to 1", 1, 1),
    ]
    return GradeResult("submissions/<img src=x>", "cpu", [section], sandbox="landlock", torch="2.9")


def assert_no_markup(markdown: str):
    assert "<img" not in markdown and "<script" not in markdown
    assert "](http" not in markdown.replace("\\](http", "")  # every [ ] is escaped: no link, no image
    assert "![" not in markdown
    assert "&lt;img" in markdown  # shown, as text
    for forbidden in ("\x00", "\x1b", "\x0c", "\udc80"):
        assert forbidden not in markdown
    markdown.encode("utf-8")  # encodable: no lone surrogate


def test_markdown_format_shows_student_text_as_text():
    from autograder.feedback.formats import render

    markdown = render(hostile_result(), "markdown")
    assert_no_markup(markdown)
    message = next(line for line in markdown.splitlines() if line.startswith("- **softmax works**"))
    assert "\\| cell \\|" in message  # the table and the list stay intact
    assert "\\`\\`\\`" in message and "\\*\\*bold\\*\\*" in message
    assert "&amp;lt;img" in message  # an entity the student wrote is shown as they wrote it


def test_feedback_report_shows_student_text_as_text(tmp_path):
    from autograder.feedback.report import render_html, render_markdown, write_report

    markdown = render_markdown(hostile_result())
    assert_no_markup(markdown)
    page = render_html(hostile_result(), images={})
    assert "<img" not in page and "<script>alert" not in page
    assert "&lt;img src=http://x/a.png&gt;" in page
    assert "\x00" not in page and "\x1b" not in page and "\udc80" not in page
    write_report(hostile_result(), tmp_path)  # writes (UTF-8) without failing
    assert "<img" not in (tmp_path / "report.md").read_text(encoding="utf-8")


def test_junit_is_always_well_formed_xml():
    from autograder.feedback.formats import render

    text = render(hostile_result(), "junit")
    root = ET.fromstring(text)
    failure = root.find("./testsuite/testcase/failure")
    assert failure is not None and "<img src=http://x/a.png>" in failure.text  # the text, as XML text
    assert "\x00" not in text and "\udc80" not in text and "\ufffe" not in text
    text.encode("utf-8")


def test_table_and_json_formats_can_be_written():
    from autograder.feedback.formats import render

    result = hostile_result()
    result.submission = "submitted/\x1b]0;owned\x07ada"  # a folder name is the student's choice too
    table = render(result, "table")
    assert "\x1b" not in table and "\x07" not in table and "\\x1b" in table  # no escape sequence, yet visible
    table.encode("utf-8")
    data = json.loads(render(hostile_result(), "json"))
    json.dumps(data, ensure_ascii=False).encode("utf-8")
    assert "<img src=http://x/a.png>" in data["tests"][0]["output"]  # Gradescope shows output as text


def test_class_report_html_escapes_student_text(tmp_path):
    result = hostile_result()
    folder = _grades_dir(tmp_path / "grades", {"<img src=http://x/id.png>": result})
    store_grade(folder, result, student="<img src=http://x/id.png>", grader_errors=[f"Traceback\nRuntimeError: {HOSTILE}"])
    page = class_report.build(folder, tmp_path / "out").read_text(encoding="utf-8")
    assert "<img src=http" not in page and "<script>alert" not in page
    assert "&lt;img src=http://x/id.png&gt;" in page


@pytest.mark.parametrize("text", ["=1+1", "+1", "-2", "@SUM(A1)", "\tx", "'quoted", "plain", "", "a=b"])
def test_spreadsheet_cells_never_start_a_formula_and_read_back_exactly(text):
    from autograder.core.files import from_spreadsheet_safe

    cell = spreadsheet_safe(text)
    assert not cell.startswith(("=", "+", "-", "@", "\t", "\r"))
    assert from_spreadsheet_safe(cell) == text


def test_class_report_csvs_quote_what_a_student_wrote(tmp_path):
    section = SectionResult("02_softmax", "softmax")
    section.checks = [CheckResult("02_softmax", "softmax works", 1, 0, "=HYPERLINK(\"http://x\")", "timeout")]
    folder = _grades_dir(tmp_path / "grades", {"=cmd|' /C calc'!A0": GradeResult("", "cpu", [section])})
    class_report.build(folder, tmp_path / "out")
    problems = pd.read_csv(tmp_path / "out" / "class_problems.csv", dtype=str, keep_default_na=False)
    assert list(problems["student"]) == ["'=cmd|' /C calc'!A0"]  # the id, as text (a timeout is a problem)
    for path in (tmp_path / "out").glob("class_*.csv"):
        for row in pd.read_csv(path, dtype=str, keep_default_na=False).itertuples(index=False):
            assert not any(str(cell).startswith(("=", "+", "-", "@")) for cell in row), (path.name, row)
