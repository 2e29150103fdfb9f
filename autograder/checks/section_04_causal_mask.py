"""Checks of section 04: hiding the future (10 points).

The section's registry entry (SECTION) and its visible checks: the documented masked weights and output of the
worked example, and the properties that need no reference (the causal mask itself, made on the device it is
given, and the two weight functions' masks on their input's device; arguments left unchanged; parameters
created in the documented order; causality; batch items kept apart; the ValueError for a too-long input;
dropout off in eval mode; gradients reaching every parameter; a module that follows .to(device)). The self-
check runs them and the students' wheel ships this module as it is, so nothing here imports `solutions` or
holds a hidden seed's expected output. Each property check judges one idea, against the student's own module
where it needs a comparison, so that a wrong value costs the value checks only. The hidden checks, which the
grader runs after these, compare with the reference solutions on fresh inputs (checks/hidden/hidden_04_causal_mask.py).
"""

SECTION = {  # the registry's entry (autograder/core/sections.py reads it without importing this file)
    "title": "Hiding the future",
    "solution": "solutions.causal_mask",
    "names": ("causal_mask", "mask_and_renormalize", "causal_attention_weights", "CausalAttention"),
    "forbidden": "attention",
    "forbidden_in": ("causal_attention_weights", "CausalAttention"),
    "uses_meta": True,
    "rules": {"unchanged": ("mask_and_renormalize", "causal_attention_weights"), "param_order": ("CausalAttention",),
              "device": ("causal_mask", "mask_and_renormalize", "causal_attention_weights", "CausalAttention"),
              "mask_true_hidden": ("causal_mask",)},
}

import math

import torch

from autograder.checks.causal_forward import documented_forward, future_of, torch_causal_weights
from autograder.checks.common import (PLUS_INF, PLUS_INF_NAN, TOKENS, TRAIN_ONLY_NAN, WORKED_BATCH, WORKED_INPUTS,
                                      expect_forward_on_any_device, expect_gradients, expect_not_hard_coded,
                                      expect_output, expect_raises, expect_unchanged, manual_seed, meeting, rand, randn,
                                      run_unless_raised, run_where_made, seeded_projections, stand_in_table)
from autograder.checks.parameters import (OTHER_ORDER, expect_same_params)
from autograder.core.shortening import shorten
from autograder.core.harness import CheckFailed, StudentFailure, check, close, expect, expect_close, expect_shape
from autograder.i18n import N_, _, _f
from autograder.worker.wire import TensorStub

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
DIAGONAL = N_("the diagonal masked too (use diagonal=1: every token may look at itself)")
DIAGONAL_LARGE = N_("the diagonal masked too, with -1e9 (use diagonal=1: every token may look at itself)")
INVERTED = N_("an inverted mask (True must mean hidden: True strictly above the diagonal)")
AFTER_SOFTMAX = N_("masking after the softmax without renormalising (rows no longer sum to 1)")
NO_SCALING = N_("no 1/sqrt(d_k) scaling")
ZERO_FILL = N_("the mask filled with 0 instead of -inf before the softmax (exp(0) = 1: the future keeps its weight; "
             "use masked_fill(mask, float('-inf')))")
PAST = N_("the past hidden instead of the future (tril where triu belongs: hide the keys j > i, "
        "torch.triu(..., diagonal=1))")
NOT_RENORMALISED = N_("zeroed above the diagonal but not renormalised (divide each row by its sum)")
PAST_AND_DIAGONAL = N_("the past and the diagonal hidden instead of the future (torch.tril where "
                     "torch.triu(..., diagonal=1) belongs; the last row hides every key, hence NaN)")


MASK_PARAMS = ("num_tokens", "device")  # causal_mask's, in the contract's order


def right_masks(*sizes) -> dict:
    """causal_mask's answers at `sizes`, from its contract: what the checks of its callers hand them in place of the
    student's own (Student.standing_in, `meeting`), so that a wrong causal_mask costs its own checks only."""
    return {"causal_mask": stand_in_table(MASK_PARAMS, [({"num_tokens": size}, future_of(torch.empty(size, size)))
                                                        for size in sizes],
                                          {"device": None})}


WEIGHTS_PARAMS = ("attn_scores", "d_k")  # causal_attention_weights', in the contract's order


def right_weights() -> dict:
    """causal_attention_weights and mask_and_renormalize as their contract computes them, from each call's own
    arguments, in the worker (a module's scores come from its own weights: no table could hold them), for a
    (T, T) or (B, T, T) call: a CausalAttention that calls the student's own meets right ones, so that a wrong
    weight function costs its own checks only (a wrong d_k, or wrong weights, handed to it are the module's)."""
    ranks = (2, 3)
    computed = {"of": "attn_scores", "steps": [["future_hidden", []], ["over_sqrt", ["d_k"]], ["softmax", []]]}
    renormalized = {"of": "attn_weights", "steps": [["log", []], ["future_hidden", []], ["softmax", []]]}
    return {"causal_attention_weights": stand_in_table(
                WEIGHTS_PARAMS, [({"attn_scores": {"shape": [-1] * rank}}, computed) for rank in ranks]),
            "mask_and_renormalize": stand_in_table(
                ("attn_weights",), [({"attn_weights": {"shape": [-1] * rank}}, renormalized) for rank in ranks])}


# what a right CausalAttention may ask here: causal_mask at an input's T or its context_length, the weights
MODULE_MASKS = right_masks(*range(1, 9))
MODULE_HELPERS = {**MODULE_MASKS, **right_weights()}


def documented_scores():
    """The worked example's unscaled scores with the weights of torch.manual_seed(789); SelfAttention_v2(3, 2)."""
    projection = seeded_projections(3, 2, seed=789)
    with torch.no_grad():
        return projection.W_query(WORKED_INPUTS) @ projection.W_key(WORKED_INPUTS).T


def weight_mistakes(scores, d_k):
    """What common wrong versions of causal_attention_weights return."""
    num_tokens = scores.shape[-1]
    future = future_of(scores)
    with_diagonal = torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool))
    plain = torch.softmax(scores / math.sqrt(d_k), dim=-1)
    return {
        NO_SCALING: torch.softmax(scores.masked_fill(future, INF), dim=-1),
        N_("scores divided by d_k instead of sqrt(d_k)"): torch.softmax(scores.masked_fill(future, INF) / d_k, dim=-1),
        N_("scores scaled by the square root of the number of tokens instead of sqrt(d_k)"):
            torch.softmax(scores.masked_fill(future, INF) / math.sqrt(num_tokens), dim=-1),
        AFTER_SOFTMAX: plain.masked_fill(future, 0.0),
        DIAGONAL: torch.softmax(scores.masked_fill(with_diagonal, INF) / math.sqrt(d_k), dim=-1),
        DIAGONAL_LARGE:
            torch.softmax(scores.masked_fill(with_diagonal, -1e9) / math.sqrt(d_k), dim=-1),
        INVERTED: torch.softmax(scores.masked_fill(~future, -1e9) / math.sqrt(d_k), dim=-1),
        ZERO_FILL: torch.softmax(scores.masked_fill(future, 0.0) / math.sqrt(d_k), dim=-1),
        PAST: torch.softmax(scores.masked_fill(future.T, INF) / math.sqrt(d_k), dim=-1),
        PAST_AND_DIAGONAL: torch.softmax(scores.masked_fill(~future, INF) / math.sqrt(d_k), dim=-1),
        N_("no causal mask at all"): plain,
        N_("softmax over dim=-2 (the columns) instead of the last dim"):
            torch.softmax(scores.masked_fill(future, INF) / math.sqrt(d_k), dim=-2),
        PLUS_INF: torch.softmax(scores.masked_fill(future, float("inf")) / math.sqrt(d_k), dim=-1),
    }


def causal_output(reference, x):
    """CausalAttention's documented output (dropout off) as torch's causal attention gives it with the weights of
    `reference` (see attention_mistakes)."""
    with torch.no_grad():
        return torch.nn.functional.scaled_dot_product_attention(reference.W_query(x), reference.W_key(x),
                                                                reference.W_value(x), is_causal=True)


def attention_mistakes(reference, x):
    """What common wrong versions of CausalAttention return (dropout off), with the weights of `reference`
    (a seeded reference module, or seeded_projections: anything with W_query, W_key, W_value)."""
    with torch.no_grad():
        queries, keys, values = reference.W_query(x), reference.W_key(x), reference.W_value(x)
        scores = queries @ keys.transpose(-2, -1)
        wrong = {description: weights @ values
                 for description, weights in weight_mistakes(scores, keys.shape[-1]).items()}
        future = future_of(scores)
        wrong[SCALED_BY_D_IN[x.shape[-1]]] = \
            torch.softmax(scores.masked_fill(future, INF) / math.sqrt(x.shape[-1]), dim=-1) @ values
        swapped = scores.transpose(-2, -1).masked_fill(future, INF) / math.sqrt(keys.shape[-1])
        wrong[N_("queries and keys swapped (keys @ queries^T)")] = torch.softmax(swapped, dim=-1) @ values
        # over the batch, the future filled with a large negative number (-inf gives nan there, said as nan)
        over_batch = scores.masked_fill(future, -1e9) / math.sqrt(keys.shape[-1])
        wrong[N_("softmax over the batch dim (dim=0) instead of the last dim: keep the batch dim apart")] = \
            torch.softmax(over_batch, dim=0) @ values
    return wrong


# One literal per input size the checks use (d_in -> description), so that the catalogues hold each one whole
SCALED_BY_D_IN = {3: N_("scores scaled by sqrt(d_in) = sqrt(3) instead of sqrt(d_k) = sqrt(d_out)"),
                  6: N_("scores scaled by sqrt(d_in) = sqrt(6) instead of sqrt(d_k) = sqrt(d_out)")}


ORDER = N_("W_query, W_key, W_value (Linear), then the Dropout")
MASK_ON_CPU = N_("a mask made on the CPU whatever the input's device (device= left out)")
NAMES = ("W_query", "W_key", "W_value")
EVAL_DROPOUT = N_("dropout active in eval mode (use self.dropout, or F.dropout(..., training=self.training), "
                "which eval() switches off)")
NO_TRAIN_DROPOUT = N_("no dropout in train mode (apply self.dropout to the attention weights)")


def expect_finite(value, what):
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        expect(bool(torch.isfinite(value).all()),
               _f("{what} contains NaN or inf: a row whose every key is masked gives NaN "
                  "(is the diagonal masked too? it must stay visible)", what=what))


# ---------------------------------------------------------------- visible: documented values (2 points)

@check(0.5, "mask_and_renormalize gives the documented masked weights", documented=True, cell="mask_and_renormalize")
def test_mask_and_renormalize_documented(student):
    weights = torch.softmax(documented_scores() / math.sqrt(2), dim=-1)
    other = torch.softmax(randn(166, 6, 6), dim=-1)  # other weights: a written-out answer gives itself away
    with student.standing_in(right_masks(6)):
        got, got_other = (student.call("mask_and_renormalize", w) for w in (weights, other))
    # torch's own causal attention of the weights' logarithms: the weights renormalised under the mask
    expect_not_hard_coded("mask_and_renormalize", (got, got_other),
                          [torch_causal_weights(w.log(), 1.0) for w in (weights, other)])
    kept = weights.masked_fill(future_of(weights), 0.0)
    expect_close(got, DOC_MASKED, _("mask_and_renormalize(attn_weights) of the worked example"), atol=1e-4,
                 heatmap_labels=TOKENS,
                 mistakes={NOT_RENORMALISED: kept, COLUMN_SUMS: kept / kept.sum(dim=-2, keepdim=True),
                           SUM_WITHOUT_KEEPDIM: kept / kept.sum(dim=-1)})


COLUMN_SUMS = N_("divided by the column sums (dim=-2) instead of the row sums")
# masked / masked.sum(dim=-1): on the square weights the (T,) sums line up with the last dim, without an error
# (section 02's softmax_naive names the same slip in the same words)
SUM_WITHOUT_KEEPDIM = N_("a sum taken without keepdim=True (the result broadcast along the wrong dim)")


@check(0.5, "causal_attention_weights gives the documented masked weights", documented=True, cell="causal_attention_weights")
def test_causal_attention_weights_documented(student):
    scores = documented_scores()
    other = randn(167, 6, 6)  # other scores: a written-out answer gives itself away
    with student.standing_in(right_masks(6)):
        got, got_other = (student.call("causal_attention_weights", s, 2) for s in (scores, other))
    expect_not_hard_coded("causal_attention_weights", (got, got_other),
                          [torch_causal_weights(s, 1 / math.sqrt(2)) for s in (scores, other)])
    mistakes = weight_mistakes(scores, 2)
    expect_close(got, DOC_MASKED, _("causal_attention_weights(attn_scores, 2) of the worked example"), atol=1e-4,
                 heatmap_labels=TOKENS, show_passing=True,  # the masked weights, shown passing or not
                 mistakes=mistakes, nan_note=PLUS_INF_NAN if close(got, mistakes[PLUS_INF]) else "")


@check(1, "CausalAttention(3, 2, 6, 0.0) with seed 123 gives the documented output", documented=True, cell="CausalAttention")
@meeting(MODULE_HELPERS)
def test_causal_attention_documented(student):
    module = student.new("CausalAttention", 3, 2, 6, 0.0, seed=123)
    reference = seeded_projections(3, 2, seed=123)  # the Dropout created after them draws nothing
    got, other = module(WORKED_BATCH), randn(168, 2, 6, 3)  # other inputs: a written-out answer gives itself away
    expect_not_hard_coded("CausalAttention", (got, module(other)),
                          [causal_output(reference, x) for x in (WORKED_BATCH, other)])
    own = documented_forward(module.params(), WORKED_BATCH)  # right with its own weights: they are not the seeded ones
    expect_close(got, torch.stack((DOC_CAUSAL_ATTENTION, DOC_CAUSAL_ATTENTION)),
                 "torch.manual_seed(123); CausalAttention(3, 2, 6, 0.0)(batch)", atol=1e-4,
                 mistakes={**({OTHER_ORDER: own[0]} if own else {}), **attention_mistakes(reference, WORKED_BATCH)})


# ---------------------------------------------------------------- visible: properties (5.25 points)

@check(1, "causal_mask: (T, T) bool, True strictly above the diagonal", visibility="visible", cell="causal_mask")
def test_causal_mask(student):
    sizes = (7, 1)
    answers = [student.call("causal_mask", num_tokens) for num_tokens in sizes]
    # one mask for two sizes: a written-out mask gives itself away before its values are compared
    expected_masks = [torch.ones(num_tokens, num_tokens, dtype=torch.bool).triu(1) for num_tokens in sizes]
    expect_not_hard_coded("causal_mask", answers, expected_masks)
    for num_tokens, got, expected in zip(sizes, answers, expected_masks):
        with_diagonal = torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool))
        expect_close(got, expected, f"causal_mask({num_tokens})",
                     mistakes={DIAGONAL: with_diagonal,
                               INVERTED: ~expected,
                               N_("the past hidden instead of the future (True below the diagonal)"): expected.T},
                     hint=N_("Masks are bool and True means hidden: torch.triu(..., diagonal=1)"), heatmap_labels=True)


@check(0.25, "causal_mask creates the mask on the device it is given", visibility="visible", cell="causal_mask")
def test_causal_mask_device(student):
    """Only where the mask is made: its values are the other checks' business."""
    reply = student.run("causal_mask", 5, "meta")  # device passed by position: run() has its own device=
    devices = reply.output_devices
    got = _f("a tensor on {device}", device=devices[0]) if devices else type(reply.value).__name__
    expect(reply.output_devices == ["meta"],
           _f("causal_mask(5, device='meta') returned {got}: create the mask directly on `device` "
              "(torch.ones(..., device=device)), so attention on a GPU needs no copy", got=got))
    stub = reply.value  # its values and dtype are the other check's business
    expect(isinstance(stub, TensorStub) and stub.shape == (5, 5),
           _f("causal_mask(5, device='meta') should be a (5, 5) tensor; got {stub}", stub=repr(stub)))


@check(0.25, "mask_and_renormalize makes its mask on its input's device", visibility="visible", cell="mask_and_renormalize")
def test_renormalize_device(student):
    """Only where the mask is made, the right causal_mask standing in: a wrong one costs its own checks."""
    with student.standing_in(right_masks(5)):
        expect_on_input_device(student, "mask_and_renormalize", (torch.softmax(randn(423, 2, 5, 5), dim=-1),))


@check(0.25, "causal_attention_weights makes its mask on its input's device", visibility="visible",
       cell="causal_attention_weights")
def test_weights_device(student):
    with student.standing_in(right_masks(5)):
        expect_on_input_device(student, "causal_attention_weights", (torch.softmax(randn(423, 2, 5, 5), dim=-1), 4))


def expect_on_input_device(student, name, args) -> None:
    """`name(*args)` on the meta device runs, mixes no devices and answers on meta; not judged where it
    raises on the CPU too (the value checks grade that)."""
    advice = _f("make the mask on the input's device (causal_mask(T, device=x.device)), so that {name} "
                "works on a GPU", name=name)
    if run_where_made(student.run, name, *args, mistake=MASK_ON_CPU, advice=advice) is None:
        return
    try:
        reply = student.run(name, *args, device="meta")
    except StudentFailure as failure:
        if failure.kind != "raised":
            raise
        raise CheckFailed(_f("{name} on the meta device: {error}. Most likely a tensor made on "
                             "the CPU: {advice}", name=name, error=failure.shortened(300), advice=advice),
                          mistake=MASK_ON_CPU) from None
    mixed = "; ".join(reply.mixed_devices[:2])
    expect(not mixed, _f("{name} on the meta device mixes devices ({mixed}): {advice}", name=name, mixed=mixed,
                         advice=advice), mistake=MASK_ON_CPU)
    expect(reply.output_devices == ["meta"],
           _f("{name} on the meta device returned {value} instead of one tensor on that device", name=name,
              value=shorten(repr(reply.value), 100)))


@check(0.25, "mask_and_renormalize leaves its argument unchanged", visibility="visible", cell="mask_and_renormalize")
def test_renormalize_unchanged(student):
    weights = torch.softmax(randn(421, 2, 5, 5, scale=2.0), dim=-1)
    with student.standing_in(right_masks(5)):
        reply = run_unless_raised(student.run, "mask_and_renormalize", weights, return_args=True)
    expect_unchanged(reply, [weights], "mask_and_renormalize")


@check(0.25, "causal_attention_weights leaves its argument unchanged", visibility="visible",
       cell="causal_attention_weights")
def test_weights_unchanged(student):
    scores = randn(422, 2, 5, 5, scale=3.0)
    with student.standing_in(right_masks(5)):
        reply = run_unless_raised(student.run, "causal_attention_weights", scores, 4, return_args=True)
    expect_unchanged(reply, [scores], "causal_attention_weights")


@check(0.5, "CausalAttention creates W_query, W_key, W_value (with their biases) in the documented order",
       visibility="visible", cell="CausalAttention")
@meeting(MODULE_HELPERS)
def test_causal_attention_params(student):
    module = student.new("CausalAttention", 6, 3, 8, 0.0, qkv_bias=True, seed=41)
    manual_seed(41)  # the documented creation order, with torch's own layers (the Dropout draws nothing)
    layers = [torch.nn.Linear(6, 3, bias=True) for _ in NAMES]
    expect_same_params(module, {f"{name}.{kind}": getattr(layer, kind)
                                for name, layer in zip(NAMES, layers) for kind in ("weight", "bias")},
                       "CausalAttention(6, 3, 8, 0.0, qkv_bias=True)", _(ORDER))


@check(0.5, "CausalAttention is causal: later tokens do not change earlier outputs", visibility="visible", cell="CausalAttention")
@meeting(MODULE_HELPERS)
def test_causality(student):
    x = randn(406, 2, 7, 4)
    changed, first_changed = x.clone(), x.clone()
    changed[:, 3:] = randn(407, 2, 4, 4, scale=3.0)
    first_changed[:, 0] = randn(415, 2, 4, scale=3.0)
    module = student.new("CausalAttention", 4, 3, 7, 0.0, seed=42)
    before, after, moved = module(x), module(changed), module(first_changed)
    for out in (before, after, moved):
        expect_shape(out, (2, 7, 3), _("CausalAttention(4, 3, 7, 0.0) on a (2, 7, 4) input"))
        expect_finite(out, _("CausalAttention's output"))
    expect(not torch.allclose(moved[:, 1:], before[:, 1:]),
           _("CausalAttention's outputs of tokens 1-6 stay the same when token 0 changes: every token should "
             "attend to the tokens before it"))
    expect_close(after[:, :3], before[:, :3], _("the outputs of tokens 0-2 after tokens 3-6 changed"),
                 device=student.device,
                 hint=N_("They changed, so the future leaks into the past: hide j > i (True strictly above "
                         "the diagonal) with -inf before the softmax"))


@check(0.5, "CausalAttention: the items of a batch do not influence each other", visibility="visible", cell="CausalAttention")
@meeting(MODULE_HELPERS)
def test_batch_independent(student):
    x = randn(408, 3, 5, 4)
    module = student.new("CausalAttention", 4, 3, 6, 0.0, seed=43)
    together = module(x)
    expect_output(together, (3, 5, 3), _("CausalAttention(4, 3, 6, 0.0) on a (3, 5, 4) batch"))
    for item in range(3):
        alone = module(x[item:item + 1])
        expect_shape(alone, (1, 5, 3), _("CausalAttention(4, 3, 6, 0.0) on a (1, 5, 4) batch"))
        expect_close(together[item], alone[0],
                     _f("item {item} of a batch of 3 compared with the same item alone", item=item),
                     device=student.device,
                     hint=N_("Each item must attend only within itself: keep the batch dim apart "
                             "(keys.transpose(1, 2), softmax over the last dim)"))


@check(0.5, "CausalAttention raises ValueError naming both numbers when T > context_length", visibility="visible", cell="CausalAttention")
@meeting(MODULE_HELPERS)
def test_too_long(student):
    module = student.new("CausalAttention", 3, 2, 5, 0.0, seed=44)
    expect_raises(lambda: module(randn(409, 1, 8, 3)), "ValueError",
                  _("CausalAttention(3, 2, context_length=5, 0.0) on 8 tokens"), naming=(8, 5))


@check(0.5, "CausalAttention: eval mode disables dropout", visibility="visible", cell="CausalAttention")
@meeting(MODULE_HELPERS)
def test_eval_disables_dropout(student):
    """Against the student's own module built with dropout=0.0 under the same seed (the same weights):
    in eval mode the output must not depend on the dropout rate, whatever the forward computes."""
    x = randn(410, 2, 6, 4)
    module = student.new("CausalAttention", 4, 3, 6, 0.5, seed=45)
    without = student.new("CausalAttention", 4, 3, 6, 0.0, seed=45)
    expected = without(x, mode="eval")
    expect_output(expected, (2, 6, 3), _("CausalAttention(4, 3, 6, dropout=0.0) in eval mode"))
    for seed in (1, 2):
        expect_close(module(x, mode="eval", seed=seed), expected,
                     _("CausalAttention(4, 3, 6, dropout=0.5) in eval mode, compared with the same module built "
                       "with dropout=0.0"), device=student.device,
                     hint=_f("In eval mode the output must not depend on the dropout rate: {advice}?",
                             advice=_(EVAL_DROPOUT)))


# the masks only: the weight functions the module calls are its own here, as in training, since their own
# checks do not follow the graph (a weight function that cuts it still costs this point, not none)
@check(0.5, "CausalAttention: gradients reach every parameter", visibility="visible", cell="CausalAttention")
@meeting(MODULE_MASKS)
def test_gradients(student):
    """Only that the gradients flow: their values follow from the forward, which other checks grade."""
    x = randn(412, 2, 5, 4)
    grad_output = randn(413, 2, 5, 3)
    module = student.new("CausalAttention", 4, 3, 6, 0.0, qkv_bias=True, seed=47)
    params = module.params()  # which ones it should have is the parameter check's business
    reply = module.run(x, mode="train", backward=grad_output)
    expect_gradients(reply, list(params or {}), "CausalAttention(4, 3, 6, 0.0, qkv_bias=True)")


@check(0.5, "CausalAttention works on any device: no tensor created on the CPU in forward", visibility="visible", cell="CausalAttention")
@meeting(MODULE_HELPERS)
def test_device_portability(student):
    module = student.new("CausalAttention", 3, 2, 6, 0.0, seed=48)
    advice = _("register the mask with self.register_buffer in __init__ (so .to(device) moves it), "
               "or create it in forward with device=x.device")
    if run_unless_raised(module.run, rand(414, 2, 4, 3)) is None:
        return  # it raises on the CPU too: no device is to blame, the value checks grade the error
    expect_forward_on_any_device(module, rand(414, 2, 4, 3), "CausalAttention", (2, 4, 2), advice)


@check(0.5, "CausalAttention: in train mode, dropout on the attention weights as nn.Dropout does",
       visibility="visible", cell="CausalAttention")
@meeting(MODULE_HELPERS)
def test_train_dropout(student):
    """That dropout is applied in train mode; where the eval-mode forward is the documented one with the
    student's own parameters, that it is applied as nn.Dropout on the weights does (a wrong forward costs
    the value checks, not this one)."""
    x = randn(411, 2, 6, 4)
    module = student.new("CausalAttention", 4, 3, 6, 0.5, seed=46)
    what = _("CausalAttention(4, 3, 6, dropout=0.5) in train mode after torch.manual_seed(7)")
    got = module(x, mode="train", seed=7)
    expect_shape(got, (2, 6, 3), what)
    eval_out = module(x, mode="eval")
    expect_shape(eval_out, (2, 6, 3), _("CausalAttention(4, 3, 6, dropout=0.5) in eval mode"))
    expect(not close(got, eval_out), _f("{what}: the output equals the eval-mode output. This looks like "
                                        "{mistake}", what=what, mistake=_(NO_TRAIN_DROPOUT)),
           mistake=NO_TRAIN_DROPOUT)
    params = module.params()
    documented = documented_forward(params, x)
    if documented is None or not close(eval_out, documented[0], student.device):
        return  # the forward itself is off (the value checks say where); dropout is applied, at least
    expected, on_context = documented_forward(params, x, dropout=0.5, train_seed=7, device=student.device)
    expect_close(got, expected, what, device=student.device,
                 mistakes={N_("dropout on the context vectors instead of the attention weights"): on_context},
                 hint=N_("Apply self.dropout once, to the attention weights after the softmax, before @ values"),
                 nan_note=TRAIN_ONLY_NAN)
