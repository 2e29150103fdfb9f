# %% [markdown]
# # 02 · From scores to weights to context vectors
#
# In notebook 01 every token got a score against every other token. Scores are
# awkward to use directly: they can be any size and any sign. Attention turns
# each row of scores into **attention weights**, non-negative numbers that sum
# to 1, and then uses them to average the token vectors into a **context
# vector**:
#
# $$\alpha_{ij} = \mathrm{normalize}_j(\omega_{ij}), \qquad z^{(i)} = \sum_j \alpha_{ij}\, x^{(j)} .$$
#
# You will write three ways of normalising (each fixing a flaw of the one
# before), then the weighted sum, then put everything together into the
# simplest possible self-attention: no trainable weights at all.

# %% [setup]
# <common setup>


# %% [markdown]
# `score_matrix` from notebook 01 is given here, so this notebook does not
# depend on your earlier work. Row 2 of its result (index 1) holds the scores of
# the query *journey*.

# %% [provided] solutions.scores:score_matrix

# %% [markdown]
# ## 1. Dividing by the sum
#
# The most obvious way to make a row sum to 1 is to divide it by its total:
# $\alpha_{2j} = \omega_{2j} / \sum_k \omega_{2k}$. For our example every score
# happens to be positive, so this works. It would break as soon as a score is
# negative (a "weight" could then be negative, or the total could be zero).
#
# ### Your task: `normalize_by_sum(scores, dim=-1)`
#
# Divide by the sum along `dim`. Keep the summed dimension
# (`keepdim=True`) so that the division broadcasts for any shape and any `dim`.

# %% [solution] normalize_by_sum

# %% [test] normalize_by_sum 2
check("normalize_by_sum")

# %% [markdown]
# ## 2. Softmax, straight from the formula
#
# The **softmax** makes every entry positive first, by exponentiating:
#
# $$\mathrm{softmax}(x)_j = \frac{e^{x_j}}{\sum_k e^{x_k}} .$$
#
# Besides handling negative scores, it stretches differences: a larger score
# gets a disproportionately larger weight. That is why the softmax weights
# below differ from the ones you got by dividing by the sum.
#
# ### Your task: `softmax_naive(x, dim=-1)`
#
# Implement the formula literally. The built-in softmax functions are off
# limits here (the grader checks): the point is to see what they do inside.

# %% [solution] softmax_naive

# %% [test] softmax_naive 2
check("softmax_naive")

# %% [markdown]
# ### The overflow problem
#
# `float32` cannot store numbers above about $3.4 \times 10^{38}$, and
# $e^{89}$ is already larger. So for scores around 100 or more, `exp` returns
# `inf`, and $\infty / \infty$ is `nan`. Real attention scores can be that
# large. Run the cell: two perfectly reasonable scores produce garbage.

# %%
big = torch.tensor([1000.0, 1001.0])
print("exp:          ", torch.exp(big))
print("softmax_naive:", softmax_naive(big))

# %% [markdown]
# ## 3. A softmax that never overflows
#
# Subtracting the same constant $c$ from every entry changes nothing, because
# the factor $e^{-c}$ cancels between numerator and denominator:
#
# $$\frac{e^{x_j - c}}{\sum_k e^{x_k - c}} = \frac{e^{-c}\, e^{x_j}}{e^{-c} \sum_k e^{x_k}} = \mathrm{softmax}(x)_j .$$
#
# Choose $c = \max_k x_k$ (taken along `dim`). Now every exponent is $\le 0$, so
# every `exp` lies in $(0, 1]$ and at least one of them equals 1: no overflow,
# and never a zero denominator. Entries equal to `-inf` are fine too, they
# simply get weight $e^{-\infty} = 0$ (notebook 04 relies on this).
#
# ### Your task: `softmax(x, dim=-1)`
#
# Stable softmax along `dim`, for tensors of any shape. Again, no built-in
# softmax.

# %% [solution] softmax

# %% [test] softmax 2
check("softmax")

# %%
show_weights(softmax(score_matrix(inputs), dim=-1), title="your attention weights")

# %% [markdown]
# ## 4. Context vectors
#
# With the weights in hand, the context vector of query $i$ is the weighted
# sum of all token vectors, $z^{(i)} = \sum_j \alpha_{ij} x^{(j)}$. For one
# query, that is a vector–matrix product `(T,) @ (T, d)`; for all queries at
# once, the rows of the weight matrix do the same job: `(T, T) @ (T, d)`; and
# a batch just adds a leading dimension.
#
# ### Your task: `context_vectors(weights, inputs)`
#
# Handle all three cases: `(T,)` weights → `(d,)`, `(T, T)` → `(T, d)`,
# `(B, T, T)` with `(B, T, d)` inputs → `(B, T, d)`. One operator does it all.

# %% [solution] context_vectors

# %% [test] context_vectors 2
check("context_vectors")

# %% [markdown]
# ## 5. Putting it together
#
# The whole pipeline, for every token at once:
#
# $$Z = \mathrm{softmax}(X X^\top)\, X$$
#
# with the softmax taken along each row (the last dimension).
#
# ### Your task: `simple_self_attention(inputs)`
#
# Use `score_matrix`, your `softmax` and your `context_vectors`. It must work
# for `(T, d)` and `(B, T, d)`.

# %% [solution] simple_self_attention

# %% [test] simple_self_attention 2
check("simple_self_attention")

# %% [markdown]
# ## Look at the weights
#
# Each row shows how much one word attends to each word. Notice that nothing
# here is learned: the weights depend only on the fixed embeddings. Notebook 03
# adds trainable projections so that a model can decide what to attend to.

# %%
words = ["Your", "journey", "starts", "with", "one", "step"]
weights = softmax(score_matrix(inputs), dim=-1)
print(" " * 8 + "".join(f"{w:>8s}" for w in words))
for word, row in zip(words, weights):
    print(f"{word:>8s}" + "".join(f"{v:8.3f}" for v in row))
