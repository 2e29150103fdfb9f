"""The instructor's round trip: `batch --gradebook`, then nbgrader's own feedback; `batch --report`.

After `batch --gradebook`, the course directory holds what nbgrader's `autograde`
would have left: the scores in the gradebook and, for each student and section,
`autograded/<student>/<section>/<section>.ipynb` with the grader's per-check
results as the outputs of its test cells. `nbgrader generate_feedback` run
afterwards must then write each student's feedback page with the scores and the
grader's messages, and `nbgrader export` must agree with grades.csv.

A class of four hands in 02_softmax (the partial example's section with partial
marks): alice the correct example, bob the partial one, carol the blank template,
and mallory the partial one dressed with HTML and scripts where a student can put
them (a Markdown cell, a saved output, nbgrader metadata, a test cell's source);
none of it may reach the feedback page as markup.

The nbgrader cycle takes about half a minute (marked slow); the rebuilt notebook
and the batch's reports are checked fast, in-process or on a class of two.
"""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from support import EXAMPLES, ROOT, zygote
from test_nbgrader_cycle import export_rows, hand_in_class, make_course, nbgrader_env, run_cli

SECTION = "02_softmax"  # examples/partial scores some of its points
PAYLOAD = "<script>alert('mallory')</script>"


def hostile_notebook(target: Path) -> Path:
    """The partial 02_softmax with markup wherever a student can write it."""
    nb = nbformat.read(EXAMPLES / "partial" / f"{SECTION}.ipynb", as_version=4)
    nb.cells.insert(1, nbformat.v4.new_markdown_cell(f"My notes {PAYLOAD} <img src=x onerror=alert(2)>"))
    for cell in nb.cells:
        nbgrader = cell.metadata.get("nbgrader", {})
        if nbgrader.get("grade") and not nbgrader.get("solution"):
            cell.source = "pass  # the student emptied the test cell"
            cell.outputs = [nbformat.v4.new_output("display_data", data={"text/html": PAYLOAD})]
            cell.execution_count = 1
            break
    nb.cells.append(nbformat.v4.new_code_cell(
        "x = 1", metadata={"nbgrader": {"grade": True, "grade_id": '"><script>alert(3)</script>', "points": 99}}))
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, target)
    return target


# --------------------------------------------------------------------------- fast: the rebuilt notebook


def tiny_gradebook(path: Path):
    """A gradebook as generate_assignment leaves it: a locked intro, an answer cell and two test cells."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{path}", course_id="attention-course") as gradebook:
        gradebook.add_assignment(SECTION)
        gradebook.add_notebook(SECTION, SECTION)
        cells = [("intro", "markdown", True, "# The instructor's intro"),
                 ("answer", "code", False, "raise NotImplementedError()"),
                 ("test_a", "code", True, "assert softmax(1) == 1"),
                 ("test_b", "code", True, "assert softmax(2) == 2")]
        for name, kind, locked, source in cells:
            gradebook.add_source_cell(name, SECTION, SECTION, cell_type=kind, locked=locked, source=source,
                                      checksum="x")
        gradebook.add_solution_cell("answer", SECTION, SECTION)
        for name in ("test_a", "test_b"):
            gradebook.add_grade_cell(name, SECTION, SECTION, max_score=2.0, cell_type="code")
    return path


def section_result(section=SECTION):
    """A student's stored grade: SECTION with a note and a failed check, and a check of another section."""
    from autograder.core.results import CheckResult, GradeResult, SectionResult
    from autograder.instructor.student_files import Stored

    graded = SectionResult(section, "Softmax", notes=[f"code cell 2, line 1: NameError {PAYLOAD}"], checks=[
        CheckResult(section, "rows sum to 1", 1.0, 1.0),
        CheckResult(section, "stable for large inputs", 2.0, 0.0, f"softmax overflowed: got nan {PAYLOAD}", "check")])
    other = SectionResult("other", "other", checks=[CheckResult("other", "x", 5.0, 0.0, "not this section")])
    return Stored("mallory", GradeResult("mallory", "cpu", [graded, other]), {"grader_errors": []})


def student_notebook(folder: Path) -> None:
    cells = [
        nbformat.v4.new_markdown_cell("# The student's own intro",
                                      metadata={"nbgrader": {"grade_id": "intro", "locked": True}}),
        nbformat.v4.new_markdown_cell(PAYLOAD),  # a student's own Markdown cell
        nbformat.v4.new_code_cell("def softmax(x):\n    return x  # '<b>bold</b>'",
                                  metadata={"nbgrader": {"grade_id": "answer", "solution": True}}),
        nbformat.v4.new_code_cell("pass", metadata={"nbgrader": {"grade_id": "test_a", "grade": True, "points": 50}},
                                  outputs=[nbformat.v4.new_output("display_data", data={"text/html": PAYLOAD})]),
        nbformat.v4.new_code_cell("1", metadata={"nbgrader": {"grade_id": "test_a", "grade": True}}),
    ]  # test_b deleted; test_a twice
    folder.mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(cells=cells), folder / f"{SECTION}.ipynb")


def test_the_autograded_notebook_shows_the_grader_and_never_the_students_markup(tmp_path, monkeypatch):
    from nbgrader.api import Gradebook

    from autograder.instructor.gradebook import record_results

    monkeypatch.setenv("PATH", nbgrader_env()["PATH"])  # a new gradebook asks `alembic` for its version
    path = tiny_gradebook(tmp_path / "gradebook.db")
    folder = tmp_path / "submitted" / "mallory"
    student_notebook(folder / SECTION)
    summary = record_results(str(path), {"mallory": section_result()}, {"mallory": folder}, [SECTION],
                             log=lambda line: None)
    written = tmp_path / "autograded" / "mallory" / SECTION / f"{SECTION}.ipynb"
    assert summary.autograded == [str(written)]
    nb = nbformat.read(written, as_version=4)
    nbformat.validate(nb)
    ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells]
    assert ids == ["intro", None, "answer", "test_a", None, "test_b"]  # the deleted test cell is back, last
    by_id = dict(zip(ids, nb.cells))
    assert by_id["test_a"].source == "assert softmax(1) == 1"  # a locked cell's source: the gradebook's
    assert by_id["test_a"].metadata["nbgrader"]["points"] == 2.0  # and its metadata
    assert "return x" in by_id["answer"].source  # the answer is the student's
    assert nb.cells[1].source.startswith("```text\n") and PAYLOAD in nb.cells[1].source  # shown as text
    assert nb.cells[0].source == "# The instructor's intro"  # a locked Markdown cell stays Markdown
    first, second = by_id["test_a"].outputs, by_id["test_b"].outputs
    assert [o.output_type for o in first + second] == ["stream", "stream"]  # the student's HTML output is gone
    text = first[0].text
    assert "1 / 3 points" in text and "FAILED: stable for large inputs (0 / 2)" in text
    assert f"softmax overflowed: got nan {PAYLOAD}" in text and "passed: rows sum to 1 (1 / 1)" in text
    assert f"note: code cell 2, line 1: NameError {PAYLOAD}" in text and "not this section" not in text
    assert "under test cell test_a" in second[0].text
    assert not any(o.get("output_type") != "stream" for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    with Gradebook(f"sqlite:///{path}") as gradebook:  # the records generate_feedback reads
        assert gradebook.find_submission(SECTION, "mallory").score == pytest.approx(4.0 / 3)
        assert gradebook.find_comment("answer", SECTION, SECTION, "mallory") is not None


def test_a_file_that_is_no_notebook_gets_the_gradebooks_cells(tmp_path, monkeypatch):
    from autograder.instructor.gradebook import record_results

    monkeypatch.setenv("PATH", nbgrader_env()["PATH"])
    path = tiny_gradebook(tmp_path / "gradebook.db")
    folder = tmp_path / "submitted" / "dan"
    (folder / SECTION).mkdir(parents=True)
    (folder / SECTION / f"{SECTION}.ipynb").write_text("not a notebook {")
    record_results(str(path), {"dan": section_result()}, {"dan": folder}, [SECTION], log=lambda line: None)
    nb = nbformat.read(tmp_path / "autograded" / "dan" / SECTION / f"{SECTION}.ipynb", as_version=4)
    assert [c.metadata["nbgrader"]["grade_id"] for c in nb.cells] == ["answer", "test_a", "test_b"]
    assert "FAILED: stable for large inputs" in nb.cells[1].outputs[0].text


def test_a_student_name_that_cannot_be_a_folder_gets_no_notebook(tmp_path):
    from autograder.instructor.autograded import folder_name

    assert folder_name("alice") == "alice" and folder_name("al ice") == "al ice"
    for name in ("", ".", "..", "a/b", "a\\b", "a\0b"):
        assert folder_name(name) is None, name


# --------------------------------------------------------------------------- batch --report


def graded(folder: Path, student: str, section: str | None = SECTION):
    """`grade`'s GradeResult of a folder, as the batch's job makes it (the submission: the student's id)."""
    from autograder.core.grade import run_checks
    from autograder.core.submission import locate

    result = run_checks(locate(folder, section), "cpu", launcher=zygote())
    result.submission = student
    return result


def without_heatmaps(result):
    for section in result.sections:
        for check in section.checks:
            check.figures = []
    return result


def test_a_report_from_the_stored_record_is_the_report_grade_writes_without_heatmaps():
    from autograder.core.record import from_record, to_record
    from autograder.feedback.report import render_html, render_markdown

    for folder in (EXAMPLES / "partial", ROOT / "student_template"):  # every section: notes, stubs, failures
        result = graded(folder, f"{folder.name} <b>&", section=None)
        rebuilt = from_record(json.loads(json.dumps(to_record(result))))  # as the batch stores and reads it
        assert any(s.notes for s in rebuilt.sections) or folder.name == "partial"
        if folder.name == "partial":
            assert any(c.figures for s in result.sections for c in s.checks), "no heatmap to leave out"
        expected = without_heatmaps(result)
        assert render_markdown(rebuilt) == render_markdown(expected), folder
        assert render_html(rebuilt, images={}) == render_html(expected, images={}), folder


def test_batch_report_writes_each_students_report(tmp_path):
    submitted = tmp_path / "submitted"
    for student, source in (("alice", EXAMPLES / "correct"), ("bob o'neil", EXAMPLES / "partial")):
        (submitted / student).mkdir(parents=True)
        for name in (f"{SECTION}.ipynb", "attention_plots.py"):
            if (source / name).exists():
                (submitted / student / name).write_bytes((source / name).read_bytes())
    out = tmp_path / "grades"
    first = run_cli("batch", submitted, "--out", out, "--device", "cpu", "--section", SECTION)
    assert first.returncode == 0, first.stderr
    assert not (out / "feedback").exists()  # only with --report
    # again with --report: both unchanged (not graded again), and both get their report
    again = run_cli("batch", submitted, "--out", out, "--device", "cpu", "--section", SECTION, "--report")
    assert again.returncode == 0, again.stderr
    assert again.stderr.count("unchanged ") == 2 and "2 feedback report(s) in" in again.stdout, again.stdout
    from autograder.core.files import safe_filename
    from autograder.feedback.report import render_html, render_markdown

    for student, _source in (("alice", EXAMPLES / "correct"), ("bob o'neil", EXAMPLES / "partial")):
        folder = out / "feedback" / safe_filename(student)
        assert sorted(p.name for p in folder.iterdir()) == ["report.html", "report.md"], student
        expected = without_heatmaps(graded(submitted / student, student))
        job = json.loads((out / "students" / f"{safe_filename(student)}.json").read_text(encoding="utf-8"))
        expected.sandbox, expected.torch = job["extra_data"]["sandbox"], job["extra_data"]["torch"]
        assert expected.provenance.startswith("sandbox: ") and ", torch " in expected.provenance
        assert (folder / "report.md").read_text(encoding="utf-8") == render_markdown(expected), student
        assert (folder / "report.html").read_text(encoding="utf-8") == render_html(expected, images={}), student
    bob = (out / "feedback" / safe_filename("bob o'neil") / "report.md").read_text(encoding="utf-8")
    graded_bob = json.loads((out / "students" / (safe_filename("bob o'neil") + ".json")).read_text(encoding="utf-8"))
    assert 0 < graded_bob["score"] < graded_bob["max_score"]  # the partial example: some of the points
    assert "\u274c" in bob and f"{graded_bob['score']:g} / {graded_bob['max_score']:g}" in bob  # a failing check


# --------------------------------------------------------------------------- slow: with nbgrader itself


@pytest.fixture(scope="module")
def round_trip(tmp_path_factory):
    """The class graded with `batch --gradebook`, then `nbgrader generate_feedback`."""
    course = tmp_path_factory.mktemp("round_trip") / "course"
    gradebook = make_course(course)
    hand_in_class(course, SECTION, ROOT / "student_template" / f"{SECTION}.ipynb")
    hostile_notebook(course / "submitted" / "mallory" / SECTION / f"{SECTION}.ipynb")
    out = course / "grades"
    done = run_cli("batch", course / "submitted", "--out", out, "--device", "cpu", "--section", SECTION,
                   "--gradebook", gradebook)
    assert done.returncode == 0, done.stderr
    assert "4 autograded notebook(s) written" in done.stdout, done.stdout
    feedback = subprocess.run([sys.executable, "-m", "nbgrader", "generate_feedback", SECTION], cwd=course,
                              env=nbgrader_env(), capture_output=True, text=True, timeout=600)
    assert feedback.returncode == 0, feedback.stdout + feedback.stderr
    return course, gradebook, out


def grades_csv(out: Path) -> dict[str, tuple[float, float]]:
    with open(out / "grades.csv", newline="") as handle:
        return {row["student"]: (float(row[SECTION]), float(row["max_score"])) for row in csv.DictReader(handle)}


@pytest.mark.slow
def test_generate_feedback_shows_the_scores_and_the_graders_messages(round_trip):
    import html

    from nbgrader.api import Gradebook

    course, gradebook, out = round_trip
    table = grades_csv(out)
    assert table["alice"][0] == table["alice"][1] > table["bob"][0] > table["carol"][0] == 0, table
    with Gradebook(f"sqlite:///{gradebook}") as book:
        points = book.find_notebook(SECTION, SECTION).max_score
    for student, (score, maximum) in table.items():
        page = (course / "feedback" / student / SECTION / f"{SECTION}.html").read_text(encoding="utf-8")
        assert f"(Score: {round(points * score / maximum, 2)} / {round(points, 2)})" in page, student
        assert html.escape(f"{SECTION}: {score:g} / {maximum:g} points", quote=False) in page, student
        result = json.loads((out / "students" / f"{student}.json").read_text(encoding="utf-8"))
        failed = [t for t in result["tests"] if t["score"] < t["max_score"] and t["output"]]
        assert bool(failed) == (student != "alice"), student
        for test in failed:  # every failed check's message, escaped as text
            first_line = test["output"].splitlines()[0]
            assert html.escape(first_line, quote=False) in page or html.escape(first_line) in page, (student, test)
    mallory = (course / "feedback" / "mallory" / SECTION / f"{SECTION}.html").read_text(encoding="utf-8")
    assert "<script>alert(" not in mallory and "<img src=x" not in mallory  # no markup of the student's
    assert "&lt;script&gt;alert(" in mallory  # shown as text: their notes are not lost
    assert "alert(3)" not in mallory and "the student emptied the test cell" not in mallory


@pytest.mark.slow
def test_nbgrader_export_agrees_with_grades_csv(round_trip):
    course, gradebook, out = round_trip
    rows = export_rows(course)
    table = grades_csv(out)
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{gradebook}") as book:
        points = book.find_notebook(SECTION, SECTION).max_score
    assert set(table) == {"alice", "bob", "carol", "mallory"}
    for student, (score, maximum) in table.items():
        assert rows[(SECTION, student)] == pytest.approx((points * score / maximum, points)), student
