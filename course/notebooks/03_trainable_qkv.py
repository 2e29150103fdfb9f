# %% [markdown]
# # 03 · Scaled dot-product attention with trainable weights
#
# The attention of notebook 02 has nothing to learn: the weights follow from
# the fixed embeddings. Here every token is first **projected** three times,
# by three trainable matrices, into
#
# * a **query** $q^{(i)} = x^{(i)} W_q$: what token $i$ is looking for,
# * a **key** $k^{(j)} = x^{(j)} W_k$: what token $j$ offers to be matched on,
# * a **value** $v^{(j)} = x^{(j)} W_v$: what token $j$ hands over when chosen.
#
# Scores compare queries with keys, and the context vector averages the
# **values**, not the raw inputs. Training adjusts $W_q, W_k, W_v$; this is
# the attention used in GPT-style models. The projections may change the size:
# `d_in = 3` inputs become `d_out = 2` queries, keys and values here.

# %% [setup]
# <common setup>


# %% [markdown]
# ## 1. Queries, keys and values
#
# With the weight matrices stored as `(d_in, d_out)`, projecting all tokens at
# once is one matrix product per matrix: $Q = X W_q$, $K = X W_k$, $V = X W_v$,
# each `(T, d_out)`. The same code works for a batch `(B, T, d_in)`.
#
# The worked example draws the three matrices with `torch.rand` right after
# `torch.manual_seed(123)`, in the order query, key, value. For the second
# token, *journey*, that gives $q^{(2)} = [0.4306, 1.4551]$,
# $k^{(2)} = [0.4433, 1.1419]$ and $v^{(2)} = [0.3951, 1.0037]$.
#
# ### Your task: `project_qkv(x, W_query, W_key, W_value)`
#
# Return the tuple `(queries, keys, values)`.

# %% [solution] project_qkv

# %% [test] project_qkv 2
check("project_qkv")

# %% [markdown]
# ## 2. Scaling the scores
#
# The score of query $i$ against key $j$ is $\omega_{ij} = q^{(i)} \cdot k^{(j)}$;
# for *journey* these are $[1.2705, 1.8524, 1.8111, 1.0795, 0.5577, 1.5440]$.
# Before the softmax they are divided by $\sqrt{d_k}$, the square root of the
# key size:
#
# $$\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V .$$
#
# Why? A dot product sums $d_k$ products; with random entries its spread grows
# like $\sqrt{d_k}$. In large models ($d_k$ = 64 or more) unscaled scores get
# large, the softmax puts almost all weight on one key, and its gradients
# become tiny, so training stalls. Dividing by $\sqrt{d_k}$ keeps the scores
# around unit size, whatever $d_k$ is.
#
# ### Your task: `scaled_dot_product_attention(queries, keys, values)`
#
# Return `(context, weights)`. Take $d_k$ from `keys.shape[-1]`, transpose only
# the last two dimensions of the keys, and softmax over the keys (the last
# dim). Any leading batch dimensions must pass through, and a single query of
# shape `(d_k,)` must work too (check what `@` does with a 1-D left operand).
# You may use `torch.softmax` from here on, but not PyTorch's ready-made
# attention functions (checked).

# %% [solution] scaled_dot_product_attention

# %% [test] scaled_dot_product_attention 2
check("scaled_dot_product_attention")

# %%
# queries = keys = values = inputs, without projections: who attends to whom?
show_weights(scaled_dot_product_attention(inputs, inputs, inputs)[1], title="your weights (Q = K = V = inputs)")

# %% [markdown]
# ## 3. A module: `SelfAttention_v1`
#
# Wrapping the projections in an `nn.Module` makes the three matrices
# trainable `nn.Parameter`s that an optimiser can find through
# `.parameters()`.
#
# ### Your task: `SelfAttention_v1(d_in, d_out)`
#
# Create `W_query`, `W_key`, `W_value` as `nn.Parameter(torch.rand(d_in, d_out))`
# **in that order**: seeded with 123, they are then exactly the matrices of
# section 1, so the second output row must be the context vector you computed
# there, $[0.3061, 0.8210]$. `forward(x)` takes `(T, d_in)` and returns the
# `(T, d_out)` context vectors.

# %% [solution] SelfAttention_v1

# %% [test] SelfAttention_v1 2
check("SelfAttention_v1")

# %% [markdown]
# ## 4. The same with `nn.Linear`: `SelfAttention_v2`
#
# `nn.Linear(d_in, d_out, bias=False)` computes $x W^\top$ with a weight of
# shape `(d_out, d_in)`, and initialises it with a better-scaled random scheme
# than `torch.rand`, which helps training. Optional biases come for free
# (`qkv_bias`).
#
# ### Your task: `SelfAttention_v2(d_in, d_out, qkv_bias=False)`
#
# Three `nn.Linear` layers in the order `W_query`, `W_key`, `W_value`. It must
# accept `(T, d_in)` and `(B, T, d_in)`.

# %% [solution] SelfAttention_v2

# %% [test] SelfAttention_v2 2
check("SelfAttention_v2")

# %% [markdown]
# ## 5. Exercise 3.1: the two versions compute the same thing
#
# The outputs of v1 and v2 differ only because their weights were drawn
# differently. Copy v2's weights into v1 and the outputs must agree. The one
# trap: `Linear.weight` is stored as `(d_out, d_in)`, the transpose of v1's
# matrices.
#
# ### Your task: `copy_v2_weights_into_v1(v1, v2)`
#
# Two answers are right. Copy in place into v1's own `Parameter`s with
# `.copy_`, inside `torch.no_grad()` so the copy is not recorded in the
# autograd graph; or, as the book's own solution does, give v1 new
# parameters: `v1.W_query = nn.Parameter(v2.W_query.weight.T)` (these share
# their storage with v2, which the exercise allows). Either way v1 must keep
# three trainable parameters, and its outputs must then match v2's.

# %% [solution] copy_v2_weights_into_v1

# %% [test] copy_v2_weights_into_v1 2
check("copy_v2_weights_into_v1")

# %% [markdown]
# ## Compare
#
# Before and after the copy. Change the seeds and watch both columns move
# together.

# %%
torch.manual_seed(789)
v2 = SelfAttention_v2(3, 2)
torch.manual_seed(123)
v1 = SelfAttention_v1(3, 2)
with torch.no_grad():
    print("v1 before:\n", v1(inputs))
    copy_v2_weights_into_v1(v1, v2)
    print("v1 after:\n", v1(inputs))
    print("v2:\n", v2(inputs))
