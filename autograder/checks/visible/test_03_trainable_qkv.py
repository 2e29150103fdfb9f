"""Visible checks of section 03: the documented projections and outputs (3 of the section's 10 points).

The other 7 points are hidden, in autograder/checks/test_03_trainable_qkv.py, which
uses the mistake builders defined here too.
"""
import math

import torch

from autograder.checks.common import WORKED_INPUTS, seeded_projections
from autograder.core.harness import CheckFailed, check, expect_close, expect_shape

DOC_RAND = {"query": [0.4306, 1.4551], "key": [0.4433, 1.1419], "value": [0.3951, 1.0037],
            "weights": [0.1500, 0.2264, 0.2199, 0.1311, 0.0906, 0.1820], "context": [0.3061, 0.8210]}
DOC_RANDN = {"query": [-1.1729, -0.0048],
             "weights": [0.1704, 0.1611, 0.1652, 0.1412, 0.2505, 0.1117], "context": [0.2854, 0.4081]}
DOC_V1 = torch.tensor(
    [[0.2996, 0.8053], [0.3061, 0.8210], [0.3058, 0.8203],
     [0.2948, 0.7939], [0.2927, 0.7891], [0.2990, 0.8040]])
DOC_V2 = torch.tensor(
    [[-0.0739, 0.0713], [-0.0748, 0.0703], [-0.0749, 0.0702],
     [-0.0760, 0.0685], [-0.0763, 0.0679], [-0.0754, 0.0693]])

V1_ORDER = "W_query, W_key, W_value, each nn.Parameter(torch.rand(d_in, d_out))"
V2_ORDER = "W_query, W_key, W_value, each nn.Linear(d_in, d_out, bias=qkv_bias)"
NO_SCALING = "no scaling by sqrt(d_k) (divide the scores by keys.shape[-1] ** 0.5 before the softmax)"
OVER_QUERIES = "softmax over dim -2 (over the queries) instead of the last dim (over the keys): the wrong dim"
ORDER_HINT = "the seeded weights depend on creating the parameters in this order: "


def seeded_weights(draw, seed=123):
    """W_query, W_key, W_value drawn one after the other, as after torch.manual_seed(seed)."""
    generator = torch.Generator().manual_seed(seed)
    return [draw(3, 2, generator=generator) for _ in range(3)]


def unpack(value, count, what, names):
    """The student's returned tuple of `count` items (a list is accepted too)."""
    if not isinstance(value, (tuple, list)) or len(value) != count:
        got = f"a {type(value).__name__} of length {len(value)}" if isinstance(value, (tuple, list)) \
            else (f"a tensor of shape {tuple(value.shape)}" if isinstance(value, torch.Tensor)
                  else type(value).__name__)
        raise CheckFailed(f"{what} should return {names}, a tuple of {count} tensors; it returned {got}")
    return list(value)


def attend(queries, keys, values, scale, dim=-1):
    """(context, weights) of softmax(queries keys^T / scale) along `dim`, computed in the grader."""
    weights = torch.softmax(queries @ keys.transpose(-2, -1) / scale, dim=dim)
    return weights @ values, weights


def attention_mistakes(queries, keys, values):
    """description -> (context, weights) that a common wrong scaled_dot_product_attention returns."""
    d_k, d_v, num_keys = keys.shape[-1], values.shape[-1], keys.shape[-2]
    wrong = {NO_SCALING: attend(queries, keys, values, 1.0),
             "scores divided by d_k instead of sqrt(d_k)": attend(queries, keys, values, d_k)}
    if d_v != d_k:
        wrong[f"scores divided by sqrt(d_v) = sqrt(values.shape[-1]) = sqrt({d_v}) instead of "
              f"sqrt(d_k) = sqrt(keys.shape[-1]) = sqrt({d_k})"] = attend(queries, keys, values, math.sqrt(d_v))
    if num_keys != d_k:
        wrong["scores divided by the square root of the number of keys instead of sqrt(d_k)"] = \
            attend(queries, keys, values, math.sqrt(num_keys))
    if queries.dim() >= 2:
        wrong[OVER_QUERIES] = attend(queries, keys, values, math.sqrt(d_k), dim=-2)
    return wrong


def module_mistakes(reference, x):
    """description -> output of a common wrong forward, with the weights of `reference`
    (a seeded reference module, or seeded_projections: anything with W_query, W_key, W_value)."""
    with torch.no_grad():
        if isinstance(reference.W_query, torch.nn.Linear):
            queries, keys, values = reference.W_query(x), reference.W_key(x), reference.W_value(x)
        else:
            queries, keys, values = x @ reference.W_query, x @ reference.W_key, x @ reference.W_value
    d_in, d_k = x.shape[-1], keys.shape[-1]
    wrong = {NO_SCALING: attend(queries, keys, values, 1.0)[0],
             OVER_QUERIES: attend(queries, keys, values, math.sqrt(d_k), dim=-2)[0],
             "queries and keys swapped (keys @ queries^T, or W_key created before W_query)":
                 attend(keys, queries, values, math.sqrt(d_k))[0],
             "scores divided by d_k instead of sqrt(d_k)": attend(queries, keys, values, d_k)[0]}
    if d_in != d_k:
        wrong[f"scores divided by sqrt(d_in) = sqrt(x.shape[-1]) = sqrt({d_in}) instead of sqrt(d_k) = "
              f"sqrt(keys.shape[-1]) = sqrt({d_k})"] = attend(queries, keys, values, math.sqrt(d_in))[0]
    return wrong


# ---------------------------------------------------------------- documented values


@check(1, "query 2 of the worked example: documented projections, weights and context", documented=True)
def test_query_2_documented(student):
    for draw, doc in ((torch.rand, DOC_RAND), (torch.randn, DOC_RANDN)):
        weights = seeded_weights(draw)
        seeded_as = f"torch.manual_seed(123) and torch.{draw.__name__}(3, 2) three times"
        projected = unpack(student.call("project_qkv", WORKED_INPUTS, *weights), 3,
                           f"project_qkv(inputs, W_query, W_key, W_value) with {seeded_as}", "(queries, keys, values)")
        for kind, got in zip(("query", "key", "value"), projected):
            expect_shape(got, (6, 2), f"the {kind}s of project_qkv(inputs, ...) with {seeded_as}")
            if kind in doc:
                expect_close(got[1], torch.tensor(doc[kind]), f"{kind}_2 with {seeded_as}", atol=1e-4)
        queries, keys, values = (WORKED_INPUTS @ w for w in weights)
        what = f"scaled_dot_product_attention(query_2, keys, values) with {seeded_as}"
        context, attn = unpack(student.call("scaled_dot_product_attention", queries[1], keys, values), 2, what,
                               "(context, weights)")
        wrong = attention_mistakes(queries[1], keys, values)
        expect_close(attn, torch.tensor(doc["weights"]), f"the weights of {what}", atol=1e-4,
                     mistakes={k: w for k, (c, w) in wrong.items()})
        expect_close(context, torch.tensor(doc["context"]), f"the context of {what}", atol=1e-4,
                     mistakes={k: c for k, (c, w) in wrong.items()})


@check(1, "SelfAttention_v1(3, 2) with torch.manual_seed(123) gives the documented output", documented=True)
def test_v1_documented(student):
    module = student.new("SelfAttention_v1", 3, 2, seed=123)
    expect_close(module(WORKED_INPUTS), DOC_V1, "torch.manual_seed(123); SelfAttention_v1(3, 2)(inputs)", atol=1e-4,
                 mistakes=module_mistakes(seeded_projections(3, 2, seed=123, raw=True), WORKED_INPUTS),
                 hint=ORDER_HINT + V1_ORDER)


@check(1, "SelfAttention_v2(3, 2) with torch.manual_seed(789) gives the documented output", documented=True)
def test_v2_documented(student):
    module = student.new("SelfAttention_v2", 3, 2, seed=789)
    expect_close(module(WORKED_INPUTS), DOC_V2, "torch.manual_seed(789); SelfAttention_v2(3, 2)(inputs)", atol=1e-4,
                 mistakes=module_mistakes(seeded_projections(3, 2, seed=789), WORKED_INPUTS),
                 hint=ORDER_HINT + V2_ORDER)
