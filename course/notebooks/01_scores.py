# %% [markdown]
# # 01 · Attention scores without trainable weights
#
# Attention lets every token of a sequence build a new vector, its **context
# vector**, by mixing the vectors of all the tokens it can see. The mixing is a
# weighted sum, and the weights come from **scores**: one number per pair of
# tokens saying how relevant token $j$ is to token $i$.
#
# This notebook is about that first step only: computing the scores. Turning
# them into weights and context vectors is the topic of notebook 02.
#
# Throughout the course we use one tiny example: the six-word sentence
# *"Your journey starts with one step"*, each word already embedded as a
# 3-dimensional vector (made-up numbers, small enough to check by hand).
# Rows are tokens, so `inputs` has shape `(T, d) = (6, 3)`; a batch stacks
# sequences into `(B, T, d)`.

# %% [setup]
# <common setup>


# <notebook checks>


# The grader's hints for errors your code may raise in the checks below:
# (error type, text in its message, the function it was raised in or None for any, hint)
HINTS = [
    ("RuntimeError", "view size is not compatible", None,
     "This looks like a bare .view of the transposed tensor: after a transpose it is non-contiguous, so use .reshape(...) or .contiguous().view(...)"),
    ("RuntimeError", "", "score_matrix",
     "This looks like .T on a batched (3-D) tensor, which reverses every dim (batch included): "
     "with batch dims, transpose only the last two dims of the keys: keys.transpose(-2, -1) (or keys.mT), not keys.T, which reverses every dim"),
]
BANNED = ()  # no built-in is forbidden in this notebook


# %% [markdown]
# ## 1. One query against every token
#
# Pick one token to play the **query**, say $x^{(2)}$ = *journey*. The
# simplest relevance measure is the dot product: it is large when two vectors
# point the same way and have large entries, and small (or negative) when they
# do not. The score of token $j$ for query 2 is
#
# $$\omega_{2j} = x^{(j)} \cdot x^{(2)} = \sum_{k} x^{(j)}_k \, x^{(2)}_k .$$
#
# ### Your task: `dot_scores(query, inputs)`
#
# Given a query of shape `(d,)` and the inputs `(T, d)`, return the `(T,)`
# tensor of scores, entry $i$ being `inputs[i] · query`. Think of it as one
# matrix–vector product rather than a loop.

# %% [solution] dot_scores

# %% [test] dot_scores 2
scores_2 = dot_scores(inputs[1], inputs)
check_close(scores_2, [0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865], "dot_scores(inputs[1], inputs)")
check_close(dot_scores(inputs[0], inputs)[3], (inputs[0] * inputs[3]).sum(),
            "dot_scores(inputs[0], inputs)[3] should be inputs[3] · inputs[0]")

# %% [markdown]
# Look at the scores of *journey*: which token scores highest? A token is
# usually most similar to itself, and *starts*, whose embedding is almost the
# same as *journey*'s, comes a close second.

# %%
words = ["Your", "journey", "starts", "with", "one", "step"]
for word, score in zip(words, dot_scores(inputs[1], inputs)):
    print(f"{word:>8s}  {score:.4f}")

# %% [markdown]
# ## 2. Every query at once
#
# In self-attention **every** token is a query. Stacking the six score vectors
# as rows gives a $T \times T$ matrix $\Omega$ with $\Omega_{ij} = x^{(i)} \cdot x^{(j)}$.
# Writing the inputs as a matrix $X$ (one token per row), that is simply
#
# $$\Omega = X X^\top .$$
#
# ### Your task: `score_matrix(inputs)`
#
# Return all pairwise dot products: `(T, d)` → `(T, T)`, and for a batch
# `(B, T, d)` → `(B, T, T)`, each batch item handled on its own. Use no Python
# loop over tokens (this is checked). For the batched case, transpose only the
# last two dimensions: `transpose(-2, -1)`, not `.T`, which reverses *all* dims.

# %% [solution] score_matrix

# %% [test] score_matrix 1
omega = score_matrix(inputs)
check_close(omega, [[0.9995, 0.9544, 0.9422, 0.4753, 0.4576, 0.6310],
                    [0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865],
                    [0.9422, 1.4754, 1.4570, 0.8296, 0.7154, 1.0605],
                    [0.4753, 0.8434, 0.8296, 0.4937, 0.3474, 0.6565],
                    [0.4576, 0.7070, 0.7154, 0.3474, 0.6654, 0.2935],
                    [0.6310, 1.0865, 1.0605, 0.6565, 0.2935, 0.9450]], "score_matrix(inputs)")
check_close(omega, omega.T, "score_matrix(inputs) must be symmetric: x_i · x_j = x_j · x_i")

# %% [test] score_matrix 1
omega_batch = score_matrix(batch)
assert omega_batch.shape == (2, 6, 6), \
    f"score_matrix(batch): expected shape (2, 6, 6), got {tuple(omega_batch.shape)} — transpose only the last two dims"
for b in range(2):
    check_close(omega_batch[b], score_matrix(inputs), f"score_matrix(batch)[{b}]")

# %% [markdown]
# ## 3. Scores with learned parameters
#
# Plain dot products of the embeddings cannot be tuned: nothing in them is
# learned. Real models put trainable parameters into the score. Three classic
# designs, all taking a batch `X` of shape `(B, L, D)`:
#
# * **Additive scores** (Bahdanau-style): a learned query vector $q$ and the
#   tokens are both projected, added, squashed with $\tanh$, and a learned
#   vector $w$ reduces the result to one number per token:
#   $s_j = w^\top \tanh(W_k x_j + W_q q)$. Output `(B, L)`.
# * **Dot-product scores with a learned query**: $s_j = x_j \cdot q$.
#   Output `(B, L)`.
# * **Self-attention scores**: every token is a query, after projecting the
#   queries and keys with two different matrices: $S = (X W_q^\top)(X W_k^\top)^\top$.
#   Output `(B, L, L)`; no scaling yet (that comes in notebook 03).
#
# The first two produce **one** score per token (a single learned question
# asked of the sentence); the third produces a full matrix, like `score_matrix`.
#
# ### Your task: `AdditiveScore(hidden_size)`
#
# Create the parameters **in exactly the order given in the docstring**: the
# tests seed the random generator before building the module, and a different
# order gives different random numbers. `W_q(q)` has shape `(1, D)` and is
# broadcast over all tokens.

# %% [solution] AdditiveScore

# %% [test] AdditiveScore 2
torch.manual_seed(0)
additive = AdditiveScore(3)
assert additive.q.shape == (1, 3), f"AdditiveScore: q must have shape (1, D), got {tuple(additive.q.shape)}"
torch.manual_seed(0)  # replay the documented creation order: W_q, W_k, w, q
replay = [nn.Linear(3, 3, bias=False).weight, nn.Linear(3, 3, bias=False).weight,
          nn.Linear(3, 1, bias=False).weight, torch.randn(1, 3)]
for name, mine, ref in zip(["W_q.weight", "W_k.weight", "w.weight", "q"],
                           [additive.W_q.weight, additive.W_k.weight, additive.w.weight, additive.q], replay):
    check_close(mine, ref, f"AdditiveScore: {name} differs under the same seed — create W_q, W_k, w, q in that order")
s = additive(batch)
with torch.no_grad():
    expected = (torch.tanh(batch @ additive.W_k.weight.T + additive.q @ additive.W_q.weight.T)
                @ additive.w.weight.T).squeeze(-1)
check_close(s, expected, "AdditiveScore(3)(batch) should be w(tanh(W_k(X) + W_q(q))).squeeze(-1)")

# %% [markdown]
# ### Your task: `DotProductScore(hidden_size)`
#
# The only parameter is the learned query `q` of shape `(D, 1)`. It is a
# `Parameter`, a tensor, not a layer: you multiply by it, you do not call it.

# %% [solution] DotProductScore

# %% [test] DotProductScore 2
torch.manual_seed(0)
dot_scorer = DotProductScore(3)
assert dot_scorer.q.shape == (3, 1), f"DotProductScore: q must have shape (D, 1), got {tuple(dot_scorer.q.shape)}"
s = dot_scorer(batch)
check_close(s, (batch @ dot_scorer.q).squeeze(-1), "DotProductScore(3)(batch) should be (X @ q).squeeze(-1)")

# %% [markdown]
# ### Your task: `SelfAttentionScore(hidden_size)`
#
# Two bias-free `Linear(D, D)` layers, `W_q` then `W_k`. Project the batch with
# each and return the unscaled `(B, L, L)` product of queries and transposed
# keys. A nice sanity check: if both projections are the identity, the result
# is exactly `score_matrix` from section 2.

# %% [solution] SelfAttentionScore

# %% [test] SelfAttentionScore 2
torch.manual_seed(0)
self_scorer = SelfAttentionScore(3)
s = self_scorer(batch)
assert s.shape == (2, 6, 6), f"SelfAttentionScore(3)(batch): expected shape (2, 6, 6), got {tuple(s.shape)}"
with torch.no_grad():
    self_scorer.W_q.weight.copy_(torch.eye(3))
    self_scorer.W_k.weight.copy_(torch.eye(3))
check_close(self_scorer(batch)[0], score_matrix(inputs),
            "SelfAttentionScore with identity W_q and W_k should equal score_matrix — did you scale or transpose the wrong dims?")

# %% [markdown]
# ## Play with it
#
# The three scorers on the worked example, with fresh random parameters. Try a
# different seed: the learned scores change, the plain dot products never do.

# %%
torch.manual_seed(1)
with torch.no_grad():
    print("additive   :", AdditiveScore(3)(batch)[0])
    print("dot-product:", DotProductScore(3)(batch)[0])
    print("self-attn  :\n", SelfAttentionScore(3)(batch)[0])
