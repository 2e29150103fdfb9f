"""The report's pictures as SVG: matplotlib's colours without matplotlib, cells where the layout
says, grey for nan and inf, the numbers, the outlines, escaped text, the same bytes every time,
and words in the reader's language (the report's own tests read them inside whole reports)."""
from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest
from support import ROOT

from autograder.feedback import colours, heatmaps
from autograder.instructor.histograms import histograms_svg

SVG = "{http://www.w3.org/2000/svg}"
NAN, INF = float("nan"), float("inf")


def parsed(data: bytes) -> ET.Element:
    return ET.fromstring(data)


def texts(picture: ET.Element, kind: str | None = None) -> list[str]:
    """The words of a picture: every text element's, or those of one class (title, panel-title, footer)."""
    return ["".join(text.itertext()) for text in picture.iter(f"{SVG}text")
            if kind is None or text.get("class") == kind]


def groups(picture: ET.Element, kind: str) -> list[ET.Element]:
    return [g for g in picture.iter(f"{SVG}g") if g.get("class") == kind]


def group_of(picture: ET.Element, kind: str, panel: int | None = None) -> ET.Element:
    (found,) = [g for g in groups(picture, kind) if panel is None or g.get("data-panel") == str(panel)]
    return found


# ------------------------------------------------------------------ the colours


def test_the_colour_table_is_matplotlibs_rdbu_r():
    """The table kept as data here gives, value for value, the colour matplotlib gives: its 256
    levels, and values spread over several scales, ends and midpoint included."""
    import matplotlib
    from matplotlib.colors import Normalize, to_hex

    reference = matplotlib.colormaps["RdBu_r"]
    assert [to_hex(reference(i)) for i in range(256)] == list(colours.TABLE)
    rng = np.random.default_rng(7)
    for limit in (1.0, 0.37, 1.5, 12.5, 1e-3, 3e4):
        values = np.concatenate([rng.uniform(-limit, limit, 4000), np.linspace(-limit, limit, 2049),
                                 [-limit, 0.0, limit, 2 * limit, -2 * limit]])
        expected = [to_hex(c) for c in reference(Normalize(-limit, limit)(values))]
        assert colours.diverging(values, limit) == expected, limit


def test_the_colour_table_test_can_fail():
    """A table off by one level somewhere is told apart (the comparison above is not vacuous)."""
    import matplotlib
    from matplotlib.colors import to_hex

    shifted = list(colours.TABLE[1:]) + [colours.TABLE[-1]]
    assert [to_hex(matplotlib.colormaps["RdBu_r"](i)) for i in range(256)] != shifted


def test_non_finite_values_are_grey():
    assert colours.diverging([NAN, INF, -INF, 0.0], 1.0) == [colours.MISSING] * 3 + [colours.TABLE[128]]


# ------------------------------------------------------------------ the heatmap


def test_every_cell_is_where_the_layout_says_in_its_colour():
    expected = np.array([[0.5, -1.0, 2.0], [NAN, 0.0, 1.0]])
    actual = np.array([[0.5, -1.0, 2.5], [0.3, INF, -INF]])
    picture = parsed(heatmaps.render(expected, actual))
    diff = heatmaps.difference(expected, actual)
    limit = 2.5
    for panel, values in enumerate((expected, actual, diff)):
        rects = group_of(picture, "cells", panel).findall(f"{SVG}rect")
        x0, y0, x1, y1 = heatmaps.panel_boxes((2, 3))[panel]
        assert len(rects) == 6
        for (r, c), value in np.ndenumerate(values):
            rect = rects[r * 3 + c]
            box = [float(rect.get(k)) for k in ("x", "y", "width", "height")]
            assert box == pytest.approx([x0 + c * (x1 - x0) / 3, y0 + r * (y1 - y0) / 2, (x1 - x0) / 3,
                                         (y1 - y0) / 2], abs=0.006)
            want = colours.MISSING if not np.isfinite(value) else colours.diverging([value], limit)[0]
            assert rect.get("fill") == want, (panel, r, c)


def test_the_differing_cells_of_yours_are_outlined_on_a_failure_only():
    expected = np.eye(4)
    actual = expected.copy()
    actual[1, 2], actual[3, 0] = 0.5, NAN
    boxes = heatmaps.panel_boxes((4, 4))[1]
    step = (boxes[2] - boxes[0]) / 4
    frames = group_of(parsed(heatmaps.render(expected, actual)), "outlines").findall(f"{SVG}rect")
    cells = {(int((float(f.get("y")) - boxes[1]) // step), int((float(f.get("x")) - boxes[0]) // step))
             for f in frames}
    assert cells == {(1, 2), (3, 0)}
    passed = parsed(heatmaps.render(expected, expected, passed=True))
    assert groups(passed, "outlines") == []


def test_values_are_printed_up_to_8_by_8_white_on_dark_cells():
    small = np.array([[1.0, 0.1], [-1.0, NAN]])
    picture = parsed(heatmaps.render(small, small, passed=True))
    numbers = groups(picture, "numbers")
    assert len(numbers) == 3
    shown = [("".join(t.itertext()), t.get("fill")) for t in numbers[0].iter(f"{SVG}text")]
    assert shown == [("1.00", "#ffffff"), ("0.10", "#000000"), ("\u22121.00", "#ffffff"), ("nan", "#000000")]
    big = np.ones((9, 9))
    assert groups(parsed(heatmaps.render(big, big)), "numbers") == []


def test_title_footer_labels_and_colour_bar():
    expected = np.array([[0.2, 0.8], [0.4, 0.6]])
    picture = parsed(heatmaps.render(expected, expected * 0, (["q1", "q2"], ["k1", "k2"]), "weights(x)"))
    assert texts(picture, "title") == ["weights(x)"]
    assert texts(picture, "panel-title") == ["expected", "yours", "yours \u2212 expected"]
    assert texts(picture, "footer") == ["4 of 4 entries differ (outlined in \u201cyours\u201d); one colour scale for all "
                                        "three panels, grey: nan or inf"]
    labels = [word for group in groups(picture, "labels") for word in texts(group)]
    assert labels.count("q1") == 3 and labels.count("k2") == 3  # on each panel
    bar = texts(group_of(picture, "colour-bar"))
    assert bar[0] == "\u22120.8" and bar[-1] == "0.8" and "0.0" in bar
    passed = parsed(heatmaps.render(expected, expected, what="weights(x)", passed=True))
    assert texts(passed, "title") == ["passed: weights(x)"]
    assert texts(passed, "footer")[0].startswith("passed: yours matches the expected values (all 4 entries)")


HOSTILE = "<script>alert(1)</script> & \"q\" 'a' ]]> <!-- \x00\x1b \ud800 http://x/y.png"


def test_any_text_is_escaped_and_the_picture_holds_no_script_or_reference():
    values = np.zeros((2, 2))
    data = heatmaps.render(values, values + 1, ([HOSTILE, "<b>"], ["&amp;", "x\"y"]), HOSTILE)
    picture = parsed(data)  # well-formed XML, whatever the words
    title = texts(picture, "title")[0]
    assert title.startswith("<script>alert(1)</script> & \"q\" 'a' ]]> <!--") and "\x00" not in title
    shown = texts(picture)
    assert "<b>" in shown and "&amp;" in shown and "x\"y" in shown
    text = data.decode("utf-8")
    assert "<script" not in text and "<!--" not in text and "]]>" not in text
    assert not re.search(r"\bon\w+=|href|<image|<foreignObject|<a[ >]", text)
    assert re.findall(r"url\(([^)]*)\)", text) == ["#scale"]  # the colour bar's own gradient, nothing outside
    assert {element.tag for element in picture.iter()} <= {f"{SVG}{tag}" for tag in (
        "svg", "defs", "linearGradient", "stop", "rect", "line", "text", "g")}


def test_the_same_matrices_give_the_same_bytes():
    import torch

    rng = np.random.default_rng(3)
    expected = rng.normal(size=(6, 6))
    actual = expected + rng.normal(scale=0.1, size=(6, 6))
    labels = (list("abcdef"), list("uvwxyz"))
    first = heatmaps.render(expected, actual, labels, "w", False)
    assert heatmaps.render(expected.copy(), actual.copy(), labels, "w", False) == first
    assert heatmaps.render(torch.tensor(expected), torch.tensor(actual), labels, "w", False) == first
    assert heatmaps.render(expected, actual + 1e-3, labels, "w", False) != first


# ------------------------------------------------------------------ in Chinese


ENGLISH_WORD = re.compile(r"[A-Za-z]{2,}")


def grader_words(picture: ET.Element) -> list[str]:
    """The words the grader itself puts in a picture: all but the title and the labels (the check's
    description, the tokens), which come translated or as data."""
    skipped = {id(t) for g in groups(picture, "labels") for t in g.iter(f"{SVG}text")}
    return [("".join(t.itertext())) for t in picture.iter(f"{SVG}text")
            if id(t) not in skipped and t.get("class") != "title"]


def test_a_chinese_heatmap_has_no_english_word(chinese):
    expected = np.array([[0.2, 0.8], [0.4, 0.6]])
    actual = np.array([[0.2, NAN], [0.4, 0.1]])
    for picture in (parsed(heatmaps.render(expected, actual, what="注意力权重")),
                    parsed(heatmaps.render(expected, expected, what="注意力权重", passed=True))):
        words = grader_words(picture)
        english = {w for text in words for w in ENGLISH_WORD.findall(text)} - {"nan", "inf"}  # values stay
        assert english == set(), words
        assert texts(picture, "panel-title") == ["期望值", "你的值", "你的值 \u2212 期望值"]
        assert "色标" in texts(picture, "footer")[0]
    assert texts(picture, "title") == ["通过：注意力权重"]


def test_the_english_word_finder_sees_an_english_picture():
    """The check above can fail: the same picture in English has English words."""
    picture = parsed(heatmaps.render(np.eye(2), np.eye(2)))
    assert {"expected", "yours", "entries"} <= {w for t in grader_words(picture) for w in ENGLISH_WORD.findall(t)}


def class_tables():
    grades = pd.DataFrame({"01_scores": [1.0, 2.5, 0.0], "total": [1.0, 2.5, 0.0]})
    sections = pd.DataFrame({"section": ["01_scores", "total"], "max_points": [2.5, 2.5],
                             "mean": [grades["01_scores"].mean()] * 2})
    return grades, sections


def test_the_histograms_speak_the_readers_language(chinese):
    picture = parsed(histograms_svg(*class_tables()))
    words = texts(picture)
    assert "分数" in words and "学生人数" in words and "总分（平均 1.17 / 2.5）" in words
    assert {w for t in words for w in ENGLISH_WORD.findall(t)} == {"scores"}  # the section's id, 01_scores


def test_the_histograms_are_drawn_the_same_every_time():
    first = histograms_svg(*class_tables())
    assert histograms_svg(*class_tables()) == first
    words = texts(parsed(first))
    assert "points" in words and "students" in words and "total (mean 1.17 / 2.5)" in words


# ------------------------------------------------------------------ the cost


def test_a_report_with_pictures_never_imports_matplotlib(tmp_path):
    """What the self-check pays for its report's pictures: no matplotlib (its import alone took
    about a second)."""
    script = (
        "import sys, numpy as np\n"
        "from autograder.core.results import CheckResult, GradeResult, SectionResult\n"
        "from autograder.feedback.report import write_report\n"
        "figure = {'expected': np.eye(3), 'actual': np.eye(3) * 2, 'labels': (None, None), 'what': 'w',"
        " 'passed': False}\n"
        "check = CheckResult('01_scores', 'c', 1, 0, 'wrong', 'check', figures=[figure])\n"
        "write_report(GradeResult('s', 'cpu', [SectionResult('01_scores', 't', [check])]), sys.argv[1])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('matplotlib', 'PIL')))\n")
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
    assert len(list((tmp_path / "heatmaps").glob("*.svg"))) == 1
