"""Checks of section 05: batches of sentences of different lengths (10 points).

The section's registry entry (SECTION) and its visible checks: the documented padding mask of the worked
example, and the properties that need no reference (the mask from the lengths, made on their device, and its
ValueError; padded key columns hidden and the scores left unchanged; padded keys getting weight 0, each
query's weights summing to 1, and the output equal to softmax(q k^T / sqrt(d)) @ v computed here from the
student's inputs; parameters created in the documented order; PaddedSelfAttention equal to
nn.MultiheadAttention holding the student's own weights, on one input and on distinct queries, keys and
values; attn_mask honoured, alone and with the padding mask; outputs blind to the padding; gradients reaching the projections). The self-check
runs them and the students' wheel ships this module as it is, so nothing here imports `solutions` or holds a
hidden seed's expected output. Each property check judges one idea, against the student's own module (its own
weights) where it needs a comparison, so that a wrong value costs the value checks only. The hidden checks,
which the grader runs after these, compare with the reference solutions on fresh inputs: they are in
checks/hidden/hidden_05_padding_mask.py.
"""

SECTION = {  # the registry's entry (autograder/core/sections.py reads it without importing this file)
    "title": "Batches of sentences of different lengths",
    "solution": "solutions.padding_mask",
    "names": ("key_padding_mask", "mask_padded_scores", "padded_attention", "PaddedSelfAttention"),
    "forbidden": "attention",
    "forbidden_in": ("padded_attention", "PaddedSelfAttention"),
    "rules": {"unchanged": ("mask_padded_scores",), "param_order": ("PaddedSelfAttention",),
              "device": ("key_padding_mask",),
              "mask_true_hidden": ("key_padding_mask", "mask_padded_scores", "PaddedSelfAttention")},
}

import math

import torch

from autograder.checks.common import (expect_gradients, expect_not_hard_coded, expect_raises, expect_sums_to_one,
                                      expect_unchanged, rand, randn, run_unless_raised, run_where_made)
from autograder.checks.parameters import (expect_same_params)
from autograder.checks.padding_stand_ins import new_padded, right_masked_scores
from autograder.checks.padding_torch import NAMES, documented_layers, multihead_attention, own_layers
from autograder.core.harness import CheckFailed, StudentFailure, check, close, expect, expect_close, expect_shape
from autograder.i18n import N_, _, _f

INF = float("-inf")
DOC_MASK = torch.tensor([[False, False, False, False], [False, False, False, True], [False, False, True, True]])
ORDER = "W_q, W_k, W_v, W_out"
INVERTED = N_("an inverted padding mask (True should mean hidden: True at the padding)")
OFF_BY_ONE = N_("an off-by-one: position seq_len is padding too (use >=, not >)")
QUERY_SIDE = N_("masking the padded queries (rows) instead of the padded keys (columns): use mask[:, None, :]")
NO_SCALING = N_("no 1/sqrt(d) scaling")
BY_LENGTH = N_("scores divided by sqrt(keys.shape[1]), the padded length L, instead of sqrt(d) = sqrt(keys.shape[-1])")
ZERO_FILL = N_("the padded keys filled with 0 instead of -inf (exp(0) = 1: they keep their weight; "
             "use masked_fill(mask[:, None, :], float('-inf')))")
AFTER_SOFTMAX = N_("masking after the softmax without renormalising (rows no longer sum to 1)")
NO_PADDING = N_("no padding mask applied (key_padding_mask ignored)")
NO_W_OUT = N_("no W_out on the context vectors")
ATTN_IGNORED = N_("attn_mask ignored")
ATTN_IGNORED_WITH_PADDING = N_("attn_mask ignored when key_padding_mask is given")
PADDING_IGNORED_WITH_ATTN = N_("key_padding_mask ignored when attn_mask is given")
BOTH_REQUIRED = N_("a pair hidden only where both masks hide it (attn_mask & key_padding_mask): combine them with |")
ATTN_INVERTED = N_("an inverted attn_mask (True must mean not allowed)")
QK_SWAPPED = N_("the queries projected from k and the keys from q (W_q(q) and W_k(k), each from its own input)")
KV_SWAPPED = N_("the keys projected from v and the values from k (W_k(k) and W_v(v), each from its own input)")
KEYS_FROM_Q = N_("the keys projected from q (W_k(k): the keys from their own input, k)")
ALL_FROM_Q = N_("every projection applied to q (self-attention's shortcut: here q, k and v are separate inputs)")
PAIR_SWAPPED = N_("the pair returned as (weights, out): return (out, weights), the output first")
KPM_DEVICE = N_("the padding mask made on the default device instead of the lengths' device")


def padded_positions(width, seq_lens):
    """(B, width) bool, True at the positions j >= seq_lens[b]: the padding of sequences of these lengths."""
    return torch.arange(width)[None, :] >= torch.as_tensor(seq_lens)[:, None]


def hidden_as_inf(value):
    """Scores the student hid, whether with -inf, -1e9 or a large negative number added, shown as -inf."""
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.masked_fill(value < -1e8, INF)
    return value


def pair(value, what):
    """The (out, weights) a function must return."""
    if not (isinstance(value, (tuple, list)) and len(value) == 2):
        kind = _f("a tuple of {count}", count=len(value)) if isinstance(value, (tuple, list)) else type(value).__name__
        raise CheckFailed(_f("{what} should return the pair (out, weights); got {kind}", what=what, kind=kind))
    if swapped(value):
        raise CheckFailed(_f("{what} returns (B, L, L) weights first and (B, L, d) outputs second: this looks like "
                             "{mistake}", what=what, mistake=_(PAIR_SWAPPED)), PAIR_SWAPPED)
    return value


def swapped(value) -> bool:
    """The evidence of (weights, out) returned for (out, weights): a first tensor square in its last two dims, a
    second one that is not, both with the same queries (an out with d == L would be square too: no evidence then)."""
    first, second = value
    return (isinstance(first, torch.Tensor) and isinstance(second, torch.Tensor) and first.dim() == second.dim() >= 2
            and first.shape[-1] == first.shape[-2] and second.shape[-1] != second.shape[-2]
            and first.shape[:-1] == second.shape[:-1])


def attend(queries, keys, values, hidden, *, scale=True, divisor: float | None = None):
    """(output, weights) of torch's scaled_dot_product_attention with `hidden` (broadcast to (B, L, L)) hidden,
    scaled by 1/sqrt(d), 1/divisor or not at all; the weights: what it gives with the identity as the values. A row
    whose every key is hidden is NaN, as a softmax of -inf scores gives it, whichever kernel torch picks."""
    identity = torch.eye(keys.shape[-2]).expand(*keys.shape[:-1], -1)
    added = torch.zeros(hidden.shape).masked_fill(hidden, INF)
    weights = torch.nn.functional.scaled_dot_product_attention(
        queries, keys, identity, attn_mask=added, scale=1.0 / divisor if divisor else None if scale else 1.0)
    weights = weights.masked_fill(hidden.expand(weights.shape).all(-1, keepdim=True), float("nan"))
    return weights @ values, weights


def padding_mistakes(queries, keys, values, mask):
    """(out, weights) of common wrong versions of padded attention, by description."""
    keys_hidden, queries_hidden = mask[:, None, :], mask[:, :, None]
    scores = queries @ keys.transpose(-2, -1) / math.sqrt(queries.shape[-1])
    after = torch.softmax(scores, dim=-1).masked_fill(keys_hidden, 0.0)
    zero_filled = torch.softmax(scores.masked_fill(keys_hidden, 0.0), dim=-1)
    return {
        NO_SCALING: attend(queries, keys, values, keys_hidden, scale=False),
        QUERY_SIDE: attend(queries, keys, values, queries_hidden),
        INVERTED: attend(queries, keys, values, ~keys_hidden),
        AFTER_SOFTMAX: (after @ values, after),
        ZERO_FILL: (zero_filled @ values, zero_filled),
        NO_PADDING: attend(queries, keys, values, torch.zeros_like(keys_hidden)),
        BY_LENGTH: attend(queries, keys, values, keys_hidden, divisor=math.sqrt(keys.shape[1])),  # (B, L, d) keys
    }


def module_mistakes(layers, q, k, v, mask, attn_mask=None):
    """(out, weights) of common wrong versions of PaddedSelfAttention on (q, k, v), with the weights of
    `layers` (anything with W_q, W_k, W_v, W_out: the student's own, or a reference module)."""
    with torch.no_grad():
        queries, keys, values = layers.W_q(q), layers.W_k(k), layers.W_v(v)
        keys_hidden, queries_hidden = mask[:, None, :], mask[:, :, None]
        other = torch.zeros_like(keys_hidden) if attn_mask is None else attn_mask
        hidden = other | keys_hidden
        wrong = {NO_SCALING: attend(queries, keys, values, hidden, scale=False),
                 QUERY_SIDE: attend(queries, keys, values, other | queries_hidden),
                 NO_PADDING: attend(queries, keys, values, other | torch.zeros_like(keys_hidden))}
        if attn_mask is not None:
            wrong[ATTN_IGNORED] = attend(queries, keys, values, keys_hidden)
            wrong[ATTN_INVERTED] = attend(queries, keys, values, ~attn_mask | keys_hidden)
        wrong = {description: (layers.W_out(out), weights) for description, (out, weights) in wrong.items()}
        wrong[NO_W_OUT] = attend(queries, keys, values, hidden)
        # an input fed to the wrong projection: only distinct q, k, v tell these apart
        for description, inputs in ((QK_SWAPPED, (k, q, v)), (KV_SWAPPED, (q, v, k)), (ALL_FROM_Q, (q, q, q)),
                                    (KEYS_FROM_Q, (q, q, v))):
            projected = layers.W_q(inputs[0]), layers.W_k(inputs[1]), layers.W_v(inputs[2])
            out, weights = attend(*projected, hidden)
            wrong[description] = (layers.W_out(out), weights)
    return wrong


def expect_pair_close(got, expected, what, mistakes, device):
    """The student's (out, weights) against the expected pair: the weights first, they say more. A mistake is
    named by the weights only where its output is the student's too: two mistakes can give the same weights
    (the keys from q, and every projection from q) and differ in the output (the values from v, or from q)."""
    out, weights = pair(got, what)
    agree = {description: wrong for description, wrong in mistakes.items()
             if not isinstance(out, torch.Tensor) or close(out, wrong[0], device)}
    expect_close(weights, expected[1], _f("{what}: the weights", what=what), device=device,
                 mistakes={description: wrong[1] for description, wrong in agree.items()})
    expect_close(out, expected[0], _f("{what}: the output", what=what), device=device,
                 mistakes={description: wrong[0] for description, wrong in mistakes.items()})


def largest(values):
    """The largest magnitude among `values` (NaN counts as infinite), 0 for none."""
    return values.double().abs().nan_to_num(nan=math.inf).max().item() if values.numel() else 0.0


# ---------------------------------------------------------------- visible: key_padding_mask (2 points)

@check(0.75, "key_padding_mask([4, 3, 2], 4) gives the documented mask", documented=True, cell="key_padding_mask")
def test_key_padding_mask_documented(student):
    got = student.call("key_padding_mask", [4, 3, 2], 4)
    # other lengths: a written-out answer gives itself away
    expect_not_hard_coded("key_padding_mask", (got, student.call("key_padding_mask", [1, 4, 3], 4)),
                          (DOC_MASK, padded_positions(4, [1, 4, 3])))
    expect_close(got, DOC_MASK, "key_padding_mask([4, 3, 2], 4)",
                 mistakes={INVERTED: ~DOC_MASK, OFF_BY_ONE: torch.arange(4)[None, :] > torch.tensor([[4], [3], [2]])},
                 heatmap_labels=True, show_passing=True)  # the documented mask, shown passing or not


@check(0.5, "key_padding_mask: (B, max_len) bool, True at padding, from a list or a tensor", visible=True, cell="key_padding_mask")
def test_key_padding_mask(student):
    for seq_lens, max_len in (([5, 1, 3], 6), (torch.tensor([2, 7, 7, 4]), 7)):
        expected = padded_positions(max_len, seq_lens)
        shown = seq_lens.tolist() if isinstance(seq_lens, torch.Tensor) else seq_lens
        template = (N_("key_padding_mask({lengths}, {max_len}) with the lengths as a tensor")
                    if isinstance(seq_lens, torch.Tensor)
                    else N_("key_padding_mask({lengths}, {max_len}) with the lengths as a list"))
        positions = torch.arange(max_len)[None, :]
        lengths = torch.as_tensor(seq_lens)[:, None]
        expect_close(student.call("key_padding_mask", seq_lens, max_len), expected,
                     _f(template, lengths=shown, max_len=max_len),
                     mistakes={INVERTED: ~expected,
                               OFF_BY_ONE: positions > lengths,
                               N_("the mask transposed, (max_len, B) instead of (B, max_len)"): expected.T},
                     hint=N_("Masks are bool and True means hidden (here: padding): positions >= lengths"),
                     heatmap_labels=True)


@check(0.5, "key_padding_mask raises ValueError naming a length < 1 or > max_len", visible=True, cell="key_padding_mask")
def test_key_padding_mask_errors(student):
    """With the lengths as tensors: whether a list is accepted is the other check's business."""
    expect_raises(lambda: student.call("key_padding_mask", torch.tensor([3, 0, 2]), 4), "ValueError",
                  _("key_padding_mask(tensor([3, 0, 2]), 4) (a sentence of length 0)"), naming=(0,))
    expect_raises(lambda: student.call("key_padding_mask", torch.tensor([5, 9, 1]), 6), "ValueError",
                  _("key_padding_mask(tensor([5, 9, 1]), 6) (a length above max_len)"), naming=(9,))


@check(0.25, "key_padding_mask makes its mask on the device of the lengths", visible=True, cell="key_padding_mask")
def test_key_padding_mask_device(student):
    """Only where the mask is made: its values are the other checks' business. The lengths stay on the CPU
    while a tensor made without device= lands on the meta device, as one made on the CPU would sit apart
    from lengths on a GPU."""
    seq_lens = torch.tensor([3, 5, 1])
    advice = _("create the positions on the lengths' device: torch.arange(max_len, device=lengths.device), "
               "so that the mask follows lengths on a GPU")
    if run_where_made(student.run, "key_padding_mask", seq_lens, 5, mistake=KPM_DEVICE, advice=advice) is None:
        return  # it raised for another reason: the checks of the values grade that
    try:
        reply = student.run("key_padding_mask", seq_lens, 5, default_device="meta")
    except StudentFailure as failure:
        if failure.kind not in ("raised", "convention"):
            raise
        raise CheckFailed(_f("key_padding_mask(tensor([3, 5, 1]), 5) fails when the default device is not the "
                             "lengths' device: {error}. Most likely a tensor is made without "
                             "device=: {advice}", error=failure.shortened(300), advice=advice),
                          mistake=KPM_DEVICE) from None
    mixed = "; ".join(reply.mixed_devices[:2])
    expect(not mixed, _f("key_padding_mask mixes devices ({mixed}) when the default device is not the lengths' "
                         "device: {advice}", mixed=mixed, advice=advice), mistake=KPM_DEVICE)


# ---------------------------------------------------------------- visible: mask_padded_scores (1 point)

@check(0.75, "mask_padded_scores hides the padded key columns and keeps the rest", visible=True, cell="mask_padded_scores")
def test_mask_padded_scores(student):
    scores = randn(501, 3, 5, 5, scale=2.0)
    mask = padded_positions(5, [5, 3, 1])
    answer = student.call("mask_padded_scores", scores, mask)
    other = randn(530, 3, 5, 5)  # other scores, the same mask: a written-out answer gives itself away
    expect_not_hard_coded("mask_padded_scores", (answer, student.call("mask_padded_scores", other, mask)),
                          [s.masked_fill(mask[:, None, :], INF) for s in (scores, other)])
    got = hidden_as_inf(answer)
    expect_close(got, scores.masked_fill(mask[:, None, :], INF), _("mask_padded_scores(scores, key_padding_mask) "
                 "(hidden entries below -1e8 are read as -inf)"), device=student.device,
                 mistakes={QUERY_SIDE: scores.masked_fill(mask[:, :, None], INF),
                           INVERTED: scores.masked_fill(~mask[:, None, :], INF),
                           N_("both the padded rows and the padded columns masked"):
                               scores.masked_fill(mask[:, :, None] | mask[:, None, :], INF),
                           ZERO_FILL: scores.masked_fill(mask[:, None, :], 0.0)},
                 hint=N_("Every padded KEY column (key_padding_mask[:, None, :]) must be -inf, every other "
                         "score as it was"))


@check(0.25, "mask_padded_scores leaves its argument unchanged", visible=True, cell="mask_padded_scores")
def test_mask_padded_scores_unchanged(student):
    """Only that the arguments are left as they were: the values are the other check's business."""
    scores, mask = randn(502, 2, 4, 4), padded_positions(4, [2, 4])
    reply = run_unless_raised(student.run, "mask_padded_scores", scores, mask, return_args=True)
    expect_unchanged(reply, [scores, mask], "mask_padded_scores")


# ---------------------------------------------------------------- visible: padded_attention (1.75 points)

SOFTMAX_OVER_QUERIES = N_("softmax over dim 1 (down the queries) instead of the last dim (along the keys): a padded "
                          "key's column is all -inf, and its softmax is NaN")


@check(0.5, "padded_attention: padded key columns get weight 0", visible=True, cell="padded_attention")
def test_padded_attention_hides_padding(student):
    queries, keys, values = randn(506, 2, 6, 3), randn(507, 2, 6, 3), randn(508, 2, 6, 3)
    mask = padded_positions(6, [4, 6])
    other = randn(532, 2, 6, 3)  # other values: a written-out answer gives itself away before its shape is judged
    with student.standing_in(right_masked_scores(queries, keys, mask)):
        out, weights = pair(student.call("padded_attention", queries, keys, values, mask), "padded_attention")
        out_other = pair(student.call("padded_attention", queries, keys, other, mask), "padded_attention")[0]
    expect_not_hard_coded("padded_attention", (out, out_other),
                          [attend(queries, keys, v, mask[:, None, :])[0] for v in (values, other)])
    expect_shape(weights, (2, 6, 6), _("padded_attention's weights"))
    leaked = largest(weights.masked_select(mask[:, None, :].expand(2, 6, 6)))
    # NaN just in the padded columns, and every real column summing to 1 down the queries: the softmax ran down
    # the columns, where a padded key's column is all -inf, not along the rows
    columns = weights.nan_to_num(0.0).sum(dim=-2).masked_select(~mask)
    if math.isinf(leaked) and torch.allclose(columns, torch.ones_like(columns), atol=1e-4):
        raise CheckFailed(_f("padded_attention's weights at padded keys are NaN: this looks like {mistake}",
                             mistake=_(SOFTMAX_OVER_QUERIES)), SOFTMAX_OVER_QUERIES)
    expect(not math.isinf(leaked), _("padded_attention's weights at padded keys are NaN or inf: a row whose "
                                     "every key is hidden gives NaN (is the mask on the keys, mask[:, None, :]?)"))
    expect(leaked <= 1e-6, _f("padded_attention gives weight {leaked:.4g} to a padded key: padded key columns "
                              "must get weight 0 (fill them with -inf before the softmax; is the mask on the keys, "
                              "and True at the padding?)", leaked=leaked))


@check(0.5, "padded_attention: each real query's weights sum to 1", visible=True, cell="padded_attention")
def test_padded_attention_sums_to_one(student):
    """Over the queries at real positions: what a padded query sees is the other checks' business."""
    queries, keys, values = randn(509, 2, 6, 3), randn(510, 2, 6, 3), randn(511, 2, 6, 3)
    mask = padded_positions(6, [4, 6])
    with student.standing_in(right_masked_scores(queries, keys, mask)):
        _out, weights = pair(student.call("padded_attention", queries, keys, values, mask), "padded_attention")
    expect_shape(weights, (2, 6, 6), _("padded_attention's weights"))
    real = ~mask
    expect_sums_to_one(weights[real], (int(real.sum()), 6),
                       _("padded_attention's weights of the real queries (mask before the softmax, not after)"))


@check(0.75, "padded_attention equals softmax(q k^T / sqrt(d), padded keys at -inf) @ v", visible=True, cell="padded_attention")
def test_padded_attention_formula(student):
    queries, keys, values = randn(503, 3, 5, 4, scale=2.0), randn(504, 3, 5, 4), randn(505, 3, 5, 4)
    mask = padded_positions(5, [5, 2, 3])
    other = randn(531, 3, 5, 4)  # other values: a written-out answer gives itself away
    with student.standing_in(right_masked_scores(queries, keys, mask)):
        got, got_other = (student.call("padded_attention", queries, keys, v, mask) for v in (values, other))
    expect_not_hard_coded("padded_attention", (pair(got, "padded_attention")[0], pair(got_other, "padded_attention")[0]),
                          [attend(queries, keys, v, mask[:, None, :])[0] for v in (values, other)])
    expect_pair_close(got, attend(queries, keys, values, mask[:, None, :]),
                      _("padded_attention on (3, 5, 4) inputs with lengths [5, 2, 3]"),
                      padding_mistakes(queries, keys, values, mask), student.device)


# ---------------------------------------------------------------- visible: PaddedSelfAttention (2.75 points)

@check(0.5, "PaddedSelfAttention: parameters W_q, W_k, W_v, W_out created in order", visible=True, cell="PaddedSelfAttention")
def test_padded_self_attention_params(student):
    module = student.new("PaddedSelfAttention", 5, seed=51)
    layers = documented_layers(5, seed=51)  # torch's own layers, created in the documented order
    expect_same_params(module, {f"{name}.weight": getattr(layers, name).weight for name in NAMES},
                       "PaddedSelfAttention(5)", ORDER)


@check(1.5, "PaddedSelfAttention equals nn.MultiheadAttention(D, 1, bias=False) holding its weights", visible=True, cell="PaddedSelfAttention")
def test_matches_multihead_attention(student):
    """Against torch's layer holding the student's own weights: the creation order is the parameter
    check's business."""
    for dim, seq_lens, seed in ((3, [4, 3, 2], 52), (6, [5, 3], 53)):
        x = randn(seed + 500, len(seq_lens), max(seq_lens), dim)
        mask = padded_positions(max(seq_lens), seq_lens)
        module = new_padded(student, dim, seed=seed)
        layers = own_layers(module, dim, seed)
        # self-attention (q = k = v) first, then distinct queries, keys and values: each input has its projection
        q, k, v = x, randn(seed + 510, *x.shape), randn(seed + 520, *x.shape)
        cases = (((x, x, x), "x, x, x"), ((q, k, v), _("q, k, v (three different tensors)")))
        answers = [module(*args, key_padding_mask=mask) for args, _inputs in cases]
        # another x, the same answer: a written-out output gives itself away before its values are compared
        other = randn(seed + 530, *x.shape)
        expect_not_hard_coded(f"PaddedSelfAttention({dim})", [pair(answers[0], "PaddedSelfAttention")[0], pair(
            module(other, other, other, key_padding_mask=mask), "PaddedSelfAttention")[0]],
            [multihead_attention(layers, y, y, y, key_padding_mask=mask)[0] for y in (x, other)])
        for (args, inputs), answer in zip(cases, answers):
            expect_pair_close(answer,
                              multihead_attention(layers, *args, key_padding_mask=mask),
                              _f("PaddedSelfAttention({dim})({inputs}, key_padding_mask) with lengths {lengths}, "
                                 "compared with nn.MultiheadAttention({dim}, 1, bias=False) holding its weights",
                                 dim=dim, inputs=inputs, lengths=seq_lens),
                              module_mistakes(layers, *args, mask), student.device)


@check(0.5, "PaddedSelfAttention: attn_mask of shape (L, L) or (B, L, L) hides the pairs where it is True",
       visible=True, cell="PaddedSelfAttention")
def test_attn_mask(student):
    """Only that the pairs attn_mask hides get weight 0 (no key_padding_mask given): the values are the
    other checks' business."""
    x = randn(512, 3, 5, 4)
    causal = torch.triu(torch.ones(5, 5, dtype=torch.bool), diagonal=1)
    per_item = rand(513, 3, 5, 5) > 0.6
    per_item[:, :, 0] = False  # key 0 is always allowed: no row is hidden entirely
    module = new_padded(student, 4, seed=54)
    for attn_mask, what in ((causal, _("a causal (5, 5) attn_mask")), (per_item, _("a (3, 5, 5) attn_mask"))):
        label = _f("PaddedSelfAttention(4)(x, x, x, attn_mask) with {what}", what=what)
        _out, weights = pair(module(x, x, x, attn_mask=attn_mask), label)
        expect_shape(weights, (3, 5, 5), _f("{what}: the weights", what=label))
        hidden = attn_mask.expand(3, 5, 5)
        leaked = largest(weights[hidden])
        if leaked <= 1e-6:
            continue
        _out, plain = pair(module(x, x, x), _("PaddedSelfAttention(4)(x, x, x) without masks"))
        if close(weights, plain, student.device):
            named = ATTN_IGNORED
        elif largest(weights[~hidden]) <= 1e-6 or math.isinf(largest(weights[~hidden])):
            named = ATTN_INVERTED
        else:
            named = ""
        message = _f("{label}: a pair the mask hides gets weight {leaked:.4g}; attn_mask (True = not "
                     "allowed) must hide those (query, key) pairs: masked_fill(attn_mask, float('-inf')) "
                     "on the scores before the softmax", label=label, leaked=leaked)
        raise CheckFailed(message + (_f(". This looks like {mistake}", mistake=_(named)) if named else ""), named)


@check(0.25, "PaddedSelfAttention: with both masks, a pair is hidden if either mask hides it", visible=True,
       cell="PaddedSelfAttention")
def test_both_masks(student):
    """Both masks at once. Each mask alone is test_attn_mask's and padded_attention's business: passes here."""
    x, padding, causal = randn(537, 3, 5, 4), padded_positions(5, [5, 4, 2]), torch.ones(5, 5).triu(1).bool()
    module, label = new_padded(student, 4, seed=59), _("PaddedSelfAttention(4)(x, x, x, key_padding_mask, attn_mask) "
                                                      "with lengths [5, 4, 2] and a causal (5, 5) attn_mask")
    hides = {ATTN_IGNORED_WITH_PADDING: causal.expand(3, 5, 5),
             PADDING_IGNORED_WITH_ATTN: padding[:, None, :].expand(3, 5, 5)}
    for alone, hidden in zip(({"attn_mask": causal}, {"key_padding_mask": padding}), hides.values()):
        weights = pair(module(x, x, x, **alone), label)[1]
        if tuple(weights.shape) != (3, 5, 5) or largest(weights[hidden]) > 1e-6:
            return  # a mask wrong alone
    weights = pair(module(x, x, x, key_padding_mask=padding, attn_mask=causal), label)[1]
    expect_shape(weights, (3, 5, 5), _f("{what}: the weights", what=label))
    # both masks' own pairs leak while the pairs both hide stay hidden: the masks combined with & (neither ignored)
    by_attn, by_padding = hides.values()
    if largest(weights[by_attn & ~by_padding]) > 1e-6 and largest(weights[by_padding & ~by_attn]) > 1e-6 \
            and largest(weights[by_attn & by_padding]) <= 1e-6:
        hides = {BOTH_REQUIRED: by_attn ^ by_padding}
    for named, hidden in hides.items():
        if largest(weights[hidden]) > 1e-6:
            raise CheckFailed(_f("{label}: a pair that one mask hides gets weight {leaked:.4g}; when both are given, "
                                 "a pair is hidden if either mask hides it. This looks like {mistake}",
                                 label=label, leaked=largest(weights[hidden]), mistake=_(named)), named)


@check(0.5, "PaddedSelfAttention: outputs at real positions ignore the values at padded positions", visible=True, cell="PaddedSelfAttention")
def test_padding_invariance(student):
    x = randn(514, 3, 5, 4)
    mask = padded_positions(5, [5, 2, 4])
    real = ~mask
    changed = torch.where(mask[:, :, None], randn(515, 3, 5, 4, scale=5.0), x)
    other_real = torch.where(real[:, :, None], randn(516, 3, 5, 4), x)
    module = new_padded(student, 4, seed=55)
    before, after, moved = (pair(module(v, v, v, key_padding_mask=mask), "PaddedSelfAttention")[0]
                            for v in (x, changed, other_real))
    for out in (before, after, moved):
        expect_shape(out, (3, 5, 4), _("PaddedSelfAttention's output"))
    expect(not torch.allclose(moved[real], before[real]),
           _("PaddedSelfAttention's outputs stay the same when the real tokens change: is attention computed at all?"))
    expect_close(after[real], before[real], _("the outputs at real positions after the padding changed"),
                 device=student.device,
                 hint=N_("They changed, so padded keys still get weight: hide the padded key columns "
                         "(key_padding_mask[:, None, :]) before the softmax"))


@check(0.25, "PaddedSelfAttention: gradients reach W_q, W_k and W_v", visible=True, cell="PaddedSelfAttention")
def test_gradients(student):
    """Only that the gradients flow back through the attention to the input projections: their values
    follow from the forward, and whether W_out is applied is the output check's business."""
    x = randn(517, 2, 4, 3)
    mask = padded_positions(4, [4, 2])
    grad_output = randn(518, 2, 4, 3)
    module = new_padded(student, 3, seed=56)
    params = module.params()  # which ones it should have is the parameter check's business
    names = [name for name in (params if isinstance(params, dict) else {}) if not name.startswith("W_out.")]
    reply = module.run(x, x, x, key_padding_mask=mask, mode="train", backward=grad_output)
    out = reply.value[0] if isinstance(reply.value, (tuple, list)) and reply.value else reply.value
    expect_gradients(reply, names, "PaddedSelfAttention(3)", out=out)
