"""The reports' colour scale: RdBu_r as matplotlib defines it, without importing matplotlib.

matplotlib builds RdBu from the 11 ColorBrewer RdBu colours (below, reversed for `_r`: blue for
negative, white for zero, red for positive), placed evenly on [0, 1] and interpolated linearly
into a table of 256 colours; a value is normalised to [0, 1] between -limit and +limit and picks
the table's entry int(x * 256) (the last for x = 1). The same steps here give the same colours
(tests/test_report.py compares them with matplotlib.colormaps["RdBu_r"]), so a heatmap keeps the
look it had when matplotlib drew it, and a report costs no matplotlib import.
"""
from __future__ import annotations

import numpy as np

# ColorBrewer RdBu, 11 classes, from deep blue to deep red (RdBu_r's order)
RDBU_R_ANCHORS = ("#053061", "#2166ac", "#4393c3", "#92c5de", "#d1e5f0", "#f7f7f7",
                  "#fddbc7", "#f4a582", "#d6604d", "#b2182b", "#67001f")
LEVELS = 256  # matplotlib's default table size
MISSING = "#9e9e9e"  # nan / inf cells


def _channels(colour: str) -> tuple[float, float, float]:
    return tuple(int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5))


def _table() -> tuple[str, ...]:
    """The 256 colours of RdBu_r, each quantised to 8 bits as matplotlib's to_hex does."""
    anchors = np.array([_channels(c) for c in RDBU_R_ANCHORS])
    # matplotlib reverses a colormap by mirroring its anchor positions: 1 - k/10, not (10 - k)/10
    places = np.array([1.0 - k / 10 for k in range(10, -1, -1)])
    levels = np.linspace(0.0, 1.0, LEVELS)
    rgb = np.stack([np.interp(levels, places, anchors[:, channel]) for channel in range(3)], axis=1)
    return tuple("#" + "".join(f"{round(float(v) * 255):02x}" for v in row) for row in np.clip(rgb, 0, 1))


TABLE = _table()


def _level(values, limit: float) -> np.ndarray:
    """The table index of each value on the scale from -limit to +limit (matplotlib's rule:
    normalise, times 256, truncate, the top value into the last level)."""
    with np.errstate(invalid="ignore"):
        x = (np.asarray(values, dtype=np.float64) + limit) / (limit + limit) * LEVELS
    x = np.where(np.isfinite(x), x, 0.0)
    return np.clip(x, 0, LEVELS - 1).astype(int)


def diverging(values, limit: float) -> list[str]:
    """The colour of each value (a flat sequence) on RdBu_r from -limit to +limit; grey where it is nan or inf."""
    values = np.asarray(values, dtype=np.float64).ravel()
    indices = _level(values, limit)
    return [TABLE[i] if finite else MISSING for i, finite in zip(indices.tolist(), np.isfinite(values).tolist())]
