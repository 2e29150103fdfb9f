"""Checks of section 02: from scores to weights to context vectors (10 points).

The section's registry entry (SECTION) and its visible checks: the documented weights and context vectors of
the worked example, and the properties that need no reference (normalize_by_sum proportional to its input and
summing to 1, softmax equal to torch's own, weights summing to 1, stable at magnitude 1000 and with -inf
entries, no built-in softmax, arguments left unchanged). The self-check runs them and the students' wheel
ships this module as it is, so nothing here imports `solutions` or holds a hidden seed's expected output. The
hidden checks, which the grader runs after these, compare with the reference solutions on fresh inputs: they
are in checks/hidden/hidden_02_softmax.py.
"""

SECTION = {  # the registry's entry (autograder/core/sections.py reads it without importing this file)
    "title": "From scores to weights to context vectors",
    "solution": "solutions.softmax",
    "names": ("normalize_by_sum", "softmax_naive", "softmax", "context_vectors", "simple_self_attention"),
    "forbidden": "softmax",
    "forbidden_in": ("softmax_naive", "softmax"),
    "provided": ("solutions.scores:score_matrix",),
    "rules": {"unchanged": ("normalize_by_sum", "softmax_naive", "softmax")},
}

import math

import torch

from autograder.checks.common import (TOKENS, WORKED_INPUTS, expect_not_hard_coded, expect_sums_to_one,
                                      expect_unchanged, rand, randn, run_unless_raised, stand_in_table)
from autograder.core.harness import CheckFailed, check, differs_from_mistakes, expect, expect_close
from autograder.i18n import N_, _, _f

JOURNEY_SCORES = WORKED_INPUTS @ WORKED_INPUTS[1]  # the scores of query 'journey' (section 01)
DOC_NORMALIZED = torch.tensor([0.1455, 0.2278, 0.2249, 0.1285, 0.1077, 0.1656])
DOC_JOURNEY_WEIGHTS = torch.tensor([0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581])
DOC_WEIGHTS = torch.tensor(
    [[0.2098, 0.2006, 0.1981, 0.1242, 0.1220, 0.1452],
     [0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581],
     [0.1390, 0.2369, 0.2326, 0.1242, 0.1108, 0.1565],
     [0.1435, 0.2074, 0.2046, 0.1462, 0.1263, 0.1720],
     [0.1526, 0.1958, 0.1975, 0.1367, 0.1879, 0.1295],
     [0.1385, 0.2184, 0.2128, 0.1420, 0.0988, 0.1896]])
DOC_Z2 = torch.tensor([0.4419, 0.6515, 0.5683])
DOC_CONTEXT = torch.tensor(
    [[0.4421, 0.5931, 0.5790], [0.4419, 0.6515, 0.5683], [0.4431, 0.6496, 0.5671],
     [0.4304, 0.6298, 0.5510], [0.4671, 0.5910, 0.5266], [0.4177, 0.6503, 0.5645]])

# The mistakes' descriptions and the hints are made at import time: marked with N_, translated where shown
COLUMNS = N_("softmax over dim 0 or -2 (down the columns) instead of the last dim, "
             "or the weights transposed in context_vectors")
INF = float("-inf")
# which reduction lacked keepdim=True -> the mistake (whole sentences, so that each is translated)
KEEPDIM = {"max": N_("a max taken without keepdim=True (the result broadcast along the wrong dim)"),
           "sum": N_("a sum taken without keepdim=True (the result broadcast along the wrong dim)"),
           "max and sum": N_("a max and sum taken without keepdim=True (the result broadcast along the wrong dim)")}
OVERFLOW_HINT = N_("exp overflows for large inputs (exp(1000.) is inf, and inf / inf is nan): "
                   "subtract the max along dim before exponentiating")
# these inputs are finite, so no row is all -inf: harness.NAN_NOTE's guess about a mask cannot apply
OVERFLOW_NAN = N_("nan appears here from inf / inf (no entry of the input is -inf)")
OVER_EMBEDDING = N_("a sum over the embedding dim instead of over the tokens")
UNSCALED = N_("scores divided by sqrt(d) (this attention is unscaled)")
TRANSPOSED = N_("the weights transposed (row i must use weights[i, :], the weights of query i)")
TRANSPOSED_BATCH = N_("the weights transposed (row i must use weights[..., i, :], the weights of query i)")
ALL_ENTRIES = N_("a division by the sum of all entries instead of the sum along dim")
L2_NORM = N_("a division by the L2 norm (F.normalize's default p=2) instead of the sum")
OTHER_DIM_MAX = N_("the max subtracted along dim 0 instead of along the softmax's dim (each slice along dim needs "
                   "its own max: x.amax(dim=dim, keepdim=True))")
GLOBAL_MAX = N_("the max of the whole tensor subtracted instead of each slice's own max along dim (a slice far "
                "below it underflows: exp gives 0 everywhere there, and 0 / 0 is nan; use x.amax(dim=dim, "
                "keepdim=True))")
EITHER_MAX = N_("a max taken along the wrong dim: without keepdim=True, or along dim 0 (each row needs its own max: "
                "x.amax(dim=dim, keepdim=True))")
NEG_INF_HINT = N_("a row with some -inf entries must give weight 0 there and ordinary weights elsewhere; "
                  "shift by the max along dim (finite whenever the row has a finite entry), "
                  "not by the mean, the min or the sum")


def softmax_mistakes(x, dim):
    """What common wrong softmax versions return for softmax(x, dim)."""
    dim = dim % x.dim()
    last = x.dim() - 1
    wrong = {}
    if dim != 0:
        wrong[N_("softmax over dim 0 instead of the dim you were given (the wrong dim)")] = torch.softmax(x, 0)
    if dim != last:
        wrong[N_("softmax over the last dim whatever dim is (the wrong dim)")] = torch.softmax(x, -1)
    if dim != 0:  # without keepdim a reduction over dim 0 still broadcasts right
        kept = x.amax(dim, keepdim=True)
        for what, peak, keep in (("max", x.amax(dim), True), ("sum", kept, False),
                                 ("max and sum", x.amax(dim), False)):
            try:
                exps = torch.exp(x - peak)
                wrong[KEEPDIM[what]] = exps / exps.sum(dim, keepdim=keep)
            except RuntimeError:  # this shape does not broadcast: the student's call raised too
                continue
    if dim != 0:  # the max subtracted, but along another dim: stable, and wrong
        exps = torch.exp(x - x.amax(0, keepdim=True))
        wrong[OTHER_DIM_MAX] = exps / exps.sum(dim, keepdim=True)
    exps = torch.exp(x - x.max())
    wrong[N_("a softmax over all entries at once (the sum ignores dim)")] = exps / exps.sum()
    return wrong


def symmetric_mistakes(scores):
    """softmax_mistakes of a symmetric matrix along its last dim, where a max taken without keepdim and a max taken
    along dim 0 give the same values: named as one, which says both (naming one would guess)."""
    wrong = softmax_mistakes(scores, -1)
    if torch.equal(wrong[KEEPDIM["max"]], wrong[OTHER_DIM_MAX]):
        wrong = {(EITHER_MAX if key == KEEPDIM["max"] else key): value for key, value in wrong.items()
                 if key != OTHER_DIM_MAX}
    return wrong


# ---------------------------------------------------------------- visible: documented values


@check(0.5, "normalize_by_sum gives the documented weights of 'journey'", documented=True, cell="normalize_by_sum")
def test_normalize_documented(student):
    got = student.call("normalize_by_sum", JOURNEY_SCORES)
    other = rand(160, 6) + 0.1  # other (positive) scores: a written-out answer gives itself away
    expect_not_hard_coded("normalize_by_sum", (got, student.call("normalize_by_sum", other)),
                          (JOURNEY_SCORES / JOURNEY_SCORES.sum(), other / other.sum()))
    expect_close(got, DOC_NORMALIZED, _f("{name}(scores of 'journey')", name="normalize_by_sum"), atol=1e-4,
                 mistakes={N_("a softmax (this function only divides by the sum)"): torch.softmax(JOURNEY_SCORES, -1),
                           L2_NORM: JOURNEY_SCORES / JOURNEY_SCORES.norm()})


@check(1, "softmax_naive and softmax give the documented weights", documented=True, cell="softmax")
def test_softmax_documented(student):
    other = randn(161, 6)  # other scores: a written-out answer gives itself away
    for name in ("softmax_naive", "softmax"):
        got = student.call(name, JOURNEY_SCORES)
        expect_not_hard_coded(name, (got, student.call(name, other)),
                              (torch.softmax(JOURNEY_SCORES, -1), torch.softmax(other, -1)))
        expect_close(got, DOC_JOURNEY_WEIGHTS, _f("{name}(scores of 'journey')", name=name), atol=1e-4,
                     mistakes={N_("normalize_by_sum (divide by the sum) instead of a softmax"):
                                   JOURNEY_SCORES / JOURNEY_SCORES.sum()})
    scores = WORKED_INPUTS @ WORKED_INPUTS.T
    # the worked example's weights are shown in the report, passing or not
    # a square matrix: a max or sum taken without keepdim=True broadcasts along the wrong dim without an error
    expect_close(student.call("softmax", scores), DOC_WEIGHTS, "softmax(score_matrix(inputs))", atol=1e-4,
                 mistakes={N_("softmax over dim 0 (down the columns) instead of the last dim"):
                               torch.softmax(scores, 0), **symmetric_mistakes(scores)},
                 heatmap_labels=TOKENS, show_passing=True)


@check(0.5, "context_vectors gives the documented context vector z(2)", documented=True, cell="context_vectors")
def test_context_documented(student):
    weights = torch.softmax(JOURNEY_SCORES, dim=-1)
    got = student.call("context_vectors", weights, WORKED_INPUTS)
    other_weights, other_inputs = torch.softmax(randn(162, 6), -1), randn(163, 6, 3)  # a written-out answer shows
    expect_not_hard_coded("context_vectors", (got, student.call("context_vectors", other_weights, other_inputs)),
                          (weights @ WORKED_INPUTS, other_weights @ other_inputs))
    expect_close(got, DOC_Z2, _("context_vectors(weights of 'journey', inputs)"), atol=1e-4,
                 mistakes={OVER_EMBEDDING: (weights.unsqueeze(-1) * WORKED_INPUTS).sum(-1)})


@check(0.5, "context_vectors handles all queries at once, (T, T) weights, and a batch, (B, T, T) weights",
       visibility="visible", cell="context_vectors")
def test_context_cases(student):
    """The task's other two cases on the worked example (one query's is the documented z(2)): the (T, T) weights
    give every documented context vector, and a batch of two (the worked example, and the identity, whose
    context vectors are the inputs themselves) both at once."""
    expect_close(student.call("context_vectors", DOC_WEIGHTS, WORKED_INPUTS), DOC_CONTEXT,
                 _f("{name} with {weights} weights and {inputs} inputs", name="context_vectors", weights=(6, 6),
                    inputs=(6, 3)), atol=1e-3, mistakes={TRANSPOSED: DOC_WEIGHTS.T @ WORKED_INPUTS})
    batch_weights = torch.stack([DOC_WEIGHTS, torch.eye(6)])
    batch_inputs = torch.stack([WORKED_INPUTS, WORKED_INPUTS])
    expect_close(student.call("context_vectors", batch_weights, batch_inputs), torch.stack([DOC_CONTEXT, WORKED_INPUTS]),
                 _f("{name} with {weights} weights and {inputs} inputs", name="context_vectors", weights=(2, 6, 6),
                    inputs=(2, 6, 3)), atol=1e-3,
                 mistakes={TRANSPOSED_BATCH: batch_weights.transpose(-2, -1) @ batch_inputs})


def right_helpers(*inputs, softmax=torch.softmax, context=torch.matmul) -> dict:
    """softmax's and context_vectors' answers for what simple_self_attention passes them on each of `inputs`,
    made here from their contracts (or by the functions given): what the checks of simple_self_attention hand it
    in place of the student's own two (Student.standing_in), so that a mistake in either costs its own checks
    only (score_matrix is a locked cell's already)."""
    scores = [x @ x.transpose(-2, -1) for x in inputs]
    weights = [softmax(s, -1) for s in scores]
    return {"softmax": stand_in_table(("x", "dim"), [({"x": s, "dim": -1}, w) for s, w in zip(scores, weights)],
                                      {"dim": -1}),
            "context_vectors": stand_in_table(("weights", "inputs"), [({"weights": w, "inputs": x}, context(w, x))
                                                                      for w, x in zip(weights, inputs)])}


@check(1, "simple_self_attention gives the documented context vectors", documented=True, cell="simple_self_attention")
def test_simple_attention_documented(student):
    scores = WORKED_INPUTS @ WORKED_INPUTS.T
    other = randn(164, 6, 3)  # a written-out answer shows
    with student.standing_in(right_helpers(WORKED_INPUTS, other)):
        got, got_other = (student.call("simple_self_attention", x) for x in (WORKED_INPUTS, other))
    expect_not_hard_coded("simple_self_attention", (got, got_other),
                          (torch.softmax(scores, -1) @ WORKED_INPUTS, torch.softmax(other @ other.T, -1) @ other))
    expect_close(got, DOC_CONTEXT,
                 "simple_self_attention(inputs)", atol=1e-4,
                 mistakes={COLUMNS: torch.softmax(scores, 0) @ WORKED_INPUTS,
                           UNSCALED: torch.softmax(scores / math.sqrt(3), -1) @ WORKED_INPUTS})


# ---------------------------------------------------------------- visible: properties


def expect_normalized(got, x, dim: int, what: str, mistakes: dict) -> None:
    """`got` is x divided by its sum along `dim`: proportional to x along dim, and summing to 1 there."""
    named = differs_from_mistakes(got, mistakes)
    if named:
        raise CheckFailed(_f("{what}: wrong values. This looks like {mistake}", what=what, mistake=_(named)), named)
    expect_sums_to_one(got, tuple(x.shape), what, dim=dim)
    ratio = got.double() / x.double()  # the same factor 1 / sum along dim for every entry
    expect(bool(torch.allclose(ratio, ratio.amax(dim, keepdim=True).expand_as(ratio), rtol=1e-4, atol=0.0)),
           _f("{what}: the entries are not x divided by one number per slice along dim {dim}", what=what, dim=dim))


@check(0.5, "normalize_by_sum divides by the sum along the given dim", visibility="visible", cell="normalize_by_sum")
def test_normalize_random(student):
    square = rand(251, 5, 5) + 0.1
    expect_normalized(student.call("normalize_by_sum", square), square, -1,
                      _f("{name} on a {shape} input", name="normalize_by_sum", shape=(5, 5)),
                      {N_("the sum taken without keepdim=True (it broadcast along the wrong dim)"):
                           square / square.sum(-1),
                       ALL_ENTRIES: square / square.sum(),
                       N_("a division by the sum along dim 0 instead of the last dim"):
                           square / square.sum(0, keepdim=True),
                       L2_NORM: square / square.norm(dim=-1, keepdim=True)})
    cube = rand(252, 3, 4, 5) + 0.1
    for dim in (0, 1):
        expect_normalized(student.call("normalize_by_sum", cube, dim=dim), cube, dim,
                          _f("{name} on a {shape} input", name=f"normalize_by_sum(x, dim={dim})", shape=(3, 4, 5)),
                          {N_("a division by the sum along the last dim whatever dim is"):
                               cube / cube.sum(-1, keepdim=True),
                           ALL_ENTRIES: cube / cube.sum()})


# ---------------------------------------------------------------- visible: softmax against torch's own


@check(0.5, "softmax_naive equals torch.softmax on small inputs", visibility="visible", cell="softmax_naive")
def test_softmax_naive_random(student):
    """The first call leaves dim out: the documented default, dim=-1, is part of the contract."""
    first, other = randn(253, 4, 6), randn(270, 4, 6)  # one answer for two inputs: a written-out one shows
    expect_not_hard_coded("softmax_naive", [student.call("softmax_naive", x) for x in (first, other)],
                          [torch.softmax(x, -1) for x in (first, other)])
    for x, dim in ((first, None), (randn(254, 3, 4, 5), 1)):
        exps = torch.exp(x)
        given = {} if dim is None else {"dim": dim}
        dim = -1 if dim is None else dim
        expect_close(student.call("softmax_naive", x, **given), torch.softmax(x, dim),
                     _f("{name} on a {shape} input", name=f"softmax_naive(x{f', dim={dim}' if given else ''})",
                        shape=tuple(x.shape)),
                     mistakes={**softmax_mistakes(x, dim),
                               N_("exp(x) / sum(x) (divide by the sum of the exps)"): exps / x.sum(dim, keepdim=True)})


@check(1, "softmax matches torch.softmax on any shape and along any dim", visibility="visible", cell="softmax")
def test_softmax_any_dim(student):
    cases = ((randn(255, 5, 5, scale=3.0), -1), (randn(256, 7, scale=3.0), 0),
             (randn(257, 2, 3, 4, scale=3.0), 0), (randn(257, 2, 3, 4, scale=3.0), 1),
             (randn(258, 2, 3, 4, 5, scale=3.0), 2))
    for x, dim in cases:
        expect_close(student.call("softmax", x, dim=dim), torch.softmax(x, dim),
                     _f("{name} on a {shape} input", name=f"softmax(x, dim={dim})", shape=tuple(x.shape)),
                     mistakes=softmax_mistakes(x, dim))


@check(0.5, "softmax weights are positive and sum to 1 along dim", visibility="visible", cell="softmax")
def test_softmax_sums_to_one(student):
    x = randn(259, 4, 6, scale=4.0)
    expect_sums_to_one(student.call("softmax", x), (4, 6), _f("{name} on a {shape} input", name="softmax(x)",
                                                              shape=(4, 6)))
    cube = randn(260, 3, 4, 5, scale=4.0)
    expect_sums_to_one(student.call("softmax", cube, dim=1), (3, 4, 5),
                       _f("{name} on a {shape} input", name="softmax(x, dim=1)", shape=(3, 4, 5)), dim=1)


# before the overflow check: a shift by the mean (or the min, or the sum) fails both, and only this one says
# which shift it is (on a row with a -inf entry the three are -inf alike, so it names all three)
@check(0.5, "softmax handles rows that contain -inf (masked entries get weight 0)", visibility="visible", cell="softmax")
def test_softmax_minus_inf(student):
    """-inf entries get weight 0 and nothing becomes nan. Every slice, along any dim, keeps a finite
    entry, so the check judges the handling of -inf alone (the dim is the other checks' business)."""
    matrix = randn(265, 4, 6, scale=2.0)
    matrix_hidden = rand(266, 4, 6) < 0.4
    matrix_hidden[:, 0] = False  # every row keeps a finite entry
    matrix_hidden[0, :] = False  # and every column
    cube = randn(267, 2, 5, 3)
    cube_hidden = rand(268, 2, 5, 3) < 0.3
    cube_hidden[:, 0, :] = False
    cube_hidden[1] = False  # every slice along any dim keeps a finite entry
    for x, hidden, dim, what in (
            (matrix, matrix_hidden, -1, _f("{name} of a {shape} input with some -inf entries", name="softmax",
                                           shape=(4, 6))),
            (cube, cube_hidden, 1, _f("{name} of a {shape} input with some -inf entries", name="softmax(x, dim=1)",
                                      shape=(2, 5, 3)))):
        reply = run_unless_raised(student.run, "softmax", x.masked_fill(hidden, INF), dim=dim)
        if reply is None:
            continue  # it raised: the checks of the values grade that
        weights = reply.value
        expect(isinstance(weights, torch.Tensor) and weights.shape == x.shape,
               _f("{what}: expected a tensor of shape {shape}, got {got}", what=what, shape=tuple(x.shape),
                  got=tuple(weights.shape) if isinstance(weights, torch.Tensor) else type(weights).__name__))
        expect(not bool(torch.isnan(weights).any()), _f("{what} gives nan: {hint}", what=what, hint=_(NEG_INF_HINT)))
        expect(bool((weights[hidden] == 0).all()),
               _f("{what}: the -inf entries should get weight 0: {hint}", what=what, hint=_(NEG_INF_HINT)))


@check(1, "softmax is stable on inputs of magnitude 1000 (subtract the max)", visibility="visible", cell="softmax")
def test_softmax_large_inputs(student):
    """Stability alone: large inputs give what small ones give, never inf or nan. Whether the values
    are right (the dim, keepdim) is the other checks' business, so the student's softmax is compared
    with itself: a constant added to every entry changes no softmax, along any dim."""
    pair = torch.tensor([1000.0, 1001.0])
    expect_close(student.call("softmax", pair), torch.softmax(pair, -1), "softmax([1000., 1001.])", scale=1001.0,
                 hint=OVERFLOW_HINT, nan_note=OVERFLOW_NAN)
    for x, dim in ((randn(261, 4, 5, scale=3.0), -1), (randn(262, 3, 2, 4, scale=3.0), 0)):
        small = run_unless_raised(student.run, "softmax", x, dim=dim)
        if small is None or not isinstance(small.value, torch.Tensor):
            continue  # nothing to compare with: the checks of the values grade it
        what = _f("{name} on a {shape} input", name=f"softmax(x + 1000, dim={dim})", shape=tuple(x.shape))
        # the hint is already in the reader's language: _() of a sentence not in a catalogue is the sentence itself
        expect_close(student.call("softmax", x + 1000.0, dim=dim), small.value, what, scale=1000.0,
                     hint=_f("compared with {call}: {hint}", call=f"softmax(x, dim={dim})", hint=_(OVERFLOW_HINT)),
                     nan_note=OVERFLOW_NAN)
    for x, dim in ((randn(263, 4, 5, scale=1000.0), -1), (randn(264, 3, 2, 4, scale=500.0), 0)):
        reply = run_unless_raised(student.run, "softmax", x, dim=dim)
        if reply is not None and isinstance(reply.value, torch.Tensor):
            # a max subtracted along another dim gives nan too: named where the values are its own, not told to
            # subtract the max it subtracts
            # so does the max of the whole tensor: the slices far below it underflow to 0 / 0
            exps = torch.exp(x - x.max())
            candidates = {OTHER_DIM_MAX: softmax_mistakes(x, dim).get(OTHER_DIM_MAX),
                          GLOBAL_MAX: exps / exps.sum(dim, keepdim=True)}
            named = next((key for key, other in candidates.items()
                          if other is not None and reply.value.shape == other.shape
                          and bool(torch.allclose(reply.value.float(), other, atol=1e-4, equal_nan=True))), "")
            expect(bool(torch.isfinite(reply.value).all()),
                   _f("{name} on a {shape} input with entries in the hundreds gives inf or nan: {hint}",
                      name=f"softmax(x, dim={dim})", shape=tuple(x.shape),
                      hint=_(named or OVERFLOW_HINT)), mistake=named)


# ---------------------------------------------------------------- visible: conventions


@check(0.5, "softmax and softmax_naive compute the exps themselves (no built-in softmax)", visibility="visible", cell="softmax")
def test_no_builtin_softmax(student):
    """Only that they run without the section's forbidden APIs: their values are other checks' business."""
    x = randn(267, 3, 5, scale=2.0)
    for name in ("softmax_naive", "softmax"):
        run_unless_raised(student.run, name, x)


@check(0.5, "normalize_by_sum and the softmaxes leave their input unchanged", visibility="visible", cell="softmax")
def test_inputs_unchanged(student):
    positive, x = rand(268, 4, 5) + 0.1, randn(269, 4, 5, scale=3.0)
    for name, arg in (("normalize_by_sum", positive), ("softmax_naive", x), ("softmax", x)):
        expect_unchanged(run_unless_raised(student.run, name, arg, return_args=True), [arg], name)
