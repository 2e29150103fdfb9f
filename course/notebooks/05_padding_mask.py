# %% [markdown]
# # 05 · Batches of sentences of different lengths
#
# A batch tensor `(B, L, D)` needs every sentence to have the same length
# `L`. Real sentences do not, so the short ones are **padded** with filler
# tokens up to the longest. Padding carries no meaning, and attention must not
# let any real token draw information from it.
#
# Our example batch has $B = 3$ sentences of true lengths `seq_lens = [4, 3, 2]`,
# padded to $L = 4$, with $D = 3$ features:
#
# | sentence | position 0 | 1 | 2 | 3 |
# |---|---|---|---|---|
# | 0 | word | word | word | word |
# | 1 | word | word | word | *pad* |
# | 2 | word | word | *pad* | *pad* |
#
# Padding must be hidden **as a key**: in the $L \times L$ score matrix of a
# sentence, every *column* belonging to a padded position is masked, for
# every query row. (The rows of padded queries still produce some output;
# later layers and the loss simply ignore those positions.)
#
# Mask convention, as always: **True means "hidden / not allowed"**, here
# "this position is padding".

# %% [setup]
# <common setup>



# a padded batch: B = 3 sentences of lengths 4, 3, 2, padded to L = 4, D = 3 features
seq_lens = [4, 3, 2]
torch.manual_seed(102)
x = torch.randn(3, 4, 3)  # (B, L, D)
x[1, 3:] = 0.0  # padding
x[2, 2:] = 0.0  # padding
PAD = torch.tensor([[False, False, False, False],
                    [False, False, False, True],
                    [False, False, True, True]])  # True = padding

# %% [markdown]
# ## 1. A mask from the lengths
#
# Position $j$ of sentence $b$ is padding exactly when $j \ge$ `seq_lens[b]`.
# Comparing a row of positions `[0, 1, ..., L-1]` of shape `(1, L)` with a
# column of lengths `(B, 1)` broadcasts to the whole `(B, L)` mask in one go.
#
# ### Your task: `key_padding_mask(seq_lens, max_len)`
#
# Accept a list or a 1-D integer tensor. A length below 1 or above `max_len`
# is a bug in the caller: raise a `ValueError` that names the bad entry.

# %% [solution] key_padding_mask

# %% [test] key_padding_mask 2
check("key_padding_mask")

# %%
show_weights(key_padding_mask([4, 3, 2], 4), labels=["item 0", "item 1", "item 2"],
             title="your padding mask (True = hidden)")

# %% [markdown]
# ## 2. Hiding padded keys
#
# The mask is `(B, L)`, the scores `(B, L, L)` with rows = queries and
# columns = keys. Inserting a query axis, `mask[:, None, :]` of shape
# `(B, 1, L)`, lets broadcasting repeat the same column pattern down every
# row. Masking `mask[:, :, None]` instead would hide padded *queries*, a
# common mistake that leaves the padding visible to everyone.
#
# ### Your task: `mask_padded_scores(scores, key_padding_mask)`
#
# Return a new tensor with the padded key columns set to `-inf` (or `-1e9`).

# %% [solution] mask_padded_scores

# %% [test] mask_padded_scores 2
check("mask_padded_scores")

# %% [markdown]
# ## 3. Attention that ignores padding
#
# Scaled dot-product attention as in notebook 03, with the padded keys masked
# before the softmax:
#
# $$\mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d}} + M\right) V, \qquad M_{ij} = \begin{cases} -\infty & \text{key } j \text{ is padding} \\ 0 & \text{otherwise.}\end{cases}$$
#
# ### Your task: `padded_attention(queries, keys, values, key_padding_mask)`
#
# Return `(out, weights)`. The weights must be 0 at padded keys and every row
# must sum to 1.

# %% [solution] padded_attention

# %% [test] padded_attention 2
check("padded_attention")

# %%
# item 2 has 2 real tokens: its last two columns (the padded keys) must be 0
show_weights(padded_attention(x, x, x, PAD)[1][2], title="your weights for item 2")

# %% [markdown]
# ## 4. A full attention layer, and two kinds of masks
#
# `PaddedSelfAttention` is a single-head attention layer with its own
# projections `W_q`, `W_k`, `W_v` and an output projection `W_out`, applied to
# the context vectors. It takes two optional masks, named as in PyTorch's
# `nn.MultiheadAttention`, and both use True = hidden:
#
# * `key_padding_mask`, `(B, L)`: one row per sentence, hides **key columns**.
#   Padding differs from sentence to sentence, so this mask is per item.
# * `attn_mask`, `(L, L)` or `(B, L, L)`: hides individual (query, key) pairs.
#   An `(L, L)` mask is shared by the whole batch, which suits the causal mask
#   of notebook 04. A padding mask can be expressed this way too, but only as
#   a full `(B, L, L)` tensor, one matrix per sentence.
#
# When both are given, a pair is hidden if either mask hides it. Scale the
# scores by $\sqrt{D}$.
#
# ### Your task: `PaddedSelfAttention(embed_dim)`
#
# Layers in the order `W_q`, `W_k`, `W_v`, `W_out`, each
# `nn.Linear(D, D, bias=False)`. `forward(q, k, v, key_padding_mask=None,
# attn_mask=None)` returns `(out, weights)`.

# %% [solution] PaddedSelfAttention

# %% [test] PaddedSelfAttention 4
check("PaddedSelfAttention")

# %% [markdown]
# ## Same results as PyTorch
#
# `nn.MultiheadAttention` with one head and no biases does exactly this
# computation. It keeps the three input projections stacked in one
# `in_proj_weight` of shape `(3D, D)`: rows `[0:D]` for queries, `[D:2D]` for
# keys, `[2D:3D]` for values. Copy them (and `out_proj`) into your layer and
# compare. The largest differences should be around $10^{-7}$.

# %%
D = 3
torch.manual_seed(1)
mha = nn.MultiheadAttention(D, 1, bias=False, batch_first=True)
mine = PaddedSelfAttention(D)
with torch.no_grad():
    mine.W_q.weight.copy_(mha.in_proj_weight[:D])
    mine.W_k.weight.copy_(mha.in_proj_weight[D:2 * D])
    mine.W_v.weight.copy_(mha.in_proj_weight[2 * D:])
    mine.W_out.weight.copy_(mha.out_proj.weight)
    kpm = key_padding_mask(seq_lens, 4)
    ref_out, ref_w = mha(x, x, x, key_padding_mask=kpm)
    my_out, my_w = mine(x, x, x, key_padding_mask=kpm)
print("largest output difference:", (ref_out - my_out).abs().max().item())
print("largest weight difference:", (ref_w - my_w).abs().max().item())
print(my_w)
