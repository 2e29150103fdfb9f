"""The class report's histograms: the score distribution of each section and of the total, as SVG.

Small multiples, four to a row, each 300 x 300 pixels: ten bars from 0 to the section's maximum
points (scores outside are counted in the first or last bar), the section's name, mean and
maximum above, its axes' words translated like every other word of the report. Drawn by
feedback/svg.py rather than matplotlib, for the reasons given there; the same grades give the
same bytes.
"""
from __future__ import annotations

import math

import numpy as np

from autograder.feedback import svg
from autograder.i18n import _, _f

COLUMNS, CELL = 4, 300  # histograms per row; the side of each one's square, in pixels
WIDTH = COLUMNS * CELL
MARGINS = (52, 14, 34, 48)  # left, right, top, bottom of a plot inside its square
PLOT_WIDTH, PLOT_HEIGHT = CELL - MARGINS[0] - MARGINS[1], CELL - MARGINS[2] - MARGINS[3]
BINS = 10
SECTION_COLOUR, TOTAL_COLOUR, AXIS_COLOUR = "#0969da", "#8250df", "#000000"


def size(count: int) -> tuple[int, int]:
    """(width, height) of the picture of `count` histograms."""
    return WIDTH, CELL * max(1, math.ceil(count / COLUMNS))


def top_of(max_points: float, scores: np.ndarray) -> float:
    """The right end of a histogram's axis: the section's maximum points, else its best score, else 1."""
    if max_points == max_points and max_points > 0:
        return float(max_points)
    return float(scores.max()) if scores.size and scores.max() > 0 else 1.0


def histogram(scores: np.ndarray, top: float, left: float, upper: float, colour: str) -> list[str]:
    """The bars and axes of one histogram whose plot's top-left corner is (left, upper)."""
    width, height = PLOT_WIDTH, PLOT_HEIGHT
    bottom = upper + height
    counts, _edges = np.histogram(np.clip(scores, 0.0, top), bins=np.linspace(0.0, top, BINS + 1))
    highest = max(int(counts.max()) if counts.size else 0, 1)
    y_ticks = [t for t in svg.nice_ticks(0, highest, most=6) if t == int(t)] or [0.0]
    y_top = max(highest, y_ticks[-1]) * 1.05  # headroom above the tallest bar
    bar = width / BINS
    parts = [svg.rect(left + k * bar, bottom - count / y_top * height, bar, count / y_top * height, fill=colour,
                      stroke="#ffffff", stroke_width="1") for k, count in enumerate(counts.tolist()) if count]
    parts.append(svg.line(left, bottom, left + width, bottom, stroke=AXIS_COLOUR))
    parts.append(svg.line(left, upper, left, bottom, stroke=AXIS_COLOUR))
    x_ticks = svg.nice_ticks(0.0, top, most=6)
    for tick in x_ticks:
        x = left + tick / top * width
        parts += [svg.line(x, bottom, x, bottom + 3, stroke=AXIS_COLOUR),
                  svg.text(x, bottom + 11, svg.tick_text(tick, x_ticks), 9)]
    for tick in y_ticks:
        y = bottom - tick / y_top * height
        parts += [svg.line(left - 3, y, left, y, stroke=AXIS_COLOUR),
                  svg.text(left - 6, y, f"{int(tick)}", 9, anchor="end")]
    # i18n: the histograms' axes: the score (x) and how many students have it (y)
    parts.append(svg.text(left + width / 2, bottom + 28, _("points"), 10, class_="axis-name"))
    parts.append(svg.text(left - 36, upper + height / 2, _("students"), 10, class_="axis-name",
                          transform=f"rotate(-90 {svg.number(left - 36)} {svg.number(upper + height / 2)})"))
    return parts


def histograms_svg(grades, sections) -> bytes:
    """Small multiples: the score distribution of each section and of the total (from grades.csv)."""
    rows = list(sections.itertuples())
    width, height = size(len(rows))
    body = []
    for index, row in enumerate(rows):
        scores = np.asarray(grades[row.section], dtype=float)
        scores = scores[np.isfinite(scores)]
        top = top_of(row.max_points, scores)
        left = (index % COLUMNS) * CELL + MARGINS[0]
        upper = (index // COLUMNS) * CELL + MARGINS[2]
        # i18n: "total" names the histogram of the whole grade (the others are named by their section's id)
        name = _("total") if row.section == "total" else row.section
        title = _f("{section} (mean {mean:.3g} / {top:g})", section=name, mean=row.mean, top=top)
        colour = TOTAL_COLOUR if row.section == "total" else SECTION_COLOUR
        body.append(svg.group([svg.text(left + PLOT_WIDTH / 2, upper - 16, title, 12,
                                        class_="title"),
                               *histogram(scores, top, left, upper, colour)],
                              class_="histogram", data_section=row.section))
    return svg.document(width, height, body)
