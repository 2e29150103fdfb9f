"""Section 09: the KV cache (keys and values of earlier tokens kept for generation)."""
import torch
from torch import nn


# %% MultiHeadAttentionCached
class MultiHeadAttentionCached(nn.Module):
    """Notebook 06's causal multi-head attention with a cache of keys and values for decoding.

    Dimensions: b = batch size, num_tokens = tokens of this call, num_cached = tokens the cache
    held before it, head_dim = d_out // num_heads. Mask convention: True means "hidden / not allowed".

    Create the layers in exactly this order (seeded outputs depend on it), as notebook 06 does:
        1. W_query  = nn.Linear(d_in, d_out, bias=qkv_bias)
        2. W_key    = nn.Linear(d_in, d_out, bias=qkv_bias)
        3. W_value  = nn.Linear(d_in, d_out, bias=qkv_bias)
        4. out_proj = nn.Linear(d_out, d_out)
        5. dropout  = nn.Dropout(dropout)
    then the buffers: the causal mask, and cache_k, cache_v registered empty (None) and
    non-persistent (a cache is no weight: state_dict leaves it out).
    Raise ValueError if d_out % num_heads != 0.

    forward(x, use_cache=False): x is (b, num_tokens, d_in); returns (b, num_tokens, d_out).
        use_cache=False: notebook 06's forward; the cache is neither read nor written.
        use_cache=True: the keys and values of x, split into heads, are appended to the cache
        along the token dim, and x's queries attend to every cached key and to the new keys
        up to their own position (the causal mask offset by num_cached). Raise ValueError when
        num_cached + num_tokens > context_length.

    reset_cache(): empty the cache (cache_k and cache_v back to None), before a new sequence.

    Hints:
        1. Project x only (never the cached tokens again), then split into heads:
           (b, num_tokens, d_out) -> (b, num_heads, num_tokens, head_dim).
        2. The cache keeps that layout: torch.cat([self.cache_k, keys], dim=2).
        3. The new queries are positions num_cached ... num_cached + num_tokens - 1: take the rows
           mask[num_cached:num_cached + num_tokens] and the columns :num_cached + num_tokens.
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
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool(), persistent=False
        )
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)
        # END SOLUTION

    def forward(self, x, use_cache=False):
        # BEGIN SOLUTION
        b, num_tokens, d_in = x.shape
        shape = (b, num_tokens, self.num_heads, self.head_dim)
        queries = self.W_query(x).view(shape).transpose(1, 2)  # (b, num_heads, num_tokens, head_dim)
        keys = self.W_key(x).view(shape).transpose(1, 2)  # (b, num_heads, num_tokens, head_dim)
        values = self.W_value(x).view(shape).transpose(1, 2)  # (b, num_heads, num_tokens, head_dim)
        num_cached = 0
        if use_cache and self.cache_k is not None:
            num_cached = self.cache_k.shape[2]
        if num_cached + num_tokens > self.context_length:
            raise ValueError(
                f"{num_cached} cached + {num_tokens} new tokens exceed context_length={self.context_length}"
            )
        if use_cache:
            if self.cache_k is not None:
                keys = torch.cat([self.cache_k, keys], dim=2)  # (b, num_heads, num_cached + num_tokens, head_dim)
                values = torch.cat([self.cache_v, values], dim=2)  # (b, num_heads, num_cached + num_tokens, head_dim)
            self.cache_k, self.cache_v = keys, values
        attn_scores = queries @ keys.transpose(2, 3)  # (b, num_heads, num_tokens, num_cached + num_tokens)
        hidden = self.mask[num_cached:num_cached + num_tokens, :num_cached + num_tokens]
        attn_scores = attn_scores.masked_fill(hidden, float("-inf"))
        attn_weights = torch.softmax(attn_scores / self.head_dim**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        context_vec = (attn_weights @ values).transpose(1, 2)  # (b, num_tokens, num_heads, head_dim)
        context_vec = context_vec.reshape(b, num_tokens, self.d_out)  # (b, num_tokens, d_out)
        return self.out_proj(context_vec)
        # END SOLUTION

    def reset_cache(self):
        # BEGIN SOLUTION
        self.cache_k, self.cache_v = None, None
        # END SOLUTION


# %% kv_cache_bytes
def kv_cache_bytes(num_layers, num_kv_heads, head_dim, context_length, bytes_per_value):
    """The memory a full KV cache takes for one sequence.

    Every layer keeps, for each of its num_kv_heads heads and each of the context_length
    tokens, one key and one value of head_dim numbers, each bytes_per_value bytes
    (4 for float32, 2 for float16 / bfloat16).

    Args:
        num_layers, num_kv_heads, head_dim, context_length: positive ints.
        bytes_per_value: a positive number.

    Returns:
        The number of bytes (an int where every argument is one).

    Raises:
        ValueError naming the first argument that is not positive.

    Hints:
        1. Keys and values: a factor of 2.
        2. Each layer has its own cache.
    """
    # BEGIN SOLUTION
    arguments = {"num_layers": num_layers, "num_kv_heads": num_kv_heads, "head_dim": head_dim,
                 "context_length": context_length, "bytes_per_value": bytes_per_value}
    for name, value in arguments.items():
        if not value > 0:
            raise ValueError(f"{name}={value} must be positive")
    return 2 * num_layers * num_kv_heads * head_dim * context_length * bytes_per_value
    # END SOLUTION
