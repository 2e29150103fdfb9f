# %% [markdown]
# # 09 · The KV cache
#
# A language model writes one token at a time: it reads the text so far,
# predicts the next token, appends it, and starts again. Run naively, every
# step feeds the whole text through every layer once more. Yet in a causal
# layer, the keys and values of the earlier tokens never change: token 3 cannot
# see token 7, so adding token 7 leaves everything computed for tokens 1–6 as it
# was. A **KV cache** keeps those keys and values, so each step projects the
# new token only and lets its query attend to everything kept so far. Every
# current model generates text this way; the bonus chapter on the KV cache of
# *Build a Large Language Model From Scratch* adds one to the book's GPT, and
# this notebook follows its conventions.
#
# **The rules of this notebook.** `MultiHeadAttentionCached` writes the attention
# out itself, as in notebook 06: it may not call
# `F.scaled_dot_product_attention` or `nn.MultiheadAttention` (the grader
# refuses it). Each call projects its own tokens once: the checks count how many
# rows `W_query`, `W_key` and `W_value` are handed in each call (call them as
# layers, `self.W_key(x)`), so a cache that keeps the inputs and projects them
# all again loses points even though its outputs are right.

# %% [setup]
# <common setup>


# %% [markdown]
# ## 1. What the cache keeps
#
# Take the worked example and a causal layer with two heads. Decoding token by
# token, step $t$ feeds the layer only $x^{(t)}$; its query $q^{(t)}$ must meet
# the keys $k^{(1)}, \dots, k^{(t)}$ and mix the values $v^{(1)}, \dots,
# v^{(t)}$. The cache holds the keys and values of the earlier steps, and each
# step appends its own:
#
# | step | fed | projected | cache after the step |
# |---|---|---|---|
# | 1 | "Your" | 1 token | keys and values of 1 token |
# | 2 | "journey" | 1 token | 2 tokens |
# | … | … | … | … |
# | 6 | "step" | 1 token | 6 tokens |
#
# **This course's conventions** (the book's bonus chapter keeps the same names):
#
# - The cache lives in the layer as two buffers, `cache_k` and `cache_v`,
#   registered empty (`self.register_buffer("cache_k", None, persistent=False)`):
#   a buffer follows `.to(device)` with the layer, and `persistent=False` leaves it
#   out of `state_dict`, since a cache is no weight.
# - It keeps keys and values **per head, after the projection**, in the layout
#   the attention uses: `(b, num_heads, num_cached, head_dim)`. New keys are
#   appended along the token dim, `torch.cat([self.cache_k, keys], dim=2)`. (The
#   book's chapter appends one step earlier, to `(b, num_tokens, num_heads,
#   head_dim)` along dim 1, before the transpose; both give the same outputs. What
#   goes wrong is caching the projection *before* the head split and splitting
#   the whole cache with a bare `view` to `(b, num_heads, T, head_dim)`: tokens
#   and heads get mixed.)
# - `forward(x, use_cache=False)` is notebook 06's forward: with
#   `use_cache=False` the cache is neither read nor written. Training never uses
#   the cache; generation calls `use_cache=True`.
# - `reset_cache()` empties the cache (both buffers back to `None`); call it
#   before each new sequence, or the next text attends to the previous one.
#
# ## 2. The mask, offset
#
# A call with the cache may bring several tokens at once: the prompt comes
# whole, then the generated tokens one by one. If the cache already holds
# `num_cached` tokens, the new tokens stand at positions `num_cached` …
# `num_cached + num_tokens - 1`; their queries see **every cached key** and the
# **causal part of the new ones**. The scores have shape
# `(b, num_heads, num_tokens, num_cached + num_tokens)`, and the mask is the
# causal mask's rows `num_cached : num_cached + num_tokens`, columns
# `: num_cached + num_tokens`. Taking rows `:num_tokens` instead masks the new
# queries as if they stood at position 0: a single new token would then see only
# the first token of the text. The picture shows the rows for a prompt of four
# tokens with two cached tokens already, as the mask buffer gives them (True =
# hidden):

# %%
causal = torch.triu(torch.ones(6, 6), diagonal=1).bool()
show_weights(causal[2:6, :6], title="queries 3-6 after 2 cached tokens: mask rows 2:6, columns :6")

# %% [markdown]
# ### Your task: `MultiHeadAttentionCached(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False)`
#
# Layers in notebook 06's order: `W_query`, `W_key`, `W_value`, `out_proj`,
# `dropout`, then the buffers (the mask, `cache_k`, `cache_v`). Raise
# `ValueError` when `num_heads` does not divide `d_out`, and when a call would
# make the cache hold more than `context_length` tokens (the mask has no rows
# for them). `forward(x, use_cache=False)` returns `(b, num_tokens, d_out)`;
# no Python loop over heads. `reset_cache()` empties the cache.

# %% [solution] MultiHeadAttentionCached

# %% [test] MultiHeadAttentionCached 1
check("MultiHeadAttentionCached")

# %% [markdown]
# Built after `torch.manual_seed(123)`, `MultiHeadAttentionCached(3, 2, 6,
# 0.0, num_heads=2)` draws the weights of notebook 06's `MultiHeadAttention`
# (the same layers in the same order), so its full forward gives notebook 06's
# seeded output, for each item
# `[[0.3190, 0.4858], [0.2943, 0.3897], [0.2856, 0.3593], [0.2693, 0.3873], [0.2639, 0.3928], [0.2575, 0.4028]]`.
# Decoding the batch one token at a time with `use_cache=True`, or the prompt
# `batch[:, :4]` then `batch[:, 4:5]` and `batch[:, 5:]`, gives exactly these
# rows again: the cache changes how much is computed, never what.

# %%
torch.manual_seed(123)
layer = MultiHeadAttentionCached(3, 2, 6, 0.0, num_heads=2).eval()
with torch.no_grad():
    full = layer(batch)
    steps = []
    for t in range(6):
        steps.append(layer(batch[:, t:t + 1], use_cache=True))
        cached = 0 if layer.cache_k is None else layer.cache_k.shape[2]
        print(f"after token {t + 1}: the cache holds {cached} tokens")
    layer.reset_cache()
    prompt_then_steps = torch.cat([layer(batch[:, :4], use_cache=True), layer(batch[:, 4:5], use_cache=True),
                                   layer(batch[:, 5:], use_cache=True)], dim=1)
print("full forward:\n", full[0])
print("one token at a time, largest difference:", (torch.cat(steps, dim=1) - full).abs().max().item())
print("a prompt then single tokens, largest difference:", (prompt_then_steps - full).abs().max().item())

# %% [markdown]
# The cache grows by one token per step; row $t$ of the picture marks the tokens
# whose keys and values it holds after step $t$ (each token's projected once,
# at its own step):

# %%
grown = torch.tril(torch.ones(6, 6))
show_weights(grown, title="tokens held by the cache (columns) after each step (rows)")

# %% [markdown]
# ## 3. How large the cache gets
#
# The cache trades memory for time. For one sequence, every layer keeps one key
# and one value (the factor 2) for each of its key-value heads, each token and
# each of the `head_dim` features, every number `bytes_per_value` bytes (4 in
# float32, 2 in float16 or bfloat16):
#
# $$\text{bytes} = 2 \cdot \text{num\_layers} \cdot \text{num\_kv\_heads} \cdot
# \text{head\_dim} \cdot \text{context\_length} \cdot \text{bytes\_per\_value}$$
#
# (`num_kv_heads` is the number of heads whose keys and values are kept: here
# every head's; models with grouped-query attention keep fewer.)
#
# ### Your task: `kv_cache_bytes(num_layers, num_kv_heads, head_dim, context_length, bytes_per_value)`
#
# Return the number of bytes (an `int` when every argument is one). Raise
# `ValueError` naming the argument when one is not positive.

# %% [solution] kv_cache_bytes

# %% [test] kv_cache_bytes 1
check("kv_cache_bytes")

# %% [markdown]
# A few model shapes, in 16-bit numbers, for one sequence of the full context.
# The first is the size of GPT-2's smallest model (124M parameters: 12 layers,
# 12 heads of 64 features, 1,024 tokens); the second a 7B model of the Llama-2
# shape (32 layers, 32 heads of 128, 4,096 tokens); the third the same depth and
# head size with 8 key-value heads and 8,192 tokens, as in Llama-3 8B.

# %%
models = {
    "GPT-2 124M-like": (12, 12, 64, 1024, 2),
    "Llama-2 7B-like": (32, 32, 128, 4096, 2),
    "Llama-3 8B-like": (32, 8, 128, 8192, 2),
}
for name, shape in models.items():
    size = kv_cache_bytes(*shape)
    print(f"{name:>16}: {size:>13,} bytes = {size / 2**20:,.0f} MiB")

# %% [markdown]
# They print 37,748,736 bytes (36 MiB), 2,147,483,648 bytes (2,048 MiB) and
# 1,073,741,824 bytes (1,024 MiB). The 7B model's cache for one full-length
# sequence is 2 GiB, about a seventh of its 13.5 GB of 16-bit weights, and it
# grows with every sequence served at once: a batch of 32 needs 64 GiB of cache
# alone. This is why later models keep fewer key-value heads (notebook 10's
# grouped-query attention): the third line keeps twice the context in half the
# memory.
