"""Hidden checks of section 12 (Rotary position embeddings): the reference solution on fresh inputs.

Never shipped to students: the self-check wheel leaves autograder/checks/hidden/ out. The section's registry
entry and its visible checks are in autograder/checks/section_12_rope.py; the grader runs those first, then these.
The right answers come from the reference (solutions.rope) here only: the visible checks, shipped in the self-check
wheel, hold documented data and properties, and the common slips' values.
"""

from autograder.checks.common import randn
from autograder.checks.rope_slips import (ATTENTION_HINT, OFFSET_NOT_PASSED, attend, attention_mistakes,
                                          scrambled_tables)
from autograder.checks.section_12_rope import (ANGLES_HINT, OFFSET_IGNORED, ROTATE_HINT, THETA_IGNORED,
                                               angle_mistakes, angles_of, expect_tables, rope_or_named,
                                               rotate_mistakes)
from autograder.core.harness import check, expect_close
from autograder.i18n import _f
from solutions import rope as ref


@check(0.75, "rope_angles matches the reference on new sizes and bases")
def test_reference_angles(student):
    for head_dim, context_length, theta_base in ((16, 50, None), (6, 9, None), (64, 128, None),
                                                 (8, 12, 500_000.0), (4, 7, 100.0)):
        cos, sin, what = angles_of(student, head_dim, context_length, theta_base)
        base = 10_000.0 if theta_base is None else theta_base
        expected = ref.rope_angles(head_dim, context_length, base)
        mistakes = angle_mistakes(head_dim, context_length, base)
        if base != 10_000.0:
            mistakes[THETA_IGNORED] = ref.rope_angles(head_dim, context_length)
        if context_length <= 12:  # short: the documented tolerance, and the slips named
            expect_tables(cos, sin, expected, mistakes, what)
            continue
        # the angle p * inv_freq rounds at the scale of p in float32: the tolerance grows with the positions
        for label, got, right in (("cos", cos, expected[0]), ("sin", sin, expected[1])):
            expect_close(got, right, f"{label}: {what}", scale=float(context_length), hint=ANGLES_HINT,
                         mistakes={name: pair[label == "sin"] for name, pair in mistakes.items()})


@check(0.75, "apply_rope matches the reference on new inputs and offsets")
def test_reference_rotation(student):
    for seed, shape, head_dim, offset in ((1291, (3, 10, 16), 16, 0), (1292, (2, 4, 5, 6), 6, 7),
                                          (1293, (1, 8), 8, 2), (1294, (2, 2, 1, 32), 32, 40)):
        cos, sin = ref.rope_angles(head_dim, 64)
        x = randn(seed, *shape)
        what = f"apply_rope(x of shape {shape}, cos, sin, offset={offset})"
        got = rope_or_named(student, x, cos, sin, what, offset=offset)
        mistakes = rotate_mistakes(x, cos, sin, offset)
        if offset:
            mistakes[OFFSET_IGNORED] = ref.apply_rope(x, cos, sin)
        expect_close(got, ref.apply_rope(x, cos, sin, offset), what, hint=ROTATE_HINT, mistakes=mistakes)


def reference_attention(student, queries, keys, values, cos, sin, offset=0):
    """The student's rope_attention, their apply_rope answering the reference's rotations of the queries and keys."""
    return attend(student, queries, keys, values, cos, sin, offset=offset, rotate=ref.apply_rope)


@check(0.25, "rope_attention matches the reference on new inputs, offsets and tables")
def test_reference_attention(student):
    for seed, shape, offset, scrambled in ((1295, (3, 10, 16), 0, False), (1296, (2, 4, 5, 6), 7, False),
                                           (1297, (1, 8), 2, True), (1298, (2, 2, 7, 32), 40, True)):
        cos, sin = scrambled_tables(64, shape[-1], seed + 10) if scrambled else ref.rope_angles(shape[-1], 64)
        qkv = [randn(seed + 20 * i, *shape) for i in range(3)]
        what = f"rope_attention(q, k, v of shape {shape}, cos, sin, offset={offset})"
        got = reference_attention(student, *qkv, cos, sin, offset)
        mistakes = attention_mistakes(*qkv, cos, sin, offset)
        if offset:
            mistakes[OFFSET_NOT_PASSED] = ref.rope_attention(*qkv, cos, sin)
        expect_close(got, ref.rope_attention(*qkv, cos, sin, offset), what, hint=ATTENTION_HINT, mistakes=mistakes)


@check(0.25, "rope_attention's output is unchanged when every position shifts, on new sizes")
def test_reference_attention_shift(student):
    cos, sin = ref.rope_angles(16, 128)
    qkv = [randn(1299 + i, 2, 3, 9, 16) for i in range(3)]
    start = reference_attention(student, *qkv, cos, sin)
    for offset in (5, 100):
        expect_close(reference_attention(student, *qkv, cos, sin, offset), start,
                     _f("{call}, compared with offset=0", call=f"rope_attention(q, k, v, cos, sin, offset={offset})"),
                     hint=ATTENTION_HINT)
