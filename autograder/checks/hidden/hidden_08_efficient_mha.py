"""Hidden checks of section 08 (Efficient multi-head attention): the reference solution on fresh inputs.

Never shipped to students: the self-check wheel leaves autograder/checks/hidden/ out. The
section's registry entry and its visible checks are in autograder/checks/section_08_efficient_mha.py;
the grader runs those first, then these.
"""

import torch

from autograder.checks.common import randn, seeded, with_params
from autograder.checks.fused_forward import MISTAKES_OF, as_mha, load_mistakes, seeded_mha
from autograder.checks.multihead_forward import attend
from autograder.checks.section_08_efficient_mha import loaded, new_layer
from autograder.core.harness import check, expect_close
from autograder.i18n import _f
from solutions import efficient_mha as ref


def expect_reference(student, name: str, seed: int) -> None:
    """The eval-mode forward at other sizes (T < context_length), with the student's own weights where they have
    the reference's names and shapes: forward alone is graded here, the creation order by its own check."""
    x = randn(seed, 3, 7, 5)
    module = new_layer(student, name, 5, 6, 9, 0.0, num_heads=3, qkv_bias=True, seed=seed + 1)
    params = module.params()
    reference = with_params(seeded(getattr(ref, name), 5, 6, 9, 0.0, num_heads=3, qkv_bias=True, seed=seed + 1),
                            params)
    with torch.no_grad():
        expected = reference.eval()(x)
    got = module(x)
    expect_close(got, expected, _f("{name}(5, 6, 9, 0.0, num_heads=3, qkv_bias=True)(x) with torch.manual_seed({seed}), "
                                   "x of shape (3, 7, 5)", name=name, seed=seed + 1),
                 mistakes=MISTAKES_OF[name](params, x, got, 5, 6, 3), device=student.device)


@check(0.75, "MultiHeadAttentionFused matches the reference at other sizes")
def test_fused_random(student):
    expect_reference(student, "MultiHeadAttentionFused", 1801)


@check(0.25, "MultiHeadAttentionFused.load_from matches notebook 06's MultiHeadAttention at other sizes",
       cell="MultiHeadAttentionFused")
def test_load_from_random(student):
    source = seeded_mha(5, 8, 1811)
    fused = loaded(student, 5, 8, 4, source, seed=1812)
    x = randn(1813, 2, 7, 5)
    expect_close(fused(x), attend(as_mha(source, 4), x),
                 "MultiHeadAttentionFused(5, 8, 8, 0.0, num_heads=4, qkv_bias=True).load_from(mha)(x), x of shape "
                 "(2, 7, 5)", mistakes=load_mistakes(source, x, 4, 1812), device=student.device)


@check(0.75, "MultiHeadAttentionSDPA matches the reference at other sizes")
def test_sdpa_random(student):
    expect_reference(student, "MultiHeadAttentionSDPA", 1821)
