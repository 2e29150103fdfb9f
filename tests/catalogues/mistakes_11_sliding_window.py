"""Section 11's catalogue: common mistakes, each with the checks it must lose, and other correct styles."""
from support import Mistake
from catalogues.student_trial_part2 import trial_mistakes, trial_styles

SECTION = "11_sliding_window"

# A correct sliding_window_mask: positions compared by broadcasting.
MASK = """
def sliding_window_mask(num_tokens, window):
    if window < 1:
        raise ValueError(f"window must be at least 1, got {window}")
    i = torch.arange(num_tokens).unsqueeze(1)
    j = torch.arange(num_tokens).unsqueeze(0)
    return (j > i) | (j <= i - window)
"""

# A correct SlidingWindowAttention with plain attributes for the cache; most layer mistakes are one edit of it.
LAYER = """
class SlidingWindowAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, window, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_out={d_out} must be a multiple of num_heads={num_heads}")
        if window < 1:
            raise ValueError(f"window={window} must be at least 1")
        self.d_out, self.num_heads, self.head_dim, self.window = d_out, num_heads, d_out // num_heads, window
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.cache_k = None
        self.cache_v = None

    def split(self, y):
        b, t, _ = y.shape
        return y.view(b, t, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x, use_cache=False):
        b, t, _ = x.shape
        q, k, v = self.split(self.W_query(x)), self.split(self.W_key(x)), self.split(self.W_value(x))
        past = 0
        if use_cache and self.cache_k is not None:
            past = self.cache_k.shape[2]
            k = torch.cat([self.cache_k, k], dim=2)
            v = torch.cat([self.cache_v, v], dim=2)
        i = torch.arange(t, device=x.device).unsqueeze(1) + past
        j = torch.arange(past + t, device=x.device).unsqueeze(0)
        hidden = (j > i) | (j <= i - self.window)
        scores = (q @ k.transpose(2, 3)).masked_fill(hidden, float("-inf"))
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        context = (weights @ v).transpose(1, 2).reshape(b, t, self.d_out)
        if use_cache:
            self.cache_k = k[:, :, -self.window:]
            self.cache_v = v[:, :, -self.window:]
        return self.out_proj(context)

    def reset_cache(self):
        self.cache_k = None
        self.cache_v = None
"""


def edited(name, source, *edits):
    """source with each (old, new) replacement made (every occurrence; each must occur), as {name: source}."""
    for old, new in edits:
        assert old in source, old
        source = source.replace(old, new)
    return {name: source}


def mask(*edits):
    return edited("sliding_window_mask", MASK, *edits)


def layer(*edits):
    return edited("SlidingWindowAttention", LAYER, *edits)


BAND = "return (j > i) | (j <= i - window)"
LAYER_BAND = "hidden = (j > i) | (j <= i - self.window)"
KEEP = ("self.cache_k = k[:, :, -self.window:]\n            self.cache_v = v[:, :, -self.window:]")
MASK_DOC = "sliding_window_mask gives the documented"
MASK_CAUSAL = "sliding_window_mask is the causal mask"
MASK_SIZES = "sliding_window_mask hides"
MASK_REF = "sliding_window_mask matches the reference"
DOC = "SlidingWindowAttention gives the documented"
COVERS = "SlidingWindowAttention with a window covering"
BAND_CHECK = "SlidingWindowAttention equals the band"
REF = "SlidingWindowAttention matches the reference"
TOKENS = "token by token with the cache"
BOUNDED = "the cache never holds more than window tokens"
PROMPT = "a prompt longer than the window"
CACHED_REF = "decodes in pieces of several sizes"
VALUES = [DOC, BAND_CHECK, REF]

MISTAKES = [
    Mistake("mask: window off by one", mask((BAND, "return (j > i) | (j < i - window)")),
            [MASK_DOC, MASK_SIZES, MASK_REF], says="the window off by one"),
    Mistake("mask: diagonal hidden", mask((BAND, "return (j >= i) | (j <= i - window)")),
            [MASK_DOC, MASK_CAUSAL, MASK_SIZES, MASK_REF], says="the diagonal hidden"),
    Mistake("mask transposed", mask((BAND, "return (i > j) | (i <= j - window)")),
            [MASK_DOC, MASK_CAUSAL, MASK_SIZES, MASK_REF], says="the mask transposed"),
    Mistake("mask: no window", mask((BAND, "return j > i")), [MASK_DOC, MASK_SIZES, MASK_REF], says="no window"),
    Mistake("mask: no ValueError", mask(('    if window < 1:\n        raise ValueError(f"window must be at least 1, '
                                         'got {window}")\n', "")),
            ["sliding_window_mask raises ValueError"], says="should raise ValueError"),
    Mistake("layer: window off by one", layer((LAYER_BAND, "hidden = (j > i) | (j < i - self.window)")),
            [*VALUES, CACHED_REF], says="the window off by one"),
    Mistake("layer: causal mask only", layer((LAYER_BAND, "hidden = j > i")),
            [*VALUES, TOKENS, PROMPT, CACHED_REF], says="no window",
            # decoding one token at a time, a causal-only band hides no cached key: the line sees exactly that
            also=("every cached key visible to the new tokens",)),
    Mistake("layer: scale by sqrt(d_out)", layer(("scores / self.head_dim ** 0.5", "scores / self.d_out ** 0.5")),
            [DOC, COVERS, BAND_CHECK, REF, CACHED_REF], says=""),
    Mistake("cache not trimmed", layer((KEEP, "self.cache_k = k\n            self.cache_v = v")),
            [BOUNDED, PROMPT], says="the cache not trimmed"),
    Mistake("cache trimmed to window - 1", layer(
        (KEEP, "self.cache_k = k[:, :, -(self.window - 1):]\n            self.cache_v = v[:, :, -(self.window - 1):]")),
        [BOUNDED, PROMPT], says="trimmed to window - 1"),
    Mistake("cache keeps the oldest tokens", layer(
        (KEEP, "self.cache_k = k[:, :, :self.window]\n            self.cache_v = v[:, :, :self.window]")),
        [TOKENS, PROMPT, CACHED_REF], says="trimmed from the wrong end"),
    Mistake("mask not offset by the cache", layer(
        ("i = torch.arange(t, device=x.device).unsqueeze(1) + past", "i = torch.arange(t, device=x.device).unsqueeze(1)")),
        [TOKENS, PROMPT, CACHED_REF], says="not shifted by the cached tokens"),
    Mistake("cache cut by one before appending", layer(
        ("            past = self.cache_k.shape[2]\n",
         "            if self.cache_k.shape[2] >= self.window:\n"
         "                self.cache_k, self.cache_v = self.cache_k[:, :, 1:], self.cache_v[:, :, 1:]\n"
         "            past = self.cache_k.shape[2]\n"),
        (KEEP, "self.cache_k = k\n            self.cache_v = v")),
        [PROMPT], says="cut by one token before appending"),
    Mistake("layer: dropout active in eval", layer(
        ("weights = self.dropout(torch.softmax(", "weights = F.dropout(torch.softmax("),
        ("dim=-1))\n        context", "dim=-1), self.dropout.p)\n        context")),
        ["SlidingWindowAttention: eval mode disables dropout"], says="dropout active in eval"),
    Mistake("layer: no dropout in train mode", layer(
        ("weights = self.dropout(torch.softmax(", "weights = (torch.softmax(")),
        ["SlidingWindowAttention: dropout acts in train mode"], says="no dropout applied in train mode"),
    Mistake("layer: band made on the CPU", layer(
        ("i = torch.arange(t, device=x.device)", "i = torch.arange(t)"),
        ("j = torch.arange(past + t, device=x.device)", "j = torch.arange(past + t)")),
        ["SlidingWindowAttention works on any device"], says="create it with device=x.device"),
    Mistake("layer: forward under torch.no_grad", layer(
        ("    def forward(self, x, use_cache=False):\n", "    @torch.no_grad()\n    def forward(self, x, use_cache=False):\n")),
        ["SlidingWindowAttention: gradients"], says="autograd graph"),
    Mistake("layer: parameters created out of order", layer(
        ("        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)\n        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)\n",
         "        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)\n        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)\n")),
        ["SlidingWindowAttention creates its layers", DOC, COVERS], says="in exactly this order",
        also=("another order",)),
    Mistake("layer: no ValueError on the window", layer(
        ('        if window < 1:\n            raise ValueError(f"window={window} must be at least 1")\n', "")),
        ["SlidingWindowAttention raises ValueError"], says="should raise ValueError"),
    Mistake("layer: window=1 refused", layer(("        if window < 1:\n            raise ValueError(f\"window={window}",
                                              "        if window <= 1:\n            raise ValueError(f\"window={window}")),
            ["SlidingWindowAttention raises ValueError"], says="window=1 is allowed"),
]

HARD_CODED = {
    "sliding_window_mask": """
def sliding_window_mask(num_tokens, window):
    if window < 1:
        raise ValueError("window must be at least 1")
    return torch.tensor([[0, 1, 1, 1, 1, 1], [0, 0, 1, 1, 1, 1], [0, 0, 0, 1, 1, 1],
                         [1, 0, 0, 0, 1, 1], [1, 1, 0, 0, 0, 1], [1, 1, 1, 0, 0, 0]]).bool()
""",
    "SlidingWindowAttention": LAYER.split("    def split")[0] + """
    def forward(self, x, use_cache=False):
        printed = torch.tensor([[0.3190, 0.4858], [0.2943, 0.3897], [0.2856, 0.3593],
                                [0.2530, 0.3552], [0.2432, 0.3942], [0.2298, 0.4474]])
        return printed.expand(x.shape[0], 6, 2).clone()

    def reset_cache(self):
        self.cache_k = None
        self.cache_v = None
""",
}

STYLES = [
    {"sliding_window_mask": MASK, "SlidingWindowAttention": LAYER},
    {  # triu and tril of a ones matrix; F.scaled_dot_product_attention with the mask inverted, buffers for the cache
        "sliding_window_mask": """
            def sliding_window_mask(num_tokens, window):
                if window < 1:
                    raise ValueError("window < 1")
                ones = torch.ones(num_tokens, num_tokens, dtype=torch.bool)
                return ones.triu(1) | ones.tril(-window)
            """,
        "SlidingWindowAttention": """
            class SlidingWindowAttention(nn.Module):
                def __init__(self, d_in, d_out, context_length, dropout, num_heads, window, qkv_bias=False):
                    super().__init__()
                    if d_out % num_heads or window < 1:
                        raise ValueError("bad num_heads or window")
                    self.h, self.w, self.p = num_heads, window, dropout
                    self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
                    self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
                    self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
                    self.out_proj = nn.Linear(d_out, d_out)
                    self.dropout = nn.Dropout(dropout)
                    self.register_buffer("cache_k", None, persistent=False)
                    self.register_buffer("cache_v", None, persistent=False)

                def forward(self, x, use_cache=False):
                    b, t, d = *x.shape[:2], self.out_proj.in_features
                    q, k, v = (f(x).reshape(b, t, self.h, -1).permute(0, 2, 1, 3)
                               for f in (self.W_query, self.W_key, self.W_value))
                    c = 0
                    if use_cache and self.cache_k is not None:
                        c = self.cache_k.size(2)
                        k, v = torch.cat((self.cache_k, k), 2), torch.cat((self.cache_v, v), 2)
                    ones = torch.ones(t, c + t, dtype=torch.bool, device=x.device)
                    allowed = ones.tril(c) & ~ones.tril(c - self.w)
                    out = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed,
                                                         dropout_p=self.p if self.training else 0.0)
                    if use_cache:
                        n = min(self.w, k.size(2))
                        self.cache_k, self.cache_v = k.narrow(2, k.size(2) - n, n), v.narrow(2, v.size(2) - n, n)
                    return self.out_proj(out.permute(0, 2, 1, 3).reshape(b, t, d))

                def reset_cache(self):
                    self.cache_k = self.cache_v = None
            """},
    {  # the distance i - j; the layer cuts its rows out of the student's own sliding_window_mask
        "sliding_window_mask": """
            def sliding_window_mask(num_tokens, window):
                if not window >= 1:
                    raise ValueError(f"the window must hold at least one token, got {window}")
                pos = torch.arange(num_tokens)
                distance = pos[:, None] - pos[None, :]
                return (distance < 0) | (distance >= window)
            """,
        "SlidingWindowAttention": """
            class SlidingWindowAttention(nn.Module):
                def __init__(self, d_in, d_out, context_length, dropout, num_heads, window, qkv_bias=False):
                    super().__init__()
                    assert_ok = d_out % num_heads == 0 and window >= 1
                    if not assert_ok:
                        raise ValueError(f"d_out={d_out}, num_heads={num_heads}, window={window}")
                    self.num_heads, self.window = num_heads, window
                    self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
                    self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
                    self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
                    self.out_proj = nn.Linear(d_out, d_out)
                    self.dropout = nn.Dropout(dropout)
                    self.reset_cache()

                def reset_cache(self):
                    self.cache_k, self.cache_v = None, None

                def forward(self, x, use_cache=False):
                    b, t, _ = x.shape
                    heads = [layer(x).unflatten(-1, (self.num_heads, -1)).transpose(1, 2)
                             for layer in (self.W_query, self.W_key, self.W_value)]
                    q, k, v = heads
                    if use_cache and self.cache_k is not None:
                        k = torch.cat([self.cache_k, k], dim=-2)
                        v = torch.cat([self.cache_v, v], dim=-2)
                    total = k.shape[-2]
                    hidden = sliding_window_mask(total, self.window)[total - t:].to(x.device)
                    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
                    weights = self.dropout(torch.softmax(scores.masked_fill(hidden, -torch.inf), dim=-1))
                    if use_cache:
                        self.cache_k, self.cache_v = k[..., -self.window:, :], v[..., -self.window:, :]
                    return self.out_proj((weights @ v).transpose(1, 2).flatten(2))
            """},
    {  # torch.where and logical_or; einsum; -1e9 for hidden scores; the cache kept detached
        "sliding_window_mask": """
            def sliding_window_mask(num_tokens, window):
                if window < 1:
                    raise ValueError(f"window={window}: a query must see at least its own token")
                q = torch.arange(num_tokens).view(-1, 1)
                k = torch.arange(num_tokens).view(1, -1)
                return torch.logical_or(k > q, k + window <= q)
            """,
        "SlidingWindowAttention": """
            class SlidingWindowAttention(nn.Module):
                def __init__(self, d_in, d_out, context_length, dropout, num_heads, window, qkv_bias=False):
                    super().__init__()
                    if d_out % num_heads != 0:
                        raise ValueError("num_heads must divide d_out")
                    if window < 1:
                        raise ValueError("window must be >= 1")
                    self.d_out, self.num_heads, self.window = d_out, num_heads, window
                    self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
                    self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
                    self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
                    self.out_proj = nn.Linear(d_out, d_out)
                    self.dropout = nn.Dropout(dropout)
                    self.cache_k = self.cache_v = None

                def forward(self, x, use_cache=False):
                    b, t, _ = x.shape
                    hd = self.d_out // self.num_heads
                    q = self.W_query(x).view(b, t, self.num_heads, hd)
                    k = self.W_key(x).view(b, t, self.num_heads, hd).transpose(1, 2)
                    v = self.W_value(x).view(b, t, self.num_heads, hd).transpose(1, 2)
                    if use_cache and self.cache_k is not None:
                        k = torch.cat([self.cache_k, k], dim=2)
                        v = torch.cat([self.cache_v, v], dim=2)
                    n = k.shape[2]
                    rows = torch.arange(n - t, n, device=x.device)[:, None]
                    cols = torch.arange(n, device=x.device)[None, :]
                    visible = (cols <= rows) & (cols > rows - self.window)
                    scores = torch.einsum("bqhd,bhkd->bhqk", q, k) / hd ** 0.5
                    weights = self.dropout(torch.where(visible, scores, torch.tensor(-1e9, device=x.device)).softmax(-1))
                    if use_cache:
                        self.cache_k = k[:, :, -self.window:].detach()
                        self.cache_v = v[:, :, -self.window:].detach()
                    out = torch.einsum("bhqk,bhkd->bqhd", weights, v).reshape(b, t, self.d_out)
                    return self.out_proj(out)

                def reset_cache(self):
                    self.cache_k = self.cache_v = None
            """},
]

# a wrong sliding_window_mask under a layer that calls it: the layer's checks hand the layer a right one
# (checks/section_11_sliding_window.right_masks), so the mask's mistake costs the mask's checks only
MISTAKES.append(Mistake("mask off by one, called by the layer",
                        {**mask((BAND, "return (j > i) | (j < i - window)")),
                         "SlidingWindowAttention": STYLES[2]["SlidingWindowAttention"]},
                        [MASK_DOC, MASK_SIZES, MASK_REF], says="the window off by one"))

# answers written out: each named in its own cell
MISTAKES.append(Mistake("sliding_window_mask hard-coded", {"sliding_window_mask": HARD_CODED["sliding_window_mask"]},
                        [MASK_DOC, MASK_CAUSAL, MASK_SIZES, MASK_REF], says="is the answer hard-coded?",
                        hard_coded=True))
MISTAKES.append(Mistake("SlidingWindowAttention hard-coded",
                        {"SlidingWindowAttention": HARD_CODED["SlidingWindowAttention"]},
                        [DOC, COVERS, BAND_CHECK, REF, TOKENS, BOUNDED, PROMPT, CACHED_REF,
                         "SlidingWindowAttention: eval", "SlidingWindowAttention: dropout acts in train mode",
                         "SlidingWindowAttention: gradients",
                         "SlidingWindowAttention works on any device"],
                        says="is the answer hard-coded?", hard_coded=True))

# The student trial of part 2 (catalogues/student_trial_part2.py): a new student's own style, and the mistakes made
# on it whose first line is right, each with the checks it loses (here with the reference's layer; the student's own
# calls their sliding_window_mask, and meets a right one in the layer's checks: a wrong mask costs the mask's only)
STYLES += trial_styles(SECTION)
TRIAL_LOSES = {
    "mask returned as 0/1 floats": [
        "sliding_window_mask gives the documented band for six tokens and a window of 3",
        "sliding_window_mask is the causal mask when the window covers the sequence",
        "sliding_window_mask hides j > i and j <= i - window at other sizes",
        "sliding_window_mask matches the reference at other sizes",
    ],
    "symmetric band |i - j| >= window (the near future visible)": [
        "sliding_window_mask gives the documented band for six tokens and a window of 3",
        "sliding_window_mask is the causal mask when the window covers the sequence",
        "sliding_window_mask hides j > i and j <= i - window at other sizes",
        "sliding_window_mask matches the reference at other sizes",
    ],
    "window=0 accepted (only negative windows refused)": [
        "sliding_window_mask raises ValueError when window < 1",
    ],
    "the band mask given to SDPA as is (SDPA's True means 'may attend')": [
        "SlidingWindowAttention gives the documented seeded output with a window of 3",
        "SlidingWindowAttention with a window covering the sequence gives notebook 06's output",
        "SlidingWindowAttention equals the band written out with its own weights, batch of two",
        "SlidingWindowAttention: token by token with the cache equals the whole sequence",
        "SlidingWindowAttention: the cache never holds more than window tokens, whatever the length",
        "SlidingWindowAttention: a prompt longer than the window, then single tokens",
        "SlidingWindowAttention matches the reference at other sizes",
        "SlidingWindowAttention decodes in pieces of several sizes as the reference does",
    ],
    "cache trimmed on the heads' dim (k[:, -window:])": [
        "SlidingWindowAttention: the cache never holds more than window tokens, whatever the length",
        "SlidingWindowAttention: a prompt longer than the window, then single tokens",
    ],
    "use_cache=False writes the cache too": [
        "SlidingWindowAttention: token by token with the cache equals the whole sequence",
        "SlidingWindowAttention: a prompt longer than the window, then single tokens",
        # this student keeps the cache in plain attributes: written by a forward without the cache, it stays on
        # the CPU when the layer moves, as .to(device) leaves a plain attribute
        "SlidingWindowAttention works on any device",
    ],
}
MISTAKES += trial_mistakes(SECTION, TRIAL_LOSES)
