"""Hidden checks of section 07 (Sinusoidal positional encoding): the reference solution on fresh inputs.

Never shipped to students: the self-check wheel leaves autograder/checks/hidden/ out. The
section's registry entry and its visible checks are in autograder/checks/section_07_positional_encoding.py;
the grader runs those first, then these.
"""

from autograder.checks.section_07_positional_encoding import SHORT_END, START_IGNORED, common_mistakes, encode
from autograder.core.harness import check, expect_close
from solutions import positional_encoding as ref


def mistakes_of(num_positions, d_model, start=0) -> dict:
    """The common wrong encodings (common_mistakes), with `start` ignored or ending too early where a start is given."""
    wrong = common_mistakes(num_positions, d_model, start)
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
