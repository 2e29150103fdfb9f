"""Hidden checks of section 06 (Split into heads, attend, rebuild): the reference solution on fresh inputs.

Never shipped to students: the self-check wheel leaves autograder/checks/hidden/ out. The
section's registry entry and its visible checks are in autograder/checks/section_06_multihead.py;
the grader runs those first, then these.
"""

import torch

from autograder.checks.common import expect_unchanged, randn, seeded, with_params
from autograder.checks.multihead_forward import mha_mistakes
from autograder.checks.multihead_mistakes import BARE_SPLIT, NO_SPLIT_SWAP, STRIDED_HEADS, TOKEN_DIM
from autograder.checks.section_06_multihead import new_mha
from autograder.core.harness import check, expect_close
from autograder.i18n import N_, _
from solutions import multihead as ref


def reference_output(reference, x):
    """The reference's forward in eval mode."""
    with torch.no_grad():
        return reference.eval()(x)


@check(0.5, "split_heads matches the reference on new (B, T, D) inputs")
def test_split_heads_random(student):
    x = randn(601, 3, 5, 12)
    reply = student.run("split_heads", x, 4, return_args=True)
    expect_close(reply.value, ref.split_heads(x, 4), _("split_heads(x, 4) on a (3, 5, 12) input"),
                 mistakes={BARE_SPLIT: x.reshape(3, 4, 5, 3), NO_SPLIT_SWAP: x.reshape(3, 5, 4, 3),
                           STRIDED_HEADS: x.reshape(3, 5, 3, 4).permute(0, 3, 1, 2)})
    expect_unchanged(reply, [x], "split_heads")


@check(0.5, "MultiHeadAttentionWrapper matches the reference at other sizes, heads in order")
def test_wrapper_random(student):
    x = randn(611, 2, 5, 4)
    module = student.new("MultiHeadAttentionWrapper", 4, 3, 7, 0.0, num_heads=3, seed=61)
    # with the student's own weights where they have the reference's names and shapes:
    # forward alone is graded here, the heads' creation by their own check
    reference = with_params(seeded(ref.MultiHeadAttentionWrapper, 4, 3, 7, 0.0, num_heads=3, seed=61),
                            module.params())
    with torch.no_grad():
        outputs = [head(x) for head in reference.heads]
    expect_close(module(x), torch.cat(outputs, dim=-1),
                 _("MultiHeadAttentionWrapper(4, 3, 7, 0.0, num_heads=3)(x) with torch.manual_seed(61): "
                   "expected shape (B, T, num_heads * d_out)"), device=student.device,
                 mistakes={N_("the heads concatenated in reverse order"): torch.cat(outputs[::-1], dim=-1),
                           TOKEN_DIM: torch.cat(outputs, dim=1)})


@check(0.75, "MultiHeadAttention matches the reference at other sizes, for T < context_length")
def test_mha_random(student):
    x = randn(621, 2, 7, 5)
    module = new_mha(student, 5, 6, 8, 0.0, num_heads=3, seed=71)
    # with the student's own weights where they have the reference's names and shapes (see above)
    reference = with_params(seeded(ref.MultiHeadAttention, 5, 6, 8, 0.0, num_heads=3, seed=71), module.params())
    got = module(x)
    expect_close(got, reference_output(reference, x), _("MultiHeadAttention(5, 6, 8, 0.0, num_heads=3)(x) with "
                                                        "torch.manual_seed(71), x of shape (2, 7, 5)"),
                 mistakes=mha_mistakes(reference, x, got), device=student.device)
