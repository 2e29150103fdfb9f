"""Checks of section 03: scaled dot-product attention with trainable weights (10 points).

The section's registry entry (SECTION) and its visible checks: the documented projections and outputs of the
worked example, and the properties that need no reference (weights summing to 1 over the keys, a batch
computed item by item, parameters created in the documented order, copy_v2_weights_into_v1 between a v1 and
a v2 built from the documented parameters, gradients that flow, no built-in attention, arguments left
unchanged), and the attention and the biases of SelfAttention_v2 against torch's own F.scaled_dot_product_attention and nn.Linear layers. The
self-check runs them and the students' wheel ships this module as it is, so nothing here imports `solutions`
or holds a hidden seed's expected output. The hidden checks, which the grader runs after these, compare with
the reference solutions on fresh inputs: they are in checks/hidden/hidden_03_trainable_qkv.py.
"""

SECTION = {  # the registry's entry (autograder/core/sections.py reads it without importing this file)
    "title": "Scaled dot-product attention with trainable weights",
    "solution": "solutions.trainable_qkv",
    "names": ("project_qkv", "scaled_dot_product_attention", "SelfAttention_v1", "SelfAttention_v2",
              "copy_v2_weights_into_v1"),
    "forbidden": "attention",
    "forbidden_in": ("scaled_dot_product_attention", "SelfAttention_v1", "SelfAttention_v2"),
    "rules": {"unchanged": ("project_qkv", "scaled_dot_product_attention"),
              "param_order": ("SelfAttention_v1", "SelfAttention_v2")},
}

import math
from types import SimpleNamespace

import torch

from autograder.checks.common import (TOKENS, TRANSPOSE_HINT, WORKED_INPUTS, expect_grads_flow, expect_not_hard_coded,
                                      expect_sums_to_one, expect_unchanged, hint_if_written, manual_seed, rand, randn,
                                      run_unless_raised, seeded_projections, stack_items)
from autograder.checks.parameters import (created_otherwise, expect_layer_shapes, expect_same_params)
from autograder.checks.qkv_forward import attend, formula_output, seeded_weights, torch_attention
from autograder.checks.qkv_mistakes import (DIM_1_AS_D_K, OVER_QUERIES, attention_mistakes, module_mistakes)
from autograder.core.harness import (CheckFailed, StudentFailure, check, close, expect, expect_close, expect_shape)
from autograder.i18n import N_, _, _f

NAMES = ("W_query", "W_key", "W_value")
DOC_RAND = {"query": [0.4306, 1.4551], "key": [0.4433, 1.1419], "value": [0.3951, 1.0037],
            "weights": [0.1500, 0.2264, 0.2199, 0.1311, 0.0906, 0.1820], "context": [0.3061, 0.8210]}
DOC_RANDN = {"query": [-1.1729, -0.0048],
             "weights": [0.1704, 0.1611, 0.1652, 0.1412, 0.2505, 0.1117], "context": [0.2854, 0.4081]}
DOC_V1 = torch.tensor(
    [[0.2996, 0.8053], [0.3061, 0.8210], [0.3058, 0.8203],
     [0.2948, 0.7939], [0.2927, 0.7891], [0.2990, 0.8040]])
DOC_V2 = torch.tensor(
    [[-0.0739, 0.0713], [-0.0748, 0.0703], [-0.0749, 0.0702],
     [-0.0760, 0.0685], [-0.0763, 0.0679], [-0.0754, 0.0693]])

# made at import time: marked with N_, translated with _() where they are shown
V1_ORDER = N_("W_query, W_key, W_value, each nn.Parameter(torch.rand(d_in, d_out))")
V2_ORDER = N_("W_query, W_key, W_value, each nn.Linear(d_in, d_out, bias=qkv_bias)")
ORDER_HINT = N_("the seeded weights depend on creating the parameters in this order: {order}")
# the report's heatmaps of the worked example (public inputs): query 2 ("journey") against every
# token, and the modules' outputs, one row per token, one column per output dim
QUERY_2 = (TOKENS[1:2], TOKENS)
# a mistake's description is one whole sentence per case, so that each is translated
MIXED_UP = {("W_key", "W_query"): N_("v2.W_key.weight copied into v1.W_query (the projections mixed up)"),
            ("W_value", "W_query"): N_("v2.W_value.weight copied into v1.W_query (the projections mixed up)"),
            ("W_query", "W_key"): N_("v2.W_query.weight copied into v1.W_key (the projections mixed up)"),
            ("W_value", "W_key"): N_("v2.W_value.weight copied into v1.W_key (the projections mixed up)"),
            ("W_query", "W_value"): N_("v2.W_query.weight copied into v1.W_value (the projections mixed up)"),
            ("W_key", "W_value"): N_("v2.W_key.weight copied into v1.W_value (the projections mixed up)")}
OUTPUT_ROWS = (TOKENS, None)


WRONG_ORDER = N_("(context, weights) in the wrong order: return the context first")
# what a projection returned in the wrong place equals: one of the other two (by index)
WRONG_PROJECTION = (N_("the queries (x @ W_query): return (queries, keys, values) in that order"),
                    N_("the keys (x @ W_key): return (queries, keys, values) in that order"),
                    N_("the values (x @ W_value): return (queries, keys, values) in that order"))


# i18n: "query", "key", "value" name one output of project_qkv (the English adds an "s")
KIND_WORDS = {"query": N_("query"), "key": N_("key"), "value": N_("value")}


def unpack(value, count, what, names):
    """The student's returned tuple of `count` items (a list is accepted too)."""
    if not isinstance(value, (tuple, list)) or len(value) != count:
        if isinstance(value, (tuple, list)):
            got = _f("a {kind} of length {length}", kind=type(value).__name__, length=len(value))
        elif isinstance(value, torch.Tensor):
            got = _f("a tensor of shape {shape}", shape=tuple(value.shape))
        else:
            got = type(value).__name__
        raise CheckFailed(_f("{what} should return {names}, a tuple of {count} tensors; it returned {got}",
                             what=what, names=names, count=count, got=got))
    return list(value)


# ---------------------------------------------------------------- visible: documented values


def projections(student, x, weights, what: str) -> list:
    """The student's (queries, keys, values) of `x` with `weights`, each of the shape x @ W has."""
    projected = unpack(student.call("project_qkv", x, *weights), 3, what, "(queries, keys, values)")
    for kind, got in zip(("query", "key", "value"), projected):
        expect_shape(got, (*x.shape[:-1], weights[0].shape[-1]),
                     _f("the {kind}s of {what}", kind=_(KIND_WORDS[kind]), what=what))
    return projected


@check(0.5, "project_qkv gives the documented query, key and value of 'journey', and x @ W on other inputs",
       documented=True, cell="project_qkv")
def test_project_qkv(student):
    documented = []  # (what, weights, the student's projections, the documented ones) per seeded draw
    for draw, doc in ((torch.rand, DOC_RAND), (torch.randn, DOC_RANDN)):
        seeded_as = _f("{seed} and {draw} three times", seed="torch.manual_seed(123)",
                       draw=f"torch.{draw.__name__}(3, 2)")
        weights = seeded_weights(draw)
        documented.append((seeded_as, weights, projections(student, WORKED_INPUTS, weights, _f(
            "{call} with {seeded}", call="project_qkv(inputs, W_query, W_key, W_value)", seeded=seeded_as)), doc))
    # and inputs the notebook never shows
    x, weights = randn(371, 6, 3), [randn(seed, 3, 2) for seed in (372, 373, 374)]
    what = _f("{name} with inputs {x} and weights {w}", name="project_qkv", x=(6, 3), w=(3, 2))
    fresh = projections(student, x, weights, what)
    # an answer written out is named first, before the values it gets wrong
    answers = [projected[0] for _seeded, _weights, projected, _doc in documented] + [fresh[0]]
    rights = [WORKED_INPUTS @ w[0] for _seeded, w, _projected, _doc in documented] + [x @ weights[0]]
    for pair in ((0, 1), (0, 2)):
        expect_not_hard_coded("project_qkv", [answers[i] for i in pair], [rights[i] for i in pair])
    for seeded_as, weights_doc, projected, doc in documented:
        for index, (kind, got) in enumerate(zip(("query", "key", "value"), projected)):
            if kind in doc:
                mistakes = {WRONG_PROJECTION[other]: (WORKED_INPUTS @ weights_doc[other])[1]
                            for other in range(3) if other != index}
                expect_close(got[1], torch.tensor(doc[kind]), _f("{call} with {seeded}", call=f"{kind}_2",
                                                                 seeded=seeded_as), atol=1e-4, mistakes=mistakes)
    for index, kind in enumerate(("query", "key", "value")):
        mistakes = {WRONG_PROJECTION[other]: x @ weights[other] for other in range(3) if other != index}
        expect_close(fresh[index], x @ weights[index], _f("the {kind}s of {what}", kind=_(KIND_WORDS[kind]),
                                                          what=what), mistakes=mistakes)


@check(0.5, "query 2 of the worked example: documented weights and context", documented=True,
       cell="scaled_dot_product_attention")
def test_query_2_documented(student):
    answers = []  # (what, context, weights, the common mistakes' outputs, the documented values) per seeded draw
    for draw, doc in ((torch.rand, DOC_RAND), (torch.randn, DOC_RANDN)):
        weights = seeded_weights(draw)
        seeded_as = _f("{seed} and {draw} three times", seed="torch.manual_seed(123)",
                       draw=f"torch.{draw.__name__}(3, 2)")
        queries, keys, values = (WORKED_INPUTS @ w for w in weights)
        what = _f("{call} with {seeded}", call="scaled_dot_product_attention(query_2, keys, values)", seeded=seeded_as)
        context, attn = unpack(call_one_query(student, queries, keys, values), 2, what, "(context, weights)")
        wrong = attention_mistakes(queries[1], keys, values)
        # the right context returned where the weights belong: (weights, context) in the wrong order
        wrong[WRONG_ORDER] = tuple(reversed(attend(queries[1], keys, values, math.sqrt(keys.shape[-1]))))
        answers.append((what, context, attn, wrong, doc))
    # the two draws' documented weights differ: the same answer for both is one written out
    expect_not_hard_coded("scaled_dot_product_attention", [attn for _what, _context, attn, _wrong, _doc in answers],
                          [torch.tensor(doc["weights"]) for *_rest, doc in answers])
    for index, (what, context, attn, wrong, doc) in enumerate(answers):
        # the student's weights of the worked example are shown in the report even when right
        expect_close(attn, torch.tensor(doc["weights"]), _f("the weights of {what}", what=what), atol=1e-4,
                     mistakes={k: w for k, (c, w) in wrong.items()}, heatmap_labels=QUERY_2, show_passing=index == 0)
        expect_close(context, torch.tensor(doc["context"]), _f("the context of {what}", what=what), atol=1e-4,
                     mistakes={k: c for k, (c, w) in wrong.items()}, heatmap_labels=(TOKENS[1:2], None))


def call_one_query(student, queries, keys, values):
    """The student's answer for query 2 alone (queries[1], one 1-D query). Where that raises, and the same function
    on every query at once gives the weights of a softmax over the queries, the failure names that mistake: a
    single query has no dim -2 to take the softmax over, so the error says less than the measure does."""
    try:
        return student.call("scaled_dot_product_attention", queries[1], keys, values)
    except StudentFailure as failure:
        if failure.kind != "raised":
            raise
        every = run_unless_raised(student.run, "scaled_dot_product_attention", queries, keys, values)
        answer = every.value if every is not None else None
        if not (isinstance(answer, (tuple, list)) and len(answer) == 2
                and close(answer[1], attend(queries, keys, values, math.sqrt(keys.shape[-1]), dim=-2)[1])):
            raise
        raise CheckFailed(_f("{message}. This looks like {mistake}", message=failure.message,
                             mistake=_(OVER_QUERIES)), OVER_QUERIES) from None


def expect_module_computed(module, name: str, projections, documented_output) -> None:
    """A module's output on inputs other than the worked example's differs from its documented one, as the
    documented formula with the documented seeded weights says it must (a written-out output does not)."""
    other = randn(165, 6, 3)
    expect_not_hard_coded(name, (documented_output, module(other)),
                          (formula_output(projections, WORKED_INPUTS), formula_output(projections, other)))


def seeded_params(projections) -> dict:
    """The parameters of seeded_projections by the names a module holds them under (W_query, or W_query.weight)."""
    return {(name if isinstance(layer, torch.Tensor) else f"{name}.weight"):
            (layer if isinstance(layer, torch.Tensor) else layer.weight)
            for name in NAMES for layer in [getattr(projections, name)]}


def order_hint(module, expected: dict, order: str) -> str:
    """The creation-order hint, only where the module's parameters differ from the seeded ones (created otherwise:
    seen, not guessed); "" where they are the seeded ones: then the output differs for another cause."""
    return _f(ORDER_HINT, order=_(order)) if created_otherwise(module.params(), expected) else ""


@check(1, "SelfAttention_v1(3, 2) with torch.manual_seed(123) gives the documented output", documented=True, cell="SelfAttention_v1")
def test_v1_documented(student):
    module = student.new("SelfAttention_v1", 3, 2, seed=123)
    got = module(WORKED_INPUTS)
    expect_module_computed(module, "SelfAttention_v1", seeded_projections(3, 2, seed=123, raw=True), got)
    expect_close(got, DOC_V1, "torch.manual_seed(123); SelfAttention_v1(3, 2)(inputs)", atol=1e-4,
                 mistakes=module_mistakes(seeded_projections(3, 2, seed=123, raw=True), WORKED_INPUTS),
                 hint=order_hint(module, seeded_params(seeded_projections(3, 2, seed=123, raw=True)), V1_ORDER),
                 heatmap_labels=OUTPUT_ROWS)


@check(1, "SelfAttention_v2(3, 2) with torch.manual_seed(789) gives the documented output", documented=True, cell="SelfAttention_v2")
def test_v2_documented(student):
    module = student.new("SelfAttention_v2", 3, 2, seed=789)
    expect_layer_shapes(module, "SelfAttention_v2(3, 2)", 3, 2)  # a swapped layer named before its forward fails
    got = module(WORKED_INPUTS)
    expect_module_computed(module, "SelfAttention_v2", seeded_projections(3, 2, seed=789), got)
    expect_close(got, DOC_V2, "torch.manual_seed(789); SelfAttention_v2(3, 2)(inputs)", atol=1e-4,
                 mistakes=module_mistakes(seeded_projections(3, 2, seed=789), WORKED_INPUTS),
                 hint=order_hint(module, seeded_params(seeded_projections(3, 2, seed=789)), V2_ORDER),
                 heatmap_labels=OUTPUT_ROWS)


# ---------------------------------------------------------------- visible: properties


@check(0.5, "attention weights are positive and sum to 1 over the keys", visibility="visible", cell="scaled_dot_product_attention")
def test_attention_weights_sum_to_one(student):
    queries, keys, values = randn(368, 6, 4, scale=2.0), randn(369, 9, 4, scale=2.0), randn(370, 9, 3)
    what = _f("{name} with queries {queries}, keys {keys}, values {values}", name="scaled_dot_product_attention",
              queries=(6, 4), keys=(9, 4), values=(9, 3))
    _context, weights = unpack(student.call("scaled_dot_product_attention", queries, keys, values), 2, what,
                               "(context, weights)")
    expect_sums_to_one(weights, (6, 9), _f("the weights of {what}", what=what))


@check(0.5, "scaled_dot_product_attention with leading batch dims: each item as on its own", visibility="visible", cell="scaled_dot_product_attention")
def test_attention_batch(student):
    for queries, keys, values in ((randn(362, 2, 5, 4), randn(363, 2, 7, 4), randn(364, 2, 7, 6)),
                                  (randn(365, 2, 3, 5, 4), randn(366, 2, 3, 7, 4), randn(367, 2, 3, 7, 6))):
        what = _f("{name} with queries {queries}, keys {keys}, values {values}", name="scaled_dot_product_attention",
                  queries=tuple(queries.shape), keys=tuple(keys.shape), values=tuple(values.shape))
        value = student.call("scaled_dot_product_attention", queries, keys, values)  # `.T` errors: core/hints.py
        context, weights = unpack(value, 2, what, "(context, weights)")
        flat = [unpack(student.call("scaled_dot_product_attention", q, k, v), 2,
                       _f("{name} on one item of {shape}", name="scaled_dot_product_attention",
                          shape=tuple(queries.shape)), "(context, weights)")
                for q, k, v in zip(queries.flatten(0, -3), keys.flatten(0, -3), values.flatten(0, -3))]
        # d_k = keys.shape[1]: right on each item on its own, (T, d_k), and on a batch the number of keys
        wrong = attend(queries, keys, values, math.sqrt(keys.shape[1])) if keys.shape[1] != keys.shape[-1] else None
        for index, kind in ((1, _("weights")), (0, _("context"))):
            items = [pair[index] for pair in flat]
            expect(all(isinstance(item, torch.Tensor) for item in items),
                   _("scaled_dot_product_attention on one item should return tensors (context, weights)"))
            try:
                expected = torch.stack(items).reshape(*queries.shape[:-2], *items[0].shape)
            except RuntimeError as error:
                raise CheckFailed(_f("the {kind} of {name} have different shapes for the items of a batch: {error}",
                                     kind=kind, name="scaled_dot_product_attention", error=error)) from None
            expect_close((context, weights)[index], expected,
                         _f("the {kind} of {what}, compared with each item on its own", kind=kind, what=what),
                         mistakes={DIM_1_AS_D_K: wrong[index]} if wrong is not None else None,
                         hint=hint_if_written(student, "scaled_dot_product_attention", r"\.T\b", TRANSPOSE_HINT))


# one check per module (the order, the gradients): a mistake in one of the two costs that module's checks only
@check(0.25, "SelfAttention_v1 creates W_query, W_key, W_value in the documented order", visibility="visible",
       cell="SelfAttention_v1")
def test_v1_parameter_order(student):
    module = student.new("SelfAttention_v1", 4, 3, seed=41)
    params = module.params()
    tensors = [p for p in params.values() if isinstance(p, torch.Tensor)] if isinstance(params, dict) else []
    if any(bool((p < 0).any()) for p in tensors):
        raise CheckFailed(_("SelfAttention_v1's weights have negative entries: create them with torch.rand "
                            "(uniform in [0, 1)), not torch.randn"))
    raw = seeded_projections(4, 3, seed=41, raw=True)
    expect_same_params(module, {name: getattr(raw, name) for name in NAMES}, "SelfAttention_v1", V1_ORDER)


@check(0.25, "SelfAttention_v2 creates W_query, W_key, W_value in the documented order", visibility="visible",
       cell="SelfAttention_v2")
def test_v2_parameter_order(student):
    module = student.new("SelfAttention_v2", 4, 3, seed=42)
    layers = seeded_projections(4, 3, seed=42)
    expect_same_params(module, {f"{name}.weight": getattr(layers, name).weight for name in NAMES},
                       "SelfAttention_v2", V2_ORDER)


@check(0.5, "SelfAttention_v2 works on a batch (B, T, d_in): each item as on its own", visibility="visible", cell="SelfAttention_v2")
def test_v2_batch(student):
    batch = randn(371, 2, 5, 4)
    module = student.new("SelfAttention_v2", 4, 3, seed=51)
    expect_layer_shapes(module, "SelfAttention_v2(4, 3)", 4, 3)
    got = module(batch)  # an error raised on `.T` gets its hint (core/hints.py)
    expected = stack_items([module(item) for item in batch],
                           _f("{name} on a {shape} input", name="SelfAttention_v2(4, 3)", shape=(5, 4)),
                           "SelfAttention_v2")
    expect_close(got, expected, _f("{name} on a {shape} batch, compared with each item on its own",
                                   name="SelfAttention_v2(4, 3)", shape=(2, 5, 4)),
                 hint=hint_if_written(student, "SelfAttention_v2", r"\.T\b", TRANSPOSE_HINT))


def copied_by_student(student, d_in: int, d_out: int, seed: int):
    """copy_v2_weights_into_v1 called on a v1 and a v2 built from the documented parameters alone (stand-ins:
    the student's own classes would make a mistake in SelfAttention_v1 or v2 cost this check too).
    Returns (v2's weights by name, v1's parameters after the copy, the names that learnt before it, the
    gradients after it: None where v1's forward raised)."""
    v1 = student.stand_in("v1", [(name, rand(seed + i, d_in, d_out)) for i, name in enumerate(NAMES)])
    source = {name: randn(seed + 10 * (i + 1), d_out, d_in) for i, name in enumerate(NAMES)}
    v2 = student.stand_in("v2", linears=[(name, weight, None) for name, weight in source.items()])
    x, grad_output = randn(seed + 350, 6, d_in), randn(seed + 450, 6, d_out)
    before = v1.run(x, mode="train", backward=grad_output)
    trained = {name for name in NAMES if isinstance(before.param_grads.get(name), torch.Tensor)}
    try:
        student.call("copy_v2_weights_into_v1", v1.arg, v2.arg)
    except StudentFailure as failure:
        if failure.kind == "raised" and "in-place" in failure.message:
            raise CheckFailed(_f("{error}. Copy inside `with torch.no_grad():` so that autograd "
                                 "does not record the copy into v1's Parameters", error=failure.message)) from None
        raise
    copied = v1.params()
    after = run_unless_raised(v1.run, x, mode="train", backward=grad_output)
    return source, copied if isinstance(copied, dict) else {}, trained, after


@check(1, "copy_v2_weights_into_v1 loads v2's transposed weights into v1's own Parameters", visibility="visible", cell="copy_v2_weights_into_v1")
def test_copy_weights(student):
    """With a v1 and a v2 built from the documented parameters (stand-ins): the copy alone is graded, not the
    student's two classes. Two v2s of one size with different weights must leave different v1s behind."""
    # square first: a copy without the transpose runs there (and is named), and raises at the other size
    square, other = copied_by_student(student, 4, 4, 71), copied_by_student(student, 4, 4, 74)
    expect_not_hard_coded("copy_v2_weights_into_v1", (square[1].get("W_query"), other[1].get("W_query")),
                          (square[0]["W_query"].T, other[0]["W_query"].T))
    expect_copied(4, 4, *square)
    expect_copied(5, 3, *copied_by_student(student, 5, 3, 72))


def expect_copied(d_in: int, d_out: int, source: dict, copied: dict, trained: set, after) -> None:
    """v1 holds v2's transposed weights (a copied_by_student result), and what learnt before the copy still does."""
    size = f"d_in={d_in}, d_out={d_out}"
    for name in NAMES:
        weight = source[name]
        mistakes = {N_("Linear.weight copied without the transpose (nn.Linear stores it as (d_out, d_in))"): weight}
        mistakes.update({MIXED_UP[other, name]: source[other].T for other in NAMES if other != name})
        expect_close(copied.get(name), weight.T, _f("v1.{name} after copy_v2_weights_into_v1(v1, v2) with {size}",
                                                    name=name, size=size), mistakes=mistakes)
    for name in sorted(trained):
        expect(after is not None and isinstance(after.param_grads.get(name), torch.Tensor),
               _f("after copy_v2_weights_into_v1, v1.{name} no longer receives a gradient: keep v1's own "
                  "trainable Parameters (copy into them with .copy_ inside torch.no_grad(); do not switch "
                  "off requires_grad)", name=name))


def expect_module_gradients(student, name: str, seed: int, **kwargs) -> None:
    """Every parameter of the student's `name`(4, 3) gets a gradient."""
    x, grad_output = randn(seed + 350, 5, 4), randn(seed + 450, 5, 3)
    module = student.new(name, 4, 3, seed=seed, **kwargs)
    if name == "SelfAttention_v2":
        expect_layer_shapes(module, name, 4, 3)
    params = module.params()  # which ones it should have is the parameter checks' business
    expect_grads_flow(module.run(x, mode="train", backward=grad_output), list(params or {}), name)


@check(0.25, "SelfAttention_v1: gradients reach every parameter", visibility="visible", cell="SelfAttention_v1")
def test_v1_gradients(student):
    expect_module_gradients(student, "SelfAttention_v1", 81)


@check(0.25, "SelfAttention_v2: gradients reach every parameter", visibility="visible", cell="SelfAttention_v2")
def test_v2_gradients(student):
    expect_module_gradients(student, "SelfAttention_v2", 82, qkv_bias=True)


@check(0.25, "attention is computed without F.scaled_dot_product_attention or nn.MultiheadAttention",
       visibility="visible", cell="SelfAttention_v2")
def test_no_builtin_attention(student):
    """Only that they run without the section's forbidden APIs: their values are other checks' business."""
    queries, keys, values = randn(380, 4, 3), randn(381, 6, 3), randn(382, 6, 5)
    run_unless_raised(student.run, "scaled_dot_product_attention", queries, keys, values)
    x = randn(383, 5, 3)
    for name, seed in (("SelfAttention_v1", 91), ("SelfAttention_v2", 92)):
        run_unless_raised(student.new(name, 3, 2, seed=seed).run, x)


@check(0.25, "project_qkv and scaled_dot_product_attention leave their inputs unchanged", visibility="visible", cell="scaled_dot_product_attention")
def test_inputs_unchanged(student):
    x, weights = randn(384, 5, 4), [randn(seed, 4, 3) for seed in (385, 386, 387)]
    reply = run_unless_raised(student.run, "project_qkv", x, *weights, return_args=True)
    expect_unchanged(reply, [x, *weights], "project_qkv")
    queries, keys, values = randn(388, 5, 3), randn(389, 6, 3), randn(390, 6, 2)
    reply = run_unless_raised(student.run, "scaled_dot_product_attention", queries, keys, values, return_args=True)
    expect_unchanged(reply, [queries, keys, values], "scaled_dot_product_attention")


# ---------------------------------------------------------------- visible: against torch's own attention


def expect_attention(reply_value, queries, keys, values, what):
    """The student's (context, weights) must equal torch's own; common mistakes are named."""
    context, weights = unpack(reply_value, 2, what, "(context, weights)")
    expected_context, expected_weights = torch_attention(queries, keys, values)
    wrong = attention_mistakes(queries, keys, values)
    order = WRONG_ORDER
    # a visible check's inputs are public: a failure shows its weights (queries x keys) and context
    expect_close(weights, expected_weights, _f("the weights of {what}", what=what),
                 mistakes={order: expected_context, **{k: w for k, (c, w) in wrong.items()}}, heatmap_labels=True)
    expect_close(context, expected_context, _f("the context of {what}", what=what),
                 mistakes={order: expected_weights, **{k: c for k, (c, w) in wrong.items()}}, heatmap_labels=True)


@check(1.25, "scaled_dot_product_attention divides the scores by sqrt(d_k), d_k = keys.shape[-1], for one query "
             "or many", visibility="visible", cell="scaled_dot_product_attention")
def test_attention_scaling(student):
    queries, keys, values = randn(356, 5, 4, scale=1.5), randn(357, 7, 4, scale=1.5), randn(358, 7, 6)
    expect_attention(student.call("scaled_dot_product_attention", queries, keys, values), queries, keys, values,
                     _f("{name} with queries {queries}, keys {keys}, values {values}",
                        name="scaled_dot_product_attention", queries=(5, 4), keys=(7, 4), values=(7, 6)))
    queries, keys, values = randn(359, 4), randn(360, 7, 4), randn(361, 7, 6)
    expect_attention(student.call("scaled_dot_product_attention", queries, keys, values), queries, keys, values,
                     _f("{name} with a single query {queries}, keys {keys}, values {values}",
                        name="scaled_dot_product_attention", queries=(4,), keys=(7, 4), values=(7, 6)))


@check(0.5, "SelfAttention_v2(qkv_bias=True) creates and uses the three biases", visibility="visible", cell="SelfAttention_v2")
def test_v2_bias(student):
    module = student.new("SelfAttention_v2", 4, 3, qkv_bias=True, seed=61)
    manual_seed(61)  # the documented creation order, with torch's own layers
    layers = SimpleNamespace(**{name: torch.nn.Linear(4, 3, bias=True) for name in NAMES})
    expect_same_params(module, {f"{name}.{kind}": getattr(getattr(layers, name), kind)
                                for name in NAMES for kind in ("weight", "bias")},
                       "SelfAttention_v2(4, 3, qkv_bias=True)", V2_ORDER)
    x = randn(372, 5, 4)
    with torch.no_grad():
        expected = torch_attention(*(getattr(layers, name)(x) for name in NAMES))[0]
        without_bias = torch_attention(*(x @ getattr(layers, name).weight.T for name in NAMES))[0]
    expect_close(module(x), expected, "torch.manual_seed(61); SelfAttention_v2(4, 3, qkv_bias=True)(x)",
                 mistakes={N_("the biases left out of the projections"): without_bias,
                           **module_mistakes(layers, x)}, heatmap_labels=True)
