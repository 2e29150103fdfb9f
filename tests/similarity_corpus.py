"""Three independent ways of solving each section (families B, C, D), written differently from solutions/.

B and C were written to differ from the reference and from each other; D follows
the notebooks' hints as closely as the reference does. With the reference (A)
and similarity_more_hands.py's E and F, they are the six hands of the
similarity tests' classes (similarity_class.py). Each section is one source with
a `# %% <graded name>` block per graded name, as solutions/ is laid out.
"""

FAMILY_B = {
    "01_scores": '''
# %% dot_scores
def dot_scores(query, inputs):
    # one dot product per row
    return torch.matmul(inputs, query)


# %% score_matrix
def score_matrix(inputs):
    flipped = torch.swapaxes(inputs, -1, -2)
    return torch.matmul(inputs, flipped)


# %% AdditiveScore
class AdditiveScore(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        size = hidden_size
        self.W_q = nn.Linear(size, size, bias=False)
        self.W_k = nn.Linear(size, size, bias=False)
        self.w = nn.Linear(size, 1, bias=False)
        self.q = nn.Parameter(torch.randn(1, size))

    def forward(self, X):
        projected_keys = self.W_k(X)
        projected_query = self.W_q(self.q)
        energy = torch.tanh(projected_keys + projected_query)
        out = self.w(energy)
        return out[..., 0]


# %% DotProductScore
class DotProductScore(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.q = nn.Parameter(torch.randn(hidden_size, 1))

    def forward(self, X):
        scores = torch.matmul(X, self.q)
        return scores[..., 0]


# %% SelfAttentionScore
class SelfAttentionScore(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.W_q = nn.Linear(hidden_size, hidden_size, bias=False)
        self.W_k = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, X):
        return torch.matmul(self.W_q(X), torch.swapaxes(self.W_k(X), -1, -2))
''',
    "02_softmax": '''
# %% normalize_by_sum
def normalize_by_sum(scores, dim=-1):
    totals = torch.sum(scores, dim, keepdim=True)
    return torch.div(scores, totals)


# %% softmax_naive
def softmax_naive(x, dim=-1):
    return normalize_by_sum(x.exp(), dim)


# %% softmax
def _stable_exp(x, dim):
    biggest, _ = torch.max(x, dim, keepdim=True)
    return (x - biggest).exp()


def softmax(x, dim=-1):
    return normalize_by_sum(_stable_exp(x, dim), dim)


# %% context_vectors
def context_vectors(weights, inputs):
    return torch.matmul(weights, inputs)


# %% simple_self_attention
def simple_self_attention(inputs):
    raw = score_matrix(inputs)
    w = softmax(raw)
    return torch.matmul(w, inputs)
''',
    "03_trainable_qkv": '''
# %% project_qkv
def project_qkv(x, W_query, W_key, W_value):
    return tuple(torch.matmul(x, W) for W in (W_query, W_key, W_value))


# %% scaled_dot_product_attention
def _scale(scores, width):
    return scores / math.sqrt(width)


def scaled_dot_product_attention(queries, keys, values):
    raw = torch.matmul(queries, torch.swapaxes(keys, -1, -2))
    probs = torch.softmax(_scale(raw, keys.size(-1)), dim=-1)
    return torch.matmul(probs, values), probs


# %% SelfAttention_v1
class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        shape = (d_in, d_out)
        self.W_query = nn.Parameter(torch.rand(*shape))
        self.W_key = nn.Parameter(torch.rand(*shape))
        self.W_value = nn.Parameter(torch.rand(*shape))

    def forward(self, x):
        q, k, v = (torch.matmul(x, W) for W in (self.W_query, self.W_key, self.W_value))
        probs = torch.softmax(torch.matmul(q, torch.swapaxes(k, -1, -2)) / math.sqrt(k.size(-1)), dim=-1)
        return torch.matmul(probs, v)


# %% SelfAttention_v2
class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        make = lambda: nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_query = make()
        self.W_key = make()
        self.W_value = make()

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        logits = torch.matmul(q, torch.swapaxes(k, -1, -2)) / math.sqrt(k.size(-1))
        return torch.matmul(logits.softmax(-1), v)


# %% copy_v2_weights_into_v1
def copy_v2_weights_into_v1(v1, v2):
    with torch.no_grad():
        for name in ("W_query", "W_key", "W_value"):
            getattr(v1, name).data = getattr(v2, name).weight.detach().t().clone()
''',
    "04_causal_mask": '''
# %% causal_mask
def causal_mask(num_tokens, device=None):
    rows = torch.arange(num_tokens, device=device)
    return rows[None, :] > rows[:, None]


# %% mask_and_renormalize
def mask_and_renormalize(attn_weights):
    keep = ~causal_mask(attn_weights.size(-1), device=attn_weights.device)
    kept = attn_weights * keep
    return kept / kept.sum(-1, keepdim=True)


# %% causal_attention_weights
def causal_attention_weights(attn_scores, d_k):
    n = attn_scores.size(-1)
    blocked = causal_mask(n, device=attn_scores.device)
    scaled = attn_scores / math.sqrt(d_k)
    scaled = torch.where(blocked, torch.full_like(scaled, -math.inf), scaled)
    return scaled.softmax(dim=-1)


# %% CausalAttention
class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.context_length = context_length
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        upper = torch.ones(context_length, context_length).triu(1).bool()
        self.register_buffer("mask", upper)

    def forward(self, x):
        n = x.size(1)
        if n > self.context_length:
            raise ValueError("too many tokens for context_length")
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        logits = torch.matmul(q, k.transpose(1, 2)) / math.sqrt(k.size(-1))
        logits = torch.where(self.mask[:n, :n], torch.full_like(logits, -math.inf), logits)
        probs = self.dropout(logits.softmax(-1))
        return torch.matmul(probs, v)
''',
    "05_padding_mask": '''
# %% key_padding_mask
def key_padding_mask(seq_lens, max_len):
    lens = torch.tensor(list(seq_lens)) if not torch.is_tensor(seq_lens) else seq_lens
    if bool(((lens < 1) | (lens > max_len)).any()):
        raise ValueError("every length must be within [1, max_len]")
    idx = torch.arange(max_len).expand(len(lens), max_len)
    return idx >= lens.unsqueeze(1)


# %% mask_padded_scores
def mask_padded_scores(scores, key_padding_mask):
    hidden = key_padding_mask.unsqueeze(1)
    return torch.where(hidden, torch.full_like(scores, -math.inf), scores)


# %% padded_attention
def padded_attention(queries, keys, values, key_padding_mask):
    logits = torch.matmul(queries, keys.transpose(1, 2)) / math.sqrt(queries.size(-1))
    probs = mask_padded_scores(logits, key_padding_mask).softmax(-1)
    return torch.matmul(probs, values), probs


# %% PaddedSelfAttention
class PaddedSelfAttention(nn.Module):
    def __init__(self, embed_dim):
        super().__init__()
        for name in ("W_q", "W_k", "W_v", "W_out"):
            setattr(self, name, nn.Linear(embed_dim, embed_dim, bias=False))

    def forward(self, q, k, v, key_padding_mask=None, attn_mask=None):
        qq, kk, vv = self.W_q(q), self.W_k(k), self.W_v(v)
        logits = torch.matmul(qq, kk.transpose(1, 2)) / math.sqrt(qq.size(-1))
        if attn_mask is not None:
            logits = torch.where(attn_mask, torch.full_like(logits, -math.inf), logits)
        if key_padding_mask is not None:
            logits = mask_padded_scores(logits, key_padding_mask)
        probs = logits.softmax(-1)
        return self.W_out(torch.matmul(probs, vv)), probs
''',
    "06_multihead": '''
# %% split_heads
def split_heads(x, num_heads):
    batch, tokens, width = x.size()
    if width % num_heads:
        raise ValueError("num_heads must divide the feature size")
    return x.view(batch, tokens, num_heads, -1).permute(0, 2, 1, 3)


# %% combine_heads
def combine_heads(x):
    batch, heads, tokens, width = x.size()
    return x.permute(0, 2, 1, 3).contiguous().view(batch, tokens, heads * width)


# %% MultiHeadAttentionWrapper
class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        heads = []
        for _ in range(num_heads):
            heads.append(CausalAttention(d_in, d_out, context_length, dropout, qkv_bias))
        self.heads = nn.ModuleList(heads)

    def forward(self, x):
        outputs = [h(x) for h in self.heads]
        return torch.concat(outputs, -1)


# %% MultiHeadAttention
class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("num_heads must divide d_out")
        self.num_heads, self.d_out = num_heads, d_out
        self.head_dim = d_out // num_heads
        self.context_length = context_length
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length).triu(1).bool())

    def forward(self, x, key_padding_mask=None):
        n = x.size(1)
        if n > self.context_length:
            raise ValueError("too many tokens for context_length")
        q = split_heads(self.W_query(x), self.num_heads)
        k = split_heads(self.W_key(x), self.num_heads)
        v = split_heads(self.W_value(x), self.num_heads)
        blocked = self.mask[:n, :n]
        if key_padding_mask is not None:
            blocked = torch.logical_or(blocked, key_padding_mask[:, None, None, :])
        logits = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = self.dropout(torch.where(blocked, torch.full_like(logits, -math.inf), logits).softmax(-1))
        return self.out_proj(combine_heads(torch.matmul(probs, v)))
''',
    "07_positional_encoding": '''
# %% sinusoidal_encoding
def sinusoidal_encoding(num_positions, d_model, start=0):
    out = torch.empty(num_positions, d_model)
    for row in range(num_positions):
        pos = start + row
        for col in range(0, d_model, 2):
            angle = pos / (10000 ** (col / d_model))
            out[row, col] = math.sin(angle)
            if col + 1 < d_model:
                out[row, col + 1] = math.cos(angle)
    return out
''',
}

FAMILY_C = {
    "01_scores": '''
# %% dot_scores
def dot_scores(query, inputs):
    return (inputs * query).sum(dim=1)


# %% score_matrix
def score_matrix(inputs):
    return torch.einsum("...id,...jd->...ij", inputs, inputs)


# %% AdditiveScore
class AdditiveScore(nn.Module):
    def __init__(self, hidden_size):
        super(AdditiveScore, self).__init__()
        self.W_q = nn.Linear(hidden_size, hidden_size, bias=False)
        self.W_k = nn.Linear(hidden_size, hidden_size, bias=False)
        self.w = nn.Linear(hidden_size, 1, bias=False)
        self.q = nn.Parameter(torch.randn(1, hidden_size))

    def forward(self, X):
        return self.w(torch.tanh(self.W_q(self.q).unsqueeze(0) + self.W_k(X))).view(X.shape[0], X.shape[1])


# %% DotProductScore
class DotProductScore(nn.Module):
    def __init__(self, hidden_size):
        super(DotProductScore, self).__init__()
        self.q = nn.Parameter(torch.randn(hidden_size, 1))

    def forward(self, X):
        return torch.einsum("bld,d->bl", X, self.q[:, 0])


# %% SelfAttentionScore
class SelfAttentionScore(nn.Module):
    def __init__(self, hidden_size):
        super(SelfAttentionScore, self).__init__()
        self.W_q = nn.Linear(hidden_size, hidden_size, bias=False)
        self.W_k = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, X):
        return torch.einsum("bid,bjd->bij", self.W_q(X), self.W_k(X))
''',
    "02_softmax": '''
# %% normalize_by_sum
def normalize_by_sum(scores, dim=-1):
    s = scores.sum(dim).unsqueeze(dim)
    return scores / s


# %% softmax_naive
def softmax_naive(x, dim=-1):
    e = torch.exp(x)
    denominator = e.sum(dim).unsqueeze(dim)
    return e / denominator


# %% softmax
def softmax(x, dim=-1):
    m = x.max(dim).values.unsqueeze(dim)
    e = torch.exp(x - m)
    denominator = e.sum(dim).unsqueeze(dim)
    return e / denominator


# %% context_vectors
def context_vectors(weights, inputs):
    return torch.einsum("...ij,...jd->...id", weights, inputs)


# %% simple_self_attention
def simple_self_attention(inputs):
    return context_vectors(softmax(score_matrix(inputs), dim=-1), inputs)
''',
    "03_trainable_qkv": '''
# %% project_qkv
def project_qkv(x, W_query, W_key, W_value):
    q = torch.einsum("...td,de->...te", x, W_query)
    k = torch.einsum("...td,de->...te", x, W_key)
    v = torch.einsum("...td,de->...te", x, W_value)
    return q, k, v


# %% scaled_dot_product_attention
def scaled_dot_product_attention(queries, keys, values):
    dim = queries.shape[-1]
    s = torch.einsum("...qd,...kd->...qk", queries, keys) * dim ** -0.5
    a = s.softmax(dim=-1)
    out = torch.einsum("...qk,...kd->...qd", a, values)
    return out, a


# %% SelfAttention_v1
class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super(SelfAttention_v1, self).__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        out, _ = scaled_dot_product_attention(x @ self.W_query, x @ self.W_key, x @ self.W_value)
        return out


# %% SelfAttention_v2
class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super(SelfAttention_v2, self).__init__()
        self.W_query = nn.Linear(d_in, d_out, qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, qkv_bias)

    def forward(self, x):
        out, _ = scaled_dot_product_attention(self.W_query(x), self.W_key(x), self.W_value(x))
        return out


# %% copy_v2_weights_into_v1
def copy_v2_weights_into_v1(v1, v2):
    v1.W_query.data.copy_(v2.W_query.weight.data.T)
    v1.W_key.data.copy_(v2.W_key.weight.data.T)
    v1.W_value.data.copy_(v2.W_value.weight.data.T)
''',
    "04_causal_mask": '''
# %% causal_mask
def causal_mask(num_tokens, device=None):
    m = torch.zeros(num_tokens, num_tokens, dtype=torch.bool, device=device)
    for i in range(num_tokens):
        m[i, i + 1:] = True
    return m


# %% mask_and_renormalize
def mask_and_renormalize(attn_weights):
    t = attn_weights.shape[-1]
    lower = torch.tril(torch.ones(t, t, device=attn_weights.device))
    w = attn_weights * lower
    return w / w.sum(dim=-1).unsqueeze(-1)


# %% causal_attention_weights
def causal_attention_weights(attn_scores, d_k):
    t = attn_scores.shape[-1]
    lower = torch.tril(torch.ones(t, t, device=attn_scores.device)).bool()
    s = attn_scores.masked_fill(~lower, -torch.inf) * d_k ** -0.5
    return s.softmax(dim=-1)


# %% CausalAttention
class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super(CausalAttention, self).__init__()
        self.W_query = nn.Linear(d_in, d_out, qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, qkv_bias)
        self.drop = nn.Dropout(p=dropout)
        self.context_length = context_length
        self.register_buffer("mask", ~torch.tril(torch.ones(context_length, context_length)).bool())

    def forward(self, x):
        t = x.shape[1]
        assert t <= self.context_length
        if t > self.context_length:
            raise ValueError(f"{t} > {self.context_length}")
        s = torch.einsum("bqd,bkd->bqk", self.W_query(x), self.W_key(x))
        s = s.masked_fill(self.mask[:t, :t], -torch.inf) * self.W_key.out_features ** -0.5
        a = self.drop(s.softmax(dim=-1))
        return torch.einsum("bqk,bkd->bqd", a, self.W_value(x))
''',
    "05_padding_mask": '''
# %% key_padding_mask
def key_padding_mask(seq_lens, max_len):
    rows = []
    for n in list(seq_lens):
        n = int(n)
        if not 1 <= n <= max_len:
            raise ValueError(f"length {n} not in [1, {max_len}]")
        rows.append([j >= n for j in range(max_len)])
    return torch.tensor(rows, dtype=torch.bool)


# %% mask_padded_scores
def mask_padded_scores(scores, key_padding_mask):
    out = scores.clone()
    b, q, k = out.shape
    expanded = key_padding_mask.view(b, 1, k).expand(b, q, k)
    out[expanded] = -torch.inf
    return out


# %% padded_attention
def padded_attention(queries, keys, values, key_padding_mask):
    s = torch.einsum("bqd,bkd->bqk", queries, keys) * queries.shape[-1] ** -0.5
    a = mask_padded_scores(s, key_padding_mask).softmax(dim=-1)
    return torch.einsum("bqk,bkd->bqd", a, values), a


# %% PaddedSelfAttention
class PaddedSelfAttention(nn.Module):
    def __init__(self, embed_dim):
        super(PaddedSelfAttention, self).__init__()
        self.W_q = nn.Linear(embed_dim, embed_dim, False)
        self.W_k = nn.Linear(embed_dim, embed_dim, False)
        self.W_v = nn.Linear(embed_dim, embed_dim, False)
        self.W_out = nn.Linear(embed_dim, embed_dim, False)

    def forward(self, q, k, v, key_padding_mask=None, attn_mask=None):
        s = torch.einsum("bqd,bkd->bqk", self.W_q(q), self.W_k(k)) * q.shape[-1] ** -0.5
        if attn_mask is not None:
            s = s.masked_fill(attn_mask, -torch.inf)
        if key_padding_mask is not None:
            s = s.masked_fill(key_padding_mask.unsqueeze(1), -torch.inf)
        a = s.softmax(dim=-1)
        return self.W_out(torch.einsum("bqk,bkd->bqd", a, self.W_v(v))), a
''',
    "06_multihead": '''
# %% split_heads
def split_heads(x, num_heads):
    b, t, d = x.shape
    assert d % num_heads == 0
    if d % num_heads != 0:
        raise ValueError("bad num_heads")
    return torch.stack(x.chunk(num_heads, dim=-1), dim=1)


# %% combine_heads
def combine_heads(x):
    return torch.cat(x.unbind(dim=1), dim=-1)


# %% MultiHeadAttentionWrapper
class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super(MultiHeadAttentionWrapper, self).__init__()
        self.heads = nn.ModuleList(
            CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) for i in range(num_heads))

    def forward(self, x):
        return torch.cat(tuple(map(lambda head: head(x), self.heads)), dim=2)


# %% MultiHeadAttention
class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super(MultiHeadAttention, self).__init__()
        if d_out % num_heads != 0:
            raise ValueError("bad num_heads")
        self.num_heads = num_heads
        self.d_out = d_out
        self.head_dim = d_out // num_heads
        self.context_length = context_length
        self.W_query = nn.Linear(d_in, d_out, qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(p=dropout)
        self.register_buffer("mask", ~torch.tril(torch.ones(context_length, context_length)).bool())

    def forward(self, x, key_padding_mask=None):
        t = x.shape[1]
        if t > self.context_length:
            raise ValueError(f"{t} > {self.context_length}")
        q = torch.stack(self.W_query(x).chunk(self.num_heads, dim=-1), dim=1)
        k = torch.stack(self.W_key(x).chunk(self.num_heads, dim=-1), dim=1)
        v = torch.stack(self.W_value(x).chunk(self.num_heads, dim=-1), dim=1)
        s = torch.einsum("bhqd,bhkd->bhqk", q, k) * self.head_dim ** -0.5
        s = s.masked_fill(self.mask[:t, :t], -torch.inf)
        if key_padding_mask is not None:
            s = s.masked_fill(key_padding_mask[:, None, None, :], -torch.inf)
        a = self.dropout(s.softmax(dim=-1))
        out = torch.einsum("bhqk,bhkd->bhqd", a, v)
        return self.out_proj(torch.cat(out.unbind(dim=1), dim=-1))
''',
    "07_positional_encoding": '''
# %% sinusoidal_encoding
def sinusoidal_encoding(num_positions, d_model, start=0):
    pos = torch.arange(num_positions).float().add(start).view(-1, 1)
    i = torch.arange(d_model).view(1, -1)
    rates = torch.pow(10000.0, -(2 * (i // 2)).float() / d_model)
    angle = pos * rates
    return torch.where(i % 2 == 0, torch.sin(angle), torch.cos(angle))
''',
}

# A student who follows the notebooks' hints closely: the one-line exercises come out as the
# reference's text (independent, yet alike: what a short exercise allows), the longer ones differ.
FAMILY_D = {
    "01_scores": '''
# %% dot_scores
def dot_scores(query, inputs):
    return inputs @ query


# %% score_matrix
def score_matrix(inputs):
    return inputs @ inputs.transpose(-2, -1)


# %% AdditiveScore
class AdditiveScore(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.W_q = nn.Linear(hidden_size, hidden_size, bias=False)
        self.W_k = nn.Linear(hidden_size, hidden_size, bias=False)
        self.w = nn.Linear(hidden_size, 1, bias=False)
        self.q = nn.Parameter(torch.randn(1, hidden_size))

    def forward(self, X):
        keys = self.W_k(X)
        query = self.W_q(self.q)
        return self.w(torch.tanh(query + keys)).squeeze(2)


# %% DotProductScore
class DotProductScore(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.q = nn.Parameter(torch.randn(hidden_size, 1))

    def forward(self, X):
        out = torch.bmm(X, self.q.expand(X.shape[0], -1, -1))
        return out.squeeze(2)


# %% SelfAttentionScore
class SelfAttentionScore(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.W_q = nn.Linear(hidden_size, hidden_size, bias=False)
        self.W_k = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, X):
        return torch.bmm(self.W_q(X), self.W_k(X).transpose(1, 2))
''',
    "02_softmax": '''
# %% normalize_by_sum
def normalize_by_sum(scores, dim=-1):
    return scores / scores.sum(dim=dim, keepdim=True)


# %% softmax_naive
def softmax_naive(x, dim=-1):
    numerator = x.exp()
    return numerator / numerator.sum(dim=dim, keepdim=True)


# %% softmax
def softmax(x, dim=-1):
    largest = x.max(dim=dim, keepdim=True).values
    numerator = (x - largest).exp()
    return numerator / numerator.sum(dim=dim, keepdim=True)


# %% context_vectors
def context_vectors(weights, inputs):
    return weights @ inputs


# %% simple_self_attention
def simple_self_attention(inputs):
    scores = score_matrix(inputs)
    weights = softmax(scores, dim=-1)
    return weights @ inputs
''',
    "03_trainable_qkv": '''
# %% project_qkv
def project_qkv(x, W_query, W_key, W_value):
    return x @ W_query, x @ W_key, x @ W_value


# %% scaled_dot_product_attention
def scaled_dot_product_attention(queries, keys, values):
    scores = queries @ keys.transpose(-2, -1) / math.sqrt(keys.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    return weights @ values, weights


# %% SelfAttention_v1
class SelfAttention_v1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        context, _ = scaled_dot_product_attention(*project_qkv(x, self.W_query, self.W_key, self.W_value))
        return context


# %% SelfAttention_v2
class SelfAttention_v2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        context, _ = scaled_dot_product_attention(self.W_query(x), self.W_key(x), self.W_value(x))
        return context


# %% copy_v2_weights_into_v1
def copy_v2_weights_into_v1(v1, v2):
    v1.W_query.data = v2.W_query.weight.data.T.clone()
    v1.W_key.data = v2.W_key.weight.data.T.clone()
    v1.W_value.data = v2.W_value.weight.data.T.clone()
''',
    "04_causal_mask": '''
# %% causal_mask
def causal_mask(num_tokens, device=None):
    return torch.ones(num_tokens, num_tokens, device=device).triu(diagonal=1).bool()


# %% mask_and_renormalize
def mask_and_renormalize(attn_weights):
    mask = causal_mask(attn_weights.shape[-1], device=attn_weights.device)
    kept = attn_weights.masked_fill(mask, 0)
    return kept / kept.sum(dim=-1, keepdim=True)


# %% causal_attention_weights
def causal_attention_weights(attn_scores, d_k):
    mask = causal_mask(attn_scores.shape[-1], device=attn_scores.device)
    return torch.softmax(attn_scores.masked_fill(mask, -torch.inf) / math.sqrt(d_k), dim=-1)


# %% CausalAttention
class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.context_length = context_length
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", causal_mask(context_length))

    def forward(self, x):
        T = x.shape[1]
        if T > self.context_length:
            raise ValueError(f"{T} tokens, context_length is {self.context_length}")
        scores = self.W_query(x) @ self.W_key(x).transpose(1, 2)
        weights = causal_attention_weights(scores, self.W_key.out_features)
        return self.dropout(weights) @ self.W_value(x)
''',
    "05_padding_mask": '''
# %% key_padding_mask
def key_padding_mask(seq_lens, max_len):
    seq_lens = torch.as_tensor(seq_lens)
    if (seq_lens < 1).any() or (seq_lens > max_len).any():
        raise ValueError(f"lengths must be within [1, {max_len}]")
    return torch.arange(max_len).unsqueeze(0) >= seq_lens.unsqueeze(1)


# %% mask_padded_scores
def mask_padded_scores(scores, key_padding_mask):
    return scores.masked_fill(key_padding_mask.unsqueeze(1), float("-inf"))


# %% padded_attention
def padded_attention(queries, keys, values, key_padding_mask):
    scores = queries @ keys.transpose(1, 2) / math.sqrt(keys.shape[-1])
    weights = torch.softmax(mask_padded_scores(scores, key_padding_mask), dim=-1)
    return weights @ values, weights


# %% PaddedSelfAttention
class PaddedSelfAttention(nn.Module):
    def __init__(self, embed_dim):
        super().__init__()
        self.W_q = nn.Linear(embed_dim, embed_dim, bias=False)
        self.W_k = nn.Linear(embed_dim, embed_dim, bias=False)
        self.W_v = nn.Linear(embed_dim, embed_dim, bias=False)
        self.W_out = nn.Linear(embed_dim, embed_dim, bias=False)

    def forward(self, q, k, v, key_padding_mask=None, attn_mask=None):
        scores = self.W_q(q) @ self.W_k(k).transpose(1, 2) / math.sqrt(q.shape[-1])
        if attn_mask is not None:
            scores = scores.masked_fill(attn_mask, float("-inf"))
        if key_padding_mask is not None:
            scores = mask_padded_scores(scores, key_padding_mask)
        weights = torch.softmax(scores, dim=-1)
        return self.W_out(weights @ self.W_v(v)), weights
''',
    "06_multihead": '''
# %% split_heads
def split_heads(x, num_heads):
    B, T, D = x.shape
    if D % num_heads:
        raise ValueError(f"{D} is not divisible by {num_heads}")
    return x.reshape(B, T, num_heads, D // num_heads).transpose(1, 2)


# %% combine_heads
def combine_heads(x):
    B, H, T, Dh = x.shape
    return x.transpose(1, 2).reshape(B, T, H * Dh)


# %% MultiHeadAttentionWrapper
class MultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)])

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)


# %% MultiHeadAttention
class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError(f"{d_out} is not divisible by {num_heads}")
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.context_length = context_length
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length).triu(diagonal=1).bool())

    def forward(self, x, key_padding_mask=None):
        T = x.shape[1]
        if T > self.context_length:
            raise ValueError(f"{T} tokens, context_length is {self.context_length}")
        q = split_heads(self.W_query(x), self.num_heads)
        k = split_heads(self.W_key(x), self.num_heads)
        v = split_heads(self.W_value(x), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(self.mask[:T, :T], float("-inf"))
        if key_padding_mask is not None:
            scores = scores.masked_fill(key_padding_mask[:, None, None, :], float("-inf"))
        weights = self.dropout(torch.softmax(scores, dim=-1))
        return self.out_proj(combine_heads(weights @ v))
''',
    "07_positional_encoding": '''
# %% sinusoidal_encoding
def sinusoidal_encoding(num_positions, d_model, start=0):
    pe = torch.zeros(num_positions, d_model)
    position = torch.arange(start, start + num_positions).float().unsqueeze(1)
    div_term = 10000 ** (torch.arange(0, d_model, 2).float() / d_model)
    pe[:, 0::2] = torch.sin(position / div_term)
    pe[:, 1::2] = torch.cos(position / div_term)[:, :d_model // 2]
    return pe
''',
}
