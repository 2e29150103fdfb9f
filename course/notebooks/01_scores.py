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
check("dot_scores")

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

# %% [test] score_matrix 2
check("score_matrix")

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
check("AdditiveScore")

# %% [markdown]
# ### Your task: `DotProductScore(hidden_size)`
#
# The only parameter is the learned query `q` of shape `(D, 1)`. It is a
# `Parameter`, a tensor, not a layer: you multiply by it, you do not call it.

# %% [solution] DotProductScore

# %% [test] DotProductScore 2
check("DotProductScore")

# %% [markdown]
# ### Your task: `SelfAttentionScore(hidden_size)`
#
# Two bias-free `Linear(D, D)` layers, `W_q` then `W_k`. Project the batch with
# each and return the unscaled `(B, L, L)` product of queries and transposed
# keys. A nice sanity check: if both projections are the identity, the result
# is exactly `score_matrix` from section 2.

# %% [solution] SelfAttentionScore

# %% [test] SelfAttentionScore 2
check("SelfAttentionScore")

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
