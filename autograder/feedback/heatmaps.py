"""Heatmaps for the feedback report: the expected matrix, the student's, and their difference.

A failing comparison outlines the cells that differ; a passing one (shown so that a student
who got it right sees the worked example's weights too) says so in its title and footer.

Rendering is deterministic: the Agg canvas (no pyplot, no GUI backend, no
global state), a fixed figure size, dpi, layout and font, and PNGs written
without the "Software" metadata. The same matrices always give the same bytes.

The layout is fixed in pixels so that a test can find every cell:
`panel_boxes(shape)` gives the three panels' boxes (x0, y0, x1, y1), origin at
the top left of the image.
"""
from __future__ import annotations

import functools
import io
import math
import unicodedata

import numpy as np

WIDTH, HEIGHT, DPI = 1200, 440, 100  # pixels
PANEL = 260  # the side of a square panel, in pixels
PANEL_LEFTS = (90, 460, 830)  # x of each panel's left edge
PANEL_TOP = 70  # room for the title above, for rotated column labels below
COLORBAR = (1110, 1124)  # x range of the shared colour bar
TITLES = ("expected", "yours", "yours \u2212 expected")
CMAP = "RdBu_r"  # diverging, 0 is white: weights and differences on one scale
MISSING = "#9e9e9e"  # nan / inf cells
ANNOTATE_MAX_SIDE = 8  # print the values in the cells up to 8 x 8
STYLE = {
    "font.family": "DejaVu Sans",  # ships with matplotlib: the same glyphs everywhere
    "font.size": 9,
    "axes.titlesize": 10,
    "figure.titlesize": 11,
    "text.antialiased": True,
    "image.interpolation": "nearest",
    "savefig.dpi": DPI,
    "svg.hashsalt": "attention-course",
}


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
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def figure_png(figure) -> bytes:
    """The PNG of a matplotlib Figure, without metadata that varies between versions or runs."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    return buffer.getvalue()


PASSED_TITLE = "passed: "  # before a passing comparison's title


def footer(differs: np.ndarray, passed: bool) -> str:
    """The line under the panels: how many entries differ, or that the comparison passed."""
    scale = "one colour scale for all three panels, grey: nan or inf"
    if passed:
        return f"passed: yours matches the expected values (all {differs.size} entries); {scale}"
    return f"{int(differs.sum())} of {differs.size} entries differ (outlined in \u201cyours\u201d); {scale}"


# The picture's own words (panel titles, footer) stay English: matplotlib's bundled DejaVu Sans has
# no CJK glyphs and draws Chinese as empty boxes. A title or labels that arrive in Chinese (a
# translated check's `what`, a label) are drawn with a CJK font where one is installed; without one
# the title is left out (the report's caption under the picture says it) and the labels are numbered.
CJK_FONTS = ("Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "WenQuanYi Zen Hei",
             "WenQuanYi Micro Hei", "SimHei", "Microsoft YaHei", "PingFang SC")


@functools.lru_cache(maxsize=1)
def cjk_font() -> str | None:
    """The name of an installed font that draws Chinese, or None."""
    from matplotlib import font_manager

    installed = {font.name for font in font_manager.fontManager.ttflist}
    return next((name for name in CJK_FONTS if name in installed), None)


def is_wide(text: str) -> bool:
    return any(unicodedata.east_asian_width(c) in "WF" for c in str(text))


def _style(texts) -> dict:
    """STYLE, with a CJK font after DejaVu Sans where some of `texts` needs one and one is installed."""
    font = cjk_font() if any(is_wide(t) for t in texts) else None
    return {**STYLE, "font.family": [STYLE["font.family"], font]} if font else STYLE


def _drawable(labels):
    """`labels` where every one can be drawn, else None (numbered instead)."""
    return labels if not labels or cjk_font() or not any(is_wide(t) for t in labels) else None


def render(expected, actual, labels=(None, None), what: str = "", passed: bool = False) -> bytes:
    """The PNG of the three panels for two matrices of the same (rows, cols) shape;
    `passed`: the check found them equal (within its tolerance): said in the title and footer."""
    import matplotlib
    from matplotlib.colors import Normalize
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    expected, actual = as_array(expected), as_array(actual)
    if expected.shape != actual.shape or expected.ndim != 2:
        raise ValueError(f"need two matrices of one shape, got {expected.shape} and {actual.shape}")
    diff = difference(expected, actual)
    shape = expected.shape
    panels = (expected, actual, diff)
    finite = np.concatenate([p[np.isfinite(p)] for p in panels])
    limit = float(np.abs(finite).max()) if finite.size else 1.0
    limit = limit if limit > 0 else 1.0
    norm = Normalize(vmin=-limit, vmax=limit)
    cmap = matplotlib.colormaps[CMAP].with_extremes(bad=MISSING)
    row_labels, col_labels = (_drawable(names) for names in (labels if labels else (None, None)))
    differs = ~np.isclose(actual, expected, rtol=1e-4, atol=1e-4 * max(1.0, limit), equal_nan=True)

    title = (PASSED_TITLE if passed else "") + what
    with matplotlib.rc_context(_style([title, *(row_labels or []), *(col_labels or [])])):
        fig = Figure(figsize=(WIDTH / DPI, HEIGHT / DPI), dpi=DPI)
        fig.patch.set_facecolor("white")
        if title and (cjk_font() or not is_wide(title)):
            fig.text(0.5, 1 - 18 / HEIGHT, _shorten(title, 120), ha="center", va="center",
                     fontsize=STYLE["figure.titlesize"], color="#1a7f37" if passed else "black")
        image = None
        for index, (values, box) in enumerate(zip(panels, panel_boxes(shape))):
            x0, y0, x1, y1 = box
            ax = fig.add_axes((x0 / WIDTH, 1 - y1 / HEIGHT, (x1 - x0) / WIDTH, (y1 - y0) / HEIGHT))
            shown = np.where(np.isfinite(values), values, np.nan)
            image = ax.imshow(np.ma.masked_invalid(shown), cmap=cmap, norm=norm, aspect="auto",
                              interpolation="nearest")
            ax.set_title(TITLES[index], pad=6)
            ax.set_xticks(range(shape[1]))
            ax.set_yticks(range(shape[0]))
            ax.set_xticklabels(col_labels if col_labels else [str(i) for i in range(shape[1])],
                               rotation=45 if col_labels else 0, ha="right" if col_labels else "center",
                               rotation_mode="anchor")
            ax.set_yticklabels(row_labels if row_labels else [str(i) for i in range(shape[0])])
            ax.tick_params(length=2, labelsize=8)
            if max(shape) <= ANNOTATE_MAX_SIDE:
                for (r, c), value in np.ndenumerate(values):
                    dark = math.isfinite(value) and abs(value) > 0.6 * limit
                    ax.text(c, r, cell_text(value), ha="center", va="center", fontsize=7,
                            color="white" if dark else "black")
            if index == 1 and not passed:  # outline the cells where yours differs from the expected
                for r, c in zip(*np.nonzero(differs)):
                    ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, linewidth=1.4,
                                           edgecolor="black"))
        bar = fig.add_axes((COLORBAR[0] / WIDTH, 1 - (PANEL_TOP + PANEL) / HEIGHT,
                            (COLORBAR[1] - COLORBAR[0]) / WIDTH, PANEL / HEIGHT))
        fig.colorbar(image, cax=bar)
        bar.tick_params(labelsize=8)
        fig.text(0.5, 14 / HEIGHT, footer(differs, passed), ha="center", va="center", fontsize=8,
                 color="#444444")
        return figure_png(fig)


# A picture drawn ahead, while the checks ran (prerender.Drawer installs it): figure -> PNG or None
drawn_ahead = None


def warm_up() -> None:
    """Import what drawing uses (about a second), before the first picture is asked for."""
    import matplotlib.backends.backend_agg  # noqa: F401
    import matplotlib.colors  # noqa: F401
    import matplotlib.figure  # noqa: F401
    import matplotlib.patches  # noqa: F401


def render_figure(figure: dict) -> bytes:
    """render() for one of the figure dicts a check carries (CheckResult.figures)."""
    ahead = drawn_ahead(figure) if drawn_ahead is not None else None
    if ahead is not None:
        return ahead
    return render(figure["expected"], figure["actual"], figure.get("labels") or (None, None),
                  figure.get("what", ""), bool(figure.get("passed")))
