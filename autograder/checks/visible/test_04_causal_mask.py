"""Visible checks of section 04: the documented masked weights and output (2 of the section's 10 points).

The other 8 points are hidden, in autograder/checks/test_04_causal_mask.py, which
uses the mistake builders defined here too.
"""
import math

import torch

from autograder.checks.common import TOKENS, WORKED_BATCH, WORKED_INPUTS, seeded_projections
from autograder.core.harness import check, expect_close

INF = float("-inf")
DOC_MASKED = torch.tensor(
    [[1.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000],
     [0.5517, 0.4483, 0.0000, 0.0000, 0.0000, 0.0000],
     [0.3800, 0.3097, 0.3103, 0.0000, 0.0000, 0.0000],
     [0.2758, 0.2460, 0.2462, 0.2319, 0.0000, 0.0000],
     [0.2175, 0.1983, 0.1984, 0.1888, 0.1971, 0.0000],
     [0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529]])
DOC_CAUSAL_ATTENTION = torch.tensor(
    [[-0.4519, 0.2216], [-0.5874, 0.0058], [-0.6300, -0.0632],
     [-0.5675, -0.0843], [-0.5526, -0.0981], [-0.5299, -0.1081]])
DIAGONAL = "the diagonal masked too (use diagonal=1: every token may look at itself)"
INVERTED = "an inverted mask (True must mean hidden: True strictly above the diagonal)"
AFTER_SOFTMAX = "masking after the softmax without renormalising (rows no longer sum to 1)"
NO_SCALING = "no 1/sqrt(d_k) scaling"
ZERO_FILL = ("the mask filled with 0 instead of -inf before the softmax (exp(0) = 1: the future keeps its weight; "
             "use masked_fill(mask, float('-inf')))")
PAST = ("the past hidden instead of the future (tril where triu belongs: hide the keys j > i, "
        "torch.triu(..., diagonal=1))")
PAST_AND_DIAGONAL = ("the past and the diagonal hidden instead of the future (torch.tril where "
                     "torch.triu(..., diagonal=1) belongs; the last row hides every key, hence NaN)")


def future_mask(num_tokens):
    """(T, T) bool, True strictly above the diagonal: the keys each query may not see."""
    return torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool), diagonal=1)


def documented_scores():
    """The worked example's unscaled scores with the weights of torch.manual_seed(789); SelfAttention_v2(3, 2)."""
    projection = seeded_projections(3, 2, seed=789)
    with torch.no_grad():
        return projection.W_query(WORKED_INPUTS) @ projection.W_key(WORKED_INPUTS).T


def weight_mistakes(scores, d_k):
    """What common wrong versions of causal_attention_weights return."""
    num_tokens = scores.shape[-1]
    future = future_mask(num_tokens)
    with_diagonal = torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool))
    plain = torch.softmax(scores / math.sqrt(d_k), dim=-1)
    return {
        NO_SCALING: torch.softmax(scores.masked_fill(future, INF), dim=-1),
        "scores divided by d_k instead of sqrt(d_k)": torch.softmax(scores.masked_fill(future, INF) / d_k, dim=-1),
        "scores scaled by the square root of the number of tokens instead of sqrt(d_k)":
            torch.softmax(scores.masked_fill(future, INF) / math.sqrt(num_tokens), dim=-1),
        AFTER_SOFTMAX: plain.masked_fill(future, 0.0),
        DIAGONAL: torch.softmax(scores.masked_fill(with_diagonal, INF) / math.sqrt(d_k), dim=-1),
        DIAGONAL.replace("too", "too, with -1e9"):
            torch.softmax(scores.masked_fill(with_diagonal, -1e9) / math.sqrt(d_k), dim=-1),
        INVERTED: torch.softmax(scores.masked_fill(~future, -1e9) / math.sqrt(d_k), dim=-1),
        ZERO_FILL: torch.softmax(scores.masked_fill(future, 0.0) / math.sqrt(d_k), dim=-1),
        PAST: torch.softmax(scores.masked_fill(future.T, INF) / math.sqrt(d_k), dim=-1),
        PAST_AND_DIAGONAL: torch.softmax(scores.masked_fill(~future, INF) / math.sqrt(d_k), dim=-1),
        "no causal mask at all": plain,
        "softmax over dim=-2 (the columns) instead of the last dim":
            torch.softmax(scores.masked_fill(future, INF) / math.sqrt(d_k), dim=-2),
    }


def attention_mistakes(reference, x):
    """What common wrong versions of CausalAttention return (dropout off), with the weights of `reference`
    (a seeded reference module, or seeded_projections: anything with W_query, W_key, W_value)."""
    with torch.no_grad():
        queries, keys, values = reference.W_query(x), reference.W_key(x), reference.W_value(x)
        scores = queries @ keys.transpose(-2, -1)
        wrong = {description: weights @ values
                 for description, weights in weight_mistakes(scores, keys.shape[-1]).items()}
        future = future_mask(x.shape[-2])
        wrong[f"scores scaled by sqrt(d_in) = sqrt({x.shape[-1]}) instead of sqrt(d_k) = sqrt(d_out)"] = \
            torch.softmax(scores.masked_fill(future, INF) / math.sqrt(x.shape[-1]), dim=-1) @ values
        swapped = scores.transpose(-2, -1).masked_fill(future, INF) / math.sqrt(keys.shape[-1])
        wrong["queries and keys swapped (keys @ queries^T)"] = torch.softmax(swapped, dim=-1) @ values
    return wrong


# ---------------------------------------------------------------- documented values (2 points)

@check(0.5, "mask_and_renormalize gives the documented masked weights", documented=True)
def test_mask_and_renormalize_documented(student):
    weights = torch.softmax(documented_scores() / math.sqrt(2), dim=-1)
    got = student.call("mask_and_renormalize", weights)
    expect_close(got, DOC_MASKED, "mask_and_renormalize(attn_weights) of the worked example", atol=1e-4,
                 heatmap_labels=TOKENS,
                 mistakes={"zeroed above the diagonal but not renormalised (divide each row by its sum)":
                           weights.masked_fill(future_mask(6), 0.0)})


@check(0.5, "causal_attention_weights gives the documented masked weights", documented=True)
def test_causal_attention_weights_documented(student):
    scores = documented_scores()
    got = student.call("causal_attention_weights", scores, 2)
    expect_close(got, DOC_MASKED, "causal_attention_weights(attn_scores, 2) of the worked example", atol=1e-4,
                 heatmap_labels=TOKENS,
                 mistakes=weight_mistakes(scores, 2))


@check(1, "CausalAttention(3, 2, 6, 0.0) with seed 123 gives the documented output", documented=True)
def test_causal_attention_documented(student):
    module = student.new("CausalAttention", 3, 2, 6, 0.0, seed=123)
    reference = seeded_projections(3, 2, seed=123)  # the Dropout created after them draws nothing
    expect_close(module(WORKED_BATCH), torch.stack((DOC_CAUSAL_ATTENTION, DOC_CAUSAL_ATTENTION)),
                 "torch.manual_seed(123); CausalAttention(3, 2, 6, 0.0)(batch)", atol=1e-4,
                 mistakes=attention_mistakes(reference, WORKED_BATCH))
