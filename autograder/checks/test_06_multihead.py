"""Hidden checks of section 06: split into heads, attend, rebuild (7.5 of the section's 10 points).

The 2.5 documented points are checked in visible/test_06_multihead.py.

The seeded-value checks compare with the reference. The property checks (causality, padding,
dropout, gradients, batch items) judge the student's module against itself where they can, so
that one mistake in the attention maths costs the value checks, not every check; where they do
compare with the reference, they do it only once the plain forward pass matches it.
"""

SECTION = {  # the registry's entry (autograder/core/sections.py reads it without importing this file)
    "title": "Split into heads, attend, rebuild",
    "solution": "solutions.multihead",
    "names": ("split_heads", "combine_heads", "MultiHeadAttentionWrapper", "MultiHeadAttention"),
    "forbidden": "attention",
    "forbidden_in": ("MultiHeadAttentionWrapper", "MultiHeadAttention"),
    "provided": ("solutions.causal_mask:CausalAttention",),
    "uses_meta": True,
}

import math

import torch

from autograder.checks.common import (expect_grads, expect_no_loop, expect_raises, expect_same_params, expect_unchanged,
                                      randn, reference_grads, seeded)
from autograder.checks.visible.test_06_multihead import BARE_SPLIT, BARE_SPLIT_IN_FORWARD, NamingViews, named_view_error
from autograder.core.harness import (CheckFailed, StudentFailure, check, close, differs_from_mistakes, expect,
                                expect_close, expect_shape)
from autograder.worker.wire import TensorStub
from solutions import multihead as ref

MHA_ORDER = "W_query, W_key, W_value (Linear(d_in, d_out, bias=qkv_bias)), out_proj (Linear(d_out, d_out))"
NO_SWAP_BACK = "a bare reshape to (B, T, H*hd) without swapping H and T back"
EVAL_DROPOUT = ("dropout active in eval mode (F.dropout defaults to training=True; use the self.dropout "
                "module, which eval() switches off)")
NO_TRAIN_DROPOUT = "no dropout applied in train mode (apply self.dropout to the attention weights)"
INVERSE_HINT = ("The two functions must undo each other: split_heads reshapes then swaps T and H, "
                "combine_heads swaps them back then reshapes")


# ---------------------------------------------------------------- the reference, with common mistakes
@torch.no_grad()
def attend(module, x, *, scale_by=None, bare_split=False, bare_combine=False, out_proj=True,
           causal=True, diagonal=1, padding=None, fill=float("-inf")):
    """The reference module's forward written out, with switches that reproduce common mistakes.

    scale_by: divide the scores by sqrt(scale_by) (default head_dim; 1 = unscaled).
    bare_split / bare_combine: a view to (B, H, T, hd) without the transpose, and back.
    diagonal: 1 for the causal mask, 0 to hide the diagonal too.
    padding: (mask, how), how in "keys", "inverted", "queries", "instead" (of the causal mask).
    fill: -inf or -1e9; they differ only on rows where every key is hidden.
    """
    b, t, _ = x.shape
    h, hd = module.num_heads, module.head_dim

    def split(y):
        return y.reshape(b, h, t, hd) if bare_split else y.reshape(b, t, h, hd).transpose(1, 2)

    queries, keys, values = split(module.W_query(x)), split(module.W_key(x)), split(module.W_value(x))
    scores = queries @ keys.transpose(-2, -1)  # (b, h, t, t)
    hidden = torch.zeros(t, t, dtype=torch.bool)
    if causal:
        hidden = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=diagonal)
    if padding is not None:
        mask, how = padding
        if how == "keys":
            hidden = hidden | mask[:, None, None, :]
        elif how == "inverted":
            hidden = hidden | ~mask[:, None, None, :]
        elif how == "queries":
            hidden = hidden | mask[:, None, :, None]
        elif how == "instead":
            hidden = mask[:, None, None, :].expand(b, 1, t, t)
    scores = scores.masked_fill(hidden, fill)
    weights = torch.softmax(scores / math.sqrt(scale_by or hd), dim=-1)
    context = weights @ values  # (b, h, t, hd)
    context = context.reshape(b, t, h * hd) if bare_combine else context.transpose(1, 2).reshape(b, t, h * hd)
    return module.out_proj(context) if out_proj else context


@torch.no_grad()
def reference_output(reference, x, *, train_seed=None, **kwargs):
    """The reference's forward; with train_seed, in train mode right after torch.manual_seed(train_seed)."""
    reference.train(train_seed is not None)
    if train_seed is not None:
        torch.manual_seed(train_seed)
    out = reference(x, **kwargs)
    reference.eval()
    return out


def fill_of(got):
    """-inf if the student's output has NaN (rows with every key hidden), else -1e9."""
    if isinstance(got, torch.Tensor) and got.is_floating_point() and bool(torch.isnan(got).any()):
        return float("-inf")
    return -1e9


def matches(got, expected, device="cpu") -> bool:
    return isinstance(got, torch.Tensor) and got.dtype == expected.dtype and close(got, expected, device)


def expect_matches(got, expected, what, mistakes=dict, device="cpu", **kwargs):
    """expect_close, building the outputs of the common mistakes only when `got` is wrong."""
    if not matches(got, expected, device):
        expect_close(got, expected, what, mistakes=mistakes(), device=device, **kwargs)


def mha_mistakes(module, x, got):
    fill = fill_of(got)
    return {
        "scores scaled by sqrt(d_out) instead of sqrt(head_dim)": attend(module, x, scale_by=module.d_out, fill=fill),
        "unscaled scores (divide by sqrt(head_dim))": attend(module, x, scale_by=1, fill=fill),
        BARE_SPLIT_IN_FORWARD: attend(module, x, bare_split=True, fill=fill),
        "a bare view to (B, H, T, head_dim) when splitting heads and when combining them "
        "(tokens and heads get mixed)": attend(module, x, bare_split=True, bare_combine=True, fill=fill),
        "combining heads without swapping H and T back first": attend(module, x, bare_combine=True, fill=fill),
        "no out_proj applied to the combined heads": attend(module, x, out_proj=False, fill=fill),
        "the diagonal masked too (a token must see itself)": attend(module, x, diagonal=0, fill=fill),
        "no causal mask (every token sees the future)": attend(module, x, causal=False, fill=fill),
    }


def new_mha(student, *args, **kwargs):
    """The student's MultiHeadAttention, whose forward names a bare .view of a transposed tensor."""
    return NamingViews(student.new("MultiHeadAttention", *args, **kwargs))


def expect_output(out, shape, what):
    """A tensor of `shape` that differs between batch items (their inputs differ): a property check
    earns nothing for a function that ignores its input."""
    expect_shape(out, shape, what)
    expect(not close(out[0], out[1]),
           f"{what}: every batch item gave the same output, though their inputs differ; "
           "the output must depend on the input")


# ---------------------------------------------------------------- split_heads / combine_heads (1.75 points)
@check(0.75, "split_heads matches the reference on new (B, T, D) inputs")
def test_split_heads_random(student):
    x = randn(601, 3, 5, 12)
    reply = student.run("split_heads", x, 4, return_args=True)
    expect_close(reply.value, ref.split_heads(x, 4), "split_heads(x, 4) on a (3, 5, 12) input",
                 mistakes={BARE_SPLIT: x.reshape(3, 4, 5, 3),
                           "head h taking every H-th feature instead of the block [h*hd, (h+1)*hd)":
                           x.reshape(3, 5, 3, 4).permute(0, 3, 1, 2)})
    expect_unchanged(reply, [x], "split_heads")


@check(0.25, "split_heads raises ValueError when D is not divisible by num_heads")
def test_split_heads_error(student):
    x = randn(602, 2, 3, 10)
    expect_raises(lambda: student.call("split_heads", x, 3), "ValueError", "split_heads(x, 3) with D = 10")


@check(0.5, "combine_heads(split_heads(x)) == x and split_heads(combine_heads(y)) == y")
def test_combine_inverse(student):
    x = randn(603, 2, 7, 12)
    heads = student.call("split_heads", x, 3)
    expect_shape(heads, (2, 3, 7, 4), "split_heads(x, 3) for x of shape (2, 7, 12)")
    # heads travel in the non-contiguous memory layout split_heads' transpose gives them (a bare
    # view after the transpose works there; the next check is the one about contiguous heads)
    back = student.run("combine_heads", heads, noncontiguous=True).value
    expect_close(back, x, "combine_heads(split_heads(x, 3)) for x of shape (2, 7, 12)",
                 mistakes={NO_SWAP_BACK: heads.reshape(2, 7, 12)}, hint=INVERSE_HINT)
    y = randn(604, 2, 4, 5, 3)
    merged = student.run("combine_heads", y, noncontiguous=True).value
    expect_shape(merged, (2, 5, 12), "combine_heads(y) for y of shape (2, 4, 5, 3)")
    expect_close(student.call("split_heads", merged, 4), y,
                 "split_heads(combine_heads(y), 4) for y of shape (2, 4, 5, 3)", hint=INVERSE_HINT)


@check(0.25, "combine_heads works on a contiguous (B, H, T, hd) tensor such as attention output")
def test_combine_contiguous(student):
    y = randn(605, 3, 2, 6, 4)
    try:
        got = student.call("combine_heads", y)
    except StudentFailure as failure:
        raise named_view_error(failure) from None
    expect_close(got, ref.combine_heads(y), "combine_heads on a contiguous (3, 2, 6, 4) input",
                 mistakes={NO_SWAP_BACK: y.reshape(3, 6, 8)})


# ---------------------------------------------------------------- MultiHeadAttentionWrapper (0.5 points)
@check(0.5, "MultiHeadAttentionWrapper matches the reference at other sizes, heads in order")
def test_wrapper_random(student):
    x = randn(611, 2, 5, 4)
    module = student.new("MultiHeadAttentionWrapper", 4, 3, 7, 0.0, num_heads=3, qkv_bias=True, seed=61)
    reference = seeded(ref.MultiHeadAttentionWrapper, 4, 3, 7, 0.0, num_heads=3, qkv_bias=True, seed=61)
    with torch.no_grad():
        outputs = [head(x) for head in reference.heads]

    @torch.no_grad()
    def mistakes():
        without_bias = seeded(ref.MultiHeadAttentionWrapper, 4, 3, 7, 0.0, num_heads=3, seed=61)
        return {"the heads concatenated in reverse order": torch.cat(outputs[::-1], dim=-1),
                "qkv_bias not passed on to the CausalAttention heads": without_bias(x),
                "the heads concatenated along the token dim instead of the last dim": torch.cat(outputs, dim=1)}

    expect_matches(module(x), torch.cat(outputs, dim=-1),
                   "MultiHeadAttentionWrapper(4, 3, 7, 0.0, num_heads=3, qkv_bias=True)(x) with "
                   "torch.manual_seed(61): expected shape (B, T, num_heads * d_out)",
                   mistakes=mistakes, device=student.device)


# ---------------------------------------------------------------- MultiHeadAttention values (1.75 points)
@check(0.75, "MultiHeadAttention matches the seeded reference at other sizes")
def test_mha_random(student):
    x = randn(621, 2, 7, 5)
    module = new_mha(student, 5, 6, 8, 0.0, num_heads=3, seed=71)
    reference = seeded(ref.MultiHeadAttention, 5, 6, 8, 0.0, num_heads=3, seed=71)
    got = module(x)
    expect_matches(got, attend(reference, x), "MultiHeadAttention(5, 6, 8, 0.0, num_heads=3)(x) with "
                   "torch.manual_seed(71), x of shape (2, 7, 5)",
                   mistakes=lambda: mha_mistakes(reference, x, got), device=student.device)


@check(0.25, "MultiHeadAttention creates its parameters in the documented order")
def test_mha_params(student):
    module = new_mha(student, 5, 6, 8, 0.1, num_heads=3, qkv_bias=True, seed=72)
    reference = seeded(ref.MultiHeadAttention, 5, 6, 8, 0.1, num_heads=3, qkv_bias=True, seed=72)
    expect_same_params(module, reference, "MultiHeadAttention", MHA_ORDER)


@check(0.25, "MultiHeadAttention raises ValueError when d_out is not divisible by num_heads")
def test_mha_error(student):
    expect_raises(lambda: student.new("MultiHeadAttention", 4, 10, 6, 0.0, num_heads=4, seed=73),
                  "ValueError", "MultiHeadAttention(4, 10, 6, 0.0, num_heads=4), d_out = 10")


@check(0.5, "MultiHeadAttention with qkv_bias equals nn.MultiheadAttention with the same weights")
def test_mha_equals_torch(student):
    x = randn(631, 2, 6, 8)
    reference = seeded(ref.MultiHeadAttention, 8, 8, 6, 0.0, num_heads=2, qkv_bias=True, seed=91)
    with torch.no_grad():  # equal to nn.MultiheadAttention with these weights: the project's tests show it
        expected = reference(x)

    @torch.no_grad()
    def mistakes():
        without_bias = seeded(ref.MultiHeadAttention, 8, 8, 6, 0.0, num_heads=2, seed=91)
        return {"qkv_bias ignored (W_query, W_key, W_value built without bias)": without_bias(x),
                "out_proj built without bias (nn.MultiheadAttention's has one)": expected - reference.out_proj.bias}

    module = new_mha(student, 8, 8, 6, 0.0, num_heads=2, qkv_bias=True, seed=91)
    expect_matches(module(x), expected,
                   "MultiHeadAttention(8, 8, 6, 0.0, num_heads=2, qkv_bias=True)(x) with torch.manual_seed(91), "
                   "which equals nn.MultiheadAttention(8, 2, batch_first=True) with the same weights and a "
                   "causal attn_mask", mistakes=mistakes, device=student.device)


# ---------------------------------------------------------------- MultiHeadAttention properties (3.5 points)
@check(0.5, "key_padding_mask hides padded keys on top of the causal mask")
def test_mha_padding(student):
    x = randn(641, 3, 6, 4)
    padding = torch.zeros(3, 6, dtype=torch.bool)
    padding[1, 4:] = True  # a sequence of 4 tokens padded to 6
    padding[2, [1, 4]] = True  # hidden keys between real ones: later queries must not see them either
    module = new_mha(student, 4, 6, 6, 0.0, num_heads=2, seed=101)
    reference = seeded(ref.MultiHeadAttention, 4, 6, 6, 0.0, num_heads=2, seed=101)
    what = "MultiHeadAttention(4, 6, 6, 0.0, num_heads=2)(x, key_padding_mask=mask)"
    got = module(x, key_padding_mask=padding)
    expect_output(got, (3, 6, 6), what)

    def mistakes():
        fill = fill_of(got)
        return {
            "the padding mask inverted (True must mean hidden, False a real token)":
                attend(reference, x, padding=(padding, "inverted"), fill=fill),
            "the key_padding_mask ignored": attend(reference, x, fill=fill),
            "padding hidden on the query side (mask[:, None, :, None]) instead of the keys":
                attend(reference, x, padding=(padding, "queries"), fill=fill),
            "the key_padding_mask applied without the causal mask":
                attend(reference, x, padding=(padding, "instead"), fill=fill),
        }

    def fail(message):
        named = differs_from_mistakes(got, mistakes(), student.device)
        raise CheckFailed(f"{message}. This looks like {named}" if named else
                          f"{message}. Hide key j for every query where mask[b, j] is True: "
                          "mask[:, None, None, :], combined (|) with the causal mask", named or "")

    # 1. a hidden key's token changes no output but its own
    changed = x.clone()
    changed[padding] = randn(642, int(padding.sum()), 4, scale=3.0)
    after = module(changed, key_padding_mask=padding)
    expect_output(after, (3, 6, 6), what)
    if not close(after[~padding], got[~padding], student.device):
        fail(f"{what}: changing the tokens at hidden (True) positions changed the outputs of the other tokens")
    # 2. the causal mask still applies
    later = x.clone()
    later[:, 5] = randn(643, 3, 4, scale=3.0)
    after = module(later, key_padding_mask=padding)
    expect_output(after, (3, 6, 6), what)
    if not close(after[:, :5], got[:, :5], student.device):
        fail(f"{what}: changing token 5 changed the outputs of tokens 0-4")
    # 3. where the plain forward matches the reference, the padded one must too
    if matches(module(x), reference_output(reference, x), student.device):
        expected = reference_output(reference, x, key_padding_mask=padding)
        if not matches(got, expected, student.device):
            fail(f"{what}: wrong values, while the outputs without a mask are right")


@check(0.5, "causality: changing later tokens leaves earlier outputs unchanged")
def test_mha_causal(student):
    x = randn(651, 2, 8, 4)
    changed = x.clone()
    changed[:, 5:] = randn(652, 2, 3, 4, scale=3.0)
    module = new_mha(student, 4, 6, 8, 0.0, num_heads=3, seed=111)
    before, after = module(x), module(changed)
    for out in (before, after):
        expect_output(out, (2, 8, 6), "MultiHeadAttention(4, 6, 8, 0.0, num_heads=3) on a (2, 8, 4) input")
    expect_close(after[:, :5], before[:, :5], "the outputs of tokens 0-4 after tokens 5-7 changed",
                 device=student.device,
                 hint="They changed, so the future leaks into the past: no causal mask? Hide the scores strictly "
                      "above the diagonal in every head")
    expect(not close(after[:, 5:], before[:, 5:]),
           "the outputs of tokens 5-7 did not change when those tokens changed: the output must depend on them")


@check(0.5, "eval mode disables dropout")
def test_mha_eval(student):
    x = randn(661, 2, 6, 4)
    module = new_mha(student, 4, 6, 6, 0.5, num_heads=2, seed=121)
    without = new_mha(student, 4, 6, 6, 0.0, num_heads=2, seed=121)  # the same weights
    expected = without(x, mode="eval")
    expect_output(expected, (2, 6, 6), "MultiHeadAttention(4, 6, 6, 0.0, num_heads=2) in eval mode")
    reference = seeded(ref.MultiHeadAttention, 4, 6, 6, 0.5, num_heads=2, seed=121)
    right = matches(expected, reference_output(reference, x), student.device)
    for seed in (5, 6):
        expect_close(module(x, mode="eval", seed=seed), expected,
                     "MultiHeadAttention(4, 6, 6, dropout=0.5) in eval mode, compared with the same module "
                     "built with dropout=0.0", device=student.device,
                     mistakes={EVAL_DROPOUT: reference_output(reference, x, train_seed=seed)} if right else None,
                     hint=f"In eval mode the output must not depend on the dropout rate: {EVAL_DROPOUT}?")


@check(0.25, "train mode applies dropout to the attention weights like the reference")
def test_mha_train(student):
    x = randn(671, 2, 6, 4)
    module = new_mha(student, 4, 6, 6, 0.5, num_heads=2, seed=131)
    what = "MultiHeadAttention(4, 6, 6, dropout=0.5) in train mode, after torch.manual_seed(6)"
    got = module(x, mode="train", seed=6)
    expect_shape(got, (2, 6, 6), what)
    eval_out = module(x, mode="eval")
    expect_shape(eval_out, (2, 6, 6), what.replace("train mode, after torch.manual_seed(6)", "eval mode"))
    expect(not close(got, eval_out), f"{what}: the output equals the eval-mode output. This looks like "
                                     f"{NO_TRAIN_DROPOUT}", mistake=NO_TRAIN_DROPOUT)
    reference = seeded(ref.MultiHeadAttention, 4, 6, 6, 0.5, num_heads=2, seed=131)
    if not matches(eval_out, reference_output(reference, x), student.device):
        return  # the forward pass itself is off (other checks say where); dropout is applied, at least
    device = "cpu" if student.device == "meta" else student.device  # dropout masks depend on the device
    reference.to(device)
    expected = reference_output(reference, x.to(device), train_seed=6).cpu()
    expect_close(got, expected, what, device=student.device,
                 hint="Apply self.dropout once, to the (B, H, T, T) attention weights after the softmax")


@check(0.5, "gradients reach every parameter, out_proj included")
def test_mha_gradients(student):
    x = randn(681, 2, 5, 4)
    reference = seeded(ref.MultiHeadAttention, 4, 6, 6, 0.0, num_heads=2, qkv_bias=True, seed=141)
    grad_output = randn(682, 2, 5, 6)
    expected = reference_grads(reference, grad_output, x).detach()
    module = new_mha(student, 4, 6, 6, 0.0, num_heads=2, qkv_bias=True, seed=141)
    reply = module.run(x, mode="train", backward=grad_output)
    name = "MultiHeadAttention(4, 6, 6, 0.0, num_heads=2, qkv_bias=True)"
    if matches(reply.value, expected, student.device):
        expect_grads(reply, reference, name)  # right forward pass: the gradients must match too
        return
    expect(reply.graph, f"{name}: the output has no autograd graph (no requires_grad): "
                        "avoid .detach(), torch.no_grad() and .data in forward")
    for param_name, _ in reference.named_parameters():
        got = reply.param_grads.get(param_name)
        expect(isinstance(got, torch.Tensor),
               f"{name}: parameter {param_name} received no gradient (is it used in forward? "
               "out_proj must be applied to the combined heads)")
        expect(bool(torch.isfinite(got).all()), f"{name}: the gradient of {param_name} has NaN or inf")


@check(0.5, "MultiHeadAttention computes all heads together, with no Python loop over heads")
def test_mha_no_loop(student):
    x = randn(691, 2, 5, 4)
    counts = {}
    for heads in (2, 4):
        module = new_mha(student, 4, 8, 6, 0.0, num_heads=heads, seed=151)
        reply = module.run(x)
        expect_output(reply.value, (2, 5, 8), f"MultiHeadAttention(4, 8, 6, 0.0, num_heads={heads})")
        counts[heads] = reply.ops
    expect_no_loop(counts, "MultiHeadAttention", "heads")


@check(0.5, "MultiHeadAttention works on any device: no tensor created on the CPU in forward")
def test_mha_device(student):
    x = randn(701, 2, 5, 4)
    padding = torch.zeros(2, 5, dtype=torch.bool)
    padding[1, 3:] = True
    module = new_mha(student, 4, 6, 6, 0.0, num_heads=2, seed=161)
    expect_output(module(x), (2, 5, 6), "MultiHeadAttention(4, 6, 6, 0.0, num_heads=2)")
    advice = ("a tensor created on the CPU inside forward (e.g. a mask made with torch.ones(T, T)) does not "
              "follow .to(device): register a buffer or create it with device=x.device")
    for kwargs in ({}, {"key_padding_mask": padding}):
        try:
            reply = module.run(x, device="meta", **kwargs)
        except StudentFailure as failure:
            if failure.kind != "raised":
                raise
            raise CheckFailed(f"after .to(device) (here the meta device), {failure.message[:300]}\n"
                              f"Most likely {advice}") from None
        mixed = "; ".join(reply.mixed_devices[:2])
        expect(not mixed, f"after .to(device), MultiHeadAttention.forward mixes devices ({mixed}): {advice}")
        expect(isinstance(reply.value, (TensorStub, torch.Tensor)) and tuple(reply.value.shape) == (2, 5, 6)
               and reply.output_devices == ["meta"],
               f"after .to(device), MultiHeadAttention.forward returned {reply.value!r:.100} instead of one "
               "(2, 5, 6) tensor on that device")


@check(0.25, "MultiHeadAttention keeps batch items independent")
def test_mha_batch(student):
    x = randn(711, 3, 6, 4)
    changed = x.clone()
    changed[0] = randn(712, 6, 4, scale=3.0)
    module = new_mha(student, 4, 6, 6, 0.0, num_heads=2, seed=171)
    before, after = module(x), module(changed)
    for out in (before, after):
        expect_output(out, (3, 6, 6), "MultiHeadAttention(4, 6, 6, 0.0, num_heads=2) on a (3, 6, 4) batch")
    expect_close(after[1:], before[1:], "the outputs of batch items 1 and 2 after item 0 changed",
                 device=student.device,
                 hint="Each sequence must attend only within itself: keep the batch dim apart "
                      "(scores of shape (B, H, T, T))")
