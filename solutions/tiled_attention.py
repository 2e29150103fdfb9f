"""Section 13: tiled attention with an online softmax (FlashAttention's forward pass, in PyTorch)."""
import math

import torch


# %% tiled_attention
def tiled_attention(q, k, v, block_q=64, block_k=64, causal=False):
    """Softmax attention computed tile by tile, with a running max and a running sum.

    Dimensions: ... = any leading dims (batch, heads), T = number of tokens, d = head_dim,
    bq = block_q, bk = block_k (the last block of either may be shorter when it does not divide T).

    Inputs:
        q, k, v: (..., T, d) queries, keys and values.
        block_q: how many queries one tile holds (default 64).
        block_k: how many keys one tile holds (default 64).
        causal: when True, query i sees keys j <= i only (True = hidden where j > i), and a tile whose
            keys all come after its queries (entirely above the diagonal) is never computed.

    Returns (out, logsumexp):
        out: (..., T, d), equal to softmax(q @ k^T / sqrt(d)) @ v.
        logsumexp: (..., T), the log of the sum of exp over each row of the scaled (and masked) scores.

    Never makes a tensor of T * T elements for one batch item and head: for each block of queries,
    the blocks of keys arrive one at a time; the running max m, the running sum l and the output
    accumulator acc are rescaled by exp(m_old - m_new) whenever the max grows. No softmax over a whole row,
    no F.scaled_dot_product_attention.

    Hints:
        1. For each block of queries, start m at -inf, l at 0 (both (..., bq)) and acc at 0 ((..., bq, d)).
        2. For each block of keys: the tile's scaled scores, m_new = max(m, the tile's row max), then
           alpha = exp(m - m_new) shrinks l and acc before the tile's exp(scores - m_new) is added.
        3. After the last block of keys: out = acc / l and logsumexp = m + log(l).
        4. With causal=True, stop at the first block of keys that starts after the block's last query.
    """
    # BEGIN SOLUTION
    num_tokens, head_dim = q.shape[-2], q.shape[-1]
    scale = 1.0 / math.sqrt(head_dim)
    outs, lses = [], []
    for q_start in range(0, num_tokens, block_q):
        q_end = min(q_start + block_q, num_tokens)
        q_block = q[..., q_start:q_end, :] * scale  # (..., bq, d)
        m = torch.full(q_block.shape[:-1], float("-inf"), dtype=q.dtype, device=q.device)  # (..., bq)
        l = torch.zeros_like(m)  # (..., bq)  # noqa: E741
        acc = torch.zeros_like(q_block)  # (..., bq, d)
        for k_start in range(0, k.shape[-2], block_k):
            if causal and k_start > q_end - 1:  # every key of this tile comes after every query: skip it
                break
            k_end = min(k_start + block_k, k.shape[-2])
            scores = q_block @ k[..., k_start:k_end, :].transpose(-2, -1)  # (..., bq, bk)
            if causal:
                rows = torch.arange(q_start, q_end, device=q.device)[:, None]  # (bq, 1)
                cols = torch.arange(k_start, k_end, device=q.device)[None, :]  # (1, bk)
                scores = scores.masked_fill(cols > rows, float("-inf"))
            m_new = torch.maximum(m, scores.amax(dim=-1))  # (..., bq)
            p = torch.exp(scores - m_new[..., None])  # (..., bq, bk)
            alpha = torch.exp(m - m_new)  # (..., bq): how much the old sum and output shrink
            l = alpha * l + p.sum(dim=-1)  # noqa: E741
            acc = alpha[..., None] * acc + p @ v[..., k_start:k_end, :]  # (..., bq, d)
            m = m_new
        outs.append(acc / l[..., None])
        lses.append(m + torch.log(l))
    return torch.cat(outs, dim=-2), torch.cat(lses, dim=-1)  # (..., T, d), (..., T)
    # END SOLUTION
