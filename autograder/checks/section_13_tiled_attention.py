"""Checks of section 13 (part 2): tiled attention with an online softmax (10 points).

The section's registry entry (SECTION) and its visible checks: the documented output and log-sum-exp of the worked
example (q = k = v = the batch of two, without and with the causal mask), then the properties that need no
reference: equal to softmax attention written out with full rows (the checks may hold a (T, T) matrix), block
sizes that do not divide T, any leading dims, the log-sum-exp of each row, each row's own max (a row's scores all
raised by 200 leave its output as it was), and what the call makes and computes, measured in the worker
(worker/measure_tiles.py): no tensor as large as one batch item's and head's (T, T) scores, under causal=True no
tile entirely above the diagonal, tiles of 64 x 64 by default, its tensors on the inputs' device and in their
dtype. Never a time. The self-check runs them and the
students' wheel ships this module as it is, so nothing here imports `solutions`. The hidden checks compare with
the reference on fresh sizes: checks/hidden/hidden_13_tiled_attention.py.
"""

SECTION = {  # the registry's entry (autograder/core/sections.py reads it without importing this file)
    "title": "Tiled attention with an online softmax",
    "solution": "solutions.tiled_attention",
    "names": ("tiled_attention",),
    "forbidden": "softmax and attention",
    "forbidden_in": ("tiled_attention",),
    "part": 2,
    "rules": {"unchanged": ("tiled_attention",), "device": ("tiled_attention",)},
}

import torch

from autograder.checks.common import TOKENS, WORKED_BATCH, expect_not_hard_coded, expect_unchanged, randn, \
    run_unless_raised, run_where_made
from autograder.checks.tiled_forward import (ABOVE_BY_ONE, ABOVE_DIAGONAL, CAUSAL_DEFAULT, FULL_SCORES, MADE_ELSEWHERE,
                                             NAN_HERE, PARTIAL_DROPPED, TILE_MAX, full_attention, score_tiles, scored,
                                             slipped, tile_area)
from autograder.core.harness import CheckFailed, StudentFailure, check, expect, expect_close
from autograder.i18n import _, _f

NAME = "tiled_attention"
# the worked example: q = k = v = batch, softmax(q k^T / sqrt(3)) v, each item
DOC_OUT = torch.tensor(
    [[0.4374, 0.5896, 0.5582], [0.4362, 0.6228, 0.5523], [0.4370, 0.6216, 0.5515],
     [0.4303, 0.6104, 0.5417], [0.4525, 0.5874, 0.5274], [0.4219, 0.6231, 0.5507]])
DOC_LSE = torch.tensor([2.2296, 2.4383, 2.4298, 2.1483, 2.1033, 2.2542])
# the same with block_q=2, block_k=2, causal=True (the first token sees only itself)
DOC_CAUSAL_OUT = torch.tensor(
    [[0.4300, 0.1500, 0.8900], [0.4993, 0.5657, 0.7572], [0.5249, 0.6685, 0.7148],
     [0.4541, 0.6381, 0.6314], [0.5206, 0.5514, 0.5236], [0.4219, 0.6231, 0.5507]])
DOC_CAUSAL_LSE = torch.tensor([0.5771, 1.4124, 1.8541, 1.7728, 1.9471, 2.2542])


def called(call: str, shape: tuple) -> str:
    """What a message calls a call: its code, then the inputs' shape, in the reader's language."""
    return _f("{call}, q, k, v of shape {shape}", call=call, shape=tuple(shape))


def attend(student, q, k, v, what: str, **kwargs):
    """(out, logsumexp, the call's reply) of the student's function, the pair's shapes checked."""
    reply = student.run(NAME, q, k, v, **kwargs)
    pair = reply.value
    expect(isinstance(pair, (tuple, list)) and len(pair) == 2 and all(isinstance(t, torch.Tensor) for t in pair),
           _f("{what} should return a pair of tensors (out, logsumexp), got {got}", what=what,
              got=type(pair).__name__))
    out, lse = pair
    for value, shape, part in ((out, q.shape, "out"), (lse, q.shape[:-1], "logsumexp")):
        if tuple(value.shape) == tuple(shape):
            continue
        message = _f("{what}: {part} should have shape {expected}, got {got}", what=what, part=part,
                     expected=tuple(shape), got=tuple(value.shape))
        # as many rows as whole blocks of queries: the shorter last one left out (range(T // block_q))
        tokens, block_q = shape[-1 if part == "logsumexp" else -2], kwargs.get("block_q", 64)
        dropped = value.dim() == len(shape) and value.shape[len(shape) - 1 if part == "logsumexp" else -2] == (
            tokens // block_q) * block_q < tokens
        if dropped:
            message += _f(". This looks like {mistake}", mistake=_(PARTIAL_DROPPED))
        raise CheckFailed(message, PARTIAL_DROPPED if dropped else "")
    return out, lse, reply


def expect_attention(student, q, k, v, block_q: int, block_k: int, causal: bool, what: str, *, part: int = 0,
                     documented=None, heatmap: bool = False):
    """One call's out (part 0) or logsumexp (part 1) against full rows (or the documented values), the tiled
    loop's slips named; returns the student's pair."""
    out, lse, _reply = attend(student, q, k, v, what, block_q=block_q, block_k=block_k, causal=causal)
    expected = full_attention(q, k, v, causal)[part] if documented is None else documented
    got = (out, lse)[part]
    expect_close(got, expected, what if part == 0 else _f("{what}: logsumexp", what=what),
                 atol=1e-4 if documented is not None else None,
                 mistakes=slipped(q, k, v, block_q, block_k, causal, part),
                 heatmap_labels=(TOKENS, None) if heatmap else None, show_passing=heatmap and part == 0,
                 nan_note=NAN_HERE)
    return out, lse


# ---------------------------------------------------------------- documented values (1.75 points)

@check(1, "tiled_attention gives the documented output and log-sum-exp of the worked example", documented=True,
       cell="tiled_attention")
def test_documented(student):
    what = "tiled_attention(batch, batch, batch, block_q=2, block_k=4)"
    other = randn(1301, 2, 6, 3)  # other inputs: a written-out answer gives itself away
    out, lse = expect_attention(student, WORKED_BATCH, WORKED_BATCH, WORKED_BATCH, 2, 4, False, what,
                                documented=DOC_OUT.expand(2, 6, 3), heatmap=True)
    other_out = attend(student, other, other, other, what, block_q=2, block_k=4)[0]
    expect_not_hard_coded(NAME, (out, other_out), (DOC_OUT, full_attention(other, other, other)[0]))
    expect_close(lse, DOC_LSE.expand(2, 6), _f("{what}: logsumexp", what=what), atol=1e-4,
                 mistakes=slipped(WORKED_BATCH, WORKED_BATCH, WORKED_BATCH, 2, 4, part=1), nan_note=NAN_HERE)


@check(0.75, "tiled_attention gives the documented causal output and log-sum-exp of the worked example",
       documented=True, cell="tiled_attention")
def test_documented_causal(student):
    what = "tiled_attention(batch, batch, batch, block_q=2, block_k=2, causal=True)"
    out, lse = expect_attention(student, WORKED_BATCH, WORKED_BATCH, WORKED_BATCH, 2, 2, True, what,
                                documented=DOC_CAUSAL_OUT.expand(2, 6, 3), heatmap=True)
    expect_close(lse, DOC_CAUSAL_LSE.expand(2, 6), _f("{what}: logsumexp", what=what), atol=1e-4,
                 mistakes=slipped(WORKED_BATCH, WORKED_BATCH, WORKED_BATCH, 2, 2, True, part=1), nan_note=NAN_HERE)


# ---------------------------------------------------------------- values on other inputs (4 points)

@check(1.25, "tiled_attention equals softmax attention when the block sizes do not divide T", visible=True,
       cell="tiled_attention")
def test_equals_softmax_attention(student):
    q, k, v = randn(1311, 2, 3, 7, 4), randn(1312, 2, 3, 7, 4), randn(1313, 2, 3, 7, 4)
    expect_attention(student, q, k, v, 3, 2, False,
                     called("tiled_attention(q, k, v, block_q=3, block_k=2)", q.shape))


@check(0.75, "tiled_attention's logsumexp is the log-sum-exp of each row of the scaled scores", visible=True,
       cell="tiled_attention")
def test_logsumexp(student):
    q, k, v = randn(1321, 2, 9, 5, scale=2.0), randn(1322, 2, 9, 5, scale=2.0), randn(1323, 2, 9, 5)
    expect_attention(student, q, k, v, 4, 4, False,
                     called("tiled_attention(q, k, v, block_q=4, block_k=4)", q.shape), part=1)


@check(1.0, "tiled_attention with causal=True equals causal softmax attention", visible=True, cell="tiled_attention")
def test_causal_values(student):
    q, k, v = randn(1331, 2, 10, 4), randn(1332, 2, 10, 4), randn(1333, 2, 10, 4)
    for part in (0, 1):
        expect_attention(student, q, k, v, 4, 3, True,
                         called("tiled_attention(q, k, v, block_q=4, block_k=3, causal=True)", q.shape), part=part)


@check(0.75, "tiled_attention takes (T, d) inputs without leading dims and blocks larger than T", visible=True,
       cell="tiled_attention")
def test_no_leading_dims(student):
    q, k, v = randn(1341, 5, 4), randn(1342, 5, 4), randn(1343, 5, 4)
    for causal in (False, True):
        expect_attention(student, q, k, v, 8, 16, causal,
                         called(f"tiled_attention(q, k, v, block_q=8, block_k=16, causal={causal})", q.shape))


@check(0.25, "tiled_attention keeps each row's own max: raising all of a row's scores by 200 leaves its output as "
       "it was", visible=True, cell="tiled_attention")
def test_own_row_max(student):
    """Softmax ignores what is added to a whole row: the call's own output, before and after row 0's scores are all
    raised by 200 (the values themselves are the other checks'). A max shared by the whole tile leaves the other
    rows exp(-200) = 0 in float32, and 0 / 0. Row 0's scores lose digits at that size: atol 1e-3."""
    q, k, v = randn(1381, 2, 6, 4), randn(1382, 2, 6, 4), randn(1383, 2, 6, 4)
    k[..., -1] = 1.0  # every key's last feature is 1: a query's last feature adds the same to each of its scores
    raised = q.clone()
    raised[..., 0, -1] += 400.0  # row 0: + 400 / sqrt(4) to each score
    call = "tiled_attention(q, k, v, block_q=3, block_k=3)"
    plain = attend(student, q, k, v, called(call, q.shape), block_q=3, block_k=3)[0]
    if not bool(torch.isfinite(plain).all()):
        return  # a nan on ordinary inputs: the checks of the values grade that
    what = _f("{call}, q, k, v of shape {shape}, with k[..., -1] = 1 and q[..., 0, -1] raised by 400 (row 0's scores "
              "all raised by 200)", call=call, shape=tuple(q.shape))
    got = attend(student, raised, k, v, what, block_q=3, block_k=3)[0]
    expect(bool(torch.isfinite(got).all()), _f("{what}: the output holds nan or inf where the same call without the "
                                               "raise gave numbers. This looks like {mistake}", what=what,
                                               mistake=_(TILE_MAX)), mistake=TILE_MAX)
    expect_close(got, plain, _f("{what}, compared with the same call without the raise", what=what), atol=1e-3)


# ---------------------------------------------------------------- what the call makes and computes (3 points)

MEASURED_SHAPE = (1, 2, 40, 5)  # T = 40: one batch item's and head's (T, T) scores hold 1600 numbers


def largest_made(student, causal: bool) -> tuple[int, str]:
    """(elements of the largest tensor the call made, what was called): T = 40 in blocks of 8."""
    q, k, v = (randn(1351 + i, *MEASURED_SHAPE) for i in range(3))
    what = called(f"tiled_attention(q, k, v, block_q=8, block_k=8, causal={causal})", MEASURED_SHAPE)
    reply = attend(student, q, k, v, what, block_q=8, block_k=8, causal=causal, measure=True)[2]
    return int(reply.measured.get("largest", 0)), what


@check(1.25, "tiled_attention never makes a tensor as large as one head's (T, T) scores", visible=True,
       cell="tiled_attention")
def test_no_full_scores(student):
    """Measured in the worker: the largest tensor any op of the call made (views excluded), against T * T."""
    limit = MEASURED_SHAPE[-2] ** 2
    for causal in (False, True):
        largest, what = largest_made(student, causal)
        expect(largest < limit, _f("{what} made a tensor of {largest} elements, at least the {limit} of one batch "
                                   "item's and head's (T, T) scores. This looks like {mistake}", what=what,
                                   largest=largest, limit=limit, mistake=_(FULL_SCORES)), mistake=FULL_SCORES)


@check(1.25, "tiled_attention with causal=True never computes a tile entirely above the diagonal", visible=True,
       cell="tiled_attention")
def test_causal_tiles_skipped(student):
    """Measured in the worker: the query-key scores the call's matrix products computed, against the tiles on or
    below the diagonal (T = 11 in tiles of 4 x 2: 12 of the 18; block_k divides a block's end, so a skip off by
    one computes a tile more). A call that made the full scores is the previous check's mistake, not this one's."""
    q, k, v = randn(1361, 2, 11, 5), randn(1362, 2, 11, 5), randn(1363, 2, 11, 5)
    what = called("tiled_attention(q, k, v, block_q=4, block_k=2, causal=True)", q.shape)
    reply = attend(student, q, k, v, what, block_q=4, block_k=2, causal=True, measure=True)[2]
    if int(reply.measured.get("largest", 0)) >= 11 * 11:
        return
    tiles, area = tile_area(11, 4, 2, causal=True)
    all_tiles, full = tile_area(11, 4, 2, causal=False)
    got = scored(reply.measured, 5, items=2)
    if got is None:
        raise CheckFailed(_("the worker did not measure the call"))
    expect(got < full, _f("{what} computed {got} query-key scores per batch item and head, all {full} of the "
                          "{all_tiles} tiles; the {tiles} tiles on or below the diagonal hold {area}. This looks "
                          "like {mistake}", what=what, got=got, full=full, all_tiles=all_tiles, tiles=tiles,
                          area=area, mistake=_(ABOVE_DIAGONAL)), mistake=ABOVE_DIAGONAL)
    by_one = tile_area(11, 4, 2, causal=True, beyond=1)[1]
    expect(got != by_one, _f("{what} computed {got} query-key scores per batch item and head; the {tiles} tiles on or "
                             "below the diagonal hold {area}. This looks like {mistake}", what=what, got=got,
                             tiles=tiles, area=area, mistake=_(ABOVE_BY_ONE)), mistake=ABOVE_BY_ONE)
    expect(got <= area, _f("{what} computed {got} query-key scores per batch item and head by matrix products, more "
                           "than the {area} that the {tiles} tiles of block_q x block_k on or below the diagonal "
                           "hold: compute each needed tile's scores with one product q_block @ "
                           "k_block.transpose(-2, -1), and no other", what=what, got=got, tiles=tiles, area=area))


DEFAULT_SHAPE = (65, 3)  # a token more than a default block: tiles of 64 x 64, 64 x 1, 1 x 64 and 1 x 1


@check(0.25, "tiled_attention's defaults: blocks of 64 queries and 64 keys, causal=False", visible=True,
       cell="tiled_attention")
def test_defaults(student):
    """The call without block sizes nor causal against the same call with the documented defaults written out (the
    values themselves are the other checks'), and the largest tile of scores its matrix products computed, measured
    in the worker (a call that made the full scores is test_no_full_scores's)."""
    q, k, v = (randn(1391 + i, *DEFAULT_SHAPE) for i in range(3))
    what = called("tiled_attention(q, k, v)", DEFAULT_SHAPE)
    out, _lse, reply = attend(student, q, k, v, what, measure=True)
    written = "tiled_attention(q, k, v, block_q=64, block_k=64, causal={causal})"
    explicit, causal = (attend(student, q, k, v, called(written.format(causal=flag), DEFAULT_SHAPE), block_q=64,
                               block_k=64, causal=flag)[0] for flag in (False, True))
    expect_close(out, explicit, _f("{what}, compared with {call}", what=what, call=written.format(causal=False)),
                 mistakes={CAUSAL_DEFAULT: causal}, nan_note=NAN_HERE)
    tiles = score_tiles(reply.measured, DEFAULT_SHAPE[-1])
    if not tiles or int(reply.measured.get("largest", 0)) >= DEFAULT_SHAPE[0] ** 2:
        return
    rows, columns = max(rows for rows, _ in tiles), max(columns for _, columns in tiles)
    expect((rows, columns) == (64, 64), _f("{what} computed tiles of scores of up to {rows} x {columns}; the default "
                                           "blocks are block_q=64 queries by block_k=64 keys", what=what, rows=rows,
                                           columns=columns))


@check(0.25, "tiled_attention makes its tensors on the inputs' device and in their dtype", visible=True,
       cell="tiled_attention")
def test_device_and_dtype(student):
    """Only where and in which dtype the call makes its tensors (the values are the other checks'): inputs on the
    CPU while a tensor made without device= lands on the meta device, as one made on the CPU sits apart from inputs
    on a GPU; then bfloat16 inputs, whose out and logsumexp stay bfloat16."""
    q, k, v = randn(1395, 2, 7, 4), randn(1396, 2, 7, 4), randn(1397, 2, 7, 4)
    what = called("tiled_attention(q, k, v, block_q=3, block_k=3, causal=True)", q.shape)
    advice = _(MADE_ELSEWHERE)  # the values are the other checks': only where and in which dtype
    if run_where_made(student.run, NAME, q, k, v, block_q=3, block_k=3, causal=True, mistake=MADE_ELSEWHERE,
                      advice=advice) is None:
        return  # it raised for another reason: the checks of the values grade that
    try:
        reply = student.run(NAME, q, k, v, block_q=3, block_k=3, causal=True, default_device="meta")
    except StudentFailure as failure:
        if failure.kind not in ("raised", "convention"):
            raise
        raise CheckFailed(_f("{what} fails when the default device is not the inputs' device: {error}. Most likely "
                             "{advice}", what=what, error=failure.shortened(300), advice=advice),
                          mistake=MADE_ELSEWHERE) from None
    mixed = "; ".join(reply.mixed_devices[:2])
    expect(not mixed, _f("{what} mixes devices ({mixed}) when the default device is not the inputs' device: "
                         "{advice}", what=what, mixed=mixed, advice=advice), mistake=MADE_ELSEWHERE)
    half = [tensor.to(torch.bfloat16) for tensor in (q, k, v)]
    what = _f("{call}, q, k, v of shape {shape} in bfloat16",
              call="tiled_attention(q, k, v, block_q=3, block_k=3, causal=True)", shape=tuple(q.shape))
    try:
        out, lse, _reply = attend(student, *half, what, block_q=3, block_k=3, causal=True)
    except StudentFailure as failure:
        if failure.kind != "raised":
            raise
        raise CheckFailed(_f("{what}: {error}. Most likely {advice}", what=what, error=failure.shortened(300),
                             advice=advice), mistake=MADE_ELSEWHERE) from None
    expect(out.dtype == lse.dtype == torch.bfloat16,
           _f("{what} returned out in {out} and logsumexp in {lse}; both should keep the inputs' dtype, bfloat16: "
              "{advice}", what=what, out=out.dtype, lse=lse.dtype, advice=advice), mistake=MADE_ELSEWHERE)


@check(0.25, "tiled_attention leaves its inputs unchanged", visible=True, cell="tiled_attention")
def test_inputs_unchanged(student):
    q, k, v = randn(1371, 2, 7, 4), randn(1372, 2, 7, 4), randn(1373, 2, 7, 4)
    reply = run_unless_raised(student.run, NAME, q, k, v, block_q=3, block_k=3, causal=True, return_args=True)
    expect_unchanged(reply, [q, k, v], NAME)

