"""Checks of section 06: split into heads, attend, rebuild (10 points).

The section's registry entry (SECTION) and its visible checks: the documented layout of split_heads and the
documented seeded outputs of both modules, and the properties that need no reference (the ValueErrors;
combine_heads undoing the documented layout, on any memory layout; the wrapper's heads and
MultiHeadAttention's parameters created in the documented order, qkv_bias (and the wrapper's dropout)
honoured; MultiHeadAttention equal to nn.MultiheadAttention run with the student's own weights; causality;
padded keys hidden; batch items kept apart; dropout off in eval mode and on in train mode; gradients reaching
every parameter; no Python loop over heads; no tensor made on the CPU in forward). The self-check runs them
and the students' wheel ships this module as it is, so nothing here imports `solutions` or holds a hidden
seed's expected output. Each property check judges one idea, against the student's own module (or torch's
built-ins run with its weights) where it needs a comparison, so that a wrong value costs the value checks
only. The property checks of MultiHeadAttention use head_dim = 1 where they can: a bare .view of the
transposed context works there, so that mistake costs the value checks (which name it), not every property.
The hidden checks, which the grader runs after these, compare with the reference solutions on fresh inputs:
they are in checks/hidden/hidden_06_multihead.py.
"""

SECTION = {  # the registry's entry (autograder/core/sections.py reads it without importing this file)
    "title": "Split into heads, attend, rebuild",
    "solution": "solutions.multihead",
    "names": ("split_heads", "combine_heads", "MultiHeadAttentionWrapper", "MultiHeadAttention"),
    "forbidden": "attention",
    "forbidden_in": ("MultiHeadAttentionWrapper", "MultiHeadAttention"),
    "provided": ("solutions.causal_mask:CausalAttention",),
    "uses_meta": True,
    "rules": {"unchanged": ("split_heads",), "no_loop": ("MultiHeadAttention",),
              "param_order": ("MultiHeadAttentionWrapper", "MultiHeadAttention"), "device": ("MultiHeadAttention",),
              "mask_true_hidden": ("MultiHeadAttention",)},
}

from functools import partial

import torch

from autograder.checks.common import (CPU_MADE_MASK, TOKENS, TRAIN_ONLY_NAN, WORKED_BATCH, expect_forward_on_any_device,
                                      expect_gradients, expect_no_loop, expect_not_hard_coded, expect_output,
                                      expect_raises, manual_seed, randn, run_unless_raised)
from autograder.checks.parameters import (expect_same_params, weights_differ)
from autograder.checks.multihead_forward import (BARE_SPLIT_IN_FORWARD, NAMES, attend, bare_split_output,
                                                 causal_torch_output, fill_of, mha_mistakes, mixed_heads_mistakes,
                                                 own_layers, wrapper_output)
from autograder.checks.multihead_stand_ins import new_mha
from autograder.checks.multihead_mistakes import (BARE_SPLIT, CONTEXT_DROPOUT, EVAL_DROPOUT, FUTURE_LEAKS, HEAD_ROWS,
                                                  INVERSE_HINT, MHA_ORDER, NO_MASK_LEAK, NO_SPLIT_SWAP, NO_SWAP_BACK,
                                                  NO_TRAIN_DROPOUT, NO_WRAPPER_BIAS, NO_WRAPPER_DROPOUT, QKV_IGNORED,
                                                  STRIDED_HEADS, TOKEN_DIM, WRAPPER_ORDER, head_columns, head_rows)
from autograder.core.harness import (CheckFailed, check, close, differs_from_mistakes, expect, expect_close,
                                     expect_shape)
from autograder.i18n import N_, _, _f

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
# ---------------------------------------------------------------- visible: documented values (2 points)

def expect_transposed_split(student) -> None:
    """On the documented input T = H, so a split left as (B, T, H, hd) has the documented shape and the values of
    a bare view to (B, H, T, hd): a call with T != H tells the two apart, and names the one it is."""
    wide = torch.arange(1, 49).reshape(2, 3, 8)
    got = student.call("split_heads", wide, 2)
    left = wide.reshape(2, 3, 2, 4)
    expect(not close(got, left),
           # the title quotes the documented input, where T = H: say why this line calls with another
           _f("{call}, where T = {tokens} differs from H = {heads} (in the documented arange(1, 33), T = H): got "
              "shape {got}: this looks like {mistake}; split_heads returns (B, H, T, hd)",
              call="split_heads(torch.arange(1, 49).reshape(2, 3, 8), 2)", tokens=wide.shape[1], heads=2,
              got=tuple(left.shape), mistake=_(NO_SPLIT_SWAP)), mistake=NO_SPLIT_SWAP)


@check(0.5, "split_heads gives the documented layout of arange(1, 33)", documented=True, cell="split_heads")
def test_split_heads_documented(student):
    x, other = torch.arange(1, 33).reshape(2, 2, 8), torch.arange(33, 65).reshape(2, 2, 8)
    got = student.call("split_heads", x, 2)  # and on other values: a written-out answer gives itself away
    expect_not_hard_coded("split_heads", (got, student.call("split_heads", other, 2)),
                          [v.reshape(2, 2, 2, 4).transpose(1, 2) for v in (x, other)])
    expect_transposed_split(student)
    expect_close(got, DOC_SPLIT.reshape(2, 2, 2, 4),
                 "split_heads(torch.arange(1, 33).reshape(2, 2, 8), 2)", atol=1e-4,
                 mistakes={BARE_SPLIT: x.reshape(2, 2, 2, 4), STRIDED_HEADS: x.reshape(2, 2, 4, 2).permute(0, 3, 1, 2)},
                 heatmap_labels=(head_rows(2, 2), None),
                 heatmap_view=HEAD_ROWS, show_passing=True)


@check(0.75, "MultiHeadAttentionWrapper gives the documented seeded output", documented=True, cell="MultiHeadAttentionWrapper")
def test_wrapper_documented(student):
    module = student.new("MultiHeadAttentionWrapper", 3, 2, 6, 0.0, num_heads=2, seed=123)
    got, other = module(WORKED_BATCH), randn(170, 2, 6, 3)  # other inputs: a written-out answer gives itself away
    expect_not_hard_coded("MultiHeadAttentionWrapper", (got, module(other)),
                          [wrapper_output(x, 3, 2, 2, seed=123) for x in (WORKED_BATCH, other)])
    expect_close(got, DOC_WRAPPER.expand(2, 6, 4),
                 "torch.manual_seed(123); MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=2)(batch)", atol=1e-4,
                 mistakes={TOKEN_DIM: wrapper_output(WORKED_BATCH, 3, 2, 2, seed=123, dim=1),
                           ONE_HEAD_REPEATED: wrapper_output(WORKED_BATCH, 3, 2, 1, seed=123).repeat(1, 1, 2)},
                 heatmap_labels=(TOKENS, head_columns(2, 2)))


# [CausalAttention(...)] * num_heads: one module in every place, so every block of the output is the first head's
ONE_HEAD_REPEATED = N_("one head repeated num_heads times: [CausalAttention(...)] * num_heads puts the same module in "
                       "every place; create each head anew, [CausalAttention(...) for _ in range(num_heads)]")


@check(0.75, "MultiHeadAttention gives the documented seeded output", documented=True, cell="MultiHeadAttention")
def test_mha_documented(student):
    module = new_mha(student, 3, 2, 6, 0.0, num_heads=2, seed=123)
    got, own = module(WORKED_BATCH), own_layers(module.params(), 3, 2, 2)
    if own is not None:  # other inputs, with its own weights: a written-out answer gives itself away
        other = randn(169, 2, 6, 3)
        expect_not_hard_coded("MultiHeadAttention", (got, module(other)), [attend(own, x) for x in (WORKED_BATCH, other)])
    mistakes = {BARE_SPLIT_IN_FORWARD: bare_split_output(WORKED_BATCH, 3, 2, 2, seed=123)}
    if own is not None:  # the right forward with its own weights first (then the weights differ: head_dim is 1
        # here, so an unscaled forward gives the same), then the common wrong ones
        # an out_proj without its bias (own_layers reads it as zero) is right with its own weights too: not an order
        params = module.params()
        mistakes.update({weights_differ(params): attend(own, WORKED_BATCH), **mha_mistakes(own, WORKED_BATCH, got)})
    expect_close(got, DOC_MHA.expand(2, 6, 2),
                 "torch.manual_seed(123); MultiHeadAttention(3, 2, 6, 0.0, num_heads=2)(batch)", atol=1e-4,
                 mistakes=mistakes,
                 heatmap_labels=(TOKENS, None), show_passing=True)


# ---------------------------------------------------------------- visible: split_heads / combine_heads (1 point)

@check(0.25, "split_heads raises ValueError when D is not divisible by num_heads", visible=True, cell="split_heads")
def test_split_heads_error(student):
    x = randn(602, 2, 3, 10)
    expect_raises(lambda: student.call("split_heads", x, 3), "ValueError", _("split_heads(x, 3) with D = 10"))


@check(0.5, "combine_heads undoes the documented split: (B, H, T, hd) back to (B, T, H*hd)", visible=True, cell="combine_heads")
def test_combine_inverse(student):
    """Against the documented layout, made here: split_heads' own values are another check's business."""
    x = randn(603, 2, 7, 12)
    heads = x.view(2, 7, 3, 4).transpose(1, 2).contiguous()  # the documented layout, as the title writes it
    # heads travel in the non-contiguous memory layout split_heads' transpose gives them (a bare
    # view after the transpose works there; the next check is the one about contiguous heads)
    back = student.run("combine_heads", heads, noncontiguous=True).value
    other = randn(606, 2, 7, 12)  # other heads of the same shape: a written-out answer gives itself away
    other_heads = other.view(2, 7, 3, 4).transpose(1, 2).contiguous()
    expect_not_hard_coded("combine_heads", (back, student.run("combine_heads", other_heads, noncontiguous=True).value),
                          (x, other))
    expect_close(back, x, _("combine_heads(x.view(2, 7, 3, 4).transpose(1, 2)) for x of shape (2, 7, 12)"),
                 mistakes={NO_SWAP_BACK: heads.reshape(2, 7, 12)}, hint=INVERSE_HINT, device=student.device,
                 heatmap_labels=(None, head_columns(3, 4)))


@check(0.25, "combine_heads works on a contiguous (B, H, T, hd) tensor such as attention output", visible=True, cell="combine_heads")
def test_combine_contiguous(student):
    """That the memory layout does not matter: the values themselves are the previous check's business."""
    y = randn(605, 3, 2, 6, 4)
    got = student.call("combine_heads", y)  # a bare .view raises here: its hint comes with the error
    expect_shape(got, (3, 6, 8), _("combine_heads on a contiguous (3, 2, 6, 4) input"))
    laid_out = run_unless_raised(student.run, "combine_heads", y, noncontiguous=True)
    if laid_out is not None:
        expect_close(got, laid_out.value, _("combine_heads on a contiguous (3, 2, 6, 4) input, compared with its "
                                            "output for the same values laid out as split_heads' transpose leaves them"),
                     device=student.device, hint=N_("The result must not depend on the memory layout"))


# ---------------------------------------------------------------- visible: parameters (1 point)

@check(0.25, "MultiHeadAttentionWrapper creates its heads in order, passing qkv_bias and dropout on", visible=True, cell="MultiHeadAttentionWrapper")
def test_wrapper_params(student):
    """Which arguments reach the heads: the parameters they create, and whether their dropout acts
    in train mode (the values of the output are the value checks' business)."""
    module = student.new("MultiHeadAttentionWrapper", 4, 3, 7, 0.0, num_heads=2, qkv_bias=True, seed=61)
    what = "MultiHeadAttentionWrapper(4, 3, 7, 0.0, num_heads=2, qkv_bias=True)"
    got = module.params()
    got = got if isinstance(got, dict) else {}
    manual_seed(61)  # each CausalAttention creates W_query, W_key, W_value; its Dropout draws nothing
    expected = {}
    for head in range(2):
        for name in NAMES:
            layer = torch.nn.Linear(4, 3, bias=True)
            expected[f"heads.{head}.{name}.weight"], expected[f"heads.{head}.{name}.bias"] = layer.weight, layer.bias
    missing = [name for name in expected if name.endswith(".bias") and name not in got]
    expect(not (missing and all(name.replace(".bias", ".weight") in got for name in missing)),
           _f("{what} has no {name}: this looks like {mistake}; "
              "pass qkv_bias to each CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)",
              what=what, name=missing[0] if missing else '', mistake=_(NO_WRAPPER_BIAS)),
           mistake=NO_WRAPPER_BIAS)
    expect_same_params(module, expected, what, _(WRAPPER_ORDER))
    x = randn(613, 2, 5, 4)
    module = student.new("MultiHeadAttentionWrapper", 4, 3, 7, 0.5, num_heads=2, seed=62)
    train = run_unless_raised(module.run, x, mode="train", seed=3)
    evaluated = run_unless_raised(module.run, x, mode="eval")
    if train is None or evaluated is None:
        return  # the forward raised: the value checks grade that
    out = evaluated.value
    if isinstance(out, torch.Tensor) and out.dim() and out.shape[0] == 2 and close(out[0], out[1]):
        return  # both batch items get one output: not computed by the heads, which the value checks say
    expect(not close(train.value, evaluated.value),
           _f("MultiHeadAttentionWrapper(4, 3, 7, dropout=0.5, num_heads=2) gives the same output in train mode as "
              "in eval mode: this looks like {mistake}; pass dropout to each CausalAttention(d_in, d_out, "
              "context_length, dropout, qkv_bias)", mistake=_(NO_WRAPPER_DROPOUT)), mistake=NO_WRAPPER_DROPOUT)


@check(0.25, "MultiHeadAttention creates its parameters in the documented order", visible=True, cell="MultiHeadAttention")
def test_mha_params(student):
    module = new_mha(student, 5, 6, 8, 0.1, num_heads=3, seed=72)
    manual_seed(72)  # the documented creation order, with torch's own layers (the Dropout draws nothing)
    layers = [torch.nn.Linear(5, 6, bias=False) for _ in NAMES] + [torch.nn.Linear(6, 6)]
    expected = {f"{name}.{kind}": getattr(layer, kind) for name, layer in zip(NAMES + ("out_proj",), layers)
                for kind in ("weight", "bias") if getattr(layer, kind) is not None}
    expect_same_params(module, expected, "MultiHeadAttention(5, 6, 8, 0.1, num_heads=3)", _(MHA_ORDER))


@check(0.25, "MultiHeadAttention honours qkv_bias: W_query, W_key, W_value get a bias only with qkv_bias=True",
       visible=True, cell="MultiHeadAttention")
def test_mha_qkv_bias(student):
    """Only which biases exist: their values are the order check's business, their use the value checks'."""
    for qkv_bias in (True, False):
        what = f"MultiHeadAttention(5, 6, 8, 0.0, num_heads=3, qkv_bias={qkv_bias})"
        params = new_mha(student, 5, 6, 8, 0.0, num_heads=3, qkv_bias=qkv_bias, seed=73).params()
        params = params if isinstance(params, dict) else {}
        for name in NAMES:
            has = isinstance(params.get(f"{name}.bias"), torch.Tensor)
            expect(has or not qkv_bias, _f("{what} has no {name}.bias: this looks like {mistake}; pass bias=qkv_bias "
                                           "to each of the three nn.Linear", what=what, name=name, mistake=_(QKV_IGNORED)),
                   mistake=QKV_IGNORED)
            expect(not has or qkv_bias, _f("{what} has a {name}.bias: with qkv_bias=False the three projections "
                                           "have no bias (pass bias=qkv_bias to nn.Linear)", what=what, name=name))


@check(0.25, "MultiHeadAttention raises ValueError when d_out is not divisible by num_heads", visible=True, cell="MultiHeadAttention")
def test_mha_error(student):
    expect_raises(lambda: student.new("MultiHeadAttention", 4, 10, 6, 0.0, num_heads=4, seed=73),
                  "ValueError", "MultiHeadAttention(4, 10, 6, 0.0, num_heads=4), d_out = 10")


# ---------------------------------------------------------------- visible: MultiHeadAttention's forward (4.25 points)

@check(0.5, "MultiHeadAttention equals nn.MultiheadAttention run with its own weights", visible=True, cell="MultiHeadAttention")
def test_mha_equals_torch(student):
    """The whole forward pass, with the student's own weights (whatever their creation order)."""
    x = randn(631, 2, 6, 8)
    module = new_mha(student, 8, 8, 6, 0.0, num_heads=2, qkv_bias=True, seed=91)
    own = own_layers(module.params(), 8, 8, 2)
    expect(own is not None, _f("MultiHeadAttention(8, 8, 6, 0.0, num_heads=2, qkv_bias=True) should have the parameters "
                               "of {order}, named so, to be compared with nn.MultiheadAttention", order=_(MHA_ORDER)))
    got = module(x)
    expect_close(got, causal_torch_output(own, x),
                 _("MultiHeadAttention(8, 8, 6, 0.0, num_heads=2, qkv_bias=True)(x), compared with "
                   "nn.MultiheadAttention(8, 2, batch_first=True) holding its weights, under a causal attn_mask"),
                 mistakes=mha_mistakes(own, x, got), device=student.device, heatmap_labels=True)


@check(0.5, "causality: changing later tokens leaves earlier outputs unchanged", visible=True,
       cell="MultiHeadAttention")
def test_mha_causal(student):
    x = randn(651, 2, 8, 4)
    changed = x.clone()
    changed[1, 5:] = randn(652, 3, 4, scale=3.0)  # in the last item only: batch items are another check's business
    module = new_mha(student, 4, 3, 8, 0.0, num_heads=3, seed=111)
    before, after = module(x), module(changed)
    for out in (before, after):
        expect_output(out, (2, 8, 3), _("MultiHeadAttention(4, 3, 8, 0.0, num_heads=3) on a (2, 8, 4) input"))
    own = own_layers(module.params(), 4, 3, 3)
    # heads mixed up leak the future too, though the mask is right: named by what such a forward gives
    mixed = {} if own is None else {name: out[:, :5] for name, out in mixed_heads_mistakes(own, changed).items()}
    expect_close(after[:, :5], before[:, :5], _("the outputs of tokens 0-4 after tokens 5-7 changed"),
                 mistakes=mixed, device=student.device, heatmap_labels=True,
                 heatmap_view=(lambda out: out[1], _("batch item 1, whose tokens 5-7 changed")),
                 hint=leak_hint(module, x, before))
    expect(not close(after[1, 5:], before[1, 5:]),
           _("the outputs of tokens 5-7 did not change when those tokens changed: the output must depend on them"))


def leak_hint(module, x, before) -> str:
    """What to say when the future leaks: the question "no causal mask?" only where the module's own weights
    without a mask give its outputs (an inverted mask, or heads mixed up, leak too, and have a mask)."""
    own = own_layers(module.params(), x.shape[-1], before.shape[-1], 3)
    unmasked = own is not None and close(before, attend(own, x, causal=False))
    return NO_MASK_LEAK if unmasked else FUTURE_LEAKS


@check(0.5, "key_padding_mask hides padded keys on top of the causal mask", visible=True,
       cell="MultiHeadAttention")
def test_mha_padding(student):
    x = randn(641, 3, 6, 4)
    padding = torch.zeros(3, 6, dtype=torch.bool)
    padding[1, 4:] = True  # a sequence of 4 tokens padded to 6
    padding[2, [1, 4]] = True  # hidden keys between real ones: later queries must not see them either
    module = new_mha(student, 4, 2, 6, 0.0, num_heads=2, seed=101)
    what = "MultiHeadAttention(4, 2, 6, 0.0, num_heads=2)(x, key_padding_mask=mask)"
    got = module(x, key_padding_mask=padding)
    expect_output(got, (3, 6, 2), what)

    def mistakes():
        own = own_layers(module.params(), 4, 2, 2)
        if own is None:
            return {}
        fill = fill_of(got)
        return {
            N_("the padding mask inverted (True must mean hidden, False a real token)"):
                attend(own, x, padding=(padding, "inverted"), fill=fill),
            N_("the key_padding_mask ignored"): attend(own, x, fill=fill),
            N_("padding hidden on the query side (mask[:, None, :, None]) instead of the keys"):
                attend(own, x, padding=(padding, "queries"), fill=fill),
            N_("the key_padding_mask applied without the causal mask"):
                attend(own, x, padding=(padding, "instead"), fill=fill),
        }

    def fail(message):
        named = differs_from_mistakes(got, mistakes(), student.device)
        raise CheckFailed(_f("{message}. This looks like {mistake}", message=message, mistake=_(named)) if named else
                          _f("{message}. Hide key j for every query where mask[b, j] is True: "
                             "mask[:, None, None, :], combined (|) with the causal mask", message=message), named or "")

    # where the module is not causal without a mask (the causality check's business), or mixes tokens up,
    # which token a key belongs to is not clear: padding cannot be judged
    later = x.clone()
    later[2, 5] = randn(643, 4, scale=3.0)  # the last item's last token: batch items are another check's business
    unmasked = module(x)
    expect_output(unmasked, (3, 6, 2), "MultiHeadAttention(4, 2, 6, 0.0, num_heads=2)(x)")
    if not close(module(later)[:, :5], unmasked[:, :5], student.device):
        return
    # 1. a hidden key's token changes no output but its own
    changed = x.clone()
    changed[padding] = randn(642, int(padding.sum()), 4, scale=3.0)
    after = module(changed, key_padding_mask=padding)
    expect_output(after, (3, 6, 2), what)
    if not close(after[~padding], got[~padding], student.device):
        fail(_f("{what}: changing the tokens at hidden (True) positions changed the outputs of the other tokens", what=what))
    # 2. the causal mask still applies with a key_padding_mask, as it does without one
    after = module(later, key_padding_mask=padding)
    expect_output(after, (3, 6, 2), what)
    if not close(after[:, :5], got[:, :5], student.device):
        fail(_f("{what}: changing token 5 changed the outputs of tokens 0-4", what=what))


@check(0.25, "MultiHeadAttention keeps batch items independent", visible=True, cell="MultiHeadAttention")
def test_mha_batch(student):
    x = randn(711, 3, 6, 4)
    changed = x.clone()
    changed[0] = randn(712, 6, 4, scale=3.0)
    module = new_mha(student, 4, 2, 6, 0.0, num_heads=2, seed=171)
    before, after = module(x), module(changed)
    for out in (before, after):
        expect_output(out, (3, 6, 2), _("MultiHeadAttention(4, 2, 6, 0.0, num_heads=2) on a (3, 6, 4) batch"))
    expect_close(after[1:], before[1:], _("the outputs of batch items 1 and 2 after item 0 changed"),
                 device=student.device, heatmap_labels=True,
                 hint=N_("Each sequence must attend only within itself: keep the batch dim apart "
                         "(scores of shape (B, H, T, T))"))


@check(0.5, "eval mode disables dropout", visible=True,
       cell="MultiHeadAttention")
def test_mha_eval(student):
    """Against the student's own module built with dropout=0.0 under the same seed (the same weights):
    in eval mode the output must not depend on the dropout rate, whatever the forward computes."""
    x = randn(661, 2, 6, 4)
    module = new_mha(student, 4, 2, 6, 0.5, num_heads=2, seed=121)
    without = new_mha(student, 4, 2, 6, 0.0, num_heads=2, seed=121)  # the same weights
    expected = without(x, mode="eval")
    expect_output(expected, (2, 6, 2), _("MultiHeadAttention(4, 2, 6, 0.0, num_heads=2) in eval mode"))
    for seed in (5, 6):
        expect_close(module(x, mode="eval", seed=seed), expected,
                     _("MultiHeadAttention(4, 2, 6, dropout=0.5) in eval mode, compared with the same module "
                       "built with dropout=0.0"), device=student.device, heatmap_labels=True,
                     hint=_f("In eval mode the output must not depend on the dropout rate: {advice}?", advice=_(EVAL_DROPOUT)))


@check(0.25, "dropout acts in train mode: the output differs from eval mode", visible=True,
       cell="MultiHeadAttention")
def test_mha_train(student):
    """Only that dropout acts in train mode: how is the hidden check's business."""
    x = randn(671, 2, 6, 4)
    module = new_mha(student, 4, 2, 6, 0.5, num_heads=2, seed=131)
    what = _("MultiHeadAttention(4, 2, 6, dropout=0.5) in train mode, after torch.manual_seed(6)")
    got = module(x, mode="train", seed=6)
    expect_shape(got, (2, 6, 2), what)
    eval_out = module(x, mode="eval")
    expect_shape(eval_out, (2, 6, 2), _("MultiHeadAttention(4, 2, 6, dropout=0.5) in eval mode"))
    if close(got, eval_out):  # an output that ignores its input says so, not that dropout is missing
        other = randn(673, 2, 6, 4)  # the right outputs differ as the inputs do (random inputs and weights)
        expect_not_hard_coded("MultiHeadAttention", (eval_out, module(other, mode="eval")), (x, other))
    expect(not close(got, eval_out), _f("{what}: the output equals the eval-mode output. This looks like "
                                        "{mistake}", what=what, mistake=_(NO_TRAIN_DROPOUT)),
           mistake=NO_TRAIN_DROPOUT)


@check(0.25, "in train mode, dropout on the attention weights as nn.Dropout does", visible=True,
       cell="MultiHeadAttention")
def test_mha_train_like_dropout(student):
    """How dropout is applied, against the module's own weights: where it is applied at all (the previous
    check) and where the forward without dropout is right (the value checks) only."""
    x = randn(672, 2, 6, 4)
    module = new_mha(student, 4, 2, 6, 0.5, num_heads=2, seed=132)
    what = _("MultiHeadAttention(4, 2, 6, dropout=0.5) in train mode, after torch.manual_seed(6)")
    got = module(x, mode="train", seed=6)
    expect_shape(got, (2, 6, 2), what)
    eval_out = module(x, mode="eval")
    device = "cpu" if student.device == "meta" else student.device  # dropout masks depend on the device
    own = own_layers(module.params(), 4, 2, 2, device=device)
    if own is None or close(got, eval_out) or not close(eval_out, attend(own, x.to(device)).cpu(), student.device):
        return
    dropout = partial(torch.nn.functional.dropout, p=0.5)
    torch.manual_seed(6)
    expected = attend(own, x.to(device), weights_dropout=dropout).cpu()
    torch.manual_seed(6)
    on_context = attend(own, x.to(device), context_dropout=dropout).cpu()
    expect_close(got, expected, what, device=student.device, mistakes={CONTEXT_DROPOUT: on_context},
                 hint=N_("Apply self.dropout once, to the (B, H, T, T) attention weights after the softmax"),
                 nan_note=TRAIN_ONLY_NAN)


@check(0.5, "gradients reach every parameter, out_proj included", visible=True,
       cell="MultiHeadAttention")
def test_mha_gradients(student):
    """Only that the gradients flow: their values follow from the forward, which other checks grade."""
    x = randn(681, 2, 5, 4)
    grad_output = randn(682, 2, 5, 2)
    module = new_mha(student, 4, 2, 6, 0.0, num_heads=2, qkv_bias=True, seed=141)
    params = module.params()  # which ones it should have is the parameter checks' business
    reply = module.run(x, mode="train", backward=grad_output)
    expect_gradients(reply, list(params or {}), "MultiHeadAttention(4, 2, 6, 0.0, num_heads=2, qkv_bias=True)",
                     unused=_("is it used in forward? out_proj must be applied to the combined heads"))


@check(0.5, "MultiHeadAttention computes all heads together, with no Python loop over heads", visible=True, cell="MultiHeadAttention")
def test_mha_no_loop(student):
    x = randn(691, 2, 5, 4)
    counts = {}
    for heads in (2, 4):
        module = new_mha(student, 4, heads, 6, 0.0, num_heads=heads, seed=151)
        reply = module.run(x, count_ops=True)
        expect_output(reply.value, (2, 5, heads), f"MultiHeadAttention(4, {heads}, 6, 0.0, num_heads={heads})")
        counts[heads] = reply.ops
    expect_no_loop(counts, "MultiHeadAttention", N_("heads"))


@check(0.5, "MultiHeadAttention works on any device: no tensor created on the CPU in forward", visible=True, cell="MultiHeadAttention")
def test_mha_device(student):
    x = randn(701, 2, 5, 4)
    padding = torch.zeros(2, 5, dtype=torch.bool)
    padding[1, 3:] = True
    module = new_mha(student, 4, 2, 6, 0.0, num_heads=2, seed=161)
    expect_output(module(x), (2, 5, 2), "MultiHeadAttention(4, 2, 6, 0.0, num_heads=2)")
    expect_forward_on_any_device(module, x, "MultiHeadAttention", (2, 5, 2), _(CPU_MADE_MASK),
                                 calls=({}, {"key_padding_mask": padding}))
