# %% [markdown]
# # 06 · Split into heads, attend, rebuild
#
# One attention layer computes one weighting of the tokens per query. But a
# word may need several at once: the subject of its verb, the previous word,
# a matching bracket... **Multi-head attention** runs several attention
# computations (heads) in parallel, each with its own projections, and joins
# their outputs.
#
# Two ways to build it:
#
# 1. **Stack whole modules**: `num_heads` independent `CausalAttention`
#    layers, outputs concatenated. Easy to read, but each head does its own
#    small matrix products, one after the other.
# 2. **Split one big projection**: project once to `d_out` features, cut
#    the features into `num_heads` slices of `head_dim = d_out // num_heads`,
#    and let one batched matrix product handle all heads together. This is how
#    GPT-style models do it.
#
# The second needs two small reshaping functions, which come first.

# %% [setup]
# <common setup>


# %% [markdown]
# ## 1. Splitting the features into heads
#
# Take a toy batch with numbers that show where everything goes:
# `x = torch.arange(1, 33).reshape(2, 2, 8)`, so $B = 2$ sequences of $T = 2$
# tokens with $D = 8$ features. Token 0 of item 0 is `[1, ..., 8]`, token 1 is
# `[9, ..., 16]`. With 2 heads of `head_dim = 4`, head 0 must get the first
# four features **of every token** (`[1, 2, 3, 4]` and `[9, 10, 11, 12]`),
# head 1 the last four.
#
# The way there is two steps: `(B, T, D)` → `(B, T, H, head_dim)` (cut each
# token's features into $H$ slices; this keeps each token's numbers together),
# then swap the $T$ and $H$ axes → `(B, H, T, head_dim)`, so that each head
# sees a `(T, head_dim)` matrix, ready for attention.
#
# A single `view(B, H, T, head_dim)` has the right shape but the wrong
# content: it just refills the memory in order, so "head 0" would get
# `[1, ..., 4]` and `[5, ..., 8]`, two halves of **the same token**, treated as
# if they were two tokens. The run below shows the difference.
#
# ### Your task: `split_heads(x, num_heads)`
#
# `(B, T, D)` → `(B, num_heads, T, D // num_heads)`; raise `ValueError` when
# `num_heads` does not divide `D`.

# %% [solution] split_heads

# %% [test] split_heads 2
check("split_heads")

# %%
toy = torch.arange(1, 33).reshape(2, 2, 8)
print("split_heads, item 0:\n", split_heads(toy, 2)[0])
print("bare view, item 0 (wrong):\n", toy.view(2, 2, 2, 4)[0])

# %%
# head 0 of item 0 should hold features 1-4 of token 0 and 9-12 of token 1
show_weights(split_heads(toy, 2)[0, 0], labels=["token 0", "token 1"], title="your split_heads(toy, 2), item 0, head 0")

# %% [markdown]
# ## 2. Rebuilding the tokens
#
# After attention every head returns `(B, H, T, head_dim)`. To give each token
# one feature vector again, swap the axes back and glue the head slices
# together: `(B, H, T, hd)` → `(B, T, H, hd)` → `(B, T, H·hd)`. After a
# `transpose` the tensor is no longer laid out contiguously in memory, so
# `view` refuses; use `reshape` (or `.contiguous().view(...)`).
#
# ### Your task: `combine_heads(x)`
#
# The exact inverse of `split_heads`.

# %% [solution] combine_heads

# %% [test] combine_heads 2
check("combine_heads")

# %% [markdown]
# ## 3. Heads as whole modules
#
# Here is a working `CausalAttention` (the one from notebook 04), so this
# notebook does not depend on your earlier work.

# %% [provided] solutions.causal_mask:CausalAttention

# %% [markdown]
# ### Your task: `MultiHeadAttentionWrapper(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False)`
#
# Keep `num_heads` `CausalAttention` layers in an `nn.ModuleList` called
# `heads`, built one after the other, and concatenate their outputs along the
# last dimension, head 0 first. Each head outputs `d_out` features, so the
# result has `num_heads * d_out`.

# %% [solution] MultiHeadAttentionWrapper

# %% [test] MultiHeadAttentionWrapper 2
check("MultiHeadAttentionWrapper")

# %% [markdown]
# ## 4. All heads at once
#
# The efficient class projects with one `Linear(d_in, d_out)` per role, then
# splits: `(b, num_tokens, d_out)` → `(b, num_heads, num_tokens, head_dim)`.
# From there, `queries @ keys.transpose(2, 3)` computes the
# `(b, num_heads, num_tokens, num_tokens)` scores of all heads in one batched
# product: the head axis is treated like a second batch axis.
#
# Points to watch:
#
# * **Scaling.** Each head compares vectors of length `head_dim`, so the scores
#   are divided by `head_dim ** 0.5` (the $\sqrt{d_k}$ of notebook 03, per head),
#   not by `d_out ** 0.5`.
# * **Output projection.** After rebuilding the tokens, `out_proj`, a
#   `Linear(d_out, d_out)`, mixes the heads' results. The wrapper has no such
#   layer.
# * **Sizes.** Here `d_out` is the total over all heads (the wrapper's output
#   was `num_heads * d_out`).
# * **Masks** (True = hidden): the causal mask as in notebook 04, plus an
#   optional `(b, num_tokens)` `key_padding_mask`, reshaped to
#   `(b, 1, 1, num_tokens)` so that it hides key columns in every head and every
#   query row.
#
# ### Your task: `MultiHeadAttention(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False)`
#
# Layers in this order: `W_query`, `W_key`, `W_value`, `out_proj`, `dropout`.
# `forward(x, key_padding_mask=None)` returns `(b, num_tokens, d_out)`.

# %% [solution] MultiHeadAttention

# %% [test] MultiHeadAttention 4
check("MultiHeadAttention")

# %% [markdown]
# ## Same results as PyTorch
#
# With `d_in == d_out` and biases on the projections, `MultiHeadAttention`
# computes what `nn.MultiheadAttention` computes under a causal `attn_mask`
# (True = hidden there too). Copy the weights across and compare; the
# largest difference should be tiny (around $10^{-7}$). Note how the
# efficient version and the wrapper differ in cost: try `num_heads=8` with a
# larger `d_out` and time both.

# %%
d, heads, T = 8, 2, 6
torch.manual_seed(0)
x = torch.randn(2, T, d)
ref = nn.MultiheadAttention(d, heads, batch_first=True)
mine = MultiHeadAttention(d, d, T, 0.0, heads, qkv_bias=True)
with torch.no_grad():
    for i, layer in enumerate((mine.W_query, mine.W_key, mine.W_value)):
        layer.weight.copy_(ref.in_proj_weight[i * d:(i + 1) * d])
        layer.bias.copy_(ref.in_proj_bias[i * d:(i + 1) * d])
    mine.out_proj.load_state_dict(ref.out_proj.state_dict())
    causal = torch.ones(T, T, dtype=torch.bool).triu(1)
    ref_out, _ = ref(x, x, x, attn_mask=causal, need_weights=False)
    print("largest difference:", (ref_out - mine(x)).abs().max().item())
