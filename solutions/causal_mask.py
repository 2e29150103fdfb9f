"""Section 04: hiding the future."""
import torch
from torch import nn


# %% causal_mask
def causal_mask(num_tokens, device=None):
    """The causal mask: which keys each query may NOT look at.

    Mask convention: True means "hidden / not allowed".

    Args:
        num_tokens: T, the sequence length.
        device: where to create the mask (None: the default device).

    Returns:
        (T, T) bool tensor, True strictly above the diagonal (token i may not see j > i).

    Hints:
        1. torch.triu(..., diagonal=1) keeps what lies strictly above the diagonal.
        2. Create it directly as bool on `device`.
    """
    # BEGIN SOLUTION
    ones = torch.ones(num_tokens, num_tokens, dtype=torch.bool, device=device)
    return torch.triu(ones, diagonal=1)  # (T, T)
    # END SOLUTION


# %% mask_and_renormalize
def mask_and_renormalize(attn_weights):
    """The simple way: zero the future, then make each row sum to 1 again.

    Args:
        attn_weights: (T, T) or (B, T, T) softmax weights (rows sum to 1).

    Returns:
        A new tensor of the same shape: weights above the diagonal are 0 and
        every row sums to 1. The argument is left unchanged.

    Hints:
        1. causal_mask (above) says which entries to zero (True = hidden).
        2. Use the out-of-place masked_fill, not masked_fill_.
        3. Divide each row by its new sum (keepdim=True).
    """
    # BEGIN SOLUTION
    num_tokens = attn_weights.shape[-1]
    mask = causal_mask(num_tokens, device=attn_weights.device)
    masked = attn_weights.masked_fill(mask, 0.0)  # (..., T, T)
    return masked / masked.sum(dim=-1, keepdim=True)
    # END SOLUTION


# %% causal_attention_weights
def causal_attention_weights(attn_scores, d_k):
    """The efficient way: -inf above the diagonal before the softmax.

    Args:
        attn_scores: (T, T) or (B, T, T), unscaled queries @ keys^T.
        d_k: the key size; scores are divided by d_k ** 0.5.

    Returns:
        Weights of the same shape: 0 above the diagonal, rows summing to 1.

    Hints:
        1. Fill the hidden positions with -inf (or -1e9) BEFORE the softmax:
           exp(-inf) = 0, so the softmax renormalises for free.
        2. Scale by d_k ** 0.5, softmax over the last dim.
    """
    # BEGIN SOLUTION
    num_tokens = attn_scores.shape[-1]
    mask = causal_mask(num_tokens, device=attn_scores.device)
    masked = attn_scores.masked_fill(mask, float("-inf"))  # (..., T, T)
    return torch.softmax(masked / d_k**0.5, dim=-1)
    # END SOLUTION


# %% CausalAttention
class CausalAttention(nn.Module):
    """Causal self-attention with dropout on the attention weights.

    Dimensions: B = batch size, T = number of tokens (T <= context_length),
    d_in = input size, d_out = output size.
    Mask convention: True means "hidden / not allowed".

    Create the layers in exactly this order (seeded outputs depend on it):
        1. W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        2. W_key   = nn.Linear(d_in, d_out, bias=qkv_bias)
        3. W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        4. dropout = nn.Dropout(dropout)
    A mask buffer (register_buffer) may follow; it draws no random numbers.

    forward(x): x is (B, T, d_in); returns (B, T, d_out).
    If T > context_length, raise ValueError naming both numbers.

    Hints:
        1. Register the (context_length, context_length) causal mask as a buffer,
           so that .to(device) moves it; slice [:T, :T] in forward.
        2. Mask with -inf before the softmax of scores / d_k ** 0.5.
        3. Apply self.dropout to the attention weights, then multiply by the values.
        4. Do not create tensors on the CPU inside forward.
    """

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        # BEGIN SOLUTION
        self.context_length = context_length
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool()
        )
        # END SOLUTION

    def forward(self, x):
        # BEGIN SOLUTION
        b, num_tokens, d_in = x.shape
        if num_tokens > self.context_length:
            raise ValueError(
                f"sequence of {num_tokens} tokens is longer than context_length={self.context_length}"
            )
        keys = self.W_key(x)  # (b, T, d_out)
        queries = self.W_query(x)  # (b, T, d_out)
        values = self.W_value(x)  # (b, T, d_out)
        attn_scores = queries @ keys.transpose(1, 2)  # (b, T, T)
        attn_scores = attn_scores.masked_fill(self.mask[:num_tokens, :num_tokens], float("-inf"))
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        context_vec = attn_weights @ values  # (b, T, d_out)
        return context_vec
        # END SOLUTION
