"""Section 09's catalogue: common mistakes, each with the checks it must lose, and other correct styles."""
from support import Mistake
from catalogues.student_trial_part2 import trial_mistakes, trial_styles

SECTION = "09_kv_cache"

# A correct MultiHeadAttentionCached in a style of its own (a split helper, buffers registered empty, the cache in
# the attention's layout); most mistakes below are one edit of it.
CACHED = """
class MultiHeadAttentionCached(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_out={d_out} must be a multiple of num_heads={num_heads}")
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.context_length = context_length
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        full = torch.ones(context_length, context_length, dtype=torch.bool)
        self.register_buffer("mask", torch.triu(full, diagonal=1), persistent=False)
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)

    def split(self, y):
        b, t, _ = y.shape
        return y.view(b, t, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x, use_cache=False):
        b, t, _ = x.shape
        q, k, v = self.split(self.W_query(x)), self.split(self.W_key(x)), self.split(self.W_value(x))
        past = self.cache_k.shape[2] if use_cache and self.cache_k is not None else 0
        if past + t > self.context_length:
            raise ValueError(f"{past + t} tokens exceed context_length={self.context_length}")
        if use_cache:
            if self.cache_k is not None:
                k = torch.cat([self.cache_k, k], dim=2)
                v = torch.cat([self.cache_v, v], dim=2)
            self.cache_k, self.cache_v = k, v
        scores = (q @ k.transpose(2, 3)).masked_fill(self.mask[past:past + t, :past + t], float("-inf"))
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        context = (weights @ v).transpose(1, 2).reshape(b, t, self.d_out)
        return self.out_proj(context)

    def reset_cache(self):
        self.cache_k, self.cache_v = None, None
"""

BYTES = """
def kv_cache_bytes(num_layers, num_kv_heads, head_dim, context_length, bytes_per_value):
    for name, value in (("num_layers", num_layers), ("num_kv_heads", num_kv_heads), ("head_dim", head_dim),
                        ("context_length", context_length), ("bytes_per_value", bytes_per_value)):
        if value <= 0:
            raise ValueError(f"{name} must be positive, got {value}")
    return 2 * num_layers * num_kv_heads * head_dim * context_length * bytes_per_value
"""


def edited(name, source, *edits):
    """source with each (old, new) replacement made (every occurrence; each must occur), as {name: source}."""
    for old, new in edits:
        assert old in source, old
        source = source.replace(old, new)
    return {name: source}


def cached(*edits):
    return edited("MultiHeadAttentionCached", CACHED, *edits)


def sized(*edits):
    return edited("kv_cache_bytes", BYTES, *edits)


MASK_LINE = 'masked_fill(self.mask[past:past + t, :past + t], float("-inf"))'
FULL_DOC = "without the cache gives notebook 06's documented"
DECODE_DOC = "decoding the worked example one token at a time"
PROMPT_DOC = "decoding a prompt of four tokens"
ROWS = "projects each token once"
RESET = "reset_cache empties the cache"
UNTOUCHED = "use_cache=False leaves the cache alone"
BATCH = "decodes a batch of two different sequences"
CACHED_REF = "MultiHeadAttentionCached matches the reference"
PARAMS = "MultiHeadAttentionCached creates W_query"
CONTEXT = "would outgrow context_length"
HEADS = "d_out is not divisible by num_heads"
DEVICE = "MultiHeadAttentionCached works on any device"
BUFFERS = "keeps its cache in buffers"
TRAIN = "dropout acts in train mode"
BYTES_DOC = "kv_cache_bytes gives the documented sizes"
BYTES_FORMULA = "kv_cache_bytes counts a key and a value"
BYTES_ERROR = "kv_cache_bytes raises ValueError"
BYTES_REF = "kv_cache_bytes matches the reference"
DECODING = [DECODE_DOC, PROMPT_DOC, BATCH, CACHED_REF]

MISTAKES = [
    Mistake("mask not offset by the cache", cached(
        (MASK_LINE, 'masked_fill(self.mask[:t, :past + t], float("-inf"))')),
        DECODING, says="not offset by the cache"),
    Mistake("no causal mask on a cached call", cached(
        ("        scores = (q @ k.transpose(2, 3)).masked_fill(", "        scores = q @ k.transpose(2, 3)\n"
         "        if not use_cache:  # one new token at a time needs no mask\n"
         "            scores = scores.masked_fill("),
        (MASK_LINE, 'masked_fill(self.mask[:t, :t], float("-inf"))')),
        [PROMPT_DOC, BATCH, CACHED_REF], says="no causal mask on a cached call"),
    Mistake("cache re-projects every token at each step", cached(
        ("        q, k, v = self.split(self.W_query(x)), self.split(self.W_key(x)), self.split(self.W_value(x))\n"
         "        past = self.cache_k.shape[2] if use_cache and self.cache_k is not None else 0\n",
         "        past = self.cache_k.shape[1] if use_cache and self.cache_k is not None else 0\n"
         "        seen = torch.cat([self.cache_k, x], dim=1) if past else x\n"
         "        q = self.split(self.W_query(x))\n"
         "        k, v = self.split(self.W_key(seen)), self.split(self.W_value(seen))\n"),
        ("""            if self.cache_k is not None:
                k = torch.cat([self.cache_k, k], dim=2)
                v = torch.cat([self.cache_v, v], dim=2)
            self.cache_k, self.cache_v = k, v""", """            self.cache_k = seen""")),
        [ROWS], says="every token projected again"),
    Mistake("cache concatenated on the head dim", cached(
        ("torch.cat([self.cache_k, k], dim=2)", "torch.cat([self.cache_k, k], dim=1)"),
        ("torch.cat([self.cache_v, v], dim=2)", "torch.cat([self.cache_v, v], dim=1)")),
        [DECODE_DOC, PROMPT_DOC, ROWS, BATCH, CACHED_REF], says="size of tensor a",
        hint="the cache concatenated along dim 1, the heads, instead of dim 2, the tokens",
        also=("the cache concatenated along dim 1, the heads",)),
    Mistake("reset_cache does not clear", cached(
        ("        self.cache_k, self.cache_v = None, None\n", "        self.past = 0\n")),
        [RESET], says="reset_cache does not empty the cache"),
    Mistake("reset_cache missing", {"MultiHeadAttentionCached": CACHED.split("    def reset_cache")[0]},
            [RESET], says="has no reset_cache"),
    Mistake("use_cache=False writes the cache", cached(
        ("            self.cache_k, self.cache_v = k, v\n", ""),
        ("        scores = (q @ k", "        self.cache_k, self.cache_v = k, v\n        scores = (q @ k")),
        [UNTOUCHED], says="use_cache=False writes to the cache"),
    Mistake("cache never read", cached(
        ("""            if self.cache_k is not None:
                k = torch.cat([self.cache_k, k], dim=2)
                v = torch.cat([self.cache_v, v], dim=2)
            self.cache_k, self.cache_v = k, v""", """            if self.cache_k is None:
                self.cache_k, self.cache_v = k, v
            else:
                self.cache_k = torch.cat([self.cache_k, k], dim=2)
                self.cache_v = torch.cat([self.cache_v, v], dim=2)"""),
        (MASK_LINE, 'masked_fill(self.mask[:t, :t], float("-inf"))')),
        [DECODE_DOC, PROMPT_DOC, BATCH, CACHED_REF], says="the cache never read"),
    Mistake("keys cached before the head split, split with a bare view", cached(
        ("        q, k, v = self.split(self.W_query(x)), self.split(self.W_key(x)), self.split(self.W_value(x))\n"
         "        past = self.cache_k.shape[2] if use_cache and self.cache_k is not None else 0\n",
         "        q, k, v = self.split(self.W_query(x)), self.W_key(x), self.W_value(x)\n"
         "        past = self.cache_k.shape[1] if use_cache and self.cache_k is not None else 0\n"),
        ("""            if self.cache_k is not None:
                k = torch.cat([self.cache_k, k], dim=2)
                v = torch.cat([self.cache_v, v], dim=2)
            self.cache_k, self.cache_v = k, v""", """            if self.cache_k is not None:
                k = torch.cat([self.cache_k, k], dim=1)
                v = torch.cat([self.cache_v, v], dim=1)
            self.cache_k, self.cache_v = k, v"""),
        ("        scores = (q @ k", "        k = k.view(b, self.num_heads, past + t, self.head_dim)\n"
                              "        v = v.view(b, self.num_heads, past + t, self.head_dim)\n"
                              "        scores = (q @ k")),
        [FULL_DOC, DECODE_DOC, PROMPT_DOC, BATCH, CACHED_REF], says="bare view"),
    Mistake("parameters created out of order", cached(
        ("        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)\n        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)\n",
         "        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)\n        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)\n")),
        [PARAMS, FULL_DOC, DECODE_DOC, PROMPT_DOC], says="in exactly this order", also=("another order",)),
    Mistake("no ValueError when num_heads does not divide d_out", cached(
        ("        if d_out % num_heads != 0:\n            raise ValueError(f\"d_out={d_out} must be a multiple of num_heads={num_heads}\")\n", "")),
        [HEADS], says="should raise ValueError"),
    Mistake("mask made on the CPU in forward", cached(
        (MASK_LINE, 'masked_fill(torch.ones(t, past + t).triu(past + 1).bool(), float("-inf"))')),
        [DEVICE], says="register a buffer or create it with device=x.device"),
    Mistake("cache kept in plain attributes", cached(
        ('        self.register_buffer("cache_k", None, persistent=False)\n'
         '        self.register_buffer("cache_v", None, persistent=False)\n',
         "        self.cache_k, self.cache_v = None, None\n")),
        [BUFFERS], says="the cache kept outside buffers"),
    Mistake("cache buffers registered persistent", cached(
        ('register_buffer("cache_k", None, persistent=False)', 'register_buffer("cache_k", None)'),
        ('register_buffer("cache_v", None, persistent=False)', 'register_buffer("cache_v", None)')),
        [BUFFERS], says="the cache registered persistent"),
    Mistake("no dropout in train mode", cached(
        ("weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))",
         "weights = torch.softmax(scores / self.head_dim ** 0.5, dim=-1)")),
        [TRAIN], says="no dropout applied in train mode"),
    Mistake("no ValueError past context_length", cached(
        ("        if past + t > self.context_length:\n"
         "            raise ValueError(f\"{past + t} tokens exceed context_length={self.context_length}\")\n", "")),
        [CONTEXT], says="should raise ValueError"),
    Mistake("kv_cache_bytes without the factor 2", sized(("return 2 * num_layers", "return num_layers")),
            [BYTES_DOC, BYTES_FORMULA, BYTES_REF], says="the factor 2 for keys and values missing"),
    Mistake("kv_cache_bytes forgets num_layers", sized(("return 2 * num_layers * ", "return 2 * ")),
            [BYTES_DOC, BYTES_FORMULA, BYTES_REF], says="num_layers left out"),
    Mistake("kv_cache_bytes in MiB", sized(("* bytes_per_value\n", "* bytes_per_value / 2**20\n")),
            [BYTES_DOC, BYTES_FORMULA, BYTES_REF], says="expected 37748736"),
    Mistake("kv_cache_bytes without its ValueError", sized(("        if value <= 0:\n", "        if value < 0:\n")),
            [BYTES_ERROR], says="should raise ValueError"),
]

HARD_CODED = {
    "MultiHeadAttentionCached": CACHED.split("    def forward")[0] + """
    def forward(self, x, use_cache=False):
        printed = torch.tensor([[0.3190, 0.4858], [0.2943, 0.3897], [0.2856, 0.3593],
                                [0.2693, 0.3873], [0.2639, 0.3928], [0.2575, 0.4028]])
        return printed.expand(x.shape[0], 6, 2).clone()

    def reset_cache(self):
        pass
""",
    "kv_cache_bytes": """
def kv_cache_bytes(num_layers, num_kv_heads, head_dim, context_length, bytes_per_value):
    return 37748736
""",
}

STYLES = [
    {"MultiHeadAttentionCached": CACHED, "kv_cache_bytes": BYTES},
    {  # the book's layout: cached before the transpose, (b, T, H, hd) along dim 1, a position counter; math.prod
        "MultiHeadAttentionCached": """
            class MultiHeadAttentionCached(nn.Module):
                def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
                    super().__init__()
                    assert_ok = d_out % num_heads == 0
                    if not assert_ok:
                        raise ValueError("num_heads must divide d_out")
                    self.num_heads, self.head_dim, self.d_out = num_heads, d_out // num_heads, d_out
                    self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
                    self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
                    self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
                    self.out_proj = nn.Linear(d_out, d_out)
                    self.dropout = nn.Dropout(dropout)
                    self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), 1).bool(),
                                         persistent=False)
                    self.register_buffer("cache_k", None, persistent=False)
                    self.register_buffer("cache_v", None, persistent=False)
                    self.ptr_current_pos = 0

                def forward(self, x, use_cache=False):
                    b, num_tokens, _ = x.shape
                    shape = (b, num_tokens, self.num_heads, self.head_dim)
                    keys_new, values_new = self.W_key(x).view(shape), self.W_value(x).view(shape)
                    queries = self.W_query(x).view(shape).transpose(1, 2)
                    start = self.ptr_current_pos if use_cache else 0
                    if start + num_tokens > self.mask.shape[0]:
                        raise ValueError("the cache would outgrow context_length")
                    if use_cache:
                        if self.cache_k is None:
                            self.cache_k, self.cache_v = keys_new, values_new
                        else:
                            self.cache_k = torch.cat([self.cache_k, keys_new], dim=1)
                            self.cache_v = torch.cat([self.cache_v, values_new], dim=1)
                        keys, values = self.cache_k, self.cache_v
                        self.ptr_current_pos += num_tokens
                    else:
                        keys, values = keys_new, values_new
                    keys, values = keys.transpose(1, 2), values.transpose(1, 2)
                    scores = queries @ keys.transpose(2, 3)
                    hidden = self.mask[start:start + num_tokens, :start + num_tokens]
                    scores.masked_fill_(hidden, -torch.inf)
                    weights = self.dropout(torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1))
                    context = (weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
                    return self.out_proj(context)

                def reset_cache(self):
                    self.cache_k, self.cache_v = None, None
                    self.ptr_current_pos = 0
            """,
        "kv_cache_bytes": """
            import math
            def kv_cache_bytes(num_layers, num_kv_heads, head_dim, context_length, bytes_per_value):
                names = ["num_layers", "num_kv_heads", "head_dim", "context_length", "bytes_per_value"]
                values = [num_layers, num_kv_heads, head_dim, context_length, bytes_per_value]
                for name, value in zip(names, values):
                    if not value > 0:
                        raise ValueError(f"kv_cache_bytes: {name} = {value} is not positive")
                keys_and_values = 2
                return keys_and_values * math.prod(values)
            """},
    {  # a cache allocated at its full length on the first cached call (buffers assigned whole), filled by slices
        "MultiHeadAttentionCached": """
            class MultiHeadAttentionCached(nn.Module):
                def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
                    super().__init__()
                    if d_out % num_heads:
                        raise ValueError(f"{num_heads} heads do not divide d_out={d_out}")
                    self.h, self.hd, self.T = num_heads, d_out // num_heads, context_length
                    self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
                    self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
                    self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
                    self.out_proj = nn.Linear(d_out, d_out)
                    self.dropout = nn.Dropout(dropout)
                    for name in ("cache_k", "cache_v"):
                        self.register_buffer(name, None, persistent=False)
                    self.filled = 0

                def heads(self, y):
                    return y.unflatten(-1, (self.h, self.hd)).transpose(1, 2)

                def forward(self, x, use_cache=False):
                    b, t, _ = x.shape
                    q, k, v = self.heads(self.W_query(x)), self.heads(self.W_key(x)), self.heads(self.W_value(x))
                    start = self.filled if use_cache else 0
                    if start + t > self.T:
                        raise ValueError(f"{start} + {t} tokens > context_length {self.T}")
                    if use_cache:
                        if self.cache_k is None:
                            self.cache_k = k.new_zeros(b, self.h, self.T, self.hd)
                            self.cache_v = v.new_zeros(b, self.h, self.T, self.hd)
                        self.cache_k[:, :, start:start + t] = k
                        self.cache_v[:, :, start:start + t] = v
                        self.filled = start + t
                        k, v = self.cache_k[:, :, :start + t], self.cache_v[:, :, :start + t]
                    rows = torch.arange(start, start + t, device=x.device)[:, None]
                    cols = torch.arange(start + t, device=x.device)[None, :]
                    scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / self.hd ** 0.5
                    scores = scores.masked_fill(cols > rows, float("-inf"))
                    weights = self.dropout(scores.softmax(dim=-1))
                    out = torch.einsum("bhqk,bhkd->bqhd", weights, v).flatten(2)
                    return self.out_proj(out)

                def reset_cache(self):
                    self.cache_k = self.cache_v = None
                    self.filled = 0
            """,
        "kv_cache_bytes": """
            def kv_cache_bytes(num_layers, num_kv_heads, head_dim, context_length, bytes_per_value):
                arguments = dict(num_layers=num_layers, num_kv_heads=num_kv_heads, head_dim=head_dim,
                                 context_length=context_length, bytes_per_value=bytes_per_value)
                bad = [name for name, value in arguments.items() if value <= 0]
                if bad:
                    raise ValueError(f"{bad[0]} must be positive")
                per_token = num_kv_heads * head_dim * bytes_per_value  # one key or one value, one layer
                return num_layers * context_length * per_token * 2
            """},
    {  # the cache joined by a comprehension that skips an empty buffer, -1e9 fill, a mask made per call with triu's
       # offset
        "MultiHeadAttentionCached": """
            class MultiHeadAttentionCached(nn.Module):
                def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
                    super().__init__()
                    if d_out % num_heads != 0:
                        raise ValueError("d_out must be divisible by num_heads")
                    self.num_heads, self.context_length = num_heads, context_length
                    self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
                    self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
                    self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
                    self.out_proj = nn.Linear(d_out, d_out)
                    self.dropout = nn.Dropout(dropout)
                    self.register_buffer("cache_k", None, persistent=False)
                    self.register_buffer("cache_v", None, persistent=False)

                def forward(self, x, use_cache=False):
                    b, t, d_in = x.shape
                    split = lambda y: y.reshape(b, t, self.num_heads, -1).permute(0, 2, 1, 3)
                    q, k, v = split(self.W_query(x)), split(self.W_key(x)), split(self.W_value(x))
                    if use_cache:
                        past = 0 if self.cache_k is None else self.cache_k.shape[-2]
                        if past + t > self.context_length:
                            raise ValueError("too many tokens for context_length")
                        k = torch.cat([kept for kept in (self.cache_k, k) if kept is not None], dim=-2)
                        v = torch.cat([kept for kept in (self.cache_v, v) if kept is not None], dim=-2)
                        self.cache_k, self.cache_v = k, v
                    else:
                        past = 0
                        if t > self.context_length:
                            raise ValueError("too many tokens for context_length")
                    hidden = torch.ones(t, past + t, dtype=torch.bool, device=x.device).triu(past + 1)
                    scores = (q @ k.transpose(-1, -2)).masked_fill(hidden, -1e9) / q.shape[-1] ** 0.5
                    weights = self.dropout(torch.softmax(scores, dim=-1))
                    return self.out_proj((weights @ v).permute(0, 2, 1, 3).reshape(b, t, -1))

                def reset_cache(self):
                    self.cache_k = None
                    self.cache_v = None
            """,
        "kv_cache_bytes": """
            def kv_cache_bytes(num_layers, num_kv_heads, head_dim, context_length, bytes_per_value):
                if min(num_layers, num_kv_heads, head_dim, context_length) < 1:
                    names = ("num_layers", "num_kv_heads", "head_dim", "context_length")
                    values = (num_layers, num_kv_heads, head_dim, context_length)
                    raise ValueError(next(f"{n}={v} is not positive" for n, v in zip(names, values) if v < 1))
                if bytes_per_value <= 0:
                    raise ValueError(f"bytes_per_value={bytes_per_value} is not positive")
                total = 0
                total += num_layers * num_kv_heads * head_dim * context_length * bytes_per_value  # keys
                total += num_layers * num_kv_heads * head_dim * context_length * bytes_per_value  # values
                return total
            """},
]

# answers written out: each named in its own cell
MISTAKES.append(Mistake("MultiHeadAttentionCached hard-coded",
                        {"MultiHeadAttentionCached": HARD_CODED["MultiHeadAttentionCached"]},
                        [FULL_DOC, DECODE_DOC, PROMPT_DOC, ROWS, BATCH, DEVICE, CONTEXT, TRAIN, CACHED_REF],
                        says="is the answer hard-coded?", hard_coded=True))
MISTAKES.append(Mistake("kv_cache_bytes hard-coded", {"kv_cache_bytes": HARD_CODED["kv_cache_bytes"]},
                        [BYTES_DOC, BYTES_FORMULA, BYTES_ERROR, BYTES_REF],
                        says="is the answer hard-coded?", hard_coded=True))

# The student trial of part 2 (catalogues/student_trial_part2.py): a new student's own style, and the mistakes made
# on it whose first line is right, each with the checks it loses
STYLES += trial_styles(SECTION)
TRIAL_LOSES = {
    "num_cached read after the new keys are appended": [
        "MultiHeadAttentionCached decoding the worked example one token at a time gives the documented output",
        "MultiHeadAttentionCached decoding a prompt of four tokens then single tokens gives the documented output",
        "MultiHeadAttentionCached projects each token once: W_query, W_key and W_value see only the new tokens",
        "MultiHeadAttentionCached.reset_cache empties the cache: the next sequence is decoded as if alone",
        "MultiHeadAttentionCached with use_cache=False leaves the cache alone",
        "MultiHeadAttentionCached decodes a batch of two different sequences in chunks as its full forward does",
        "MultiHeadAttentionCached raises ValueError when the cache would outgrow context_length",
        "MultiHeadAttentionCached matches the reference at other sizes, decoded in chunks",
    ],
    "context_length checked against the new tokens only, not cache + new": [
        "MultiHeadAttentionCached raises ValueError when the cache would outgrow context_length",
    ],
    "reset_cache leaves empty tensors instead of None": [
        "MultiHeadAttentionCached.reset_cache empties the cache: the next sequence is decoded as if alone",
    ],
    "zero accepted (value < 0 refused only)": [
        "kv_cache_bytes raises ValueError on an argument that is not positive",
    ],
    "a ValueError that names no argument": [
        "kv_cache_bytes raises ValueError on an argument that is not positive",
    ],
    "bytes_per_value read as bits (divided by 8)": [
        "kv_cache_bytes gives the documented sizes of the notebook's table",
        "kv_cache_bytes counts a key and a value per layer, head, token and feature",
        "kv_cache_bytes matches the reference at other sizes",
    ],
}
MISTAKES += trial_mistakes(SECTION, TRIAL_LOSES)
