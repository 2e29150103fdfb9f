"""Section 10: grouped-query attention (query heads sharing key and value heads), with a KV cache of the groups."""
import torch
from torch import nn

from solutions.multihead import MultiHeadAttention  # provided to students in a locked cell  # noqa: F401


# %% GroupedQueryAttention
class GroupedQueryAttention(nn.Module):
    """Causal attention whose num_heads query heads share num_kv_groups key and value heads.

    Dimensions: b = batch size, num_tokens = number of tokens, head_dim = d_out // num_heads,
    group_size = num_heads // num_kv_groups. Mask convention: True means "hidden / not allowed".

    Create the layers in exactly this order (seeded outputs depend on it):
        1. W_query  = nn.Linear(d_in, d_out, bias=qkv_bias)
        2. W_key    = nn.Linear(d_in, num_kv_groups * head_dim, bias=qkv_bias)
        3. W_value  = nn.Linear(d_in, num_kv_groups * head_dim, bias=qkv_bias)
        4. out_proj = nn.Linear(d_out, d_out)
        5. dropout  = nn.Dropout(dropout)
    A causal mask buffer may follow. Raise ValueError, naming both numbers, if num_heads % num_kv_groups != 0
    or d_out % num_heads != 0.

    Which query heads share: key/value head g serves the group_size consecutive query heads
    [g * group_size, (g + 1) * group_size), so keys and values are repeated with
    repeat_interleave(group_size, dim=1) on the head dim of (b, num_kv_groups, num_tokens, head_dim).

    forward(x, use_cache=False): x is (b, num_tokens, d_in); returns (b, num_tokens, d_out).
        With use_cache=True the keys and values of x are appended to the cache, kept in the buffers
        cache_k and cache_v of shape (b, num_kv_groups, cached tokens, head_dim) (the groups only, never
        repeated), and the queries of x attend to every cached token and causally to their own.
    reset_cache(): empties the cache (cache_k = cache_v = None).

    Hints:
        1. Queries split into (b, num_heads, num_tokens, head_dim), keys and values into
           (b, num_kv_groups, num_tokens, head_dim): view, then .transpose(1, 2).
        2. Store keys and values in the cache before repeating them.
        3. Scale by head_dim ** 0.5, as in notebook 06.
        4. With T_new new tokens and T_all tokens in the cache, query i (at position T_all - T_new + i)
           may see keys 0 .. T_all - T_new + i.
    """

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        # BEGIN SOLUTION
        if num_heads % num_kv_groups != 0:
            raise ValueError(f"num_heads={num_heads} is not divisible by num_kv_groups={num_kv_groups}")
        if d_out % num_heads != 0:
            raise ValueError(f"d_out={d_out} is not divisible by num_heads={num_heads}")
        self.d_out = d_out
        self.num_heads = num_heads
        self.num_kv_groups = num_kv_groups
        self.head_dim = d_out // num_heads
        self.group_size = num_heads // num_kv_groups
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)
        # END SOLUTION

    def forward(self, x, use_cache=False):
        # BEGIN SOLUTION
        b, num_tokens, d_in = x.shape
        queries = self.W_query(x).view(b, num_tokens, self.num_heads, self.head_dim).transpose(1, 2)
        kv_shape = (b, num_tokens, self.num_kv_groups, self.head_dim)
        keys = self.W_key(x).view(kv_shape).transpose(1, 2)  # (b, num_kv_groups, num_tokens, head_dim)
        values = self.W_value(x).view(kv_shape).transpose(1, 2)  # (b, num_kv_groups, num_tokens, head_dim)
        if use_cache:
            if self.cache_k is not None:
                keys = torch.cat([self.cache_k, keys], dim=2)  # (b, num_kv_groups, num_all, head_dim)
                values = torch.cat([self.cache_v, values], dim=2)
            self.cache_k, self.cache_v = keys, values  # the groups only, never repeated
        num_all = keys.shape[2]
        keys = keys.repeat_interleave(self.group_size, dim=1)  # (b, num_heads, num_all, head_dim)
        values = values.repeat_interleave(self.group_size, dim=1)  # (b, num_heads, num_all, head_dim)
        attn_scores = queries @ keys.transpose(2, 3)  # (b, num_heads, num_tokens, num_all)
        hidden = torch.ones(num_tokens, num_all, dtype=torch.bool, device=x.device).triu(num_all - num_tokens + 1)
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
