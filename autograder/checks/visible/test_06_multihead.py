"""Visible checks of section 06: the documented layout and seeded outputs (2.5 of the section's 10 points).

The other 7.5 points are hidden, in autograder/checks/test_06_multihead.py.
"""
import math

import torch

from autograder.checks.common import WORKED_BATCH, seeded_projections
from autograder.core.harness import CheckFailed, StudentFailure, check, expect_close

DOC_SPLIT = torch.tensor(
    [[[1, 2, 3, 4], [9, 10, 11, 12]], [[5, 6, 7, 8], [13, 14, 15, 16]],
     [[17, 18, 19, 20], [25, 26, 27, 28]], [[21, 22, 23, 24], [29, 30, 31, 32]]])
DOC_WRAPPER = torch.tensor(
    [[-0.4519, 0.2216, 0.4772, 0.1063], [-0.5874, 0.0058, 0.5891, 0.3257],
     [-0.6300, -0.0632, 0.6202, 0.3860], [-0.5675, -0.0843, 0.5478, 0.3589],
     [-0.5526, -0.0981, 0.5321, 0.3428], [-0.5299, -0.1081, 0.5077, 0.3493]])
DOC_MHA = torch.tensor(
    [[0.3190, 0.4858], [0.2943, 0.3897], [0.2856, 0.3593],
     [0.2693, 0.3873], [0.2639, 0.3928], [0.2575, 0.4028]])
BARE_SPLIT = "a bare view to (B, H, T, hd) without transpose (tokens and heads get mixed)"
BARE_VIEW = "a bare .view of the transposed tensor"
BARE_VIEW_HINT = (f"This looks like {BARE_VIEW}: after a transpose it is non-contiguous, so use .reshape(...) "
                  "or .contiguous().view(...)")
BARE_SPLIT_IN_FORWARD = ("a bare view to (B, H, T, head_dim) when splitting heads, without the transpose "
                         "(tokens and heads get mixed): view to (B, T, H, head_dim), then .transpose(1, 2)")


def named_view_error(failure: StudentFailure) -> StudentFailure | CheckFailed:
    """The failure to raise for a student's exception: a view error of a non-contiguous tensor gets its hint."""
    if failure.kind == "raised" and "view size is not compatible" in failure.message:
        return CheckFailed(f"{failure.message[:300]}\n{BARE_VIEW_HINT}", mistake=BARE_VIEW)
    return failure


class NamingViews:
    """A student's module whose forward names a bare .view of a transposed tensor when it raises there."""

    def __init__(self, module):
        self._module = module

    def __call__(self, *args, **kwargs):
        try:
            return self._module(*args, **kwargs)
        except StudentFailure as failure:
            raise named_view_error(failure) from None

    def run(self, *args, **kwargs):
        try:
            return self._module.run(*args, **kwargs)
        except StudentFailure as failure:
            raise named_view_error(failure) from None

    def __getattr__(self, name):
        return getattr(self._module, name)


@torch.no_grad()
def bare_split_output(x, d_in, d_out, num_heads, seed):
    """What MultiHeadAttention(d_in, d_out, T, 0.0, num_heads) after torch.manual_seed(seed) returns when it
    splits the heads with a bare view to (B, H, T, head_dim): the weights of the public creation order."""
    projection = seeded_projections(d_in, d_out, seed=seed)
    out_proj = torch.nn.Linear(d_out, d_out)  # created right after W_value
    b, t, _ = x.shape
    head_dim = d_out // num_heads
    queries, keys, values = (layer(x).reshape(b, num_heads, t, head_dim)
                             for layer in (projection.W_query, projection.W_key, projection.W_value))
    hidden = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
    scores = (queries @ keys.transpose(-2, -1)).masked_fill(hidden, float("-inf"))
    context = torch.softmax(scores / math.sqrt(head_dim), dim=-1) @ values
    return out_proj(context.transpose(1, 2).reshape(b, t, d_out))


# ---------------------------------------------------------------- documented values (2.5 points)
@check(0.5, "split_heads gives the documented layout of arange(1, 33)", documented=True)
def test_split_heads_documented(student):
    x = torch.arange(1, 33).reshape(2, 2, 8)
    expect_close(student.call("split_heads", x, 2), DOC_SPLIT.reshape(2, 2, 2, 4),
                 "split_heads(torch.arange(1, 33).reshape(2, 2, 8), 2)", atol=1e-4,
                 mistakes={BARE_SPLIT: x.reshape(2, 2, 2, 4)})


@check(1, "MultiHeadAttentionWrapper gives the documented seeded output", documented=True)
def test_wrapper_documented(student):
    module = student.new("MultiHeadAttentionWrapper", 3, 2, 6, 0.0, num_heads=2, seed=123)
    expect_close(module(WORKED_BATCH), DOC_WRAPPER.expand(2, 6, 4),
                 "torch.manual_seed(123); MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=2)(batch)", atol=1e-4)


@check(1, "MultiHeadAttention gives the documented seeded output", documented=True)
def test_mha_documented(student):
    module = NamingViews(student.new("MultiHeadAttention", 3, 2, 6, 0.0, num_heads=2, seed=123))
    expect_close(module(WORKED_BATCH), DOC_MHA.expand(2, 6, 2),
                 "torch.manual_seed(123); MultiHeadAttention(3, 2, 6, 0.0, num_heads=2)(batch)", atol=1e-4,
                 mistakes={BARE_SPLIT_IN_FORWARD: bare_split_output(WORKED_BATCH, 3, 2, 2, seed=123)})
