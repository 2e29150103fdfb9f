"""Hidden checks of section 07 (Sinusoidal positional encoding): the reference solution on fresh inputs.

Never shipped to students: the self-check wheel leaves autograder/checks/hidden/ out. The
section's registry entry and its visible checks are in autograder/checks/section_07_positional_encoding.py;
the grader runs those first, then these.
"""

import math

import torch

from autograder.checks.section_07_positional_encoding import SHORT_END, START_IGNORED, encode
from autograder.core.harness import check, expect_close
from autograder.i18n import N_
from solutions import positional_encoding as ref


def variant(num_positions, d_model, start=0, *, base=10000.0, exponent="2i/d", first="sin", second="cos",
            scale=1.0) -> torch.Tensor:
    """What a common wrong encoding returns (computed in float64, returned as float32)."""
    p = torch.arange(start, start + num_positions, dtype=torch.float64).unsqueeze(1)  # (P, 1)
    col = torch.arange(d_model, dtype=torch.float64)  # (D,)
    even = col - col % 2  # 2i, for both columns of pair i
    power = {"2i/d": even / d_model, "2*(2i)/d": 2 * even / d_model, "i/d": (even / 2) / d_model,
             "j/d": col / d_model}[exponent]
    angles = p / base ** power  # (P, D)
    funcs = {"sin": torch.sin, "cos": torch.cos}
    out = torch.where(col % 2 == 0, funcs[first](angles), funcs[second](angles))
    return (out * scale).float()


MISTAKE_ARGS = {
    N_("the exponent 2*i/d with i the even column index, the slip of the notes' table in the notebook "
       "(that i is already 2i, so it gets doubled)"): {"exponent": "2*(2i)/d"},
    N_("sin and cos swapped (the even columns take the sine, the odd ones the cosine)"): {"first": "cos", "second": "sin"},
    N_("the exponent i/d with i the pair number (the exponent is 2i/d)"): {"exponent": "i/d"},
    N_("the base 1000 instead of 10000"): {"base": 1000.0},
    N_("a sine in every column (the odd columns take the cosine)"): {"second": "sin"},
    N_("a cosine in every column (the even columns take the sine)"): {"first": "cos"},
    N_("each column's own exponent j/d (a sine and the cosine after it share the angle of the even column)"):
        {"exponent": "j/d"},
}
SCALED = N_("the encoding multiplied by sqrt(d_model) (that scale belongs to the token embeddings)")
FROM_ONE = N_("positions counted from start + 1, as the notes' table counts them from 1 "
            "(row r encodes position start + r, so the first row is position start)")


def mistakes_of(num_positions, d_model, start=0) -> dict:
    wrong = {}
    for name, args in MISTAKE_ARGS.items():
        wrong[name] = variant(num_positions, d_model, start, **args)
    wrong[SCALED] = variant(num_positions, d_model, start, scale=math.sqrt(d_model))
    wrong[FROM_ONE] = variant(num_positions, d_model, start + 1)
    if start:
        wrong[START_IGNORED] = ref.sinusoidal_encoding(num_positions, d_model)
        if num_positions > start:
            wrong[SHORT_END] = \
                ref.sinusoidal_encoding(num_positions - start, d_model, start)
    return wrong


def expect_reference(student, num_positions, d_model, start=None):
    expected = ref.sinusoidal_encoding(num_positions, d_model, 0 if start is None else start)
    # the angle p / 10000^(2i/d) rounds at the scale of p in float32: the tolerance grows with the positions
    last = num_positions + (start or 0)
    expect_close(encode(student, num_positions, d_model, start), expected,
                 f"sinusoidal_encoding({num_positions}, {d_model}{'' if start is None else f', start={start}'})",
                 scale=float(max(1, last)), mistakes=mistakes_of(num_positions, d_model, start or 0))


@check(2, "sinusoidal_encoding matches the reference on new sizes")
def test_reference_sizes(student):
    for num_positions, d_model in ((50, 16), (7, 10), (128, 64), (1, 2)):
        expect_reference(student, num_positions, d_model)


@check(1.5, "sinusoidal_encoding matches the reference with new starts")
def test_reference_starts(student):
    for num_positions, d_model, start in ((30, 8, 7), (3, 12, 250), (16, 6, 1)):
        expect_reference(student, num_positions, d_model, start)
