"""The feedback reports: the student's report.html / report.md with heatmaps, and the class report.

The student's report is built from a fixed GradeResult whose failing check
carries the heatmap data expect_close attaches; report.md is compared with a
golden file (to update after an intended change:
AUTOGRADER_UPDATE_GOLDEN=1 pytest tests/test_report.py). The class report is
built from a synthetic batch folder (grades.csv + students/*.json) and its
numbers are compared with grades.csv.
"""
import base64
import html
import importlib
import json
import xml.etree.ElementTree as ET
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest
import torch
from PIL import Image
from support import ROOT, correct_source, replace_def, store_grade

from autograder.feedback import colours, heatmaps
from autograder.checks.common import TOKENS, WORKED_INPUTS
from autograder.cli import main
from autograder.feedback.formats import FORMATS, render
from autograder.core.harness import CheckFailed, expect_close, take_passing_figures
from autograder.feedback.report import render_html, render_markdown, write_report
from autograder.core.results import CheckResult, GradeResult, SectionResult
from autograder.core.sections import SECTIONS

GOLDEN = ROOT / "tests" / "golden" / "feedback_report.md"
CHROMIUM = "/usr/bin/chromium"
SVG_SRC = re.compile(r'src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"')
SVG = "{http://www.w3.org/2000/svg}"

# ------------------------------------------------------------------ a fixed result

SCORES = WORKED_INPUTS @ WORKED_INPUTS.T
FUTURE = torch.triu(torch.ones(6, 6, dtype=torch.bool), diagonal=1)
EXPECTED = torch.softmax(SCORES.masked_fill(FUTURE, float("-inf")), dim=-1)
# a common mistake: the diagonal masked too, so the first row is all -inf and its softmax nan
WITH_DIAGONAL = torch.softmax(SCORES.masked_fill(torch.triu(torch.ones(6, 6, dtype=torch.bool)), float("-inf")), -1)


def failure(actual, expected, what, **kwargs) -> CheckFailed:
    try:
        expect_close(actual, expected, what, **kwargs)
    except CheckFailed as error:
        return error
    raise AssertionError("expect_close passed")


def passing(actual, expected, what, **kwargs) -> dict:
    """The figure of a comparison that passed and asked to be shown."""
    take_passing_figures()
    expect_close(actual, expected, what, show_passing=True, **kwargs)
    (figure,) = take_passing_figures()
    return figure


def fixed_result() -> GradeResult:
    weights = failure(torch.stack((WITH_DIAGONAL, EXPECTED)), torch.stack((EXPECTED, EXPECTED)),
                      "causal_attention_weights(attn_scores, 2) of the worked example", atol=1e-4,
                      heatmap_labels=TOKENS)
    scores_shown = passing(SCORES.clone(), SCORES, "score_matrix(inputs)", atol=1e-4, heatmap_labels=TOKENS)
    scores = SectionResult("01_scores", "Attention scores without trainable weights")
    scores.checks = [
        CheckResult("01_scores", "score_matrix gives the documented 6x6 scores", 1, 1, documented=True, visible=True,
                    figures=[scores_shown]),  # a passing comparison shown anyway
        CheckResult("01_scores", "score_matrix has no Python loop over tokens", 1, 0,
                    "score_matrix dispatched 12 tensor ops for 4 tokens but 27 for 9: it looks like a Python loop "
                    "over tokens; compute them all with one batched operation", "check"),
    ]
    causal = SectionResult("04_causal_mask", "Hiding the future",
                           notes=["code cell 10, line 29: NotImplementedError: "])
    causal.checks = [
        CheckResult("04_causal_mask", "causal_attention_weights gives the documented masked weights", 0.5, 0,
                    "causal_attention_weights(attn_scores, 2) of the worked example: wrong values, largest "
                    "difference inf at [0, 0, 0] (expected 1.0000, got nan)", "check", documented=True, visible=True,
                    figures=[weights.figure]),  # a fixed message: the golden file follows this test's changes only
        CheckResult("04_causal_mask", "CausalAttention: eval mode disables dropout <& friends>", 0.5, 0,
                    "CausalAttention is not implemented yet: it still raises NotImplementedError (code cell 10, "
                    "line 29)", "stub"),
        CheckResult("04_causal_mask", "causal_mask: (T, T) bool, True strictly above the diagonal", 1, 1),
    ]
    return GradeResult("submissions/ada", "cpu", [scores, causal], execution_time=3.5)


@pytest.fixture(scope="module")
def student_report(tmp_path_factory):
    """report.html of fixed_result(), written once for the tests that read it (rendering takes a while)."""
    return write_report(fixed_result(), tmp_path_factory.mktemp("feedback"))


def embedded_svgs(text: str) -> list[ET.Element]:
    """The pictures a page embeds, read back as XML."""
    return [ET.fromstring(base64.b64decode(data)) for data in SVG_SRC.findall(text)]


def picture_size(picture: ET.Element) -> tuple[int, int]:
    return int(picture.get("width")), int(picture.get("height"))


def cell_rects(picture: ET.Element, panel: int) -> list[ET.Element]:
    (cells,) = [g for g in picture.iter(f"{SVG}g") if g.get("class") == "cells" and g.get("data-panel") == str(panel)]
    return cells.findall(f"{SVG}rect")


def cell_box(shape, panel, r, c) -> tuple[float, float, float, float]:
    """Where cell (r, c) of a panel should be: (x, y, width, height), from the fixed layout."""
    x0, y0, x1, y1 = heatmaps.panel_boxes(shape)[panel]
    width, height = (x1 - x0) / shape[1], (y1 - y0) / shape[0]
    return x0 + c * width, y0 + r * height, width, height


def rect_box(rect: ET.Element) -> tuple[float, ...]:
    return tuple(float(rect.get(name)) for name in ("x", "y", "width", "height"))


def outlined_cells(picture: ET.Element, shape) -> set[tuple[int, int]]:
    """The cells of "yours" (panel 1) that the picture outlines."""
    x0, y0, x1, y1 = heatmaps.panel_boxes(shape)[1]
    width, height = (x1 - x0) / shape[1], (y1 - y0) / shape[0]
    found = set()
    for group in picture.iter(f"{SVG}g"):
        if group.get("class") == "outlines":
            for rect in group.findall(f"{SVG}rect"):
                x, y, w, h = rect_box(rect)
                c, r = int((x + w / 2 - x0) // width), int((y + h / 2 - y0) // height)
                assert x0 + c * width < x and x + w < x0 + (c + 1) * width, "an outline inside its cell"
                found.add((r, c))
    return found


def words(picture: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in picture.iter(f"{SVG}text")]


# ------------------------------------------------------------------ the hook


def test_expect_close_attaches_the_matrices_only_when_asked():
    batch = torch.stack((EXPECTED, EXPECTED))
    wrong = batch.clone()
    wrong[0, 2, 0] += 0.5
    plain = failure(wrong, batch, "weights")
    assert plain.figure is None
    asked = failure(wrong, batch, "weights", heatmap_labels=TOKENS)
    assert set(asked.figure) == {"expected", "actual", "labels", "what", "passed"} and not asked.figure["passed"]
    assert asked.figure["expected"].shape == asked.figure["actual"].shape == (6, 6)  # first batch item
    assert torch.equal(asked.figure["actual"], wrong[0].double())
    assert asked.figure["labels"] == (TOKENS, TOKENS) and asked.message == plain.message
    row = failure(torch.zeros(6), torch.ones(6), "dot_scores", heatmap_labels=(["journey"], TOKENS))
    assert row.figure["expected"].shape == (1, 6) and row.figure["labels"] == (["journey"], TOKENS)
    mask = failure(torch.ones(3, 3, dtype=torch.bool), FUTURE[:3, :3], "causal_mask(3)", heatmap_labels=True)
    assert mask.figure["labels"] == (None, None) and mask.figure["expected"].dtype == torch.float64
    assert failure(torch.ones(5, 5), torch.ones(6, 6), "shape", heatmap_labels=TOKENS).figure is None
    expect_close(EXPECTED.clone(), EXPECTED, "passes", heatmap_labels=TOKENS)
    assert take_passing_figures() == []  # a passing comparison is kept only when it asks to be shown


HEATMAP_KEYWORDS = {"heatmap_labels", "heatmap_view", "show_passing"}


@pytest.mark.parametrize("section_id", [section.id for section in SECTIONS])
def test_only_visible_checks_ask_for_heatmaps(section_id):
    """Heatmaps show public inputs only: no hidden check (fresh seeds, the reference's values) asks for one
    (the plugin also drops any figure of a hidden check)."""
    import ast
    import inspect

    from autograder.checks import declared
    from autograder.core.sections import hidden_module

    module = importlib.import_module(hidden_module(section_id))
    hidden = [f for f in vars(module).values() if callable(f) and hasattr(f, "grading") and not f.grading["visible"]]
    assert 0 < len(hidden) < len(declared(section_id))
    for function in hidden:
        calls = [node for node in ast.walk(ast.parse(inspect.getsource(function))) if isinstance(node, ast.Call)]
        asked = {k.arg for call in calls for k in call.keywords} & HEATMAP_KEYWORDS
        assert not asked, f"{function.__name__} is a hidden check and asks for {asked}"


def test_figures_are_never_serialised():
    result = fixed_result()
    assert "figure" not in repr(result.sections[1].checks[0])
    for fmt in FORMATS:
        text = render(result, fmt)
        assert "tensor(" not in text and "figure" not in text
    json.dumps(result.to_gradescope())


# ------------------------------------------------------------------ the student's report


def test_student_report_shows_scores_checks_and_heatmaps(student_report):
    result, folder = fixed_result(), student_report.parent
    page = student_report.read_text()
    assert 'Total: <strong id="total">2 / 4</strong>' in page
    for section in result.sections:
        assert f'<section id="{section.id}">' in page and section.title in page
        assert f"{section.score:g} / {section.max_score:g}" in page
        for check in section.checks:
            assert f'data-check="{html.escape(check.name)}"' in page
            assert html.escape(check.message) in page
    assert "eval mode disables dropout &lt;&amp; friends&gt;" in page  # titles are escaped
    assert page.count('class="check fail"') == 3 and page.count('class="check pass"') == 2
    assert "largest difference" in page and "NotImplementedError" in page and 'class="note"' in page
    assert "http://" not in page and "https://" not in page and "<link" not in page  # works offline

    images = embedded_svgs(page)
    assert len(images) == 2  # the passing check shown anyway, then the failing one
    assert all(picture_size(image) == (heatmaps.WIDTH, heatmaps.HEIGHT) for image in images)
    assert page.count('<figure class="passed">') == 1 and page.count('<figure class="failed">') == 1
    assert page.index('<figure class="passed">') < page.index('data-check="score_matrix has no Python loop')
    assert "Passed: your values of score_matrix(inputs) (middle) match the expected ones" in page
    expected, actual = EXPECTED.double().numpy(), WITH_DIAGONAL.double().numpy()

    def colour(panel, r, c, image=images[1]):
        return cell_colour(image, (6, 6), panel, r, c)

    grey = colours.MISSING
    same = np.argwhere(np.abs(actual - expected) < 1e-9)
    assert len(same) == 10  # above the diagonal, below the all-nan first row
    zero = colour(2, *same[0])  # the colour of a zero difference
    for r in range(6):
        for c in range(6):
            if np.isnan(actual[r, c]):
                assert colour(1, r, c) == grey and colour(2, r, c) == grey and colour(0, r, c) != grey
            elif abs(actual[r, c] - expected[r, c]) < 1e-9:
                assert colour(0, r, c) == colour(1, r, c) and colour(2, r, c) == zero, (r, c)
            elif abs(actual[r, c] - expected[r, c]) > 0.05:
                assert colour(0, r, c) != colour(1, r, c) and colour(2, r, c) != zero, (r, c)
    differing = {(r, c) for r in range(6) for c in range(6)
                 if not (abs(actual[r, c] - expected[r, c]) < 1e-4)}  # nan too
    assert len(differing) == 26 and outlined_cells(images[1], (6, 6)) == differing
    assert outlined_cells(images[0], (6, 6)) == set()  # a passing picture outlines nothing

    markdown = (folder / "report.md").read_text()
    if os.environ.get("AUTOGRADER_UPDATE_GOLDEN"):
        GOLDEN.write_text(markdown)
    assert markdown == GOLDEN.read_text()
    linked = re.findall(r"\]\((heatmaps/[^)]+\.svg)\)", markdown)
    assert len(linked) == 2
    for name, data in zip(linked, SVG_SRC.findall(page)):
        assert (folder / name).read_bytes() == base64.b64decode(data)


def cell_colour(picture, shape, panel, r, c):
    """The fill of cell (r, c) of a heatmap panel, whose rectangle must be where the layout puts it."""
    rect = cell_rects(picture, panel)[r * shape[1] + c]
    assert rect_box(rect) == pytest.approx(cell_box(shape, panel, r, c), abs=0.006), (panel, r, c)
    return rect.get("fill")


def test_a_passing_figure_shows_equal_panels_and_no_difference(student_report):
    """The passing picture of the worked example's scores: expected and yours alike, the difference zero."""
    passed = embedded_svgs(student_report.read_text())[0]
    zero = {cell_colour(passed, (6, 6), 2, r, c) for r in range(6) for c in range(6)}
    assert len(zero) == 1  # one colour: a zero difference everywhere
    colours = set()
    for r in range(6):
        for c in range(6):
            assert cell_colour(passed, (6, 6), 0, r, c) == cell_colour(passed, (6, 6), 1, r, c), (r, c)
            colours.add(cell_colour(passed, (6, 6), 1, r, c))
    assert len(colours - zero) > 5  # the scores themselves are drawn, in colours other than a zero's


def test_rendering_is_deterministic(tmp_path, student_report):
    again = write_report(fixed_result(), tmp_path)  # a second rendering, from a new but equal result
    first = sorted(p.relative_to(student_report.parent) for p in student_report.parent.rglob("*") if p.is_file())
    assert first == sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    for name in first:
        assert (student_report.parent / name).read_bytes() == (tmp_path / name).read_bytes(), name
    images = {p.name: p.read_bytes() for p in (tmp_path / "heatmaps").iterdir()}
    assert render_html(fixed_result(), images) == again.read_text()
    assert render_markdown(fixed_result()) == (tmp_path / "report.md").read_text()


@pytest.mark.parametrize("keep_passing", [True, False])
def test_a_passing_submission_shows_only_passing_pictures(tmp_path, keep_passing):
    """Every check passed: the pictures shown are the passing comparisons the checks kept (labelled
    passed), and none at all where no check kept one."""
    result = fixed_result()
    for section in result.sections:
        for check in section.checks:
            check.points, check.message, check.kind = check.max_points, "", ""
            check.figures = [f for f in check.figures if f["passed"] and keep_passing]
    page = write_report(result, tmp_path).read_text()
    assert 'class="check fail"' not in page and '<figure class="failed">' not in page
    assert len(SVG_SRC.findall(page)) == page.count('<figure class="passed">') == (1 if keep_passing else 0)
    pictures = list((tmp_path / "heatmaps").glob("*.svg")) if (tmp_path / "heatmaps").exists() else []
    assert len(pictures) == (1 if keep_passing else 0)


# ------------------------------------------------------------------ the submission's name, --section updates


def one_section(section_id: str, points: float, figure: dict | None = None) -> SectionResult:
    """A section of one check worth 1 point, scoring `points`, carrying `figure` if given."""
    message = "" if points else "wrong values"
    return SectionResult(section_id, section_id, [CheckResult(section_id, f"{section_id} check", 1, points, message,
                                                              figures=[figure] if figure else [])])


def shown_sections(page: str) -> list[str]:
    return re.findall(r'<section id="([^"]+)">', page)


@pytest.mark.parametrize("given, cwd, name", [
    (".", "ada-work", "ada-work"),
    ("ada-work/", "", "ada-work"),
    ("ada-work/03_trainable_qkv.ipynb", "", "03_trainable_qkv.ipynb"),
    ("..", "ada-work/sub", "ada-work"),
])
def test_the_header_names_the_submission_by_its_resolved_name(tmp_path, monkeypatch, given, cwd, name):
    (tmp_path / "ada-work" / "sub").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / cwd)
    page = write_report(GradeResult(given, "cpu", [one_section("01_scores", 1)]), tmp_path / "out",
                        source=given).read_text()
    assert f"Total: <strong id=\"total\">1 / 1</strong> for <code>{name}</code>" in page
    assert "<code>.</code>" not in page and "<code>..</code>" not in page
    assert f"Submission: {name.replace('_', chr(92) + '_')}" in (tmp_path / "out" / "report.md").read_text()


def test_a_section_run_updates_that_section_only(tmp_path):
    """`check --section 04_causal_mask`: 01 stays as the earlier run left it (its heatmap too), 04 is new."""
    scores = passing(SCORES.clone(), SCORES, "score_matrix(inputs)", atol=1e-4, heatmap_labels=TOKENS)
    (tmp_path / "ada").mkdir()
    out, source = tmp_path / "feedback", tmp_path / "ada"
    first = GradeResult("ada", "cpu", [one_section("01_scores", 1, scores), one_section("04_causal_mask", 0)])
    write_report(first, out, source=source, visible_only=True)
    page = write_report(GradeResult("ada", "cpu", [one_section("04_causal_mask", 1)]), out, source=source,
                        visible_only=True, update=True).read_text()
    assert shown_sections(page) == ["01_scores", "04_causal_mask"]
    assert 'Total: <strong id="total">2 / 2</strong>' in page and 'class="check fail"' not in page
    assert "This run graded 04_causal_mask only; the other sections (01_scores) are from earlier runs" in page
    assert len(embedded_svgs(page)) == 1 and '<figure class="passed">' in page  # 01's heatmap, kept
    data = json.loads((out / "report-data.json").read_text())
    assert [s["id"] for s in data["sections"]] == ["01_scores", "04_causal_mask"]
    assert "earlier runs" in (out / "report.md").read_text()


@pytest.mark.parametrize("earlier, says", [
    ({"source": "bob"}, "was for another submission"),
    ({"visible_only": False}, "was for the other kind of run"),
    ({"data": b"{not json"}, "was not used: it could not be read"),
    ({"data": b'{"format": 99, "submission": {}}'}, "was not used: it is not in this grader's format"),
])
def test_a_report_of_another_submission_is_replaced_and_says_so(tmp_path, earlier, says):
    out = tmp_path / "feedback"
    for name in ("ada", "bob"):
        (tmp_path / name).mkdir()
    write_report(GradeResult("x", "cpu", [one_section("01_scores", 1)]), out,
                 source=tmp_path / earlier.get("source", "ada"), visible_only=earlier.get("visible_only", True))
    if "data" in earlier:
        (out / "report-data.json").write_bytes(earlier["data"])
    page = write_report(GradeResult("ada", "cpu", [one_section("04_causal_mask", 1)]), out, source=tmp_path / "ada",
                        visible_only=True, update=True).read_text()
    assert shown_sections(page) == ["04_causal_mask"] and html.escape(says) in page
    assert "This report shows only the sections of this run (04_causal_mask)" in page
    assert [s["id"] for s in json.loads((out / "report-data.json").read_text())["sections"]] == ["04_causal_mask"]


def test_a_full_run_replaces_the_report_without_a_notice(tmp_path):
    out, source = tmp_path / "feedback", tmp_path
    write_report(GradeResult("x", "cpu", [one_section("01_scores", 1)]), out, source=source)
    page = write_report(GradeResult("x", "cpu", [one_section("04_causal_mask", 0)]), out, source=source).read_text()
    assert shown_sections(page) == ["04_causal_mask"] and 'class="update"' not in page


def test_a_report_of_no_known_submission_keeps_no_data_to_merge(tmp_path):
    """A batch's report (a student id, no path): no report-data.json, and a stale one goes, so that a later
    --section run cannot merge with sections this report does not show."""
    out = tmp_path / "feedback"
    write_report(GradeResult("x", "cpu", [one_section("01_scores", 1)]), out, source=tmp_path)
    assert (out / "report-data.json").is_file()
    write_report(GradeResult("ada", "cpu", [one_section("04_causal_mask", 1)]), out)
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "report.md"]


def test_report_data_keeps_every_field_and_figure():
    from autograder.feedback import report_store

    result = fixed_result()
    data = json.loads(report_store.encode(report_store.to_data(result, {"path": "/x", "checks": "all"})))
    back = report_store.sections_from(data)
    assert back == result.sections  # checks compared field by field (figures aside)
    for old, new in zip([c for s in result.sections for c in s.checks], [c for s in back for c in s.checks]):
        assert len(old.figures) == len(new.figures)
        for a, b in zip(old.figures, new.figures):
            assert torch.equal(a["expected"].nan_to_num(-7.0), b["expected"].nan_to_num(-7.0))
            assert torch.equal(a["actual"].nan_to_num(-7.0), b["actual"].nan_to_num(-7.0))
            assert (a["labels"], a["what"], a["passed"]) == (tuple(b["labels"]), b["what"], b["passed"])


@pytest.mark.parametrize("cached, renders", [("kept", 0), ("corrupt", 2)])
def test_unchanged_heatmaps_are_not_drawn_again(tmp_path, monkeypatch, student_report, cached, renders):
    """A picture of the same name (its name holds the digest of what it shows) is reused; one that is not
    a whole SVG is drawn again. A PNG an older grader wrote is removed."""
    from autograder.feedback import report

    shutil.copytree(student_report.parent, tmp_path / "out")
    images = tmp_path / "out" / "heatmaps"
    if cached == "corrupt":
        for old in images.iterdir():
            old.write_bytes(old.read_bytes()[:-20])  # cut short
    (images / "01_scores-01-old-1-0123456789.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    drawn, draw = [], heatmaps.render_figure
    monkeypatch.setattr(report.heatmaps, "render_figure", lambda figure: drawn.append(figure) or draw(figure))
    write_report(fixed_result(), tmp_path / "out")
    assert len(drawn) == renders
    assert sorted(p.name for p in images.iterdir()) == sorted(p.name for p in (student_report.parent / "heatmaps").iterdir())


def test_a_missing_notebook_is_said_once():
    missing = "06_multihead.ipynb is missing from the submission"
    section = SectionResult("06_multihead", "Split into heads, attend, rebuild", notes=[missing])
    section.checks = [CheckResult("06_multihead", f"check {i}", 1, 0, missing, "unreadable") for i in range(4)]
    result = GradeResult("submissions/ada", "cpu", [section])
    page, markdown = render_html(result), render_markdown(result)
    assert page.count(f'<div class="message">{missing}</div>') == 1 and "all 4 checks" in page
    assert all(f"<li>check {i} (1)</li>" in page for i in range(4))
    assert markdown.count("missing from the submission") == 2  # the note, and one line for the 4 checks


def test_report_flag_on_grade_and_check():
    from pathlib import Path

    from autograder.cli import build_parser

    parse = build_parser().parse_args
    assert parse(["grade", "sub", "--report", "out"]).report == Path("out")
    assert parse(["grade", "sub"]).report is None  # grade writes no report unless asked
    assert parse(["check"]).report is None  # check then writes ./feedback/ (see the end-to-end test)


# ------------------------------------------------------------------ the class report


def student_result(section_checks: dict, student: str = "") -> GradeResult:
    """One student's grade: section id -> [(title, max, points, message, kind, documented, mistake)]
    (mistake: the catalogued mistake the check named, "" if none)."""
    result = GradeResult(submission=student, device="cpu")
    for section_id, checks in section_checks.items():
        section = SectionResult(section_id, section_id)
        section.checks = [CheckResult(section_id, title, top, points, message, kind, documented, mistake=mistake)
                          for title, top, points, message, kind, documented, mistake in checks]
        result.sections.append(section)
    return result


LOOP = "it looks like a Python loop over tokens; compute them all with one batched operation"
LOOP_NAME = "a Python loop over tokens"
DIAGONAL_NAME = "the diagonal masked too (use diagonal=1: every token may look at itself)"
DIAGONAL = f"causal_attention_weights(...): wrong values, largest difference 0.4. This looks like {DIAGONAL_NAME}"


def class_answers() -> dict:
    def s01(loop_ok, doc_ok):
        return [("score_matrix gives the documented 6x6 scores", 1, 1 if doc_ok else 0,
                 "" if doc_ok else "score_matrix(inputs): wrong values", "" if doc_ok else "check", True, ""),
                ("score_matrix has no Python loop over tokens", 1.5, 1.5 if loop_ok else 0,
                 "" if loop_ok else "score_matrix dispatched 12 ops ...: " + LOOP, "" if loop_ok else "check", False,
                 "" if loop_ok else LOOP_NAME)]

    def s04(weights_ok, attention):
        return [("causal_attention_weights gives the documented masked weights", 0.5, 0.5 if weights_ok else 0,
                 "" if weights_ok else DIAGONAL, "" if weights_ok else "check", True,
                 "" if weights_ok else DIAGONAL_NAME),
                ("CausalAttention works", 2, 2 if attention == "ok" else 0,
                 {"ok": "", "stub": "CausalAttention is not implemented yet", "timeout": "CausalAttention(...) "
                  "took longer than 10 s", "unreadable": "04_causal_mask.ipynb is not a readable notebook"}
                 [attention], "" if attention == "ok" else attention, False, "")]

    return {
        "ada": {"01_scores": s01(True, True), "04_causal_mask": s04(True, "ok")},
        "bob": {"01_scores": s01(False, True), "04_causal_mask": s04(False, "stub")},
        "cy": {"01_scores": s01(False, False), "04_causal_mask": s04(False, "timeout")},
        "dee": {"01_scores": s01(True, True), "04_causal_mask": s04(False, "unreadable")},
        "eve": {"01_scores": s01(True, False), "04_causal_mask": s04(True, "ok")},
    }


def write_grades_dir(folder):
    """A batch folder as `batch` writes it: grades.csv and students/<student>.json."""
    (folder / "students").mkdir(parents=True)
    rows = []
    for student, sections in class_answers().items():
        grade = student_result(sections, student)
        errors = ["Traceback ...\nRuntimeError: the worker pipe broke"] if student == "eve" else []
        store_grade(folder, grade, grader_errors=errors)
        row = {"student": student}
        for section in grade.sections:
            row[section.id] = section.score
        row["total"] = grade.score
        rows.append(row)
    rows.append({"student": "fay", "01_scores": 0.0, "04_causal_mask": 0.0, "total": 0.0})
    (folder / "students" / "fay.json").write_text('{"score": 0, "tests": [')  # cut short
    pd.DataFrame(rows).to_csv(folder / "grades.csv", index=False)
    return folder


@pytest.fixture(scope="module")
def class_page(tmp_path_factory):
    """class_report.html of the synthetic class, made through the command line once for the tests that read it."""
    folder = tmp_path_factory.mktemp("class")
    grades_dir = write_grades_dir(folder / "grades")
    assert main(["report", str(grades_dir), "--out", str(folder / "out")]) == 0
    return folder / "out" / "class_report.html"


def test_class_report_matches_grades_csv(class_page):
    out = class_page.parent
    grades = pd.read_csv(out.parent / "grades" / "grades.csv")

    sections = pd.read_csv(out / "class_sections.csv").set_index("section")
    for column in ("01_scores", "04_causal_mask", "total"):
        assert sections.at[column, "students"] == len(grades)
        assert sections.at[column, "mean"] == pytest.approx(grades[column].mean())
        assert sections.at[column, "median"] == pytest.approx(grades[column].median())
        assert sections.at[column, "min"] == grades[column].min()
        assert sections.at[column, "max"] == grades[column].max()
    assert sections.at["01_scores", "max_points"] == 2.5 and sections.at["04_causal_mask", "max_points"] == 2.5
    assert sections.at["01_scores", "full_marks"] == (grades["01_scores"] == 2.5).sum() == 2
    assert sections.at["total", "zero"] == 2  # cy, and fay whose results file is unreadable

    checks = pd.read_csv(out / "class_checks.csv")
    assert list(checks["pass_rate"]) == sorted(checks["pass_rate"])  # hardest first
    rates = dict(zip(checks["check"], checks["pass_rate"]))
    assert rates == {"CausalAttention works": 0.4, "causal_attention_weights gives the documented masked weights": 0.4,
                     "score_matrix gives the documented 6x6 scores": 0.6,
                     "score_matrix has no Python loop over tokens": 0.6}
    assert set(checks["students"]) == {5}

    mistakes = pd.read_csv(out / "class_mistakes.csv")
    top = mistakes.iloc[0]
    assert top["mistake"] == "the diagonal masked too (use diagonal=1: every token may look at itself)"
    assert top["students"] == 3 and top["section"] == "04_causal_mask"
    assert "a Python loop over tokens" in set(mistakes["mistake"])
    kinds = dict(zip(*pd.read_csv(out / "class_kinds.csv")[["kind", "failures"]].T.values))
    assert kinds == {"check": 7, "stub": 1, "timeout": 1, "unreadable": 1}

    problems = pd.read_csv(out / "class_problems.csv")
    said = dict(problems.groupby("student")["problem"].apply(" | ".join))
    assert set(said) == {"cy", "dee", "eve", "fay"}
    assert "timed out" in said["cy"] and "unreadable notebook" in said["dee"]
    assert "the worker pipe broke" in said["eve"] and "unreadable" in said["fay"]

    page = (out / "class_report.html").read_text()
    for heading in ("Scores per section", "Checks, hardest first", "most common named mistakes",
                    "Students whose grading went wrong"):
        assert heading in page
    images = embedded_svgs(page)
    assert len(images) == 1 and picture_size(images[0]) == (1200, 300)
    histograms = [g for g in images[0].iter(f"{SVG}g") if g.get("class") == "histogram"]
    assert [g.get("data-section") for g in histograms] == ["01_scores", "04_causal_mask", "total"]
    for histogram in histograms:  # one bar per score bin that has students: 6 students in all
        bars = [float(rect.get("height")) for rect in histogram.iter(f"{SVG}rect")]
        assert bars and all(height > 0 for height in bars)
        shown = " ".join(words(histogram))
        assert "points" in shown and "students" in shown and "(mean " in shown
    assert 'alt="histograms of the scores per section and of the total"' in page


def test_class_report_lists_students_whose_json_disagrees(tmp_path, capsys):
    grades_dir = write_grades_dir(tmp_path / "grades")
    grades = pd.read_csv(grades_dir / "grades.csv")
    grades.loc[grades["student"] == "ada", "01_scores"] = 1.0
    grades.to_csv(grades_dir / "grades.csv", index=False)
    assert main(["report", str(grades_dir)]) == 0  # written next to grades.csv by default
    assert capsys.readouterr().err.strip() == f"autograder: class report: {grades_dir / 'class_report.html'}"
    assert {p.name for p in grades_dir.glob("class_*")} == {
        "class_report.html", "class_sections.csv", "class_checks.csv", "class_mistakes.csv", "class_kinds.csv",
        "class_problems.csv", "class_needs_help.csv", "class_unreached.csv"}
    problems = pd.read_csv(grades_dir / "class_problems.csv")
    assert "grades.csv gives 01_scores 1, students/ada.json 2.5" in set(problems["problem"])


def test_class_report_without_grades_is_a_usage_error(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "no grades.csv here" in error[0]


# ------------------------------------------------------------------ in a browser


def chromium(*args, user_data):
    """Start headless Chromium (returns the Popen; read it with .communicate())."""
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={user_data}",
             "--enable-logging=stderr", "--v=0"]
    return subprocess.Popen([CHROMIUM, *flags, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_reports_render_in_headless_chromium(tmp_path, student_report, class_page, record_property):
    if not os.path.exists(CHROMIUM):
        reason = f"{CHROMIUM} is missing (bash ci/system_deps.sh installs it); the browser check is skipped"
        print(reason)
        pytest.skip(reason)
    started = time.monotonic()
    shot = tmp_path / "shot.png"
    # the three browsers run side by side: each mostly waits for its own start-up
    browsers = [chromium("--dump-dom", page.as_uri(), user_data=tmp_path / f"profile-{index}")
                for index, page in enumerate((student_report, class_page))]
    browsers.append(chromium(f"--screenshot={shot}", "--window-size=1200,1600", student_report.as_uri(),
                             user_data=tmp_path / "profile-shot"))
    try:
        outputs = [browser.communicate(timeout=90) for browser in browsers]
    finally:
        for browser in browsers:  # only these, started here
            if browser.poll() is None:
                browser.kill()
                browser.wait()
    for (stdout, stderr), count in zip(outputs[:2], (2, 1)):  # the student's 2 heatmaps, the class's chart
        body = re.search(r"<body[^>]*>", stdout)
        assert body, stderr[-2000:]
        assert 'data-images="ok"' in body[0] and f'data-image-count="{count}"' in body[0], body[0]
        assert 'data-broken-images="0"' in body[0] and 'data-errors="0"' in body[0], body[0]
        console = [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]
        assert not console, console
    assert shot.exists(), outputs[2][1][-2000:]
    image = Image.open(shot).convert("RGB")
    assert image.size == (1200, 1600)
    colours = image.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50  # text, the score bar and the heatmaps, not a blank page
    reds = sum(n for n, (r, g, b) in colours if r > 150 and g < 90 and b < 90)
    assert reds > 500  # the heatmap's strong weights (RdBu_r) are on screen
    print(f"chromium checks took {time.monotonic() - started:.1f} s")
    record_property("summary", f"browser: both reports render in headless Chromium ({time.monotonic() - started:.1f} s)")


HAN = re.compile(r"[\u4e00-\u9fff]")
# Noto CJK's families for the other forms of the Han characters: a Chinese page drawn in one of
# them shows Japanese, Korean or traditional shapes (and Japanese punctuation, centred in its box)
OTHER_HAN_FORMS = re.compile(r" (?:JP|KR|TC|HK)$")


def chinese_fonts() -> tuple[list[str], set[str]]:
    """(the font files, the families) fontconfig has for Chinese text; none without fontconfig."""
    if not shutil.which("fc-list"):
        return [], set()
    listed = subprocess.run(["fc-list", ":lang=zh", "file", "family"], capture_output=True, text=True).stdout
    rows = [line.split(": ", 1) for line in listed.splitlines() if ": " in line]
    return sorted({file.rstrip(":") for file, _ in rows}), {name for _, names in rows for name in names.split(",")}


def how_chinese_is_drawn(browser, families: set[str]) -> list[str]:
    """What on the loaded page is not drawn in a Chinese font's simplified forms: each element with
    Han characters in its own text whose Han characters outnumber the glyphs its Chinese fonts drew,
    or that a font of other forms drew. Also returns how many such elements there are, last."""
    wrong, count = [], 0
    for node, text in browser.texts():
        han, fonts = len(HAN.findall(text)), browser.fonts(node)
        if not han or not fonts:  # no Chinese, or not drawn (in a closed <details>)
            continue
        count += 1
        drawn = sum(font["glyphCount"] for font in fonts if font["familyName"] in families)
        others = [font["familyName"] for font in fonts if OTHER_HAN_FORMS.search(font["familyName"])]
        if drawn < han or others:
            wrong.append(f"{text[:40]!r}: {[(font['familyName'], font['glyphCount']) for font in fonts]}")
    return wrong + [str(count)]


def test_the_chinese_report_is_drawn_in_a_chinese_font_in_headless_chromium(tmp_path, chinese_partial_report,
                                                                            record_property):
    """The Chinese report (`grade --lang zh --report` of the partial example) in a real browser: every
    element with Chinese words, on the page and in a heatmap (title, panel titles, footer), is drawn
    in a font with the Chinese characters, in their simplified forms (Chromium says which fonts it
    used); and with those fonts hidden from it (FONTCONFIG_FILE) the same page draws boxes instead:
    the page's title and the first heatmap look different, and the font check fails."""
    from chromium_devtools import Browser, hidden_fonts_config

    font_files, families = chinese_fonts()
    for missing, package in ((not os.path.exists(CHROMIUM), CHROMIUM), (not font_files, "a font for Chinese")):
        if missing:
            reason = f"{package} is missing (bash ci/system_deps.sh installs it); the browser check is skipped"
            print(reason)
            pytest.skip(reason)
    started = time.monotonic()
    done, folder = chinese_partial_report
    assert done.returncode == 0, done.stderr[-2000:]
    page, picture = (folder / "report.html").as_uri(), sorted((folder / "heatmaps").glob("*.svg"))[0].as_uri()
    hidden = {**os.environ, "FONTCONFIG_FILE": str(hidden_fonts_config(tmp_path, font_files))}

    def look(name: str, env: dict | None):
        browser = Browser(CHROMIUM, tmp_path / f"profile-{name}", env=env)
        try:
            browser.open(page)
            shots = {part: browser.screenshot(browser.box(part)) for part in ("h1", "img")}
            (tmp_path / f"report-{name}.png").write_bytes(browser.screenshot())
            on_page = how_chinese_is_drawn(browser, families)
            browser.open(picture)  # the heatmap as its own document: its <text> elements can be asked about
            return shots, on_page, how_chinese_is_drawn(browser, families)
        finally:
            browser.close()

    # one after the other: Browser starts Chromium with a preexec_fn, which is not safe beside threads
    (shots, on_page, in_picture), (shots_hidden, on_page_hidden, in_picture_hidden) = look("fonts", None), \
        look("hidden", hidden)
    assert int(on_page[-1]) > 50 and int(in_picture[-1]) >= 4, (on_page[-1], in_picture[-1])
    assert on_page[:-1] == [] and in_picture[:-1] == [], (on_page, in_picture)
    # the fonts hidden, the same elements are drawn without them: the check sees it, and so does the eye
    assert len(on_page_hidden) == int(on_page[-1]) + 1 and len(in_picture_hidden) == int(in_picture[-1]) + 1
    assert all(shots[part] != shots_hidden[part] for part in shots), "hiding the Chinese fonts changed nothing"
    print(f"screenshots: {tmp_path / 'report-fonts.png'}, {tmp_path / 'report-hidden.png'}")
    record_property("summary", f"browser: the Chinese report is drawn in a Chinese font "
                               f"({time.monotonic() - started:.1f} s)")


# ------------------------------------------------------------------ end to end


@pytest.mark.slow
def test_check_writes_feedback_with_heatmaps_for_the_documented_checks(tmp_path):
    source = replace_def(correct_source("01_scores"), "score_matrix", """
        def score_matrix(inputs):
            return inputs @ inputs.transpose(-2, -1) / inputs.shape[-1] ** 0.5
    """)
    (tmp_path / "01_scores.py").write_text(source)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "autograder", "check", "01_scores.py"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "feedback" / "report.html").read_text()
    assert 'data-check="score_matrix gives the documented 6x6 scores"' in page
    images = embedded_svgs(page)
    assert len(images) == 1 and picture_size(images[0]) == (heatmaps.WIDTH, heatmaps.HEIGHT)
    markdown = (tmp_path / "feedback" / "report.md").read_text()
    assert "  journey" in markdown and "heatmaps/01_scores-02-score_matrix" in markdown
    shutil.rmtree(tmp_path / "feedback")


NO_SWAP_BACK = """
    def combine_heads(x):
        b, h, t, hd = x.shape
        return x.reshape(b, t, h * hd)
"""


def test_check_section_updates_06_with_its_heatmaps_and_keeps_03(tmp_path):
    """End to end: `check` of a folder, then `check --section 06_multihead` after a mistake in 06 (and 03
    broken too, which that run must not grade): 03 stays as it was, 06 shows its failing heatmap beside
    its passing ones, and the header names the folder, not "."."""
    work = tmp_path / "ada-work"
    work.mkdir()
    for section_id in ("03_trainable_qkv", "06_multihead"):
        (work / f"{section_id}.py").write_text(correct_source(section_id))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def check(*args):
        done = subprocess.run([sys.executable, "-m", "autograder", "check", ".", "--report", "../out", *args],
                              cwd=work, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return (tmp_path / "out" / "report.html").read_text()

    first = check()
    assert "for <code>ada-work</code>" in first and 'data-check="combine_heads undoes' in first
    (work / "06_multihead.py").write_text(replace_def(correct_source("06_multihead"), "combine_heads", NO_SWAP_BACK))
    (work / "03_trainable_qkv.py").write_text("raise SystemExit('not graded in this run')\n")
    page = check("--section", "06_multihead")
    assert shown_sections(page) == shown_sections(first)  # every section of the first run is still there
    section_03 = re.compile(r'<section id="03_trainable_qkv">.*?</section>', re.S)
    assert section_03.search(page)[0] == section_03.search(first)[0]
    section_06 = re.search(r'<section id="06_multihead">.*?</section>', page, re.S)[0]
    failed = re.search(r'<div class="check fail" data-check="combine_heads undoes.*?</div>\s*(<figure.*?</figure>)',
                       section_06, re.S)
    assert failed and 'class="failed"' in failed[1] and "without swapping H and T back" in section_06
    assert section_06.count('<figure class="passed">') == 2  # the documented head split and output, passing
    assert "This run graded 06_multihead only" in page


def test_what_the_code_printed_is_shown_capped_and_inert():
    """The feedback report shows a section's printed output (often the clue), capped, never as markup."""
    section = SectionResult("01_scores", "Scores", [CheckResult("01_scores", "a check", 1, 0, "wrong", "check")])
    section.printed = "shape: torch.Size([6, 6])\n<img src=http://x/a.png>\n```\n**bold**\x1b[31m\n" + "z" * 5000
    result = GradeResult("ada", "cpu", [section])
    page = render_html(result)
    assert "shape: torch.Size([6, 6])" in page and "<img src=http" not in page and "&lt;img" in page
    assert "more characters not shown" in page and "z" * 2001 not in page and "\x1b" not in page
    markdown = render_markdown(result)
    block = markdown[markdown.index("What your code printed"):]
    fence = re.search(r"^(`{3,})text$", block, re.M).group(1)
    assert len(fence) >= 4  # longer than the ``` the student printed: their text cannot close it
    assert "<img src=http://x/a.png>" in block.split(fence + "text", 1)[1].split("\n" + fence + "\n", 1)[0]
    assert "z" * 2001 not in markdown
