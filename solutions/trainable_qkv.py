"""Section 03: scaled dot-product attention with trainable weights."""
import torch
from torch import nn


# %% project_qkv
def project_qkv(x, W_query, W_key, W_value):
    """Project the inputs into queries, keys and values.

    Dimensions: B = batch size, T = number of tokens,
    d_in = input embedding size, d_out = projected size.

    Args:
        x: (T, d_in) or (B, T, d_in).
        W_query, W_key, W_value: (d_in, d_out) each.

    Returns:
        (queries, keys, values), each (T, d_out) or (B, T, d_out).

    Hints:
        1. Each projection is one matrix product with x on the left.
    """
    # BEGIN SOLUTION
    queries = x @ W_query  # (..., T, d_out)
    keys = x @ W_key  # (..., T, d_out)
    values = x @ W_value  # (..., T, d_out)
    return queries, keys, values
    # END SOLUTION


# %% scaled_dot_product_attention
def scaled_dot_product_attention(queries, keys, values):
    """Attention of every query over every key, scaled by sqrt(d_k).

    Dimensions: T_q queries, T keys/values, d_k = keys.shape[-1], d_v = values.shape[-1];
    any number of leading batch dims (written ...).

    Args:
        queries: (..., T_q, d_k), or a single query (d_k,).
        keys: (..., T, d_k).
        values: (..., T, d_v).

    Returns:
        (context, weights):
            context (..., T_q, d_v) (or (d_v,) for a single query),
            weights (..., T_q, T) (or (T,)), each row summing to 1.

    Hints:
        1. attn_scores = queries @ keys^T, transposing only the last two dims of keys.
        2. Divide by d_k ** 0.5 before the softmax, where d_k = keys.shape[-1].
        3. Softmax along the last dim (over keys), then multiply by the values.
        4. Do not call F.scaled_dot_product_attention or nn.MultiheadAttention: it is checked.
    """
    # BEGIN SOLUTION
    d_k = keys.shape[-1]
    attn_scores = queries @ keys.transpose(-2, -1)  # (..., T_q, T)
    attn_weights = torch.softmax(attn_scores / d_k**0.5, dim=-1)  # (..., T_q, T)
    context_vec = attn_weights @ values  # (..., T_q, d_v)
    return context_vec, attn_weights
    # END SOLUTION


# %% SelfAttention_v1
class SelfAttention_v1(nn.Module):
    """Self-attention with raw weight matrices.

    Dimensions: T = number of tokens, d_in = input size, d_out = output size.

    Create the parameters in exactly this order (seeded outputs depend on it):
        1. W_query = nn.Parameter(torch.rand(d_in, d_out))
        2. W_key   = nn.Parameter(torch.rand(d_in, d_out))
        3. W_value = nn.Parameter(torch.rand(d_in, d_out))

    forward(x): x is (T, d_in); returns the context vectors (T, d_out).

    Hints:
        1. keys = x @ self.W_key, and the same for queries and values.
        2. Scale the scores by keys.shape[-1] ** 0.5 before the softmax over the last dim.
    """

    def __init__(self, d_in, d_out):
        super().__init__()
        # BEGIN SOLUTION
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))
        # END SOLUTION

    def forward(self, x):
        # BEGIN SOLUTION
        keys = x @ self.W_key  # (T, d_out)
        queries = x @ self.W_query  # (T, d_out)
        values = x @ self.W_value  # (T, d_out)
        attn_scores = queries @ keys.transpose(-2, -1)  # (T, T)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        return attn_weights @ values  # (T, d_out)
        # END SOLUTION


# %% SelfAttention_v2
class SelfAttention_v2(nn.Module):
    """Self-attention with nn.Linear projections.

    Dimensions: B = batch size, T = number of tokens, d_in, d_out as above.

    Create the layers in exactly this order:
        1. W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        2. W_key   = nn.Linear(d_in, d_out, bias=qkv_bias)
        3. W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    forward(x): x is (T, d_in) or (B, T, d_in); returns (T, d_out) or (B, T, d_out).

    Hints:
        1. A Linear layer is called: self.W_query(x).
        2. Transpose the last two dims of the keys so a batch dim is left alone.
    """

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        # BEGIN SOLUTION
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        # END SOLUTION

    def forward(self, x):
        # BEGIN SOLUTION
        keys = self.W_key(x)  # (..., T, d_out)
        queries = self.W_query(x)  # (..., T, d_out)
        values = self.W_value(x)  # (..., T, d_out)
        attn_scores = queries @ keys.transpose(-2, -1)  # (..., T, T)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        return attn_weights @ values  # (..., T, d_out)
        # END SOLUTION


# %% copy_v2_weights_into_v1
def copy_v2_weights_into_v1(v1, v2):
    """Load v2's Linear weights into v1's raw matrices, in place.

    Args:
        v1: a SelfAttention_v1 with W_query, W_key, W_value of shape (d_in, d_out).
        v2: a SelfAttention_v2 with the same sizes and qkv_bias=False.

    Returns:
        None. Afterwards v1(x) equals v2(x) for every x.

    Hints:
        1. nn.Linear stores its weight as (d_out, d_in): transpose it.
        2. Copy inside `with torch.no_grad():` so that no graph is recorded,
           with `.copy_` into v1's own Parameters; assigning new
           `nn.Parameter(...)` objects (the book's answer) is also right.
    """
    # BEGIN SOLUTION
    with torch.no_grad():
        v1.W_query.copy_(v2.W_query.weight.T)
        v1.W_key.copy_(v2.W_key.weight.T)
        v1.W_value.copy_(v2.W_value.weight.T)
    # END SOLUTION
