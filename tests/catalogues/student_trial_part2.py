"""What the student trial of part 2 wrote, as data: per section, a correct version of each graded name in a
style of its own (not solutions/'s), and realistic mistakes made on top of it, none of them already in the
section's catalogue when the trial began. benchmarks/student_trial_part2.py grades them and writes the table;
each section's catalogue (mistakes_<id>.py) takes the styles and, with the checks each loses, the mistakes whose
first line is right (trial_styles, trial_mistakes), so that the tests hold them.

Each entry: the graded name it is about, what the student wrote (one line), and the definitions that replace
the student's correct version (STYLE) for that name; `says` (for a mistake) the words the first failing line
of its function should hold, "" where no line names it.
"""
from __future__ import annotations

from support import Mistake

STYLE = {
    # chunk + unflatten, einsum, a bool triu buffer, load_from under the decorator
    "08_efficient_mha": {
        "MultiHeadAttentionFused": """
class MultiHeadAttentionFused(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError(f"num_heads={num_heads} does not divide d_out={d_out}")
        self.h, self.dh, self.d_out = num_heads, d_out // num_heads, d_out
        self.W_qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        future = torch.ones(context_length, context_length, dtype=torch.bool).triu(1)
        self.register_buffer("future", future, persistent=False)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = (part.unflatten(-1, (self.h, self.dh)).transpose(1, 2) for part in self.W_qkv(x).chunk(3, dim=-1))
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / self.dh ** 0.5
        scores = scores.masked_fill(self.future[:t, :t], -torch.inf)
        weights = self.dropout(scores.softmax(dim=-1))
        ctx = torch.einsum("bhqk,bhkd->bqhd", weights, v).flatten(2)
        return self.out_proj(ctx)

    @torch.no_grad()
    def load_from(self, mha):
        self.W_qkv.weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight], 0))
        if self.W_qkv.bias is not None:
            self.W_qkv.bias.copy_(torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias]))
        self.out_proj.weight.copy_(mha.out_proj.weight)
        self.out_proj.bias.copy_(mha.out_proj.bias)
        return self
""",
        "MultiHeadAttentionSDPA": """
class MultiHeadAttentionSDPA(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"num_heads={num_heads} does not divide d_out={d_out}")
        self.num_heads = num_heads
        self.W_qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = dropout

    def forward(self, x):
        b, t = x.shape[0], x.shape[1]
        qkv = self.W_qkv(x).reshape(b, t, 3, self.num_heads, -1).transpose(1, 3)  # (b, h, 3, t, hd)
        q, k, v = qkv.unbind(dim=2)
        ctx = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout * self.training, is_causal=True)
        return self.out_proj(ctx.transpose(1, 2).reshape(b, t, -1))
""",
    },
    # a helper method for the split, the cache as registered buffers, the mask read with an offset
    "09_kv_cache": {
        "MultiHeadAttentionCached": """
class MultiHeadAttentionCached(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads:
            raise ValueError(f"num_heads={num_heads} must divide d_out={d_out}")
        self.num_heads, self.head_dim, self.context_length = num_heads, d_out // num_heads, context_length
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.ones(context_length, context_length).triu(1).bool(), persistent=False)
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)

    def heads(self, t):
        b, n, _ = t.shape
        return t.reshape(b, n, self.num_heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, use_cache=False):
        b, n, _ = x.shape
        q, k, v = self.heads(self.W_query(x)), self.heads(self.W_key(x)), self.heads(self.W_value(x))
        past = 0
        if use_cache:
            if self.cache_k is not None:
                past = self.cache_k.shape[2]
            if past + n > self.context_length:
                raise ValueError(f"{past} cached + {n} new tokens exceed context_length={self.context_length}")
            if past:
                k = torch.cat([self.cache_k, k], dim=2)
                v = torch.cat([self.cache_v, v], dim=2)
            self.cache_k, self.cache_v = k, v
        elif n > self.context_length:
            raise ValueError(f"{n} tokens exceed context_length={self.context_length}")
        s = q @ k.transpose(-1, -2) / self.head_dim ** 0.5
        s = s.masked_fill(self.mask[past:past + n, :past + n], float("-inf"))
        w = self.dropout(torch.softmax(s, dim=-1))
        out = (w @ v).permute(0, 2, 1, 3).reshape(b, n, -1)
        return self.out_proj(out)

    def reset_cache(self):
        self.cache_k = self.cache_v = None
""",
        "kv_cache_bytes": """
def kv_cache_bytes(num_layers, num_kv_heads, head_dim, context_length, bytes_per_value):
    args = dict(num_layers=num_layers, num_kv_heads=num_kv_heads, head_dim=head_dim,
                context_length=context_length, bytes_per_value=bytes_per_value)
    for name, value in args.items():
        if not value > 0:
            raise ValueError(f"{name} must be positive, got {value}")
    total = 2
    for value in args.values():
        total *= value
    return total
""",
    },
    # unflatten, the groups expanded (not repeat_interleave), the causal mask from positions
    "10_grouped_query": {
        "GroupedQueryAttention": """
class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        if num_heads % num_kv_groups:
            raise ValueError(f"num_heads={num_heads} is not divisible by num_kv_groups={num_kv_groups}")
        if d_out % num_heads:
            raise ValueError(f"d_out={d_out} is not divisible by num_heads={num_heads}")
        self.num_heads, self.groups, self.head_dim = num_heads, num_kv_groups, d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)

    def forward(self, x, use_cache=False):
        b, n, _ = x.shape
        q = self.W_query(x).unflatten(-1, (self.num_heads, self.head_dim)).transpose(1, 2)
        k = self.W_key(x).unflatten(-1, (self.groups, self.head_dim)).transpose(1, 2)
        v = self.W_value(x).unflatten(-1, (self.groups, self.head_dim)).transpose(1, 2)
        if use_cache:
            if self.cache_k is not None:
                k = torch.cat((self.cache_k, k), dim=2)
                v = torch.cat((self.cache_v, v), dim=2)
            self.cache_k, self.cache_v = k, v
        total = k.shape[2]
        rep = self.num_heads // self.groups
        k = k[:, :, None].expand(b, self.groups, rep, total, self.head_dim).reshape(b, self.num_heads, total, -1)
        v = v[:, :, None].expand(b, self.groups, rep, total, self.head_dim).reshape(b, self.num_heads, total, -1)
        scores = q @ k.transpose(2, 3) / self.head_dim ** 0.5
        pos_q = torch.arange(total - n, total, device=x.device)[:, None]
        pos_k = torch.arange(total, device=x.device)[None, :]
        scores = scores.masked_fill(pos_k > pos_q, float("-inf"))
        w = self.dropout(scores.softmax(-1))
        return self.out_proj((w @ v).transpose(1, 2).reshape(b, n, -1))

    def reset_cache(self):
        self.cache_k, self.cache_v = None, None
""",
    },
    # triu | tril; the layer through F.scaled_dot_product_attention with the band (inverted) as attn_mask
    "11_sliding_window": {
        "sliding_window_mask": """
def sliding_window_mask(num_tokens, window):
    if window < 1:
        raise ValueError(f"window must be at least 1, got {window}")
    ones = torch.ones(num_tokens, num_tokens, dtype=torch.bool)
    return ones.triu(1) | ones.tril(-window)
""",
        "SlidingWindowAttention": """
class SlidingWindowAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, window, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"num_heads={num_heads} does not divide d_out={d_out}")
        if window < 1:
            raise ValueError(f"window must be at least 1, got {window}")
        self.h, self.hd, self.window = num_heads, d_out // num_heads, window
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.cache_k = self.cache_v = None

    def forward(self, x, use_cache=False):
        b, t, _ = x.shape
        q, k, v = (layer(x).view(b, t, self.h, self.hd).transpose(1, 2)
                   for layer in (self.W_query, self.W_key, self.W_value))
        c = 0
        if use_cache and self.cache_k is not None:
            c = self.cache_k.shape[2]
            k, v = torch.cat([self.cache_k, k], 2), torch.cat([self.cache_v, v], 2)
        hidden = sliding_window_mask(c + t, self.window)[c:].to(x.device)
        p = self.dropout.p if self.training else 0.0
        ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=~hidden, dropout_p=p)
        if use_cache:
            self.cache_k, self.cache_v = k[:, :, -self.window:], v[:, :, -self.window:]
        return self.out_proj(ctx.transpose(1, 2).reshape(b, t, -1))

    def reset_cache(self):
        self.cache_k = self.cache_v = None
""",
    },
    # 1 / theta ** (2i / d) with torch.outer and .repeat(1, 2); chunk for the halves
    "12_rope": {
        "rope_angles": """
def rope_angles(head_dim, context_length, theta_base=10_000):
    if head_dim % 2 != 0:
        raise ValueError(f"head_dim must be even, got head_dim={head_dim}")
    exponents = torch.arange(head_dim // 2, dtype=torch.float32) * 2 / head_dim
    freqs = 1.0 / theta_base ** exponents
    angles = torch.outer(torch.arange(context_length, dtype=torch.float32), freqs).repeat(1, 2)
    return angles.cos(), angles.sin()
""",
        "apply_rope": """
def apply_rope(x, cos, sin, offset=0):
    n = x.size(-2)
    x1, x2 = x.chunk(2, dim=-1)
    c, s = cos[offset:offset + n], sin[offset:offset + n]
    return x * c + torch.cat([-x2, x1], dim=-1) * s
""",
    },
    # blocks of queries scaled once, the causal loop stopped by `break`, outputs collected and concatenated
    "13_tiled_attention": {
        "tiled_attention": """
def tiled_attention(q, k, v, block_q=64, block_k=64, causal=False):
    T, d = q.shape[-2], q.shape[-1]
    scale = d ** -0.5
    outs, lses = [], []
    for qs in range(0, T, block_q):
        qe = min(qs + block_q, T)
        qb = q[..., qs:qe, :] * scale
        m = torch.full(qb.shape[:-1], float("-inf"), dtype=q.dtype, device=q.device)
        l = torch.zeros_like(m)
        acc = torch.zeros(*qb.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device)
        for ks in range(0, T, block_k):
            if causal and ks > qe - 1:
                break
            ke = min(ks + block_k, T)
            s = qb @ k[..., ks:ke, :].transpose(-1, -2)
            if causal:
                hide = torch.arange(ks, ke, device=q.device)[None, :] > torch.arange(qs, qe, device=q.device)[:, None]
                s = s.masked_fill(hide, float("-inf"))
            m_new = torch.maximum(m, s.amax(-1))
            p = torch.exp(s - m_new[..., None])
            shrink = torch.exp(m - m_new)
            l = l * shrink + p.sum(-1)
            acc = acc * shrink[..., None] + p @ v[..., ks:ke, :]
            m = m_new
        outs.append(acc / l[..., None])
        lses.append(m + l.log())
    return torch.cat(outs, dim=-2), torch.cat(lses, dim=-1)
""",
    },
}


def edited(section_id: str, name: str, old: str, new: str) -> dict:
    """The student's correct `name` of STYLE with one piece of it written otherwise: {name: code}."""
    code = STYLE[section_id][name]
    assert code.count(old) == 1, f"{section_id} {name}: {old!r} is not once in the correct version"
    return {name: code.replace(old, new)}


def mistake(section_id, name, what, old, new, says="", knowable="", hint=""):
    """knowable: how a check could name a mistake whose first line does not (its output gives it away);
    hint: the hint of autograder/core/hints.py its error fits (its `mistake`), as Mistake's."""
    return {"section": section_id, "name": name, "what": what, "replacements": edited(section_id, name, old, new),
            "says": says, "knowable": knowable, "hint": hint}


S08, S09, S10, S11, S12, S13 = ("08_efficient_mha", "09_kv_cache", "10_grouped_query", "11_sliding_window",
                                "12_rope", "13_tiled_attention")
FUSED, SDPA = "MultiHeadAttentionFused", "MultiHeadAttentionSDPA"
CACHED, BYTES = "MultiHeadAttentionCached", "kv_cache_bytes"
GQA = "GroupedQueryAttention"
MASK, SWA = "sliding_window_mask", "SlidingWindowAttention"
ANGLES, ROPE = "rope_angles", "apply_rope"
TILED = "tiled_attention"

MISTAKES = [
    # 08
    mistake(S08, FUSED, "heads never moved before the tokens (unflatten without transpose)",
            ".unflatten(-1, (self.h, self.dh)).transpose(1, 2) for", ".unflatten(-1, (self.h, self.dh)) for"),
    mistake(S08, FUSED, "masked scores filled with 0 instead of -inf",
            "self.future[:t, :t], -torch.inf)", "self.future[:t, :t], 0.0)",
            says="filled with 0 instead of -inf"),
    mistake(S08, FUSED, "softmax over the queries (dim=-2)", "scores.softmax(dim=-1)", "scores.softmax(dim=-2)",
            says="softmax over dim=-2 (over the queries)"),
    mistake(S08, FUSED, "heads combined without moving the tokens back (bhqd flattened)",
            'torch.einsum("bhqk,bhkd->bqhd", weights, v).flatten(2)',
            'torch.einsum("bhqk,bhkd->bhqd", weights, v).reshape(b, t, self.d_out)', says="without swapping H and T back"),
    mistake(S08, FUSED, "load_from replaces W_qkv.weight by a new Parameter",
            "self.W_qkv.weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight], 0))",
            "self.W_qkv.weight = nn.Parameter(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight], 0))",
            says="a parameter replaced (a new nn.Parameter or layer)"),
    mistake(S08, FUSED, "load_from stacks the transposed weights (notebook 03's copy)",
            "torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight], 0)",
            "torch.cat([mha.W_query.weight.T, mha.W_key.weight.T, mha.W_value.weight.T], 1)"),
    mistake(S08, SDPA, "out_proj without bias", "self.out_proj = nn.Linear(d_out, d_out)",
            "self.out_proj = nn.Linear(d_out, d_out, bias=False)", says="out_proj made without its bias"),
    mistake(S08, SDPA, "SDPA given (b, T, heads, head_dim): attention across heads",
            ".transpose(1, 3)  # (b, h, 3, t, hd)\n        q, k, v = qkv.unbind(dim=2)",
            "\n        q, k, v = qkv.unbind(dim=2)", says="given (b, T, num_heads, head_dim)"),
    # 09
    mistake(S09, CACHED, "num_cached read after the new keys are appended",
            """            if past:
                k = torch.cat([self.cache_k, k], dim=2)
                v = torch.cat([self.cache_v, v], dim=2)
            self.cache_k, self.cache_v = k, v""",
            """            if past:
                k = torch.cat([self.cache_k, k], dim=2)
                v = torch.cat([self.cache_v, v], dim=2)
            self.cache_k, self.cache_v = k, v
            past = k.shape[2]"""),
    mistake(S09, CACHED, "context_length checked against the new tokens only, not cache + new",
            "if past + n > self.context_length:", "if n > self.context_length:", says="should raise ValueError"),
    mistake(S09, CACHED, "reset_cache leaves empty tensors instead of None",
            "self.cache_k = self.cache_v = None", "self.cache_k = self.cache_v = torch.empty(0)",
            says="an empty tensor (torch.empty(0), say) kept as the empty cache",
            hint="an empty tensor kept as the empty cache, where an empty cache is None"),
    mistake(S09, BYTES, "zero accepted (value < 0 refused only)", "if not value > 0:", "if value < 0:", says="should raise ValueError"),
    mistake(S09, BYTES, "a ValueError that names no argument",
            """    for name, value in args.items():
        if not value > 0:
            raise ValueError(f"{name} must be positive, got {value}")""",
            """    if min(args.values()) <= 0:
        raise ValueError("every argument must be positive")""", says="should name num_layers"),
    mistake(S09, BYTES, "bytes_per_value read as bits (divided by 8)", "    return total", "    return total // 8", says="read as bits"),
    # 10
    mistake(S10, GQA, "group size divided the wrong way round", "rep = self.num_heads // self.groups",
            "rep = self.groups // self.num_heads"),
    mistake(S10, GQA, "values never repeated for the group",
            "v = v[:, :, None].expand(b, self.groups, rep, total, self.head_dim).reshape(b, self.num_heads, total, -1)",
            "v = v"),
    mistake(S10, GQA, "no ValueError when num_heads does not divide d_out",
            """        if d_out % num_heads:
            raise ValueError(f"d_out={d_out} is not divisible by num_heads={num_heads}")
""", "", says="should raise ValueError"),
    mistake(S10, GQA, "cache appended on the groups' dim (dim=1)",
            """k = torch.cat((self.cache_k, k), dim=2)
                v = torch.cat((self.cache_v, v), dim=2)""",
            """k = torch.cat((self.cache_k, k), dim=1)
                v = torch.cat((self.cache_v, v), dim=1)""", says="the cache concatenated along dim 1, the heads",
            hint="the cache concatenated along dim 1, the heads, instead of dim 2, the tokens"),
    mistake(S10, GQA, "out_proj without bias (Llama's)", "self.out_proj = nn.Linear(d_out, d_out)",
            "self.out_proj = nn.Linear(d_out, d_out, bias=False)", says="out_proj made without its bias"),
    mistake(S10, GQA, "keys split into num_heads heads",
            "k = self.W_key(x).unflatten(-1, (self.groups, self.head_dim))",
            "k = self.W_key(x).unflatten(-1, (self.num_heads, -1))"),
    # 11
    mistake(S11, MASK, "mask returned as 0/1 floats", "return ones.triu(1) | ones.tril(-window)",
            "return (ones.triu(1) | ones.tril(-window)).float()", says="should be a bool tensor"),
    mistake(S11, MASK, "symmetric band |i - j| >= window (the near future visible)",
            """    ones = torch.ones(num_tokens, num_tokens, dtype=torch.bool)
    return ones.triu(1) | ones.tril(-window)""",
            """    pos = torch.arange(num_tokens)
    return (pos[:, None] - pos[None, :]).abs() >= window""", says="a symmetric band"),
    mistake(S11, MASK, "window=0 accepted (only negative windows refused)", "if window < 1:", "if window < 0:", says="should raise ValueError"),
    mistake(S11, SWA, "the band mask given to SDPA as is (SDPA's True means 'may attend')",
            "attn_mask=~hidden", "attn_mask=hidden", says="handed as it is to F.scaled_dot_product_attention"),
    mistake(S11, SWA, "cache trimmed on the heads' dim (k[:, -window:])",
            "k[:, :, -self.window:], v[:, :, -self.window:]", "k[:, -self.window:], v[:, -self.window:]",
            says="cache not trimmed"),
    mistake(S11, SWA, "use_cache=False writes the cache too", "        if use_cache:\n            self.cache_k",
            "        if True:\n            self.cache_k", says="forward without use_cache wrote the cache"),
    # 12
    mistake(S12, ANGLES, "the minus of the exponent forgotten (frequencies grow)", "freqs = 1.0 / theta_base ** exponents",
            "freqs = theta_base ** exponents", says="the minus of the exponent forgotten"),
    mistake(S12, ANGLES, "tables of head_dim / 2 columns (angles not doubled)", ".repeat(1, 2)", "", says="got (6, 2)"),
    mistake(S12, ANGLES, "integer division in the exponent (every frequency 1)",
            "exponents = torch.arange(head_dim // 2, dtype=torch.float32) * 2 / head_dim",
            "exponents = torch.arange(0, head_dim, 2) // head_dim", says="integer division in the exponent"),
    mistake(S12, ROPE, "rows cos[offset:T] (the end not offset)", "cos[offset:offset + n], sin[offset:offset + n]",
            "cos[offset:n], sin[offset:n]", says="offset"),
    mistake(S12, ROPE, "rotate_half concatenated without dim (on dim 0)", "torch.cat([-x2, x1], dim=-1)",
            "torch.cat([-x2, x1])"),
    mistake(S12, ROPE, "T read from x.shape[1]", "n = x.size(-2)", "n = x.size(1)", says="x.shape[-2]"),
    # 13
    mistake(S13, TILED, "causal mask of a tile built from positions inside the tile",
            "torch.arange(ks, ke, device=q.device)[None, :] > torch.arange(qs, qe, device=q.device)[:, None]",
            "torch.arange(ke - ks, device=q.device)[None, :] > torch.arange(qe - qs, device=q.device)[:, None]", says="positions inside the tile"),
    mistake(S13, TILED, "rescale factor inverted, exp(m_new - m)", "shrink = torch.exp(m - m_new)",
            "shrink = torch.exp(m_new - m)", says="rescale factor upside down"),
    mistake(S13, TILED, "causal loop stops at the first key block after the block's first query",
            "if causal and ks > qe - 1:", "if causal and ks > qs:", says="diagonal crosses skipped"),
    mistake(S13, TILED, "last partial block of queries dropped (range(T // block_q))",
            """    for qs in range(0, T, block_q):
        qe = min(qs + block_q, T)""",
            """    for i in range(T // block_q):
        qs, qe = i * block_q, (i + 1) * block_q""", says="last block dropped"),
    mistake(S13, TILED, "queries scaled in place (q changed)", "qb = q[..., qs:qe, :] * scale",
            "qb = q[..., qs:qe, :]\n        qb *= scale", says="modified its argument"),
]

CORRECT = [{"section": section_id, "name": name, "what": "correct, own style", "replacements": {name: code},
            "says": "", "knowable": ""} for section_id, styles in STYLE.items() for name, code in styles.items()]


def trial_styles(section_id: str) -> list[dict]:
    """The student's correct style of each graded name of the section, as the catalogue's STYLES hold them."""
    return [{name: code} for name, code in STYLE[section_id].items()]


def trial_mistakes(section_id: str, loses: dict) -> list:
    """The section's trial mistakes that `loses` (what -> the titles of the checks it loses) names, as Mistakes:
    a mistake the grade does not catch, or whose first line names another, has no entry there."""
    return [Mistake(m["what"], m["replacements"], loses[m["what"]], says=m["says"], hint=m["hint"])
            for m in MISTAKES if m["section"] == section_id and m["what"] in loses]
