"""Copies paraphrased by hand, as a chatbot asked "make this look different but do the same" writes them.

similarity_rewrites.py rewrites by rules; these are written out, of hand B's
solutions (similarity_corpus.py), in the two longest sections B's style makes
hardest to see through: its generator of three projections written out, the
helper `_scale` inlined, `swapaxes` as `.mT` or `transpose`, `torch.matmul` as
`@`, `math.sqrt` as `** 0.5`, the masks spelled with `masked_fill`, loops and
`setattr` unrolled, names and docstrings of its own, and two statements
reordered. tests/test_similarity_rewrites.py puts each in the paraphrase class
in place of B's copy.
"""
from __future__ import annotations

BY_HAND = {
    "03_trainable_qkv": '''
# %% project_qkv
def project_qkv(x, W_query, W_key, W_value):
    """Project the inputs into queries, keys and values with the three weight matrices."""
    query_states = x @ W_query
    key_states = x @ W_key
    value_states = x @ W_value
    return query_states, key_states, value_states

# %% scaled_dot_product_attention
def scaled_dot_product_attention(queries, keys, values):
    """Scaled dot-product attention; returns the context and the attention weights."""
    head_width = keys.shape[-1]
    similarity_logits = queries @ keys.mT
    attention_probs = (similarity_logits / head_width ** 0.5).softmax(dim=-1)
    context = attention_probs @ values
    return context, attention_probs

# %% SelfAttention_v1
class SelfAttention_v1(nn.Module):
    """Self-attention with raw weight matrices (nn.Parameter)."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        keys_matrix = x @ self.W_key
        queries_matrix = x @ self.W_query
        values_matrix = x @ self.W_value
        scale = keys_matrix.shape[-1] ** 0.5
        weights = torch.softmax(queries_matrix @ keys_matrix.transpose(-2, -1) / scale, dim=-1)
        return weights @ values_matrix

# %% SelfAttention_v2
class SelfAttention_v2(nn.Module):
    """Self-attention with nn.Linear projections."""

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        projected_k = self.W_key(x)
        projected_q = self.W_query(x)
        scores = projected_q @ projected_k.mT / projected_k.shape[-1] ** 0.5
        return F.softmax(scores, dim=-1) @ self.W_value(x)

# %% copy_v2_weights_into_v1
def copy_v2_weights_into_v1(v1, v2):
    """Copy the Linear layers' weights of v2 into the matrices of v1 (transposed)."""
    with torch.no_grad():
        v1.W_query.data = v2.W_query.weight.detach().t().clone()
        v1.W_key.data = v2.W_key.weight.detach().t().clone()
        v1.W_value.data = v2.W_value.weight.detach().t().clone()
''',
    "05_padding_mask": '''
# %% key_padding_mask
def key_padding_mask(seq_lens, max_len):
    """True where a position is padding: index >= the sentence's true length."""
    if not torch.is_tensor(seq_lens):
        seq_lens = torch.tensor(list(seq_lens))
    lengths = seq_lens
    out_of_range = (lengths < 1) | (lengths > max_len)
    if bool(out_of_range.any()):
        raise ValueError("each length has to lie in [1, max_len]")
    positions = torch.arange(max_len).expand(len(lengths), max_len)
    return positions >= lengths.unsqueeze(dim=1)

# %% mask_padded_scores
def mask_padded_scores(scores, key_padding_mask):
    """Put -inf on the padded keys of every query row."""
    return scores.masked_fill(key_padding_mask.unsqueeze(dim=1), float("-inf"))

# %% padded_attention
def padded_attention(queries, keys, values, key_padding_mask):
    """Attention that never looks at padded keys."""
    dim = queries.shape[-1]
    raw_scores = queries @ keys.transpose(1, 2) / dim ** 0.5
    weights = F.softmax(mask_padded_scores(raw_scores, key_padding_mask), dim=-1)
    return weights @ values, weights

# %% PaddedSelfAttention
class PaddedSelfAttention(nn.Module):
    """Self-attention with an optional key padding mask and attention mask."""

    def __init__(self, embed_dim):
        super().__init__()
        self.W_q = nn.Linear(embed_dim, embed_dim, bias=False)
        self.W_k = nn.Linear(embed_dim, embed_dim, bias=False)
        self.W_v = nn.Linear(embed_dim, embed_dim, bias=False)
        self.W_out = nn.Linear(embed_dim, embed_dim, bias=False)

    def forward(self, q, k, v, key_padding_mask=None, attn_mask=None):
        keys_p = self.W_k(k)
        queries_p = self.W_q(q)
        values_p = self.W_v(v)
        scores = queries_p @ keys_p.transpose(1, 2) / queries_p.shape[-1] ** 0.5
        if attn_mask is not None:
            scores = scores.masked_fill(attn_mask, float("-inf"))
        if key_padding_mask is not None:
            scores = mask_padded_scores(scores, key_padding_mask)
        attention = F.softmax(scores, dim=-1)
        return self.W_out(attention @ values_p), attention
''',
}
