"""What section 13's checks measure in the worker (autograder/worker/measure_tiles.py), proven on the reference and on
the catalogue's mistakes: the largest tensor a call makes and its matrix products on any machine; on a CUDA GPU
(tests marked gpu, skipped with a reason elsewhere, never counted as passed) the peak memory growing linearly with
T, and the values against F.scaled_dot_product_attention."""
from __future__ import annotations

import pytest
import torch
from catalogues import CATALOGUES
from support import replace_def

from autograder.worker.measure_tiles import TileMeter
from autograder.worker.watching import Watch
from solutions.tiled_attention import tiled_attention

needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU on this machine")
SOURCE = open(__import__("pathlib").Path(__file__).parents[1] / "solutions/tiled_attention.py").read()


def mistaken(mistake_id: str):
    """The reference's tiled_attention with a catalogued mistake's code in its place."""
    found = [m for m in CATALOGUES["13_tiled_attention"].MISTAKES if m.id == mistake_id]
    namespace: dict = {}
    exec(replace_def(SOURCE, "tiled_attention", found[0].replacements["tiled_attention"]), namespace)  # noqa: S102
    return namespace["tiled_attention"]


def measured(function, *args, device="cpu", **kwargs) -> dict:
    """The worker's measure of one call, as the worker takes it (the watch feeding the meter)."""
    meter = TileMeter(device)
    with Watch(meter=meter):
        function(*args, **kwargs)
    return meter.report()["measured"]


def test_the_largest_tensor_of_a_tiled_call_does_not_grow_with_t():
    sizes = {}
    for length in (64, 128):
        q = torch.randn(1, 2, length, 8)
        sizes[length] = measured(tiled_attention, q, q, q, block_q=16, block_k=16)["largest"]
    assert sizes[64] == sizes[128] // 2 == 2 * 64 * 8  # the output; a tile holds 2 * 16 * 16


def test_a_call_making_the_full_scores_is_measured_so():
    q = torch.randn(1, 2, 64, 8)
    largest = measured(mistaken("full (T, T) scores materialised"), q, q, q, block_q=16, block_k=16)["largest"]
    assert largest == 2 * 64 * 64


@pytest.mark.parametrize("causal, tiles", [(False, 16), (True, 10)])
def test_each_tile_is_one_product_of_queries_and_keys(causal, tiles):
    q = torch.randn(3, 64, 8)
    products = measured(tiled_attention, q, q, q, block_q=16, block_k=16, causal=causal)["products"]
    scores = [p for p in products if p[2] == 8]  # inner size head_dim: the tiles' scores
    assert len(scores) == tiles and all(p == [3, 16, 8, 16] for p in scores)


def test_tiles_above_the_diagonal_are_seen_when_computed():
    q = torch.randn(1, 64, 8)
    wrong = mistaken("causal tiles above the diagonal computed")
    products = measured(wrong, q, q, q, block_q=16, block_k=16, causal=True)["products"]
    assert len([p for p in products if p[2] == 8]) == 16


def peak_bytes(function, length: int) -> int:
    q = torch.randn(1, 4, length, 64, device="cuda")
    torch.cuda.synchronize()
    return measured(function, q, q, q, device="cuda", block_q=128, block_k=128, causal=True)["peak_bytes"]


@pytest.mark.gpu
@needs_gpu
def test_peak_gpu_memory_grows_linearly_with_t():
    """Measured as the checks measure it (the meter's peak above what the inputs hold): doubling T twice makes
    the reference's peak about four times larger, and the full scores' about sixteen times."""
    tiled = {length: peak_bytes(tiled_attention, length) for length in (1024, 4096)}
    full_scores = mistaken("full (T, T) scores materialised")
    full = {length: peak_bytes(full_scores, length) for length in (1024, 4096)}
    assert tiled[4096] < 6 * tiled[1024], tiled
    assert full[4096] > 10 * full[1024], full  # the measure tells them apart


@pytest.mark.gpu
@needs_gpu
@pytest.mark.parametrize("causal", [False, True])
def test_equals_scaled_dot_product_attention_on_cuda(causal):
    torch.backends.cuda.matmul.allow_tf32 = False
    generator = torch.Generator(device="cuda").manual_seed(13)
    q, k, v = (torch.randn(2, 4, 1000, 64, device="cuda", generator=generator) for _ in range(3))
    out, lse = tiled_attention(q, k, v, block_q=128, block_k=96, causal=causal)
    expected = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    torch.testing.assert_close(out, expected, atol=1e-4, rtol=1e-4)
    scores = (q @ k.transpose(-2, -1)) / 8.0
    if causal:
        scores = scores.masked_fill(torch.ones(1000, 1000, dtype=torch.bool, device="cuda").triu(1), float("-inf"))
    torch.testing.assert_close(lse, torch.logsumexp(scores, dim=-1), atol=1e-4, rtol=1e-4)
