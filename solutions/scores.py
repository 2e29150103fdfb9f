"""Section 01: attention scores without trainable weights."""
import torch
from torch import nn


# %% dot_scores
def dot_scores(query, inputs):
    """Score one query against every token with a dot product.

    Dimensions: T = number of tokens, d = embedding size.

    Args:
        query: (d,) the embedding of the token that asks.
        inputs: (T, d) one embedding per row.

    Returns:
        (T,) tensor: entry i is inputs[i] . query.

    Hints:
        1. A dot product of every row with one vector is a matrix-vector product.
        2. No loop is needed: `inputs @ query` already has shape (T,).
    """
    # BEGIN SOLUTION
    return inputs @ query  # (T,)
    # END SOLUTION


# %% score_matrix
def score_matrix(inputs):
    """All pairwise dot products between tokens.

    Dimensions: B = batch size, T = number of tokens, d = embedding size.

    Args:
        inputs: (T, d) or (B, T, d).

    Returns:
        (T, T) or (B, T, T): entry [i, j] is inputs[i] . inputs[j].

    Hints:
        1. Row i of the result is dot_scores(inputs[i], inputs).
        2. Do it for every row at once: multiply by the transpose of the last two dims.
        3. Use `transpose(-2, -1)` (not `.T`) so that a batch dimension is left alone.
        4. No Python loop over tokens: it is checked.
    """
    # BEGIN SOLUTION
    return inputs @ inputs.transpose(-2, -1)  # (..., T, T)
    # END SOLUTION


# %% AdditiveScore
class AdditiveScore(nn.Module):
    """Additive (Bahdanau-style) scores of one learned query against every token.

    Dimensions: B = batch size, L = sequence length, D = hidden_size.

    Create the parameters in exactly this order (seeded outputs depend on it):
        1. W_q = nn.Linear(D, D, bias=False)
        2. W_k = nn.Linear(D, D, bias=False)
        3. w   = nn.Linear(D, 1, bias=False)
        4. q   = nn.Parameter(torch.randn(1, D))

    forward(X): X is (B, L, D); returns (B, L) = w(tanh(W_k(X) + W_q(q))).squeeze(-1).

    Hints:
        1. W_q(q) is (1, D); broadcasting adds it to every token of W_k(X) (B, L, D).
        2. w maps the last dim from D to 1; squeeze that dim away.
    """

    def __init__(self, hidden_size):
        super().__init__()
        # BEGIN SOLUTION
        self.W_q = nn.Linear(hidden_size, hidden_size, bias=False)
        self.W_k = nn.Linear(hidden_size, hidden_size, bias=False)
        self.w = nn.Linear(hidden_size, 1, bias=False)
        self.q = nn.Parameter(torch.randn(1, hidden_size))
        # END SOLUTION

    def forward(self, X):
        # BEGIN SOLUTION
        hidden = torch.tanh(self.W_k(X) + self.W_q(self.q))  # (B, L, D)
        return self.w(hidden).squeeze(-1)  # (B, L)
        # END SOLUTION


# %% DotProductScore
class DotProductScore(nn.Module):
    """Dot-product scores of one learned query against every token.

    Dimensions: B = batch size, L = sequence length, D = hidden_size.

    Parameter (the only one): q = nn.Parameter(torch.randn(D, 1)).

    forward(X): X is (B, L, D); returns (B, L) = (X @ q).squeeze(-1).

    Hints:
        1. q is a Parameter, not a layer: multiply by it, do not call it.
    """

    def __init__(self, hidden_size):
        super().__init__()
        # BEGIN SOLUTION
        self.q = nn.Parameter(torch.randn(hidden_size, 1))
        # END SOLUTION

    def forward(self, X):
        # BEGIN SOLUTION
        return (X @ self.q).squeeze(-1)  # (B, L)
        # END SOLUTION


# %% SelfAttentionScore
class SelfAttentionScore(nn.Module):
    """Self-attention scores: every token asks, every token answers.

    Dimensions: B = batch size, L = sequence length, D = hidden_size.

    Create the parameters in exactly this order:
        1. W_q = nn.Linear(D, D, bias=False)
        2. W_k = nn.Linear(D, D, bias=False)

    forward(X): X is (B, L, D); returns (B, L, L) = W_q(X) @ W_k(X)^T, not scaled.

    Hints:
        1. Transpose only the last two dims of the keys.
    """

    def __init__(self, hidden_size):
        super().__init__()
        # BEGIN SOLUTION
        self.W_q = nn.Linear(hidden_size, hidden_size, bias=False)
        self.W_k = nn.Linear(hidden_size, hidden_size, bias=False)
        # END SOLUTION

    def forward(self, X):
        # BEGIN SOLUTION
        queries = self.W_q(X)  # (B, L, D)
        keys = self.W_k(X)  # (B, L, D)
        return queries @ keys.transpose(-2, -1)  # (B, L, L)
        # END SOLUTION
