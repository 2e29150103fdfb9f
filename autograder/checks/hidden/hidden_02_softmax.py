"""Hidden checks of section 02 (From scores to weights to context vectors): the reference solution on fresh inputs.

Never shipped to students: the self-check wheel leaves autograder/checks/hidden/ out. The
section's registry entry and its visible checks are in autograder/checks/section_02_softmax.py;
the grader runs those first, then these.
"""

import torch

from autograder.checks.common import randn
from autograder.checks.section_02_softmax import (COLUMNS, OVER_EMBEDDING, TRANSPOSED, TRANSPOSED_BATCH, UNSCALED,
                                                  right_helpers)
from autograder.core.harness import check, expect_close
from autograder.i18n import N_, _f
from solutions import softmax as ref


@check(0.5, "context_vectors: weighted sums for one query, all queries and a batch")
def test_context_vectors_random(student):
    inputs = randn(217, 5, 3)
    one = ref.softmax(randn(218, 5))
    expect_close(student.call("context_vectors", one, inputs), ref.context_vectors(one, inputs),
                 _f("{name} with {weights} weights and {inputs} inputs", name="context_vectors", weights=(5,),
                    inputs=(5, 3)),
                 mistakes={OVER_EMBEDDING: (one.unsqueeze(-1) * inputs).sum(-1)})
    square = ref.softmax(randn(219, 5, 5))
    expect_close(student.call("context_vectors", square, inputs), ref.context_vectors(square, inputs),
                 _f("{name} with {weights} weights and {inputs} inputs", name="context_vectors", weights=(5, 5),
                    inputs=(5, 3)),
                 mistakes={TRANSPOSED: square.T @ inputs})
    batch_weights, batch_inputs = ref.softmax(randn(220, 2, 5, 5)), randn(221, 2, 5, 3)
    expect_close(student.call("context_vectors", batch_weights, batch_inputs),
                 ref.context_vectors(batch_weights, batch_inputs),
                 _f("{name} with {weights} weights and {inputs} inputs", name="context_vectors",
                    weights=(2, 5, 5), inputs=(2, 5, 3)),
                 mistakes={TRANSPOSED_BATCH: batch_weights.transpose(-2, -1) @ batch_inputs})


@check(1, "simple_self_attention on new (T, d) and batched (B, T, d) inputs")
def test_simple_attention_random(student):
    for seed, shape in ((222, (5, 4)), (223, (3, 5, 4))):
        x = randn(seed, *shape)
        scores = x @ x.transpose(-2, -1)
        mistakes = {
            COLUMNS: torch.softmax(scores, -2) @ x,
            N_("softmax over dim 0 (the batch dim) instead of the last dim"): torch.softmax(scores, 0) @ x,
            UNSCALED: torch.softmax(scores / 2.0, -1) @ x,
            N_("weights normalised by their sum instead of softmax"): ref.normalize_by_sum(scores) @ x,
        }
        # the reference softmax and context_vectors in place of the student's: their mistakes cost their own checks
        with student.standing_in(right_helpers(x, softmax=ref.softmax, context=ref.context_vectors)):
            got = student.call("simple_self_attention", x)
        expect_close(got, ref.simple_self_attention(x),
                     _f("{name} on a {shape} input", name="simple_self_attention", shape=shape), mistakes=mistakes)
