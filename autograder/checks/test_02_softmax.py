"""Hidden checks of section 02: from scores to weights to context vectors (7 of the section's 10 points).

The 3 documented points are checked in visible/test_02_softmax.py.
"""

SECTION = {  # the registry's entry (autograder/core/sections.py reads it without importing this file)
    "title": "From scores to weights to context vectors",
    "solution": "solutions.softmax",
    "names": ("normalize_by_sum", "softmax_naive", "softmax", "context_vectors", "simple_self_attention"),
    "forbidden": "softmax",
    "forbidden_in": ("softmax_naive", "softmax"),
    "provided": ("solutions.scores:score_matrix",),
}

import torch

from autograder.checks.common import expect_sums_to_one, expect_unchanged, rand, randn
from autograder.checks.visible.test_02_softmax import COLUMNS
from autograder.core.harness import check, expect_close
from solutions import softmax as ref

INF = float("-inf")
KEEPDIM = "a {} taken without keepdim=True (the result broadcast along the wrong dim)"
OVERFLOW_HINT = ("exp overflows for large inputs (exp(1000.) is inf, and inf / inf is nan): "
                 "subtract the max along dim before exponentiating")
NEG_INF_HINT = ("a row with some -inf entries must give weight 0 there and ordinary weights elsewhere; "
                "shift by the max along dim (finite whenever the row has a finite entry), "
                "not by the mean, the min or the sum")


def softmax_mistakes(x, dim):
    """What common wrong softmax versions return for softmax(x, dim)."""
    dim = dim % x.dim()
    last = x.dim() - 1
    wrong = {}
    if dim != 0:
        wrong["softmax over dim 0 instead of the dim you were given (the wrong dim)"] = torch.softmax(x, 0)
    if dim != last:
        wrong["softmax over the last dim whatever dim is (the wrong dim)"] = torch.softmax(x, -1)
    if dim != 0:  # without keepdim a reduction over dim 0 still broadcasts right
        kept = x.amax(dim, keepdim=True)
        for what, peak, keep in (("max", x.amax(dim), True), ("sum", kept, False),
                                 ("max and sum", x.amax(dim), False)):
            try:
                exps = torch.exp(x - peak)
                wrong[KEEPDIM.format(what)] = exps / exps.sum(dim, keepdim=keep)
            except RuntimeError:  # this shape does not broadcast: the student's call raised too
                continue
    exps = torch.exp(x - x.max())
    wrong["a softmax over all entries at once (the sum ignores dim)"] = exps / exps.sum()
    return wrong


# ---------------------------------------------------------------- the math on new inputs


@check(0.5, "normalize_by_sum divides by the sum along the given dim")
def test_normalize_random(student):
    square = rand(201, 5, 5) + 0.1
    expect_close(student.call("normalize_by_sum", square), ref.normalize_by_sum(square),
                 "normalize_by_sum on a (5, 5) input",
                 mistakes={"the sum taken without keepdim=True (it broadcast along the wrong dim)":
                               square / square.sum(-1),
                           "a division by the sum of all entries instead of the sum along dim":
                               square / square.sum(),
                           "a division by the sum along dim 0 instead of the last dim":
                               square / square.sum(0, keepdim=True),
                           "a division by the L2 norm (F.normalize's default p=2) instead of the sum":
                               square / square.norm(dim=-1, keepdim=True)})
    cube = rand(202, 3, 4, 5) + 0.1
    for dim in (0, 1):
        expect_close(student.call("normalize_by_sum", cube, dim=dim), ref.normalize_by_sum(cube, dim),
                     f"normalize_by_sum(x, dim={dim}) on a (3, 4, 5) input",
                     mistakes={"a division by the sum along the last dim whatever dim is":
                                   ref.normalize_by_sum(cube, -1),
                               "a division by the sum of all entries instead of the sum along dim":
                                   cube / cube.sum()})


@check(0.5, "softmax_naive equals exp(x) / sum(exp(x)) on small inputs")
def test_softmax_naive_random(student):
    for x, dim in ((randn(203, 4, 6), -1), (randn(204, 3, 4, 5), 1)):
        exps = torch.exp(x)
        expect_close(student.call("softmax_naive", x, dim=dim), exps / exps.sum(dim, keepdim=True),
                     f"softmax_naive(x, dim={dim}) on a {tuple(x.shape)} input",
                     mistakes={**softmax_mistakes(x, dim),
                               "exp(x) / sum(x) (divide by the sum of the exps)": exps / x.sum(dim, keepdim=True)})


@check(1, "softmax matches torch.softmax on any shape and along any dim")
def test_softmax_any_dim(student):
    cases = ((randn(205, 5, 5, scale=3.0), -1), (randn(206, 7, scale=3.0), 0),
             (randn(207, 2, 3, 4, scale=3.0), 0), (randn(207, 2, 3, 4, scale=3.0), 1),
             (randn(208, 2, 3, 4, 5, scale=3.0), 2))
    for x, dim in cases:
        expect_close(student.call("softmax", x, dim=dim), torch.softmax(x, dim),
                     f"softmax(x, dim={dim}) on a {tuple(x.shape)} input", mistakes=softmax_mistakes(x, dim))


@check(0.5, "softmax weights are positive and sum to 1 along dim")
def test_softmax_sums_to_one(student):
    x = randn(209, 4, 6, scale=4.0)
    expect_sums_to_one(student.call("softmax", x), (4, 6), "softmax(x) on a (4, 6) input")
    cube = randn(210, 3, 4, 5, scale=4.0)
    expect_sums_to_one(student.call("softmax", cube, dim=1), (3, 4, 5),
                       "softmax(x, dim=1) on a (3, 4, 5) input", dim=1)


@check(1, "softmax is stable on inputs of magnitude 1000 (subtract the max)")
def test_softmax_large_inputs(student):
    pair = torch.tensor([1000.0, 1001.0])
    expect_close(student.call("softmax", pair), ref.softmax(pair), "softmax([1000., 1001.])", scale=1001.0,
                 hint=OVERFLOW_HINT)
    # a shift by a constant along dim is exact, any other stable form rounds x - c at the scale of x
    for x, dim in ((randn(211, 4, 5, scale=1000.0), -1), (randn(212, 3, 2, 4, scale=500.0), 0)):
        expect_close(student.call("softmax", x, dim=dim), ref.softmax(x, dim),
                     f"softmax(x, dim={dim}) on a {tuple(x.shape)} input with entries in the hundreds",
                     scale=x.abs().max().item(), mistakes=softmax_mistakes(x, dim), hint=OVERFLOW_HINT)


@check(0.5, "softmax handles rows that contain -inf (masked entries get weight 0)")
def test_softmax_minus_inf(student):
    x = randn(213, 4, 6, scale=2.0)
    hidden = rand(214, 4, 6) < 0.4
    hidden[:, 0] = False  # every row keeps a finite entry
    x = x.masked_fill(hidden, INF)
    expect_close(student.call("softmax", x), ref.softmax(x), "softmax of a (4, 6) input with some -inf entries",
                 mistakes=softmax_mistakes(x, -1), hint=NEG_INF_HINT)
    cube = randn(215, 2, 5, 3).masked_fill(rand(216, 2, 5, 3) < 0.3, INF)
    cube[:, 0, :] = 1.0
    expect_close(student.call("softmax", cube, dim=1), ref.softmax(cube, 1),
                 "softmax(x, dim=1) of a (2, 5, 3) input with some -inf entries", mistakes=softmax_mistakes(cube, 1),
                 hint=NEG_INF_HINT)


@check(1, "context_vectors: weighted sums for one query, all queries and a batch")
def test_context_vectors_random(student):
    inputs = randn(217, 5, 3)
    one = ref.softmax(randn(218, 5))
    expect_close(student.call("context_vectors", one, inputs), one @ inputs,
                 "context_vectors with (5,) weights and (5, 3) inputs",
                 mistakes={"a sum over the embedding dim instead of over the tokens":
                               (one.unsqueeze(-1) * inputs).sum(-1)})
    square = ref.softmax(randn(219, 5, 5))
    expect_close(student.call("context_vectors", square, inputs), square @ inputs,
                 "context_vectors with (5, 5) weights and (5, 3) inputs",
                 mistakes={"the weights transposed (row i must use weights[i, :], the weights of query i)":
                               square.T @ inputs})
    batch_weights, batch_inputs = ref.softmax(randn(220, 2, 5, 5)), randn(221, 2, 5, 3)
    expect_close(student.call("context_vectors", batch_weights, batch_inputs), batch_weights @ batch_inputs,
                 "context_vectors with (2, 5, 5) weights and (2, 5, 3) inputs",
                 mistakes={"the weights transposed (row i must use weights[..., i, :], the weights of query i)":
                               batch_weights.transpose(-2, -1) @ batch_inputs})


@check(1, "simple_self_attention on new (T, d) and batched (B, T, d) inputs")
def test_simple_attention_random(student):
    for seed, shape in ((222, (5, 4)), (223, (3, 5, 4))):
        x = randn(seed, *shape)
        scores = x @ x.transpose(-2, -1)
        mistakes = {
            COLUMNS: torch.softmax(scores, -2) @ x,
            "softmax over dim 0 (the batch dim) instead of the last dim": torch.softmax(scores, 0) @ x,
            "scores divided by sqrt(d) (this attention is unscaled)": torch.softmax(scores / 2.0, -1) @ x,
            "weights normalised by their sum instead of softmax": ref.normalize_by_sum(scores) @ x,
        }
        expect_close(student.call("simple_self_attention", x), ref.simple_self_attention(x),
                     f"simple_self_attention on a {shape} input", mistakes=mistakes)


# ---------------------------------------------------------------- conventions


@check(0.5, "softmax and softmax_naive compute the exps themselves (no built-in softmax)")
def test_no_builtin_softmax(student):
    x = randn(224, 3, 5, scale=2.0)
    expect_close(student.call("softmax_naive", x), ref.softmax_naive(x), "softmax_naive on a (3, 5) input")
    expect_close(student.call("softmax", x), ref.softmax(x), "softmax on a (3, 5) input")


@check(0.5, "normalize_by_sum and the softmaxes leave their input unchanged")
def test_inputs_unchanged(student):
    positive, x = rand(225, 4, 5) + 0.1, randn(226, 4, 5, scale=3.0)
    for name, arg, expected in (("normalize_by_sum", positive, ref.normalize_by_sum(positive)),
                                ("softmax_naive", x, ref.softmax_naive(x)),
                                ("softmax", x, ref.softmax(x))):
        reply = student.run(name, arg, return_args=True)
        expect_close(reply.value, expected, f"{name} on a (4, 5) input")
        expect_unchanged(reply, [arg], name)
