"""Checks of section 10 (part 2): grouped-query attention (10 points).

The section's registry entry (SECTION) and its visible checks: the documented seeded outputs (two key/value
groups for four query heads; one group, multi-query attention; as many groups as heads, which draws the weights
of notebook 06's MultiHeadAttention and gives its documented output), then the properties that need no
reference: the layer equal to F.scaled_dot_product_attention(..., enable_gqa=True) holding its own weights
(torch's grouping: query head h reads key/value head h // group_size), and to nn.MultiheadAttention when every
query head has its own group; the parameters in the documented order and sizes (keys and values of
num_kv_groups heads); the ValueErrors; causality; batch independence; dropout off in eval mode, on in train mode;
gradients; any device; the KV cache (decoding a prompt then single tokens gives the full forward; the cache holds
the groups only). The self-check runs them and the students' wheel ships this module as it is, so nothing here
imports `solutions`. The hidden checks compare with the reference on fresh sizes:
checks/hidden/hidden_10_grouped_query.py.
"""

SECTION = {  # the registry's entry (autograder/core/sections.py reads it without importing this file)
    "title": "Grouped-query attention",
    "solution": "solutions.grouped_query",
    "names": ("GroupedQueryAttention",),
    "forbidden": "attention",
    "forbidden_in": ("GroupedQueryAttention",),
    "provided": ("solutions.multihead:MultiHeadAttention",),
    "part": 2,
    "uses_meta": True,
    "rules": {"param_order": ("GroupedQueryAttention",), "device": ("GroupedQueryAttention",)},
}

import contextlib

import torch

from autograder.checks.cached_forward import expect_cache_not_saved
from autograder.checks.common import (CPU_MADE_MASK, TOKENS, WORKED_BATCH, expect_forward_on_any_device,
                                      expect_gradients, expect_not_hard_coded, expect_output, expect_raises,
                                      manual_seed, randn, run_unless_raised)
from autograder.checks.parameters import (expect_param_shape, expect_same_params, weights_differ)
from autograder.checks.grouped_forward import (CACHE_REPEATED, KV_WIDTH, ORDER, WRONG_DIM, grouped_attend,
                                               grouped_mistakes, mha_layer, own_grouped, torch_grouped)
from autograder.checks.multihead_forward import causal_torch_output
from autograder.checks.multihead_mistakes import EVAL_DROPOUT, NO_TRAIN_DROPOUT
from autograder.core.harness import CheckFailed, StudentFailure, check, close, expect, expect_close, expect_shape
from autograder.i18n import N_, _, _f
from autograder.worker.wire import TensorStub

NAME = "GroupedQueryAttention"
# torch.manual_seed(123); GroupedQueryAttention(3, 8, 6, 0.0, num_heads=4, num_kv_groups=2)(batch), each item
DOC_GROUPED = torch.tensor(
    [[-0.1750, 0.0796, 0.1065, 0.1746, -0.4003, 0.0008, -0.3314, 0.2663],
     [-0.1783, 0.0244, 0.1042, 0.2030, -0.5012, -0.0195, -0.2814, 0.3641],
     [-0.1785, 0.0100, 0.0982, 0.2133, -0.5316, -0.0229, -0.2639, 0.3939],
     [-0.1344, -0.0034, 0.0713, 0.2008, -0.5152, -0.0182, -0.2041, 0.3972],
     [-0.1124, 0.0043, 0.0644, 0.1822, -0.4940, -0.0015, -0.1932, 0.3891],
     [-0.1011, -0.0109, 0.0562, 0.1860, -0.5012, -0.0100, -0.1660, 0.3996]])
# the same with num_kv_groups=1: multi-query attention (one key/value head for the four query heads)
DOC_MULTI_QUERY = torch.tensor(
    [[-0.0318, -0.0681, -0.0645, -0.4353, -0.1371, 0.0676, -0.1464, 0.6597],
     [-0.0707, 0.0357, -0.1229, -0.4796, -0.1246, 0.0788, -0.0862, 0.8086],
     [-0.0896, 0.0706, -0.1385, -0.4943, -0.1230, 0.0833, -0.0668, 0.8599],
     [-0.0556, 0.0436, -0.1221, -0.4634, -0.1192, 0.0634, -0.0433, 0.8162],
     [-0.0497, 0.0344, -0.1168, -0.4562, -0.1180, 0.0595, -0.0432, 0.8037],
     [-0.0320, 0.0270, -0.1136, -0.4443, -0.1157, 0.0505, -0.0290, 0.7892]])
# num_kv_groups == num_heads draws the weights of notebook 06's MultiHeadAttention(3, 2, 6, 0.0, num_heads=2)
DOC_MHA = torch.tensor(
    [[0.3190, 0.4858], [0.2943, 0.3897], [0.2856, 0.3593],
     [0.2693, 0.3873], [0.2639, 0.3928], [0.2575, 0.4028]])
NO_CACHE_BUFFER = N_("the cache is not kept in the buffers cache_k and cache_v (register them in __init__ with "
                     "self.register_buffer(\"cache_k\", None, persistent=False), then assign the tensors)")
STALE_CACHE = N_("reset_cache does not empty the cache (set cache_k and cache_v to None)")
CACHE_MASK = N_("the causal mask not offset by the cache: the new queries must see every cached token and "
                "causally their own (query i of T_new new tokens sits at position T_all - T_new + i)")


def sizes(num_heads: int, num_kv_groups: int) -> str:
    return f"num_heads={num_heads}, num_kv_groups={num_kv_groups}"


def forward(module, x, **kwargs):
    """module(x, **kwargs), its size mismatches named (see named_mismatch)."""
    with named_mismatch(module, x, kwargs.get("use_cache", False)):
        return module(x, **kwargs)


@contextlib.contextmanager
def named_mismatch(module, x, use_cache: bool = False):
    """Within: a size mismatch the student's code raises on x is named where the evidence points at one cause: with
    a cache, where the same forward without it answers, a mask not offset by the cached tokens; else, in code that
    calls repeat_interleave, the keys repeated along the tokens' dim."""
    try:
        yield
    except StudentFailure as failure:
        if failure.kind != "raised" or "must match the size" not in failure.message:
            raise
        if use_cache and run_unless_raised(module.run, x) is not None:
            raise CheckFailed(_f("{error}. {hint}", error=failure.shortened(300), hint=_(CACHE_MASK)),
                              CACHE_MASK) from None
        if "repeat_interleave" in module.student.source_of(NAME):
            raise CheckFailed(_f("{error}. {hint}", error=failure.shortened(300), hint=_(WRONG_DIM)),
                              WRONG_DIM) from None
        raise


def new_layer(student, d_in, d_out, context_length, dropout, *, num_heads, num_kv_groups, **kwargs):
    """The student's layer, its parameters' shapes checked before any forward runs (keys and values first: their
    width is the point of the section)."""
    module = student.new(NAME, d_in, d_out, context_length, dropout, num_heads=num_heads,
                         num_kv_groups=num_kv_groups, **kwargs)
    params = module.params()
    params = params if isinstance(params, dict) else {}
    kv = num_kv_groups * (d_out // num_heads)
    for layer in ("W_key", "W_value"):
        weight = params.get(f"{layer}.weight")
        if isinstance(weight, torch.Tensor) and kv != d_out and tuple(weight.shape) == (d_out, d_in):
            raise CheckFailed(_f("{name}.{layer}.weight should have shape {expected}, got {got}: {mistake}",
                                 name=NAME, layer=layer, expected=(kv, d_in), got=tuple(weight.shape),
                                 mistake=_(KV_WIDTH)), KV_WIDTH)
    for layer, shape in (("W_query", (d_out, d_in)), ("W_key", (kv, d_in)), ("W_value", (kv, d_in)),
                         ("out_proj", (d_out, d_out))):
        weight = params.get(f"{layer}.weight")
        if isinstance(weight, torch.Tensor):
            expect_param_shape(weight, shape, NAME, f"{layer}.weight")
    return module


def expect_documented(student, d_out: int, num_heads: int, num_kv_groups: int, expected, other_seed: int,
                      show_passing: bool = False) -> None:
    """torch.manual_seed(123); GroupedQueryAttention(3, d_out, 6, 0.0, ...)(batch) gives `expected`."""
    module = new_layer(student, 3, d_out, 6, 0.0, num_heads=num_heads, num_kv_groups=num_kv_groups, seed=123)
    got = forward(module, WORKED_BATCH)
    own = own_grouped(module.params(), 3, d_out, num_heads, num_kv_groups)
    mistakes = {}
    if own is not None:  # other inputs, with its own weights: a written-out answer gives itself away
        other = randn(other_seed, 2, 6, 3)
        expect_not_hard_coded(NAME, (got, forward(module, other)), [grouped_attend(own, x) for x in (WORKED_BATCH, other)])
        mistakes = {weights_differ(module.params()): grouped_attend(own, WORKED_BATCH),
                    **grouped_mistakes(own, WORKED_BATCH)}
    expect_close(got, expected.expand(2, 6, d_out),
                 f"torch.manual_seed(123); {NAME}(3, {d_out}, 6, 0.0, {sizes(num_heads, num_kv_groups)})(batch)",
                 atol=1e-4, mistakes=mistakes, heatmap_labels=(TOKENS, None), show_passing=show_passing)


@check(0.75, "GroupedQueryAttention gives the documented seeded output (4 query heads, 2 key/value groups)",
       documented=True, cell=NAME)
def test_documented(student):
    expect_documented(student, 8, 4, 2, DOC_GROUPED, 1001, show_passing=True)


@check(0.5, "GroupedQueryAttention with one key/value group (multi-query) gives the documented seeded output",
       documented=True, cell=NAME)
def test_multi_query_documented(student):
    expect_documented(student, 8, 4, 1, DOC_MULTI_QUERY, 1002)


@check(0.5, "GroupedQueryAttention with a group per head gives notebook 06's documented output", documented=True,
       cell=NAME)
def test_mha_documented(student):
    expect_documented(student, 2, 2, 2, DOC_MHA, 1003)


def own_or_fail(module, d_in, d_out, num_heads, num_kv_groups, what: str, device="cpu"):
    own = own_grouped(module.params(), d_in, d_out, num_heads, num_kv_groups, device=device)
    expect(own is not None, _f("{what} should have the parameters {order}, named so, to be compared with torch's "
                               "attention", what=what, order=ORDER))
    return own


@check(1.5, "GroupedQueryAttention equals F.scaled_dot_product_attention(..., enable_gqa=True) run with its own "
       "weights", visible=True, cell=NAME)
def test_equals_torch(student):
    x = randn(1011, 2, 7, 8)  # head_dim 3, two groups: scaling by either tells
    what = f"{NAME}(8, 12, 7, 0.0, num_heads=4, num_kv_groups=2, qkv_bias=True)"
    module = new_layer(student, 8, 12, 7, 0.0, num_heads=4, num_kv_groups=2, qkv_bias=True, seed=1012)
    own = own_or_fail(module, 8, 12, 4, 2, what)
    expect_close(forward(module, x), torch_grouped(own, x),
                 _f("{what}(x), compared with F.scaled_dot_product_attention(q, k, v, is_causal=True, "
                    "enable_gqa=True) holding its weights", what=what),
                 mistakes=grouped_mistakes(own, x), device=student.device, heatmap_labels=True)


@check(1.0, "GroupedQueryAttention with a group per head equals nn.MultiheadAttention run with its own weights",
       visible=True, cell=NAME)
def test_equals_mha(student):
    x = randn(1021, 2, 6, 8)
    what = f"{NAME}(8, 8, 6, 0.0, num_heads=4, num_kv_groups=4, qkv_bias=True)"
    module = new_layer(student, 8, 8, 6, 0.0, num_heads=4, num_kv_groups=4, qkv_bias=True, seed=1022)
    own = own_or_fail(module, 8, 8, 4, 4, what)
    expect_close(forward(module, x), causal_torch_output(mha_layer(own), x),
                 _f("{what}(x), compared with nn.MultiheadAttention(8, 4, batch_first=True) holding its weights, "
                    "under a causal attn_mask", what=what),
                 mistakes=grouped_mistakes(own, x), device=student.device, heatmap_labels=True)


@check(0.75, "GroupedQueryAttention creates W_query, W_key, W_value and out_proj in the documented order and sizes, "
       "honouring qkv_bias", visible=True, cell=NAME)
def test_params(student):
    for qkv_bias in (False, True):
        module = new_layer(student, 5, 12, 8, 0.1, num_heads=6, num_kv_groups=2, qkv_bias=qkv_bias, seed=1031)
        manual_seed(1031)
        layers = {"W_query": torch.nn.Linear(5, 12, bias=qkv_bias), "W_key": torch.nn.Linear(5, 4, bias=qkv_bias),
                  "W_value": torch.nn.Linear(5, 4, bias=qkv_bias), "out_proj": torch.nn.Linear(12, 12)}
        expected = {f"{layer}.{kind}": getattr(value, kind) for layer, value in layers.items()
                    for kind in ("weight", "bias") if getattr(value, kind) is not None}
        expect_same_params(module, expected,
                           f"{NAME}(5, 12, 8, 0.1, num_heads=6, num_kv_groups=2, qkv_bias={qkv_bias})", ORDER)


@check(0.75, "GroupedQueryAttention raises ValueError, naming both numbers, when the heads do not divide",
       visible=True, cell=NAME)
def test_errors(student):
    # d_out=12 divides by num_heads=4 and by num_kv_groups=3: only num_heads % num_kv_groups can refuse it
    expect_raises(lambda: student.new(NAME, 8, 12, 6, 0.0, num_heads=4, num_kv_groups=3, seed=1041), "ValueError",
                  f"{NAME}(8, 12, 6, 0.0, num_heads=4, num_kv_groups=3)", naming=(4, 3))
    expect_raises(lambda: student.new(NAME, 4, 10, 6, 0.0, num_heads=4, num_kv_groups=2, seed=1042), "ValueError",
                  f"{NAME}(4, 10, 6, 0.0, num_heads=4, num_kv_groups=2)", naming=(10, 4))


@check(0.25, "GroupedQueryAttention is causal: changing later tokens leaves earlier outputs unchanged",
       visible=True, cell=NAME)
def test_causal(student):
    x = randn(1051, 2, 8, 4)
    changed = x.clone()
    changed[1, 5:] = randn(1052, 3, 4, scale=3.0)
    module = new_layer(student, 4, 6, 8, 0.0, num_heads=3, num_kv_groups=1, seed=1053)
    before, after = forward(module, x), forward(module, changed)
    for out in (before, after):
        expect_output(out, (2, 8, 6),
                      _f("{name}(4, 6, 8, 0.0, num_heads=3, num_kv_groups=1) on a (2, 8, 4) input", name=NAME))
    expect_close(after[:, :5], before[:, :5], _("the outputs of tokens 0-4 after tokens 5-7 changed"),
                 device=student.device, heatmap_labels=True,
                 hint=N_("They changed, so the future leaks into the past: each query may see its own token and "
                         "the earlier ones only"))
    expect(not close(after[1, 5:], before[1, 5:]),
           _("the outputs of tokens 5-7 did not change when those tokens changed: the output must depend on them"))


@check(0.25, "GroupedQueryAttention keeps batch items apart: changing one item leaves the other unchanged",
       visible=True, cell=NAME)
def test_batch_items(student):
    x = randn(1061, 2, 6, 4)
    changed = x.clone()
    changed[1] = randn(1062, 6, 4, scale=3.0)
    module = new_layer(student, 4, 4, 6, 0.0, num_heads=2, num_kv_groups=1, seed=1063)
    before, after = forward(module, x), forward(module, changed)
    expect_output(before, (2, 6, 4),
                  _f("{name}(4, 4, 6, 0.0, num_heads=2, num_kv_groups=1) on a (2, 6, 4) input", name=NAME))
    expect_close(after[0], before[0], _("the output of batch item 0 after batch item 1 changed"),
                 device=student.device, hint=N_("Each batch item attends to its own tokens only: keep the batch dim "
                                                "apart (scores of shape (b, num_heads, T, T))"))


@check(0.25, "GroupedQueryAttention: eval mode disables dropout", visible=True, cell=NAME)
def test_eval(student):
    x = randn(1071, 2, 6, 4)
    module = new_layer(student, 4, 4, 6, 0.5, num_heads=2, num_kv_groups=1, seed=1072)
    expected = forward(new_layer(student, 4, 4, 6, 0.0, num_heads=2, num_kv_groups=1, seed=1072), x, mode="eval")
    expect_output(expected, (2, 6, 4),
                  _f("{name}(4, 4, 6, 0.0, num_heads=2, num_kv_groups=1) in eval mode", name=NAME))
    for draw in (5, 6):
        expect_close(forward(module, x, mode="eval", seed=draw), expected,
                     _f("{name}(4, 4, 6, dropout=0.5, ...) in eval mode, compared with the same layer built with "
                        "dropout=0.0", name=NAME), device=student.device,
                     hint=_f("In eval mode the output must not depend on the dropout rate: {advice}?",
                             advice=_(EVAL_DROPOUT)))


@check(0.25, "GroupedQueryAttention: dropout acts in train mode", visible=True, cell=NAME)
def test_train(student):
    x = randn(1081, 2, 6, 4)
    module = new_layer(student, 4, 4, 6, 0.5, num_heads=2, num_kv_groups=1, seed=1082)
    what = _f("{name}(4, 4, 6, dropout=0.5, num_heads=2, num_kv_groups=1) in train mode", name=NAME)
    got = forward(module, x, mode="train", seed=6)
    expect_shape(got, (2, 6, 4), what)
    eval_out = forward(module, x, mode="eval")
    if close(got, eval_out):  # an output that ignores its input says so, not that dropout is missing
        other = randn(1083, 2, 6, 4)
        expect_not_hard_coded(NAME, (eval_out, forward(module, other, mode="eval")), (x, other))
    expect(not close(got, eval_out), _f("{what}: the output equals the eval-mode output. This looks like "
                                        "{mistake}", what=what, mistake=_(NO_TRAIN_DROPOUT)), mistake=NO_TRAIN_DROPOUT)


@check(0.25, "GroupedQueryAttention: gradients reach every parameter", visible=True, cell=NAME)
def test_gradients(student):
    x, grad_output = randn(1091, 2, 5, 4), randn(1092, 2, 5, 4)
    module = new_layer(student, 4, 4, 6, 0.0, num_heads=2, num_kv_groups=1, qkv_bias=True, seed=1093)
    params = module.params()
    with named_mismatch(module, x):
        reply = module.run(x, mode="train", backward=grad_output)
    expect_gradients(reply, list(params or {}), f"{NAME}(4, 4, 6, 0.0, num_heads=2, num_kv_groups=1, qkv_bias=True)",
                     unused=_("is it used in forward? out_proj must be applied to the combined heads"))


@check(0.25, "GroupedQueryAttention works on any device: no tensor created on the CPU in forward", visible=True,
       cell=NAME)
def test_device(student):
    x = randn(1101, 2, 5, 4)
    module = new_layer(student, 4, 4, 6, 0.0, num_heads=2, num_kv_groups=1, seed=1102)
    expect_output(forward(module, x), (2, 5, 4), f"{NAME}(4, 4, 6, 0.0, num_heads=2, num_kv_groups=1)")
    expect_forward_on_any_device(module, x, NAME, (2, 5, 4), _(CPU_MADE_MASK))


def decoded(module, x, cuts):
    """The outputs of reset_cache(), then x's tokens cut at `cuts` (a prompt, then the next pieces), all with
    use_cache=True, side by side."""
    module.call_method("reset_cache")
    bounds = [0, *cuts, x.shape[1]]
    steps = [forward(module, x[:, start:end], use_cache=True) for start, end in zip(bounds, bounds[1:])]
    for step in steps:
        expect(isinstance(step, torch.Tensor) and step.dim() == 3,
               _f("{name}.forward(x, use_cache=True) should return a (b, T_new, d_out) tensor", name=NAME))
    return torch.cat(steps, dim=1)


@check(1.0, "GroupedQueryAttention with use_cache=True: a prompt, then the next tokens, gives the full forward", visible=True, cell=NAME)
def test_cache_decodes(student):
    x = randn(1111, 2, 7, 4)
    module = new_layer(student, 4, 8, 8, 0.0, num_heads=4, num_kv_groups=2, seed=1112)
    full = forward(module, x)
    expect_output(full, (2, 7, 8), f"{NAME}(4, 8, 8, 0.0, num_heads=4, num_kv_groups=2)")
    what = _f("{name}: reset_cache(), then tokens 0-2 with use_cache=True, then tokens 3-4, then 5, then 6",
              name=NAME)
    expect_close(decoded(module, x, (3, 5, 6)), full, _f("{what}, compared with the full forward without cache", what=what),
                 device=student.device, hint=CACHE_MASK)
    again = decoded(module, x[:, :2], (1,))
    expect(close(again, full[:, :2], device=student.device),
           _f("after reset_cache(), decoding tokens 0 and 1 again does not give their full forward: this looks like "
              "{mistake}", mistake=_(STALE_CACHE)), mistake=STALE_CACHE)


@check(0.5, "GroupedQueryAttention's cache keeps num_kv_groups key/value heads, not num_heads", visible=True,
       cell=NAME)
def test_cache_groups(student):
    x = randn(1121, 2, 5, 4)
    module = new_layer(student, 4, 8, 8, 0.0, num_heads=4, num_kv_groups=2, seed=1122)
    module.call_method("reset_cache")
    forward(module, x, use_cache=True)
    for buffer in ("cache_k", "cache_v"):
        try:
            cache = module.call_method("get_buffer", buffer)
        except StudentFailure as failure:
            if failure.kind != "raised":
                raise
            raise CheckFailed(_f("{name}.get_buffer(\"{buffer}\") raised: this looks like {mistake}", name=NAME,
                                 buffer=buffer, mistake=_(NO_CACHE_BUFFER)), NO_CACHE_BUFFER) from None
        got = tuple(cache.shape) if isinstance(cache, (torch.Tensor, TensorStub)) else None
        what = _f("{name}.{buffer} after forward(x, use_cache=True) on x of shape (2, 5, 4), num_heads=4, "
                  "num_kv_groups=2", name=NAME, buffer=buffer)
        expect(got != (2, 4, 5, 2), _f("{what} has shape (2, 4, 5, 2): {mistake}", what=what,
                                       mistake=_(CACHE_REPEATED)), mistake=CACHE_REPEATED)
        expect(got == (2, 2, 5, 2), _f("{what} should have shape (b, num_kv_groups, T, head_dim) = (2, 2, 5, 2); "
                                       "got {got}", what=what, got=got))


@check(0.25, "GroupedQueryAttention keeps its cache out of state_dict: a cache is no weight", visible=True, cell=NAME)
def test_cache_not_saved(student):
    module = student.new(NAME, 4, 8, 8, 0.0, num_heads=4, num_kv_groups=2, seed=1131)  # its sizes: other checks
    expect_cache_not_saved(module, NAME, randn(1132, 2, 5, 4))
