# %% [markdown]
# # 11 · Sliding-window attention
#
# A part 2 notebook: its points count in part 2's own total.
#
# In causal attention the last token of a sequence of $T$ tokens looks at all
# $T$ of them, so the work grows as $T^2$, and when a model generates text one
# token at a time, its KV cache keeps the keys and values of every token it has
# seen. **Sliding-window attention** (Longformer, Beltagy et al., 2020; Mistral 7B,
# Jiang et al., 2023; every other layer of Gemma 2 and most of Gemma 3) lets each
# query see only the `window` most recent tokens, itself included: the work grows
# as $T \cdot$ `window`, and the cache never needs more than `window` tokens,
# however long the text gets. Stacked layers still carry information further
# back, one window per layer. This notebook follows the bonus chapter on
# sliding-window attention of *Build a Large Language Model From Scratch*.
#
# **The rules of this notebook.** Any PyTorch function is allowed, including
# `F.scaled_dot_product_attention` with a mask of your own; `nn.MultiheadAttention`
# is not needed.

# %% [setup]
# <common setup>

from torch.nn import functional as F


# %% [markdown]
# ## 1. The band mask
#
# Query $i$ sees the keys $j$ with $i - \text{window} < j \le i$: itself and the
# `window - 1` tokens before it. Every other key is hidden (True, as in every
# mask of this course): the future ($j > i$), and what lies too far back
# ($j \le i - \text{window}$). For six tokens and a window of 3, query 5 ("step")
# sees keys 3, 4 and 5 ("with", "one", "step"). The mask is a band along the
# diagonal; with `window >= T` nothing is too far back, and it is the causal mask
# of notebook 04. A window below 1 would hide a query's own token, so that every
# key of the first query is hidden: raise `ValueError` then.
#
# ### Your task: `sliding_window_mask(num_tokens, window)`
#
# Return the `(num_tokens, num_tokens)` boolean mask, True where key $j$ is
# hidden from query $i$: $j > i$ or $j \le i - \text{window}$. Raise `ValueError`
# when `window < 1`.

# %% [solution] sliding_window_mask

# %% [test] sliding_window_mask 1
check("sliding_window_mask")

# %% [markdown]
# Side by side, the causal mask of notebook 04 and the band mask of a window of 3
# (dark = hidden). Counted along a row, the band lets at most three keys through:

# %%
show_weights(sliding_window_mask(6, 6), title="Causal mask (window 6 covers the sequence)")
show_weights(sliding_window_mask(6, 3), title="Sliding-window mask, window 3")

# %% [markdown]
# ## 2. The starting point
#
# Here is a working `MultiHeadAttention` (the one of notebook 06), so this
# notebook does not depend on your earlier work. Your layer takes its
# parameters, in its order.

# %% [provided] solutions.multihead:MultiHeadAttention

# %% [markdown]
# ## 3. Sliding-window attention with its own KV cache
#
# The layer is notebook 06's `MultiHeadAttention` with the band mask in place of
# the causal one, and a KV cache for generating one token at a time.
#
# **The cache.** `forward(x, use_cache=True)` treats the tokens of `x` as the
# ones that follow those already in the cache. It projects them, appends their
# keys and values to the cached ones (keys of older tokens first), lets each new
# query attend to the keys within its window, and then keeps only the **last
# `window` tokens** in the cache, as the book's bonus chapter does. If the cache
# holds $C$ tokens, the new query $i$ stands at index $C + i$ among the $C + T$
# keys, so the band must be shifted by $C$: the query sees the key indices
# $C + i - \text{window} < j \le C + i$. Trim *after* attending, keeping the
# newest tokens (`[:, :, -window:]`), never the oldest.
#
# So that the checks can measure it, keep the cache in two attributes:
#
# | attribute | what it holds |
# |---|---|
# | `self.cache_k` | `None` when empty, else the keys of the cached tokens, `(b, num_heads, C, head_dim)` |
# | `self.cache_v` | the same for the values |
#
# where $C$ = min(`window`, tokens seen since the last `reset_cache()`): never
# more than `window` tokens, whatever the length of the text.
# `forward(x)` (`use_cache=False`) neither reads nor changes the cache, and
# `reset_cache()` empties it (both attributes back to `None`) before a new
# sequence.
#
# ### Your task: `SlidingWindowAttention(d_in, d_out, context_length, dropout, num_heads, window, qkv_bias=False)`
#
# Layers in notebook 06's order: `W_query`, `W_key`, `W_value`, `out_proj`,
# `dropout` (so that, after `torch.manual_seed(123)`, the layer draws exactly the
# weights of notebook 06's `MultiHeadAttention`). Raise `ValueError` when
# `num_heads` does not divide `d_out` or when `window < 1`. Scale by
# $\sqrt{\text{head\_dim}}$, dropout on the weights in training only, heads
# combined, then `out_proj`. `forward(x, use_cache=False)` returns
# `(b, T, d_out)`; `reset_cache()` returns nothing.

# %% [solution] SlidingWindowAttention

# %% [test] SlidingWindowAttention 1
check("SlidingWindowAttention")

# %% [markdown]
# Built after `torch.manual_seed(123)`,
# `SlidingWindowAttention(3, 2, 6, 0.0, num_heads=2, window=3)(batch)` gives, for
# each item,
# `[[0.3190, 0.4858], [0.2943, 0.3897], [0.2856, 0.3593], [0.2530, 0.3552], [0.2432, 0.3942], [0.2298, 0.4474]]`.
# The first three tokens have at most three keys to see, so they agree with
# notebook 06; from "with" on, the oldest tokens drop out of the window. With
# `window=6` the window covers the sequence and the layer gives notebook 06's
# output exactly:

# %%
for window in (3, 6):
    torch.manual_seed(123)
    layer = SlidingWindowAttention(3, 2, 6, 0.0, num_heads=2, window=window).eval()
    print(f"window={window}:\n", layer(batch)[0])
torch.manual_seed(123)
print("notebook 06's MultiHeadAttention:\n", MultiHeadAttention(3, 2, 6, 0.0, num_heads=2).eval()(batch)[0])

# %% [markdown]
# ## 4. Generating with a cache that never grows past the window
#
# Feed the worked example one token at a time: the outputs are those of the
# whole sequence, and the cache stops growing at three tokens. Then a prompt of
# four tokens, longer than the window, followed by single tokens: the same.

# %%
torch.manual_seed(123)
layer = SlidingWindowAttention(3, 2, 6, 0.0, num_heads=2, window=3).eval()
with torch.no_grad():
    whole = layer(batch)
    layer.reset_cache()
    steps = []
    for t in range(6):
        steps.append(layer(batch[:, t:t + 1], use_cache=True))
        print(f"after token {t}: tokens in the cache: {layer.cache_k.shape[2]}")
    print("one token at a time, largest difference:", (torch.cat(steps, dim=1) - whole).abs().max().item())
    layer.reset_cache()
    pieces = [layer(batch[:, :4], use_cache=True), layer(batch[:, 4:5], use_cache=True),
              layer(batch[:, 5:], use_cache=True)]
    print("a prompt of 4, then one at a time, largest difference:",
          (torch.cat(pieces, dim=1) - whole).abs().max().item())
