"""Hidden checks of section 01 (Attention scores without trainable weights): the reference solution on fresh inputs.

Never shipped to students: the self-check wheel leaves autograder/checks/hidden/ out. The
section's registry entry and its visible checks are in autograder/checks/section_01_scores.py;
the grader runs those first, then these.
"""

from autograder.checks.common import randn
from autograder.checks.section_01_scores import WRONG_SIDE
from autograder.core.harness import check, expect_close
from autograder.i18n import N_, _f
from solutions import scores as ref


@check(0.25, "dot_scores matches the reference on new inputs")
def test_dot_scores_random(student):
    inputs, query = randn(101, 7, 5), randn(102, 5)
    expect_close(student.call("dot_scores", query, inputs), ref.dot_scores(query, inputs),
                 _f("{name} on a {shape} input", name="dot_scores", shape=(7, 5)),
                 mistakes={N_("a sum of |x_i - q| instead of a dot product"): (inputs - query).abs().sum(-1)})


@check(0.75, "score_matrix matches the reference on new (T, d) inputs")
def test_score_matrix_random(student):
    for seed, shape in ((103, (5, 4)), (104, (7, 3))):
        single = randn(seed, *shape)
        expect_close(student.call("score_matrix", single), ref.score_matrix(single),
                     _f("{name} on a {shape} input", name="score_matrix", shape=shape),
                     mistakes={WRONG_SIDE: single.T @ single})
