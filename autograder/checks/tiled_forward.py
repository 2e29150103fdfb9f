"""Section 13's attention written out by its checks, and what the common wrong online softmaxes return: the
right values from full rows (the checks may hold a (T, T) matrix; the student's function may not), the tiles a
causal call needs, and each catalogued slip of the tiled loop replayed on the check's own inputs. Also what the
worker measured in a call (worker/measure_tiles.py) read back. Shipped whole with the visible checks: it never
imports `solutions`; its messages are section 13's (autograder/i18n/catalogues.py)."""
import math

import torch

from autograder.i18n import N_

UNRESCALED_SUM = N_("a running sum not rescaled: when the max grows, the old sum must be multiplied by "
                    "exp(m_old - m_new) too, as the output accumulator is")
UNRESCALED_ACC = N_("an output accumulator not rescaled: when the max grows, the old accumulator must be "
                    "multiplied by exp(m_old - m_new), as the running sum is")
# the rescale factor turned upside down (alpha = exp(m_new - m)) gives the same nan from the first block on: one name
OLD_MAX = N_("the max updated after the sum, or the rescale factor upside down: exp(scores - m) with the old max, or "
             "alpha = exp(m_new - m), gives inf while m is -inf before the first block; update the max first, then "
             "rescale the sum and the output by alpha = exp(m_old - m_new)")
LSE_NO_MAX = N_("a log-sum-exp off by the max: log(l) is the log of the sum of exp(scores - m); the "
                "log-sum-exp is m + log(l)")
NO_SCALE = N_("scores not divided by sqrt(d) (d = the last dim of q)")
NOT_DIVIDED = N_("the output not divided by the final sum (return acc / l, the weighted sum over the sum of "
                 "the weights)")
PARTIAL_DROPPED = N_("the last block dropped when the block size does not divide T (range(T // block) misses "
                     "the shorter last block: step through range(0, T, block) and cut at min(start + block, T))")
FULL_SCORES = N_("the full (T, T) scores materialised (compute one block_q x block_k tile of scores at a time)")
ABOVE_DIAGONAL = N_("causal tiles entirely above the diagonal still computed (masked, but computed: skip a tile "
                    "whose first key comes after its last query)")
LOCAL_MASK = N_("a tile's causal mask built from positions inside the tile: number its queries and keys from the "
                "tile's first ones, torch.arange(q0, q1) and torch.arange(k0, k1), not from 0")
DIAGONAL_SKIPPED = N_("tiles that the diagonal crosses skipped too: only a tile whose first key comes after its last "
                      "query lies entirely above the diagonal")
ABOVE_BY_ONE = N_("the causal skip off by one: the tile whose first key comes right after the block's last query is "
                  "still computed (skip a tile where its first key k_start > q_end - 1, the block's last query)")
TILE_MAX = N_("the max taken over the whole tile (amax() without dim=-1): each row must keep its own running max, "
              "or the rows far below the tile's largest score underflow to 0 / 0")
CAUSAL_DEFAULT = N_("causal=True by default: the default is causal=False, every key visible to every query")
MADE_ELSEWHERE = N_("a tensor made without device= (torch.full, torch.zeros, torch.arange, ...) lands on the CPU, "
                    "apart from inputs on a GPU: make it with device=q.device, and in the inputs' dtype "
                    "(dtype=q.dtype)")
# where a nan comes from here (said instead of harness.NAN_NOTE's guess about a mask: the inputs are finite, and
# every row sees key 0)
NAN_HERE = N_("nan appears from inf / inf, inf - inf or 0 / 0: exp(scores - m) with m still -inf gives inf, and a "
              "sum of no keys at all gives 0")
# the slips of the tiled loop that change values: replayed by `tiled` on the check's inputs
VALUE_SLIPS = (UNRESCALED_SUM, UNRESCALED_ACC, OLD_MAX, LSE_NO_MAX, NO_SCALE, NOT_DIVIDED, PARTIAL_DROPPED, LOCAL_MASK,
               DIAGONAL_SKIPPED)


def full_attention(q, k, v, causal: bool = False):
    """(out, logsumexp) from full rows: what tiled_attention must equal."""
    scores = q.double() @ k.double().transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        hidden = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    out = torch.softmax(scores, dim=-1) @ v.double()
    return out.float(), torch.logsumexp(scores, dim=-1).float()


def starts(length: int, block: int, slip: str = "") -> range:
    """Where the blocks start; the slip PARTIAL_DROPPED leaves out the shorter last block (of keys: a query
    block left out gives a shorter output, which the shape check names)."""
    return range(0, (length // block) * block if slip == PARTIAL_DROPPED else length, block)


def tiled(q, k, v, block_q: int, block_k: int, causal: bool = False, slip: str = ""):
    """(out, logsumexp) of the tiled online softmax, right where `slip` is "", else with that slip of
    VALUE_SLIPS (or OLD_MAX); in float64, so that the right values and a slip's differ by the slip only."""
    q, k, v = q.double(), k.double(), v.double()
    scale = 1.0 if slip == NO_SCALE else 1.0 / math.sqrt(q.shape[-1])
    outs, lses = [], []
    for q0 in starts(q.shape[-2], block_q):
        q1 = min(q0 + block_q, q.shape[-2])
        m = torch.full(q[..., q0:q1, 0].shape, float("-inf"), dtype=q.dtype)
        l, acc = torch.zeros_like(m), torch.zeros_like(q[..., q0:q1, :])  # noqa: E741
        for k0 in starts(k.shape[-2], block_k, slip):
            if causal and k0 > (q0 if slip == DIAGONAL_SKIPPED else q1 - 1):
                break
            k1 = min(k0 + block_k, k.shape[-2])
            s = q[..., q0:q1, :] @ k[..., k0:k1, :].transpose(-2, -1) * scale
            if causal:
                first_q, first_k = (0, 0) if slip == LOCAL_MASK else (q0, k0)
                queries, keys = torch.arange(first_q, first_q + q1 - q0), torch.arange(first_k, first_k + k1 - k0)
                s = s.masked_fill(keys[None, :] > queries[:, None], float("-inf"))
            m_new = torch.maximum(m, s.amax(-1))
            p = torch.exp(s - (m if slip == OLD_MAX else m_new)[..., None])
            alpha = torch.exp(m - m_new)
            l = (1.0 if slip == UNRESCALED_SUM else alpha) * l + p.sum(-1)  # noqa: E741
            acc = (1.0 if slip == UNRESCALED_ACC else alpha[..., None]) * acc + p @ v[..., k0:k1, :]
            m = m_new
        outs.append(acc if slip == NOT_DIVIDED else acc / l[..., None])
        lses.append(torch.log(l) if slip == LSE_NO_MAX else m + torch.log(l))
    return torch.cat(outs, -2).float(), torch.cat(lses, -1).float()


def slipped(q, k, v, block_q: int, block_k: int, causal: bool = False, part: int = 0, slips=VALUE_SLIPS) -> dict:
    """mistake -> what that slip returns as `part` (0: out, 1: logsumexp), for expect_close's mistakes=; a slip
    that changes nothing on these inputs is left out (it could not be told from the right answer), and so are two
    slips that return the same (a nan everywhere, say): naming either would guess."""
    right = tiled(q, k, v, block_q, block_k, causal)[part]
    values = {slip: tiled(q, k, v, block_q, block_k, causal, slip)[part] for slip in slips}
    told = [slip for slip, value in values.items() if not same(value, right)]
    return {slip: values[slip] for slip in told if not any(same(values[slip], values[other])
                                                            for other in told if other != slip)}


def same(a, b) -> bool:
    """Equal values, nan and inf where the other has them."""
    return a.shape == b.shape and bool(torch.allclose(a, b, atol=1e-5, equal_nan=True))


def tile_area(num_tokens: int, block_q: int, block_k: int, causal: bool, beyond: int = 0) -> tuple[int, int]:
    """(tiles, query-key scores in them) that a right tiled call computes for one batch item and head; with
    beyond=1, those of ABOVE_BY_ONE (a causal loop that stops one key later)."""
    tiles = area = 0
    for q0 in range(0, num_tokens, block_q):
        q1 = min(q0 + block_q, num_tokens)
        for k0 in range(0, num_tokens, block_k):
            if causal and k0 > q1 - 1 + beyond:
                break
            tiles, area = tiles + 1, area + (q1 - q0) * (min(k0 + block_k, num_tokens) - k0)
    return tiles, area


def score_tiles(measured: dict, head_dim: int) -> list[tuple[int, int]]:
    """(rows, columns) of each matrix product of inner size head_dim: the tiles of scores the call computed."""
    products = measured.get("products")
    return [(rows, columns) for _batch, rows, inner, columns in products if inner == head_dim] \
        if isinstance(products, list) else []


def scored(measured: dict, head_dim: int, items: int) -> int | None:
    """The query-key scores one batch item and head had computed by matrix products (those whose inner size is
    head_dim: the tiles' scores, never their weighted values when block_k differs from head_dim); None when the
    worker sent no measure."""
    products = measured.get("products")
    if not isinstance(products, list):
        return None
    total = sum(batch * rows * columns for batch, rows, inner, columns in products if inner == head_dim)
    return total // max(1, items)
