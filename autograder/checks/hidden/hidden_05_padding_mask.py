"""Hidden checks of section 05 (Batches of sentences of different lengths): the reference solution on fresh inputs.

Never shipped to students: the self-check wheel leaves autograder/checks/hidden/ out. The
section's registry entry and its visible checks are in autograder/checks/section_05_padding_mask.py;
the grader runs those first, then these.
"""

import torch

from autograder.checks.common import rand, randn, seeded, with_params
from autograder.checks.padding_stand_ins import new_padded, right_masked_scores
from autograder.checks.section_05_padding_mask import expect_pair_close, module_mistakes, padding_mistakes
from autograder.core.harness import check
from autograder.i18n import _, _f
from solutions import padding_mask as ref


@check(1, "padded_attention matches the reference on new inputs")
def test_padded_attention(student):
    queries, keys, values = randn(519, 4, 7, 5, scale=2.0), randn(520, 4, 7, 5), randn(521, 4, 7, 5)
    mask = ref.key_padding_mask([7, 2, 5, 1], 7)
    # the reference mask_padded_scores in place of the student's own: a wrong one costs its own checks only
    with student.standing_in(right_masked_scores(queries, keys, mask, masked=ref.mask_padded_scores)):
        got = student.call("padded_attention", queries, keys, values, mask)
    expect_pair_close(got, ref.padded_attention(queries, keys, values, mask),
                      _("padded_attention on (4, 7, 5) inputs with lengths [7, 2, 5, 1]"),
                      padding_mistakes(queries, keys, values, mask), student.device)


# 0.75 point, where the visible comparison with nn.MultiheadAttention carries 1.5 and both masks' check 0.25:
# a written-out forward then costs the self-check within a point of what it costs the grade
@check(0.75, "PaddedSelfAttention matches the reference with both masks, at another size")
def test_padded_self_attention_seeded(student):
    q, k, v = randn(522, 4, 6, 5), randn(524, 4, 6, 5), randn(525, 4, 6, 5)  # distinct: each has its projection
    mask = ref.key_padding_mask([6, 3, 5, 1], 6)
    causal = torch.triu(torch.ones(6, 6, dtype=torch.bool), diagonal=1)
    per_item = rand(523, 4, 6, 6) > 0.6
    per_item[:, :, 0] = False  # key 0 is real in every item and always allowed: no row is hidden entirely
    module = new_padded(student, 5, seed=57, masked=ref.mask_padded_scores, attention=ref.padded_attention)
    # with the student's own weights where they have the reference's names and shapes:
    # forward alone is graded here, the creation order by its own check
    reference = with_params(seeded(ref.PaddedSelfAttention, 5, seed=57), module.params())
    for attn_mask, what in ((causal, _("a causal (6, 6) attn_mask")), (per_item, _("a (4, 6, 6) attn_mask"))):
        with torch.no_grad():
            expected = reference(q, k, v, key_padding_mask=mask, attn_mask=attn_mask)
        expect_pair_close(module(q, k, v, key_padding_mask=mask, attn_mask=attn_mask), expected,
                          _f("PaddedSelfAttention(5)(q, k, v) with lengths [6, 3, 5, 1] and {what}", what=what),
                          module_mistakes(reference, q, k, v, mask, attn_mask), student.device)
