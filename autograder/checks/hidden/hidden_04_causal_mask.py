"""Hidden checks of section 04 (Hiding the future): the reference solution on fresh inputs.

Never shipped to students: the self-check wheel leaves autograder/checks/hidden/ out. The
section's registry entry and its visible checks are in autograder/checks/section_04_causal_mask.py;
the grader runs those first, then these.
"""

import torch

from autograder.checks.common import PLUS_INF, PLUS_INF_NAN, meeting, randn, seeded, stand_in_table, with_params
from autograder.checks.section_04_causal_mask import (COLUMN_SUMS, DIAGONAL, MASK_PARAMS, NOT_RENORMALISED,
                                                      attention_mistakes, right_weights, weight_mistakes)
from autograder.core.harness import check, close, expect_close
from autograder.i18n import N_, _
from solutions import causal_mask as ref


def reference_output(reference, x, *, train_seed=None, device="cpu"):
    """The reference's forward; with train_seed, in train mode right after torch.manual_seed(train_seed).

    Dropout masks differ between devices: in train mode, run on the device the student's code runs on.
    """
    device = "cpu" if device == "meta" else device
    reference.train(train_seed is not None)
    if train_seed is not None:
        torch.manual_seed(train_seed)
    with torch.no_grad():
        out = reference.to(device)(x.to(device)).cpu()
    reference.to("cpu").eval()
    return out


def reference_masks(*sizes) -> dict:
    """The reference causal_mask's answers at `sizes`: what the student's weight functions meet in place of
    their own causal_mask (Student.standing_in), so that a wrong causal_mask costs causal_mask's checks only."""
    rows = [({"num_tokens": size}, ref.causal_mask(size)) for size in sizes]
    return {"causal_mask": stand_in_table(MASK_PARAMS, rows, {"device": None})}


@check(0.5, "mask_and_renormalize zeroes the future and renormalises each row")
def test_mask_and_renormalize(student):
    single = torch.softmax(randn(401, 5, 5, scale=2.0), dim=-1)
    batch = torch.softmax(randn(402, 3, 4, 4, scale=2.0), dim=-1)
    # i18n: the whole phrase per input, so that word order is free
    for weights, what in ((single, _("mask_and_renormalize of a (5, 5) weights")),
                          (batch, _("mask_and_renormalize of a (3, 4, 4) batch of weights"))):
        future = ref.causal_mask(weights.shape[-1])
        zeroed = weights.masked_fill(future, 0.0)
        past = weights.masked_fill(~torch.tril(torch.ones_like(future), diagonal=-1), 0.0)
        with student.standing_in(reference_masks(weights.shape[-1])):
            got = student.call("mask_and_renormalize", weights.clone())
        expect_close(got, ref.mask_and_renormalize(weights),
                     what, device=student.device,
                     mistakes={NOT_RENORMALISED: zeroed,
                               COLUMN_SUMS:
                                   zeroed / zeroed.sum(dim=-2, keepdim=True),
                               N_("divided by the sum of all the weights instead of each row's sum"):
                                   zeroed / zeroed.sum(),
                               DIAGONAL: past / past.sum(dim=-1, keepdim=True)})


@check(0.75, "causal_attention_weights masks before the softmax of scores / sqrt(d_k)")
def test_causal_attention_weights(student):
    for scores, d_k, what in ((randn(403, 5, 5, scale=3.0), 4, _("causal_attention_weights on (5, 5) scores, d_k=4")),
                              (randn(404, 2, 6, 6, scale=3.0), 9,
                               _("causal_attention_weights on (2, 6, 6) scores, d_k=9"))):
        with student.standing_in(reference_masks(scores.shape[-1])):
            got = student.call("causal_attention_weights", scores.clone(), d_k)
        mistakes = weight_mistakes(scores, d_k)
        expect_close(got, ref.causal_attention_weights(scores, d_k), what, mistakes=mistakes,
                     nan_note=PLUS_INF_NAN if close(got, mistakes[PLUS_INF]) else "", device=student.device)


@check(0.5, "CausalAttention matches the reference at other sizes, for T < context_length")
@meeting({**reference_masks(*range(1, 9)), **right_weights()})  # T = 5 or context_length = 8, the weights
def test_causal_attention_seeded(student):
    x = randn(405, 2, 5, 6)
    module = student.new("CausalAttention", 6, 3, 8, 0.0, seed=40)
    # with the student's own weights where they have the reference's names and shapes:
    # forward alone is graded here, the creation order by its own check
    reference = with_params(seeded(ref.CausalAttention, 6, 3, 8, 0.0, seed=40), module.params())
    expect_close(module(x), reference_output(reference, x),
                 _("CausalAttention(6, 3, 8, 0.0) with torch.manual_seed(40) on 5 of 8 tokens"),
                 mistakes=attention_mistakes(reference, x), device=student.device)
