"""Checks of section 07 (bonus): the sinusoidal positional encoding (10 points).

The section's registry entry (SECTION) and its visible checks: the documented encodings, then the properties
that need no reference (a float32 (P, D) tensor, values in [-1, 1], each sine column paired with a cosine of
the same angle, `start` shifting the rows, odd sizes, no Python loop over positions). The self-check runs them
and the students' wheel ships this module as it is, so nothing here imports `solutions` or holds a hidden
size's expected output. The hidden checks, which the grader runs after these, compare with the reference on
fresh sizes and starts: they are in checks/hidden/hidden_07_positional_encoding.py.

Every check but the dtype one compares the student's values as float32, so an encoding built in float64 loses
the dtype check's points and no others.
"""

SECTION = {  # the registry's entry (autograder/core/sections.py reads it without importing this file)
    "title": "Sinusoidal positional encoding",
    "solution": "solutions.positional_encoding",
    "names": ("sinusoidal_encoding",),
    "bonus": True,
    "rules": {"no_loop": ("sinusoidal_encoding",), "float32": ("sinusoidal_encoding",)},
}

import math

import torch

from autograder.checks.common import expect_no_loop, expect_not_hard_coded
from autograder.core.harness import CheckFailed, StudentFailure, check, expect, expect_close, expect_shape
from autograder.i18n import N_, _, _f

DOC_4x4 = torch.tensor(
    [[0.0000, 1.0000, 0.0000, 1.0000],
     [0.8415, 0.5403, 0.0100, 0.9999],
     [0.9093, -0.4161, 0.0200, 0.9998],
     [0.1411, -0.9900, 0.0300, 0.9996]])
DOC_WORKED = torch.tensor(  # positions 1..6 in 3 dims, the rows added to the worked example's tokens
    [[0.8415, 0.5403, 0.0022],
     [0.9093, -0.4161, 0.0043],
     [0.1411, -0.9900, 0.0065],
     [-0.7568, -0.6536, 0.0086],
     [-0.9589, 0.2837, 0.0108],
     [-0.2794, 0.9602, 0.0129]])

# said where no known mistake matches the values: the formula only, naming no mistake the student may not have made
DOC_HINT = N_("Check the formula column by column: PE[p, 2i] = sin(p / 10000^(2i/d_model)) and "
              "PE[p, 2i+1] = cos of the same angle, where 2i is the even column's own index")
START_IGNORED = N_("start ignored (the rows always begin at position 0)")
SHORT_END = N_("positions from start to num_positions (the last position is start + num_positions - 1)")
ODD_D = N_("an odd d_model not handled (it has one sine column more than cosine columns)")
ODD_HINT = N_("for an odd d_model the even slice 0::2 has one column more than the odd slice 1::2: "
            "give the cosines only the first d_model // 2 angles")


def labels(num_positions: int, d_model: int, start: int = 0) -> tuple:
    """Heatmap axes: rows are positions, columns say which function fills them."""
    return ([f"p={start + r}" for r in range(num_positions)],
            [f"{'sin' if j % 2 == 0 else 'cos'} {j}" for j in range(d_model)])


def encode(student, num_positions: int, d_model: int, start: int | None = None) -> torch.Tensor:
    """The student's encoding, as float32: the dtype has a check of its own."""
    kwargs = {} if start is None else {"start": start}
    value = student.call("sinusoidal_encoding", num_positions, d_model, **kwargs)
    what = f"sinusoidal_encoding({num_positions}, {d_model}{'' if start is None else f', start={start}'})"
    if not isinstance(value, torch.Tensor):
        raise CheckFailed(_f("{what}: expected a torch.Tensor, got {got}", what=what, got=type(value).__name__))
    expect(value.is_floating_point(), _f("{what}: expected a float tensor, got {got}", what=what, got=value.dtype))
    return value.float()


# ---------------------------------------------------------------- visible: documented values


def variant(num_positions, d_model, start=0, *, base=10000.0, exponent="2i/d", first="sin", second="cos",
            scale=1.0, shift=0) -> torch.Tensor:
    """What a common wrong encoding returns (computed in float64, returned as float32): one of the switches must
    name a slip (shift: the positions counted from start + shift). The documented encoding itself is refused: the
    checks compare it with documented tables, never with a formula the wheel would ship."""
    if (base, exponent, first, second, scale, shift) == (10000.0, "2i/d", "sin", "cos", 1.0, 0):
        raise ValueError("variant computes wrong encodings only: name the slip")
    start = start + shift
    p = torch.arange(start, start + num_positions, dtype=torch.float64).unsqueeze(1)  # (P, 1)
    col = torch.arange(d_model, dtype=torch.float64)  # (D,)
    even = col - col % 2  # 2i, for both columns of pair i
    power = {"0": 0 * col, "2i/d": even / d_model, "2*(2i)/d": 2 * even / d_model, "i/d": (even / 2) / d_model,
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
    N_("the exponent computed with integer division (2 * i // d_model is 0 in every column, so every angle is the "
       "position itself): divide with /"): {"exponent": "0"},
    N_("a sine in every column (the odd columns take the cosine)"): {"second": "sin"},
    N_("a cosine in every column (the even columns take the sine)"): {"first": "cos"},
    N_("each column's own exponent j/d (a sine and the cosine after it share the angle of the even column)"):
        {"exponent": "j/d"},
}
SCALED = N_("the encoding multiplied by sqrt(d_model) (that scale belongs to the token embeddings)")
FROM_ONE = N_("positions counted from start + 1, as the notes' table counts them from 1 "
            "(row r encodes position start + r, so the first row is position start)")


def common_mistakes(num_positions, d_model, start=0) -> dict:
    """description -> what a common wrong encoding returns for these arguments (the formula written out here,
    with one slip each: no reference solution is needed)."""
    wrong = {name: variant(num_positions, d_model, start, **args) for name, args in MISTAKE_ARGS.items()}
    wrong[SCALED] = variant(num_positions, d_model, start, scale=math.sqrt(d_model))
    wrong[FROM_ONE] = variant(num_positions, d_model, start, shift=1)
    return wrong




# The formula's values at the calls a written-out table is told by, as data (six decimals: the check's own measure
# asks for less): sinusoidal_encoding(4, 4), and the first four columns of sinusoidal_encoding(4, 6), whose
# frequencies differ (d_model is in the formula). Values, not the formula: the wheel ships no encoding to call.
FORMULA_4x4 = torch.tensor(
    [[0.000000, 1.000000, 0.000000, 1.000000],
     [0.841471, 0.540302, 0.010000, 0.999950],
     [0.909297, -0.416147, 0.019999, 0.999800],
     [0.141120, -0.989992, 0.029995, 0.999550]])
FORMULA_4x6_FIRST_4 = torch.tensor(
    [[0.000000, 1.000000, 0.000000, 1.000000],
     [0.841471, 0.540302, 0.046399, 0.998923],
     [0.909297, -0.416147, 0.092699, 0.995694],
     [0.141120, -0.989992, 0.138798, 0.990321]])
# sinusoidal_encoding(6, 3), positions 0..5, to eight decimals (a mistake's values are matched to float32
# precision): what an encoding that ignores start=1 gives, and, from its rows 1..5, one that stops a row short
FROM_ZERO_6x3 = torch.tensor(
    [[0.00000000, 1.00000000, 0.00000000],
     [0.84147098, 0.54030231, 0.00215443],
     [0.90929743, -0.41614684, 0.00430886],
     [0.14112001, -0.98999250, 0.00646326],
     [-0.75680250, -0.65364362, 0.00861763],
     [-0.95892427, 0.28366219, 0.01077197]])


@check(1, "sinusoidal_encoding(4, 4) gives the documented table", documented=True, cell="sinusoidal_encoding")
def test_documented_4x4(student):
    got = encode(student, 4, 4)
    # the first 4 columns of a wider encoding have other frequencies (d_model is in the formula): a table written
    # out gives itself away. Another start is no such evidence: an encoding that ignores `start` is a mistake of its own
    # ... and so do fewer positions: a slip that leaves d_model out of the angles (an integer division) is no
    # written-out table, and is named by the values
    wide = encode(student, 4, 6)
    expect_not_hard_coded("sinusoidal_encoding", (got, wide[:, :4] if wide.dim() == 2 else wide, encode(student, 3, 4)),
                          [FORMULA_4x4, FORMULA_4x6_FIRST_4, FORMULA_4x4[:3]])
    expect_close(got, DOC_4x4, "sinusoidal_encoding(4, 4)", atol=1e-4, hint=DOC_HINT,
                 mistakes=common_mistakes(4, 4), heatmap_labels=labels(4, 4))


@check(1, "sinusoidal_encoding(6, 3, start=1) gives the documented rows of the worked example", documented=True, cell="sinusoidal_encoding")
def test_documented_worked_example(student):
    mistakes = {**common_mistakes(6, 3, start=1), START_IGNORED: FROM_ZERO_6x3, SHORT_END: FROM_ZERO_6x3[1:]}
    expect_close(encode(student, 6, 3, start=1), DOC_WORKED, "sinusoidal_encoding(6, 3, start=1)", atol=1e-4,
                 hint=DOC_HINT, mistakes=mistakes, heatmap_labels=labels(6, 3, start=1), show_passing=True)  # shown passing or not


# ---------------------------------------------------------------- visible: properties


@check(0.5, "sinusoidal_encoding returns a float32 tensor of shape (num_positions, d_model)", visible=True, cell="sinusoidal_encoding")
def test_shape_and_dtype(student):
    for num_positions, d_model in ((7, 4), (12, 10), (1, 2)):
        what = f"sinusoidal_encoding({num_positions}, {d_model})"
        value = student.call("sinusoidal_encoding", num_positions, d_model)
        expect_shape(value, (num_positions, d_model), what)
        expect(value.dtype == torch.float32,
               _f("{what}: expected dtype float32, got {got}: the course's tensors are float32 (create the "
                  "positions with dtype=torch.float32, or call .float())", what=what,
                  got=str(value.dtype).replace('torch.', '')),
               mistake=N_("a float64 encoding (the course's tensors are float32)"))


@check(0.5, "every value of the encoding lies in [-1, 1]", visible=True, cell="sinusoidal_encoding")
def test_values_in_range(student):
    for num_positions, d_model in ((60, 16), (400, 6)):
        what = f"sinusoidal_encoding({num_positions}, {d_model})"
        value = encode(student, num_positions, d_model)
        expect_shape(value, (num_positions, d_model), what)
        expect(bool(torch.isfinite(value).all()), _f("{what} holds inf or nan", what=what))
        peak = value.abs().max().item()
        expect(peak <= 1 + 1e-6,
               _f("{what} has a value of magnitude {peak:.4g}, but sines and cosines lie in [-1, 1]: "
                  "is the encoding scaled (e.g. by sqrt(d_model)), or are the angles returned without sin/cos?",
                  what=what, peak=peak))


@check(1, "each sine column and the cosine column after it satisfy sin^2 + cos^2 = 1", visible=True, cell="sinusoidal_encoding")
def test_pairs_share_an_angle(student):
    for num_positions, d_model in ((30, 10), (25, 6)):
        what = f"sinusoidal_encoding({num_positions}, {d_model})"
        value = encode(student, num_positions, d_model)
        expect_shape(value, (num_positions, d_model), what)
        sums = value[:, 0::2] ** 2 + value[:, 1::2] ** 2  # (P, D / 2): one per pair of columns
        worst = (sums - 1).abs()
        if worst.max().item() > 1e-5:
            row, pair = (int(i) for i in torch.unravel_index(worst.argmax(), worst.shape))
            raise CheckFailed(
                _f("{what}: columns {sine} and {cosine} at position {row} give "
                   "sin^2 + cos^2 = {total:.4f}, not 1: column 2i must hold the sine and column "
                   "2i + 1 the cosine of one and the same angle p / 10000^(2i/d_model)",
                   what=what, sine=2 * pair, cosine=2 * pair + 1, row=row, total=sums[row, pair].item()),
                mistake=N_("the columns of a pair not a sine and a cosine of the same angle"))


@check(1, "start shifts the rows: encoding(n, d, start=s) equals rows s.. of encoding(n + s, d)", visible=True, cell="sinusoidal_encoding")
def test_start_shifts_rows(student):
    for num_positions, d_model, start in ((5, 8, 3), (4, 6, 11)):
        shifted = encode(student, num_positions, d_model, start)
        longer = encode(student, num_positions + start, d_model)
        expected = longer[start:]
        mistakes = {START_IGNORED: longer[:num_positions]}
        if num_positions > start:
            mistakes[SHORT_END] = \
                longer[start:num_positions]
        expect_close(shifted, expected,
                     _f("sinusoidal_encoding({count}, {d_model}, start={start}), compared with rows "
                        "{start}.. of your sinusoidal_encoding({longer}, {d_model})", count=num_positions,
                        d_model=d_model, start=start, longer=num_positions + start),
                     scale=float(num_positions + start), mistakes=mistakes,
                     hint=N_("row r must encode position start + r"))


def raises_for_even(student, num_positions, d_model) -> bool:
    """Whether the student's sinusoidal_encoding raises for this (even) d_model too."""
    try:
        encode(student, num_positions, d_model)
    except StudentFailure as failure:
        return failure.kind == "raised"
    return False


@check(0.5, "sinusoidal_encoding works for an odd d_model", visible=True, cell="sinusoidal_encoding")
def test_odd_d_model(student):
    for num_positions, d_model in ((5, 3), (4, 7), (3, 1)):
        what = f"sinusoidal_encoding({num_positions}, {d_model})"
        try:
            value = encode(student, num_positions, d_model)
        except StudentFailure as failure:
            if failure.kind != "raised" or raises_for_even(student, num_positions, d_model + 1):
                raise  # an error an even d_model meets too is not about odd ones: told as it is, without the hint
            raise CheckFailed(_f("{error}. {hint}", error=failure.message, hint=_(ODD_HINT)), mistake=ODD_D) from None
        if tuple(value.shape) != (num_positions, d_model):
            raise CheckFailed(_f("{what}: expected shape {expected}, got {got}. {hint}", what=what,
                                 expected=(num_positions, d_model), got=tuple(value.shape), hint=_(ODD_HINT)),
                              mistake=ODD_D)


@check(1, "sinusoidal_encoding has no Python loop over positions", visible=True, cell="sinusoidal_encoding")
def test_no_loop(student):
    counts, lines = {}, {}
    for num_positions in (4, 9):
        reply = student.run("sinusoidal_encoding", num_positions, 8, count_ops=True, count_lines=True)
        counts[num_positions], lines[num_positions] = reply.ops, reply.lines
    expect_no_loop(counts, "sinusoidal_encoding", N_("positions"))
    # a loop that computes with NumPy or plain numbers dispatches no torch op: its lines show it
    expect_no_loop_in_lines(lines, "sinusoidal_encoding", N_("positions"))


def expect_no_loop_in_lines(lines: dict, name: str, over: str) -> None:
    """Lines of the student's code run at two sizes must be equal: a loop in Python runs its body once per item,
    whatever it computes with (a NumPy array filled position by position, np.vectorize over a Python function),
    where the op count sees torch's work only."""
    (small, n_small), (large, n_large) = sorted(lines.items())
    # i18n: {over} is the name of what is counted, e.g. "positions" (translated by the caller)
    expect(n_small == n_large,
           # no counts said: the notebook's kernel and the grader's worker count a call's lines a little apart
           _f("{name} runs more lines of its own code for {large} {over} than for {small}: it looks like a Python "
              "loop over {over} (with NumPy, np.vectorize or plain numbers as much as with torch); compute them all "
              "with one batched operation", name=name, small=small, over=_(over), large=large),
           mistake=f"a Python loop over {over}")
