"""Checks of section 09 (part 2): the KV cache (10 points).

The section's registry entry (SECTION) and its visible checks: the documented seeded outputs (built under
torch.manual_seed(123), the cached layer draws the weights of notebook 06's MultiHeadAttention, so its full
forward, the worked example decoded one token at a time, and a prompt of four tokens then two single ones all
give notebook 06's documented output), then the properties that need no reference: each new token projected
once (the rows W_query, W_key and W_value are handed, counted in the worker: worker/measure_rows.py), reset_cache
emptying the cache, use_cache=False leaving it alone, a batch of two different sequences decoded in chunks as
the full forward computes it, the parameters in the documented order, the ValueErrors; kv_cache_bytes on the
documented model sizes and on others. The self-check runs them and the students' wheel ships this module as it
is, so nothing here imports `solutions`. The hidden checks: checks/hidden/hidden_09_kv_cache.py.
"""

SECTION = {  # the registry's entry (autograder/core/sections.py reads it without importing this file)
    "title": "The KV cache",
    "solution": "solutions.kv_cache",
    "names": ("MultiHeadAttentionCached", "kv_cache_bytes"),
    "forbidden": "attention",
    "forbidden_in": ("MultiHeadAttentionCached",),
    "part": 2,
    "rules": {"param_order": ("MultiHeadAttentionCached",), "device": ("MultiHeadAttentionCached",)},
}

import torch

from autograder.checks.cached_forward import (BARE_CACHE, LAYER, NOT_RESET, REPROJECTED, WRITTEN_WITHOUT, decode,
                                              decode_mistakes, decoded, expect_cache_not_saved)
from autograder.checks.common import (TOKENS, WORKED_BATCH, expect_dropout_acts, expect_not_hard_coded, expect_raises,
                                      manual_seed, randn)
from autograder.checks.parameters import (expect_same_params, weights_differ)
from autograder.checks.multihead_forward import attend, own_layers
from autograder.checks.multihead_mistakes import NO_TRAIN_DROPOUT
from autograder.checks.section_08_efficient_mha import expect_on_any_device
from autograder.core.harness import CheckFailed, StudentFailure, check, expect, expect_close, expect_shape
from autograder.i18n import N_, _, _f

# notebook 06's documented output: the cached layer creates notebook 06's layers in notebook 06's order, so under
# torch.manual_seed(123) it holds the same weights and its full forward, and any cached decoding, gives this
DOC_SEEDED = torch.tensor(
    [[0.3190, 0.4858], [0.2943, 0.3897], [0.2856, 0.3593],
     [0.2693, 0.3873], [0.2639, 0.3928], [0.2575, 0.4028]])
ORDER = "W_query, W_key, W_value, out_proj"
PROJECTIONS = ("W_query", "W_key", "W_value")
# the code parts of the decoding checks' sentences (fields, so that only the words around them are translated)
SEED, BUILT, USE_CACHE = "torch.manual_seed(123)", f"{LAYER}(3, 2, 6, 0.0, num_heads=2)", "use_cache=True"
# kv_cache_bytes: (arguments, bytes) of the notebook's table: a GPT-2 124M-like and a Llama-2 7B-like model
DOC_SIZES = (((12, 12, 64, 1024, 2), 37_748_736), ((32, 32, 128, 4096, 2), 2_147_483_648))
NO_TWO = N_("the factor 2 for keys and values missing (a cache holds both)")
NO_LAYERS = N_("num_layers left out (every layer keeps its own cache)")
BITS = N_("bytes_per_value read as bits (the size divided by 8): it is already a number of bytes per value, "
          "2 for float16 or bfloat16, 4 for float32")
PLAIN_CACHE = N_("the cache kept outside buffers: .to(device) leaves it behind (register cache_k and cache_v in "
                 "__init__ with self.register_buffer(name, None, persistent=False), then assign them)")


def new_cached(student, *args, seed: int, **kwargs):
    return student.new(LAYER, *args, seed=seed, **kwargs)


def own(module, d_in, d_out, num_heads):
    return own_layers(module.params(), d_in, d_out, num_heads)


def expect_decoded(student, sizes, title: str, *, show_passing=False) -> None:
    """torch.manual_seed(123); the worked batch decoded in chunks of `sizes` tokens gives the documented output."""
    module = new_cached(student, 3, 2, 6, 0.0, num_heads=2, seed=123)
    got, _rows = decoded(module, WORKED_BATCH, sizes)
    weights = own(module, 3, 2, 2)
    mistakes = decode_mistakes(weights, WORKED_BATCH, sizes)
    if weights is not None:  # the right decoding with its own weights first: then only the weights differ
        mistakes = {weights_differ(module.params()): decode(weights, WORKED_BATCH, sizes), **mistakes}
    expect_close(got, DOC_SEEDED.expand(2, 6, 2), title, atol=1e-4, mistakes=mistakes,
                 heatmap_labels=(TOKENS, None), show_passing=show_passing)


# ---------------------------------------------------------------- MultiHeadAttentionCached

@check(0.5, "MultiHeadAttentionCached without the cache gives notebook 06's documented seeded output",
       documented=True, cell="MultiHeadAttentionCached")
def test_full_documented(student):
    module = new_cached(student, 3, 2, 6, 0.0, num_heads=2, seed=123)
    got = module(WORKED_BATCH)
    weights = own(module, 3, 2, 2)
    if weights is not None:  # other inputs, with its own weights: a written-out answer gives itself away
        other = randn(901, 2, 6, 3)
        expect_not_hard_coded(LAYER, (got, module(other)), [attend(weights, x) for x in (WORKED_BATCH, other)])
    mistakes = {weights_differ(module.params()): attend(weights, WORKED_BATCH),
                BARE_CACHE: decode(weights, WORKED_BATCH, (6,), bare=True)} if weights is not None else {}
    expect_close(got, DOC_SEEDED.expand(2, 6, 2),
                 "torch.manual_seed(123); MultiHeadAttentionCached(3, 2, 6, 0.0, num_heads=2)(batch)", atol=1e-4,
                 mistakes=mistakes, heatmap_labels=(TOKENS, None))


@check(1.0, "MultiHeadAttentionCached decoding the worked example one token at a time gives the documented output",
       documented=True, cell="MultiHeadAttentionCached")
def test_decode_documented(student):
    expect_decoded(student, (1,) * 6, _f("{seed}; the batch fed to {layer} one token at a time with {flag}, the "
                                         "outputs concatenated", seed=SEED, layer=BUILT, flag=USE_CACHE),
                   show_passing=True)


@check(0.75, "MultiHeadAttentionCached decoding a prompt of four tokens then single tokens gives the documented "
       "output", documented=True, cell="MultiHeadAttentionCached")
def test_prompt_documented(student):
    expect_decoded(student, (4, 1, 1), _f("{seed}; {first}, then {second}, then {third} fed to {layer} with {flag}, "
                                          "the outputs concatenated", seed=SEED, first="batch[:, :4]",
                                          second="batch[:, 4:5]", third="batch[:, 5:]", layer=BUILT, flag=USE_CACHE))


@check(1.0, "MultiHeadAttentionCached projects each token once: W_query, W_key and W_value see only the new tokens",
       visible=True, cell="MultiHeadAttentionCached")
def test_rows_projected(student):
    """The rows each projection is handed per call, counted in the worker (not the wall time): a cache that keeps
    the inputs and projects them all again gives the right outputs, and the work of no cache at all."""
    module = new_cached(student, 4, 6, 8, 0.0, num_heads=2, seed=911)
    x, sizes = randn(912, 2, 5, 4), (2, 1, 1, 1)
    _out, rows = decoded(module, x, sizes, count_rows=PROJECTIONS)
    for step, (size, seen) in enumerate(zip(sizes, rows)):
        for name in PROJECTIONS:
            expect(name in seen and seen[name] > 0,
                   _f("{layer}.{name} was not called as a layer during call {step} with use_cache=True: project "
                      "with self.{name}(x)", layer=LAYER, name=name, step=step + 1))
            expect(seen[name] == 2 * size,
                   _f("call {step} with use_cache=True handed {name} {got} rows for {new} new tokens in each of 2 "
                      "sequences (expected {expected}): this looks like {mistake}", step=step + 1, name=name,
                      got=seen[name], new=size, expected=2 * size, mistake=_(REPROJECTED)), mistake=REPROJECTED)


def alone(student, x, seed: int):
    """x fed with use_cache=True to a new layer built under `seed`: what a layer whose cache is empty answers (the
    cached path, as the layer computes it, so that these checks grade the cache's emptying alone)."""
    return new_cached(student, 4, 6, 8, 0.0, num_heads=3, seed=seed)(x, use_cache=True)


@check(1.0, "MultiHeadAttentionCached.reset_cache empties the cache: the next sequence is decoded as if alone",
       visible=True, cell="MultiHeadAttentionCached")
def test_reset(student):
    module = new_cached(student, 4, 6, 8, 0.0, num_heads=3, seed=921)
    first, second = randn(922, 2, 3, 4), randn(923, 2, 4, 4)
    module(first, use_cache=True)
    module.call_method("reset_cache")
    got = module(second, use_cache=True)
    weights = own(module, 4, 6, 3)
    mistakes = {NOT_RESET: decode(weights, second, (4,), kept=first)} if weights is not None else {}
    expect_close(got, alone(student, second, 921),
                 _("after x1 (2, 3, 4) fed with use_cache=True, then reset_cache(), x2 (2, 4, 4) fed with "
                   "use_cache=True, compared with x2 fed so to a new layer built under the same seed"),
                 mistakes=mistakes, device=student.device)


@check(0.5, "MultiHeadAttentionCached with use_cache=False leaves the cache alone", visible=True,
       cell="MultiHeadAttentionCached")
def test_no_cache_written(student):
    module = new_cached(student, 4, 6, 8, 0.0, num_heads=3, seed=931)
    first, second = randn(932, 2, 3, 4), randn(933, 2, 4, 4)
    module(first)
    got = module(second, use_cache=True)
    weights = own(module, 4, 6, 3)
    mistakes = {WRITTEN_WITHOUT: decode(weights, second, (4,), kept=first)} if weights is not None else {}
    expect_close(got, alone(student, second, 931),
                 _("on a new layer, x1 (2, 3, 4) fed with use_cache=False, then x2 (2, 4, 4) with use_cache=True, "
                   "compared with x2 fed so to a new layer built under the same seed"),
                 mistakes=mistakes, device=student.device)


@check(0.75, "MultiHeadAttentionCached decodes a batch of two different sequences in chunks as its full forward "
       "does", visible=True, cell="MultiHeadAttentionCached")
def test_decode_batch(student):
    """The full forward comes from a second layer built under the same seed (the same weights), so that this check
    grades the cached path alone, whatever a call with use_cache=False does to the cache."""
    x, sizes = randn(942, 2, 9, 5), (3, 2, 1, 3)
    full = new_cached(student, 5, 6, 10, 0.0, num_heads=3, qkv_bias=True, seed=941)(x)
    module = new_cached(student, 5, 6, 10, 0.0, num_heads=3, qkv_bias=True, seed=941)
    got, _rows = decoded(module, x, sizes)
    expect_close(got, full, _("x (2, 9, 5) fed to MultiHeadAttentionCached(5, 6, 10, 0.0, num_heads=3, "
                              "qkv_bias=True) in chunks of 3, 2, 1 and 3 tokens with use_cache=True, compared with "
                              "the forward(x) of the same layer built under the same seed"),
                 mistakes=decode_mistakes(own(module, 5, 6, 3), x, sizes), device=student.device)


@check(0.25, "MultiHeadAttentionCached creates W_query, W_key, W_value and out_proj in the documented order, "
       "honouring qkv_bias", visible=True, cell="MultiHeadAttentionCached")
def test_params(student):
    for qkv_bias in (False, True):
        module = new_cached(student, 5, 6, 8, 0.1, num_heads=3, qkv_bias=qkv_bias, seed=951)
        manual_seed(951)
        layers = {name: torch.nn.Linear(5, 6, bias=qkv_bias) for name in PROJECTIONS}
        layers["out_proj"] = torch.nn.Linear(6, 6)
        expected = {f"{layer}.{kind}": getattr(value, kind) for layer, value in layers.items()
                    for kind in ("weight", "bias") if getattr(value, kind) is not None}
        expect_same_params(module, expected, f"{LAYER}(5, 6, 8, 0.1, num_heads=3, qkv_bias={qkv_bias})", ORDER)


@check(0.25, "MultiHeadAttentionCached raises ValueError when d_out is not divisible by num_heads", visible=True,
       cell="MultiHeadAttentionCached")
def test_heads_error(student):
    expect_raises(lambda: student.new(LAYER, 4, 10, 6, 0.0, num_heads=4, seed=952),
                  "ValueError", "MultiHeadAttentionCached(4, 10, 6, 0.0, num_heads=4), d_out = 10")


@check(0.25, "MultiHeadAttentionCached raises ValueError when the cache would outgrow context_length",
       visible=True, cell="MultiHeadAttentionCached")
def test_context_error(student):
    module = new_cached(student, 4, 6, 4, 0.0, num_heads=2, seed=961)
    module(randn(962, 1, 3, 4), use_cache=True)
    expect_raises(lambda: module(randn(963, 1, 2, 4), use_cache=True), "ValueError",
                  _("MultiHeadAttentionCached(4, 6, context_length=4, ...) holding 3 cached tokens, fed 2 more with "
                    "use_cache=True"))


@check(0.25, "MultiHeadAttentionCached works on any device: no tensor created on the CPU in forward", visible=True,
       cell="MultiHeadAttentionCached")
def test_device(student):
    expect_on_any_device(student, LAYER, 971)


def works_on_meta(module, x) -> bool:
    """Whether x fed with use_cache=True to a copy of the layer moved to the meta device runs there without mixing
    devices (the layer itself is left as it is)."""
    try:
        return not module.run(x, use_cache=True, device="meta").mixed_devices
    except StudentFailure as failure:
        if failure.kind != "raised":
            raise
        return False


@check(0.25, "MultiHeadAttentionCached keeps its cache in buffers: out of state_dict, moved by .to(device)",
       visible=True, cell="MultiHeadAttentionCached")
def test_cache_buffers(student):
    """What the notebook's two buffers give (registered empty, persistent=False): a cached call adds nothing to
    state_dict (a cache is no weight), and a layer moved to another device mid-sequence (here the meta device) takes
    its cache along, so the next cached call meets keys and values on its own device. Only where that call works on
    the layer's own device: how it decodes is the other checks' business."""
    module = new_cached(student, 4, 6, 8, 0.0, num_heads=2, seed=981)
    module.call_method("requires_grad_", False)  # as in generation: a cache outside autograd can be copied
    x = randn(983, 2, 1, 4)
    if not works_on_meta(module, x):
        return  # the forward itself does not follow .to(device): test_device says why
    expect_cache_not_saved(module, LAYER, randn(982, 2, 3, 4))
    what = _f("{layer} holding 3 cached tokens, moved with .to(device) (here the meta device), then fed 1 more token "
              "with {flag}", layer=LAYER, flag=USE_CACHE)
    try:
        reply = module.run(x, use_cache=True, device="meta")  # on a copy of the layer: the layer keeps its cache
    except StudentFailure as failure:
        if failure.kind != "raised":
            raise
        try:
            module(x, use_cache=True)
        except StudentFailure:
            return  # the call fails on the layer's own device too: the decoding checks grade that, not this one
        raise CheckFailed(_f("{what}: {error}\nThis looks like {mistake}", what=what, error=failure.shortened(300),
                             mistake=_(PLAIN_CACHE)), PLAIN_CACHE) from None
    mixed = "; ".join(reply.mixed_devices[:2])
    expect(not mixed, _f("{what}: the forward mixes devices ({mixed}). This looks like {mistake}", what=what,
                         mixed=mixed, mistake=_(PLAIN_CACHE)), mistake=PLAIN_CACHE)


@check(0.25, "MultiHeadAttentionCached: dropout acts in train mode", visible=True, cell="MultiHeadAttentionCached")
def test_train(student):
    """Only that dropout acts in train mode (on the attention weights, as notebook 06's forward)."""
    x = randn(991, 2, 6, 4)
    module = new_cached(student, 4, 6, 8, 0.5, num_heads=2, seed=992)
    what = _f("{layer}(4, 6, 8, dropout=0.5, num_heads=2) in train mode, after torch.manual_seed(6)", layer=LAYER)
    got = module(x, mode="train", seed=6)
    expect_shape(got, (2, 6, 6), what)
    expect_dropout_acts(module, x, got, LAYER, what, 993, NO_TRAIN_DROPOUT, shape=(2, 6, 6),
                        eval_what=_f("{layer}(4, 6, 8, dropout=0.5, num_heads=2) in eval mode", layer=LAYER))


# ---------------------------------------------------------------- kv_cache_bytes

def bytes_of(student, args):
    value = student.call("kv_cache_bytes", *args)
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CheckFailed(_f("kv_cache_bytes{args} returned {value}: return a number of bytes", args=args,
                             value=repr(value)[:80]))
    return value


def expect_bytes(student, cases, what: str) -> None:
    """kv_cache_bytes on each (arguments, expected bytes), the three common slips named."""
    for args, expected in cases:
        got = bytes_of(student, args)
        layers, heads, dim, context, size = args
        slips = {NO_TWO: expected // 2, NO_LAYERS: expected // layers, BITS: expected / 8}
        named = [name for name, wrong in slips.items() if got == wrong and wrong != expected]
        expect(got == expected, _f("{what}: kv_cache_bytes{args} returned {got}, expected {expected}", what=what,
                                   args=args, got=got, expected=expected)
               + (_f(": this looks like {mistake}", mistake=_(named[0])) if named else ""),
               mistake=named[0] if named else "")


@check(0.5, "kv_cache_bytes gives the documented sizes of the notebook's table", documented=True,
       cell="kv_cache_bytes")
def test_bytes_documented(student):
    others = ((3, 5, 7, 11, 4), (2, 3, 5, 13, 2))  # other inputs: a written-out answer gives itself away
    answers = [torch.tensor(float(bytes_of(student, args))) for args, _size in DOC_SIZES[:1]]
    answers += [torch.tensor(float(bytes_of(student, args))) for args in others]
    expected = [torch.tensor(float(DOC_SIZES[0][1]))] + [torch.tensor(2.0 * a * b * c * d * e)
                                                           for a, b, c, d, e in others]
    expect_not_hard_coded("kv_cache_bytes", answers[:1] + answers[1:], expected)
    expect_bytes(student, DOC_SIZES, _("the notebook's table"))


@check(0.75, "kv_cache_bytes counts a key and a value per layer, head, token and feature", visible=True,
       cell="kv_cache_bytes")
def test_bytes_formula(student):
    cases = [((layers, heads, dim, context, size), 2 * layers * heads * dim * context * size)
             for layers, heads, dim, context, size in ((1, 1, 1, 1, 1), (3, 2, 16, 100, 4), (7, 5, 3, 9, 2),
                                                      (24, 8, 128, 32768, 1))]
    expect_bytes(student, cases, _("other sizes"))


@check(0.25, "kv_cache_bytes raises ValueError on an argument that is not positive", visible=True,
       cell="kv_cache_bytes")
def test_bytes_error(student):
    for position, name in enumerate(("num_layers", "num_kv_heads", "head_dim", "context_length", "bytes_per_value")):
        args = [2, 4, 8, 16, 2]
        args[position] = 0 if position % 2 else -1
        expect_raises(lambda args=tuple(args): student.call("kv_cache_bytes", *args), "ValueError",
                      f"kv_cache_bytes{tuple(args)}, {name} = {args[position]}", naming=(name,))
