"""Hidden checks of section 04: hiding the future (8 of the section's 10 points).

The 2 documented points are checked in visible/test_04_causal_mask.py.
"""

SECTION = {  # the registry's entry (autograder/core/sections.py reads it without importing this file)
    "title": "Hiding the future",
    "solution": "solutions.causal_mask",
    "names": ("causal_mask", "mask_and_renormalize", "causal_attention_weights", "CausalAttention"),
    "forbidden": "attention",
    "forbidden_in": ("causal_attention_weights", "CausalAttention"),
    "uses_meta": True,
}

import torch

from autograder.checks.common import (expect_grads, expect_raises, expect_same_params, expect_unchanged, rand, randn,
                                      reference_grads, seeded)
from autograder.checks.visible.test_04_causal_mask import DIAGONAL, INVERTED, attention_mistakes, weight_mistakes
from autograder.core.harness import CheckFailed, StudentFailure, check, expect, expect_close, expect_shape
from autograder.worker.wire import TensorStub
from solutions import causal_mask as ref

ORDER = "W_query, W_key, W_value (Linear), then the Dropout"


def reference_output(reference, x, *, train_seed=None, device="cpu"):
    """The reference's forward; with train_seed, in train mode right after torch.manual_seed(train_seed).

    Dropout masks differ between devices: in train mode, run on the device the student's code runs on.
    """
    device = "cpu" if device == "meta" else device
    reference.train(train_seed is not None)
    if train_seed is not None:
        torch.manual_seed(train_seed)
    with torch.no_grad():
        out = reference.to(device)(x.to(device)).cpu()
    reference.to("cpu").eval()
    return out


def expect_finite(value, what):
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        expect(bool(torch.isfinite(value).all()),
               f"{what} contains NaN or inf: a row whose every key is masked gives NaN "
               "(is the diagonal masked too? it must stay visible)")


# ---------------------------------------------------------------- the mask (1.5 points)

@check(1, "causal_mask: (T, T) bool, True strictly above the diagonal")
def test_causal_mask(student):
    for num_tokens in (7, 1):
        expected = ref.causal_mask(num_tokens)
        with_diagonal = torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool))
        expect_close(student.call("causal_mask", num_tokens), expected, f"causal_mask({num_tokens})",
                     mistakes={DIAGONAL: with_diagonal,
                               INVERTED: ~expected,
                               "the past hidden instead of the future (True below the diagonal)": expected.T},
                     hint="Masks are bool and True means hidden: torch.triu(..., diagonal=1)", heatmap_labels=True)


@check(0.5, "causal_mask creates the mask on the device it is given")
def test_causal_mask_device(student):
    reply = student.run("causal_mask", 5, "meta")  # device passed by position: run() has its own device=
    got = f"a tensor on {reply.output_devices[0]}" if reply.output_devices else type(reply.value).__name__
    expect(reply.output_devices == ["meta"],
           f"causal_mask(5, device='meta') returned {got}: create the mask directly on `device` "
           "(torch.ones(..., device=device)), so attention on a GPU needs no copy")
    stub = reply.value
    expect(isinstance(stub, TensorStub) and stub.shape == (5, 5) and stub.dtype == "bool",
           f"causal_mask(5, device='meta') should be a (5, 5) bool tensor; got {stub!r}")


# ---------------------------------------------------------------- the two ways to mask (2 points)

@check(1, "mask_and_renormalize zeroes the future and renormalises each row")
def test_mask_and_renormalize(student):
    single = torch.softmax(randn(401, 5, 5, scale=2.0), dim=-1)
    batch = torch.softmax(randn(402, 3, 4, 4, scale=2.0), dim=-1)
    for weights, what in ((single, "a (5, 5)"), (batch, "a (3, 4, 4) batch of")):
        reply = student.run("mask_and_renormalize", weights, return_args=True)
        future = ref.causal_mask(weights.shape[-1])
        zeroed = weights.masked_fill(future, 0.0)
        past = weights.masked_fill(~torch.tril(torch.ones_like(future), diagonal=-1), 0.0)
        expect_close(reply.value, ref.mask_and_renormalize(weights), f"mask_and_renormalize of {what} weights",
                     device=student.device,
                     mistakes={"zeroed above the diagonal but not renormalised (divide each row by its sum)": zeroed,
                               "divided by the column sums (dim=-2) instead of the row sums":
                                   zeroed / zeroed.sum(dim=-2, keepdim=True),
                               "divided by the sum of all the weights instead of each row's sum":
                                   zeroed / zeroed.sum(),
                               DIAGONAL: past / past.sum(dim=-1, keepdim=True)})
        expect_unchanged(reply, [weights], "mask_and_renormalize")


@check(1, "causal_attention_weights masks before the softmax of scores / sqrt(d_k)")
def test_causal_attention_weights(student):
    for scores, d_k, what in ((randn(403, 5, 5, scale=3.0), 4, "(5, 5) scores, d_k=4"),
                              (randn(404, 2, 6, 6, scale=3.0), 9, "(2, 6, 6) scores, d_k=9")):
        reply = student.run("causal_attention_weights", scores, d_k, return_args=True)
        expect_close(reply.value, ref.causal_attention_weights(scores, d_k),
                     f"causal_attention_weights on {what}", mistakes=weight_mistakes(scores, d_k),
                     device=student.device)
        expect_unchanged(reply, [scores], "causal_attention_weights")


# ---------------------------------------------------------------- CausalAttention (4 points)

@check(1, "CausalAttention: parameters in order, seeded output matches the reference for T < context_length")
def test_causal_attention_seeded(student):
    x = randn(405, 2, 5, 6)
    module = student.new("CausalAttention", 6, 3, 8, 0.0, qkv_bias=True, seed=41)
    reference = seeded(ref.CausalAttention, 6, 3, 8, 0.0, qkv_bias=True, seed=41)
    expect_same_params(module, reference, "CausalAttention(6, 3, 8, 0.0, qkv_bias=True)", ORDER)
    expect_close(module(x), reference_output(reference, x),
                 "CausalAttention(6, 3, 8, 0.0, qkv_bias=True) with torch.manual_seed(41) on 5 of 8 tokens",
                 mistakes=attention_mistakes(reference, x), device=student.device)


@check(0.5, "CausalAttention is causal: later tokens do not change earlier outputs")
def test_causality(student):
    x = randn(406, 2, 7, 4)
    changed, first_changed = x.clone(), x.clone()
    changed[:, 3:] = randn(407, 2, 4, 4, scale=3.0)
    first_changed[:, 0] = randn(415, 2, 4, scale=3.0)
    module = student.new("CausalAttention", 4, 3, 7, 0.0, seed=42)
    before, after, moved = module(x), module(changed), module(first_changed)
    for out in (before, after, moved):
        expect_shape(out, (2, 7, 3), "CausalAttention(4, 3, 7, 0.0) on a (2, 7, 4) input")
        expect_finite(out, "CausalAttention's output")
    expect(not torch.allclose(moved[:, 1:], before[:, 1:]),
           "CausalAttention's outputs of tokens 1-6 stay the same when token 0 changes: every token should "
           "attend to the tokens before it")
    expect_close(after[:, :3], before[:, :3], "the outputs of tokens 0-2 after tokens 3-6 changed",
                 device=student.device,
                 hint="They changed, so the future leaks into the past: hide j > i (True strictly above "
                      "the diagonal) with -inf before the softmax")


@check(0.5, "CausalAttention: the items of a batch do not influence each other")
def test_batch_independent(student):
    x = randn(408, 3, 5, 4)
    module = student.new("CausalAttention", 4, 3, 6, 0.0, seed=43)
    together = module(x)
    expect_shape(together, (3, 5, 3), "CausalAttention(4, 3, 6, 0.0) on a (3, 5, 4) batch")
    for item in range(3):
        alone = module(x[item:item + 1])
        expect_shape(alone, (1, 5, 3), "CausalAttention(4, 3, 6, 0.0) on a (1, 5, 4) batch")
        expect_close(together[item], alone[0], f"item {item} of a batch of 3 compared with the same item alone",
                     device=student.device,
                     hint="Each item must attend only within itself: keep the batch dim apart "
                          "(keys.transpose(1, 2), softmax over the last dim)")


@check(0.5, "CausalAttention raises ValueError naming both numbers when T > context_length")
def test_too_long(student):
    module = student.new("CausalAttention", 3, 2, 5, 0.0, seed=44)
    expect_raises(lambda: module(randn(409, 1, 8, 3)), "ValueError",
                  "CausalAttention(3, 2, context_length=5, 0.0) on 8 tokens", naming=(8, 5))


@check(0.5, "CausalAttention: eval mode disables dropout")
def test_eval_disables_dropout(student):
    x = randn(410, 2, 6, 4)
    module = student.new("CausalAttention", 4, 3, 6, 0.5, seed=45)
    reference = seeded(ref.CausalAttention, 4, 3, 6, 0.5, seed=45)
    expected = reference_output(reference, x)
    for seed in (1, 2):
        expect_close(module(x, mode="eval", seed=seed), expected,
                     "CausalAttention(4, 3, 6, dropout=0.5) in eval mode", device=student.device,
                     mistakes={"dropout active in eval mode (use self.dropout, or F.dropout(..., "
                               "training=self.training))":
                               reference_output(reference, x, train_seed=seed, device=student.device)})


@check(0.5, "CausalAttention: in train mode, dropout on the attention weights as nn.Dropout does")
def test_train_dropout(student):
    x = randn(411, 2, 6, 4)
    module = student.new("CausalAttention", 4, 3, 6, 0.5, seed=46)
    reference = seeded(ref.CausalAttention, 4, 3, 6, 0.5, seed=46)
    with torch.no_grad():
        eval_out = reference_output(reference, x)
        weights = ref.causal_attention_weights(reference.W_query(x) @ reference.W_key(x).transpose(1, 2), 3)
        values = reference.W_value(x)
        torch.manual_seed(7)
        on_context = torch.nn.functional.dropout(weights @ values, 0.5)
    expected = reference_output(reference, x, train_seed=7, device=student.device)
    expect_close(module(x, mode="train", seed=7), expected,
                 "CausalAttention(4, 3, 6, dropout=0.5) in train mode after torch.manual_seed(7)",
                 device=student.device,
                 mistakes={"no dropout in train mode (apply self.dropout to the attention weights)": eval_out,
                           "dropout on the context vectors instead of the attention weights": on_context},
                 hint="Apply self.dropout once, to the attention weights after the softmax, before @ values")


@check(0.5, "CausalAttention: gradients reach every parameter")
def test_gradients(student):
    x = randn(412, 2, 5, 4)
    grad_output = randn(413, 2, 5, 3)
    reference = seeded(ref.CausalAttention, 4, 3, 6, 0.0, qkv_bias=True, seed=47)
    reference_grads(reference, grad_output, x)
    module = student.new("CausalAttention", 4, 3, 6, 0.0, qkv_bias=True, seed=47)
    reply = module.run(x, mode="train", backward=grad_output)
    expect_grads(reply, reference, "CausalAttention(4, 3, 6, 0.0, qkv_bias=True)", device=student.device)


@check(0.5, "CausalAttention works on any device: no tensor created on the CPU in forward")
def test_device_portability(student):
    module = student.new("CausalAttention", 3, 2, 6, 0.0, seed=48)
    advice = ("register the mask with self.register_buffer in __init__ (so .to(device) moves it), "
              "or create it in forward with device=x.device")
    try:
        reply = module.run(rand(414, 2, 4, 3), device="meta")
    except StudentFailure as failure:
        if failure.kind != "raised":
            raise
        raise CheckFailed(f"after .to(device) (here the meta device), {failure.message}. Most likely a tensor "
                          f"used in forward is still on the CPU: {advice}") from None
    mixed = reply.mixed_devices[0] if reply.mixed_devices else ""
    expect(not mixed, f"after .to(device), CausalAttention.forward mixes devices ({mixed}): {advice}")
    expect(reply.output_devices == ["meta"],
           f"after .to(device), CausalAttention.forward returned {reply.value!r:.100} instead of one tensor "
           "on that device")
