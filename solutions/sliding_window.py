"""Section 11: sliding-window attention (a band mask, and a KV cache that keeps only the window)."""
import torch
from torch import nn
from torch.nn import functional as F  # noqa: F401  (the notebook imports it: F.scaled_dot_product_attention is allowed)

from solutions.multihead import MultiHeadAttention  # provided to students in a locked cell  # noqa: F401


# %% sliding_window_mask
def sliding_window_mask(num_tokens, window):
    """The sliding-window (band) mask: True where key j is hidden from query i.

    Query i sees the keys i - window < j <= i: itself and the window - 1 tokens before it.
    Mask convention: True means "hidden / not allowed".

    Args:
        num_tokens: T, the number of tokens (queries and keys alike).
        window: how many keys each query sees at most (an int >= 1; ValueError otherwise).
    Returns:
        (T, T) bool tensor, True where j > i (the future) or j <= i - window (too far back).

    Hints:
        1. torch.arange(T) gives the positions; i[:, None] and j[None, :] broadcast to (T, T).
        2. With window >= T it is the causal mask of notebook 04.
    """
    # BEGIN SOLUTION
    if window < 1:
        raise ValueError(f"window={window} must be at least 1")
    positions = torch.arange(num_tokens)
    query, key = positions[:, None], positions[None, :]  # (T, 1), (1, T)
    return (key > query) | (key <= query - window)  # (T, T)
    # END SOLUTION


# %% SlidingWindowAttention
class SlidingWindowAttention(nn.Module):
    """Multi-head attention where each query sees its own token and the window - 1 before it, with a KV cache
    that keeps only the last `window` tokens.

    Dimensions: b = batch size, T = number of new tokens, head_dim = d_out // num_heads,
    C = number of tokens in the cache. Mask convention: True means "hidden / not allowed".

    Create the layers in exactly this order (notebook 06's, so one seed gives 06's weights):
        1. W_query  = nn.Linear(d_in, d_out, bias=qkv_bias)
        2. W_key    = nn.Linear(d_in, d_out, bias=qkv_bias)
        3. W_value  = nn.Linear(d_in, d_out, bias=qkv_bias)
        4. out_proj = nn.Linear(d_out, d_out)
        5. dropout  = nn.Dropout(dropout)
    Raise ValueError if d_out % num_heads != 0 or window < 1.

    The cache: self.cache_k and self.cache_v, None when empty, else (b, num_heads, C, head_dim), the keys and
    values after projection of the last C = min(window, tokens seen since reset_cache()) tokens.

    forward(x, use_cache=False): x is (b, T, d_in); returns (b, T, d_out).
        use_cache=False: the T tokens attend among themselves through the band mask; the cache is not touched.
        use_cache=True: the T tokens follow those in the cache; each new query sees the cached keys and the new
        ones within its window; afterwards the cache keeps the last `window` of them all.
    reset_cache(): empty the cache (before a new sequence).

    Hints:
        1. Keys of the cached tokens come first: the new query i is at index C + i among the C + T keys, so
           it sees the key indices C + i - window < j <= C + i.
        2. Append the new keys and values, attend, then keep [:, :, -window:] of them.
    """

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, window, qkv_bias=False):
        super().__init__()
        # BEGIN SOLUTION
        if d_out % num_heads != 0:
            raise ValueError(f"d_out={d_out} is not divisible by num_heads={num_heads}")
        if window < 1:
            raise ValueError(f"window={window} must be at least 1")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.window = window
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)
        # END SOLUTION

    def forward(self, x, use_cache=False):
        # BEGIN SOLUTION
        b, num_tokens, d_in = x.shape
        shape = (b, num_tokens, self.num_heads, self.head_dim)
        queries = self.W_query(x).view(shape).transpose(1, 2)  # (b, num_heads, T, head_dim)
        keys = self.W_key(x).view(shape).transpose(1, 2)  # (b, num_heads, T, head_dim)
        values = self.W_value(x).view(shape).transpose(1, 2)  # (b, num_heads, T, head_dim)
        cached = 0
        if use_cache and self.cache_k is not None:
            cached = self.cache_k.shape[2]
            keys = torch.cat([self.cache_k, keys], dim=2)  # (b, num_heads, C + T, head_dim)
            values = torch.cat([self.cache_v, values], dim=2)  # (b, num_heads, C + T, head_dim)
        query = torch.arange(num_tokens, device=x.device)[:, None] + cached  # (T, 1): indices among the keys
        key = torch.arange(cached + num_tokens, device=x.device)[None, :]  # (1, C + T)
        hidden = (key > query) | (key <= query - self.window)  # (T, C + T)
        attn_scores = queries @ keys.transpose(2, 3)  # (b, num_heads, T, C + T)
        attn_scores = attn_scores.masked_fill(hidden, float("-inf"))
        attn_weights = torch.softmax(attn_scores / self.head_dim**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        context_vec = (attn_weights @ values).transpose(1, 2)  # (b, T, num_heads, head_dim)
        context_vec = context_vec.reshape(b, num_tokens, self.d_out)  # (b, T, d_out)
        if use_cache:  # keep the last `window` tokens only
            self.cache_k = keys[:, :, -self.window:].detach()  # (b, num_heads, min(window, C + T), head_dim)
            self.cache_v = values[:, :, -self.window:].detach()
        return self.out_proj(context_vec)
        # END SOLUTION

    def reset_cache(self):
        # BEGIN SOLUTION
        self.cache_k, self.cache_v = None, None
        # END SOLUTION
