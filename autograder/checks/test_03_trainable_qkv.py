"""Hidden checks of section 03: scaled dot-product attention with trainable weights (7 of the section's 10 points).

The 3 documented points are checked in visible/test_03_trainable_qkv.py.
"""

SECTION = {  # the registry's entry (autograder/core/sections.py reads it without importing this file)
    "title": "Scaled dot-product attention with trainable weights",
    "solution": "solutions.trainable_qkv",
    "names": ("project_qkv", "scaled_dot_product_attention", "SelfAttention_v1", "SelfAttention_v2",
              "copy_v2_weights_into_v1"),
    "forbidden": "attention",
    "forbidden_in": ("scaled_dot_product_attention", "SelfAttention_v1", "SelfAttention_v2"),
}

import math

import torch

from autograder.checks.common import (TRANSPOSE_HINT, expect_grads, expect_same_params, expect_sums_to_one,
                                      expect_unchanged, randn, reference_grads, seeded)
from autograder.checks.visible.test_03_trainable_qkv import (ORDER_HINT, V1_ORDER, V2_ORDER, attend, attention_mistakes,
                                                             module_mistakes, unpack)
from autograder.core.harness import CheckFailed, StudentFailure, check, expect, expect_close
from solutions import trainable_qkv as ref

NAMES = ("W_query", "W_key", "W_value")


def expect_attention(reply_value, queries, keys, values, what):
    """The student's (context, weights) must equal the reference's; common mistakes are named."""
    context, weights = unpack(reply_value, 2, what, "(context, weights)")
    expected_context, expected_weights = ref.scaled_dot_product_attention(queries, keys, values)
    wrong = attention_mistakes(queries, keys, values)
    order = "(context, weights) in the wrong order: return the context first"
    expect_close(weights, expected_weights, f"the weights of {what}",
                 mistakes={order: expected_context, **{k: w for k, (c, w) in wrong.items()}})
    expect_close(context, expected_context, f"the context of {what}",
                 mistakes={order: expected_weights, **{k: c for k, (c, w) in wrong.items()}})


def without_bias(reference, x):
    """The output of a SelfAttention_v2 with biases that forgets to add them."""
    with torch.no_grad():
        layers = (reference.W_query, reference.W_key, reference.W_value)
        queries, keys, values = (x @ layer.weight.T for layer in layers)
    return attend(queries, keys, values, math.sqrt(keys.shape[-1]))[0]


def forward_with_hint(module, x, what):
    """module(x), with a hint about transposing a batch when the student's forward raises."""
    try:
        return module(x)
    except StudentFailure as failure:
        if failure.kind != "raised":
            raise
        raise CheckFailed(f"{what}: {failure.message}. Hint: {TRANSPOSE_HINT}") from None


# ---------------------------------------------------------------- the math on new inputs


@check(0.5, "project_qkv on new (T, d_in) and batched (B, T, d_in) inputs")
def test_project_qkv_random(student):
    weights = [randn(seed, 4, 3) for seed in (301, 302, 303)]
    for x in (randn(304, 5, 4), randn(305, 2, 5, 4)):
        what = f"project_qkv(x, W_query, W_key, W_value) with x of shape {tuple(x.shape)}"
        got = unpack(student.call("project_qkv", x, *weights), 3, what, "(queries, keys, values)")
        expected = ref.project_qkv(x, *weights)
        kinds = ("queries", "keys", "values")
        for index, kind in enumerate(kinds):
            mistakes = {f"the {kinds[other]} (x @ {NAMES[other]}): return (queries, keys, values) in that order":
                        expected[other] for other in range(3) if other != index}
            expect_close(got[index], expected[index], f"the {kind} of {what}", mistakes=mistakes)


@check(1, "scaled_dot_product_attention divides the scores by sqrt(d_k), d_k = keys.shape[-1]")
def test_attention_scaling(student):
    queries, keys, values = randn(306, 5, 4, scale=1.5), randn(307, 7, 4, scale=1.5), randn(308, 7, 6)
    expect_attention(student.call("scaled_dot_product_attention", queries, keys, values), queries, keys, values,
                     "scaled_dot_product_attention with queries (5, 4), keys (7, 4), values (7, 6)")


@check(0.75, "scaled_dot_product_attention with a single query (d,) and with leading batch dims")
def test_attention_shapes(student):
    cases = ((randn(309, 4), randn(310, 7, 4), randn(311, 7, 6)),
             (randn(312, 2, 5, 4), randn(313, 2, 7, 4), randn(314, 2, 7, 6)),
             (randn(315, 2, 3, 5, 4), randn(316, 2, 3, 7, 4), randn(317, 2, 3, 7, 6)))
    for queries, keys, values in cases:
        what = (f"scaled_dot_product_attention with queries {tuple(queries.shape)}, keys {tuple(keys.shape)}, "
                f"values {tuple(values.shape)}")
        try:
            value = student.call("scaled_dot_product_attention", queries, keys, values)
        except StudentFailure as failure:
            if failure.kind != "raised" or keys.dim() < 3:
                raise
            raise CheckFailed(f"{failure.message}. Hint: {TRANSPOSE_HINT}") from None
        expect_attention(value, queries, keys, values, what)


@check(0.5, "attention weights are positive and sum to 1 over the keys")
def test_attention_weights_sum_to_one(student):
    queries, keys, values = randn(318, 6, 4, scale=2.0), randn(319, 9, 4, scale=2.0), randn(320, 9, 3)
    what = "scaled_dot_product_attention with queries (6, 4), keys (9, 4), values (9, 3)"
    _, weights = unpack(student.call("scaled_dot_product_attention", queries, keys, values), 2, what,
                        "(context, weights)")
    expect_sums_to_one(weights, (6, 9), f"the weights of {what}")


@check(0.75, "SelfAttention_v1 and SelfAttention_v2 match the reference with other seeds and sizes")
def test_modules_random(student):
    for name, cls, d_in, d_out, seed, order in (("SelfAttention_v1", ref.SelfAttention_v1, 4, 5, 31, V1_ORDER),
                                                ("SelfAttention_v2", ref.SelfAttention_v2, 5, 3, 32, V2_ORDER)):
        x = randn(seed + 300, 7, d_in)
        reference = seeded(cls, d_in, d_out, seed=seed)
        with torch.no_grad():
            expected = reference(x)
        module = student.new(name, d_in, d_out, seed=seed)
        expect_close(module(x), expected, f"torch.manual_seed({seed}); {name}({d_in}, {d_out})(x) on a (7, {d_in}) x",
                     mistakes=module_mistakes(reference, x), hint=ORDER_HINT + order)


@check(0.5, "SelfAttention_v1 and v2 create W_query, W_key, W_value in the documented order")
def test_parameter_order(student):
    module = student.new("SelfAttention_v1", 4, 3, seed=41)
    params = module.params()
    tensors = [p for p in params.values() if isinstance(p, torch.Tensor)] if isinstance(params, dict) else []
    if any(bool((p < 0).any()) for p in tensors):
        raise CheckFailed("SelfAttention_v1's weights have negative entries: create them with torch.rand "
                          "(uniform in [0, 1)), not torch.randn")
    expect_same_params(module, seeded(ref.SelfAttention_v1, 4, 3, seed=41), "SelfAttention_v1", V1_ORDER)
    module = student.new("SelfAttention_v2", 4, 3, seed=42)
    expect_same_params(module, seeded(ref.SelfAttention_v2, 4, 3, seed=42), "SelfAttention_v2", V2_ORDER)


@check(0.5, "SelfAttention_v2 works on a batch (B, T, d_in)")
def test_v2_batch(student):
    batch = randn(321, 2, 5, 4)
    reference = seeded(ref.SelfAttention_v2, 4, 3, seed=51)
    with torch.no_grad():
        expected = reference(batch)
    module = student.new("SelfAttention_v2", 4, 3, seed=51)
    got = forward_with_hint(module, batch, "SelfAttention_v2(4, 3) on a (2, 5, 4) batch")
    expect_close(got, expected, "torch.manual_seed(51); SelfAttention_v2(4, 3)(x) on a (2, 5, 4) batch",
                 mistakes=module_mistakes(reference, batch), hint=TRANSPOSE_HINT)


@check(0.5, "SelfAttention_v2(qkv_bias=True) creates and uses the three biases")
def test_v2_bias(student):
    reference = seeded(ref.SelfAttention_v2, 4, 3, qkv_bias=True, seed=61)
    module = student.new("SelfAttention_v2", 4, 3, qkv_bias=True, seed=61)
    expect_same_params(module, reference, "SelfAttention_v2(4, 3, qkv_bias=True)", V2_ORDER)
    x = randn(322, 5, 4)
    with torch.no_grad():
        expected = reference(x)
    expect_close(module(x), expected, "torch.manual_seed(61); SelfAttention_v2(4, 3, qkv_bias=True)(x)",
                 mistakes={"the biases left out of the projections": without_bias(reference, x),
                           **module_mistakes(reference, x)})


@check(1, "copy_v2_weights_into_v1 loads v2's transposed weights into v1's own Parameters")
def test_copy_weights(student):
    for d_in, d_out, seed in ((4, 4, 71), (5, 3, 72)):
        v1 = student.new("SelfAttention_v1", d_in, d_out, seed=seed)
        v2 = student.new("SelfAttention_v2", d_in, d_out, seed=seed + 1)
        source = v2.params()  # the student's own v2 weights are what must be copied
        source = source if isinstance(source, dict) else {}
        missing = [f"{n}.weight" for n in NAMES if not isinstance(source.get(f"{n}.weight"), torch.Tensor)]
        expect(not missing, f"SelfAttention_v2 has no parameter {missing[0] if missing else ''}: "
                            f"it should have the layers {V2_ORDER}")
        try:
            student.call("copy_v2_weights_into_v1", v1.arg, v2.arg)
        except StudentFailure as failure:
            if failure.kind == "raised" and "in-place" in failure.message:
                raise CheckFailed(f"{failure.message}. Copy inside `with torch.no_grad():` so that autograd "
                                  "does not record the copy into v1's Parameters") from None
            raise
        copied = v1.params()
        copied = copied if isinstance(copied, dict) else {}
        size = f"d_in={d_in}, d_out={d_out}"
        for name in NAMES:
            weight = source[f"{name}.weight"]
            mistakes = {"Linear.weight copied without the transpose (nn.Linear stores it as (d_out, d_in))": weight}
            mistakes.update({f"v2.{other}.weight copied into v1.{name} (the projections mixed up)":
                             source[f"{other}.weight"].T for other in NAMES if other != name})
            expect_close(copied.get(name), weight.T, f"v1.{name} after copy_v2_weights_into_v1(v1, v2) with {size}",
                         mistakes=mistakes)
        x, grad_output = randn(seed + 300, 6, d_in), randn(seed + 400, 6, d_out)
        reply = v1.run(x, mode="train", backward=grad_output)
        for name in NAMES:
            expect(isinstance(reply.param_grads.get(name), torch.Tensor),
                   f"after copy_v2_weights_into_v1, v1.{name} no longer receives a gradient: keep v1's own "
                   "trainable Parameters (copy into them with .copy_ inside torch.no_grad(); do not switch "
                   "off requires_grad)")
        target = v2(x)
        expect(isinstance(target, torch.Tensor), f"SelfAttention_v2(x) returned {type(target).__name__}, not a tensor")
        expect_close(reply.value, target, f"v1(x) after the copy, compared with v2(x) ({size})",
                     hint="v1's weights are right, so SelfAttention_v1 and SelfAttention_v2 compute different things")


@check(0.5, "gradients reach every parameter of SelfAttention_v1 and SelfAttention_v2")
def test_gradients(student):
    for name, cls, kwargs, seed in (("SelfAttention_v1", ref.SelfAttention_v1, {}, 81),
                                    ("SelfAttention_v2", ref.SelfAttention_v2, {"qkv_bias": True}, 82)):
        x, grad_output = randn(seed + 300, 5, 4), randn(seed + 400, 5, 3)
        reference = seeded(cls, 4, 3, seed=seed, **kwargs)
        reference_grads(reference, grad_output, x)
        module = student.new(name, 4, 3, seed=seed, **kwargs)
        expect_grads(module.run(x, mode="train", backward=grad_output), reference, name)


# ---------------------------------------------------------------- conventions


@check(0.25, "attention is computed without F.scaled_dot_product_attention or nn.MultiheadAttention")
def test_no_builtin_attention(student):
    queries, keys, values = randn(330, 4, 3), randn(331, 6, 3), randn(332, 6, 5)
    expect_attention(student.call("scaled_dot_product_attention", queries, keys, values), queries, keys, values,
                     "scaled_dot_product_attention with queries (4, 3), keys (6, 3), values (6, 5)")
    x = randn(333, 5, 3)
    for name, cls, seed in (("SelfAttention_v1", ref.SelfAttention_v1, 91),
                            ("SelfAttention_v2", ref.SelfAttention_v2, 92)):
        with torch.no_grad():
            expected = seeded(cls, 3, 2, seed=seed)(x)
        expect_close(student.new(name, 3, 2, seed=seed)(x), expected, f"torch.manual_seed({seed}); {name}(3, 2)(x)")


@check(0.25, "project_qkv and scaled_dot_product_attention leave their inputs unchanged")
def test_inputs_unchanged(student):
    x, weights = randn(334, 5, 4), [randn(seed, 4, 3) for seed in (335, 336, 337)]
    reply = student.run("project_qkv", x, *weights, return_args=True)
    expected = ref.project_qkv(x, *weights)
    for got, want, kind in zip(unpack(reply.value, 3, "project_qkv", "(queries, keys, values)"), expected,
                               ("queries", "keys", "values")):
        expect_close(got, want, f"the {kind} of project_qkv")
    expect_unchanged(reply, [x, *weights], "project_qkv")
    queries, keys, values = expected
    reply = student.run("scaled_dot_product_attention", queries, keys, values, return_args=True)
    expect_attention(reply.value, queries, keys, values, "scaled_dot_product_attention on project_qkv's output")
    expect_unchanged(reply, [queries, keys, values], "scaled_dot_product_attention")
