"""Hidden checks of section 01: attention scores without trainable weights (8 of the section's 10 points).

The 2 documented points are checked in visible/test_01_scores.py.
"""

SECTION = {  # the registry's entry (autograder/core/sections.py reads it without importing this file)
    "title": "Attention scores without trainable weights",
    "solution": "solutions.scores",
    "names": ("dot_scores", "score_matrix", "AdditiveScore", "DotProductScore", "SelfAttentionScore"),
}

import math

import torch

from autograder.checks.common import (BATCHED_T, TRANSPOSE_HINT, expect_grads, expect_no_loop, expect_same_params,
                                      expect_unchanged, randn, reference_grads, seeded)
from autograder.core.harness import CheckFailed, StudentFailure, check, expect, expect_close
from solutions import scores as ref


@check(1, "dot_scores matches the reference on new inputs")
def test_dot_scores_random(student):
    inputs, query = randn(101, 7, 5), randn(102, 5)
    reply = student.run("dot_scores", query, inputs, return_args=True)
    expect_close(reply.value, ref.dot_scores(query, inputs), "dot_scores on a (7, 5) input",
                 mistakes={"a sum of |x_i - q| instead of a dot product": (inputs - query).abs().sum(-1)})
    expect_unchanged(reply, [query, inputs], "dot_scores")


@check(1.5, "score_matrix works on (T, d) and batched (B, T, d) inputs")
def test_score_matrix_random(student):
    single, batch = randn(103, 5, 4), randn(104, 3, 5, 4)
    expect_close(student.call("score_matrix", single), ref.score_matrix(single), "score_matrix on a (5, 4) input",
                 mistakes={"inputs.T @ inputs (the transpose on the wrong side)": single.T @ single})
    try:
        got = student.call("score_matrix", batch)
    except StudentFailure as failure:
        if failure.kind != "raised" or "RuntimeError" not in failure.message:
            raise
        raise CheckFailed(f"score_matrix on a (3, 5, 4) batch: {failure.message}. This looks like {BATCHED_T}: "
                          f"{TRANSPOSE_HINT}", mistake=BATCHED_T) from None
    expect_close(got, ref.score_matrix(batch), "score_matrix on a (3, 5, 4) batch",
                 hint="Use transpose(-2, -1): .T on a 3-D tensor reverses every dim, batch included")
    expect(torch.allclose(got, got.transpose(-2, -1), atol=1e-5),
           "score_matrix must be symmetric: x_i . x_j == x_j . x_i")


@check(1, "score_matrix has no Python loop over tokens")
def test_score_matrix_no_loop(student):
    counts = {}
    for t in (4, 9):
        x = randn(105, t, 4)
        reply = student.run("score_matrix", x)
        # only a correct result counts: a constant would dispatch the same ops at every size
        expect_close(reply.value, ref.score_matrix(x), f"score_matrix on a ({t}, 4) input")
        counts[t] = reply.ops
    expect_no_loop(counts, "score_matrix", "tokens")


@check(1.5, "AdditiveScore: parameters in order, seeded output matches the reference")
def test_additive_score(student):
    X = randn(106, 2, 5, 4)
    module = student.new("AdditiveScore", 4, seed=11)
    reference = seeded(ref.AdditiveScore, 4, seed=11)
    expect_same_params(module, reference, "AdditiveScore", "W_q, W_k, w, q")
    with torch.no_grad():
        expected = reference(X)
    expect_close(module(X), expected, "AdditiveScore(4)(X) with torch.manual_seed(11)",
                 mistakes={"W_q applied to X instead of to the query q": reference.w(torch.tanh(
                     reference.W_k(X) + reference.W_q(X))).squeeze(-1).detach(),
                     "no tanh": reference.w(reference.W_k(X) + reference.W_q(reference.q)).squeeze(-1).detach()})


@check(1, "DotProductScore: (X @ q).squeeze(-1) with q of shape (D, 1)")
def test_dot_product_score(student):
    X = randn(107, 3, 6, 5)
    module = student.new("DotProductScore", 5, seed=12)
    params = module.params()
    expect(list(params) == ["q"] and tuple(params["q"].shape) == (5, 1),
           f"DotProductScore should have one parameter q of shape (5, 1); found "
           f"{[(n, tuple(p.shape)) for n, p in params.items()]}")
    with torch.no_grad():
        expected = seeded(ref.DotProductScore, 5, seed=12)(X)
    expect_close(module(X), expected, "DotProductScore(5)(X) with torch.manual_seed(12)")


@check(1, "SelfAttentionScore: W_q(X) @ W_k(X)^T, unscaled")
def test_self_attention_score(student):
    X = randn(108, 2, 5, 6)
    module = student.new("SelfAttentionScore", 6, seed=13)
    reference = seeded(ref.SelfAttentionScore, 6, seed=13)
    with torch.no_grad():
        expected = reference(X)
    expect_close(module(X), expected, "SelfAttentionScore(6)(X) with torch.manual_seed(13)",
                 mistakes={"scores divided by sqrt(D) (this one is unscaled)": expected / math.sqrt(6),
                           "keys @ queries^T (queries and keys swapped)": expected.transpose(-2, -1)})


@check(1, "gradients reach every parameter of the three score modules")
def test_gradients(student):
    for name, cls, dim, seed in (("AdditiveScore", ref.AdditiveScore, 4, 21),
                                 ("DotProductScore", ref.DotProductScore, 4, 22),
                                 ("SelfAttentionScore", ref.SelfAttentionScore, 4, 23)):
        X = randn(seed, 2, 3, dim)
        reference = seeded(cls, dim, seed=seed)
        out = reference_grads(reference, torch.ones(1), X)
        grad_output = randn(seed + 100, *out.shape)
        reference_grads(reference, grad_output, X)
        module = student.new(name, dim, seed=seed)
        reply = module.run(X, mode="train", backward=grad_output)
        expect_grads(reply, reference, name)
