"""Hidden checks of section 05: batches of sentences of different lengths (9 of the section's 10 points).

The documented point is checked in visible/test_05_padding_mask.py.
"""

SECTION = {  # the registry's entry (autograder/core/sections.py reads it without importing this file)
    "title": "Batches of sentences of different lengths",
    "solution": "solutions.padding_mask",
    "names": ("key_padding_mask", "mask_padded_scores", "padded_attention", "PaddedSelfAttention"),
    "forbidden": "attention",
    "forbidden_in": ("padded_attention", "PaddedSelfAttention"),
}

import math

import torch

from autograder.checks.common import (expect_grads, expect_raises, expect_same_params, expect_sums_to_one,
                                      expect_unchanged, randn, reference_grads, seeded)
from autograder.checks.visible.test_05_padding_mask import INVERTED
from autograder.core.harness import CheckFailed, check, expect, expect_close, expect_shape
from solutions import padding_mask as ref

INF = float("-inf")
ORDER = "W_q, W_k, W_v, W_out"
QUERY_SIDE = "masking the padded queries (rows) instead of the padded keys (columns): use mask[:, None, :]"
NO_SCALING = "no 1/sqrt(d) scaling"


def lengths_mask(seq_lens, max_len):
    return ref.key_padding_mask(torch.as_tensor(seq_lens), max_len)


def hidden_as_inf(value):
    """Scores the student hid, whether with -inf, -1e9 or a large negative number added, shown as -inf."""
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.masked_fill(value < -1e8, INF)
    return value


def pair(value, what):
    """The (out, weights) a function must return."""
    if not (isinstance(value, (tuple, list)) and len(value) == 2):
        kind = f"a tuple of {len(value)}" if isinstance(value, (tuple, list)) else type(value).__name__
        raise CheckFailed(f"{what} should return the pair (out, weights); got {kind}")
    return value


def attend(queries, keys, values, hidden, *, scale=True):
    """softmax(q k^T / sqrt(d) with `hidden` (broadcast to (B, L, L)) at -inf) and its output."""
    scores = queries @ keys.transpose(-2, -1)
    if scale:
        scores = scores / math.sqrt(queries.shape[-1])
    weights = torch.softmax(scores.masked_fill(hidden, INF), dim=-1)
    return weights @ values, weights


def padding_mistakes(queries, keys, values, mask):
    """(out, weights) of common wrong versions of padded attention, by description."""
    keys_hidden, queries_hidden = mask[:, None, :], mask[:, :, None]
    scores = queries @ keys.transpose(-2, -1) / math.sqrt(queries.shape[-1])
    after = torch.softmax(scores, dim=-1).masked_fill(keys_hidden, 0.0)
    return {
        NO_SCALING: attend(queries, keys, values, keys_hidden, scale=False),
        QUERY_SIDE: attend(queries, keys, values, queries_hidden),
        INVERTED: attend(queries, keys, values, ~keys_hidden),
        "masking after the softmax without renormalising (rows no longer sum to 1)": (after @ values, after),
        "no padding mask applied": attend(queries, keys, values, torch.zeros_like(keys_hidden)),
    }


def module_mistakes(reference, x, mask, attn_mask=None):
    """(out, weights) of common wrong versions of PaddedSelfAttention (q = k = v = x)."""
    with torch.no_grad():
        queries, keys, values = reference.W_q(x), reference.W_k(x), reference.W_v(x)
        padded = mask[:, None, :]
        if attn_mask is None:
            wrong, hidden = padding_mistakes(queries, keys, values, mask), padded
        else:
            wrong = {"attn_mask ignored": attend(queries, keys, values, padded),
                     "an inverted attn_mask (True must mean not allowed)":
                         attend(queries, keys, values, ~attn_mask | padded)}
            hidden = attn_mask | padded
        wrong = {description: (reference.W_out(out), weights) for description, (out, weights) in wrong.items()}
        wrong["no W_out on the context vectors"] = attend(queries, keys, values, hidden)
    return wrong


def expect_pair_close(got, expected, what, mistakes, device):
    """The student's (out, weights) against the expected pair: the weights first, they say more."""
    out, weights = pair(got, what)
    expect_close(weights, expected[1], f"{what}: the weights", device=device,
                 mistakes={description: wrong[1] for description, wrong in mistakes.items()})
    expect_close(out, expected[0], f"{what}: the output", device=device,
                 mistakes={description: wrong[0] for description, wrong in mistakes.items()})


# ---------------------------------------------------------------- key_padding_mask (1.5 points, 1 more visible)

@check(1, "key_padding_mask: (B, max_len) bool, True at padding, from a list or a tensor")
def test_key_padding_mask(student):
    for seq_lens, max_len in (([5, 1, 3], 6), (torch.tensor([2, 7, 7, 4]), 7)):
        expected = lengths_mask(seq_lens, max_len)
        shown = seq_lens.tolist() if isinstance(seq_lens, torch.Tensor) else seq_lens
        kind = "tensor" if isinstance(seq_lens, torch.Tensor) else "list"
        positions = torch.arange(max_len)[None, :]
        lengths = torch.as_tensor(seq_lens)[:, None]
        expect_close(student.call("key_padding_mask", seq_lens, max_len), expected,
                     f"key_padding_mask({shown}, {max_len}) with the lengths as a {kind}",
                     mistakes={INVERTED: ~expected,
                               "an off-by-one: position seq_len is padding too (use >=, not >)":
                                   positions > lengths,
                               "the mask transposed, (max_len, B) instead of (B, max_len)": expected.T})


@check(0.5, "key_padding_mask raises ValueError naming a length < 1 or > max_len")
def test_key_padding_mask_errors(student):
    expect_raises(lambda: student.call("key_padding_mask", [3, 0, 2], 4), "ValueError",
                  "key_padding_mask([3, 0, 2], 4) (a sentence of length 0)", naming=(0,))
    expect_raises(lambda: student.call("key_padding_mask", torch.tensor([5, 9, 1]), 6), "ValueError",
                  "key_padding_mask(tensor([5, 9, 1]), 6) (a length above max_len)", naming=(9,))


# ---------------------------------------------------------------- mask_padded_scores (1.5 points)

@check(1, "mask_padded_scores hides the padded key columns")
def test_mask_padded_scores(student):
    scores = randn(501, 3, 5, 5, scale=2.0)
    mask = lengths_mask([5, 3, 1], 5)
    got = hidden_as_inf(student.call("mask_padded_scores", scores, mask))
    expect_close(got, ref.mask_padded_scores(scores, mask), "mask_padded_scores(scores, key_padding_mask) "
                 "(hidden entries below -1e8 are read as -inf)", device=student.device,
                 mistakes={QUERY_SIDE: scores.masked_fill(mask[:, :, None], INF),
                           INVERTED: scores.masked_fill(~mask[:, None, :], INF),
                           "both the padded rows and the padded columns masked":
                               scores.masked_fill(mask[:, :, None] | mask[:, None, :], INF)})


@check(0.5, "mask_padded_scores leaves its argument unchanged")
def test_mask_padded_scores_unchanged(student):
    scores, mask = randn(502, 2, 4, 4), lengths_mask([2, 4], 4)
    reply = student.run("mask_padded_scores", scores, mask, return_args=True)
    expect_shape(reply.value, (2, 4, 4), "mask_padded_scores(scores, key_padding_mask)")
    expect_unchanged(reply, [scores, mask], "mask_padded_scores")


# ---------------------------------------------------------------- padded_attention (1.5 points)

@check(1, "padded_attention matches the reference: softmax(masked q k^T / sqrt(d)) @ v")
def test_padded_attention(student):
    queries, keys, values = randn(503, 3, 5, 4, scale=2.0), randn(504, 3, 5, 4), randn(505, 3, 5, 4)
    mask = lengths_mask([5, 2, 3], 5)
    got = student.call("padded_attention", queries, keys, values, mask)
    expect_pair_close(got, ref.padded_attention(queries, keys, values, mask),
                      "padded_attention on (3, 5, 4) inputs with lengths [5, 2, 3]",
                      padding_mistakes(queries, keys, values, mask), student.device)


@check(0.5, "padded_attention: weights are 0 at padded keys and every row sums to 1")
def test_padded_attention_properties(student):
    queries, keys, values = randn(506, 2, 6, 3), randn(507, 2, 6, 3), randn(508, 2, 6, 3)
    mask = lengths_mask([4, 6], 6)
    _, weights = pair(student.call("padded_attention", queries, keys, values, mask), "padded_attention")
    expect_shape(weights, (2, 6, 6), "padded_attention's weights")
    expect(weights.is_floating_point() and bool(torch.isfinite(weights).all()),
           "padded_attention's weights should be finite floats (a NaN row has every key hidden: "
           "is the mask on the keys, and True only at padding?)")
    leaked = weights.masked_select(mask[:, None, :].expand(2, 6, 6)).abs().max().item()
    expect(leaked <= 1e-6, f"padded_attention gives weight {leaked:.4g} to a padded key: padded key columns "
                           "must get weight 0 (fill them with -inf before the softmax)")
    expect_sums_to_one(weights, (2, 6, 6), "padded_attention's weights (mask before the softmax, not after)")


# ---------------------------------------------------------------- PaddedSelfAttention (4.5 points)

@check(0.5, "PaddedSelfAttention: parameters W_q, W_k, W_v, W_out created in order")
def test_padded_self_attention_params(student):
    module = student.new("PaddedSelfAttention", 5, seed=51)
    expect_same_params(module, seeded(ref.PaddedSelfAttention, 5, seed=51), "PaddedSelfAttention(5)", ORDER)


@check(1.5, "PaddedSelfAttention equals nn.MultiheadAttention(D, 1, bias=False) with the same weights")
def test_matches_multihead_attention(student):
    for dim, seq_lens, seed in ((3, [4, 3, 2], 52), (6, [5, 3], 53)):
        x = randn(seed + 500, len(seq_lens), max(seq_lens), dim)
        mask = lengths_mask(seq_lens, max(seq_lens))
        reference = seeded(ref.PaddedSelfAttention, dim, seed=seed)
        with torch.no_grad():  # the reference equals nn.MultiheadAttention with these weights (a project
            expected = reference(x, x, x, key_padding_mask=mask)  # test shows it; torch's import here costs ~1 s)
        module = student.new("PaddedSelfAttention", dim, seed=seed)
        expect_pair_close(module(x, x, x, key_padding_mask=mask), expected,
                          f"PaddedSelfAttention({dim})(x, x, x, key_padding_mask) with lengths {seq_lens}, "
                          f"compared with nn.MultiheadAttention({dim}, 1, bias=False) holding its weights",
                          module_mistakes(reference, x, mask), student.device)


@check(1, "PaddedSelfAttention: attn_mask of shape (L, L) or (B, L, L), True = not allowed")
def test_attn_mask(student):
    x = randn(510, 3, 5, 4)
    mask = lengths_mask([5, 3, 4], 5)
    causal = torch.triu(torch.ones(5, 5, dtype=torch.bool), diagonal=1)
    per_item = torch.rand(3, 5, 5, generator=torch.Generator().manual_seed(511)) > 0.6
    per_item[:, :, 0] = False  # key 0 is real and always allowed: no row is hidden entirely
    module = student.new("PaddedSelfAttention", 4, seed=54)
    reference = seeded(ref.PaddedSelfAttention, 4, seed=54)
    for attn_mask, what in ((causal, "a causal (5, 5) attn_mask"), (per_item, "a (3, 5, 5) attn_mask")):
        with torch.no_grad():
            expected = reference(x, x, x, key_padding_mask=mask, attn_mask=attn_mask)
        expect_pair_close(module(x, x, x, key_padding_mask=mask, attn_mask=attn_mask), expected,
                          f"PaddedSelfAttention(4) with a key_padding_mask and {what}",
                          module_mistakes(reference, x, mask, attn_mask), student.device)


@check(1, "PaddedSelfAttention: outputs at real positions ignore the values at padded positions")
def test_padding_invariance(student):
    x = randn(512, 3, 5, 4)
    mask = lengths_mask([5, 2, 4], 5)
    real = ~mask
    changed = torch.where(mask[:, :, None], randn(513, 3, 5, 4, scale=5.0), x)
    other_real = torch.where(real[:, :, None], randn(516, 3, 5, 4), x)
    module = student.new("PaddedSelfAttention", 4, seed=55)
    before, after, moved = (pair(module(v, v, v, key_padding_mask=mask), "PaddedSelfAttention")[0]
                            for v in (x, changed, other_real))
    for out in (before, after, moved):
        expect_shape(out, (3, 5, 4), "PaddedSelfAttention's output")
    expect(not torch.allclose(moved[real], before[real]),
           "PaddedSelfAttention's outputs stay the same when the real tokens change: is attention computed at all?")
    expect_close(after[real], before[real], "the outputs at real positions after the padding changed",
                 device=student.device,
                 hint="They changed, so padded keys still get weight: hide the padded key columns "
                      "(key_padding_mask[:, None, :]) before the softmax")


@check(0.5, "PaddedSelfAttention: gradients reach every parameter")
def test_gradients(student):
    x = randn(514, 2, 4, 3)
    mask = lengths_mask([4, 2], 4)
    grad_output = randn(515, 2, 4, 3)
    reference = seeded(ref.PaddedSelfAttention, 3, seed=56)
    reference_grads(reference, grad_output, x, x, x, key_padding_mask=mask)
    module = student.new("PaddedSelfAttention", 3, seed=56)
    reply = module.run(x, x, x, key_padding_mask=mask, mode="train", backward=grad_output)
    expect_grads(reply, reference, "PaddedSelfAttention(3)", device=student.device)
