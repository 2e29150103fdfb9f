"""Hidden checks of section 11 (Sliding-window attention): the reference solution on fresh inputs.

Never shipped to students: the self-check wheel leaves autograder/checks/hidden/ out. The
section's registry entry and its visible checks are in autograder/checks/section_11_sliding_window.py;
the grader runs those first, then these.
"""

import torch

from autograder.checks.common import meeting, randn, seeded, with_params
from autograder.checks.multihead_forward import own_layers
from autograder.checks.section_11_sliding_window import LAYER_MASKS, NAME, expect_mask, new_layer, run_cached
from autograder.checks.window_forward import LAYER_KINDS, decode_mistakes, windowed
from autograder.core.harness import check, expect_close
from autograder.i18n import _f
from solutions import sliding_window as ref


@check(0.5, "sliding_window_mask matches the reference at other sizes")
def test_mask_random(student):
    for num_tokens, window in ((11, 5), (3, 7), (8, 1)):
        got = student.call("sliding_window_mask", num_tokens, window)
        expect_mask(got, num_tokens, window)
        expect_close(got, ref.sliding_window_mask(num_tokens, window), f"sliding_window_mask({num_tokens}, {window})")


def reference_layer(params, window: int, seed: int):
    return with_params(seeded(ref.SlidingWindowAttention, 5, 6, 16, 0.0, num_heads=3, window=window,
                              qkv_bias=True, seed=seed), params).eval()


@check(0.5, "SlidingWindowAttention matches the reference at other sizes")
@meeting(LAYER_MASKS)
def test_layer_random(student):
    x = randn(2101, 3, 10, 5)
    module = new_layer(student, 5, 6, 16, 0.0, num_heads=3, window=4, qkv_bias=True, seed=2102)
    params = module.params()
    with torch.no_grad():
        expected = reference_layer(params, 4, 2102)(x)
    own = own_layers(params, 5, 6, 3)
    mistakes = {m: windowed(own, x, 4, kind) for kind, m in LAYER_KINDS.items() if m} if own is not None else {}
    expect_close(module(x), expected, _f("{name}(5, 6, 16, 0.0, num_heads=3, window=4, qkv_bias=True)(x), x of shape "
                                         "(3, 10, 5)", name=NAME), mistakes=mistakes, device=student.device)


@check(0.5, "SlidingWindowAttention decodes in pieces of several sizes as the reference does")
@meeting(LAYER_MASKS)
def test_layer_cached_random(student):
    sizes = [3, 2, 1, 4, 1, 1]
    x = randn(2111, 2, sum(sizes), 5)
    module = new_layer(student, 5, 6, 16, 0.0, num_heads=3, window=4, qkv_bias=True, seed=2112)
    params = module.params()
    reference = reference_layer(params, 4, 2112)
    with torch.no_grad():
        expected, start = [], 0
        for size in sizes:
            expected.append(reference(x[:, start:start + size], use_cache=True))
            start += size
    got, _cached = run_cached(module, x, sizes, 6)
    own = own_layers(params, 5, 6, 3)
    expect_close(got, torch.cat(expected, dim=1),
                 _f("{name}(5, 6, 16, 0.0, num_heads=3, window=4, qkv_bias=True) fed in pieces of {sizes} tokens with "
                    "use_cache=True", name=NAME, sizes=sizes),
                 mistakes=decode_mistakes(own, x, 4, sizes) if own is not None else {}, device=student.device)
