"""Hidden checks of section 13 (Tiled attention with an online softmax): the reference solution on fresh inputs.

Never shipped to students: the self-check wheel leaves autograder/checks/hidden/ out. The
section's registry entry and its visible checks are in autograder/checks/section_13_tiled_attention.py;
the grader runs those first, then these.
"""

import torch

from autograder.checks.common import randn
from autograder.checks.section_13_tiled_attention import NAME, attend, called
from autograder.checks.tiled_forward import NAN_HERE, slipped
from autograder.core.harness import check, expect_close
from autograder.i18n import _f
from solutions import tiled_attention as ref


def expect_reference(student, shape: tuple, seed: int, causal: bool, **blocks) -> None:
    """out and logsumexp against the reference, at other sizes and blocks (those given, else the defaults)."""
    q, k, v = (randn(seed + i, *shape, scale=1.5) for i in range(3))
    arguments = "".join(f"{key}={value}, " for key, value in blocks.items())
    what = called(f"tiled_attention(q, k, v, {arguments}causal={causal})", shape)
    out, lse, _reply = attend(student, q, k, v, what, causal=causal, **blocks)
    with torch.no_grad():
        expected = ref.tiled_attention(q, k, v, causal=causal, **blocks)
    block_q, block_k = blocks.get("block_q", 64), blocks.get("block_k", 64)
    for part, got in enumerate((out, lse)):
        expect_close(got, expected[part], what if part == 0 else _f("{what}: logsumexp", what=what),
                     mistakes=slipped(q, k, v, block_q, block_k, causal, part), nan_note=NAN_HERE)


@check(0.5, "tiled_attention matches the reference at other sizes and block sizes", cell=NAME)
def test_random(student):
    expect_reference(student, (3, 2, 13, 6), 2301, False, block_q=5, block_k=4)


@check(0.25, "tiled_attention with causal=True matches the reference at other sizes and block sizes", cell=NAME)
def test_random_causal(student):
    expect_reference(student, (2, 2, 14, 3), 2311, True, block_q=3, block_k=5)


@check(0.25, "tiled_attention with its default block sizes (64) matches the reference on 150 tokens", cell=NAME)
def test_default_blocks(student):
    expect_reference(student, (1, 150, 8), 2321, True)
