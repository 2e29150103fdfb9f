"""A wrong answer as evidence: the fingerprint of the values a student's code returned where a check failed.

Every student's functions run on the same inputs, so two students whose failing check returned the
same wrong values, where the rest of the class's failures of that check differ, are evidence of a
shared origin that no rewrite of the code removes (instructor/similarity_answers.py weighs it). The
fingerprint is the values rounded to a grid of ANSWER_QUANTUM of their largest magnitude's decade (a
power of ten, so that two answers one a multiple of the other never share a grid's digest), so that
the same computation spelled another way (einsum for @, a sum in another order) lands on the same
digest, and a different mistake, whose values differ by far more, does not. A few of the rounded
values go with it, for the instructor to see; nothing of it is ever shown to a student.
"""
from __future__ import annotations

import hashlib
import math

ANSWER_QUANTUM = 1e-3  # the grid, relative to the answer's largest finite magnitude
SHOWN_VALUES = 6  # values kept for the instructor's page
DIGEST_CHARS = 16


def answer_of(actual) -> dict | None:
    """{"digest", "shape", "values"} of a tensor a failing check received; None for anything else
    (a wrong type has no values to compare, and an empty tensor carries no evidence)."""
    import torch

    if not isinstance(actual, torch.Tensor) or actual.numel() == 0 or actual.is_complex():
        return None
    values = actual.detach().to("cpu", torch.float64).flatten()
    finite = values[torch.isfinite(values)]
    scale = float(finite.abs().max()) if finite.numel() else 0.0
    decade = math.floor(math.log10(scale)) if scale > 0 else 0
    step = ANSWER_QUANTUM * 10.0 ** decade
    rounded = torch.where(torch.isfinite(values), torch.round(values / step), values)
    shape = [int(size) for size in actual.shape]
    text = f"{shape}|{decade}|" + ",".join(_word(value) for value in rounded.tolist())
    digest = hashlib.sha256(text.encode("ascii")).hexdigest()[:DIGEST_CHARS]
    shown = [_shown(value * step if math.isfinite(value) else value) for value in rounded[:SHOWN_VALUES].tolist()]
    return {"digest": digest, "shape": shape, "values": shown}


def _word(value: float) -> str:
    return str(int(value)) if math.isfinite(value) else str(value)


def _shown(value: float) -> float | str:
    return round(value, 4) if math.isfinite(value) else str(value)  # nan and inf as text: JSON has no number for them


def is_answer(data) -> bool:
    """Whether `data` is shaped as answer_of makes it (a record read back is checked before use)."""
    return (isinstance(data, dict) and set(data) == {"digest", "shape", "values"}
            and isinstance(data["digest"], str) and len(data["digest"]) == DIGEST_CHARS
            and all(c in "0123456789abcdef" for c in data["digest"])
            and isinstance(data["shape"], list) and all(type(s) is int and s >= 0 for s in data["shape"])
            and isinstance(data["values"], list) and len(data["values"]) <= SHOWN_VALUES
            and all(type(v) in (int, float, str) for v in data["values"]))
