"""Section 02: from scores to weights to context vectors."""
import torch

from solutions.scores import score_matrix  # provided to students in a locked cell


# %% normalize_by_sum
def normalize_by_sum(scores, dim=-1):
    """Turn scores into weights by dividing by their sum.

    Args:
        scores: a tensor of any shape, with positive entries.
        dim: the dimension along which the weights must sum to 1.

    Returns:
        A tensor of the same shape whose entries along `dim` sum to 1.

    Hints:
        1. `sum(dim, keepdim=True)` keeps the dimension so that division broadcasts.
        2. This breaks for negative scores: the next two functions fix that.
    """
    # BEGIN SOLUTION
    return scores / scores.sum(dim=dim, keepdim=True)
    # END SOLUTION


# %% softmax_naive
def softmax_naive(x, dim=-1):
    """Softmax straight from the formula: exp(x) / sum(exp(x)).

    Args:
        x: a tensor of any shape.
        dim: the dimension along which the result sums to 1.

    Returns:
        A tensor of the same shape. It overflows (inf / inf = nan) for inputs
        around 100 or more: that is the point of the next function.

    Hints:
        1. Exponentiate, then divide by the sum along `dim` (keepdim=True).
        2. Do not call torch.softmax or any other built-in softmax: it is checked.
    """
    # BEGIN SOLUTION
    exps = torch.exp(x)
    return exps / exps.sum(dim=dim, keepdim=True)
    # END SOLUTION


# %% softmax
def softmax(x, dim=-1):
    """Numerically stable softmax along `dim`.

    Args:
        x: a tensor of any shape; entries may be large (1000.) or -inf.
        dim: the dimension along which the result sums to 1.

    Returns:
        A tensor of the same shape, equal to torch.softmax(x, dim).

    Hints:
        1. softmax(x) == softmax(x - c) for any c that is constant along `dim`.
        2. Choose c = the max along `dim` (keepdim=True): every exponent is then <= 0,
           so exp never overflows.
        3. A row with some -inf entries is fine: exp(-inf) = 0.
        4. Do not call torch.softmax or any other built-in softmax: it is checked.
    """
    # BEGIN SOLUTION
    shifted = x - x.amax(dim=dim, keepdim=True)
    exps = torch.exp(shifted)
    return exps / exps.sum(dim=dim, keepdim=True)
    # END SOLUTION


# %% context_vectors
def context_vectors(weights, inputs):
    """Weighted sums of the input rows.

    Dimensions: B = batch size, T = number of tokens, d = embedding size.

    Args:
        weights: (T,) for one query, (T, T) for all, or (B, T, T) batched;
            the last dim runs over the tokens being summed.
        inputs: (T, d), or (B, T, d) when weights are batched.

    Returns:
        (d,), (T, d) or (B, T, d): output i is sum_j weights[..., i, j] * inputs[..., j, :].

    Hints:
        1. One matrix product does all three cases.
    """
    # BEGIN SOLUTION
    return weights @ inputs
    # END SOLUTION


# %% simple_self_attention
def simple_self_attention(inputs):
    """Self-attention with no trainable weights and no scaling.

    Args:
        inputs: (T, d) or (B, T, d).

    Returns:
        Same shape as inputs: the context vector of every token.

    Hints:
        1. Scores: score_matrix(inputs) (given above).
        2. Weights: your softmax along the last dim.
        3. Context: your context_vectors.
    """
    # BEGIN SOLUTION
    attn_weights = softmax(score_matrix(inputs), dim=-1)  # (..., T, T)
    return context_vectors(attn_weights, inputs)  # (..., T, d)
    # END SOLUTION
