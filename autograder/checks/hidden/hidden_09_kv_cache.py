"""Hidden checks of section 09 (The KV cache): the reference solution on fresh inputs.

Never shipped to students: the self-check wheel leaves autograder/checks/hidden/ out. The
section's registry entry and its visible checks are in autograder/checks/section_09_kv_cache.py;
the grader runs those first, then these.
"""

import torch

from autograder.checks.cached_forward import LAYER, decode_mistakes, decoded
from autograder.checks.common import randn, seeded, with_params
from autograder.checks.section_09_kv_cache import expect_bytes, new_cached, own
from autograder.core.harness import check, expect_close
from autograder.i18n import _f
from solutions import kv_cache as ref


@check(1.0, "MultiHeadAttentionCached matches the reference at other sizes, decoded in chunks",
       cell="MultiHeadAttentionCached")
def test_cached_random(student):
    """Decoded in chunks after a reset, with the student's own weights where they have the reference's names and
    shapes: the cached forward alone is graded here, the creation order by its own check."""
    seed, sizes = 1901, (3, 1, 2, 1)
    x = randn(seed, 3, 7, 5)
    module = new_cached(student, 5, 8, 9, 0.0, num_heads=4, qkv_bias=True, seed=seed + 1)
    reference = with_params(seeded(ref.MultiHeadAttentionCached, 5, 8, 9, 0.0, num_heads=4, qkv_bias=True,
                                   seed=seed + 1), module.params())
    with torch.no_grad():
        expected = torch.cat([reference(part, use_cache=True) for part in torch.split(x, list(sizes), dim=1)], dim=1)
    got, _rows = decoded(module, x, sizes)
    expect_close(got, expected, _f("{name}(5, 8, 9, 0.0, num_heads=4, qkv_bias=True) with torch.manual_seed({seed}), "
                                   "x of shape (3, 7, 5) fed in chunks of 3, 1, 2 and 1 tokens with use_cache=True",
                                   name=LAYER, seed=seed + 1),
                 mistakes=decode_mistakes(own(module, 5, 8, 4), x, sizes), device=student.device)


@check(0.5, "kv_cache_bytes matches the reference at other sizes", cell="kv_cache_bytes")
def test_bytes_random(student):
    generator = torch.Generator().manual_seed(1911)
    cases = []
    for _case in range(4):
        args = tuple(int(v) for v in torch.randint(1, 50, (4,), generator=generator)) + (2,)
        cases.append((args, ref.kv_cache_bytes(*args)))
    expect_bytes(student, cases, "kv_cache_bytes")
