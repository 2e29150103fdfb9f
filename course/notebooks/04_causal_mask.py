# %% [markdown]
# # 04 · Hiding the future
#
# A GPT-style model reads text left to right and is trained to predict each
# next token. If token 3 could look at token 4 while predicting it, the task
# would be trivial and the model would learn nothing useful. **Causal
# attention** (also called masked attention) therefore lets token $i$ attend
# only to tokens $j \le i$: itself and what came before.
#
# In the $T \times T$ weight matrix, row $i$ belongs to query $i$ and column
# $j$ to key $j$. Everything strictly **above the diagonal** ($j > i$) must get
# weight 0, and each row must still sum to 1.
#
# Mask convention for the whole course: a boolean mask where **True means
# "hidden / not allowed"**.
#
# The worked example uses the projections of
# `torch.manual_seed(789); SelfAttention_v2(3, 2)` from notebook 03. The setup
# cell rebuilds them as three `nn.Linear` layers drawn in the same order, and
# computes the (unmasked) `attn_scores` and `attn_weights`.

# %% [setup]
# <common setup>



# the projections of torch.manual_seed(789); SelfAttention_v2(3, 2)
torch.manual_seed(789)
W_query, W_key, W_value = (nn.Linear(3, 2, bias=False) for _ in range(3))
with torch.no_grad():
    queries, keys = W_query(inputs), W_key(inputs)  # (6, 2) each
    attn_scores = queries @ keys.T  # (6, 6)
    attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)  # (6, 6)

CAUSAL_WEIGHTS = [[1.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000],
                  [0.5517, 0.4483, 0.0000, 0.0000, 0.0000, 0.0000],
                  [0.3800, 0.3097, 0.3103, 0.0000, 0.0000, 0.0000],
                  [0.2758, 0.2460, 0.2462, 0.2319, 0.0000, 0.0000],
                  [0.2175, 0.1983, 0.1984, 0.1888, 0.1971, 0.0000],
                  [0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529]]

# %%
print(attn_weights)

# %% [markdown]
# ## 1. The mask
#
# For $T = 4$ the causal mask is
#
# $$\begin{pmatrix} F & T & T & T \\ F & F & T & T \\ F & F & F & T \\ F & F & F & F \end{pmatrix}$$
#
# The diagonal is **not** hidden: a token always sees itself (otherwise the
# first token would see nothing at all).
#
# ### Your task: `causal_mask(num_tokens, device=None)`
#
# Return a `(T, T)` boolean tensor, True strictly above the diagonal, created
# directly on `device`.

# %% [solution] causal_mask

# %% [test] causal_mask 2
check("causal_mask")

# %%
show_weights(causal_mask(6), title="your causal mask (True = hidden)")

# %% [markdown]
# ## 2. The simple way: mask after the softmax
#
# Take the ordinary weights, set everything above the diagonal to 0, done?
# Not quite: each row has lost part of its total, so row 2 now sums to
# $0.2041 + 0.1659 = 0.37$ instead of 1. Dividing every row by its new sum
# restores a proper weighting:
#
# $$\tilde\alpha_{ij} = \frac{\alpha_{ij}\,[j \le i]}{\sum_{k \le i} \alpha_{ik}} .$$
#
# ### Your task: `mask_and_renormalize(attn_weights)`
#
# Works on `(T, T)` and `(B, T, T)` and returns a new tensor.

# %% [solution] mask_and_renormalize

# %% [test] mask_and_renormalize 2
check("mask_and_renormalize")

# %% [markdown]
# ## 3. The efficient way: $-\infty$ before the softmax
#
# Masked scores can be handled more cheaply. Replace the hidden scores by
# $-\infty$ **before** the softmax. Since $e^{-\infty} = 0$, those positions
# contribute nothing to the numerator or to the denominator: the softmax only
# normalises over the visible keys, so the rows already sum to 1 and no second
# pass is needed. The result is exactly the renormalised weights above,
# because renormalising after the softmax cancels the discarded terms in the
# same way.
#
# (A very negative finite number such as `-1e9` works too: its exponential
# underflows to 0.)
#
# ### Your task: `causal_attention_weights(attn_scores, d_k)`
#
# Mask with `-inf`, divide by $\sqrt{d_k}$, softmax over the last dim. Works on
# `(T, T)` and `(B, T, T)`.

# %% [solution] causal_attention_weights

# %% [test] causal_attention_weights 2
check("causal_attention_weights")

# %%
show_weights(causal_attention_weights(attn_scores, 2), title="your causal attention weights")

# %% [markdown]
# ## 4. Dropout on the attention weights
#
# During training, **dropout** randomly zeroes a share $p$ of the attention
# weights and multiplies the survivors by $1/(1-p)$, so that the expected
# total stays the same. The model cannot rely on any single connection, which
# reduces overfitting. In evaluation mode (`model.eval()`) dropout does
# nothing. GPT-style models use it on the attention weights, with $p$ around
# 0.1 (0.5 below just to make it visible).
#
# Which entries get dropped depends on the random generator, and the generator
# is **not** the same across operating systems, PyTorch versions and devices:
# with the same seed your mask may differ from a book's printout or a
# classmate's (PyTorch issue 121595). With PyTorch 2.13 on Linux, the first
# row below comes out as `[2, 2, 0, 2, 2, 0]`, while the book printed six 2s
# for the very same code. So the checks never compare against a
# printed mask; they compare with `nn.Dropout` under the same seed on the same
# machine, or check statistics.

# %%
torch.manual_seed(123)
dropout = nn.Dropout(0.5)
print(dropout(torch.ones(6, 6)))  # about half zeros, the rest 2.0
dropped = dropout(torch.tensor(CAUSAL_WEIGHTS))
print(dropped)
print("row sums in training mode:", dropped.sum(dim=-1))  # no longer all 1

# %% [markdown]
# ## 5. A causal attention module
#
# Now everything in one `nn.Module`, for batches `(B, T, d_in)`:
# projections, scores, causal mask, scaled softmax, dropout on the weights,
# weighted sum of the values.
#
# Tips:
#
# * Build the `(context_length, context_length)` mask once in `__init__` and
#   store it with `register_buffer`, so that `.to(device)` moves it with the
#   model; in `forward`, slice it to the actual `[:T, :T]`.
# * Inputs longer than `context_length` cannot be masked: raise a `ValueError`
#   naming both numbers.
#
# ### Your task: `CausalAttention(d_in, d_out, context_length, dropout, qkv_bias=False)`
#
# Layers in this order: `W_query`, `W_key`, `W_value` (`nn.Linear`), then
# `dropout = nn.Dropout(dropout)`. Output `(B, T, d_out)`.

# %% [solution] CausalAttention

# %% [test] CausalAttention 4
check("CausalAttention")

# %% [markdown]
# ## Training mode vs evaluation mode
#
# Run this a few times: in training mode the output changes on every call
# (a new dropout mask each time); in evaluation mode it is fixed.

# %%
torch.manual_seed(123)
ca = CausalAttention(3, 2, 6, 0.5)
with torch.no_grad():
    print("train:\n", ca.train()(batch)[0])
    print("eval:\n", ca.eval()(batch)[0])
