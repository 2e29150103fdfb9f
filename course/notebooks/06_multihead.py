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


# <notebook checks>


# The grader's hints for errors your code may raise in the checks below:
# (error type, text in its message, the function it was raised in or None for any, hint)
HINTS = [
    ("RuntimeError", "view size is not compatible", None,
     "This looks like a bare .view of the transposed tensor: after a transpose it is non-contiguous, so use .reshape(...) or .contiguous().view(...)"),
]
BANNED = ("scaled_dot_product_attention", "MultiheadAttention")  # built-ins this notebook forbids: grading takes points when your code uses them

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
toy = torch.arange(1, 33).reshape(2, 2, 8)
heads = split_heads(toy, 2)
assert heads.shape == (2, 2, 2, 4), f"split_heads(toy, 2): expected shape (2, 2, 2, 4), got {tuple(heads.shape)}"
check_close(heads.reshape(4, 2, 4),
            [[[1, 2, 3, 4], [9, 10, 11, 12]], [[5, 6, 7, 8], [13, 14, 15, 16]],
             [[17, 18, 19, 20], [25, 26, 27, 28]], [[21, 22, 23, 24], [29, 30, 31, 32]]],
            "split_heads(toy, 2).reshape(4, 2, 4) — a bare view to (B, H, T, hd) mixes tokens: reshape to (B, T, H, hd), then transpose")
try:
    split_heads(torch.zeros(1, 2, 6), 4)
except ValueError:
    pass
else:
    raise AssertionError("split_heads with D=6, num_heads=4 must raise ValueError")

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
toy = torch.arange(1, 33).reshape(2, 2, 8)
rebuilt = combine_heads(split_heads(toy, 2))
check_close(rebuilt, toy, "combine_heads(split_heads(toy, 2)) must give toy back")
torch.manual_seed(0)
y = torch.randn(3, 5, 12)
check_close(combine_heads(split_heads(y, 4)), y, "combine_heads(split_heads(y, 4)) on a (3, 5, 12) tensor")

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
check_no_builtin("MultiHeadAttentionWrapper")
torch.manual_seed(123)
wrapper = MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=2)
out = wrapper(batch)
expected = [[-0.4519, 0.2216, 0.4772, 0.1063], [-0.5874, 0.0058, 0.5891, 0.3257],
            [-0.6300, -0.0632, 0.6202, 0.3860], [-0.5675, -0.0843, 0.5478, 0.3589],
            [-0.5526, -0.0981, 0.5321, 0.3428], [-0.5299, -0.1081, 0.5077, 0.3493]]
assert out.shape == (2, 6, 4), f"MultiHeadAttentionWrapper(3, 2, 6, 0.0, 2)(batch): expected shape (2, 6, 4), got {tuple(out.shape)}"
for b in range(2):
    check_close(out[b], expected, f"torch.manual_seed(123); MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=2)(batch)[{b}]")
assert isinstance(wrapper.heads, nn.ModuleList) and len(wrapper.heads) == 2, "the heads must be an nn.ModuleList named `heads`"

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
# No Python loop over heads (checked). `forward(x, key_padding_mask=None)`
# returns `(b, num_tokens, d_out)`.

# %% [solution] MultiHeadAttention

# %% [test] MultiHeadAttention 2
check_no_builtin("MultiHeadAttention")
torch.manual_seed(123)
mha = MultiHeadAttention(3, 2, 6, 0.0, num_heads=2)
out = mha(batch)
expected = [[0.3190, 0.4858], [0.2943, 0.3897], [0.2856, 0.3593],
            [0.2693, 0.3873], [0.2639, 0.3928], [0.2575, 0.4028]]
assert out.shape == (2, 6, 2), f"MultiHeadAttention(3, 2, 6, 0.0, 2)(batch): expected shape (2, 6, 2), got {tuple(out.shape)}"
for b in range(2):
    check_close(out[b], expected, f"torch.manual_seed(123); MultiHeadAttention(3, 2, 6, 0.0, num_heads=2)(batch)[{b}] "
                                  "— layer order, sqrt(head_dim) scaling, out_proj?")
try:
    MultiHeadAttention(3, 5, 6, 0.0, num_heads=2)
except ValueError:
    pass
else:
    raise AssertionError("MultiHeadAttention with d_out=5, num_heads=2 must raise ValueError")

# %% [test] MultiHeadAttention 2
torch.manual_seed(123)
mha = MultiHeadAttention(3, 4, 6, 0.0, num_heads=2)
out = mha(batch)
changed = batch.clone()
changed[:, 5] = 9.0
check_close(mha(changed)[:, :5], out[:, :5], "MultiHeadAttention: changing the last token changed earlier outputs — causal mask?")
left_pad = torch.zeros(2, 6, dtype=torch.bool)
left_pad[1, 0] = True  # item 1: position 0 is padding (True = hidden); its own row sees no key and is not checked
out_pad = mha(batch, key_padding_mask=left_pad)
check_close(out_pad[0], out[0], "MultiHeadAttention: an item without padding must not change when a key_padding_mask is given")
noisy = batch.clone()
noisy[1, 0] = 9.0  # change only the padded token
check_close(mha(noisy, key_padding_mask=left_pad)[1, 1:], out_pad[1, 1:],
            "MultiHeadAttention: a padded key influenced the other tokens — hide key columns with key_padding_mask[:, None, None, :]")

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
