"""Hidden checks of section 12 (Rotary position embeddings): the reference solution on fresh inputs.

Never shipped to students: the self-check wheel leaves autograder/checks/hidden/ out. The section's registry
entry and its visible checks are in autograder/checks/section_12_rope.py; the grader runs those first, then these.
The right answers come from the reference (solutions.rope) here only: the visible checks, shipped in the self-check
wheel, hold documented data and properties, and the common slips' values.
"""

from autograder.checks.common import randn
from autograder.checks.section_12_rope import (ANGLES_HINT, OFFSET_IGNORED, ROTATE_HINT, THETA_IGNORED, angle_mistakes,
                                               angles_of, expect_tables, rope_or_named, rotate_mistakes)
from autograder.core.harness import check, expect_close
from solutions import rope as ref


@check(1, "rope_angles matches the reference on new sizes and bases")
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


@check(1, "apply_rope matches the reference on new inputs and offsets")
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
