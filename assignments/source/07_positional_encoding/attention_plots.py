"""A small heatmap of attention weights or of a mask, to look at after a check passes.

    from attention_plots import show_weights
    show_weights(weights, labels=None, title=None)

In a square matrix rows are queries and columns are keys. A 6 x 6 matrix gets
the tokens of the worked example ("Your journey starts with one step") as
labels; a boolean mask is shown as 0/1 (1 = True = hidden); of a batch, the
first item is shown. The function never raises: if it cannot draw what it was
given, it prints one line saying why. Only matplotlib and numpy are needed;
torch tensors are accepted without importing torch here.
"""
from __future__ import annotations

import math

TOKENS = ("Your", "journey", "starts", "with", "one", "step")
ANNOTATE_MAX_SIDE = 8  # write the values in the cells up to 8 x 8
MAX_SIDE = 64  # larger matrices are not drawn


def _note(text: str) -> None:
    print(f"show_weights: {text}")


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
        raise ValueError(f"expected numbers, got {type(weights).__name__}")
    is_mask = array.dtype == bool
    if np.iscomplexobj(array):
        raise ValueError("complex values cannot be drawn")
    array = array.astype(float)
    while array.ndim > 2:  # (B, T, T) -> first item; (B, H, T, T) -> first item, first head
        if array.shape[0] == 0:
            raise ValueError("the batch is empty")
        array = array[0]
    if array.ndim == 1:
        array = array[None, :]
    if array.ndim == 0:
        raise ValueError("got a single number, expected a matrix")
    if array.size == 0:
        raise ValueError(f"the matrix is empty (shape {tuple(array.shape)})")
    if max(array.shape) > MAX_SIDE:
        raise ValueError(f"{array.shape[0]} x {array.shape[1]} is too large to draw (at most {MAX_SIDE} per side)")
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
    row_labels = labels if len(labels) == rows else None
    col_labels = labels if len(labels) == cols else None
    if row_labels is None and col_labels is None:
        _note(f"{len(labels)} labels for a {rows} x {cols} matrix; drawing without labels")
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
        _note(f"nothing drawn: {error}")
        return
    try:
        import matplotlib
        import matplotlib.pyplot as plt
        import numpy as np
    except Exception as error:  # noqa: BLE001 -- a broken install as well as a missing one
        _note(f"matplotlib is not available ({error.__class__.__name__}); nothing drawn")
        return
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
        if title:
            axes.set_title(str(title), fontsize=9)
        figure.tight_layout()
        if matplotlib.get_backend().lower() in _non_interactive_backends(matplotlib):
            figure.canvas.draw()  # nothing to show on screen: draw, then free the figure
            plt.close(figure)
        else:
            plt.show()
    except Exception as error:  # noqa: BLE001 -- a picture must never stop the notebook
        _note(f"could not draw the heatmap ({error.__class__.__name__}: {error})")
        if figure is not None:
            plt.close(figure)


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
        axes.set_xlabel("keys (1 = hidden)" if is_mask else "keys", fontsize=8)
        axes.set_ylabel("queries", fontsize=8)
    elif is_mask:
        axes.set_xlabel("1 = hidden", fontsize=8)
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
