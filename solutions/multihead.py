"""Section 06: split into heads, attend, rebuild."""
import torch
from torch import nn

from solutions.causal_mask import CausalAttention  # provided to students in a locked cell


# %% split_heads
def split_heads(x, num_heads):
    """Split the feature dim into heads.

    Dimensions: b = batch size, num_tokens = number of tokens, d = features,
    head_dim = d // num_heads.

    Args:
        x: (b, num_tokens, d).
        num_heads: must divide d.

    Returns:
        (b, num_heads, num_tokens, head_dim): head h holds features
        [h*head_dim, (h+1)*head_dim) of every token.

    Raises:
        ValueError when d % num_heads != 0.

    Hints:
        1. Reshape the last dim into (num_heads, head_dim): (b, num_tokens, num_heads, head_dim).
        2. Then swap the num_tokens and num_heads dims. A bare view to
           (b, num_heads, num_tokens, head_dim) mixes tokens up.
    """
    # BEGIN SOLUTION
    b, num_tokens, d = x.shape
    if d % num_heads != 0:
        raise ValueError(f"feature size {d} is not divisible by num_heads={num_heads}")
    head_dim = d // num_heads
    return x.reshape(b, num_tokens, num_heads, head_dim).transpose(1, 2)  # (b, num_heads, num_tokens, head_dim)
    # END SOLUTION


# %% combine_heads
def combine_heads(x):
    """Undo split_heads.

    Args:
        x: (b, num_heads, num_tokens, head_dim).

    Returns:
        (b, num_tokens, num_heads * head_dim), such that combine_heads(split_heads(y, num_heads)) equals y.

    Hints:
        1. Swap num_heads and num_tokens back first.
        2. After a transpose the tensor is not contiguous: use reshape (or contiguous().view).
    """
    # BEGIN SOLUTION
    b, num_heads, num_tokens, head_dim = x.shape
    return x.transpose(1, 2).reshape(b, num_tokens, num_heads * head_dim)  # (b, num_tokens, d)
    # END SOLUTION


# %% MultiHeadAttentionWrapper
class MultiHeadAttentionWrapper(nn.Module):
    """Several CausalAttention heads side by side, outputs concatenated.

    Dimensions: b = batch size, num_tokens = number of tokens.

    Create exactly this:
        heads = nn.ModuleList of num_heads CausalAttention(d_in, d_out, context_length, dropout, qkv_bias),
        built one after the other (the seeded outputs depend on the order).

    forward(x): x is (b, num_tokens, d_in); returns (b, num_tokens, num_heads * d_out), head 0's
    features first.

    Hints:
        1. CausalAttention is given above.
        2. torch.cat along the last dim.
    """

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        # BEGIN SOLUTION
        self.heads = nn.ModuleList(
            [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)]
        )
        # END SOLUTION

    def forward(self, x):
        # BEGIN SOLUTION
        return torch.cat([head(x) for head in self.heads], dim=-1)  # (b, num_tokens, num_heads * d_out)
        # END SOLUTION


# %% MultiHeadAttention
class MultiHeadAttention(nn.Module):
    """Causal multi-head attention with all heads computed together.

    Dimensions: b = batch size, num_tokens = number of tokens,
    head_dim = d_out // num_heads. Mask convention: True means "hidden / not allowed".

    Create the layers in exactly this order (seeded outputs depend on it):
        1. W_query  = nn.Linear(d_in, d_out, bias=qkv_bias)
        2. W_key    = nn.Linear(d_in, d_out, bias=qkv_bias)
        3. W_value  = nn.Linear(d_in, d_out, bias=qkv_bias)
        4. out_proj = nn.Linear(d_out, d_out)
        5. dropout  = nn.Dropout(dropout)
    A causal mask buffer may follow. Raise ValueError if d_out % num_heads != 0.

    forward(x, key_padding_mask=None):
        x: (b, num_tokens, d_in); key_padding_mask: optional (b, num_tokens) bool, True at padded
        keys, hidden on top of the causal mask. Returns (b, num_tokens, d_out).

    Hints:
        1. Project once with each Linear, then split into heads:
           (b, num_tokens, d_out) -> (b, num_tokens, num_heads, head_dim) -> transpose
           -> (b, num_heads, num_tokens, head_dim).
        2. Scale by head_dim ** 0.5 (not d_out ** 0.5).
        3. Combine the padding mask with the causal one: mask[:, None, None, :] broadcasts
           over heads and queries.
        4. Dropout on the weights, multiply by values, combine heads, then out_proj.
        5. No Python loop over heads: it is checked.
    """

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        # BEGIN SOLUTION
        if d_out % num_heads != 0:
            raise ValueError(f"d_out={d_out} is not divisible by num_heads={num_heads}")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.context_length = context_length
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool()
        )
        # END SOLUTION

    def forward(self, x, key_padding_mask=None):
        # BEGIN SOLUTION
        b, num_tokens, d_in = x.shape
        if num_tokens > self.context_length:
            raise ValueError(
                f"sequence of {num_tokens} tokens is longer than context_length={self.context_length}"
            )
        shape = (b, num_tokens, self.num_heads, self.head_dim)
        keys = self.W_key(x).view(shape).transpose(1, 2)  # (b, num_heads, num_tokens, head_dim)
        queries = self.W_query(x).view(shape).transpose(1, 2)  # (b, num_heads, num_tokens, head_dim)
        values = self.W_value(x).view(shape).transpose(1, 2)  # (b, num_heads, num_tokens, head_dim)
        attn_scores = queries @ keys.transpose(2, 3)  # (b, num_heads, num_tokens, num_tokens)
        hidden = self.mask[:num_tokens, :num_tokens]  # (num_tokens, num_tokens)
        if key_padding_mask is not None:
            hidden = hidden | key_padding_mask[:, None, None, :]  # (b, 1, num_tokens, num_tokens)
        attn_scores = attn_scores.masked_fill(hidden, float("-inf"))
        attn_weights = torch.softmax(attn_scores / self.head_dim**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        context_vec = (attn_weights @ values).transpose(1, 2)  # (b, num_tokens, num_heads, head_dim)
        context_vec = context_vec.reshape(b, num_tokens, self.d_out)  # (b, num_tokens, d_out)
        return self.out_proj(context_vec)
        # END SOLUTION
