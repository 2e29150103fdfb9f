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


# <notebook checks>


# The grader's hints for errors your code may raise in the checks below:
# (error type, text in its message, the function it was raised in or None for any, hint)
HINTS = [
    ("RuntimeError", "view size is not compatible", None,
     "This looks like a bare .view of the transposed tensor: after a transpose it is non-contiguous, so use .reshape(...) or .contiguous().view(...)"),
    ("RuntimeError", "", "scaled_dot_product_attention",
     "with batch dims, transpose only the last two dims of the keys: keys.transpose(-2, -1) (or keys.mT), not keys.T, which reverses every dim"),
    ("RuntimeError", "", "forward",
     "with batch dims, transpose only the last two dims of the keys: keys.transpose(-2, -1) (or keys.mT), not keys.T, which reverses every dim"),
]
BANNED = ("scaled_dot_product_attention", "MultiheadAttention")  # built-ins this notebook forbids: grading takes points when your code uses them

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
torch.manual_seed(123)
W_query, W_key, W_value = torch.rand(3, 2), torch.rand(3, 2), torch.rand(3, 2)
queries, keys, values = project_qkv(inputs, W_query, W_key, W_value)
check_close(queries[1], [0.4306, 1.4551], "query_2 = project_qkv(...)[0][1]")
check_close(keys[1], [0.4433, 1.1419], "key_2 = project_qkv(...)[1][1] — are the outputs in the order (queries, keys, values)?")
check_close(values[1], [0.3951, 1.0037], "value_2 = project_qkv(...)[2][1]")
q_b, k_b, v_b = project_qkv(batch, W_query, W_key, W_value)
check_close(k_b, torch.stack((keys, keys)), "project_qkv(batch, ...) keys")

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

# %% [test] scaled_dot_product_attention 1
check_no_builtin("scaled_dot_product_attention")
torch.manual_seed(123)
W_query, W_key, W_value = torch.rand(3, 2), torch.rand(3, 2), torch.rand(3, 2)
queries, keys, values = inputs @ W_query, inputs @ W_key, inputs @ W_value
context_2, weights_2 = scaled_dot_product_attention(queries[1], keys, values)
check_close(weights_2, [0.1500, 0.2264, 0.2199, 0.1311, 0.0906, 0.1820],
            "weights of query 2 — did you divide the scores by sqrt(d_k) = sqrt(keys.shape[-1])?")
check_close(context_2, [0.3061, 0.8210], "context vector of query 2")

# %% [test] scaled_dot_product_attention 1
torch.manual_seed(123)
W_query, W_key, W_value = torch.randn(3, 2), torch.randn(3, 2), torch.randn(3, 2)
queries, keys, values = inputs @ W_query, inputs @ W_key, inputs @ W_value
context, weights = scaled_dot_product_attention(queries, keys, values)
check_close(weights.sum(dim=-1), torch.ones(6), "weights: each row must sum to 1 — softmax over the last dim (the keys)")
check_close(weights[1], [0.1704, 0.1611, 0.1652, 0.1412, 0.2505, 0.1117], "weights of query 2 (randn variant)")
check_close(context[1], [0.2854, 0.4081], "context vector of query 2 (randn variant)")
ctx_b, w_b = scaled_dot_product_attention(*(torch.stack((t, t)) for t in (queries, keys, values)))
check_close(ctx_b, torch.stack((context, context)), "scaled_dot_product_attention with a batch dim")

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
check_no_builtin("SelfAttention_v1")
torch.manual_seed(123)
sa_v1 = SelfAttention_v1(3, 2)
out = sa_v1(inputs)
check_close(out, [[0.2996, 0.8053], [0.3061, 0.8210], [0.3058, 0.8203],
                  [0.2948, 0.7939], [0.2927, 0.7891], [0.2990, 0.8040]],
            "torch.manual_seed(123); SelfAttention_v1(3, 2)(inputs) — parameters created in the order W_query, W_key, W_value?")
assert len(list(sa_v1.parameters())) == 3, "SelfAttention_v1 must register exactly three nn.Parameters"

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
check_no_builtin("SelfAttention_v2")
torch.manual_seed(789)
sa_v2 = SelfAttention_v2(3, 2)
out = sa_v2(inputs)
expected_v2 = [[-0.0739, 0.0713], [-0.0748, 0.0703], [-0.0749, 0.0702],
               [-0.0760, 0.0685], [-0.0763, 0.0679], [-0.0754, 0.0693]]
check_close(out, expected_v2, "torch.manual_seed(789); SelfAttention_v2(3, 2)(inputs)")
check_close(sa_v2(batch), torch.stack((out, out)), "SelfAttention_v2 on a batch — transpose only the last two dims of the keys")
assert SelfAttention_v2(3, 2, qkv_bias=True).W_query.bias is not None, "SelfAttention_v2: qkv_bias=True must give the Linear layers a bias"

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
torch.manual_seed(789)
sa_v2 = SelfAttention_v2(3, 2)
torch.manual_seed(123)
sa_v1 = SelfAttention_v1(3, 2)
copy_v2_weights_into_v1(sa_v1, sa_v2)
check_close(sa_v1(inputs), sa_v2(inputs), "after copying, v1(inputs) equals v2(inputs) — did you transpose?")
check_close(sa_v1.W_key, sa_v2.W_key.weight.T, "after copying, v1.W_key is v2.W_key.weight.T — keys and queries swapped?")
params = dict(sa_v1.named_parameters())
assert sorted(params) == ["W_key", "W_query", "W_value"], \
    f"after copying, v1 must still have exactly the Parameters W_query, W_key, W_value; it has {sorted(params)}"
assert all(p.is_leaf and p.requires_grad for p in params.values()), \
    ("after copying, v1's Parameters must stay trainable leaves: copy with .copy_ inside `with torch.no_grad():` "
     "(or assign new nn.Parameter objects, as the book does), and leave requires_grad on")

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
