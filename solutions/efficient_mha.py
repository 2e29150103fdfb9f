"""Section 08: efficient multi-head attention (one fused projection, PyTorch's fused attention)."""
import torch
from torch import nn
from torch.nn import functional as F

from solutions.multihead import MultiHeadAttention  # provided to students in a locked cell  # noqa: F401


# %% MultiHeadAttentionFused
class MultiHeadAttentionFused(nn.Module):
    """Causal multi-head attention with one projection for queries, keys and values.

    Dimensions: b = batch size, num_tokens = number of tokens,
    head_dim = d_out // num_heads. Mask convention: True means "hidden / not allowed".

    Create the layers in exactly this order (seeded outputs depend on it):
        1. W_qkv    = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        2. out_proj = nn.Linear(d_out, d_out)
        3. dropout  = nn.Dropout(dropout)
    A causal mask buffer may follow. Raise ValueError if d_out % num_heads != 0.

    Column order of W_qkv's output (the book's and nn.MultiheadAttention's):
    columns [0, d_out) are the queries, [d_out, 2*d_out) the keys,
    [2*d_out, 3*d_out) the values; inside each block head h holds
    [h*head_dim, (h+1)*head_dim), as in notebook 06.

    forward(x): x is (b, num_tokens, d_in); returns (b, num_tokens, d_out).

    load_from(mha): copy an 06 MultiHeadAttention's W_query, W_key, W_value
    (weights, and biases where this module has them) into W_qkv, and its
    out_proj into out_proj, without recording the copy in autograd; returns self.

    Hints:
        1. One call self.W_qkv(x) gives (b, num_tokens, 3 * d_out).
        2. view it as (b, num_tokens, 3, num_heads, head_dim), then permute to
           (3, b, num_heads, num_tokens, head_dim): index 0, 1, 2 are queries, keys, values.
        3. The rest is notebook 06: scores / head_dim ** 0.5, causal mask, softmax,
           dropout on the weights, combine heads, out_proj.
        4. load_from: torch.cat the three weights along dim 0 (queries first), inside torch.no_grad().
    """

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        # BEGIN SOLUTION
        if d_out % num_heads != 0:
            raise ValueError(f"d_out={d_out} is not divisible by num_heads={num_heads}")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())
        # END SOLUTION

    def forward(self, x):
        # BEGIN SOLUTION
        b, num_tokens, d_in = x.shape
        qkv = self.W_qkv(x)  # (b, num_tokens, 3 * d_out)
        qkv = qkv.view(b, num_tokens, 3, self.num_heads, self.head_dim)  # (b, num_tokens, 3, num_heads, head_dim)
        queries, keys, values = qkv.permute(2, 0, 3, 1, 4)  # each (b, num_heads, num_tokens, head_dim)
        attn_scores = queries @ keys.transpose(2, 3)  # (b, num_heads, num_tokens, num_tokens)
        attn_scores = attn_scores.masked_fill(self.mask[:num_tokens, :num_tokens], float("-inf"))
        attn_weights = torch.softmax(attn_scores / self.head_dim**0.5, dim=-1)
        attn_weights = self.dropout(attn_weights)
        context_vec = (attn_weights @ values).transpose(1, 2)  # (b, num_tokens, num_heads, head_dim)
        context_vec = context_vec.reshape(b, num_tokens, self.d_out)  # (b, num_tokens, d_out)
        return self.out_proj(context_vec)
        # END SOLUTION

    def load_from(self, mha):
        # BEGIN SOLUTION
        layers = (mha.W_query, mha.W_key, mha.W_value)
        with torch.no_grad():
            self.W_qkv.weight.copy_(torch.cat([layer.weight for layer in layers]))  # (3 * d_out, d_in)
            if self.W_qkv.bias is not None:
                self.W_qkv.bias.copy_(torch.cat([layer.bias for layer in layers]))  # (3 * d_out,)
        self.out_proj.load_state_dict(mha.out_proj.state_dict())  # copies into out_proj's own parameters
        return self
        # END SOLUTION


# %% MultiHeadAttentionSDPA
class MultiHeadAttentionSDPA(nn.Module):
    """MultiHeadAttentionFused, its attention computed by F.scaled_dot_product_attention.

    Dimensions: b = batch size, num_tokens = number of tokens,
    head_dim = d_out // num_heads.

    Create the layers in exactly this order (seeded outputs depend on it):
        1. W_qkv    = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        2. out_proj = nn.Linear(d_out, d_out)
    and keep the dropout probability as a number (self.dropout = dropout).
    Raise ValueError if d_out % num_heads != 0. W_qkv's columns are queries,
    keys, values, as in MultiHeadAttentionFused.

    forward(x): x is (b, num_tokens, d_in); returns (b, num_tokens, d_out).

    Hints:
        1. Split W_qkv's output into (b, num_heads, num_tokens, head_dim) queries, keys and values.
        2. F.scaled_dot_product_attention(queries, keys, values, dropout_p=..., is_causal=True)
           scales by head_dim ** 0.5 and applies the causal mask itself: build no mask.
        3. The function does not know the module's mode: pass dropout_p = self.dropout only
           when self.training, 0.0 otherwise.
        4. Combine heads, then out_proj.
    """

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        # BEGIN SOLUTION
        if d_out % num_heads != 0:
            raise ValueError(f"d_out={d_out} is not divisible by num_heads={num_heads}")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = dropout
        # END SOLUTION

    def forward(self, x):
        # BEGIN SOLUTION
        b, num_tokens, d_in = x.shape
        qkv = self.W_qkv(x).view(b, num_tokens, 3, self.num_heads, self.head_dim)
        queries, keys, values = qkv.permute(2, 0, 3, 1, 4)  # each (b, num_heads, num_tokens, head_dim)
        dropout_p = self.dropout if self.training else 0.0
        context_vec = F.scaled_dot_product_attention(
            queries, keys, values, dropout_p=dropout_p, is_causal=True
        )  # (b, num_heads, num_tokens, head_dim)
        context_vec = context_vec.transpose(1, 2).reshape(b, num_tokens, self.d_out)  # (b, num_tokens, d_out)
        return self.out_proj(context_vec)
        # END SOLUTION
