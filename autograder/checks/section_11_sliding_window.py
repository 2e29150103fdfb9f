"""Checks of section 11 (part 2): sliding-window attention (10 points).

The section's registry entry (SECTION) and its visible checks: sliding_window_mask's documented band for six
tokens and a window of 3, the causal mask where the window covers the sequence, the band at other sizes from its
contract, the ValueError; SlidingWindowAttention's documented seeded outputs (built under torch.manual_seed(123) it
draws notebook 06's weights, so with window 6 it gives 06's output), its forward against the band written out
with its own weights, the KV cache (token by token equal to the whole sequence; never more than `window` tokens,
measured after every call; a prompt longer than the window, then single tokens), parameters, errors, dropout,
gradients and devices. The self-check runs them and the students' wheel ships this module as it is, so nothing
here imports `solutions`. The hidden checks compare with the reference on fresh sizes:
checks/hidden/hidden_11_sliding_window.py.
"""

SECTION = {  # the registry's entry (autograder/core/sections.py reads it without importing this file)
    "title": "Sliding-window attention",
    "solution": "solutions.sliding_window",
    "names": ("sliding_window_mask", "SlidingWindowAttention"),
    "provided": ("solutions.multihead:MultiHeadAttention",),
    "part": 2,
    "rules": {"param_order": ("SlidingWindowAttention",), "device": ("SlidingWindowAttention",),
              "mask_true_hidden": ("sliding_window_mask",)},
}

from itertools import accumulate

import torch

from autograder.checks.common import (TOKENS, WORKED_BATCH, expect_dropout_acts, expect_forward_on_any_device,
                                      expect_gradients, expect_not_hard_coded, expect_output, expect_raises,
                                      manual_seed, meeting, randn, stand_in_table)
from autograder.checks.parameters import (expect_layer_shapes, expect_same_params, weights_differ)
from autograder.checks.multihead_forward import own_layers
from autograder.checks.multihead_mistakes import EVAL_DROPOUT, NO_TRAIN_DROPOUT
from autograder.checks.window_forward import KINDS, LAYER_KINDS, band, decode_mistakes, size_mistake, windowed
from autograder.core.harness import CheckFailed, StudentFailure, check, expect, expect_close
from autograder.i18n import N_, _, _f

# sliding_window_mask(6, 3): query i sees keys i - 3 < j <= i (True = hidden)
DOC_MASK = torch.tensor(
    [[False, True, True, True, True, True],
     [False, False, True, True, True, True],
     [False, False, False, True, True, True],
     [True, False, False, False, True, True],
     [True, True, False, False, False, True],
     [True, True, True, False, False, False]])
# torch.manual_seed(123); SlidingWindowAttention(3, 2, 6, 0.0, num_heads=2, window=3)(batch), each item
DOC_WINDOW_3 = torch.tensor(
    [[0.3190, 0.4858], [0.2943, 0.3897], [0.2856, 0.3593],
     [0.2530, 0.3552], [0.2432, 0.3942], [0.2298, 0.4474]])
# with window=6 the window covers the sequence: notebook 06's documented MultiHeadAttention output
DOC_CAUSAL = torch.tensor(
    [[0.3190, 0.4858], [0.2943, 0.3897], [0.2856, 0.3593],
     [0.2693, 0.3873], [0.2639, 0.3928], [0.2575, 0.4028]])
WROTE_CACHE = N_("forward without use_cache wrote the cache")
ORDER = "W_query, W_key, W_value (Linear(d_in, d_out, bias=qkv_bias)), out_proj (Linear(d_out, d_out))"
NAME = "SlidingWindowAttention"


MASK_PARAMS = ("num_tokens", "window")  # sliding_window_mask's, in the contract's order


def right_masks(*windows) -> dict:
    """sliding_window_mask's answers at any num_tokens for each of `windows`, computed in the worker from its
    contract (True on and below the diagonal, kept within window - 1 of it, then negated: True = hidden): what the
    layer's checks hand a layer that calls the student's own (Student.standing_in, `meeting`), so that a wrong
    sliding_window_mask costs its own checks only. A window below 1 has no row: the student's own raises."""
    steps = [["square_of_true", []], ["on_and_below_diagonal", []], ["near_diagonal", ["window"]], ["negated", []]]
    band_of = {"of": "num_tokens", "steps": steps}
    return {"sliding_window_mask": stand_in_table(MASK_PARAMS, [({"window": window}, band_of) for window in windows])}


# every window the layer's checks, visible and hidden, build a layer with
LAYER_MASKS = right_masks(*range(1, 9))


def mask_mistakes(num_tokens: int, window: int) -> dict:
    return {mistake: band(num_tokens, num_tokens, window, kind) for kind, mistake in KINDS.items() if mistake}


def expect_mask(got, num_tokens: int, window: int, **picture) -> None:
    what = f"sliding_window_mask({num_tokens}, {window})"
    expect(not isinstance(got, torch.Tensor) or got.dtype == torch.bool,
           _f("{what} should be a bool tensor (True = hidden), got {dtype}", what=what,
              dtype=getattr(got, "dtype", "")))
    expect_close(got, band(num_tokens, num_tokens, window), what, mistakes=mask_mistakes(num_tokens, window),
                 **picture)


# ---------------------------------------------------------------- sliding_window_mask (3 points, 0.5 hidden)

@check(0.75, "sliding_window_mask gives the documented band for six tokens and a window of 3", documented=True,
       cell="sliding_window_mask")
def test_mask_documented(student):
    got, other = student.call("sliding_window_mask", 6, 3), student.call("sliding_window_mask", 7, 3)
    expect_not_hard_coded("sliding_window_mask", (got, other), (DOC_MASK, band(7, 7, 3)))
    expect_mask(got, 6, 3, heatmap_labels=TOKENS, show_passing=True)
    expect(torch.equal(got, DOC_MASK), _("sliding_window_mask(6, 3) differs from the documented band"))


@check(0.5, "sliding_window_mask is the causal mask when the window covers the sequence", visible=True,
       cell="sliding_window_mask")
def test_mask_causal(student):
    for num_tokens, window in ((5, 5), (4, 9)):
        got = student.call("sliding_window_mask", num_tokens, window)
        causal = torch.ones(num_tokens, num_tokens, dtype=torch.bool).triu(1)
        expect_close(got, causal, _f("sliding_window_mask({num_tokens}, {window}), a window of at least "
                                     "num_tokens: the causal mask", num_tokens=num_tokens, window=window),
                     mistakes=mask_mistakes(num_tokens, window), heatmap_labels=True)


@check(1.0, "sliding_window_mask hides j > i and j <= i - window at other sizes", visible=True,
       cell="sliding_window_mask")
def test_mask_sizes(student):
    sizes = ((7, 2), (9, 4), (4, 1))
    answers = [student.call("sliding_window_mask", num_tokens, window) for num_tokens, window in sizes]
    for got, (num_tokens, window) in zip(answers, sizes):
        expect_mask(got, num_tokens, window, heatmap_labels=True)


@check(0.25, "sliding_window_mask raises ValueError when window < 1", visible=True, cell="sliding_window_mask")
def test_mask_error(student):
    for window in (0, -2):
        expect_raises(lambda window=window: student.call("sliding_window_mask", 5, window), "ValueError",
                      f"sliding_window_mask(5, {window})")


# ---------------------------------------------------------------- SlidingWindowAttention (7 points, 1 hidden)

def new_layer(student, d_in, d_out, context_length, dropout, *, num_heads, window, **kwargs):
    """The student's layer, its projections' shapes checked before any forward runs."""
    module = student.new(NAME, d_in, d_out, context_length, dropout, num_heads=num_heads, window=window, **kwargs)
    expect_layer_shapes(module, NAME, d_in, d_out)
    return module


def expect_documented(student, window: int, expected: torch.Tensor, other_seed: int, show_passing=False) -> None:
    module = new_layer(student, 3, 2, 6, 0.0, num_heads=2, window=window, seed=123)
    got = module(WORKED_BATCH)
    own = own_layers(module.params(), 3, 2, 2)
    mistakes = {}
    if own is not None:
        other = randn(other_seed, 2, 6, 3)
        expect_not_hard_coded(NAME, (got, module(other)), [windowed(own, x, window) for x in (WORKED_BATCH, other)])
        mistakes = {weights_differ(module.params()): windowed(own, WORKED_BATCH, window)}
        mistakes.update({m: windowed(own, WORKED_BATCH, window, kind) for kind, m in LAYER_KINDS.items() if m})
    expect_close(got, expected.expand(2, 6, 2),
                 f"torch.manual_seed(123); {NAME}(3, 2, 6, 0.0, num_heads=2, window={window})(batch)", atol=1e-4,
                 mistakes=mistakes, heatmap_labels=(TOKENS, None), show_passing=show_passing)


@check(0.75, "SlidingWindowAttention gives the documented seeded output with a window of 3", documented=True,
       cell="SlidingWindowAttention")
@meeting(LAYER_MASKS)
def test_layer_documented(student):
    expect_documented(student, 3, DOC_WINDOW_3, 1101, show_passing=True)


@check(0.5, "SlidingWindowAttention with a window covering the sequence gives notebook 06's output",
       documented=True, cell="SlidingWindowAttention")
@meeting(LAYER_MASKS)
def test_layer_covers(student):
    expect_documented(student, 6, DOC_CAUSAL, 1102)


def own_of(module, d_in: int, d_out: int, num_heads: int):
    """The layer's own weights as functions (multihead_forward.own_layers); CheckFailed where they are missing."""
    own = own_layers(module.params(), d_in, d_out, num_heads)
    expect(own is not None, _f("{name} should have the parameters {order}, named so, to be compared with the band "
                               "written out", name=NAME, order=ORDER))
    return own


@check(0.75, "SlidingWindowAttention equals the band written out with its own weights, batch of two",
       visible=True, cell="SlidingWindowAttention")
@meeting(LAYER_MASKS)
def test_layer_equals_band(student):
    x = randn(1111, 2, 9, 6)
    module = new_layer(student, 6, 4, 12, 0.0, num_heads=2, window=4, qkv_bias=True, seed=1112)
    own = own_of(module, 6, 4, 2)
    got = module(x)
    expect_output(got, (2, 9, 4), _f("{name}(6, 4, 12, 0.0, num_heads=2, window=4, qkv_bias=True) on a (2, 9, 6) input",
                                     name=NAME))
    expect_close(got, windowed(own, x, 4), _f("{name}(6, 4, 12, 0.0, num_heads=2, window=4, qkv_bias=True)(x), "
                                              "compared with the band mask written out with its own weights",
                                              name=NAME),
                 mistakes={m: windowed(own, x, 4, kind) for kind, m in LAYER_KINDS.items() if m}, device=student.device)


def run_cached(module, x, sizes, d_out: int) -> tuple:
    """reset_cache(), then x fed in pieces of `sizes` tokens with use_cache=True: (the outputs concatenated, the
    cache's token count after each piece, read from cache_k's dim 2)."""
    module.call_method("reset_cache")
    outputs, cached, start = [], [], 0
    for size in sizes:
        out = module(x[:, start:start + size], use_cache=True)
        expect_output(out, (x.shape[0], size, d_out),
                      _f("{name}(..., use_cache=True) on {size} new tokens", name=NAME, size=size))
        outputs.append(out)
        cached.append(cache_tokens(module))
        start += size
    return torch.cat(outputs, dim=1), cached


def cache_tokens(module):
    """How many tokens cache_k holds (its dim 2), None where it is None; CheckFailed where it is missing."""
    shapes = module.tensor_shapes()
    shapes = shapes if isinstance(shapes, dict) else {}
    expect("cache_k" in shapes and "cache_v" in shapes,
           _f("{name} has no attributes cache_k and cache_v: keep the cache in them, as the notebook says",
              name=NAME))
    shape = shapes["cache_k"]
    if shape is None:
        return None
    expect(isinstance(shape, list) and len(shape) == 4 and all(isinstance(n, int) for n in shape),
           _f("{name}.cache_k should be (b, num_heads, tokens, head_dim); got the shape {shape}", name=NAME,
              shape=shape))
    return shape[2]


def expect_decoded(student, seed: int, sizes, window: int, measure_sizes: bool) -> None:
    """x fed in pieces of `sizes` tokens with the cache gives the layer's own output on the whole sequence (the
    cache graded alone: the forward's values are the other checks'); where asked, the cache's size after each."""
    x = randn(seed, 2, sum(sizes), 4)
    module = new_layer(student, 4, 4, 32, 0.0, num_heads=2, window=window, seed=seed + 1)
    before = held_cache(module)
    whole = module(x)
    expect_output(whole, (2, sum(sizes), 4), f"{NAME}(4, 4, 32, 0.0, num_heads=2, window={window})")
    expect_cache_left(module, before, f"{NAME}(4, 4, 32, 0.0, num_heads=2, window={window})(x)")
    got, cached = run_cached(module, x, sizes, 4)
    own = own_layers(module.params(), 4, 4, 2)
    expect_close(got, whole, _f("{name}(4, 4, 32, 0.0, num_heads=2, window={window}) fed in pieces of {sizes} tokens "
                                "with use_cache=True, compared with its output on the whole sequence at once",
                                name=NAME, window=window, sizes=list(sizes)),
                 mistakes=decode_mistakes(own, x, window, sizes) if own is not None else {}, device=student.device)
    if measure_sizes:
        expect_cache_sizes(cached, [min(window, n) for n in accumulate(sizes)], sizes, window)


def held_cache(module):
    """cache_k's shape, None where it is None or missing (a layer may first set it in its first cached forward)."""
    shapes = module.tensor_shapes()
    return shapes.get("cache_k") if isinstance(shapes, dict) else None


def expect_cache_left(module, before, call: str) -> None:
    """A forward without use_cache leaves the cache as it found it (`before`: held_cache then)."""
    after = held_cache(module)
    expect(after == before, _f("{mistake}: {call} without use_cache changed cache_k from {before} to {after}; only a "
                               "forward with use_cache=True may write the cache", mistake=_(WROTE_CACHE),
                               call=call, before=before, after=after), mistake=WROTE_CACHE)


def expect_cache_sizes(cached, right, sizes, window: int) -> None:
    named = size_mistake(cached, right)
    expect(cached == right, _f("after calls on {sizes} tokens with window={window}, cache_k held {got} tokens; it "
                               "should hold the last min(window, tokens seen) = {right}{named}", sizes=list(sizes),
                               window=window, got=cached, right=right,
                               named=_f(": this looks like {mistake}", mistake=_(named)) if named else ""),
           mistake=named)


@check(0.75, "SlidingWindowAttention: token by token with the cache equals the whole sequence", visible=True,
       cell="SlidingWindowAttention")
@meeting(LAYER_MASKS)
def test_layer_decoding(student):
    expect_decoded(student, 1121, [1] * 8, 3, measure_sizes=False)


@check(1.0, "SlidingWindowAttention: the cache never holds more than window tokens, whatever the length",
       visible=True, cell="SlidingWindowAttention")
@meeting(LAYER_MASKS)
def test_layer_cache_bounded(student):
    x = randn(1131, 2, 20, 4)
    module = new_layer(student, 4, 4, 32, 0.0, num_heads=2, window=3, seed=1132)
    _outputs, cached = run_cached(module, x, [1] * 20, 4)
    expect_cache_sizes(cached, [min(3, step) for step in range(1, 21)], [1] * 20, 3)
    module.call_method("reset_cache")
    expect(cache_tokens(module) is None, _f("after reset_cache(), {name}.cache_k should be None", name=NAME))


@check(0.75, "SlidingWindowAttention: a prompt longer than the window, then single tokens", visible=True,
       cell="SlidingWindowAttention")
@meeting(LAYER_MASKS)
def test_layer_prompt(student):
    expect_decoded(student, 1141, [5, 1, 1, 1], 3, measure_sizes=True)


@check(0.25, "SlidingWindowAttention creates its layers in notebook 06's order, honouring qkv_bias", visible=True,
       cell="SlidingWindowAttention")
@meeting(LAYER_MASKS)
def test_layer_params(student):
    for qkv_bias in (False, True):
        module = new_layer(student, 5, 6, 8, 0.1, num_heads=3, window=2, qkv_bias=qkv_bias, seed=1151)
        manual_seed(1151)
        layers = {name: torch.nn.Linear(5, 6, bias=qkv_bias) for name in ("W_query", "W_key", "W_value")}
        layers["out_proj"] = torch.nn.Linear(6, 6)
        expected = {f"{layer}.{kind}": getattr(value, kind) for layer, value in layers.items()
                    for kind in ("weight", "bias") if getattr(value, kind) is not None}
        expect_same_params(module, expected, f"{NAME}(5, 6, 8, 0.1, num_heads=3, window=2, qkv_bias={qkv_bias})",
                           ORDER)


@check(0.25, "SlidingWindowAttention raises ValueError when window < 1 or num_heads does not divide d_out",
       visible=True, cell="SlidingWindowAttention")
@meeting(LAYER_MASKS)
def test_layer_error(student):
    expect_raises(lambda: student.new(NAME, 4, 4, 6, 0.0, num_heads=2, window=0, seed=1161), "ValueError",
                  f"{NAME}(4, 4, 6, 0.0, num_heads=2, window=0)")
    expect_raises(lambda: student.new(NAME, 4, 10, 6, 0.0, num_heads=4, window=2, seed=1162), "ValueError",
                  f"{NAME}(4, 10, 6, 0.0, num_heads=4, window=2)")
    smallest = f"{NAME}(4, 4, 6, 0.0, num_heads=2, window=1)"
    try:  # the smallest window is allowed: each token then sees itself only
        student.new(NAME, 4, 4, 6, 0.0, num_heads=2, window=1, seed=1163)
    except StudentFailure as failure:
        if failure.kind != "raised":
            raise
        raise CheckFailed(_f("{call} raised {error}; window=1 is allowed (each token sees itself only): raise "
                             "ValueError only when window < 1", call=smallest, error=failure.shortened(300))) from None


@check(0.25, "SlidingWindowAttention: eval mode disables dropout", visible=True, cell="SlidingWindowAttention")
@meeting(LAYER_MASKS)
def test_layer_eval(student):
    x = randn(1171, 2, 6, 4)
    expected = new_layer(student, 4, 2, 6, 0.0, num_heads=2, window=3, seed=1172)(x)
    expect_output(expected, (2, 6, 2), _f("{name}(4, 2, 6, 0.0, num_heads=2, window=3) in eval mode", name=NAME))
    module = new_layer(student, 4, 2, 6, 0.5, num_heads=2, window=3, seed=1172)
    for draw in (5, 6):
        expect_close(module(x, seed=draw), expected,
                     _f("{name}(4, 2, 6, dropout=0.5, window=3) in eval mode, compared with the same layer built "
                        "with dropout=0.0", name=NAME), device=student.device,
                     hint=_f("In eval mode the output must not depend on the dropout rate: {advice}?",
                             advice=_(EVAL_DROPOUT)))


@check(0.25, "SlidingWindowAttention: dropout acts in train mode", visible=True, cell="SlidingWindowAttention")
@meeting(LAYER_MASKS)
def test_layer_train(student):
    """Only that dropout acts in train mode: the forward's values are the other checks'."""
    x = randn(1175, 2, 6, 4)
    module = new_layer(student, 4, 2, 6, 0.5, num_heads=2, window=3, seed=1176)
    what = _f("{name}(4, 2, 6, dropout=0.5, num_heads=2, window=3) in train mode, after torch.manual_seed(6)",
              name=NAME)
    got = module(x, mode="train", seed=6)
    expect_output(got, (2, 6, 2), what)
    expect_dropout_acts(module, x, got, NAME, what, 1177, NO_TRAIN_DROPOUT)


@check(0.25, "SlidingWindowAttention: gradients reach every parameter", visible=True, cell="SlidingWindowAttention")
@meeting(LAYER_MASKS)
def test_layer_gradients(student):
    x, grad_output = randn(1181, 2, 5, 4), randn(1182, 2, 5, 2)
    module = new_layer(student, 4, 2, 6, 0.0, num_heads=2, window=2, qkv_bias=True, seed=1183)
    params = module.params()
    reply = module.run(x, mode="train", backward=grad_output)
    expect_gradients(reply, list(params or {}), f"{NAME}(4, 2, 6, 0.0, num_heads=2, window=2, qkv_bias=True)",
                     unused=_("is it used in forward? out_proj must be applied to the combined heads"))


@check(0.25, "SlidingWindowAttention works on any device: no tensor created on the CPU in forward", visible=True,
       cell="SlidingWindowAttention")
@meeting(LAYER_MASKS)
def test_layer_device(student):
    x = randn(1191, 2, 5, 4)
    module = new_layer(student, 4, 2, 6, 0.0, num_heads=2, window=2, seed=1192)
    expect_output(module(x), (2, 5, 2), f"{NAME}(4, 2, 6, 0.0, num_heads=2, window=2)")
    advice = _("a tensor created on the CPU inside forward (e.g. torch.arange(T) for the band) does not follow "
               ".to(device): create it with device=x.device")
    expect_forward_on_any_device(module, x, NAME, (2, 5, 2), advice,
                                 calls=({"use_cache": False}, {"use_cache": True}))
