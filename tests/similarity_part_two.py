"""Five independent ways of solving each section of part 2 (08 to 13), by the hands of families B to F.

Part 2's counterpart of similarity_corpus.py (B, C, D) and similarity_more_hands.py
(E, F), each family keeping its habits there: B writes `torch.matmul`,
`torch.swapaxes`, `torch.where` and small helpers of its own; C writes `einsum`,
`chunk` and `stack`, `super(Class, self)`, `masked_fill(..., -torch.inf)` and
`** -0.5`; D follows the notebooks' hints as closely as the reference does; E
writes one step a line, loops where the exercise allows them, keyword arguments
and messages built with `+`; F writes method chains, `.mT`, `unflatten`,
`setattr` loops and f-strings. Each gets full marks from the grader
(test_similarity_part_two.py) and none was written from the reference or another
family. Laid out as similarity_corpus.py: one `# %% <graded name>` block per
graded name (section 12's blocks are rope_angles and apply_rope).
"""

FAMILY_B = {
    "08_efficient_mha": '''
# %% MultiHeadAttentionFused
def _split_qkv(fused, heads):
    batch, tokens, width = fused.size()
    return fused.view(batch, tokens, 3, heads, width // (3 * heads)).permute(2, 0, 3, 1, 4)


class MultiHeadAttentionFused(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("num_heads must divide d_out")
        self.num_heads, self.d_out = num_heads, d_out
        self.W_qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        upper = torch.ones(context_length, context_length).triu(1).bool()
        self.register_buffer("mask", upper)

    def forward(self, x):
        n = x.size(1)
        q, k, v = _split_qkv(self.W_qkv(x), self.num_heads)
        logits = torch.matmul(q, torch.swapaxes(k, -1, -2)) / q.size(-1) ** 0.5
        logits = torch.where(self.mask[:n, :n], torch.full_like(logits, float("-inf")), logits)
        probs = self.dropout(logits.softmax(-1))
        merged = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        return self.out_proj(merged.view(x.size(0), n, self.d_out))

    def load_from(self, mha):
        parts = [getattr(mha, name) for name in ("W_query", "W_key", "W_value")]
        with torch.no_grad():
            self.W_qkv.weight.copy_(torch.concat([p.weight for p in parts], 0))
            if self.W_qkv.bias is not None:
                self.W_qkv.bias.copy_(torch.concat([p.bias for p in parts], 0))
            self.out_proj.weight.copy_(mha.out_proj.weight)
            self.out_proj.bias.copy_(mha.out_proj.bias)
        return self


# %% MultiHeadAttentionSDPA
class MultiHeadAttentionSDPA(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("num_heads must divide d_out")
        self.num_heads, self.d_out = num_heads, d_out
        self.W_qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = dropout

    def forward(self, x):
        batch, n, _ = x.size()
        q, k, v = _split_qkv(self.W_qkv(x), self.num_heads)
        p = self.dropout if self.training else 0.0
        merged = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        return self.out_proj(merged.permute(0, 2, 1, 3).contiguous().view(batch, n, self.d_out))
''',
    "09_kv_cache": '''
# %% MultiHeadAttentionCached
def _heads(t, n):
    batch, tokens, width = t.size()
    return t.view(batch, tokens, n, width // n).permute(0, 2, 1, 3)


class MultiHeadAttentionCached(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("num_heads must divide d_out")
        self.num_heads, self.d_out, self.context_length = num_heads, d_out, context_length
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        upper = torch.ones(context_length, context_length).triu(1).bool()
        self.register_buffer("mask", upper, persistent=False)
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)

    def forward(self, x, use_cache=False):
        n = x.size(1)
        start = self.cache_k.size(2) if use_cache and self.cache_k is not None else 0
        if start + n > self.context_length:
            raise ValueError("the cache and the new tokens exceed context_length")
        q = _heads(self.W_query(x), self.num_heads)
        k = _heads(self.W_key(x), self.num_heads)
        v = _heads(self.W_value(x), self.num_heads)
        if use_cache:
            if start:
                k = torch.concat([self.cache_k, k], 2)
                v = torch.concat([self.cache_v, v], 2)
            self.cache_k, self.cache_v = k, v
        logits = torch.matmul(q, torch.swapaxes(k, -1, -2)) / q.size(-1) ** 0.5
        blocked = self.mask[start:start + n, :start + n]
        probs = self.dropout(torch.where(blocked, torch.full_like(logits, float("-inf")), logits).softmax(-1))
        merged = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        return self.out_proj(merged.view(x.size(0), n, self.d_out))

    def reset_cache(self):
        self.cache_k = None
        self.cache_v = None


# %% kv_cache_bytes
def kv_cache_bytes(num_layers, num_kv_heads, head_dim, context_length, bytes_per_value):
    names = ("num_layers", "num_kv_heads", "head_dim", "context_length", "bytes_per_value")
    sizes = (num_layers, num_kv_heads, head_dim, context_length, bytes_per_value)
    for name, size in zip(names, sizes):
        if not size > 0:
            raise ValueError(f"{name} must be positive, got {size}")
    per_token = 2 * num_kv_heads * head_dim * bytes_per_value
    return num_layers * context_length * per_token
''',
    "10_grouped_query": '''
# %% GroupedQueryAttention
def _heads(t, n):
    batch, tokens, width = t.size()
    return t.view(batch, tokens, n, width // n).permute(0, 2, 1, 3)


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        if num_heads % num_kv_groups:
            raise ValueError(f"num_kv_groups {num_kv_groups} must divide num_heads {num_heads}")
        if d_out % num_heads:
            raise ValueError(f"num_heads {num_heads} must divide d_out {d_out}")
        self.num_heads, self.num_kv_groups, self.d_out = num_heads, num_kv_groups, d_out
        kv_width = num_kv_groups * (d_out // num_heads)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, kv_width, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, kv_width, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)

    def forward(self, x, use_cache=False):
        n = x.size(1)
        q = _heads(self.W_query(x), self.num_heads)
        k = _heads(self.W_key(x), self.num_kv_groups)
        v = _heads(self.W_value(x), self.num_kv_groups)
        if use_cache:
            if self.cache_k is not None:
                k = torch.concat([self.cache_k, k], 2)
                v = torch.concat([self.cache_v, v], 2)
            self.cache_k, self.cache_v = k, v
        total = k.size(2)
        share = self.num_heads // self.num_kv_groups
        k = torch.repeat_interleave(k, share, 1)
        v = torch.repeat_interleave(v, share, 1)
        logits = torch.matmul(q, torch.swapaxes(k, -1, -2)) / q.size(-1) ** 0.5
        rows = torch.arange(total - n, total, device=x.device)
        cols = torch.arange(total, device=x.device)
        blocked = cols[None, :] > rows[:, None]
        probs = self.dropout(torch.where(blocked, torch.full_like(logits, float("-inf")), logits).softmax(-1))
        merged = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        return self.out_proj(merged.view(x.size(0), n, self.d_out))

    def reset_cache(self):
        self.cache_k = None
        self.cache_v = None
''',
    "11_sliding_window": '''
# %% sliding_window_mask
def _band(rows, cols, window):
    return (cols[None, :] > rows[:, None]) | (cols[None, :] <= rows[:, None] - window)


def sliding_window_mask(num_tokens, window):
    if window < 1:
        raise ValueError("window must be at least 1")
    idx = torch.arange(num_tokens)
    return _band(idx, idx, window)


# %% SlidingWindowAttention
def _heads(t, n):
    batch, tokens, width = t.size()
    return t.view(batch, tokens, n, width // n).permute(0, 2, 1, 3)


class SlidingWindowAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, window, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError("num_heads must divide d_out")
        if window < 1:
            raise ValueError("window must be at least 1")
        self.num_heads, self.d_out, self.window = num_heads, d_out, window
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)

    def forward(self, x, use_cache=False):
        n = x.size(1)
        q = _heads(self.W_query(x), self.num_heads)
        k = _heads(self.W_key(x), self.num_heads)
        v = _heads(self.W_value(x), self.num_heads)
        past = 0
        if use_cache and self.cache_k is not None:
            past = self.cache_k.size(2)
            k = torch.concat([self.cache_k, k], 2)
            v = torch.concat([self.cache_v, v], 2)
        rows = torch.arange(past, past + n, device=x.device)
        cols = torch.arange(past + n, device=x.device)
        logits = torch.matmul(q, torch.swapaxes(k, -1, -2)) / q.size(-1) ** 0.5
        logits = torch.where(_band(rows, cols, self.window), torch.full_like(logits, float("-inf")), logits)
        merged = torch.matmul(self.dropout(logits.softmax(-1)), v).permute(0, 2, 1, 3).contiguous()
        if use_cache:
            keep = min(self.window, k.size(2))
            self.cache_k, self.cache_v = k[:, :, k.size(2) - keep:], v[:, :, v.size(2) - keep:]
        return self.out_proj(merged.view(x.size(0), n, self.d_out))

    def reset_cache(self):
        self.cache_k = None
        self.cache_v = None
''',
    "12_rope": '''
# %% rope_angles
def rope_angles(head_dim, context_length, theta_base=10_000):
    if head_dim % 2:
        raise ValueError(f"head_dim {head_dim} is odd")
    exponents = torch.arange(head_dim // 2, dtype=torch.float32) * 2 / head_dim
    inv_freq = torch.pow(torch.tensor(float(theta_base)), -exponents)
    angles = torch.outer(torch.arange(context_length, dtype=torch.float32), inv_freq)
    angles = torch.concat([angles, angles], -1)
    return angles.cos(), angles.sin()


# %% apply_rope
def _rotate_half(x):
    first, second = torch.chunk(x, 2, -1)
    return torch.concat([torch.neg(second), first], -1)


def apply_rope(x, cos, sin, offset=0):
    n = x.size(-2)
    rows = slice(offset, offset + n)
    return torch.add(torch.mul(x, cos[rows]), torch.mul(_rotate_half(x), sin[rows]))
''',
    "13_tiled_attention": '''
# %% tiled_attention
def _tile_scores(q_tile, k_tile, first_q, first_k, causal):
    logits = torch.matmul(q_tile, torch.swapaxes(k_tile, -1, -2)) / q_tile.size(-1) ** 0.5
    if causal:
        rows = torch.arange(first_q, first_q + q_tile.size(-2), device=q_tile.device)
        cols = torch.arange(first_k, first_k + k_tile.size(-2), device=q_tile.device)
        logits = torch.where(cols[None, :] > rows[:, None], torch.full_like(logits, float("-inf")), logits)
    return logits


def tiled_attention(q, k, v, block_q=64, block_k=64, causal=False):
    n = q.size(-2)
    outputs, sums = [], []
    for first_q in range(0, n, block_q):
        q_tile = q[..., first_q:first_q + block_q, :]
        best = torch.full(q_tile.shape[:-1], float("-inf"), dtype=q.dtype, device=q.device)
        total = torch.zeros_like(best)
        acc = torch.zeros_like(q_tile)
        last_q = first_q + q_tile.size(-2) - 1
        for first_k in range(0, k.size(-2), block_k):
            if causal and first_k > last_q:
                break
            logits = _tile_scores(q_tile, k[..., first_k:first_k + block_k, :], first_q, first_k, causal)
            new_best = torch.maximum(best, torch.amax(logits, -1))
            shrink = torch.exp(best - new_best)
            weights = torch.exp(logits - new_best.unsqueeze(-1))
            total = total * shrink + torch.sum(weights, -1)
            acc = acc * shrink.unsqueeze(-1) + torch.matmul(weights, v[..., first_k:first_k + block_k, :])
            best = new_best
        outputs.append(acc / total.unsqueeze(-1))
        sums.append(best + torch.log(total))
    return torch.concat(outputs, -2), torch.concat(sums, -1)
''',
}


FAMILY_C = {
    "08_efficient_mha": '''
# %% MultiHeadAttentionFused
class MultiHeadAttentionFused(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super(MultiHeadAttentionFused, self).__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"{d_out} % {num_heads} != 0")
        self.num_heads = num_heads
        self.W_qkv = nn.Linear(d_in, 3 * d_out, qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(p=dropout)
        self.register_buffer("mask", ~torch.tril(torch.ones(context_length, context_length)).bool())

    def forward(self, x):
        t = x.shape[1]
        q, k, v = (torch.stack(part.chunk(self.num_heads, dim=-1), dim=1) for part in self.W_qkv(x).chunk(3, dim=-1))
        s = torch.einsum("bhqd,bhkd->bhqk", q, k) * q.shape[-1] ** -0.5
        s = s.masked_fill(self.mask[:t, :t], -torch.inf)
        a = self.dropout(s.softmax(dim=-1))
        out = torch.einsum("bhqk,bhkd->bhqd", a, v)
        return self.out_proj(torch.cat(out.unbind(dim=1), dim=-1))

    def load_from(self, mha):
        state = {"weight": torch.cat((mha.W_query.weight, mha.W_key.weight, mha.W_value.weight))}
        if self.W_qkv.bias is not None:
            state["bias"] = torch.cat((mha.W_query.bias, mha.W_key.bias, mha.W_value.bias))
        self.W_qkv.load_state_dict(state)
        self.out_proj.load_state_dict(mha.out_proj.state_dict())
        return self


# %% MultiHeadAttentionSDPA
class MultiHeadAttentionSDPA(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super(MultiHeadAttentionSDPA, self).__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"{d_out} % {num_heads} != 0")
        self.num_heads = num_heads
        self.W_qkv = nn.Linear(d_in, 3 * d_out, qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = dropout

    def forward(self, x):
        q, k, v = (torch.stack(part.chunk(self.num_heads, dim=-1), dim=1) for part in self.W_qkv(x).chunk(3, dim=-1))
        out = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout * self.training, is_causal=True)
        return self.out_proj(torch.cat(out.unbind(dim=1), dim=-1))
''',
    "09_kv_cache": '''
# %% MultiHeadAttentionCached
class MultiHeadAttentionCached(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super(MultiHeadAttentionCached, self).__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"{d_out} % {num_heads} != 0")
        self.num_heads = num_heads
        self.context_length = context_length
        self.W_query = nn.Linear(d_in, d_out, qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(p=dropout)
        self.register_buffer("mask", ~torch.tril(torch.ones(context_length, context_length)).bool(), persistent=False)
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)

    def forward(self, x, use_cache=False):
        t = x.shape[1]
        q, k, v = (torch.stack(layer(x).chunk(self.num_heads, dim=-1), dim=1)
                   for layer in (self.W_query, self.W_key, self.W_value))
        past = 0
        if use_cache and self.cache_k is not None:
            past = self.cache_k.shape[2]
            k, v = torch.cat((self.cache_k, k), dim=2), torch.cat((self.cache_v, v), dim=2)
        if past + t > self.context_length:
            raise ValueError(f"{past} + {t} tokens > context_length {self.context_length}")
        if use_cache:
            self.cache_k, self.cache_v = k, v
        s = torch.einsum("bhqd,bhkd->bhqk", q, k) * q.shape[-1] ** -0.5
        s = s.masked_fill(self.mask[past:past + t, :past + t], -torch.inf)
        a = self.dropout(s.softmax(dim=-1))
        out = torch.einsum("bhqk,bhkd->bhqd", a, v)
        return self.out_proj(torch.cat(out.unbind(dim=1), dim=-1))

    def reset_cache(self):
        self.cache_k = self.cache_v = None


# %% kv_cache_bytes
import math


def kv_cache_bytes(num_layers, num_kv_heads, head_dim, context_length, bytes_per_value):
    args = dict(num_layers=num_layers, num_kv_heads=num_kv_heads, head_dim=head_dim,
                context_length=context_length, bytes_per_value=bytes_per_value)
    bad = [k for k, v in args.items() if not v > 0]
    if bad:
        raise ValueError(f"{bad[0]}={args[bad[0]]} is not positive")
    return math.prod([2, *args.values()])
''',
    "10_grouped_query": '''
# %% GroupedQueryAttention
class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, num_kv_groups, qkv_bias=False):
        super(GroupedQueryAttention, self).__init__()
        if num_heads % num_kv_groups != 0:
            raise ValueError(f"{num_heads} % {num_kv_groups} != 0")
        if d_out % num_heads != 0:
            raise ValueError(f"{d_out} % {num_heads} != 0")
        self.num_heads = num_heads
        self.groups = num_kv_groups
        dh = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * dh, qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * dh, qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(p=dropout)
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)

    def forward(self, x, use_cache=False):
        t = x.shape[1]
        q = torch.stack(self.W_query(x).chunk(self.num_heads, dim=-1), dim=1)
        k = torch.stack(self.W_key(x).chunk(self.groups, dim=-1), dim=1)
        v = torch.stack(self.W_value(x).chunk(self.groups, dim=-1), dim=1)
        if use_cache:
            if self.cache_k is not None:
                k, v = torch.cat((self.cache_k, k), dim=2), torch.cat((self.cache_v, v), dim=2)
            self.cache_k, self.cache_v = k, v
        n = k.shape[2]
        q = q.unflatten(1, (self.groups, self.num_heads // self.groups))
        s = torch.einsum("bgrqd,bgkd->bgrqk", q, k) * q.shape[-1] ** -0.5
        s = s.masked_fill(torch.ones(t, n, dtype=torch.bool, device=x.device).triu(n - t + 1), -torch.inf)
        a = self.dropout(s.softmax(dim=-1))
        out = torch.einsum("bgrqk,bgkd->bgrqd", a, v).flatten(1, 2)
        return self.out_proj(torch.cat(out.unbind(dim=1), dim=-1))

    def reset_cache(self):
        self.cache_k = self.cache_v = None
''',
    "11_sliding_window": '''
# %% sliding_window_mask
def sliding_window_mask(num_tokens, window):
    if window < 1:
        raise ValueError(f"window {window} < 1")
    ones = torch.ones(num_tokens, num_tokens, dtype=torch.bool)
    return ~(torch.tril(ones) & torch.triu(ones, diagonal=1 - window))


# %% SlidingWindowAttention
class SlidingWindowAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, window, qkv_bias=False):
        super(SlidingWindowAttention, self).__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"{d_out} % {num_heads} != 0")
        if window < 1:
            raise ValueError(f"window {window} < 1")
        self.num_heads = num_heads
        self.window = window
        self.W_query = nn.Linear(d_in, d_out, qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(p=dropout)
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)

    def forward(self, x, use_cache=False):
        t = x.shape[1]
        q, k, v = (torch.stack(layer(x).chunk(self.num_heads, dim=-1), dim=1)
                   for layer in (self.W_query, self.W_key, self.W_value))
        c = 0
        if use_cache and self.cache_k is not None:
            c = self.cache_k.shape[2]
            k, v = torch.cat((self.cache_k, k), dim=2), torch.cat((self.cache_v, v), dim=2)
        ones = torch.ones(t, c + t, dtype=torch.bool, device=x.device)
        hidden = ~(torch.tril(ones, diagonal=c) & torch.triu(ones, diagonal=c + 1 - self.window))
        s = torch.einsum("bhqd,bhkd->bhqk", q, k) * q.shape[-1] ** -0.5
        a = self.dropout(s.masked_fill(hidden, -torch.inf).softmax(dim=-1))
        out = torch.einsum("bhqk,bhkd->bhqd", a, v)
        if use_cache:
            self.cache_k, self.cache_v = k[:, :, -self.window:], v[:, :, -self.window:]
        return self.out_proj(torch.cat(out.unbind(dim=1), dim=-1))

    def reset_cache(self):
        self.cache_k = self.cache_v = None
''',
    "12_rope": '''
# %% rope_angles
def rope_angles(head_dim, context_length, theta_base=10_000):
    if head_dim % 2 != 0:
        raise ValueError(f"head_dim={head_dim} must be even")
    freqs = 1.0 / theta_base ** (torch.arange(0, head_dim, 2).float() / head_dim)
    theta = torch.einsum("p,f->pf", torch.arange(context_length).float(), freqs).repeat(1, 2)
    return torch.cos(theta), torch.sin(theta)


# %% apply_rope
def apply_rope(x, cos, sin, offset=0):
    t, d = x.shape[-2:]
    c, s = cos.narrow(0, offset, t), sin.narrow(0, offset, t)
    a, b = x.split(d // 2, dim=-1)
    return torch.cat((a * c[:, :d // 2] - b * s[:, :d // 2], b * c[:, d // 2:] + a * s[:, d // 2:]), dim=-1)
''',
    "13_tiled_attention": '''
# %% tiled_attention
def tiled_attention(q, k, v, block_q=64, block_k=64, causal=False):
    T, d = q.shape[-2:]
    out = torch.empty_like(q)
    lse = torch.empty(q.shape[:-1], dtype=q.dtype, device=q.device)
    for i in range(0, T, block_q):
        qi = q[..., i:i + block_q, :] * d ** -0.5
        n = qi.shape[-2]
        m = qi.new_full(qi.shape[:-1], -torch.inf)
        s = qi.new_zeros(qi.shape[:-1])
        o = qi.new_zeros(qi.shape)
        stop = min(i + n, k.shape[-2]) if causal else k.shape[-2]
        for j in range(0, stop, block_k):
            kj, vj = k[..., j:j + block_k, :], v[..., j:j + block_k, :]
            x = torch.einsum("...qd,...kd->...qk", qi, kj)
            if causal:
                rows = torch.arange(i, i + n, device=q.device).unsqueeze(1)
                cols = torch.arange(j, j + kj.shape[-2], device=q.device).unsqueeze(0)
                x = x.masked_fill(cols > rows, -torch.inf)
            m2 = torch.max(m, x.max(dim=-1).values)
            e = torch.exp(x - m2.unsqueeze(-1))
            r = torch.exp(m - m2)
            s = r * s + e.sum(dim=-1)
            o = r.unsqueeze(-1) * o + torch.einsum("...qk,...kd->...qd", e, vj)
            m = m2
        out[..., i:i + n, :] = o / s.unsqueeze(-1)
        lse[..., i:i + n] = m + s.log()
    return out, lse
''',
}


FAMILY_D = {
    "08_efficient_mha": '''
# %% MultiHeadAttentionFused
class MultiHeadAttentionFused(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError(f"{d_out} is not divisible by {num_heads}")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length).triu(diagonal=1).bool())

    def forward(self, x):
        B, T, _ = x.shape
        qkv = self.W_qkv(x).reshape(B, T, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = q @ k.transpose(-2, -1) / self.head_dim ** 0.5
        scores = scores.masked_fill(self.mask[:T, :T], float("-inf"))
        weights = self.dropout(torch.softmax(scores, dim=-1))
        context = (weights @ v).transpose(1, 2).reshape(B, T, self.d_out)
        return self.out_proj(context)

    def load_from(self, mha):
        with torch.no_grad():
            self.W_qkv.weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight], dim=0))
            if self.W_qkv.bias is not None:
                self.W_qkv.bias.copy_(torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias], dim=0))
            self.out_proj.weight.copy_(mha.out_proj.weight)
            self.out_proj.bias.copy_(mha.out_proj.bias)
        return self


# %% MultiHeadAttentionSDPA
class MultiHeadAttentionSDPA(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError(f"{d_out} is not divisible by {num_heads}")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = dropout

    def forward(self, x):
        B, T, _ = x.shape
        q, k, v = self.W_qkv(x).reshape(B, T, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        p = self.dropout if self.training else 0.0
        context = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        return self.out_proj(context.transpose(1, 2).reshape(B, T, self.d_out))
''',
    "09_kv_cache": '''
# %% MultiHeadAttentionCached
class MultiHeadAttentionCached(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError(f"{d_out} is not divisible by {num_heads}")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.context_length = context_length
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length).triu(diagonal=1).bool(),
                             persistent=False)
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)

    def forward(self, x, use_cache=False):
        B, T, _ = x.shape
        q = self.W_query(x).reshape(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.W_key(x).reshape(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.W_value(x).reshape(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        start = self.cache_k.shape[2] if use_cache and self.cache_k is not None else 0
        if start + T > self.context_length:
            raise ValueError(f"{start + T} tokens, context_length is {self.context_length}")
        if use_cache:
            if self.cache_k is not None:
                k = torch.cat([self.cache_k, k], dim=2)
                v = torch.cat([self.cache_v, v], dim=2)
            self.cache_k = k
            self.cache_v = v
        scores = q @ k.transpose(-2, -1) / self.head_dim ** 0.5
        scores = scores.masked_fill(self.mask[start:start + T, :start + T], float("-inf"))
        weights = self.dropout(torch.softmax(scores, dim=-1))
        context = (weights @ v).transpose(1, 2).reshape(B, T, self.d_out)
        return self.out_proj(context)

    def reset_cache(self):
        self.cache_k = None
        self.cache_v = None


# %% kv_cache_bytes
def kv_cache_bytes(num_layers, num_kv_heads, head_dim, context_length, bytes_per_value):
    for name, value in [("num_layers", num_layers), ("num_kv_heads", num_kv_heads), ("head_dim", head_dim),
                        ("context_length", context_length), ("bytes_per_value", bytes_per_value)]:
        if not value > 0:
            raise ValueError(f"{name} must be positive, not {value}")
    return 2 * num_layers * num_kv_heads * head_dim * context_length * bytes_per_value
''',
    "10_grouped_query": '''
# %% GroupedQueryAttention
class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        if num_heads % num_kv_groups:
            raise ValueError(f"num_heads={num_heads} is not divisible by num_kv_groups={num_kv_groups}")
        if d_out % num_heads:
            raise ValueError(f"d_out={d_out} is not divisible by num_heads={num_heads}")
        self.d_out = d_out
        self.num_heads = num_heads
        self.num_kv_groups = num_kv_groups
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)

    def shared(self, t):
        # (B, groups, T, hd) -> (B, heads, T, hd): each group's head serves the next group_size query heads
        B, G, T, hd = t.shape
        return t[:, :, None].expand(B, G, self.num_heads // G, T, hd).reshape(B, self.num_heads, T, hd)

    def forward(self, x, use_cache=False):
        B, T, _ = x.shape
        new_k = self.W_key(x).view(B, T, self.num_kv_groups, self.head_dim).transpose(1, 2)
        new_v = self.W_value(x).view(B, T, self.num_kv_groups, self.head_dim).transpose(1, 2)
        if use_cache and self.cache_k is not None:
            new_k = torch.cat([self.cache_k, new_k], dim=2)
            new_v = torch.cat([self.cache_v, new_v], dim=2)
        if use_cache:
            self.cache_k, self.cache_v = new_k, new_v
        q = self.W_query(x).view(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        total = new_k.shape[2]
        query_pos = torch.arange(total - T, total, device=x.device)
        key_pos = torch.arange(total, device=x.device)
        future = key_pos[None, :] > query_pos[:, None]
        scores = (q @ self.shared(new_k).transpose(-2, -1)) / self.head_dim ** 0.5
        weights = self.dropout(torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1))
        context = weights @ self.shared(new_v)
        return self.out_proj(context.transpose(1, 2).reshape(B, T, self.d_out))

    def reset_cache(self):
        self.cache_k = None
        self.cache_v = None
''',
    "11_sliding_window": '''
# %% sliding_window_mask
def sliding_window_mask(num_tokens, window):
    if window < 1:
        raise ValueError(f"window must be at least 1, not {window}")
    i = torch.arange(num_tokens)[:, None]
    j = torch.arange(num_tokens)[None, :]
    return (j > i) | (j <= i - window)


# %% SlidingWindowAttention
class SlidingWindowAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, window, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError(f"{d_out} is not divisible by {num_heads}")
        if window < 1:
            raise ValueError(f"window must be at least 1, not {window}")
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

    def forward(self, x, use_cache=False):
        B, T, _ = x.shape
        q = self.W_query(x).reshape(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.W_key(x).reshape(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.W_value(x).reshape(B, T, self.num_heads, self.head_dim).transpose(1, 2)
        C = 0
        if use_cache and self.cache_k is not None:
            C = self.cache_k.shape[2]
            k = torch.cat([self.cache_k, k], dim=2)
            v = torch.cat([self.cache_v, v], dim=2)
        i = torch.arange(T, device=x.device)[:, None] + C
        j = torch.arange(C + T, device=x.device)[None, :]
        scores = q @ k.transpose(-2, -1) / self.head_dim ** 0.5
        scores = scores.masked_fill((j > i) | (j <= i - self.window), float("-inf"))
        weights = self.dropout(torch.softmax(scores, dim=-1))
        context = (weights @ v).transpose(1, 2).reshape(B, T, self.d_out)
        if use_cache:
            self.cache_k = k[:, :, -self.window:]
            self.cache_v = v[:, :, -self.window:]
        return self.out_proj(context)

    def reset_cache(self):
        self.cache_k = None
        self.cache_v = None
''',
    "12_rope": '''
# %% rope_angles
def rope_angles(head_dim, context_length, theta_base=10_000):
    if head_dim % 2:
        raise ValueError(f"head_dim must be even, not {head_dim}")
    inv_freq = 1.0 / (theta_base ** (torch.arange(0, head_dim, 2).float() / head_dim))
    positions = torch.arange(context_length).float()
    angles = positions[:, None] * inv_freq[None, :]
    angles = torch.cat([angles, angles], dim=-1)
    return torch.cos(angles), torch.sin(angles)


# %% apply_rope
def apply_rope(x, cos, sin, offset=0):
    T = x.shape[-2]
    half = x.shape[-1] // 2
    cos = cos[offset:offset + T]
    sin = sin[offset:offset + T]
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rotated * sin
''',
    "13_tiled_attention": '''
# %% tiled_attention
def tiled_attention(q, k, v, block_q=64, block_k=64, causal=False):
    T = q.shape[-2]
    scale = q.shape[-1] ** -0.5
    out = torch.empty_like(q)
    lse = q.new_empty(q.shape[:-1])
    for start in range(0, T, block_q):
        end = min(start + block_q, T)
        q_tile = q[..., start:end, :]
        row_max = q_tile.new_full(q_tile.shape[:-1], float("-inf"))
        row_sum = q_tile.new_zeros(q_tile.shape[:-1])
        acc = q_tile.new_zeros(q_tile.shape)
        last_key = end if causal else k.shape[-2]  # with causal=True, no key after the tile's last query
        for k_start in range(0, last_key, block_k):
            k_end = min(k_start + block_k, k.shape[-2])
            s = (q_tile @ k[..., k_start:k_end, :].transpose(-2, -1)) * scale
            if causal:
                future = torch.ones(end - start, k_end - k_start, dtype=torch.bool, device=q.device)
                s = s.masked_fill(future.triu(start - k_start + 1), float("-inf"))
            new_max = torch.max(row_max, s.amax(dim=-1))
            correction = (row_max - new_max).exp()
            p = (s - new_max.unsqueeze(-1)).exp()
            row_sum = row_sum * correction + p.sum(dim=-1)
            acc = acc * correction.unsqueeze(-1) + p @ v[..., k_start:k_end, :]
            row_max = new_max
        out[..., start:end, :] = acc / row_sum.unsqueeze(-1)
        lse[..., start:end] = row_max + row_sum.log()
    return out, lse
''',
}


FAMILY_E = {
    "08_efficient_mha": '''
# %% MultiHeadAttentionFused
class MultiHeadAttentionFused(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        nn.Module.__init__(self)
        if d_out % num_heads != 0:
            raise ValueError("d_out (" + str(d_out) + ") is not a multiple of num_heads (" + str(num_heads) + ")")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_qkv = nn.Linear(in_features=d_in, out_features=3 * d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(in_features=d_out, out_features=d_out)
        self.dropout = nn.Dropout(p=dropout)
        ones = torch.ones(context_length, context_length)
        future = torch.triu(ones, diagonal=1)
        self.register_buffer("mask", future == 1)

    def forward(self, x):
        batch_size = x.shape[0]
        num_tokens = x.shape[1]
        combined = self.W_qkv(x)
        queries = combined[:, :, 0:self.d_out]
        keys = combined[:, :, self.d_out:2 * self.d_out]
        values = combined[:, :, 2 * self.d_out:3 * self.d_out]
        queries = queries.reshape(batch_size, num_tokens, self.num_heads, self.head_dim)
        keys = keys.reshape(batch_size, num_tokens, self.num_heads, self.head_dim)
        values = values.reshape(batch_size, num_tokens, self.num_heads, self.head_dim)
        queries = torch.transpose(queries, 1, 2)
        keys = torch.transpose(keys, 1, 2)
        values = torch.transpose(values, 1, 2)
        keys_t = torch.transpose(keys, 2, 3)
        scores = torch.matmul(queries, keys_t)
        scale = self.head_dim ** 0.5
        scores = scores / scale
        hidden = self.mask[0:num_tokens, 0:num_tokens]
        scores = scores.masked_fill(hidden, float("-inf"))
        weights = torch.softmax(scores, dim=3)
        weights = self.dropout(weights)
        context = torch.matmul(weights, values)
        context = torch.transpose(context, 1, 2)
        context = context.reshape(batch_size, num_tokens, self.d_out)
        output = self.out_proj(context)
        return output

    def load_from(self, mha):
        weights = [mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]
        biases = [mha.W_query.bias, mha.W_key.bias, mha.W_value.bias]
        with torch.no_grad():
            for index in range(3):
                start = index * self.d_out
                end = start + self.d_out
                self.W_qkv.weight[start:end] = weights[index]
                if self.W_qkv.bias is not None:
                    self.W_qkv.bias[start:end] = biases[index]
            self.out_proj.weight.copy_(mha.out_proj.weight)
            self.out_proj.bias.copy_(mha.out_proj.bias)
        return self


# %% MultiHeadAttentionSDPA
class MultiHeadAttentionSDPA(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        nn.Module.__init__(self)
        if d_out % num_heads != 0:
            raise ValueError("d_out (" + str(d_out) + ") is not a multiple of num_heads (" + str(num_heads) + ")")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_qkv = nn.Linear(in_features=d_in, out_features=3 * d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(in_features=d_out, out_features=d_out)
        self.dropout = dropout

    def forward(self, x):
        batch_size = x.shape[0]
        num_tokens = x.shape[1]
        combined = self.W_qkv(x)
        queries = combined[:, :, 0:self.d_out]
        keys = combined[:, :, self.d_out:2 * self.d_out]
        values = combined[:, :, 2 * self.d_out:3 * self.d_out]
        queries = queries.reshape(batch_size, num_tokens, self.num_heads, self.head_dim)
        keys = keys.reshape(batch_size, num_tokens, self.num_heads, self.head_dim)
        values = values.reshape(batch_size, num_tokens, self.num_heads, self.head_dim)
        queries = torch.transpose(queries, 1, 2)
        keys = torch.transpose(keys, 1, 2)
        values = torch.transpose(values, 1, 2)
        if self.training:
            probability = self.dropout
        else:
            probability = 0.0
        context = F.scaled_dot_product_attention(queries, keys, values, dropout_p=probability, is_causal=True)
        context = torch.transpose(context, 1, 2)
        context = context.reshape(batch_size, num_tokens, self.d_out)
        output = self.out_proj(context)
        return output
''',
    "09_kv_cache": '''
# %% MultiHeadAttentionCached
class MultiHeadAttentionCached(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        nn.Module.__init__(self)
        if d_out % num_heads != 0:
            raise ValueError("d_out (" + str(d_out) + ") is not a multiple of num_heads (" + str(num_heads) + ")")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.context_length = context_length
        self.W_query = nn.Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.W_key = nn.Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.W_value = nn.Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(in_features=d_out, out_features=d_out)
        self.dropout = nn.Dropout(p=dropout)
        ones = torch.ones(context_length, context_length)
        future = torch.triu(ones, diagonal=1)
        self.register_buffer("mask", future == 1, persistent=False)
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)

    def forward(self, x, use_cache=False):
        batch_size = x.shape[0]
        num_tokens = x.shape[1]
        num_cached = 0
        if use_cache == True and self.cache_k is not None:
            num_cached = self.cache_k.shape[2]
        if num_cached + num_tokens > self.context_length:
            raise ValueError("too many tokens: " + str(num_cached + num_tokens) + " > " + str(self.context_length))
        queries = self.W_query(x)
        keys = self.W_key(x)
        values = self.W_value(x)
        queries = queries.reshape(batch_size, num_tokens, self.num_heads, self.head_dim)
        keys = keys.reshape(batch_size, num_tokens, self.num_heads, self.head_dim)
        values = values.reshape(batch_size, num_tokens, self.num_heads, self.head_dim)
        queries = torch.transpose(queries, 1, 2)
        keys = torch.transpose(keys, 1, 2)
        values = torch.transpose(values, 1, 2)
        if use_cache == True:
            if self.cache_k is not None:
                keys = torch.cat([self.cache_k, keys], dim=2)
                values = torch.cat([self.cache_v, values], dim=2)
            self.cache_k = keys
            self.cache_v = values
        keys_t = torch.transpose(keys, 2, 3)
        scores = torch.matmul(queries, keys_t)
        scale = self.head_dim ** 0.5
        scores = scores / scale
        first_row = num_cached
        last_row = num_cached + num_tokens
        hidden = self.mask[first_row:last_row, 0:last_row]
        scores = scores.masked_fill(hidden, float("-inf"))
        weights = torch.softmax(scores, dim=3)
        weights = self.dropout(weights)
        context = torch.matmul(weights, values)
        context = torch.transpose(context, 1, 2)
        context = context.reshape(batch_size, num_tokens, self.d_out)
        output = self.out_proj(context)
        return output

    def reset_cache(self):
        self.cache_k = None
        self.cache_v = None


# %% kv_cache_bytes
def kv_cache_bytes(num_layers, num_kv_heads, head_dim, context_length, bytes_per_value):
    if not num_layers > 0:
        raise ValueError("num_layers must be positive, got " + str(num_layers))
    if not num_kv_heads > 0:
        raise ValueError("num_kv_heads must be positive, got " + str(num_kv_heads))
    if not head_dim > 0:
        raise ValueError("head_dim must be positive, got " + str(head_dim))
    if not context_length > 0:
        raise ValueError("context_length must be positive, got " + str(context_length))
    if not bytes_per_value > 0:
        raise ValueError("bytes_per_value must be positive, got " + str(bytes_per_value))
    values_per_token = num_kv_heads * head_dim
    keys_and_values = 2 * values_per_token
    per_layer = keys_and_values * context_length
    all_layers = per_layer * num_layers
    total_bytes = all_layers * bytes_per_value
    return total_bytes
''',
    "10_grouped_query": '''
# %% GroupedQueryAttention
class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, num_kv_groups, qkv_bias=False):
        nn.Module.__init__(self)
        if num_heads % num_kv_groups != 0:
            raise ValueError("num_heads (" + str(num_heads) + ") is not a multiple of num_kv_groups ("
                             + str(num_kv_groups) + ")")
        if d_out % num_heads != 0:
            raise ValueError("d_out (" + str(d_out) + ") is not a multiple of num_heads (" + str(num_heads) + ")")
        self.d_out = d_out
        self.num_heads = num_heads
        self.num_kv_groups = num_kv_groups
        self.head_dim = d_out // num_heads
        self.group_size = num_heads // num_kv_groups
        kv_size = num_kv_groups * self.head_dim
        self.W_query = nn.Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.W_key = nn.Linear(in_features=d_in, out_features=kv_size, bias=qkv_bias)
        self.W_value = nn.Linear(in_features=d_in, out_features=kv_size, bias=qkv_bias)
        self.out_proj = nn.Linear(in_features=d_out, out_features=d_out)
        self.dropout = nn.Dropout(p=dropout)
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)

    def forward(self, x, use_cache=False):
        batch_size = x.shape[0]
        num_tokens = x.shape[1]
        queries = self.W_query(x)
        keys = self.W_key(x)
        values = self.W_value(x)
        queries = queries.reshape(batch_size, num_tokens, self.num_heads, self.head_dim)
        keys = keys.reshape(batch_size, num_tokens, self.num_kv_groups, self.head_dim)
        values = values.reshape(batch_size, num_tokens, self.num_kv_groups, self.head_dim)
        queries = torch.transpose(queries, 1, 2)
        keys = torch.transpose(keys, 1, 2)
        values = torch.transpose(values, 1, 2)
        if use_cache == True:
            if self.cache_k is not None:
                keys = torch.cat([self.cache_k, keys], dim=2)
                values = torch.cat([self.cache_v, values], dim=2)
            self.cache_k = keys
            self.cache_v = values
        total_tokens = keys.shape[2]
        shared_keys = []
        shared_values = []
        for group in range(self.num_kv_groups):
            for member in range(self.group_size):
                shared_keys.append(keys[:, group])
                shared_values.append(values[:, group])
        keys = torch.stack(shared_keys, dim=1)
        values = torch.stack(shared_values, dim=1)
        keys_t = torch.transpose(keys, 2, 3)
        scores = torch.matmul(queries, keys_t)
        scale = self.head_dim ** 0.5
        scores = scores / scale
        hidden = torch.zeros(num_tokens, total_tokens, dtype=torch.bool, device=x.device)
        first_position = total_tokens - num_tokens
        for row in range(num_tokens):
            position = first_position + row
            hidden[row, position + 1:] = True
        scores = scores.masked_fill(hidden, float("-inf"))
        weights = torch.softmax(scores, dim=3)
        weights = self.dropout(weights)
        context = torch.matmul(weights, values)
        context = torch.transpose(context, 1, 2)
        context = context.reshape(batch_size, num_tokens, self.d_out)
        output = self.out_proj(context)
        return output

    def reset_cache(self):
        self.cache_k = None
        self.cache_v = None
''',
    "11_sliding_window": '''
# %% sliding_window_mask
def sliding_window_mask(num_tokens, window):
    if window < 1:
        raise ValueError("window must be 1 or more, got " + str(window))
    mask = torch.ones(num_tokens, num_tokens, dtype=torch.bool)
    for query in range(num_tokens):
        first_seen = max(0, query - window + 1)
        for key in range(first_seen, query + 1):
            mask[query, key] = False
    return mask


# %% SlidingWindowAttention
class SlidingWindowAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, window, qkv_bias=False):
        nn.Module.__init__(self)
        if d_out % num_heads != 0:
            raise ValueError("d_out (" + str(d_out) + ") is not a multiple of num_heads (" + str(num_heads) + ")")
        if window < 1:
            raise ValueError("window must be 1 or more, got " + str(window))
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.window = window
        self.W_query = nn.Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.W_key = nn.Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.W_value = nn.Linear(in_features=d_in, out_features=d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(in_features=d_out, out_features=d_out)
        self.dropout = nn.Dropout(p=dropout)
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)

    def forward(self, x, use_cache=False):
        batch_size = x.shape[0]
        num_tokens = x.shape[1]
        queries = self.W_query(x)
        keys = self.W_key(x)
        values = self.W_value(x)
        queries = queries.reshape(batch_size, num_tokens, self.num_heads, self.head_dim)
        keys = keys.reshape(batch_size, num_tokens, self.num_heads, self.head_dim)
        values = values.reshape(batch_size, num_tokens, self.num_heads, self.head_dim)
        queries = torch.transpose(queries, 1, 2)
        keys = torch.transpose(keys, 1, 2)
        values = torch.transpose(values, 1, 2)
        num_cached = 0
        if use_cache == True and self.cache_k is not None:
            num_cached = self.cache_k.shape[2]
            keys = torch.cat([self.cache_k, keys], dim=2)
            values = torch.cat([self.cache_v, values], dim=2)
        total_tokens = num_cached + num_tokens
        hidden = torch.ones(num_tokens, total_tokens, dtype=torch.bool, device=x.device)
        for row in range(num_tokens):
            position = num_cached + row
            first_seen = max(0, position - self.window + 1)
            hidden[row, first_seen:position + 1] = False
        keys_t = torch.transpose(keys, 2, 3)
        scores = torch.matmul(queries, keys_t)
        scale = self.head_dim ** 0.5
        scores = scores / scale
        scores = scores.masked_fill(hidden, float("-inf"))
        weights = torch.softmax(scores, dim=3)
        weights = self.dropout(weights)
        context = torch.matmul(weights, values)
        context = torch.transpose(context, 1, 2)
        context = context.reshape(batch_size, num_tokens, self.d_out)
        if use_cache == True:
            first_kept = max(0, total_tokens - self.window)
            self.cache_k = keys[:, :, first_kept:total_tokens]
            self.cache_v = values[:, :, first_kept:total_tokens]
        output = self.out_proj(context)
        return output

    def reset_cache(self):
        self.cache_k = None
        self.cache_v = None
''',
    "12_rope": '''
# %% rope_angles
def rope_angles(head_dim, context_length, theta_base=10_000):
    if head_dim % 2 != 0:
        raise ValueError("head_dim must be even, got " + str(head_dim))
    half = head_dim // 2
    frequencies = torch.zeros(half)
    for i in range(half):
        exponent = (2 * i) / head_dim
        frequencies[i] = 1.0 / (theta_base ** exponent)
    positions = torch.arange(context_length, dtype=torch.float32)
    positions = positions.reshape(context_length, 1)
    frequencies = frequencies.reshape(1, half)
    angles = positions * frequencies
    both_halves = torch.cat([angles, angles], dim=1)
    cos = torch.cos(both_halves)
    sin = torch.sin(both_halves)
    return cos, sin


# %% apply_rope
def apply_rope(x, cos, sin, offset=0):
    num_tokens = x.shape[-2]
    head_dim = x.shape[-1]
    half = head_dim // 2
    first_row = offset
    last_row = offset + num_tokens
    cos_rows = cos[first_row:last_row, :]
    sin_rows = sin[first_row:last_row, :]
    first_half = x[..., 0:half]
    second_half = x[..., half:head_dim]
    rotated = torch.cat([-second_half, first_half], dim=-1)
    result = x * cos_rows + rotated * sin_rows
    return result
''',
    "13_tiled_attention": '''
# %% tiled_attention
def tiled_attention(q, k, v, block_q=64, block_k=64, causal=False):
    num_tokens = q.shape[-2]
    num_keys = k.shape[-2]
    head_dim = q.shape[-1]
    scale = 1.0 / (head_dim ** 0.5)
    output = torch.zeros_like(q)
    logsumexp = torch.zeros(q.shape[:-1], dtype=q.dtype, device=q.device)
    q_start = 0
    while q_start < num_tokens:
        q_end = q_start + block_q
        if q_end > num_tokens:
            q_end = num_tokens
        query_block = q[..., q_start:q_end, :]
        running_max = torch.full(query_block.shape[:-1], float("-inf"), dtype=q.dtype, device=q.device)
        running_sum = torch.zeros(query_block.shape[:-1], dtype=q.dtype, device=q.device)
        accumulator = torch.zeros(query_block.shape, dtype=q.dtype, device=q.device)
        k_start = 0
        while k_start < num_keys:
            if causal == True and k_start >= q_end:
                break
            k_end = k_start + block_k
            if k_end > num_keys:
                k_end = num_keys
            key_block = k[..., k_start:k_end, :]
            value_block = v[..., k_start:k_end, :]
            scores = torch.matmul(query_block, torch.transpose(key_block, -2, -1))
            scores = scores * scale
            if causal == True:
                query_positions = torch.arange(q_start, q_end, device=q.device)
                key_positions = torch.arange(k_start, k_end, device=q.device)
                future = key_positions.reshape(1, -1) > query_positions.reshape(-1, 1)
                scores = scores.masked_fill(future, float("-inf"))
            block_max = torch.amax(scores, dim=-1)
            new_max = torch.maximum(running_max, block_max)
            correction = torch.exp(running_max - new_max)
            exponentials = torch.exp(scores - new_max.unsqueeze(-1))
            running_sum = running_sum * correction
            running_sum = running_sum + torch.sum(exponentials, dim=-1)
            accumulator = accumulator * correction.unsqueeze(-1)
            accumulator = accumulator + torch.matmul(exponentials, value_block)
            running_max = new_max
            k_start = k_end
        output[..., q_start:q_end, :] = accumulator / running_sum.unsqueeze(-1)
        logsumexp[..., q_start:q_end] = running_max + torch.log(running_sum)
        q_start = q_end
    return output, logsumexp
''',
}


FAMILY_F = {
    "08_efficient_mha": '''
# %% MultiHeadAttentionFused
class MultiHeadAttentionFused(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError(f"{num_heads=} does not divide {d_out=}")
        self.h = num_heads
        self.W_qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).triu(1))

    def forward(self, x):
        t = x.shape[1]
        q, k, v = self.W_qkv(x).unflatten(-1, (3, self.h, -1)).permute(2, 0, 3, 1, 4).unbind(0)
        w = (q @ k.mT / k.shape[-1] ** 0.5).masked_fill(self.mask[:t, :t], float("-inf")).softmax(-1)
        return self.out_proj((self.dropout(w) @ v).transpose(1, 2).flatten(2))

    def load_from(self, mha):
        with torch.no_grad():
            for part in ("weight", "bias"):
                if getattr(self.W_qkv, part) is not None:
                    getattr(self.W_qkv, part).copy_(
                        torch.cat([getattr(getattr(mha, n), part) for n in ("W_query", "W_key", "W_value")]))
            self.out_proj.load_state_dict(mha.out_proj.state_dict())
        return self


# %% MultiHeadAttentionSDPA
class MultiHeadAttentionSDPA(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError(f"{num_heads=} does not divide {d_out=}")
        self.h, self.dropout = num_heads, dropout
        self.W_qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x):
        q, k, v = self.W_qkv(x).unflatten(-1, (3, self.h, -1)).permute(2, 0, 3, 1, 4).unbind(0)
        out = F.scaled_dot_product_attention(q, k, v, dropout_p=self.training and self.dropout or 0.0, is_causal=True)
        return self.out_proj(out.transpose(1, 2).flatten(2))
''',
    "09_kv_cache": '''
# %% MultiHeadAttentionCached
class MultiHeadAttentionCached(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError(f"{num_heads=} does not divide {d_out=}")
        self.h, self.ctx = num_heads, context_length
        for name in ("W_query", "W_key", "W_value"):
            setattr(self, name, nn.Linear(d_in, d_out, bias=qkv_bias))
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length, dtype=torch.bool).triu(1),
                             persistent=False)
        for name in ("cache_k", "cache_v"):
            self.register_buffer(name, None, persistent=False)

    def forward(self, x, use_cache=False):
        t = x.shape[1]
        c = self.cache_k.shape[2] if use_cache and self.cache_k is not None else 0
        if c + t > self.ctx:
            raise ValueError(f"{c=} + {t=} exceeds context_length={self.ctx}")
        q, k, v = (f(x).unflatten(-1, (self.h, -1)).transpose(1, 2) for f in (self.W_query, self.W_key, self.W_value))
        if use_cache:
            if c:
                k, v = torch.cat((self.cache_k, k), 2), torch.cat((self.cache_v, v), 2)
            self.cache_k, self.cache_v = k, v
        w = (q @ k.mT / k.shape[-1] ** 0.5).masked_fill(self.mask[c:c + t, :c + t], float("-inf")).softmax(-1)
        return self.out_proj((self.dropout(w) @ v).transpose(1, 2).flatten(2))

    def reset_cache(self):
        self.cache_k = self.cache_v = None


# %% kv_cache_bytes
def kv_cache_bytes(num_layers, num_kv_heads, head_dim, context_length, bytes_per_value):
    given = dict(num_layers=num_layers, num_kv_heads=num_kv_heads, head_dim=head_dim,
                 context_length=context_length, bytes_per_value=bytes_per_value)
    if bad := next((k for k, v in given.items() if not v > 0), None):
        raise ValueError(f"{bad}={given[bad]!r} must be positive")
    return 2 * num_layers * num_kv_heads * head_dim * context_length * bytes_per_value
''',
    "10_grouped_query": '''
# %% GroupedQueryAttention
class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        if num_heads % num_kv_groups or d_out % num_heads:
            raise ValueError(f"need {num_kv_groups=} | {num_heads=} | {d_out=}")
        self.h, self.g = num_heads, num_kv_groups
        kv = num_kv_groups * (d_out // num_heads)
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key, self.W_value = (nn.Linear(d_in, kv, bias=qkv_bias) for _ in range(2))
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        for name in ("cache_k", "cache_v"):
            self.register_buffer(name, None, persistent=False)

    def forward(self, x, use_cache=False):
        t = x.shape[1]
        q = self.W_query(x).unflatten(-1, (self.h, -1)).transpose(1, 2)
        k, v = (f(x).unflatten(-1, (self.g, -1)).transpose(1, 2) for f in (self.W_key, self.W_value))
        if use_cache:
            if self.cache_k is not None:
                k, v = torch.cat((self.cache_k, k), 2), torch.cat((self.cache_v, v), 2)
            self.cache_k, self.cache_v = k, v
        n = k.shape[2]
        k, v = (z.repeat_interleave(self.h // self.g, 1) for z in (k, v))
        hide = torch.ones(t, n, dtype=torch.bool, device=x.device).triu(n - t + 1)
        w = (q @ k.mT / k.shape[-1] ** 0.5).masked_fill(hide, float("-inf")).softmax(-1)
        return self.out_proj((self.dropout(w) @ v).transpose(1, 2).flatten(2))

    def reset_cache(self):
        self.cache_k = self.cache_v = None
''',
    "11_sliding_window": '''
# %% sliding_window_mask
def sliding_window_mask(num_tokens, window):
    if window < 1:
        raise ValueError(f"{window=} must be >= 1")
    d = torch.arange(num_tokens)[:, None] - torch.arange(num_tokens)
    return (d < 0) | (d >= window)


# %% SlidingWindowAttention
class SlidingWindowAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, window, qkv_bias=False):
        super().__init__()
        if d_out % num_heads or window < 1:
            raise ValueError(f"need {num_heads=} | {d_out=} and {window=} >= 1")
        self.h, self.window = num_heads, window
        for name in ("W_query", "W_key", "W_value"):
            setattr(self, name, nn.Linear(d_in, d_out, bias=qkv_bias))
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        for name in ("cache_k", "cache_v"):
            self.register_buffer(name, None, persistent=False)

    def forward(self, x, use_cache=False):
        t = x.shape[1]
        q, k, v = (f(x).unflatten(-1, (self.h, -1)).transpose(1, 2) for f in (self.W_query, self.W_key, self.W_value))
        c = 0
        if use_cache and self.cache_k is not None:
            c = self.cache_k.shape[2]
            k, v = torch.cat((self.cache_k, k), 2), torch.cat((self.cache_v, v), 2)
        d = torch.arange(c, c + t, device=x.device)[:, None] - torch.arange(c + t, device=x.device)
        w = (q @ k.mT / k.shape[-1] ** 0.5).masked_fill((d < 0) | (d >= self.window), float("-inf")).softmax(-1)
        if use_cache:
            self.cache_k, self.cache_v = k[..., -self.window:, :], v[..., -self.window:, :]
        return self.out_proj((self.dropout(w) @ v).transpose(1, 2).flatten(2))

    def reset_cache(self):
        self.cache_k = self.cache_v = None
''',
    "12_rope": '''
# %% rope_angles
def rope_angles(head_dim, context_length, theta_base=10_000):
    if head_dim % 2:
        raise ValueError(f"{head_dim=} must be even")
    inv = torch.arange(0, head_dim, 2).div(head_dim).mul(-1).exp2().pow(torch.tensor(theta_base).float().log2())
    ang = torch.arange(context_length).float().outer(inv).tile(1, 2)
    return ang.cos(), ang.sin()


# %% apply_rope
def apply_rope(x, cos, sin, offset=0):
    x1, x2 = x.chunk(2, dim=-1)
    c, s = (z[offset:offset + x.shape[-2]] for z in (cos, sin))
    return x * c + torch.cat((-x2, x1), -1) * s
''',
    "13_tiled_attention": '''
# %% tiled_attention
def tiled_attention(q, k, v, block_q=64, block_k=64, causal=False):
    T, d = q.shape[-2:]
    outs, lses = [], []
    for i in range(0, T, block_q):
        qi = q[..., i:i + block_q, :] / d ** 0.5
        rows = torch.arange(i, i + qi.shape[-2], device=q.device)[:, None]
        m = torch.full(qi.shape[:-1], -torch.inf, dtype=q.dtype, device=q.device)
        l, acc = torch.zeros_like(m), torch.zeros_like(qi)
        for j in range(0, min(k.shape[-2], int(rows[-1]) + 1) if causal else k.shape[-2], block_k):
            s = qi @ k[..., j:j + block_k, :].mT
            if causal:
                s = s.masked_fill(torch.arange(j, j + s.shape[-1], device=q.device) > rows, -torch.inf)
            m, old = torch.maximum(m, s.amax(-1)), m
            p, a = (s - m[..., None]).exp(), (old - m).exp()
            l, acc = a * l + p.sum(-1), a[..., None] * acc + p @ v[..., j:j + block_k, :]
        outs.append(acc / l[..., None])
        lses.append(m + l.log())
    return torch.cat(outs, -2), torch.cat(lses, -1)
''',
}
