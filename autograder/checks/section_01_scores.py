"""Checks of section 01: attention scores without trainable weights (10 points).

The section's registry entry (SECTION) and its visible checks: the documented scores of the worked example and
the properties that need no reference (arguments left unchanged, a batch scored item by item, no Python loop,
outputs in the input's dtype and on its device, parameters created in the documented order, each module's
documented formula evaluated with its own parameters, gradients that flow). The self-check runs them and the
students' wheel ships this module as it is, so nothing here imports `solutions` or holds a hidden seed's
expected output. The hidden checks, which the grader runs after these, compare with the reference solutions on
fresh inputs: they are in checks/hidden/hidden_01_scores.py.
"""

SECTION = {  # the registry's entry (autograder/core/sections.py reads it without importing this file)
    "title": "Attention scores without trainable weights",
    "solution": "solutions.scores",
    "names": ("dot_scores", "score_matrix", "AdditiveScore", "DotProductScore", "SelfAttentionScore"),
    "uses_meta": True,
    "rules": {"unchanged": ("dot_scores",), "no_loop": ("score_matrix",), "param_order": ("AdditiveScore",),
              "device": ("dot_scores", "score_matrix"), "input_dtype": ("dot_scores", "score_matrix")},
}

import math

import torch

from autograder.checks.common import (TOKENS, WORKED_INPUTS, expect_grads_flow, expect_no_loop, expect_not_hard_coded,
                                      expect_unchanged, hint_if_written, manual_seed, randn, run_unless_raised,
                                      run_where_made, stack_items)
from autograder.checks.parameters import (expect_same_params)
from autograder.core.harness import CheckFailed, StudentFailure, check, expect, expect_close
from autograder.i18n import N_, _, _f

DOC_DOT = torch.tensor([0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865])
DOC_MATRIX = torch.tensor(
    [[0.9995, 0.9544, 0.9422, 0.4753, 0.4576, 0.6310],
     [0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865],
     [0.9422, 1.4754, 1.4570, 0.8296, 0.7154, 1.0605],
     [0.4753, 0.8434, 0.8296, 0.4937, 0.3474, 0.6565],
     [0.4576, 0.7070, 0.7154, 0.3474, 0.6654, 0.2935],
     [0.6310, 1.0865, 1.0605, 0.6565, 0.2935, 0.9450]])

ADDITIVE_ORDER = "W_q, W_k, w, q"
OWN_BUFFER = N_("a tensor made with the default dtype or device instead of the inputs'")

# ---------------------------------------------------------------- visible: documented values


@check(1, "dot_scores gives the documented scores of 'journey'", documented=True, cell="dot_scores")
def test_dot_scores_documented(student):
    got = student.call("dot_scores", WORKED_INPUTS[1], WORKED_INPUTS)
    inputs, query = randn(158, 6, 3), randn(159, 3)  # other inputs: a written-out answer gives itself away
    expect_not_hard_coded("dot_scores", (got, student.call("dot_scores", query, inputs)),
                          (WORKED_INPUTS @ WORKED_INPUTS[1], inputs @ query))
    expect_close(got, DOC_DOT, "dot_scores(inputs[1], inputs)", atol=1e-4, heatmap_labels=(TOKENS[1:2], TOKENS),
                 mistakes={OVER_TOKENS: (WORKED_INPUTS * WORKED_INPUTS[1]).sum(dim=0)})


OVER_TOKENS = N_("a sum over the tokens (dim 0) instead of over the features (the last dim): each score is one "
                 "token's row times the query, summed along that row")
WRONG_SIDE = N_("inputs.T @ inputs (the transpose on the wrong side)")


@check(1, "score_matrix gives the documented 6x6 scores", documented=True, cell="score_matrix")
def test_score_matrix_documented(student):
    got = student.call("score_matrix", WORKED_INPUTS)
    inputs = randn(157, 6, 3)  # other inputs: a written-out answer gives itself away
    expect_not_hard_coded("score_matrix", (got, student.call("score_matrix", inputs)),
                          (WORKED_INPUTS @ WORKED_INPUTS.T, inputs @ inputs.T))
    # the worked example's scores are shown in the report even when right: a picture of what was computed
    expect_close(got, DOC_MATRIX, "score_matrix(inputs)", atol=1e-4, heatmap_labels=TOKENS, show_passing=True,
                 mistakes={WRONG_SIDE: WORKED_INPUTS.T @ WORKED_INPUTS})


# ---------------------------------------------------------------- visible: properties


@check(0.5, "dot_scores leaves its arguments unchanged", visibility="visible", cell="dot_scores")
def test_dot_scores_unchanged(student):
    inputs, query = randn(151, 6, 4), randn(152, 4)
    reply = run_unless_raised(student.run, "dot_scores", query, inputs, return_args=True)
    expect_unchanged(reply, [query, inputs], "dot_scores")


@check(0.75, "score_matrix on a batch (B, T, d): each item scored as on its own, symmetric", visibility="visible", cell="score_matrix")
def test_score_matrix_batch(student):
    batch = randn(153, 3, 5, 4)
    got = student.call("score_matrix", batch)  # an error raised on `.T` gets its hint (core/hints.py)
    expected = stack_items([student.call("score_matrix", item) for item in batch],
                           _f("{name} on a {shape} input", name="score_matrix", shape=(5, 4)),
                           "score_matrix")
    expect_close(got, expected, _("score_matrix on a (3, 5, 4) batch, compared with score_matrix of each item"),
                 hint=hint_if_written(student, "score_matrix", r"\.T\b",
                                      N_("Use transpose(-2, -1): .T on a 3-D tensor reverses every dim, "
                                         "batch included")))
    expect(got.shape[-1] == got.shape[-2] and torch.allclose(got, got.transpose(-2, -1), atol=1e-5),
           _("score_matrix must be symmetric: x_i . x_j == x_j . x_i"))


@check(0.75, "score_matrix has no Python loop over tokens", visibility="visible", cell="score_matrix")
def test_score_matrix_no_loop(student):
    counts = {}
    for t in (4, 9):
        reply = run_unless_raised(student.run, "score_matrix", randn(154, t, 4), count_ops=True)
        if reply is None:  # no count to compare: the checks of the values grade the exception
            return
        counts[t] = reply.ops
    expect_no_loop(counts, "score_matrix", N_("tokens"))


@check(0.25, "dot_scores answers in its input's dtype (float64) and on its device (meta)",
       visibility="visible", cell="dot_scores")
def test_dot_scores_dtype_and_device(student):
    """Only the convention (outputs of the input's dtype, on the input's device): the values are the other
    checks' business, and a function that raises on float32 inputs too is left to them."""
    expect_input_dtype_and_device(student, "dot_scores", (randn(156, 4).double(), randn(155, 6, 4).double()))


@check(0.25, "score_matrix answers in its input's dtype (float64) and on its device (meta)",
       visibility="visible", cell="score_matrix")
def test_score_matrix_dtype_and_device(student):
    """As dot_scores' check, for score_matrix: each function's convention judged in its own cell."""
    expect_input_dtype_and_device(student, "score_matrix", (randn(155, 6, 4).double(),))


def expect_input_dtype_and_device(student, name, args) -> None:
    """`name(*args)` (float64 arguments) answers in float64, and on the meta device on meta arguments."""
    advice = _("compute with the inputs' own operations (inputs @ query), or make any new tensor with "
               "dtype=inputs.dtype, device=inputs.device")
    if run_where_made(student.run, name, *(a.float() for a in args), mistake=OWN_BUFFER, advice=advice) is None:
        return
    for kind, device in ((_("float64 inputs"), None), (_("inputs on the meta device"), "meta")):
        try:
            reply = student.run(name, *args, device=device)
        except StudentFailure as failure:
            if failure.kind != "raised":
                raise
            raise CheckFailed(_f("{name} with {kind}: {error}. Most likely a tensor made "
                                 "without the inputs' dtype or device: {advice}", name=name, kind=kind,
                                 error=failure.shortened(300), advice=advice), mistake=OWN_BUFFER) from None
        value, devices = reply.value, reply.output_devices
        mixed = "; ".join(reply.mixed_devices[:2])
        expect(not mixed, _f("{name} with {kind} mixes devices ({mixed}): {advice}", name=name, kind=kind,
                             mixed=mixed, advice=advice), mistake=OWN_BUFFER)
        expected_device = device or torch.device(student.device).type  # the grading device, or meta
        dtype = str(getattr(value, "dtype", type(value).__name__)).replace("torch.", "")  # a meta answer's is a name
        expect(devices == [expected_device] and dtype == "float64",
               _f("{name} with {kind} returned {dtype} on {device}: the output must have the input's dtype "
                  "(float64) and lie on its device ({expected_device}); {advice}", name=name, kind=kind,
                  dtype=dtype, device=devices[0] if devices else _("no device"),
                  expected_device=expected_device, advice=advice), mistake=OWN_BUFFER)


def additive_layers(hidden_size: int, *, seed: int) -> dict:
    """AdditiveScore's parameters as the notebook says to create them, with torch's own layers."""
    manual_seed(seed)
    return {"W_q.weight": torch.nn.Linear(hidden_size, hidden_size, bias=False).weight,
            "W_k.weight": torch.nn.Linear(hidden_size, hidden_size, bias=False).weight,
            "w.weight": torch.nn.Linear(hidden_size, 1, bias=False).weight,
            "q": torch.randn(1, hidden_size)}


@check(0.5, "AdditiveScore creates W_q, W_k, w, q in the documented order", visibility="visible", cell="AdditiveScore")
def test_additive_parameter_order(student):
    module = student.new("AdditiveScore", 4, seed=11)
    expect_same_params(module, additive_layers(4, seed=11), "AdditiveScore", ADDITIVE_ORDER)


def expect_module_gradients(student, name: str, seed: int) -> None:
    """Every parameter of the student's `name`(4) gets a gradient: one check per module, so that a mistake in
    one of the three costs that module's check only."""
    X = randn(seed, 2, 3, 4)
    module = student.new(name, 4, seed=seed)
    out = module(X)
    expect(isinstance(out, torch.Tensor),
           _f("{name}(4)(X) returned {kind}, not a tensor", name=name, kind=type(out).__name__))
    params = module.params()  # which ones it should have is the other checks' business
    reply = module.run(X, mode="train", backward=randn(seed + 100, *out.shape))
    if not reply.graph:  # no graph: an answer written out says so first (the scores change with X: random)
        other = randn(seed + 200, 2, 3, 4)
        expect_not_hard_coded(name, (out, module(other)), (X, other))
    expect_grads_flow(reply, list(params or {}), name)


@check(0.5, "AdditiveScore: gradients reach every parameter", visibility="visible", cell="AdditiveScore")
def test_additive_gradients(student):
    expect_module_gradients(student, "AdditiveScore", 21)


@check(0.25, "DotProductScore: gradients reach every parameter", visibility="visible", cell="DotProductScore")
def test_dot_product_gradients(student):
    expect_module_gradients(student, "DotProductScore", 22)


@check(0.25, "SelfAttentionScore: gradients reach every parameter", visibility="visible", cell="SelfAttentionScore")
def test_self_attention_gradients(student):
    expect_module_gradients(student, "SelfAttentionScore", 23)


# ---------------------------------------------------------------- visible: each module's formula, on the checks' side
# The expected outputs are the docstrings' formulas evaluated here with the student's own parameters
# (or, where those are not as documented, with the documented seeded ones): no reference code needed.


def own_or_documented(params, documented: dict) -> dict:
    """The student's parameters where names and shapes are the documented ones, else the documented seeded ones:
    a value check then grades forward alone; the creation order is the order check's business."""
    if (isinstance(params, dict) and sorted(params) == sorted(documented)
            and all(isinstance(v, torch.Tensor) and v.shape == documented[k].shape for k, v in params.items())):
        return params
    return documented


@check(1, "AdditiveScore: w(tanh(W_k(X) + W_q(q))) with its own parameters", visibility="visible", cell="AdditiveScore")
def test_additive_score(student):
    X = randn(106, 2, 5, 4)
    module = student.new("AdditiveScore", 4, seed=11)
    p = own_or_documented(module.params(), additive_layers(4, seed=11))
    other = randn(109, 2, 5, 4)  # a second input of the same shape: a written-out answer gives itself away
    with torch.no_grad():
        W_q, W_k, w, q = p["W_q.weight"], p["W_k.weight"], p["w.weight"], p["q"]
        expected = (torch.tanh(X @ W_k.T + q @ W_q.T) @ w.T).squeeze(-1)  # (B, L)
        mistakes = {N_("W_q applied to X instead of to the query q"):
                        (torch.tanh(X @ W_k.T + X @ W_q.T) @ w.T).squeeze(-1),
                    N_("no tanh"): ((X @ W_k.T + q @ W_q.T) @ w.T).squeeze(-1)}
        expected_other = (torch.tanh(other @ W_k.T + q @ W_q.T) @ w.T).squeeze(-1)
    got = module(X)
    expect_not_hard_coded("AdditiveScore", (got, module(other)), (expected, expected_other))
    expect_close(got, expected, _f("{call} with {seeded}", call="AdditiveScore(4)(X)",
                                         seeded="torch.manual_seed(11)"), mistakes=mistakes)


# (X @ q).squeeze(): every dim of size 1 goes, a batch of one's included
SQUEEZE_ALL = N_("squeeze() without a dim, which drops every dim of size 1 (the batch of one's too): use squeeze(-1)")


@check(1, "DotProductScore: (X @ q).squeeze(-1) with q of shape (D, 1)", visibility="visible", cell="DotProductScore")
def test_dot_product_score(student):
    X = randn(107, 3, 6, 5)
    module = student.new("DotProductScore", 5, seed=12)
    params = module.params()
    expect(list(params) == ["q"] and tuple(params["q"].shape) == (5, 1),
           _f("DotProductScore should have one parameter q of shape (5, 1); found {found}",
              found=[(n, tuple(p.shape)) for n, p in params.items()]))
    manual_seed(12)
    q = torch.randn(5, 1)  # as documented: torch.randn(hidden_size, 1) right after the seed
    got, other = module(X), randn(110, 3, 6, 5)  # a second input: a written-out answer gives itself away
    expect_not_hard_coded("DotProductScore", (got, module(other)), ((X @ q).squeeze(-1), (other @ q).squeeze(-1)))
    expect_close(got, (X @ q).squeeze(-1), _f("{call} with {seeded}", call="DotProductScore(5)(X)",
                                                     seeded="torch.manual_seed(12)"))
    one = X[:1]  # a batch of one sentence: squeeze() without a dim drops its batch dim too
    expect_close(module(one), (one @ q).squeeze(-1), _f("{call} on a batch of one", call="DotProductScore(5)(X[:1])"),
                 mistakes={SQUEEZE_ALL: (one @ q).squeeze()})


@check(1, "SelfAttentionScore: W_q(X) @ W_k(X)^T, unscaled", visibility="visible", cell="SelfAttentionScore")
def test_self_attention_score(student):
    X = randn(108, 2, 5, 6)
    module = student.new("SelfAttentionScore", 6, seed=13)
    manual_seed(13)  # W_q, then W_k, as documented
    W_q, W_k = (torch.nn.Linear(6, 6, bias=False) for _ in range(2))
    other = randn(111, 2, 5, 6)  # a second input: a written-out answer gives itself away
    with torch.no_grad():
        expected = W_q(X) @ W_k(X).transpose(-2, -1)  # (B, L, L)
        expected_other = W_q(other) @ W_k(other).transpose(-2, -1)
    got = module(X)
    expect_not_hard_coded("SelfAttentionScore", (got, module(other)), (expected, expected_other))
    expect_close(got, expected, _f("{call} with {seeded}", call="SelfAttentionScore(6)(X)",
                                         seeded="torch.manual_seed(13)"),
                 mistakes={N_("scores divided by sqrt(D) (this one is unscaled)"): expected / math.sqrt(6),
                           N_("keys @ queries^T (queries and keys swapped)"): expected.transpose(-2, -1)})
