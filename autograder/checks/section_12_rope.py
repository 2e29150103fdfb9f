"""Checks of section 12 (part 2): rotary position embeddings, RoPE (10 points).

The section's registry entry (SECTION) and its visible checks: the documented tables of rope_angles(4, 6), the
worked example's queries rotated and its context vectors with rope_attention, then the properties that need no
reference (shapes and dtype, the odd head_dim's error, the tables' halves alike, norms kept, scores and outputs
unchanged when every position shifts, `offset` reading the rows of the tokens' true positions, causality, the
argument left unchanged, any number of leading dims, the input's device). The self-check runs them and the
students' wheel ships this module as it is, so nothing here computes a right answer: the right values are
documented data (and their multiples by linearity) or the student's own calls compared with each other; only the
common slips' values are computed (checks/rope_slips.py), to name them. The hidden checks compare with the
reference (solutions) on fresh sizes: checks/hidden/hidden_12_rope.py. apply_rope's checks hand it given tables,
never the student's rope_angles; rope_attention's meet right rotations in place of the student's apply_rope.
"""

SECTION = {  # the registry's entry (autograder/core/sections.py reads it without importing this file)
    "title": "Rotary position embeddings",
    "solution": "solutions.rope",
    "names": ("rope_angles", "apply_rope", "rope_attention"),
    "part": 2,
    "rules": {"unchanged": ("apply_rope",), "device": ("apply_rope", "rope_attention"), "float32": ("rope_angles",)},
}

import torch

from autograder.checks.common import (expect_not_hard_coded, expect_raises, expect_unchanged, rand, randn,
                                      run_unless_raised)
from autograder.checks.rope_slips import (ATTENTION_HINT, DOC_ATTENTION, EXPONENT_PLUS, INTEGER_DIVISION,
                                          MASK_FORGOTTEN, OFFSET_NOT_PASSED, SHIFT_HINT, attend, attention_mistakes,
                                          rotations, scrambled_tables, slipped_rotation, slipped_tables, turning_tables)
from autograder.core.harness import CheckFailed, StudentFailure, check, expect, expect_close, expect_shape
from autograder.i18n import N_, _, _f

TOKENS = ["Your", "journey", "starts", "with", "one", "step"]

DOC_COS = torch.tensor(
    [[1.0000, 1.0000, 1.0000, 1.0000],
     [0.5403, 0.9999, 0.5403, 0.9999],
     [-0.4161, 0.9998, -0.4161, 0.9998],
     [-0.9900, 0.9996, -0.9900, 0.9996],
     [-0.6536, 0.9992, -0.6536, 0.9992],
     [0.2837, 0.9988, 0.2837, 0.9988]])
DOC_SIN = torch.tensor(
    [[0.0000, 0.0000, 0.0000, 0.0000],
     [0.8415, 0.0100, 0.8415, 0.0100],
     [0.9093, 0.0200, 0.9093, 0.0200],
     [0.1411, 0.0300, 0.1411, 0.0300],
     [-0.7568, 0.0400, -0.7568, 0.0400],
     [-0.9589, 0.0500, -0.9589, 0.0500]])
DOC_ROTATED = torch.tensor(  # apply_rope(queries, cos, sin) of the worked example
    [[0.3022, 0.9986, 0.4093, 0.9230],
     [-0.2031, 1.5081, 0.5448, 0.9365],
     [-0.5649, 1.4772, 0.1258, 0.9491],
     [-0.2008, 0.8424, -0.2124, 0.4631],
     [0.0232, 0.6615, -0.3701, 0.6515],
     [0.3328, 1.0925, -0.0843, 0.5496]])

# the tables at full precision, one half each (the other half is the same): rope_angles(4, 10), the worked example's
# six rows and four more (a table longer than x), and rope_angles(6, 7, theta_base=100.0)
def _both_halves(half_table):
    table = torch.tensor(half_table)
    return torch.cat((table, table), dim=-1)


COS_4_10 = _both_halves([[1.00000000, 1.00000000], [0.54030234, 0.99994999], [-0.41614684, 0.99980003], [-0.98999250, 0.99955004], [-0.65364361, 0.99920011], [0.28366220, 0.99875027], [0.96017027, 0.99820054], [0.75390226, 0.99755102], [-0.14550003, 0.99680167], [-0.91113025, 0.99595273]])
SIN_4_10 = _both_halves([[0.00000000, 0.00000000], [0.84147096, 0.00999983], [0.90929741, 0.01999867], [0.14112000, 0.02999550], [-0.75680250, 0.03998933], [-0.95892429, 0.04997917], [-0.27941549, 0.05996400], [0.65698659, 0.06994285], [0.98935825, 0.07991469], [0.41211849, 0.08987854]])
COS_6_7_BASE_100 = _both_halves([[1.00000000, 1.00000000, 1.00000000], [0.54030234, 0.97688168, 0.99892294], [-0.41614684, 0.90859568, 0.99569422], [-0.98999250, 0.79829925, 0.99032068], [-0.65364361, 0.65109217, 0.98281395], [0.28366220, 0.47378072, 0.97319025], [0.96017027, 0.27456340, 0.96147019]])
SIN_6_7_BASE_100 = _both_halves([[0.00000000, 0.00000000, 0.00000000], [0.84147096, 0.21378066, 0.04639922], [0.90929741, 0.41767684, 0.09269849], [0.14112000, 0.60226101, 0.13879809], [-0.75680250, 0.75899869, 0.18459871], [-0.95892429, 0.88064283, 0.23000169], [-0.27941549, 0.96156901, 0.27490926]])

ANGLES_HINT = N_("check the formula: inv_freq = theta_base ** (-torch.arange(0, head_dim, 2) / head_dim), angles = "
                 "positions[:, None] * inv_freq[None, :] for the positions 0 .. context_length - 1, then "
                 "torch.cat((angles, angles), dim=-1)")
ROTATE_HINT = N_("check the formula: x * cos + rotate_half(x) * sin, with rotate_half(x) = torch.cat((-x2, x1), "
                 "dim=-1), x1 the first half of the features and x2 the second half")

# rope_angles' common mistakes
EXPONENT_PAIR = N_("the exponent i / head_dim with i the pair number (torch.arange(head_dim // 2)): the exponent is "
                   "2i / head_dim, torch.arange(0, head_dim, 2) / head_dim")
EXPONENT_UNDIVIDED = N_("the exponent 2i not divided by head_dim (inv_freq = theta_base ** (-2i / head_dim))")
EXPONENT_EACH = N_("torch.arange(head_dim) instead of torch.arange(0, head_dim, 2): each column got its own "
                   "frequency, where the two features of a pair share one")
INTERLEAVED_TABLE = N_("the angles repeat_interleaved (each angle twice in a row, the interleaved layout of the "
                       "original paper): this course pairs feature i with i + head_dim/2, so the angles are "
                       "torch.cat((angles, angles), dim=-1)")
FROM_ONE = N_("positions counted from 1 (the first row is position 0: cos 1 and sin 0)")
SWAPPED = N_("the pair returned as (sin, cos): rope_angles returns (cos, sin)")
THETA_IGNORED = N_("theta_base ignored (10000 written in the formula)")
ODD_MISSED = N_("an odd head_dim not refused (its features cannot form pairs)")
FLOAT64_TABLES = N_("float64 tables (the course's tensors are float32)")

# apply_rope's common mistakes
INTERLEAVED = N_("the interleaved convention of the original paper (pairs 2i, 2i + 1): this course pairs feature i "
                 "with i + head_dim/2, rotate_half(x) = cat(-x2, x1), as the Llama family does")
SIGN_WRONG_HALF = N_("the minus sign on the wrong half (cat(x2, -x1) instead of cat(-x2, x1)): every pair turns "
                     "the other way")
NO_MINUS = N_("rotate_half without its minus sign (cat(x2, x1)): that is no rotation, it changes the norms")
OFFSET_IGNORED = N_("offset ignored (the rows 0 .. T - 1 of the tables, whatever offset says)")
TABLE_NOT_CUT = N_("the tables not cut to the tokens' rows (cos[offset:offset + T]): a table longer than x "
                   "cannot broadcast against it")
FOUR_DIMS_ONLY = N_("x read as (B, H, T, head_dim) only: read T and head_dim from x.shape[-2] and x.shape[-1], "
                    "and slice with ... (x[..., :half])")
MODIFIED_X = N_("x modified in place")


def worked_example() -> dict:
    """The notebook's worked example: torch.manual_seed(123), then W_query, W_key, W_value = torch.rand(3, 4) x3."""
    inputs = torch.tensor([[0.43, 0.15, 0.89], [0.55, 0.87, 0.66], [0.57, 0.85, 0.64],
                           [0.22, 0.58, 0.33], [0.77, 0.25, 0.10], [0.05, 0.80, 0.55]])
    weights = rand(123, 2, 3, 4)  # the same stream as torch.manual_seed(123) then two torch.rand(3, 4)
    values = inputs @ rand(123, 3, 3, 4)[2]  # the third torch.rand(3, 4) of that stream: W_value
    return {"queries": inputs @ weights[0], "keys": inputs @ weights[1], "values": values}


# ---------------------------------------------------------------- the formulas, written out (and their slips)


ANGLE_SLIPS = {EXPONENT_PAIR: "pair", EXPONENT_UNDIVIDED: "undivided", EXPONENT_PLUS: "plus", EXPONENT_EACH: "each",
               INTEGER_DIVISION: "integer", INTERLEAVED_TABLE: "interleave", FROM_ONE: "from_one"}


def angle_mistakes(head_dim, context_length, theta_base=10_000.0) -> dict:
    """description -> (cos, sin) of each common slip of rope_angles, for these arguments."""
    return {name: slipped_tables(head_dim, context_length, theta_base, slip) for name, slip in ANGLE_SLIPS.items()}


ROTATION_SLIPS = {INTERLEAVED: "interleaved", SIGN_WRONG_HALF: "sign", NO_MINUS: "no_minus"}


def rotate_mistakes(x, cos, sin, offset=0) -> dict:
    """description -> what each common slip of apply_rope gives on these arguments (offset ignored: the hidden
    checks add it)."""
    return {name: slipped_rotation(x, cos, sin, slip, offset) for name, slip in ROTATION_SLIPS.items()}


# ---------------------------------------------------------------- calling the student's functions


def angles_of(student, head_dim, context_length, theta_base=None) -> tuple:
    """The student's (cos, sin), each checked to be a float tensor (compared as float32: the dtype has its check)."""
    kwargs = {} if theta_base is None else {"theta_base": theta_base}
    what = f"rope_angles({head_dim}, {context_length}{'' if theta_base is None else f', theta_base={theta_base}'})"
    value = student.call("rope_angles", head_dim, context_length, **kwargs)
    if not (isinstance(value, (tuple, list)) and len(value) == 2):
        kind = _f("a tuple of {count}", count=len(value)) if isinstance(value, (tuple, list)) else type(value).__name__
        raise CheckFailed(_f("{what} should return the pair (cos, sin); got {kind}", what=what, kind=kind))
    for part in value:
        if not isinstance(part, torch.Tensor) or not part.is_floating_point():
            raise CheckFailed(_f("{what} should return two float tensors; got {got}", what=what,
                                 got=type(part).__name__ if not isinstance(part, torch.Tensor) else part.dtype))
    return value[0].float(), value[1].float(), what


def expect_tables(got_cos, got_sin, expected: tuple, mistakes: dict, what: str, computed: tuple | None = None,
                  **shown) -> None:
    """cos, then sin, each with the slips' values for it (a pair returned swapped is named on cos already).
    computed: the right tables at full precision where `expected` is rounded (the documented ones), for the swap."""
    cos_mistakes = {name: pair[0] for name, pair in mistakes.items()}
    cos_mistakes[SWAPPED] = (computed or expected)[1]
    expect_close(got_cos, expected[0], _f("the cos table of {what}", what=what), atol=1e-4, hint=ANGLES_HINT,
                 mistakes=cos_mistakes, **shown)
    expect_close(got_sin, expected[1], _f("the sin table of {what}", what=what), atol=1e-4, hint=ANGLES_HINT,
                 mistakes={name: pair[1] for name, pair in mistakes.items()}, **shown)


def position_labels(head_dim, context_length) -> tuple:
    return [f"p={p}" for p in range(context_length)], [f"pair {j % (head_dim // 2)}" for j in range(head_dim)]


# ---------------------------------------------------------------- visible: rope_angles


@check(0.75, "rope_angles(4, 6) gives the documented cos and sin tables", documented=True, cell="rope_angles")
def test_documented_angles(student):
    cos, sin, what = angles_of(student, 4, 6)
    # a table written out answers the same for a shorter length (whose right tables are the first rows)
    expect_not_hard_coded("rope_angles", (cos, angles_of(student, 4, 5)[0]), [COS_4_10[:6], COS_4_10[:5]])
    expect_tables(cos, sin, (DOC_COS, DOC_SIN), angle_mistakes(4, 6), what, computed=(COS_4_10[:6], SIN_4_10[:6]),
                  heatmap_labels=position_labels(4, 6), show_passing=True)


@check(0.5, "rope_angles returns two float32 tables of shape (context_length, head_dim)", visible=True,
       cell="rope_angles")
def test_angles_shape_and_dtype(student):
    for head_dim, context_length in ((8, 10), (2, 3), (16, 1)):
        what = f"rope_angles({head_dim}, {context_length})"
        value = student.call("rope_angles", head_dim, context_length)
        if not (isinstance(value, (tuple, list)) and len(value) == 2):
            raise CheckFailed(_f("{what} should return the pair (cos, sin); got {kind}", what=what,
                                 kind=type(value).__name__))
        for label, table in zip(("cos", "sin"), value):
            expect_shape(table, (context_length, head_dim), f"{what}[{0 if label == 'cos' else 1}] ({label})")
            expect(table.dtype == torch.float32,
                   _f("{what}: the {label} table has dtype {got}; the course's tensors are float32 (make the "
                      "positions and frequencies with dtype=torch.float32)", what=what, label=label,
                      got=str(table.dtype).replace("torch.", "")), mistake=FLOAT64_TABLES)


@check(0.5, "rope_angles raises ValueError for an odd head_dim", visible=True, cell="rope_angles")
def test_odd_head_dim(student):
    for head_dim in (5, 3):
        try:
            expect_raises(lambda size=head_dim: student.call("rope_angles", size, 4), "ValueError",
                          f"rope_angles({head_dim}, 4)", naming=(head_dim,))
        except CheckFailed as failure:
            if failure.mistake:
                raise
            raise CheckFailed(failure.message, ODD_MISSED) from None


@check(0.25, "rope_angles uses theta_base", visible=True, cell="rope_angles")
def test_theta_base(student):
    cos, sin, what = angles_of(student, 6, 7, 100.0)
    default = angles_of(student, 6, 7)  # theta_base ignored: the student's own tables of the default base
    mistakes = {**angle_mistakes(6, 7, 100.0), THETA_IGNORED: default[:2]}
    # the documented tolerance: another base changes pair 1's angles by far more
    expect_tables(cos, sin, (COS_6_7_BASE_100, SIN_6_7_BASE_100), mistakes, what)


@check(0.5, "the two halves of each table are alike: feature i and feature i + head_dim/2 share an angle",
       visible=True, cell="rope_angles")
def test_halves_alike(student):
    for head_dim, context_length in ((8, 12), (6, 5)):
        cos, sin, what = angles_of(student, head_dim, context_length)
        expect_shape(cos, (context_length, head_dim), what)
        expect_shape(sin, (context_length, head_dim), what)
        half = head_dim // 2
        for label, table in (("cos", cos), ("sin", sin)):
            if torch.allclose(table[:, :half], table[:, half:], atol=1e-6):
                continue
            # the evidence of a slip: the table's columns alike two by two, or each column its own frequency
            each = slipped_tables(head_dim, context_length, 10_000.0, "each")[0 if label == "cos" else 1]
            named = INTERLEAVED_TABLE if torch.allclose(table[:, 0::2], table[:, 1::2], atol=1e-6) else \
                EXPONENT_EACH if torch.allclose(table, each, atol=1e-4) else ""
            message = _f("{what}: the {label} table's columns 0 .. {last} differ from its columns {half} .. {end}, "
                         "but feature i is paired with feature i + {half} and both turn by the same angle",
                         what=what, label=label, last=half - 1, half=half, end=head_dim - 1)
            if named:
                message += _f(". This looks like {mistake}", mistake=_(named))
            raise CheckFailed(message, named)


# ---------------------------------------------------------------- visible: apply_rope


@check(1, "apply_rope on the worked example's queries gives the documented rotated queries", documented=True,
       cell="apply_rope")
def test_documented_rotation(student):
    example, (cos, sin) = worked_example(), (COS_4_10[:6], SIN_4_10[:6])
    got = rope_or_named(student, example["queries"], cos, sin, "apply_rope(queries, cos, sin)")
    negated = rope_or_named(student, -example["queries"], cos, sin, "apply_rope(-queries, cos, sin)")
    # a rotation is linear: -queries turn into -DOC_ROTATED, which an answer written out does not follow
    expect_not_hard_coded("apply_rope", (got, negated), [DOC_ROTATED, -DOC_ROTATED])
    expect_close(got, DOC_ROTATED, "apply_rope(queries, cos, sin)", atol=1e-4, hint=ROTATE_HINT,
                 mistakes=rotate_mistakes(example["queries"], cos, sin),
                 heatmap_labels=(TOKENS, ["x1[0]", "x1[1]", "x2[0]", "x2[1]"]), show_passing=True)


def rope_or_named(student, x, cos, sin, what, **kwargs):
    """apply_rope's answer; where it raises on a (T, d) or longer table but answers the plain case, the mistake
    its error shows (x read as 4-D only, the tables not cut) is named."""
    try:
        return student.call("apply_rope", x, cos, sin, **kwargs)
    except StudentFailure as failure:
        if failure.kind != "raised":
            raise
        error = failure.shortened(300)
    num_tokens = x.shape[-2]
    named = ""
    four_d = x.reshape(-1, 1, *x.shape[-2:])  # (B*..., 1, T, d): the layout after the heads are split
    if x.dim() != 4 and run_unless_raised(student.run, "apply_rope", four_d, cos, sin, **kwargs) is not None:
        named = FOUR_DIMS_ONLY
    elif cos.shape[0] != num_tokens and not kwargs.get("offset") and run_unless_raised(
            student.run, "apply_rope", four_d, cos[:num_tokens], sin[:num_tokens]) is not None:
        named = TABLE_NOT_CUT
    raise CheckFailed(_f("{what} raised: {error}", what=what, error=error)
                      + (_f(". This looks like {mistake}", mistake=_(named)) if named else ""), named) from None


@check(0.5, "apply_rope works on (T, head_dim), (B, T, head_dim) and (B, H, T, head_dim) inputs", visible=True,
       cell="apply_rope")
def test_any_leading_dims(student):
    cos, sin, queries = COS_4_10, SIN_4_10, worked_example()["queries"]
    # a rotation is linear: a multiple of the worked example's queries turns into that multiple of DOC_ROTATED
    two = torch.stack((queries, -queries))
    four = torch.stack((two, 0.5 * two))
    for x, factors in ((queries, torch.tensor(1.0)), (two, torch.tensor([1.0, -1.0])[:, None, None]),
                       (four, torch.tensor([[1.0, -1.0], [0.5, -0.5]])[:, :, None, None])):
        shape = tuple(x.shape)
        what = _f("{call}, x of shape {shape}, with tables of {rows} rows", call="apply_rope(x, cos, sin)",
                  shape=shape, rows=cos.shape[0])
        got = rope_or_named(student, x, cos, sin, what)
        expect_shape(got, shape, what)
        expect(got.dtype == torch.float32, _f("{what}: expected dtype float32, got {got}", what=what,
                                              got=str(got.dtype).replace("torch.", "")))
        expect_close(got, factors * DOC_ROTATED, what, atol=1e-4, hint=ROTATE_HINT,
                     mistakes=rotate_mistakes(x, cos, sin))


@check(0.5, "apply_rope keeps the length of every query and key vector (a rotation)", visible=True, cell="apply_rope")
def test_norms_kept(student):
    cos, sin = turning_tables(9, 8, 1210)
    x = randn(1204, 2, 3, 9, 8)  # (B, H, T, d): the layout after the heads are split
    what = _f("{call}, x of shape {shape}", call="apply_rope(x, cos, sin)", shape=tuple(x.shape))
    got = rope_or_named(student, x, cos, sin, what)
    expect_shape(got, x.shape, what)
    before, after = x.norm(dim=-1).flatten(0, 1), got.float().norm(dim=-1).flatten(0, 1)  # (6, 9): one per token
    worst = (after - before).abs()
    if worst.max().item() > 1e-4:
        item, token = (int(i) for i in torch.unravel_index(worst.argmax(), worst.shape))
        named = NO_MINUS if torch.allclose(got.float(), slipped_rotation(x, cos, sin, "no_minus"), atol=1e-4) else ""
        raise CheckFailed(_f("apply_rope changed the length of token {token} of head {item} from {before:.4f} to "
                             "{after:.4f}: each pair (x1[i], x2[i]) must turn by its angle, which keeps its length",
                             token=token, item=item, before=before[item, token].item(), after=after[item, token].item())
                          + (_f(". This looks like {mistake}", mistake=_(named)) if named else ""), named)


@check(0.75, "the scores q @ k.T after apply_rope are unchanged when every position shifts by the same amount", visible=True,
       cell="apply_rope")
def test_relative_scores(student):
    """RoPE's point: the score of query m and key n depends on m - n only. Rotate q and k at positions 0 .. T-1,
    then at positions s .. s+T-1 (the tables' rows from s on): every score must stay as it was."""
    queries, keys = randn(1205, 1, 2, 6, 8), randn(1206, 1, 2, 6, 8)  # (B, H, T, d)
    cos, sin = turning_tables(40, 8, 1211)
    scores = {}
    for shift in (0, 7, 30):
        rows = (cos[shift:shift + 6], sin[shift:shift + 6])
        what = f"apply_rope(q, cos[{shift}:{shift + 6}], sin[{shift}:{shift + 6}])"
        q = rope_or_named(student, queries, *rows, what)
        k = rope_or_named(student, keys, *rows, what.replace("(q,", "(k,"))
        expect_shape(q, queries.shape, what)
        expect_shape(k, keys.shape, what)
        scores[shift] = q.float() @ k.float().transpose(-2, -1)  # (1, 2, 6, 6): query m against key n
    for shift in (7, 30):
        expect_close(scores[shift], scores[0],
                     _f("the scores q @ k.T of your rotated queries and keys at positions {start} .. {end}, compared "
                        "with those at positions 0 .. 5", start=shift, end=shift + 5),
                     hint=N_("a rotation by the angle of position m, then by the angle of position n, leaves a dot "
                             "product that depends on m - n only: each pair must turn by an angle proportional to "
                             "its position"),
                     heatmap_labels=True)


@check(0.75, "apply_rope with offset=k rotates the tokens at positions k .. k+T-1, as a KV cache needs", visible=True,
       cell="apply_rope")
def test_offset(student):
    cos, sin = turning_tables(20, 8, 1212)
    x = randn(1207, 2, 2, 9, 8)  # (B, H, T, d): a whole sequence of 9 tokens
    for offset in (3, 6):
        new = x[..., offset:, :]  # the tokens after a cache of `offset` tokens
        what = f"apply_rope(x[..., {offset}:, :], cos, sin, offset={offset})"
        got = rope_or_named(student, new, cos, sin, what, offset=offset)
        sliced = rope_or_named(student, new, cos[offset:offset + new.shape[-2]], sin[offset:offset + new.shape[-2]],
                               f"apply_rope(x[..., {offset}:, :], cos[{offset}:9], sin[{offset}:9])")
        plain = rope_or_named(student, new, cos, sin, f"apply_rope(x[..., {offset}:, :], cos, sin)")
        # 1. the table's rows offset .. offset+T-1, read by the function itself
        expect_close(got, sliced, _f("{what}, compared with your apply_rope on the tables' rows {offset} .. 8",
                                     what=what, offset=offset),
                     mistakes={OFFSET_IGNORED: plain}, hint=N_("token t of x sits at position offset + t"))
        # 2. the cache's case: the new tokens rotated as they were within the whole sequence
        whole = rope_or_named(student, x, cos, sin, "apply_rope(x, cos, sin)")
        expect_close(got, whole[..., offset:, :],
                     _f("{what}, compared with the last tokens of your apply_rope(x, cos, sin) on the whole sequence",
                        what=what), mistakes={OFFSET_IGNORED: plain})


@check(0.25, "apply_rope leaves x unchanged", visible=True, cell="apply_rope")
def test_x_unchanged(student):
    cos, sin = turning_tables(5, 6, 1213)
    x = randn(1208, 2, 2, 5, 6)
    reply = run_unless_raised(student.run, "apply_rope", x, cos, sin, return_args=True)
    try:
        expect_unchanged(reply, [x, cos, sin], "apply_rope")
    except CheckFailed as failure:
        raise CheckFailed(failure.message, MODIFIED_X) from None


@check(0.25, "apply_rope answers on its input's device", visible=True, cell="apply_rope")
def test_device(student):
    cos, sin = turning_tables(6, 8, 1214)
    x = randn(1209, 2, 2, 6, 8)
    reply = student.run("apply_rope", x, cos, sin, device="meta")
    mixed = "; ".join(reply.mixed_devices[:2])
    expect(not mixed, _f("apply_rope on the meta device mixes devices ({mixed}): make every tensor on x.device",
                         mixed=mixed))
    expect(reply.output_devices == ["meta"], _f("{name} on the meta device answered on {got} instead of that device",
                                                name="apply_rope", got=reply.output_devices or type(reply.value).__name__))


# ---------------------------------------------------------------- visible: rope_attention


@check(0.5, "rope_attention on the worked example gives the documented context vectors", documented=True,
       cell="rope_attention")
def test_documented_attention(student):
    ex, cos, sin = worked_example(), COS_4_10[:6], SIN_4_10[:6]
    got = attend(student, ex["queries"], ex["keys"], ex["values"], cos, sin)
    # the output is linear in the values: -values give -DOC_ATTENTION, which an answer written out does not follow
    negated = attend(student, ex["queries"], ex["keys"], -ex["values"], cos, sin)
    expect_not_hard_coded("rope_attention", (got, negated), [DOC_ATTENTION, -DOC_ATTENTION])
    expect_close(got, DOC_ATTENTION, "rope_attention(queries, keys, values, cos, sin)", atol=1e-4, hint=ATTENTION_HINT,
                 mistakes=attention_mistakes(ex["queries"], ex["keys"], ex["values"], cos, sin),
                 heatmap_labels=(TOKENS, ["v[0]", "v[1]", "v[2]", "v[3]"]), show_passing=True)


@check(0.25, "rope_attention is causal: later tokens leave the outputs of earlier ones unchanged", visible=True,
       cell="rope_attention")
def test_attention_causal(student):
    (cos, sin), qkv = turning_tables(7, 8, 1215), [randn(1216 + i, 2, 7, 8) for i in range(3)]
    changed = [torch.cat((x[:, :4], randn(1219 + i, 2, 3, 8)), dim=1) for i, x in enumerate(qkv)]
    before, after = attend(student, *qkv, cos, sin), attend(student, *changed, cos, sin)
    expect_shape(before, (2, 7, 8), "rope_attention(q, k, v, cos, sin)")
    if not torch.allclose(after[:, :4].float(), before[:, :4].float(), atol=1e-5):  # a query saw later keys
        raise CheckFailed(_f("rope_attention: the outputs of tokens 0 .. 3 changed when tokens 4 .. 6 of q, k and v "
                             "changed. This looks like {mistake}", mistake=_(MASK_FORGOTTEN)), MASK_FORGOTTEN)


@check(0.25, "rope_attention's output is unchanged when every position shifts by the same amount", visible=True,
       cell="rope_attention")
def test_attention_shift(student):
    (cos, sin), qkv = turning_tables(40, 8, 1222), [randn(1223 + i, 1, 2, 6, 8) for i in range(3)]
    outputs = {shift: attend(student, *qkv, cos[shift:shift + 6], sin[shift:shift + 6]) for shift in (0, 7, 30)}
    for shift in (7, 30):
        expect_close(outputs[shift], outputs[0], _f("rope_attention on the tables' rows {start} .. {end}, compared "
                                                    "with rows 0 .. 5", start=shift, end=shift + 5), hint=SHIFT_HINT)


@check(0.25, "rope_attention passes its offset on: the tables' rows offset .. offset+T-1", visible=True,
       cell="rope_attention")
def test_attention_offset(student):
    (cos, sin), qkv = scrambled_tables(12, 8, 1226), [randn(1227 + i, 2, 5, 8) for i in range(3)]
    got = attend(student, *qkv, cos, sin, offset=4, calls=[(x, cos, sin, 0) for x in qkv[:2]])
    sliced, plain = attend(student, *qkv, cos[4:9], sin[4:9]), attend(student, *qkv, cos, sin)
    expect_close(got, sliced, _f("{call}, compared with your rope_attention on the tables' rows 4 .. 8",
                                 call="rope_attention(q, k, v, cos, sin, offset=4)"), mistakes={OFFSET_NOT_PASSED: plain})


@check(0.25, "rope_attention answers on its input's device", visible=True, cell="rope_attention")
def test_attention_device(student):
    (cos, sin), qkv = turning_tables(5, 8, 1230), [randn(1231 + i, 2, 5, 8) for i in range(3)]
    try:
        with student.standing_in(rotations([(x, cos, sin, 0) for x in qkv[:2]])):
            reply = student.run("rope_attention", *qkv, cos, sin, device="meta")
    except StudentFailure as failure:  # a mask made on the CPU meets the meta device's scores
        raise failure if failure.kind != "raised" else CheckFailed(_f(
            "rope_attention on the meta device raised: {error}. It mixes devices: make the mask on queries.device",
            error=failure.shortened(300))) from None
    mixed = "; ".join(reply.mixed_devices[:2])
    expect(not mixed, _f("rope_attention on the meta device mixes devices ({mixed}): make the mask on "
                         "queries.device", mixed=mixed))
    expect(reply.output_devices == ["meta"], _f("rope_attention on the meta device returned {value} instead of one "
                                                "tensor on that device", value=type(reply.value).__name__))
