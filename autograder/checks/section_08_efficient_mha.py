"""Checks of section 08 (part 2): efficient multi-head attention (10 points).

The section's registry entry (SECTION) and its visible checks: the documented seeded outputs (the fused layer
and the SDPA layer built under torch.manual_seed(123) draw the weights of notebook 06's MultiHeadAttention, so
both give its documented output; a fused layer loaded from a MultiHeadAttention with biases gives that one's),
then the properties that need no reference: the parameters W_qkv and out_proj in the documented order, qkv_bias
honoured, the ValueError; each layer equal to nn.MultiheadAttention holding its own weights (W_qkv is its
in_proj_weight, queries, keys, values in blocks); causality; dropout off in eval mode and on in train mode (the
SDPA layer's as F.scaled_dot_product_attention draws it); gradients reaching every parameter; load_from copying
a MultiHeadAttention's three projections in the block order into the layer's own parameters; the SDPA layer
calling F.scaled_dot_product_attention. A load_from check hands the student's layer a MultiHeadAttention built
from documented parameters alone (a stand-in), so nothing of the student's other classes is graded there.
The self-check runs them and the students' wheel ships this module as it is, so nothing here imports
`solutions`. The hidden checks compare with the reference on fresh sizes: checks/hidden/hidden_08_efficient_mha.py.
"""

SECTION = {  # the registry's entry (autograder/core/sections.py reads it without importing this file)
    "title": "Efficient multi-head attention",
    "solution": "solutions.efficient_mha",
    "names": ("MultiHeadAttentionFused", "MultiHeadAttentionSDPA"),
    "forbidden": "attention",
    "forbidden_in": ("MultiHeadAttentionFused",),
    "provided": ("solutions.multihead:MultiHeadAttention",),
    "part": 2,
    "uses_meta": True,
    "rules": {"param_order": ("MultiHeadAttentionFused", "MultiHeadAttentionSDPA"),
              "device": ("MultiHeadAttentionFused",)},
}

import ast
import textwrap

import torch

from autograder.checks.common import (CPU_MADE_MASK, TOKENS, WORKED_BATCH, expect_dropout_acts,
                                      expect_forward_on_any_device, expect_gradients, expect_not_hard_coded,
                                      expect_output, expect_raises, manual_seed, randn, run_unless_raised)
from autograder.checks.parameters import (expect_param_shape, expect_same_params, weights_differ)
from autograder.checks.fused_forward import (LOADED_NO_BIAS, LOADED_NO_OUT_PROJ, LOADED_ORDER, MISTAKES_OF, ORDER,
                                             as_mha, blocks, built_layers, load_mistakes, seeded_mha)
from autograder.checks.multihead_forward import NAMES, attend, causal_torch_output
from autograder.checks.multihead_mistakes import EVAL_DROPOUT, NO_TRAIN_DROPOUT
from autograder.core.harness import CheckFailed, StudentFailure, check, close, expect, expect_close, expect_shape
from autograder.i18n import N_, _, _f

# notebook 06's documented output: W_qkv = Linear(3, 6) draws, under one seed, the numbers that W_query, W_key,
# W_value = Linear(3, 2) each draw in turn (same fan-in, no bias), so the fused and SDPA layers give it too
DOC_SEEDED = torch.tensor(
    [[0.3190, 0.4858], [0.2943, 0.3897], [0.2856, 0.3593],
     [0.2693, 0.3873], [0.2639, 0.3928], [0.2575, 0.4028]])
# torch.manual_seed(123); MultiHeadAttention(3, 2, 6, 0.0, num_heads=2, qkv_bias=True)(batch), each item
DOC_BIASED = torch.tensor(
    [[0.7732, -0.2205], [0.7706, -0.1791], [0.7684, -0.1686],
     [0.7485, -0.1963], [0.7558, -0.1972], [0.7427, -0.2082]])

NO_GRAD_COPY = N_("Copy inside `with torch.no_grad():` so that autograd does not record the copy into the "
                  "layer's own parameters")
# a load_from that assigns new Parameters (or new layers): the values are right, the objects are not the layer's
REPLACED = N_("a parameter replaced (a new nn.Parameter or layer) instead of copied into: an optimizer made before "
              "load_from still holds the old one, which the layer no longer uses; copy into the layer's own "
              "parameters with .copy_ inside torch.no_grad()")
SDPA_EVAL_DROPOUT = N_("dropout_p passed to F.scaled_dot_product_attention in eval mode too (the function does "
                       "not know the module's mode: pass self.dropout only when self.training)")
NOT_CALLED = N_("F.scaled_dot_product_attention not called")


def new_layer(student, name: str, d_in, d_out, context_length, dropout, *, num_heads, **kwargs):
    """The student's `name` (either layer), its W_qkv's shape checked before any forward runs."""
    module = student.new(name, d_in, d_out, context_length, dropout, num_heads=num_heads, **kwargs)
    params = module.params()
    weight = params.get("W_qkv.weight") if isinstance(params, dict) else None
    if isinstance(weight, torch.Tensor):
        expect_param_shape(weight, (3 * d_out, d_in), name, "W_qkv.weight")
    return module


def expect_documented(student, name: str, other_seed: int, show_passing: bool = False) -> None:
    """torch.manual_seed(123); name(3, 2, 6, 0.0, num_heads=2)(batch) gives notebook 06's documented output."""
    module = new_layer(student, name, 3, 2, 6, 0.0, num_heads=2, seed=123)
    got, params = module(WORKED_BATCH), module.params()
    own = blocks(params, 3, 2, 2)
    if own is not None:  # other inputs, with its own weights: a written-out answer gives itself away
        other = randn(other_seed, 2, 6, 3)
        expect_not_hard_coded(name, (got, module(other)), [attend(own, x) for x in (WORKED_BATCH, other)])
    mistakes = MISTAKES_OF[name](params, WORKED_BATCH, got, 3, 2, 2)
    if own is not None:  # the right forward with its own weights first (then the weights differ: head_dim is 1
        # here, so an unscaled forward gives the same)
        mistakes = {weights_differ(params): attend(own, WORKED_BATCH), **mistakes}
    expect_close(got, DOC_SEEDED.expand(2, 6, 2), f"torch.manual_seed(123); {name}(3, 2, 6, 0.0, num_heads=2)(batch)",
                 atol=1e-4, mistakes=mistakes, heatmap_labels=(TOKENS, None), show_passing=show_passing)


def expect_equals_torch(student, name: str, seed: int) -> None:
    """The whole eval-mode forward against nn.MultiheadAttention holding the layer's own weights."""
    x = randn(seed, 2, 6, 8)
    module = new_layer(student, name, 8, 8, 6, 0.0, num_heads=2, qkv_bias=True, seed=seed + 1)
    params = module.params()
    own = blocks(params, 8, 8, 2)
    expect(own is not None, _f("{name}(8, 8, 6, 0.0, num_heads=2, qkv_bias=True) should have the parameters "
                               "{order}, named so, to be compared with nn.MultiheadAttention", name=name, order=ORDER))
    got = module(x)
    expect_close(got, causal_torch_output(own, x),
                 _f("{name}(8, 8, 6, 0.0, num_heads=2, qkv_bias=True)(x), compared with nn.MultiheadAttention(8, 2, "
                    "batch_first=True) holding its weights (in_proj_weight = W_qkv.weight), under a causal attn_mask",
                    name=name),
                 mistakes=MISTAKES_OF[name](params, x, got, 8, 8, 2), device=student.device, heatmap_labels=True)


def expect_causal(student, name: str, seed: int) -> None:
    x = randn(seed, 2, 8, 4)
    changed = x.clone()
    changed[1, 5:] = randn(seed + 1, 3, 4, scale=3.0)
    module = new_layer(student, name, 4, 3, 8, 0.0, num_heads=3, seed=seed + 2)
    before, after = module(x), module(changed)
    for out in (before, after):
        expect_output(out, (2, 8, 3), _f("{name}(4, 3, 8, 0.0, num_heads=3) on a (2, 8, 4) input", name=name))
    expect_close(after[:, :5], before[:, :5], _("the outputs of tokens 0-4 after tokens 5-7 changed"),
                 device=student.device, heatmap_labels=True,
                 heatmap_view=(lambda out: out[1], _("batch item 1, whose tokens 5-7 changed")),
                 hint=N_("They changed, so the future leaks into the past: each query may see its own token and "
                         "the earlier ones only"))
    expect(not close(after[1, 5:], before[1, 5:]),
           _("the outputs of tokens 5-7 did not change when those tokens changed: the output must depend on them"))


def expect_params(student, name: str, seed: int) -> None:
    """The documented creation order, with torch's own layers, and qkv_bias honoured."""
    for qkv_bias in (False, True):
        module = new_layer(student, name, 5, 6, 8, 0.1, num_heads=3, qkv_bias=qkv_bias, seed=seed)
        manual_seed(seed)
        layers = {"W_qkv": torch.nn.Linear(5, 18, bias=qkv_bias), "out_proj": torch.nn.Linear(6, 6)}
        expected = {f"{layer}.{kind}": getattr(value, kind) for layer, value in layers.items()
                    for kind in ("weight", "bias") if getattr(value, kind) is not None}
        expect_same_params(module, expected, f"{name}(5, 6, 8, 0.1, num_heads=3, qkv_bias={qkv_bias})", ORDER)


def expect_eval_ignores_dropout(student, name: str, seed: int, advice: str) -> None:
    """In eval mode the output does not depend on the dropout rate: against the student's own layer built with
    dropout=0.0 under the same seed (the same weights), whatever the forward computes."""
    x = randn(seed, 2, 6, 4)
    module = new_layer(student, name, 4, 2, 6, 0.5, num_heads=2, seed=seed + 1)
    expected = new_layer(student, name, 4, 2, 6, 0.0, num_heads=2, seed=seed + 1)(x, mode="eval")
    expect_output(expected, (2, 6, 2), _f("{name}(4, 2, 6, 0.0, num_heads=2) in eval mode", name=name))
    for draw in (5, 6):
        expect_close(module(x, mode="eval", seed=draw), expected,
                     _f("{name}(4, 2, 6, dropout=0.5) in eval mode, compared with the same layer built with "
                        "dropout=0.0", name=name), device=student.device, heatmap_labels=True,
                     hint=_f("In eval mode the output must not depend on the dropout rate: {advice}?", advice=_(advice)))


def train_and_eval(student, name: str, seed: int):
    """(the layer, x, its train-mode output after torch.manual_seed(6)), the layer's eval-mode output checked to
    differ. Two heads of size 2: with dropout on, F.scaled_dot_product_attention computes on its plain path, whose
    context is laid out (b, num_heads, T, head_dim), so a bare .view of its transpose raises here."""
    x = randn(seed, 2, 6, 4)
    module = new_layer(student, name, 4, 4, 6, 0.5, num_heads=2, seed=seed + 1)
    what = _f("{name}(4, 4, 6, dropout=0.5, num_heads=2) in train mode, after torch.manual_seed(6)", name=name)
    got = module(x, mode="train", seed=6)
    expect_shape(got, (2, 6, 4), what)
    expect_dropout_acts(module, x, got, name, what, seed + 2, NO_TRAIN_DROPOUT, shape=(2, 6, 4),
                        eval_what=_f("{name}(4, 4, 6, dropout=0.5, num_heads=2) in eval mode", name=name))
    return module, x, got


def expect_all_gradients(student, name: str, seed: int) -> None:
    x, grad_output = randn(seed, 2, 5, 4), randn(seed + 1, 2, 5, 2)
    module = new_layer(student, name, 4, 2, 6, 0.0, num_heads=2, qkv_bias=True, seed=seed + 2)
    params = module.params()
    reply = module.run(x, mode="train", backward=grad_output)
    expect_gradients(reply, list(params or {}), f"{name}(4, 2, 6, 0.0, num_heads=2, qkv_bias=True)",
                     unused=_("is it used in forward? out_proj must be applied to the combined heads"))


def expect_on_any_device(student, name: str, seed: int) -> None:
    x = randn(seed, 2, 5, 4)
    module = new_layer(student, name, 4, 2, 6, 0.0, num_heads=2, seed=seed + 1)
    expect_output(module(x), (2, 5, 2), f"{name}(4, 2, 6, 0.0, num_heads=2)")
    expect_forward_on_any_device(module, x, name, (2, 5, 2), _(CPU_MADE_MASK))


# ---------------------------------------------------------------- MultiHeadAttentionFused (5.5 points, 1 hidden)

@check(0.75, "MultiHeadAttentionFused gives the documented seeded output", documented=True,
       cell="MultiHeadAttentionFused")
def test_fused_documented(student):
    expect_documented(student, "MultiHeadAttentionFused", 801, show_passing=True)


def loaded(student, d_in: int, d_out: int, num_heads: int, source: dict, qkv_bias: bool = True, seed: int = 0):
    """The student's fused layer after load_from(mha), mha a MultiHeadAttention stand-in holding `source`
    (seeded_mha's). Returns the layer built."""
    fused = new_layer(student, "MultiHeadAttentionFused", d_in, d_out, 8, 0.0, num_heads=num_heads,
                      qkv_bias=qkv_bias, seed=seed)
    return load(student, fused, source)


def load(student, fused, source: dict):
    """`fused` after fused.load_from(mha), mha a MultiHeadAttention stand-in holding `source` (seeded_mha's)."""
    mha = student.stand_in("mha", linears=[(name, weight, bias) for name, (weight, bias) in source.items()])
    try:
        fused.call_method("load_from", mha.arg)
    except StudentFailure as failure:
        if failure.kind == "raised" and "in-place" in failure.message:
            raise CheckFailed(_f("{error}. {hint}", error=failure.message, hint=_(NO_GRAD_COPY))) from None
        raise
    return fused


@check(0.75, "MultiHeadAttentionFused.load_from gives the documented output of a MultiHeadAttention with biases",
       documented=True, cell="MultiHeadAttentionFused")
def test_load_from_documented(student):
    source = seeded_mha(3, 2, 123)
    fused = loaded(student, 3, 2, 2, source)
    got = fused(WORKED_BATCH)
    other = randn(802, 2, 6, 3)  # other inputs: a written-out answer gives itself away
    expect_not_hard_coded("MultiHeadAttentionFused", (got, fused(other)),
                          [attend(as_mha(source, 2), x) for x in (WORKED_BATCH, other)])
    expect_close(got, DOC_BIASED.expand(2, 6, 2),
                 "torch.manual_seed(123); mha = MultiHeadAttention(3, 2, 6, 0.0, num_heads=2, qkv_bias=True); "
                 "MultiHeadAttentionFused(3, 2, 6, 0.0, num_heads=2, qkv_bias=True).load_from(mha)(batch)",
                 atol=1e-4, mistakes=load_mistakes(source, WORKED_BATCH, 2, 0), heatmap_labels=(TOKENS, None))


@check(0.75, "MultiHeadAttentionFused.load_from stacks W_query, W_key, W_value into W_qkv and copies out_proj",
       visible=True, cell="MultiHeadAttentionFused")
def test_load_from_params(student):
    """The parameters after the copy, and that they still learn (the layer's own Parameters, copied into)."""
    source = seeded_mha(4, 6, 803)
    fused = new_layer(student, "MultiHeadAttentionFused", 4, 6, 8, 0.0, num_heads=3, qkv_bias=True, seed=804)
    own = fused.param_ids()
    params = load(student, fused, source).params()
    params = params if isinstance(params, dict) else {}
    what = "MultiHeadAttentionFused(4, 6, 8, 0.0, num_heads=3, qkv_bias=True).load_from(mha)"
    weights = [source[name][0] for name in NAMES]
    biases = [source[name][1] for name in NAMES]
    mistakes = {LOADED_ORDER: torch.cat([weights[1], weights[0], weights[2]]),
                N_("the weights stacked along dim 1 (each nn.Linear weight is (d_out, d_in): stack along dim 0)"):
                torch.cat(weights, dim=1)}
    expect_close(params.get("W_qkv.weight"), torch.cat(weights), _f("W_qkv.weight after {what}", what=what),
                 mistakes=mistakes, hint=N_("W_qkv.weight is torch.cat([W_query.weight, W_key.weight, "
                                            "W_value.weight], dim=0)"))
    bias = params.get("W_qkv.bias")
    expect(not (isinstance(bias, torch.Tensor) and close(bias, built_layers(804, 4, 6)[0].bias.detach())),
           _f("W_qkv.bias after {what} is still the bias the layer was built with: this looks like {mistake}",
              what=what, mistake=_(LOADED_NO_BIAS)), mistake=LOADED_NO_BIAS)
    expect_close(bias, torch.cat(biases), _f("W_qkv.bias after {what}", what=what),
                 mistakes={LOADED_ORDER: torch.cat([biases[1], biases[0], biases[2]])})
    for kind in ("weight", "bias"):
        manual = source["out_proj"][0 if kind == "weight" else 1]
        got = params.get(f"out_proj.{kind}")
        expect(isinstance(got, torch.Tensor) and close(got, manual),
               _f("out_proj.{kind} after {what} is not mha's: this looks like {mistake}", kind=kind, what=what,
                  mistake=_(LOADED_NO_OUT_PROJ)), mistake=LOADED_NO_OUT_PROJ)
    # the same Parameter objects as before the call (an optimizer made before load_from holds those)
    before, after = (ids if isinstance(ids, dict) else {} for ids in (own, fused.param_ids()))
    replaced = [name for name, identity in before.items() if after.get(name) != identity]
    expect(not replaced, _f("{what} replaced the parameter {names} by a new object: this looks like {mistake}",
                            what=what, names=", ".join(replaced), mistake=_(REPLACED)), mistake=REPLACED)
    x, grad_output = randn(805, 2, 5, 4), randn(806, 2, 5, 6)
    reply = run_unless_raised(fused.run, x, mode="train", backward=grad_output)
    if reply is None:
        return  # the forward raised: the value checks grade that
    for name in ("W_qkv.weight", "out_proj.weight"):
        expect(isinstance(reply.param_grads.get(name), torch.Tensor),
               _f("after load_from, {name} no longer receives a gradient: copy into the layer's own parameters "
                  "with .copy_ inside torch.no_grad() (do not switch off requires_grad)", name=name))


@check(0.25, "MultiHeadAttentionFused creates W_qkv and out_proj in the documented order, honouring qkv_bias",
       visible=True, cell="MultiHeadAttentionFused")
def test_fused_params(student):
    expect_params(student, "MultiHeadAttentionFused", 811)


@check(0.25, "MultiHeadAttentionFused raises ValueError when d_out is not divisible by num_heads", visible=True,
       cell="MultiHeadAttentionFused")
def test_fused_error(student):
    expect_raises(lambda: student.new("MultiHeadAttentionFused", 4, 10, 6, 0.0, num_heads=4, seed=812),
                  "ValueError", "MultiHeadAttentionFused(4, 10, 6, 0.0, num_heads=4), d_out = 10")


@check(0.5, "MultiHeadAttentionFused equals nn.MultiheadAttention run with its own weights", visible=True,
       cell="MultiHeadAttentionFused")
def test_fused_equals_torch(student):
    expect_equals_torch(student, "MultiHeadAttentionFused", 821)


@check(0.25, "MultiHeadAttentionFused is causal: changing later tokens leaves earlier outputs unchanged",
       visible=True, cell="MultiHeadAttentionFused")
def test_fused_causal(student):
    expect_causal(student, "MultiHeadAttentionFused", 831)


@check(0.25, "MultiHeadAttentionFused: eval mode disables dropout", visible=True, cell="MultiHeadAttentionFused")
def test_fused_eval(student):
    expect_eval_ignores_dropout(student, "MultiHeadAttentionFused", 841, EVAL_DROPOUT)


@check(0.25, "MultiHeadAttentionFused: dropout acts in train mode", visible=True, cell="MultiHeadAttentionFused")
def test_fused_train(student):
    train_and_eval(student, "MultiHeadAttentionFused", 851)


@check(0.25, "MultiHeadAttentionFused: gradients reach every parameter", visible=True,
       cell="MultiHeadAttentionFused")
def test_fused_gradients(student):
    expect_all_gradients(student, "MultiHeadAttentionFused", 861)


@check(0.25, "MultiHeadAttentionFused works on any device: no tensor created on the CPU in forward", visible=True,
       cell="MultiHeadAttentionFused")
def test_fused_device(student):
    expect_on_any_device(student, "MultiHeadAttentionFused", 871)


# ---------------------------------------------------------------- MultiHeadAttentionSDPA (4.5 points, 0.75 hidden)

@check(0.5, "MultiHeadAttentionSDPA gives the documented seeded output", documented=True,
       cell="MultiHeadAttentionSDPA")
def test_sdpa_documented(student):
    expect_documented(student, "MultiHeadAttentionSDPA", 901)


def calls(source: str, function: str) -> bool:
    """Whether the code `source` calls `function` (by its name or as an attribute): a docstring or a comment
    that names it is no call."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return False
    return any(isinstance(node, ast.Call) and function in (getattr(node.func, "attr", None), getattr(node.func, "id", None))
               for node in ast.walk(tree))


@check(0.5, "MultiHeadAttentionSDPA calls F.scaled_dot_product_attention", visible=True,
       cell="MultiHeadAttentionSDPA")
def test_sdpa_called(student):
    """The section's rule, read in the student's code: the function is the point of this layer. The layer is built
    first, so that a stub says it is one."""
    new_layer(student, "MultiHeadAttentionSDPA", 3, 2, 6, 0.0, num_heads=2, seed=123)
    expect(calls(student.source_of("MultiHeadAttentionSDPA"), "scaled_dot_product_attention"),
           _("MultiHeadAttentionSDPA does not call F.scaled_dot_product_attention: in this layer the attention is "
             "computed by that function (a softmax written out belongs to MultiHeadAttentionFused)"),
           mistake=NOT_CALLED)


@check(0.75, "MultiHeadAttentionSDPA equals nn.MultiheadAttention run with its own weights", visible=True,
       cell="MultiHeadAttentionSDPA")
def test_sdpa_equals_torch(student):
    expect_equals_torch(student, "MultiHeadAttentionSDPA", 911)


@check(0.25, "MultiHeadAttentionSDPA is causal: changing later tokens leaves earlier outputs unchanged",
       visible=True, cell="MultiHeadAttentionSDPA")
def test_sdpa_causal(student):
    expect_causal(student, "MultiHeadAttentionSDPA", 921)


@check(0.5, "MultiHeadAttentionSDPA: eval mode disables dropout (dropout_p = 0.0 unless training)", visible=True,
       cell="MultiHeadAttentionSDPA")
def test_sdpa_eval(student):
    expect_eval_ignores_dropout(student, "MultiHeadAttentionSDPA", 931, SDPA_EVAL_DROPOUT)


@check(0.5, "MultiHeadAttentionSDPA: in train mode, dropout as F.scaled_dot_product_attention draws it",
       visible=True, cell="MultiHeadAttentionSDPA")
def test_sdpa_train(student):
    """Dropout acts in train mode, and with the module's own weights it is the function's own dropout_p."""
    module, x, got = train_and_eval(student, "MultiHeadAttentionSDPA", 941)
    device = "cpu" if student.device == "meta" else student.device  # dropout masks depend on the device
    own = blocks(module.params(), 4, 4, 2, device=device)
    if own is None:
        return  # the parameter checks say so
    with torch.no_grad():
        b, t = x.shape[:2]
        q, k, v = (layer(x.to(device)).reshape(b, t, 2, 2).transpose(1, 2) for layer in (own.W_query, own.W_key, own.W_value))
        torch.manual_seed(6)
        context = torch.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=0.5, is_causal=True)
        expected = own.out_proj(context.transpose(1, 2).reshape(b, t, 4)).cpu()
    expect_close(got, expected, _("MultiHeadAttentionSDPA(4, 4, 6, dropout=0.5, num_heads=2) in train mode after "
                                  "torch.manual_seed(6), compared with F.scaled_dot_product_attention(q, k, v, "
                                  "dropout_p=0.5, is_causal=True) with its own weights"),
                 device=student.device, hint=N_("Pass dropout_p=self.dropout to F.scaled_dot_product_attention "
                                                "when self.training, and apply no other dropout"))


@check(0.25, "MultiHeadAttentionSDPA creates W_qkv and out_proj in the documented order, honouring qkv_bias",
       visible=True, cell="MultiHeadAttentionSDPA")
def test_sdpa_params(student):
    expect_params(student, "MultiHeadAttentionSDPA", 951)


@check(0.25, "MultiHeadAttentionSDPA raises ValueError when d_out is not divisible by num_heads", visible=True,
       cell="MultiHeadAttentionSDPA")
def test_sdpa_error(student):
    expect_raises(lambda: student.new("MultiHeadAttentionSDPA", 4, 10, 6, 0.0, num_heads=4, seed=952),
                  "ValueError", "MultiHeadAttentionSDPA(4, 10, 6, 0.0, num_heads=4), d_out = 10")


@check(0.25, "MultiHeadAttentionSDPA: gradients reach every parameter", visible=True, cell="MultiHeadAttentionSDPA")
def test_sdpa_gradients(student):
    expect_all_gradients(student, "MultiHeadAttentionSDPA", 961)
