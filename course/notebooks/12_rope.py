# %% [markdown]
# # 12 · Rotary position embeddings
#
# This notebook belongs to **part 2** of the course: attention as today's
# language models run it. Its points count in part 2's own total. Rotary
# position embeddings are RoPE for short.
#
# Notebook 07 gave each token its position by **adding** a sinusoidal vector to
# its embedding, once, before the first layer. Llama, Mistral, Qwen and most of
# today's open models do something else: inside every attention layer, they
# **rotate** the queries and the keys by an angle that grows with the token's
# position (*RoFormer*, Su et al., 2021). The values are never rotated: they carry
# what a token says, not where it sits.
#
# Why a rotation? Turn a query by the angle of position $m$ and a key by the
# angle of position $n$: their dot product only sees the difference of the two
# angles, so the score depends on $m - n$, how far apart the tokens are, and
# not on where the pair sits in the text. You will check this property yourself.
#
# You build three functions: `rope_angles`, the tables of cosines and sines,
# `apply_rope`, which rotates queries or keys with them, and `rope_attention`,
# causal attention that uses them. This notebook follows
# the conventions of the bonus chapter *Converting GPT to Llama* of *Build a
# Large Language Model From Scratch* and of the Llama family.
#
# **The rules of this notebook.** Any PyTorch function is allowed. `rope_angles`
# raises `ValueError` for an odd `head_dim`.

# %% [setup]
# <common setup>

# the worked example's queries, keys and values, with heads of 4 features
torch.manual_seed(123)
W_query = torch.rand(3, 4)
W_key = torch.rand(3, 4)
W_value = torch.rand(3, 4)
queries = inputs @ W_query  # (6, 4)
keys = inputs @ W_key  # (6, 4)
values = inputs @ W_value  # (6, 4)

# %% [markdown]
# ## 1. Pairs of features, turning at many speeds
#
# RoPE cuts a query (or key) of `head_dim` $= d$ features into $d/2$ **pairs**
# and turns each pair in its own plane. Pair $i$ turns with the frequency
#
# $$\omega_i = \theta^{-2i/d}, \qquad i = 0, 1, \dots, d/2 - 1,$$
#
# with the base $\theta = 10\,000$ (Llama 3 uses $500\,000$). At position $p$
# pair $i$ is turned by the angle $p\,\omega_i$: the first pair turns by one
# radian per position, the last ones hardly move, like the fast and slow pairs
# of notebook 07.
#
# **Which features make a pair?** The original paper pairs neighbours,
# features $(2i, 2i+1)$: the *interleaved* convention. The Llama family pairs
# feature $i$ of the first half with feature $i + d/2$ of the second half: the
# **rotate-half** convention. This course uses the rotate-half convention, as the
# book does. Both are rotations, but they do not mix: weights trained with one
# give wrong outputs with the other, so a model's convention must be followed.
#
# With rotate-half, features $i$ and $i + d/2$ both need the angle of pair $i$.
# So each row of the tables holds the $d/2$ angles twice, side by side:
#
# $$\text{angles}[p] = \big[p\omega_0, \dots, p\omega_{d/2-1},\; p\omega_0, \dots, p\omega_{d/2-1}\big].$$
#
# ### Your task: `rope_angles(head_dim, context_length, theta_base=10_000)`
#
# Return `(cos, sin)`, two float32 tensors of shape
# `(context_length, head_dim)`: the cosines and the sines of the angles of the
# positions `0, 1, ..., context_length - 1`.
#
# * `inv_freq = theta_base ** (-torch.arange(0, head_dim, 2) / head_dim)`: the
#   values $2i$, divided by `head_dim`.
# * `angles = positions[:, None] * inv_freq[None, :]`, then
#   `torch.cat((angles, angles), dim=-1)` (not `repeat_interleave`, which would
#   give the interleaved layout).
# * An odd `head_dim` has no pairs: raise `ValueError` and say which `head_dim`
#   was given.

# %% [solution] rope_angles

# %% [test] rope_angles 1
check("rope_angles")

# %% [markdown]
# `rope_angles(4, 6)` has two pairs: pair 0 turns by one radian per position,
# pair 1 by $10000^{-1/2} = 0.01$ radians. Its tables are
#
# ```
# cos = [[ 1.0000, 1.0000,  1.0000, 1.0000],      sin = [[ 0.0000, 0.0000,  0.0000, 0.0000],
#        [ 0.5403, 0.9999,  0.5403, 0.9999],             [ 0.8415, 0.0100,  0.8415, 0.0100],
#        [-0.4161, 0.9998, -0.4161, 0.9998],             [ 0.9093, 0.0200,  0.9093, 0.0200],
#        [-0.9900, 0.9996, -0.9900, 0.9996],             [ 0.1411, 0.0300,  0.1411, 0.0300],
#        [-0.6536, 0.9992, -0.6536, 0.9992],             [-0.7568, 0.0400, -0.7568, 0.0400],
#        [ 0.2837, 0.9988,  0.2837, 0.9988]]             [-0.9589, 0.0500, -0.9589, 0.0500]]
# ```
#
# Position 0 is not turned at all (cos 1, sin 0), and columns 2 and 3 repeat
# columns 0 and 1.
#
# The picture below shows the angle by which each pair turns, for 32 positions
# and 8 pairs (`head_dim = 16`), taken back into $(-\pi, \pi]$. Pair 0 wraps
# around the circle every six or seven positions; the last pairs barely start
# to turn: the many speeds of RoPE.

# %%
cos_16, sin_16 = rope_angles(16, 32)
angles_16 = torch.atan2(sin_16, cos_16)[:, :8]  # (32, 8): one column per pair, in (-pi, pi]
show_weights(angles_16, labels=[f"p{p}" for p in range(32)],
             title="rotation angle of each position (rows) and pair (columns), in radians")

# %% [markdown]
# ## 2. Rotating queries and keys
#
# A pair $(x_1, x_2)$ turned by the angle $\alpha$ becomes
# $(x_1\cos\alpha - x_2\sin\alpha,\; x_2\cos\alpha + x_1\sin\alpha)$.
# With the first halves $x_1$ = `x[..., :d/2]` and the second halves
# $x_2$ = `x[..., d/2:]`, all pairs turn at once:
#
# $$\mathrm{rope}(x) = x \odot \cos + \mathrm{rotate\_half}(x) \odot \sin,
#   \qquad \mathrm{rotate\_half}(x) = \mathrm{cat}(-x_2,\; x_1).$$
#
# The minus sign belongs to the **first** half of `rotate_half`'s output: it
# is what turns the pairs counter-clockwise.
#
# **Positions and the cache.** `x` holds `T` tokens. In a whole sequence they
# sit at positions `0 .. T-1`. With a KV cache (notebook 09), the model feeds
# only the new tokens, and they sit further on: after `offset` cached tokens,
# token `t` of `x` is at position `offset + t`. It must be rotated by that
# position's angle, or the new queries meet the cached keys at the wrong
# distance. So `apply_rope` reads the rows `offset .. offset + T - 1` of the
# tables, which may be longer than `x` (`context_length` rows).
#
# ### Your task: `apply_rope(x, cos, sin, offset=0)`
#
# * `x` is `(..., T, head_dim)`: `(T, d)`, `(B, T, d)` or `(B, H, T, d)`
#   (after the heads are split). Read `T` and `d` from `x.shape[-2]` and
#   `x.shape[-1]`, and slice with `...`.
# * `cos` and `sin` are the `(context_length, head_dim)` tables of
#   `rope_angles`; use their rows `offset .. offset + T - 1`.
# * Return a new float32 tensor of `x`'s shape.
# * Queries and keys only: a layer that uses RoPE never rotates its values.

# %% [solution] apply_rope

# %% [test] apply_rope 1
check("apply_rope")

# %% [markdown]
# On the worked example, `apply_rope(queries, cos, sin)` with the tables of
# `rope_angles(4, 6)` gives
#
# ```
# [[ 0.3022, 0.9986,  0.4093, 0.9230],
#  [-0.2031, 1.5081,  0.5448, 0.9365],
#  [-0.5649, 1.4772,  0.1258, 0.9491],
#  [-0.2008, 0.8424, -0.2124, 0.4631],
#  [ 0.0232, 0.6615, -0.3701, 0.6515],
#  [ 0.3328, 1.0925, -0.0843, 0.5496]]
# ```
#
# The first token ("Your", position 0) is unchanged. Pair 1 (columns 1 and 3)
# hardly moves: its angle is only 0.01 radians per position.

# %%
cos, sin = rope_angles(4, 6)
rotated_queries = apply_rope(queries, cos, sin)
print(rotated_queries)
print("lengths before:", queries.norm(dim=-1))
print("lengths after: ", rotated_queries.norm(dim=-1))

# %% [markdown]
# ## 3. Only the distance counts
#
# The check cell of `apply_rope` tests the property that makes RoPE a
# *relative* position embedding. Here it is, step by step: rotate the queries
# and keys as if the sentence started at position 0, then as if it started at
# position 100 (rows 100 .. 105 of longer tables). Every position moved by the
# same amount, so every distance $m - n$ is the same, and so is every score.

# %%
cos_long, sin_long = rope_angles(4, 200)
scores_at_0 = apply_rope(queries, cos_long, sin_long) @ apply_rope(keys, cos_long, sin_long).T
scores_at_100 = apply_rope(queries, cos_long, sin_long, offset=100) @ \
    apply_rope(keys, cos_long, sin_long, offset=100).T
print("largest change of a score:", (scores_at_100 - scores_at_0).abs().max().item())
show_weights(scores_at_0, title="q·k with RoPE, the sentence at positions 0-5")

# %% [markdown]
# The largest change is a rounding error (about $10^{-6}$). Without RoPE the
# scores would not depend on the positions at all; with an *added* encoding
# (notebook 07) they would change with the start.
#
# ## 4. The cache case
#
# Feed the first four tokens, then the last two with `offset=4`: the last two
# keys come out exactly as they do when the whole sentence is rotated at once.

# %%
whole = apply_rope(keys, cos, sin)
first_part = apply_rope(keys[:4], cos, sin)
new_part = apply_rope(keys[4:], cos, sin, offset=4)
print("same as the whole sentence:", torch.allclose(torch.cat((first_part, new_part)), whole, atol=1e-6))

# %% [markdown]
# ## 5. RoPE inside attention
#
# A layer that uses RoPE rotates its queries and keys just before the scores,
# and nothing else changes: the same scaling by $\sqrt{d}$, the same causal
# mask, the same softmax over the keys. The values are **not** rotated: the
# weights already know the distances, and the values carry what each token
# says, which does not depend on where it sits.
#
# $$\mathrm{out} = \mathrm{softmax}\Big(\mathrm{mask}\Big(\frac{\mathrm{rope}(Q)\,\mathrm{rope}(K)^\top}{\sqrt{d}}\Big)\Big)\, V$$
#
# ### Your task: `rope_attention(queries, keys, values, cos, sin, offset=0)`
#
# * `queries`, `keys` and `values` are `(..., T, head_dim)`, like `x` of
#   `apply_rope`; `cos` and `sin` are the tables of `rope_angles`. Return the
#   context vectors, a `(..., T, head_dim)` tensor.
# * Rotate the queries and the keys with your `apply_rope`, both with the same
#   `offset`: token `t` sits at position `offset + t`. Never rotate the values.
# * Divide the scores by $\sqrt{d}$, with `d = queries.shape[-1]`, the size of
#   one head.
# * Causal: query `i` sees the keys `j <= i` only. The mask is True where a key
#   is hidden (`torch.triu(..., diagonal=1)`), made on `queries.device`; fill
#   those scores with `-inf` before the softmax over the keys (`dim=-1`).

# %% [solution] rope_attention

# %% [test] rope_attention 1
check("rope_attention")

# %% [markdown]
# On the worked example, `rope_attention(queries, keys, values, cos, sin)` with
# the tables of `rope_angles(4, 6)` gives
#
# ```
# [[0.8918, 0.9171, 1.0733, 0.8657],
#  [1.2376, 0.8801, 1.4021, 1.2247],
#  [1.3093, 0.8704, 1.4677, 1.3086],
#  [1.1689, 0.7687, 1.3119, 1.1535],
#  [1.0449, 0.7358, 1.1691, 1.0933],
#  [1.0730, 0.6947, 1.2029, 1.0545]]
# ```
#
# The first row is the first value vector itself: "Your" sees only itself.
# Shift every position by the same amount (`offset=100`, longer tables) and
# the output stays the same, up to rounding: only the distances count.

# %%
context = rope_attention(queries, keys, values, *rope_angles(4, 6))
print(context)
shifted = rope_attention(queries, keys, values, cos_long, sin_long, offset=100)
print("largest change after the shift:", (shifted - context).abs().max().item())
