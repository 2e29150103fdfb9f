# %% [markdown]
# # 08 · Efficient multi-head attention
#
# This notebook opens **part 2** of the course: attention as today's language
# models run it. Its points count in part 2's own total; part 1 (notebooks
# 01–07) keeps its total, whether you do part 2 or not.
#
# Notebook 06 ended with a `MultiHeadAttention` that computes every head in one
# batched product. It still multiplies the input by three separate matrices,
# `W_query`, `W_key` and `W_value`, and it still writes the attention out step
# by step: scores, mask, softmax, dropout, weighted sum. Real models squeeze
# both parts further:
#
# 1. **One projection instead of three.** The three matrices read the same
#    input, so they can be stacked into one `Linear(d_in, 3 * d_out)`: one large
#    matrix product, whose output is then cut into queries, keys and values.
#    PyTorch's own `nn.MultiheadAttention` keeps its weights this way (its
#    `in_proj_weight`), and so do GPT-2 and the bonus chapter on efficient
#    multi-head attention of *Build a Large Language Model From Scratch*, which
#    this notebook follows.
# 2. **One fused attention call.** `F.scaled_dot_product_attention` computes
#    $\mathrm{softmax}(QK^\top/\sqrt{d_k})V$ in one function, and on a GPU picks
#    a kernel that never stores the full $T \times T$ matrix of weights
#    (FlashAttention, Dao et al., 2022; memory-efficient attention, Rabe and
#    Staats, 2021). The formula is still the one of *Attention Is All You Need*
#    (Vaswani et al., 2017); only the way it is computed changes.
#
# You build both, and check that they give exactly what notebook 06 gives.
#
# **The rules of this notebook.** `MultiHeadAttentionFused` writes the attention
# out itself, as in notebook 06: it may not call
# `F.scaled_dot_product_attention` or `nn.MultiheadAttention` (the grader
# refuses it). `MultiHeadAttentionSDPA` is the opposite: there
# `F.scaled_dot_product_attention` is the point, and it must be called.

# %% [setup]
# <common setup>

from torch.nn import functional as F


# %% [markdown]
# ## 1. The starting point
#
# Here is a working `MultiHeadAttention` (the one of notebook 06), so this
# notebook does not depend on your earlier work.

# %% [provided] solutions.multihead:MultiHeadAttention

# %% [markdown]
# ## 2. One projection for queries, keys and values
#
# Stack the three weight matrices of notebook 06 on top of each other, queries
# first, then keys, then values. `W_qkv(x)` then returns, for each token,
# `3 * d_out` numbers in three blocks:
#
# | columns of `W_qkv(x)` | what they are |
# |---|---|
# | `[0, d_out)` | the queries (head $h$ in `[h*head_dim, (h+1)*head_dim)`, as in notebook 06) |
# | `[d_out, 2*d_out)` | the keys |
# | `[2*d_out, 3*d_out)` | the values |
#
# **This block order is the convention of this course**, the same as the book's
# and as `nn.MultiheadAttention`'s `in_proj_weight`: it lets you copy a model's
# weights across without shuffling them. Some code bases store the columns the
# other way round, head by head (`[q_0, k_0, v_0, q_1, k_1, v_1, ...]`); read
# with our convention, such weights give wrong outputs, and so does reading our
# weights that way. With the block order, the cut is a reshape:
#
# ```
# (b, T, 3 * d_out) -> view (b, T, 3, num_heads, head_dim) -> permute (3, b, num_heads, T, head_dim)
# ```
#
# and the three tensors along the first axis are the queries, keys and values of
# every head. (A view to `(b, T, num_heads, 3, head_dim)` has the same size but
# reads the other, interleaved order.)
#
# The rest is notebook 06: scores scaled by $\sqrt{\text{head\_dim}}$, the causal
# mask (True = hidden), softmax, dropout on the weights, heads combined, then
# `out_proj`.
#
# `load_from(mha)` copies a `MultiHeadAttention` of notebook 06 into the fused
# layer: its three weights (and biases, where the fused layer has one) stacked
# into `W_qkv` in the block order above, its `out_proj` into `out_proj`. Copy
# inside `torch.no_grad()` (autograd must not record a copy into a parameter),
# keep your own parameters (`.copy_` into them, do not replace them), and return
# `self`, so that `MultiHeadAttentionFused(...).load_from(mha)` is the loaded
# layer.
#
# ### Your task: `MultiHeadAttentionFused(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False)`
#
# Layers in this order: `W_qkv`, `out_proj`, `dropout`. Raise `ValueError` when
# `num_heads` does not divide `d_out`. `forward(x)` returns
# `(b, num_tokens, d_out)`; no Python loop over heads.

# %% [solution] MultiHeadAttentionFused

# %% [test] MultiHeadAttentionFused 1
check("MultiHeadAttentionFused")

# %% [markdown]
# A pleasant surprise first: built after `torch.manual_seed(123)`,
# `MultiHeadAttentionFused(3, 2, 6, 0.0, num_heads=2)(batch)` gives exactly the
# seeded output of notebook 06, for each item
# `[[0.3190, 0.4858], [0.2943, 0.3897], [0.2856, 0.3593], [0.2693, 0.3873], [0.2639, 0.3928], [0.2575, 0.4028]]`.
# One `Linear(3, 6)` without bias draws its 18 weights from the same random
# stream, with the same range (it depends on `d_in` only), as three
# `Linear(3, 2)` in a row, and the stacked rows land exactly where the block
# order puts the queries, keys and values. With `qkv_bias=True` the coincidence
# ends (each `Linear` draws its bias right after its weight), and `load_from`
# is the way to carry weights across. After it, the two layers agree to the
# last digit:

# %%
torch.manual_seed(123)
mha = MultiHeadAttention(3, 2, 6, 0.0, num_heads=2, qkv_bias=True)
fused = MultiHeadAttentionFused(3, 2, 6, 0.0, num_heads=2, qkv_bias=True)
mha.eval()
fused.eval()
print("before load_from, largest difference:", (mha(batch) - fused(batch)).abs().max().item())
fused.load_from(mha)
print("notebook 06's layer:\n", mha(batch)[0])
print("the fused layer after load_from:\n", fused(batch)[0])
print("after load_from, largest difference:", (mha(batch) - fused(batch)).abs().max().item())

# %% [markdown]
# Both print
# `[[0.7732, -0.2205], [0.7706, -0.1791], [0.7684, -0.1686], [0.7485, -0.1963], [0.7558, -0.1972], [0.7427, -0.2082]]`.
# The loaded weight is the three weights of notebook 06 stacked, queries on
# top:

# %%
show_weights(fused.W_qkv.weight.detach(), labels=["q0", "q1", "k0", "k1", "v0", "v1"],
             title="W_qkv.weight after load_from: rows 0-1 queries, 2-3 keys, 4-5 values")

# %% [markdown]
# ## 3. PyTorch's fused attention
#
# `F.scaled_dot_product_attention(query, key, value, attn_mask=None,
# dropout_p=0.0, is_causal=False)` takes tensors of shape
# `(..., T, head_dim)` (here `(b, num_heads, T, head_dim)`) and returns the
# context vectors of the same shape. It divides the scores by
# $\sqrt{\text{head\_dim}}$ itself, and with `is_causal=True` it hides every key
# after the query's own position, so you build no mask at all.
#
# One thing it cannot know: whether your module is training. It is a function,
# not a module, so `model.eval()` does not reach it, and `dropout_p` drops
# weights whenever it is above 0. Pass `dropout_p=self.dropout` only when
# `self.training` is True, and `0.0` otherwise; this layer keeps the dropout
# probability as a number, since it has no `nn.Dropout` to hold it.
#
# ### Your task: `MultiHeadAttentionSDPA(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False)`
#
# Layers in this order: `W_qkv`, `out_proj` (the same as the fused layer, so the
# same seed gives the same weights); keep `self.dropout = dropout`. Raise
# `ValueError` when `num_heads` does not divide `d_out`. Split as in the fused
# layer, call `F.scaled_dot_product_attention(..., is_causal=True)`, combine the
# heads, apply `out_proj`.

# %% [solution] MultiHeadAttentionSDPA

# %% [test] MultiHeadAttentionSDPA 1
check("MultiHeadAttentionSDPA")

# %% [markdown]
# ## 4. Three layers, one result
#
# In eval mode (no dropout) the three layers compute the same function: give
# them the same weights and they agree up to float rounding. The SDPA layer has
# the fused layer's parameters under the same names, so it loads them directly.
# Built on its own, `torch.manual_seed(123); MultiHeadAttentionSDPA(3, 2, 6, 0.0, num_heads=2)(batch)`
# draws the same weights as the fused layer, and gives the same seeded output
# of notebook 06 again.

# %%
torch.manual_seed(123)
sdpa = MultiHeadAttentionSDPA(3, 2, 6, 0.0, num_heads=2, qkv_bias=True)
sdpa.W_qkv.load_state_dict(fused.W_qkv.state_dict())
sdpa.out_proj.load_state_dict(fused.out_proj.state_dict())
sdpa.eval()
outputs = {"06": mha(batch), "fused": fused(batch), "sdpa": sdpa(batch)}
for name, out in outputs.items():
    print(f"{name:>5}: largest difference from notebook 06: {(out - outputs['06']).abs().max().item():.2e}")

# %% [markdown]
# ### What changes in train mode
#
# With `dropout > 0` and `.train()`, each layer zeroes a random part of the
# attention weights (each with probability `dropout`) and divides the others by
# `1 - dropout`: the output changes from call to call, and differs from the
# eval-mode output. Whether the fused layer and the SDPA layer draw the *same*
# random weights under one seed depends on the device. On the CPU, with
# dropout on, PyTorch's function runs its plain implementation, which draws
# its dropout mask as `nn.Dropout` does, so the two agree here. On a GPU the
# fused kernels draw inside the kernel, in their own order, and the two
# layers disagree call by call while following the same rule: on average over
# many draws they agree. This is why the checks of this notebook compare the
# SDPA layer in train mode with `F.scaled_dot_product_attention` itself, and
# never with a dropout written out.

# %%
torch.manual_seed(0)
x = torch.randn(2, 6, 4)
torch.manual_seed(1)
fused_drop = MultiHeadAttentionFused(4, 4, 6, 0.5, num_heads=2)
torch.manual_seed(1)
sdpa_drop = MultiHeadAttentionSDPA(4, 4, 6, 0.5, num_heads=2)
outs = {}
for mode in ("train", "eval"):
    for name, layer in (("fused", fused_drop), ("sdpa", sdpa_drop)):
        layer.train(mode == "train")
        torch.manual_seed(2)
        outs[name, mode] = layer(x)
for name in ("fused", "sdpa"):
    print(f"{name}: train vs eval, largest difference {(outs[name, 'train'] - outs[name, 'eval']).abs().max().item():.3f}")
for mode in ("train", "eval"):
    print(f"{mode}: fused vs sdpa, largest difference {(outs['fused', mode] - outs['sdpa', mode]).abs().max().item():.3f}")

# %% [markdown]
# ## 5. Is it faster?
#
# On the worked example every layer is instant. On larger inputs the fused
# projection saves two matrix products, and the fused attention saves writing
# the `(b, num_heads, T, T)` weights to memory and reading them back. Time the
# three on a bigger batch (the numbers depend on your machine; on a GPU the gap
# is much wider, since that is where the fused kernels shine).

# %%
import time


def seconds_per_call(layer, x, repeats=5):
    """The mean time of one forward call, after one warm-up call."""
    with torch.no_grad():
        layer(x)
        start = time.perf_counter()
        for _ in range(repeats):
            layer(x)
    return (time.perf_counter() - start) / repeats


big = torch.randn(2, 128, 128)
for name, cls in (("06", MultiHeadAttention), ("fused", MultiHeadAttentionFused), ("sdpa", MultiHeadAttentionSDPA)):
    layer = cls(128, 128, 128, 0.0, num_heads=8).eval()
    print(f"{name:>5}: {1000 * seconds_per_call(layer, big):.1f} ms per call")
