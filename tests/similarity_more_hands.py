"""Two more independent ways of solving each section, by two more hands (families E and F).

E writes as a careful beginner does: one step a line, names for everything, loops
where the exercise allows them, `nn.Module.__init__(self)`, keyword arguments
spelled out, messages built with `+`. F writes tersely: method chains, `.mT`,
`masked_fill`, generators and `setattr` loops, f-strings. Each is correct (it
passes the hidden checks) and neither was written from the reference or the other
families. Laid out as similarity_corpus.py: one `# %% <graded name>` block per
graded name.
"""

FAMILY_E = {
    "01_scores": '''
# %% dot_scores
def dot_scores(query, inputs):
    weighted = inputs * query.unsqueeze(0)
    scores = weighted.sum(dim=-1)
    return scores


# %% score_matrix
def score_matrix(inputs):
    keys_t = torch.transpose(inputs, inputs.dim() - 2, inputs.dim() - 1)
    scores = torch.matmul(inputs, keys_t)
    return scores


# %% AdditiveScore
class AdditiveScore(nn.Module):
    def __init__(self, hidden_size):
        nn.Module.__init__(self)
        d = hidden_size
        self.W_q = nn.Linear(in_features=d, out_features=d, bias=False)
        self.W_k = nn.Linear(in_features=d, out_features=d, bias=False)
        self.w = nn.Linear(in_features=d, out_features=1, bias=False)
        self.q = nn.Parameter(torch.randn(1, d))

    def forward(self, X):
        query_part = self.W_q(self.q)
        key_part = self.W_k(X)
        hidden = torch.tanh(key_part + query_part.unsqueeze(1))
        energies = self.w(hidden)
        batch_size, length, _ = energies.shape
        return energies.reshape(batch_size, length)


# %% DotProductScore
class DotProductScore(nn.Module):
    def __init__(self, hidden_size):
        nn.Module.__init__(self)
        self.q = nn.Parameter(torch.randn(hidden_size, 1))

    def forward(self, X):
        flat_query = self.q.flatten()
        products = X * flat_query
        return products.sum(dim=2)


# %% SelfAttentionScore
class SelfAttentionScore(nn.Module):
    def __init__(self, hidden_size):
        nn.Module.__init__(self)
        self.W_q = nn.Linear(in_features=hidden_size, out_features=hidden_size, bias=False)
        self.W_k = nn.Linear(in_features=hidden_size, out_features=hidden_size, bias=False)

    def forward(self, X):
        queries = self.W_q(X)
        keys = self.W_k(X)
        return torch.bmm(queries, torch.transpose(keys, 1, 2))
''',
    "02_softmax": '''
# %% normalize_by_sum
def normalize_by_sum(scores, dim=-1):
    row_total = scores.sum(dim=dim, keepdim=True)
    result = scores / row_total
    return result


# %% softmax_naive
def softmax_naive(x, dim=-1):
    exponentials = torch.exp(x)
    result = normalize_by_sum(exponentials, dim=dim)
    return result


# %% softmax
def softmax(x, dim=-1):
    peak = torch.amax(x, dim=dim, keepdim=True)
    peak = torch.where(torch.isfinite(peak), peak, torch.zeros_like(peak))
    shifted = x - peak
    exponentials = torch.exp(shifted)
    total = exponentials.sum(dim=dim, keepdim=True)
    return exponentials / total


# %% context_vectors
def context_vectors(weights, inputs):
    if weights.dim() == 1:
        return (weights.unsqueeze(-1) * inputs).sum(dim=0)
    return torch.matmul(weights, inputs)


# %% simple_self_attention
def simple_self_attention(inputs):
    all_scores = score_matrix(inputs)
    all_weights = softmax(all_scores, dim=-1)
    result = context_vectors(all_weights, inputs)
    return result
''',
    "03_trainable_qkv": '''
# %% project_qkv
def project_qkv(x, W_query, W_key, W_value):
    projections = []
    for weight in [W_query, W_key, W_value]:
        projections.append(torch.matmul(x, weight))
    queries, keys, values = projections
    return queries, keys, values


# %% scaled_dot_product_attention
import math

import torch.nn.functional as F


def scaled_dot_product_attention(queries, keys, values):
    d_k = keys.size(-1)
    keys_t = keys.transpose(-1, -2)
    raw = torch.matmul(queries, keys_t)
    weights = F.softmax(raw / math.sqrt(d_k), dim=-1)
    context = torch.matmul(weights, values)
    return context, weights


# %% SelfAttention_v1
class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        nn.Module.__init__(self)
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        queries = torch.matmul(x, self.W_query)
        keys = torch.matmul(x, self.W_key)
        values = torch.matmul(x, self.W_value)
        scores = torch.matmul(queries, keys.T)
        weights = F.softmax(scores / math.sqrt(keys.size(-1)), dim=-1)
        return torch.matmul(weights, values)


# %% SelfAttention_v2
class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        nn.Module.__init__(self)
        self.W_query = nn.Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.W_key = nn.Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.W_value = nn.Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)

    def forward(self, x):
        queries = self.W_query(x)
        keys = self.W_key(x)
        values = self.W_value(x)
        scores = torch.matmul(queries, keys.transpose(-1, -2))
        weights = F.softmax(scores / math.sqrt(keys.size(-1)), dim=-1)
        return torch.matmul(weights, values)


# %% copy_v2_weights_into_v1
def copy_v2_weights_into_v1(v1, v2):
    pairs = [(v1.W_query, v2.W_query), (v1.W_key, v2.W_key), (v1.W_value, v2.W_value)]
    with torch.no_grad():
        for target, source in pairs:
            target.copy_(source.weight.T)
''',
    "04_causal_mask": '''
# %% causal_mask
import math


def causal_mask(num_tokens, device=None):
    ones = torch.ones(num_tokens, num_tokens, dtype=torch.bool, device=device)
    return torch.triu(ones, diagonal=1)


# %% mask_and_renormalize
def mask_and_renormalize(attn_weights):
    size = attn_weights.shape[-1]
    allowed = torch.tril(torch.ones(size, size, device=attn_weights.device, dtype=attn_weights.dtype))
    masked = attn_weights * allowed
    row_sums = masked.sum(dim=-1, keepdim=True)
    return masked / row_sums


# %% causal_attention_weights
def causal_attention_weights(attn_scores, d_k):
    size = attn_scores.shape[-1]
    hidden = causal_mask(size, device=attn_scores.device)
    scaled = attn_scores / math.sqrt(d_k)
    scaled = scaled.masked_fill(hidden, float("-inf"))
    return torch.softmax(scaled, dim=-1)


# %% CausalAttention
class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        nn.Module.__init__(self)
        self.W_query = nn.Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.W_key = nn.Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.W_value = nn.Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(p=dropout)
        self.context_length = context_length
        self.register_buffer("mask", causal_mask(context_length))

    def forward(self, x):
        batch_size, num_tokens, _ = x.shape
        if num_tokens > self.context_length:
            message = "got " + str(num_tokens) + " tokens but context_length is " + str(self.context_length)
            raise ValueError(message)
        queries = self.W_query(x)
        keys = self.W_key(x)
        values = self.W_value(x)
        scores = torch.matmul(queries, keys.transpose(1, 2))
        scores = scores.masked_fill(self.mask[:num_tokens, :num_tokens], float("-inf"))
        weights = torch.softmax(scores / math.sqrt(keys.shape[-1]), dim=-1)
        weights = self.dropout(weights)
        return torch.matmul(weights, values)
''',
    "05_padding_mask": '''
# %% key_padding_mask
import math


def key_padding_mask(seq_lens, max_len):
    lengths = [int(n) for n in seq_lens]
    for index, length in enumerate(lengths):
        if length < 1 or length > max_len:
            raise ValueError("seq_lens[" + str(index) + "] = " + str(length) + " is outside 1.." + str(max_len))
    device = seq_lens.device if torch.is_tensor(seq_lens) else None
    positions = torch.arange(max_len, device=device).unsqueeze(0)
    limits = torch.tensor(lengths, device=device).unsqueeze(1)
    return positions >= limits


# %% mask_padded_scores
def mask_padded_scores(scores, key_padding_mask):
    columns = key_padding_mask.unsqueeze(-2)
    return scores.masked_fill(columns, -1e9)


# %% padded_attention
def padded_attention(queries, keys, values, key_padding_mask):
    width = queries.shape[-1]
    scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(width)
    scores = mask_padded_scores(scores, key_padding_mask)
    weights = torch.softmax(scores, dim=-1)
    out = torch.bmm(weights, values)
    return out, weights


# %% PaddedSelfAttention
class PaddedSelfAttention(nn.Module):
    def __init__(self, embed_dim):
        nn.Module.__init__(self)
        self.W_q = nn.Linear(in_features=embed_dim, out_features=embed_dim, bias=False)
        self.W_k = nn.Linear(in_features=embed_dim, out_features=embed_dim, bias=False)
        self.W_v = nn.Linear(in_features=embed_dim, out_features=embed_dim, bias=False)
        self.W_out = nn.Linear(in_features=embed_dim, out_features=embed_dim, bias=False)
        self.embed_dim = embed_dim

    def forward(self, q, k, v, key_padding_mask=None, attn_mask=None):
        queries = self.W_q(q)
        keys = self.W_k(k)
        values = self.W_v(v)
        scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(self.embed_dim)
        if attn_mask is not None:
            if attn_mask.dim() == 2:
                attn_mask = attn_mask.unsqueeze(0)
            scores = scores.masked_fill(attn_mask, -1e9)
        if key_padding_mask is not None:
            scores = mask_padded_scores(scores, key_padding_mask)
        weights = torch.softmax(scores, dim=-1)
        out = self.W_out(torch.bmm(weights, values))
        return out, weights
''',
    "06_multihead": '''
# %% split_heads
import math


def split_heads(x, num_heads):
    batch_size, num_tokens, width = x.shape
    if width % num_heads != 0:
        raise ValueError("the width " + str(width) + " cannot be split into " + str(num_heads) + " heads")
    head_dim = width // num_heads
    x = x.reshape(batch_size, num_tokens, num_heads, head_dim)
    return x.transpose(1, 2)


# %% combine_heads
def combine_heads(x):
    batch_size, num_heads, num_tokens, head_dim = x.shape
    x = x.transpose(1, 2)
    return x.reshape(batch_size, num_tokens, num_heads * head_dim)


# %% MultiHeadAttentionWrapper
class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        nn.Module.__init__(self)
        self.heads = nn.ModuleList()
        for _ in range(num_heads):
            self.heads.append(CausalAttention(d_in, d_out, context_length, dropout, qkv_bias=qkv_bias))

    def forward(self, x):
        results = []
        for head in self.heads:
            results.append(head(x))
        return torch.cat(results, dim=-1)


# %% MultiHeadAttention
class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        nn.Module.__init__(self)
        if d_out % num_heads != 0:
            raise ValueError("d_out = " + str(d_out) + " is not a multiple of num_heads = " + str(num_heads))
        self.num_heads = num_heads
        self.context_length = context_length
        self.W_query = nn.Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.W_key = nn.Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.W_value = nn.Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(in_features=d_out, out_features=d_out)
        self.dropout = nn.Dropout(p=dropout)
        causal = torch.triu(torch.ones(context_length, context_length, dtype=torch.bool), diagonal=1)
        self.register_buffer("mask", causal)

    def forward(self, x, key_padding_mask=None):
        batch_size, num_tokens, _ = x.shape
        if num_tokens > self.context_length:
            raise ValueError("got " + str(num_tokens) + " tokens but context_length is " + str(self.context_length))
        queries = split_heads(self.W_query(x), self.num_heads)
        keys = split_heads(self.W_key(x), self.num_heads)
        values = split_heads(self.W_value(x), self.num_heads)
        scores = torch.matmul(queries, keys.transpose(2, 3)) / math.sqrt(keys.shape[-1])
        hidden = self.mask[:num_tokens, :num_tokens]
        if key_padding_mask is not None:
            hidden = hidden | key_padding_mask.unsqueeze(1).unsqueeze(2)
        scores = scores.masked_fill(hidden, float("-inf"))
        weights = self.dropout(torch.softmax(scores, dim=-1))
        context = torch.matmul(weights, values)
        return self.out_proj(combine_heads(context))
''',
    "07_positional_encoding": '''
# %% sinusoidal_encoding
def sinusoidal_encoding(num_positions, d_model, start=0):
    table = []
    for position in range(start, start + num_positions):
        row = []
        for column in range(d_model):
            pair_index = column - column % 2
            angle = position / math.pow(10000, pair_index / d_model)
            if column % 2 == 0:
                row.append(math.sin(angle))
            else:
                row.append(math.cos(angle))
        table.append(row)
    return torch.tensor(table, dtype=torch.float32)
''',
}

FAMILY_F = {
    "01_scores": '''
# %% dot_scores
def dot_scores(query, inputs):
    return torch.mv(inputs, query)


# %% score_matrix
def score_matrix(inputs):
    return inputs.matmul(inputs.mT)


# %% AdditiveScore
class AdditiveScore(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        linear = lambda n_out: nn.Linear(hidden_size, n_out, bias=False)
        self.W_q, self.W_k, self.w = linear(hidden_size), linear(hidden_size), linear(1)
        self.q = nn.Parameter(torch.randn(1, hidden_size))

    def forward(self, X):
        return self.w((self.W_k(X) + self.W_q(self.q)).tanh()).flatten(start_dim=1)


# %% DotProductScore
class DotProductScore(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.q = nn.Parameter(torch.randn(hidden_size, 1))

    def forward(self, X):
        return X.matmul(self.q).flatten(start_dim=1)


# %% SelfAttentionScore
class SelfAttentionScore(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.W_q, self.W_k = (nn.Linear(hidden_size, hidden_size, bias=False) for _ in "qk")

    def forward(self, X):
        return self.W_q(X).matmul(self.W_k(X).mT)
''',
    "02_softmax": '''
# %% normalize_by_sum
def normalize_by_sum(scores, dim=-1):
    return scores.div(scores.sum(dim, keepdim=True))


# %% softmax_naive
def softmax_naive(x, dim=-1):
    return x.exp().div(x.exp().sum(dim=dim, keepdim=True))


# %% softmax
def softmax(x, dim=-1):
    stable = x - x.detach().amax(dim=dim, keepdim=True)
    return softmax_naive(stable, dim)


# %% context_vectors
def context_vectors(weights, inputs):
    return weights.matmul(inputs)


# %% simple_self_attention
def simple_self_attention(inputs):
    return softmax(score_matrix(inputs)).matmul(inputs)
''',
    "03_trainable_qkv": '''
# %% project_qkv
def project_qkv(x, W_query, W_key, W_value):
    fused = x.matmul(torch.cat([W_query, W_key, W_value], dim=-1))
    return fused.split(W_query.shape[-1], dim=-1)


# %% scaled_dot_product_attention
def scaled_dot_product_attention(queries, keys, values):
    scores = queries.matmul(keys.mT).div(keys.shape[-1] ** 0.5)
    weights = scores.softmax(dim=-1)
    return weights.matmul(values), weights


# %% SelfAttention_v1
class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        for name in ["W_query", "W_key", "W_value"]:
            self.register_parameter(name, nn.Parameter(torch.rand(d_in, d_out)))

    def forward(self, x):
        q, k, v = (x.matmul(w) for w in self.parameters())
        return q.matmul(k.mT).div(k.shape[-1] ** 0.5).softmax(-1).matmul(v)


# %% SelfAttention_v2
class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        for name in ["W_query", "W_key", "W_value"]:
            setattr(self, name, nn.Linear(d_in, d_out, qkv_bias))

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        return q.matmul(k.mT).div(k.shape[-1] ** 0.5).softmax(-1).matmul(v)


# %% copy_v2_weights_into_v1
def copy_v2_weights_into_v1(v1, v2):
    for name in ["W_query", "W_key", "W_value"]:
        setattr(v1, name, nn.Parameter(getattr(v2, name).weight.detach().T))
''',
    "04_causal_mask": '''
# %% causal_mask
def causal_mask(num_tokens, device=None):
    return torch.ones(num_tokens, num_tokens, device=device).triu(diagonal=1) == 1


# %% mask_and_renormalize
def mask_and_renormalize(attn_weights):
    kept = attn_weights.masked_fill(causal_mask(attn_weights.shape[-1], attn_weights.device), 0.0)
    return kept / kept.sum(-1, keepdim=True)


# %% causal_attention_weights
def causal_attention_weights(attn_scores, d_k):
    hidden = causal_mask(attn_scores.shape[-1], attn_scores.device)
    return attn_scores.div(d_k ** 0.5).masked_fill(hidden, -torch.inf).softmax(-1)


# %% CausalAttention
class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        for name in ["W_query", "W_key", "W_value"]:
            setattr(self, name, nn.Linear(d_in, d_out, qkv_bias))
        self.dropout = nn.Dropout(dropout)
        self.context_length = context_length
        self.register_buffer("mask", causal_mask(context_length))

    def forward(self, x):
        n = x.shape[-2]
        if n > self.context_length:
            raise ValueError(f"{n} tokens exceed context_length={self.context_length}")
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = q.matmul(k.mT).masked_fill(self.mask[:n, :n], -torch.inf)
        return self.dropout(scores.div(k.shape[-1] ** 0.5).softmax(-1)).matmul(v)
''',
    "05_padding_mask": '''
# %% key_padding_mask
def key_padding_mask(seq_lens, max_len):
    lens = torch.as_tensor(seq_lens).long()
    bad = [int(n) for n in lens if not 1 <= int(n) <= max_len]
    if bad:
        raise ValueError(f"sequence length {bad[0]} is not between 1 and {max_len}")
    return torch.arange(max_len, device=lens.device).expand(len(lens), -1) >= lens[:, None]


# %% mask_padded_scores
def mask_padded_scores(scores, key_padding_mask):
    return scores.masked_fill(key_padding_mask[:, None, :], -torch.inf)


# %% padded_attention
def padded_attention(queries, keys, values, key_padding_mask):
    scores = queries.bmm(keys.mT).div(queries.shape[-1] ** 0.5)
    weights = mask_padded_scores(scores, key_padding_mask).softmax(-1)
    return weights.bmm(values), weights


# %% PaddedSelfAttention
class PaddedSelfAttention(nn.Module):
    def __init__(self, embed_dim):
        super().__init__()
        self.W_q, self.W_k, self.W_v, self.W_out = (nn.Linear(embed_dim, embed_dim, bias=False) for _ in range(4))

    def forward(self, q, k, v, key_padding_mask=None, attn_mask=None):
        scores = self.W_q(q).bmm(self.W_k(k).mT).div(q.shape[-1] ** 0.5)
        if attn_mask is not None:
            scores = scores.masked_fill(attn_mask, -torch.inf)
        if key_padding_mask is not None:
            scores = mask_padded_scores(scores, key_padding_mask)
        weights = scores.softmax(-1)
        return self.W_out(weights.bmm(self.W_v(v))), weights
''',
    "06_multihead": '''
# %% split_heads
def split_heads(x, num_heads):
    if x.shape[-1] % num_heads:
        raise ValueError(f"{x.shape[-1]} features do not split into {num_heads} heads")
    return x.unflatten(-1, (num_heads, -1)).transpose(1, 2)


# %% combine_heads
def combine_heads(x):
    return x.transpose(1, 2).flatten(start_dim=2)


# %% MultiHeadAttentionWrapper
class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        build = lambda _: CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
        self.heads = nn.ModuleList(map(build, range(num_heads)))

    def forward(self, x):
        return torch.dstack(tuple(head(x) for head in self.heads))


# %% MultiHeadAttention
class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError(f"d_out={d_out} is not divisible by num_heads={num_heads}")
        self.num_heads, self.context_length = num_heads, context_length
        for name in ["W_query", "W_key", "W_value"]:
            setattr(self, name, nn.Linear(d_in, d_out, qkv_bias))
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length).triu(1) == 1)

    def forward(self, x, key_padding_mask=None):
        n = x.shape[1]
        if n > self.context_length:
            raise ValueError(f"{n} tokens exceed context_length={self.context_length}")
        q, k, v = (split_heads(layer(x), self.num_heads) for layer in (self.W_query, self.W_key, self.W_value))
        hidden = self.mask[:n, :n]
        if key_padding_mask is not None:
            hidden = hidden.logical_or(key_padding_mask[:, None, None, :])
        scores = q.matmul(k.mT).div(k.shape[-1] ** 0.5).masked_fill(hidden, -torch.inf)
        return self.out_proj(combine_heads(self.dropout(scores.softmax(-1)).matmul(v)))
''',
    "07_positional_encoding": '''
# %% sinusoidal_encoding
def sinusoidal_encoding(num_positions, d_model, start=0):
    positions = torch.arange(start, start + num_positions, dtype=torch.float32)
    frequencies = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model))
    angles = torch.outer(positions, frequencies)
    table = torch.zeros(num_positions, d_model)
    table[:, 0::2] = torch.sin(angles)
    table[:, 1::2] = torch.cos(angles[:, : d_model // 2])
    return table
''',
}
