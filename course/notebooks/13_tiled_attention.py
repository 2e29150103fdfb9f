# %% [markdown]
# # 13 · Tiled attention with an online softmax
#
# This notebook belongs to **part 2** of the course: its points count in part
# 2's own total.
#
# Every attention layer so far wrote the scores out as one `(T, T)` matrix per
# batch item and head, then took a softmax over each of its rows. For 6 tokens
# that is 36 numbers; for a context of 32 768 tokens it is about a billion per
# head, four gigabytes in float32, before any weight is applied. The memory grows
# with the square of the length, and on a GPU reading and writing that matrix
# costs more time than computing it.
#
# FlashAttention (Dao et al., 2022) computes exactly the same output without ever
# holding that matrix: it cuts the queries and the keys into **blocks**, computes
# one small **tile** of scores at a time (a block of queries against a block of
# keys), and folds each tile into the result as it arrives, with an **online
# softmax**: a running max and a running sum per query, rescaled whenever a
# larger score turns up. Its kernels do this inside the GPU's fast on-chip
# memory; here you write the same algorithm in plain PyTorch, so that you can
# see, and the checks can measure, that no `(T, T)` tensor is ever made.
#
# **The rules of this notebook.** `tiled_attention` computes the softmax itself,
# tile by tile: it may not call `F.scaled_dot_product_attention` or
# `nn.MultiheadAttention`, nor any softmax function (a softmax needs a whole row
# at once, which is what the tiles avoid); the grader refuses them. It may never
# make a tensor with `T * T` elements for one batch item and head: the checks
# measure the largest tensor your call makes (its size, never its time).

# %% [setup]
# <common setup>

import math


# %% [markdown]
# ## 1. The softmax, one block at a time
#
# Take one query and its row of scaled scores $s_1, \dots, s_T$ (each score is
# $q \cdot k_j / \sqrt{d}$, with $d$ the last dim of the queries, as in every
# notebook so far). Its softmax weights are $e^{s_j - m} / \ell$, with $m$ the
# row's max and $\ell = \sum_j e^{s_j - m}$, and its output is
# $\sum_j e^{s_j - m} v_j / \ell$.
#
# Suppose the keys arrive in blocks. After some blocks you know $m$, $\ell$ and
# the unnormalised output $a = \sum_j e^{s_j - m} v_j$ **of the keys seen so
# far**. A new block brings scores $s'$, with its own max. Then:
#
# 1. the new max is $m_{\text{new}} = \max(m, \max_j s'_j)$;
# 2. everything computed with the old max is too large by a factor
#    $e^{m_{\text{new}} - m}$, so it is multiplied by
#    $\alpha = e^{m - m_{\text{new}}}$ (at most 1);
# 3. $\ell \leftarrow \alpha\,\ell + \sum_j e^{s'_j - m_{\text{new}}}$ and
#    $a \leftarrow \alpha\,a + \sum_j e^{s'_j - m_{\text{new}}} v'_j$;
# 4. $m \leftarrow m_{\text{new}}$.
#
# Before the first block, $m = -\infty$, $\ell = 0$, $a = 0$ (so the first
# $\alpha$ is $e^{-\infty} = 0$). After the last block the output is $a / \ell$,
# the same numbers as the full softmax, up to float rounding. The **order
# matters**: the new max first, then the sum and the output rescaled and
# increased, then the max kept. And **both** $\ell$ and $a$ are rescaled: forget
# one and the output is wrong as soon as a later block holds a larger score.
#
# The same loop also gives the row's **log-sum-exp**,
# $\log \sum_j e^{s_j} = m + \log \ell$ (not $\log \ell$ alone: $\ell$ is a sum
# of $e^{s_j - m}$). FlashAttention keeps it for the backward pass, which
# recomputes the weights from it as $e^{s_j - \mathrm{logsumexp}}$ instead of
# storing them.
#
# A tiny example first: one row of eight scores, in blocks of three.

# %%
torch.manual_seed(0)
row = torch.randn(8) * 3
m, total = torch.tensor(float("-inf")), torch.tensor(0.0)
for start in range(0, 8, 3):
    block = row[start:start + 3]
    m_new = torch.maximum(m, block.max())
    total = torch.exp(m - m_new) * total + torch.exp(block - m_new).sum()
    m = m_new
    print(f"keys {start}..{min(start + 3, 8) - 1}: running max {m.item():.4f}, running sum {total.item():.4f}")
print("online log-sum-exp:", (m + torch.log(total)).item())
print("torch.logsumexp:   ", torch.logsumexp(row, dim=0).item())

# %% [markdown]
# ## 2. Tiles of queries and keys
#
# For a whole sequence, the queries are cut into blocks too. Each block of
# `block_q` queries keeps its own running max and sum (one per query: shape
# `(..., block_q)`) and its own accumulator `(..., block_q, d)`, and meets the
# blocks of `block_k` keys one after the other. A tile's scores are one product,
# `q_block @ k_block.transpose(-2, -1)`, of shape `(..., block_q, block_k)`:
# that is the largest thing the loop makes. The leading dims `...` (batch,
# heads) ride along in every product, so the loops run over blocks only.
#
# **Block sizes that do not divide `T`.** The last block of queries or keys is
# then shorter. Step with `range(0, T, block)` and cut at
# `min(start + block, T)`: `range(T // block)` would silently drop the last
# tokens.
#
# **Causal attention** (query $i$ sees keys $j \le i$; True = hidden where
# $j > i$, as in every notebook). A tile whose **first key comes after its last
# query** lies entirely above the diagonal: every one of its scores would be
# hidden, so it is never computed (skip it, or stop the loop over key blocks
# there: the key blocks come in order). A tile that the diagonal crosses is
# computed, and its hidden entries set to $-\infty$ before the exp. Skipping is
# where the causal version saves about half of the work.
#
# ### Your task: `tiled_attention(q, k, v, block_q=64, block_k=64, causal=False)`
#
# - `q`, `k`, `v`: `(..., T, d)`, any number of leading dims (none, a batch, a
#   batch and heads).
# - Returns `(out, logsumexp)`: `out` of shape `(..., T, d)`, equal to
#   $\mathrm{softmax}(QK^\top/\sqrt{d})V$, and `logsumexp` of shape `(..., T)`,
#   the log-sum-exp of each row of the scaled (and, with `causal=True`, masked)
#   scores.
# - The defaults are 64 queries and 64 keys per block (FlashAttention's tiles
#   are of that order); the checks also pass other sizes, including sizes that
#   do not divide `T` and blocks larger than `T`.
# - Scale the scores by $1/\sqrt{d}$.
# - Loop over blocks of queries, and inside over blocks of keys, with the
#   running max, sum and accumulator of section 1; never a tensor with `T * T`
#   elements for one batch item and head (no full scores, and no `(T, T)` mask
#   either: build each tile's mask from its positions, e.g. with
#   `torch.arange`).
# - Make every tensor in the inputs' dtype too (`dtype=q.dtype`): the
#   function then runs in half precision as it does in float32, and returns
#   `q`'s dtype.
# - With `causal=True`, never compute a tile entirely above the diagonal.

# %% [solution] tiled_attention

# %% [test] tiled_attention 1
check("tiled_attention")

# %% [markdown]
# ## 3. The worked example
#
# With `q = k = v = batch` (the six tokens, a batch of two) this is the
# attention of notebook 02, without trainable weights, now scaled by $1/\sqrt{3}$:
# `tiled_attention(batch, batch, batch, block_q=2, block_k=4)` gives, for each
# item,
# `[[0.4374, 0.5896, 0.5582], [0.4362, 0.6228, 0.5523], [0.4370, 0.6216, 0.5515], [0.4303, 0.6104, 0.5417], [0.4525, 0.5874, 0.5274], [0.4219, 0.6231, 0.5507]]`
# and the log-sum-exp `[2.2296, 2.4383, 2.4298, 2.1483, 2.1033, 2.2542]`.
# With `block_q=2, block_k=2, causal=True`, the output is
# `[[0.4300, 0.1500, 0.8900], [0.4993, 0.5657, 0.7572], [0.5249, 0.6685, 0.7148], [0.4541, 0.6381, 0.6314], [0.5206, 0.5514, 0.5236], [0.4219, 0.6231, 0.5507]]`
# (the first token sees only itself) and the log-sum-exp
# `[0.5771, 1.4124, 1.8541, 1.7728, 1.9471, 2.2542]`. Compare with the full
# softmax, which you may write out here, outside your function:

# %%
out, lse = tiled_attention(batch, batch, batch, block_q=2, block_k=4)
scores = batch @ batch.transpose(-2, -1) / math.sqrt(3)
print("output:\n", out[0])
print("largest difference from the full softmax:", (out - torch.softmax(scores, dim=-1) @ batch).abs().max().item())
print("log-sum-exp:", lse[0])
print("largest difference from torch.logsumexp:", (lse - torch.logsumexp(scores, dim=-1)).abs().max().item())

# %% [markdown]
# ## 4. Which tiles a causal call computes
#
# Six tokens in blocks of two give 3 × 3 tiles. Under `causal=True` the three
# tiles above the diagonal are never computed: 6 of the 9 tiles, 24 of the 36
# scores. The picture shows each score of the `(6, 6)` matrix: 1 where a
# computed tile holds a visible score, 0.5 where a computed tile (one the
# diagonal crosses) holds a hidden one, set to $-\infty$, and 0 where the tile
# is skipped. On longer sequences the skipped share tends to one half.

# %%
def computed_tiles(num_tokens, block_q, block_k):
    """1 for a visible score of a computed tile, 0.5 for a hidden one, 0 for a skipped tile."""
    picture = torch.zeros(num_tokens, num_tokens)
    for first_query in range(0, num_tokens, block_q):
        queries = torch.arange(first_query, min(first_query + block_q, num_tokens))
        for first_key in range(0, num_tokens, block_k):
            if first_key > queries[-1]:  # the tile's first key comes after its last query
                break
            keys = torch.arange(first_key, min(first_key + block_k, num_tokens))
            hidden = keys[None, :] > queries[:, None]
            picture[queries[:, None], keys[None, :]] = torch.ones(len(queries), len(keys)).masked_fill(hidden, 0.5)
    return picture


show_weights(computed_tiles(6, 2, 2), title="causal=True, block_q=2, block_k=2: 6 of 9 tiles computed")
show_weights(computed_tiles(11, 4, 3), labels=[str(i) for i in range(11)],
             title="causal=True, 11 tokens, block_q=4, block_k=3: 9 of 12 tiles computed")

# %% [markdown]
# ## 5. What it saves
#
# The largest tensor your function makes is one tile of scores per batch item
# and head, `block_q × block_k`, whatever `T`. The full softmax makes `T × T`.
# Count the numbers each one holds at its largest as `T` doubles (on a GPU,
# `torch.cuda.max_memory_allocated()` shows the same: the tiled call's peak
# grows in step with `T`, the full one's four times as fast).

# %%
for num_tokens in (256, 512, 1024):
    print(f"T = {num_tokens}: one tile of scores holds {64 * 64} numbers, the full scores {num_tokens ** 2}")
q = torch.randn(1, 2, 512, 16)
out, lse = tiled_attention(q, q, q, causal=True)
full = torch.softmax((q @ q.transpose(-2, -1) / 4).masked_fill(torch.ones(512, 512).triu(1).bool(), float("-inf")), -1) @ q
print("causal, 512 tokens: largest difference from the full softmax:", (out - full).abs().max().item())
