"""A small heatmap of attention weights or of a mask, to look at after a check passes.

    from attention_plots import show_weights
    show_weights(weights, labels=None, title=None)

In a square matrix rows are queries and columns are keys. A 6 x 6 matrix gets
the tokens of the worked example ("Your journey starts with one step") as
labels; a boolean mask is shown as 0/1 (1 = True = hidden); of a batch, the
first item is shown. The function never raises: if it cannot draw what it was
given, it prints one line saying why. Only matplotlib and numpy are needed;
torch tensors are accepted without importing torch here.

Every word the helper prints is written `_said("English")`, every word it draws `_drawn("English")`.
The course's other languages get a copy of this file whose LANGUAGE and WORDS give their language
and its words (the course build writes it from the course's notebook catalogue). A copy in a
language written in Chinese, Japanese or Korean characters draws with a font that has them; where
matplotlib knows of none, it says so once, draws its own words in English, and leaves out of the
picture a title or label it could only draw as boxes (it prints the title instead).
"""
from __future__ import annotations

import math

TOKENS = ("Your", "journey", "starts", "with", "one", "step")
ANNOTATE_MAX_SIDE = 8  # write the values in the cells up to 8 x 8
MAX_SIDE = 64  # larger matrices are not drawn

# This copy's language and its words (English -> that language); the English copy needs none.
LANGUAGE = "en"
WORDS: dict[str, str] = {}

# Languages whose characters the usual default font (DejaVu Sans) lacks, and fonts that have them:
# the first one matplotlib knows of is used.
CJK_LANGUAGES = ("zh", "ja", "ko")
CJK_FONTS = ("Noto Sans CJK SC", "Noto Sans CJK JP", "Noto Sans CJK TC", "Noto Sans CJK KR",
             "Noto Sans SC", "Source Han Sans SC", "Source Han Sans CN", "Source Han Sans",
             "Microsoft YaHei", "PingFang SC", "Hiragino Sans GB", "Heiti SC", "SimHei",
             "WenQuanYi Zen Hei", "WenQuanYi Micro Hei", "Droid Sans Fallback")
CJK_FILE_HINTS = ("cjk", "sourcehan", "wqy", "msyh", "pingfang", "simhei", "droidsansfallback", "notosanssc")
_said_no_font = []  # not empty once the missing font was said: once, not at every picture
_looked_for_fonts = []  # not empty once the installed fonts were looked through (slow: once)


def _said(english: str) -> str:
    """Printed words in this copy's language (a notebook's output shows any character)."""
    return WORDS.get(english, english)


def _drawn(english: str) -> str:
    """Drawn words in this copy's language, or in English where no font could draw them."""
    return WORDS.get(english, english) if _can_draw_words() else english


def _note(text: str) -> None:
    print(f"show_weights: {text}")


def known_fonts() -> set[str]:
    """The names of the fonts matplotlib knows of (one function, so that a test can change it)."""
    from matplotlib import font_manager

    return {entry.name for entry in font_manager.fontManager.ttflist}


def _add_installed_cjk_fonts() -> None:
    """Tell matplotlib of CJK font files installed since it made its font cache (it reads the cache only)."""
    from matplotlib import font_manager

    known = {entry.fname for entry in font_manager.fontManager.ttflist}
    for path in font_manager.findSystemFonts():
        name = path.replace("-", "").replace("_", "").replace(" ", "").lower()
        if path not in known and any(hint in name for hint in CJK_FILE_HINTS):
            try:
                font_manager.fontManager.addfont(path)
            except Exception:  # noqa: BLE001 -- a file matplotlib cannot read: the next one
                continue


def cjk_font() -> str | None:
    """The first of CJK_FONTS that matplotlib knows of (looking once for newly installed ones), or None."""
    try:
        known = known_fonts()
        if not any(name in known for name in CJK_FONTS) and not _looked_for_fonts:
            _looked_for_fonts.append(True)
            _add_installed_cjk_fonts()
            known = known_fonts()
    except Exception:  # noqa: BLE001 -- no matplotlib or a broken one: nothing is drawn anyway
        return None
    return next((name for name in CJK_FONTS if name in known), None)


def _can_draw_words() -> bool:
    return LANGUAGE not in CJK_LANGUAGES or cjk_font() is not None


def _can_draw(text: str) -> bool:
    """Whether `text` (a caller's title or label) can be drawn without boxes."""
    return text.isascii() or _can_draw_words()


def _font_settings(matplotlib) -> dict:
    """matplotlib's settings for this copy's pictures: a CJK font first where the language needs one."""
    if LANGUAGE not in CJK_LANGUAGES:
        return {}
    font = cjk_font()
    if font is None:
        if not _said_no_font:
            _said_no_font.append(True)
            _note(_said("no font with Chinese, Japanese or Korean characters is installed (e.g. {font}); "
                        "the pictures' own words are in English").format(font=CJK_FONTS[0]))
        return {}
    return {"font.family": [font, *matplotlib.rcParams["font.family"]]}  # the others for what it lacks


def _to_matrix(weights):
    """(2-D float array, is_mask) or raise ValueError with a short reason."""
    import numpy as np

    if hasattr(weights, "detach"):  # a torch tensor: leave autograd and the device behind
        weights = weights.detach()
        if hasattr(weights, "cpu"):
            weights = weights.cpu()
        if hasattr(weights, "numpy"):
            weights = weights.numpy()
    array = np.asarray(weights)
    if array.dtype == object:
        raise ValueError(_said("expected numbers, got {kind}").format(kind=type(weights).__name__))
    is_mask = array.dtype == bool
    if np.iscomplexobj(array):
        raise ValueError(_said("complex values cannot be drawn"))
    array = array.astype(float)
    while array.ndim > 2:  # (B, T, T) -> first item; (B, H, T, T) -> first item, first head
        if array.shape[0] == 0:
            raise ValueError(_said("the batch is empty"))
        array = array[0]
    if array.ndim == 1:
        array = array[None, :]
    if array.ndim == 0:
        raise ValueError(_said("got a single number, expected a matrix"))
    if array.size == 0:
        raise ValueError(_said("the matrix is empty (shape {shape})").format(shape=tuple(array.shape)))
    if max(array.shape) > MAX_SIDE:
        raise ValueError(_said("{rows} x {cols} is too large to draw (at most {most} per side)").format(
            rows=array.shape[0], cols=array.shape[1], most=MAX_SIDE))
    return array, is_mask


def _axis_labels(labels, shape):
    """(row labels, column labels), each a list of strings or None."""
    rows, cols = shape
    if labels is None:
        if shape == (len(TOKENS), len(TOKENS)):
            return list(TOKENS), list(TOKENS)
        return None, None
    if isinstance(labels, str):
        labels = labels.split()
    labels = [str(label) for label in labels]
    if not all(_can_draw(label) for label in labels):  # boxes say nothing: no labels then
        return None, None
    row_labels = labels if len(labels) == rows else None
    col_labels = labels if len(labels) == cols else None
    if row_labels is None and col_labels is None:
        _note(_said("{count} labels for a {rows} x {cols} matrix; drawing without labels").format(
            count=len(labels), rows=rows, cols=cols))
    return row_labels, col_labels


def cell_text(value: float, is_mask: bool) -> str:
    if is_mask:
        return str(int(value))
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = f"{value:.2f}"
    return "0.00" if text == "-0.00" else text


def _non_interactive_backends(matplotlib) -> set[str]:
    names = {"agg", "cairo", "pdf", "pgf", "ps", "svg", "template"}
    try:  # matplotlib >= 3.9
        from matplotlib.backends import BackendFilter, backend_registry

        names.update(backend_registry.list_builtin(BackendFilter.NON_INTERACTIVE))
    except Exception:  # noqa: BLE001 -- older matplotlib
        names.update(getattr(matplotlib.rcsetup, "non_interactive_bk", ()))
    return {name.lower() for name in names}


def show_weights(weights, labels=None, title=None):
    """Draw `weights` (a matrix, a batch of them, or a mask) as a small heatmap.

    labels: names for the rows and/or columns (a list, or one string split at spaces);
    by default the worked example's six tokens for a 6 x 6 matrix.
    Returns None; under a non-interactive backend (e.g. Agg) the figure is only drawn.
    """
    try:
        matrix, is_mask = _to_matrix(weights)
    except Exception as error:  # noqa: BLE001 -- odd input: say so, do not stop the notebook
        _note(_said("nothing drawn: {error}").format(error=error))
        return
    try:
        import matplotlib
        import matplotlib.pyplot as plt
        import numpy as np
    except Exception as error:  # noqa: BLE001 -- a broken install as well as a missing one
        _note(_said("matplotlib is not available ({error}); nothing drawn").format(error=error.__class__.__name__))
        return
    figure = None
    try:
        with plt.rc_context(_font_settings(matplotlib)):  # shown inside too: text is laid out then
            figure = _draw(matrix, is_mask, labels, title, (matplotlib, plt, np))
            if matplotlib.get_backend().lower() in _non_interactive_backends(matplotlib):
                plt.close(figure)  # nothing to show on screen: drawn, now freed
            else:
                plt.show()
    except Exception as error:  # noqa: BLE001 -- a picture must never stop the notebook
        _note(_said("could not draw the heatmap ({error})").format(error=f"{error.__class__.__name__}: {error}"))
        if figure is not None:
            plt.close(figure)


def _draw(matrix, is_mask, labels, title, modules):
    """The figure of the heatmap, drawn (the font settings in force while its text is laid out)."""
    matplotlib, plt, np = modules
    figure = None
    try:
        rows, cols = matrix.shape
        low, high = _scale(matrix, is_mask, np)
        side = 0.45
        figure, axes = plt.subplots(figsize=(min(1.6 + side * cols, 7.5), min(1.2 + side * rows, 7.0)))
        colours = matplotlib.colormaps["Greys" if is_mask else "Blues"]
        colours = colours.with_extremes(bad="#d9a441")  # nan and +-inf, e.g. masked scores
        image = axes.imshow(np.ma.masked_invalid(matrix), cmap=colours, vmin=low, vmax=high,
                            interpolation="nearest", aspect="equal")
        _label_axes(axes, labels, (rows, cols), is_mask)
        if max(rows, cols) <= ANNOTATE_MAX_SIDE:
            _write_values(axes, matrix, is_mask, (low + high) / 2, np)
        if not is_mask:
            figure.colorbar(image, ax=axes, fraction=0.046, pad=0.04).ax.tick_params(labelsize=7)
        if title and _can_draw(str(title)):
            axes.set_title(str(title), fontsize=9)
        elif title:
            print(title)  # no font for it: boxes would say nothing
        figure.tight_layout()
        figure.canvas.draw()
        return figure
    except Exception:
        if figure is not None:
            plt.close(figure)
        raise


def _scale(matrix, is_mask, np) -> tuple[float, float]:
    """The colour scale: 0 to 1 for weights and masks (one fixed scale), else the finite values' range."""
    finite = matrix[np.isfinite(matrix)]
    if is_mask or (finite.size and finite.min() >= 0 and finite.max() <= 1):
        return 0.0, 1.0
    if finite.size:
        low, high = float(finite.min()), float(finite.max())
        return (low - 0.5, high + 0.5) if low == high else (low, high)
    return 0.0, 1.0


def _label_axes(axes, labels, shape, is_mask) -> None:
    rows, cols = shape
    row_labels, col_labels = _axis_labels(labels, (rows, cols))
    axes.set_xticks(range(cols))
    axes.set_yticks(range(rows))
    if col_labels:
        axes.set_xticklabels(col_labels, rotation=45, ha="right")
    if row_labels:
        axes.set_yticklabels(row_labels)
    if rows == cols:  # an attention matrix or a causal mask: rows are queries, columns keys
        axes.set_xlabel(_drawn("keys (1 = hidden)") if is_mask else _drawn("keys"), fontsize=8)
        axes.set_ylabel(_drawn("queries"), fontsize=8)
    elif is_mask:
        axes.set_xlabel(_drawn("1 = hidden"), fontsize=8)
    axes.tick_params(labelsize=8)


def _write_values(axes, matrix, is_mask, middle, np) -> None:
    """Each cell's value in it, white on the dark cells (above the middle of the scale)."""
    rows, cols = matrix.shape
    for i in range(rows):
        for j in range(cols):
            value = matrix[i, j]
            dark = np.isfinite(value) and value > middle
            axes.text(j, i, cell_text(value, is_mask), ha="center", va="center",
                      fontsize=7, color="white" if dark else "black")
