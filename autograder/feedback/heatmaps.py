"""Heatmaps for the feedback report: the expected matrix, the student's, and their difference.

A failing comparison outlines the cells that differ; a passing one (shown so that a student
who got it right sees the worked example's weights too) says so in its title and footer.

Drawn as SVG by our own code (feedback/svg.py, feedback/colours.py), not by matplotlib: a
picture costs milliseconds and no import, and its words, which go through the catalogues like
every other sentence of the report, are drawn by the reader's browser in the reader's fonts
(Chinese too). The colours are matplotlib's RdBu_r, one scale for all three panels.

Deterministic: the same matrices always give the same bytes.

The layout is fixed in pixels so that a test can find every cell:
`panel_boxes(shape)` gives the three panels' boxes (x0, y0, x1, y1), origin at
the top left of the picture; each panel's cells are the rectangles of its
`<g class="cells" data-panel="N">`, the outlines those of `<g class="outlines">`.
"""
from __future__ import annotations

import math

import numpy as np

from autograder.core.shortening import shorten
from autograder.feedback import svg
from autograder.feedback.colours import RDBU_R_ANCHORS, diverging
from autograder.feedback.formats import display_width
from autograder.i18n import _, _f

WIDTH, HEIGHT = 1200, 440  # pixels
PANEL = 260  # the side of a square panel, in pixels
PANEL_LEFTS = (90, 460, 830)  # x of each panel's left edge
PANEL_TOP = 70  # room for the title above, for rotated column labels below
COLORBAR = (1110, 1124)  # x range of the shared colour bar
ANNOTATE_MAX_SIDE = 8  # print the values in the cells up to 8 x 8
LABEL_LIMIT = 12  # columns of a row or column label shown
TITLE_LIMIT = 120  # columns of the title shown (a Chinese character takes two)
PASSED_COLOUR, TEXT_COLOUR, FOOTER_COLOUR = "#1a7f37", "#000000", "#444444"


def panel_boxes(shape) -> list[tuple[int, int, int, int]]:
    """Pixel boxes (x0, y0, x1, y1) of the expected, yours and difference panels for a (rows, cols) matrix."""
    rows, cols = shape
    if rows >= cols:
        width, height = max(round(PANEL * cols / rows), 24), PANEL
    else:
        width, height = PANEL, max(round(PANEL * rows / cols), 24)
    top = PANEL_TOP + (PANEL - height) // 2
    return [(left, top, left + width, top + height) for left in PANEL_LEFTS]


def as_array(matrix) -> np.ndarray:
    if hasattr(matrix, "detach"):
        matrix = matrix.detach().cpu().double().numpy()
    array = np.array(matrix, dtype=np.float64)
    return array.reshape(1, -1) if array.ndim == 1 else array


def difference(expected: np.ndarray, actual: np.ndarray) -> np.ndarray:
    """actual - expected; 0 where both hold the same non-finite value, nan where only one is finite."""
    with np.errstate(invalid="ignore"):
        diff = actual - expected
    same = (expected == actual) | (np.isnan(expected) & np.isnan(actual))
    diff[same] = 0.0
    diff[~np.isfinite(diff)] = np.nan
    return diff


def cell_text(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "\u2212inf"
    text = f"{value:.2f}"
    return "0.00" if text == "-0.00" else text.replace("-", "\u2212")


def _shorten(text: str, limit: int) -> str:
    """`text` in at most `limit` columns (a Chinese character takes two), cut between words."""
    return shorten(text, limit, measure=display_width)


def panel_titles() -> tuple[str, str, str]:
    # i18n: the titles of the heatmap's three panels (also the labels above the numbers in report.md)
    return _("expected"), _("yours"), _("yours \u2212 expected")


def footer(differs: np.ndarray, passed: bool) -> str:
    """The line under the panels: how many entries differ, or that the comparison passed."""
    scale = _("one colour scale for all three panels, grey: nan or inf")
    if passed:
        return _f("passed: yours matches the expected values (all {count} entries); {scale}",
                  count=differs.size, scale=scale)
    return _f("{differ} of {count} entries differ (outlined in \u201cyours\u201d); {scale}",
              differ=int(differs.sum()), count=differs.size, scale=scale)


def title(what: str, passed: bool) -> str:
    return _f("passed: {what}", what=what) if passed else what


def scale_limit(panels) -> float:
    """The largest finite magnitude of the three panels: the colour scale runs from -it to +it."""
    finite = np.concatenate([p[np.isfinite(p)] for p in panels])
    limit = float(np.abs(finite).max()) if finite.size else 1.0
    return limit if limit > 0 else 1.0


def _cell_size(box, shape) -> tuple[float, float]:
    x0, y0, x1, y1 = box
    return (x1 - x0) / shape[1], (y1 - y0) / shape[0]


def _cells(values: np.ndarray, box, limit: float, index: int) -> str:
    """A panel's cells, one rectangle each, in row order."""
    width, height = _cell_size(box, values.shape)
    fills = diverging(values, limit)
    cells = [svg.rect(box[0] + c * width, box[1] + r * height, width, height, fill=fills[r * values.shape[1] + c])
             for r in range(values.shape[0]) for c in range(values.shape[1])]
    return svg.group(cells, class_="cells", data_panel=str(index), shape_rendering="crispEdges")


def _numbers(values: np.ndarray, box, limit: float) -> str:
    """The values printed in their cells: white on the darker colours."""
    width, height = _cell_size(box, values.shape)
    texts = []
    for (r, c), value in np.ndenumerate(values):
        dark = math.isfinite(value) and abs(value) > 0.6 * limit
        texts.append(svg.text(box[0] + (c + 0.5) * width, box[1] + (r + 0.5) * height, cell_text(value), 9,
                              fill="#ffffff" if dark else TEXT_COLOUR))
    return svg.group(texts, class_="numbers")


def _outlines(differs: np.ndarray, box) -> str:
    """A black frame, inside its cell, around every cell of "yours" that differs from the expected."""
    width, height = _cell_size(box, differs.shape)
    frames = [svg.rect(box[0] + c * width + 0.7, box[1] + r * height + 0.7, width - 1.4, height - 1.4)
              for r, c in zip(*np.nonzero(differs))]
    return svg.group(frames, class_="outlines", fill="none", stroke="#000000", stroke_width="1.4")


def _axis_labels(box, shape, labels) -> str:
    """Row labels left of a panel, column labels under it (slanted when named, else numbered)."""
    rows, cols = labels
    width, height = _cell_size(box, shape)
    x0, y0, _x1, y1 = box
    texts = [svg.text(x0 - 5, y0 + (r + 0.5) * height, _shorten(name, LABEL_LIMIT), 10, anchor="end")
             for r, name in enumerate(rows or [str(i) for i in range(shape[0])])]
    for c, name in enumerate(cols or [str(i) for i in range(shape[1])]):
        x = x0 + (c + 0.5) * width
        if cols:
            texts.append(svg.text(x, y1 + 8, _shorten(name, LABEL_LIMIT), 10, anchor="end",
                                  transform=f"rotate(-45 {svg.number(x)} {svg.number(y1 + 8)})"))
        else:
            texts.append(svg.text(x, y1 + 10, name, 10))
    return svg.group(texts, class_="labels")


def _colour_bar(limit: float) -> str:
    """The shared scale, from -limit (bottom) to +limit (top), with round ticks."""
    left, right = COLORBAR
    top, bottom = PANEL_TOP, PANEL_TOP + PANEL
    parts = [svg.rect(left, top, right - left, PANEL, fill="url(#scale)", stroke="#000000", stroke_width="0.8")]
    ticks = svg.nice_ticks(-limit, limit)
    for tick in ticks:
        y = bottom - (tick + limit) / (2 * limit) * PANEL
        parts.append(svg.line(right, y, right + 4, y, stroke="#000000", stroke_width="0.8"))
        parts.append(svg.text(right + 7, y, svg.tick_text(tick, ticks), 10, anchor="start"))
    return svg.group(parts, class_="colour-bar")


def render(expected, actual, labels=(None, None), what: str = "", passed: bool = False) -> bytes:
    """The SVG of the three panels for two matrices of the same (rows, cols) shape;
    `passed`: the check found them equal (within its tolerance): said in the title and footer."""
    expected, actual = as_array(expected), as_array(actual)
    if expected.shape != actual.shape or expected.ndim != 2:
        raise ValueError(f"need two matrices of one shape, got {expected.shape} and {actual.shape}")
    panels = (expected, actual, difference(expected, actual))
    limit = scale_limit(panels)
    differs = ~np.isclose(actual, expected, rtol=1e-4, atol=1e-4 * max(1.0, limit), equal_nan=True)
    labels = tuple(labels) if labels else (None, None)
    body = []
    heading = title(what, passed)
    if heading.strip():
        body.append(svg.text(WIDTH / 2, 18, _shorten(heading, TITLE_LIMIT), 15, class_="title",
                             fill=PASSED_COLOUR if passed else TEXT_COLOUR))
    for index, (values, box, name) in enumerate(zip(panels, panel_boxes(expected.shape), panel_titles())):
        body.append(svg.text((box[0] + box[2]) / 2, box[1] - 10, name, 13, class_="panel-title"))
        body.append(_cells(values, box, limit, index))
        if max(expected.shape) <= ANNOTATE_MAX_SIDE:
            body.append(_numbers(values, box, limit))
        if index == 1 and not passed:  # outline the cells where yours differs from the expected
            body.append(_outlines(differs, box))
        body.append(svg.rect(box[0], box[1], box[2] - box[0], box[3] - box[1], class_="frame", fill="none",
                             stroke="#000000", stroke_width="0.8"))
        body.append(_axis_labels(box, expected.shape, labels))
    body.append(_colour_bar(limit))
    body.append(svg.text(WIDTH / 2, HEIGHT - 14, footer(differs, passed), 11, class_="footer", fill=FOOTER_COLOUR))
    return svg.document(WIDTH, HEIGHT, body, [svg.vertical_gradient("scale", RDBU_R_ANCHORS)])


def render_figure(figure: dict) -> bytes:
    """render() for one of the figure dicts a check carries (CheckResult.figures)."""
    return render(figure["expected"], figure["actual"], figure.get("labels") or (None, None),
                  figure.get("what", ""), bool(figure.get("passed")))

