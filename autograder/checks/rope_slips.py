"""Section 12's common slips, computed to name them, and the tables its checks hand in: for rope_angles and
apply_rope, the slips' values and tables of random frequencies; for rope_attention, its slips' values, the right
rotations handed in place of the student's apply_rope (so that a mistake there costs apply_rope's checks only),
and the student's call made with them. Shipped in the self-check wheel: it never computes a graded name's right
answer; the right rotations of the queries and keys are apply_rope's contract written out, in a stand-in table only.
"""
import torch

from autograder.checks.common import rand, stand_in_table
from autograder.i18n import N_

DOC_ATTENTION = torch.tensor(  # rope_attention(queries, keys, values, cos, sin) of the worked example
    [[0.8918, 0.9171, 1.0733, 0.8657],
     [1.2376, 0.8801, 1.4021, 1.2247],
     [1.3093, 0.8704, 1.4677, 1.3086],
     [1.1689, 0.7687, 1.3119, 1.1535],
     [1.0449, 0.7358, 1.1691, 1.0933],
     [1.0730, 0.6947, 1.2029, 1.0545]])

ATTENTION_HINT = N_("check the steps: apply_rope on the queries and on the keys with the same offset, the scores "
                    "q @ k.transpose(-2, -1) / head_dim ** 0.5, -inf where a key comes after its query, the softmax "
                    "over the keys, then the weights @ values, the values as they are")
VALUES_ROTATED = N_("RoPE applied to the values too: only the queries and the keys are rotated, the values carry "
                    "what a token says, not where it sits")
QUERIES_ONLY = N_("RoPE applied to the queries only: the keys must be rotated too, or the scores depend on where "
                  "the tokens sit and not only on how far apart they are")
OFFSET_NOT_PASSED = N_("offset not passed on to apply_rope: the tokens were rotated at positions 0 .. T - 1 "
                       "instead of offset .. offset + T - 1")
MASK_FORGOTTEN = N_("the causal mask forgotten: each query must see the keys at its own position and before, "
                    "never the later ones")
SHIFT_HINT = N_("only the queries and the keys turn, both by their own position's angle: then each score depends on "
                "how far apart the two tokens are, not on where they sit")
UNSCALED = N_("the scores not divided by the square root of head_dim")

# rope_angles' slips of the exponent's sign and division (section_12_rope.ANGLE_SLIPS names them all)
EXPONENT_PLUS = N_("the minus of the exponent forgotten: theta_base ** (2i / head_dim) makes the frequencies grow "
                   "with i; inv_freq = theta_base ** (-2i / head_dim) makes them fall")
INTEGER_DIVISION = N_("integer division in the exponent: torch.arange(0, head_dim, 2) // head_dim is 0 for every pair, "
                      "so every frequency is 1; divide with /, which gives floats")


def slipped_tables(head_dim, context_length, theta_base, slip) -> tuple:
    """(cos, sin) in float32 as one common slip of rope_angles gives them (slip: a value of ANGLE_SLIPS); the
    right tables are the documented data of section_12_rope, or the reference in the hidden checks."""
    first = 1 if slip == "from_one" else 0
    positions = torch.arange(first, first + context_length, dtype=torch.float64)
    if slip == "each":  # every column its own exponent j / d: no duplication
        angles = positions[:, None] * theta_base ** (-torch.arange(head_dim, dtype=torch.float64) / head_dim)
        return torch.cos(angles).float(), torch.sin(angles).float()
    pair = torch.arange(head_dim // 2, dtype=torch.float64)
    # "plus": the exponent's minus forgotten; "integer": 2i // head_dim, 0 for every pair (every frequency 1)
    power = {"pair": pair / head_dim, "undivided": 2 * pair, "plus": -2 * pair / head_dim,
             "integer": 0 * pair}.get(slip, 2 * pair / head_dim)
    angles = positions[:, None] * theta_base ** (-power)
    angles = angles.repeat_interleave(2, dim=-1) if slip == "interleave" else torch.cat((angles, angles), dim=-1)
    return torch.cos(angles).float(), torch.sin(angles).float()


def slipped_rotation(x, cos, sin, slip, offset=0) -> torch.Tensor:
    """What one common slip of apply_rope gives (slip: a value of ROTATION_SLIPS), in float64, as float32."""
    x, num_tokens, half = x.double(), x.shape[-2], x.shape[-1] // 2
    cos, sin = cos[offset:offset + num_tokens].double(), sin[offset:offset + num_tokens].double()
    if slip == "interleaved":  # pair (2i, 2i + 1) turned by pair i's angle
        c, s = cos[:, :half], sin[:, :half]
        even, odd = x[..., 0::2], x[..., 1::2]
        return torch.stack((even * c - odd * s, odd * c + even * s), dim=-1).flatten(-2).float()
    x1, x2 = x[..., :half], x[..., half:]
    turned = {"sign": (x2, -x1), "no_minus": (x2, x1)}[slip]
    return (x * cos + torch.cat(turned, dim=-1) * sin).float()


def turning_tables(rows, head_dim, seed) -> tuple:
    """(cos, sin) of angles proportional to the position, with random frequencies (not RoPE's): any such table
    turns each pair by an angle proportional to its position, all the properties below need."""
    frequencies = rand(seed, head_dim // 2)
    angles = torch.arange(rows, dtype=torch.float32)[:, None] * frequencies[None, :]
    angles = torch.cat((angles, angles), dim=-1)
    return torch.cos(angles), torch.sin(angles)


# ---------------------------------------------------------------- rope_attention


ROTATE_PARAMS, ROTATE_DEFAULTS = ("x", "cos", "sin", "offset"), {"offset": 0}
SLIPS = {VALUES_ROTATED: "values", QUERIES_ONLY: "queries_only", MASK_FORGOTTEN: "no_mask", UNSCALED: "unscaled"}


def rotations(calls, rotate=None) -> dict:
    """apply_rope's stand-in table for `calls`, (x, cos, sin, offset) tuples: the rows of the tables at the
    tokens' positions, x * cos + rotate_half(x) * sin as its contract says (or `rotate`, the reference, in a
    hidden check)."""
    rows = []
    for x, cos, sin, offset in calls:
        if rotate is not None:
            turned = rotate(x, cos, sin, offset)
        else:
            rows_of = slice(offset, offset + x.shape[-2])
            x64, half = x.double(), x.shape[-1] // 2
            halves = torch.cat((-x64[..., half:], x64[..., :half]), dim=-1)
            turned = (x64 * cos[rows_of].double() + halves * sin[rows_of].double()).float()
        rows.append(({"x": x, "cos": cos, "sin": sin, "offset": offset}, turned))
    return {"apply_rope": stand_in_table(ROTATE_PARAMS, rows, ROTATE_DEFAULTS)}


def slipped_attention(slip, queries, keys, values, cos, sin, offset=0) -> torch.Tensor:
    """What one common slip of rope_attention gives (slip: a value of SLIPS), in float64, as float32."""
    def turned(x):
        rows_of, half = slice(offset, offset + x.shape[-2]), x.shape[-1] // 2
        x = x.double()
        return x * cos[rows_of].double() + torch.cat((-x[..., half:], x[..., :half]), dim=-1) * sin[rows_of].double()
    q = turned(queries)
    k = keys.double() if slip == "queries_only" else turned(keys)
    v = turned(values) if slip == "values" else values.double()
    scores = q @ k.transpose(-2, -1) / (1.0 if slip == "unscaled" else queries.shape[-1] ** 0.5)
    if slip != "no_mask":
        size = scores.shape[-1]
        scores = scores.masked_fill(torch.ones(size, size, dtype=torch.bool).triu(1), float("-inf"))
    return (torch.softmax(scores, dim=-1) @ v).float()


def attention_mistakes(queries, keys, values, cos, sin, offset=0) -> dict:
    """description -> what each common slip of rope_attention gives on these arguments."""
    return {name: slipped_attention(slip, queries, keys, values, cos, sin, offset) for name, slip in SLIPS.items()}


def scrambled_tables(rows, head_dim, seed) -> tuple:
    """(cos, sin) of random angles, one per row and pair, the halves alike: tables whose rows differ by more than
    a shift, so that a result tells which rows were read (with RoPE's own tables a shift of every position
    changes nothing in attention)."""
    angles = rand(seed, rows, head_dim // 2) * 6.0
    angles = torch.cat((angles, angles), dim=-1)
    return torch.cos(angles), torch.sin(angles)


def attend(student, queries, keys, values, cos, sin, offset=None, rotate=None, calls=()):
    """The student's rope_attention(queries, keys, values, cos, sin[, offset]), their apply_rope answering the
    right rotations of the queries and the keys at `offset` (and of the extra `calls`)."""
    at = offset or 0
    table = rotations([(queries, cos, sin, at), (keys, cos, sin, at), *calls], rotate)
    kwargs = {} if offset is None else {"offset": offset}
    with student.standing_in(table):
        return student.call("rope_attention", queries, keys, values, cos, sin, **kwargs)
