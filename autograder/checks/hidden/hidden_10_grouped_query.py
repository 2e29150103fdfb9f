"""Hidden checks of section 10 (Grouped-query attention): the reference solution on fresh inputs.

Never shipped to students: the self-check wheel leaves autograder/checks/hidden/ out. The
section's registry entry and its visible checks are in autograder/checks/section_10_grouped_query.py;
the grader runs those first, then these.
"""

import torch

from autograder.checks.common import randn, seeded, with_params
from autograder.checks.grouped_forward import grouped_mistakes, own_grouped
from autograder.checks.section_10_grouped_query import NAME, forward, new_layer
from autograder.core.harness import check, expect_close
from autograder.i18n import _f
from solutions import efficient_mha
from solutions import grouped_query as ref


def reference(student, module, seed: int, *args, **kwargs):
    """The reference layer built as the student's was, holding the student's weights where their names and
    shapes are the reference's: forward alone is graded here, the creation order by its own check."""
    return with_params(seeded(ref.GroupedQueryAttention, *args, seed=seed, **kwargs), module.params())


@check(0.5, "GroupedQueryAttention matches the reference at other sizes")
def test_random(student):
    x = randn(2001, 3, 7, 5)
    module = new_layer(student, 5, 12, 9, 0.0, num_heads=6, num_kv_groups=3, qkv_bias=True, seed=2002)
    with torch.no_grad():
        expected = reference(student, module, 2002, 5, 12, 9, 0.0, num_heads=6, num_kv_groups=3, qkv_bias=True)(x)
    own = own_grouped(module.params(), 5, 12, 6, 3)
    expect_close(forward(module, x), expected,
                 _f("{name}(5, 12, 9, 0.0, num_heads=6, num_kv_groups=3, qkv_bias=True)(x), x of shape (3, 7, 5)",
                    name=NAME), mistakes=grouped_mistakes(own, x), device=student.device)


@check(0.25, "GroupedQueryAttention with a group per head equals notebook 08's fused layer holding its weights",
       cell=NAME)
def test_equals_fused(student):
    x = randn(2011, 2, 6, 5)
    module = new_layer(student, 5, 6, 8, 0.0, num_heads=3, num_kv_groups=3, qkv_bias=True, seed=2012)
    params = module.params()
    fused = seeded(efficient_mha.MultiHeadAttentionFused, 5, 6, 8, 0.0, num_heads=3, qkv_bias=True, seed=2013)
    names = ("W_query", "W_key", "W_value")
    if all(isinstance(params.get(f"{n}.{kind}"), torch.Tensor) for n in names for kind in ("weight", "bias")):
        with torch.no_grad():  # the weights mapped: the three projections stacked, queries first
            fused.W_qkv.weight.copy_(torch.cat([params[f"{n}.weight"] for n in names]))
            fused.W_qkv.bias.copy_(torch.cat([params[f"{n}.bias"] for n in names]))
            fused.out_proj.weight.copy_(params.get("out_proj.weight", fused.out_proj.weight))
            fused.out_proj.bias.copy_(params.get("out_proj.bias", fused.out_proj.bias))
            expected = fused(x)
    else:
        expected = fused(x).detach()
    expect_close(forward(module, x), expected,
                 _f("{name}(5, 6, 8, 0.0, num_heads=3, num_kv_groups=3, qkv_bias=True)(x), compared with "
                    "MultiHeadAttentionFused holding its weights (W_qkv = W_query, W_key, W_value stacked)", name=NAME),
                 mistakes=grouped_mistakes(own_grouped(params, 5, 6, 3, 3), x), device=student.device)


@check(0.25, "GroupedQueryAttention's cache matches the reference at other sizes", cell=NAME)
def test_cache_random(student):
    x = randn(2021, 2, 9, 5)
    module = new_layer(student, 5, 12, 10, 0.0, num_heads=6, num_kv_groups=3, qkv_bias=True, seed=2022)
    layer = reference(student, module, 2022, 5, 12, 10, 0.0, num_heads=6, num_kv_groups=3, qkv_bias=True)
    with torch.no_grad():
        steps = [layer(x[:, :4], use_cache=True)] + [layer(x[:, i:i + 2], use_cache=True) for i in (4, 6)]
        steps.append(layer(x[:, 8:], use_cache=True))
    module.call_method("reset_cache")
    got = [forward(module, x[:, :4], use_cache=True)] + [forward(module, x[:, i:i + 2], use_cache=True) for i in (4, 6)]
    got.append(forward(module, x[:, 8:], use_cache=True))
    got = torch.cat(got, dim=1) if all(isinstance(g, torch.Tensor) for g in got) else \
        next(g for g in got if not isinstance(g, torch.Tensor))
    expect_close(got,
                 torch.cat(steps, dim=1),
                 _f("{name}(5, 12, 10, 0.0, num_heads=6, num_kv_groups=3, qkv_bias=True): reset_cache(), then tokens "
                    "0-3, 4-5, 6-7 and 8 with use_cache=True", name=NAME), device=student.device)
