"""Section 10's catalogue: common mistakes of grouped-query attention, each with the checks it must lose, and
other correct styles."""
from support import Mistake
from catalogues.student_trial_part2 import trial_mistakes, trial_styles

SECTION = "10_grouped_query"

# A correct GroupedQueryAttention in the notebook's own steps (view + transpose, repeat_interleave after the
# transpose, the cache as buffers, a mask made per call and offset by the cache); most mistakes below are one
# edit of it.
GQA = """
class GroupedQueryAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, num_kv_groups, qkv_bias=False):
        super().__init__()
        if num_heads % num_kv_groups != 0:
            raise ValueError(f"num_heads={num_heads} must be a multiple of num_kv_groups={num_kv_groups}")
        if d_out % num_heads != 0:
            raise ValueError(f"d_out={d_out} must be a multiple of num_heads={num_heads}")
        self.d_out, self.num_heads, self.num_kv_groups = d_out, num_heads, num_kv_groups
        self.head_dim = d_out // num_heads
        self.group_size = num_heads // num_kv_groups
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("cache_k", None, persistent=False)
        self.register_buffer("cache_v", None, persistent=False)

    def forward(self, x, use_cache=False):
        b, t, _ = x.shape
        q = self.W_query(x).view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        k = self.W_key(x).view(b, t, self.num_kv_groups, self.head_dim).transpose(1, 2)
        v = self.W_value(x).view(b, t, self.num_kv_groups, self.head_dim).transpose(1, 2)
        if use_cache:
            if self.cache_k is not None:
                k = torch.cat([self.cache_k, k], dim=2)
                v = torch.cat([self.cache_v, v], dim=2)
            self.cache_k, self.cache_v = k, v
        k = k.repeat_interleave(self.group_size, dim=1)
        v = v.repeat_interleave(self.group_size, dim=1)
        n = k.shape[2]
        scores = q @ k.transpose(2, 3)
        hidden = torch.ones(t, n, dtype=torch.bool, device=x.device).triu(n - t + 1)
        scores = scores.masked_fill(hidden, float("-inf"))
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        context = (weights @ v).transpose(1, 2).reshape(b, t, self.d_out)
        return self.out_proj(context)

    def reset_cache(self):
        self.cache_k, self.cache_v = None, None
"""


def gqa(*edits):
    """GQA with each (old, new) replacement made (every occurrence; each must occur), as {name: source}."""
    source = GQA
    for old, new in edits:
        assert old in source, old
        source = source.replace(old, new)
    return {"GroupedQueryAttention": source}


DOC = "GroupedQueryAttention gives the documented"
MQA_DOC = "one key/value group (multi-query)"
MHA_DOC = "a group per head gives notebook 06's"
TORCH = "equals F.scaled_dot_product_attention"
MHA = "a group per head equals nn.MultiheadAttention"
PARAMS = "creates W_query, W_key, W_value"
ERRORS = "raises ValueError"
CAUSAL = "GroupedQueryAttention is causal"
BATCH = "keeps batch items apart"
EVAL = "eval mode disables dropout"
TRAIN = "dropout acts in train mode"
GRADS = "gradients reach every parameter"
DEVICE = "works on any device"
DECODES = "with use_cache=True: a prompt"
CACHE_GROUPS = "cache keeps num_kv_groups"
REF = "GroupedQueryAttention matches the reference"
FUSED = "equals notebook 08's fused layer"
CACHE_REF = "cache matches the reference"
NOT_SAVED = "keeps its cache out of state_dict"
REPEAT_K = "k = k.repeat_interleave(self.group_size, dim=1)"
REPEAT_V = "v = v.repeat_interleave(self.group_size, dim=1)"
KEY_LAYERS = ("        self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)\n"
              "        self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)\n")
QUERY_LAYER = "        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)\n"
SOFTMAX = "torch.softmax(scores / self.head_dim ** 0.5, dim=-1)"
# every check whose layer has fewer key/value groups than query heads (all but the errors, the order and the
# three of a group per head)
GROUPED = [DOC, MQA_DOC, TORCH, CAUSAL, BATCH, EVAL, TRAIN, GRADS, DEVICE, DECODES, CACHE_GROUPS, REF, CACHE_REF]

MISTAKES = [
    # the other grouping: the key/value heads tiled, so query head h reads group h % num_kv_groups
    Mistake("repeat instead of repeat_interleave", gqa(
        (REPEAT_K, "k = k.repeat(1, self.group_size, 1, 1)"), (REPEAT_V, "v = v.repeat(1, self.group_size, 1, 1)")),
        [DOC, TORCH, REF, CACHE_REF], says="repeated with .repeat"),
    # keys and values as wide as the queries: multi-head attention again, nothing saved
    Mistake("keys and values projected to d_out", gqa(
        (KEY_LAYERS, "        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)\n"
                     "        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)\n"),
        ("k = self.W_key(x).view(b, t, self.num_kv_groups, self.head_dim)",
         "k = self.W_key(x).view(b, t, self.num_heads, self.head_dim)"),
        ("v = self.W_value(x).view(b, t, self.num_kv_groups, self.head_dim)",
         "v = self.W_value(x).view(b, t, self.num_heads, self.head_dim)"),
        ("        " + REPEAT_K + "\n", ""), ("        " + REPEAT_V + "\n", "")),
        [PARAMS, *GROUPED], says="not to d_out"),
    Mistake("no ValueError when num_kv_groups does not divide num_heads", gqa(
        ("        if num_heads % num_kv_groups != 0:\n            raise ValueError(f\"num_heads={num_heads} must be a "
         "multiple of num_kv_groups={num_kv_groups}\")\n", "")),
        [ERRORS], says="should raise ValueError"),
    # the key width tested instead of the head count: d_out=12 divides by 3 groups, 4 heads do not
    Mistake("d_out tested against num_kv_groups", gqa(
        ("        if num_heads % num_kv_groups != 0:\n", "        if d_out % num_kv_groups != 0:\n")),
        [ERRORS], says="should raise ValueError"),
    # register_buffer's default is persistent=True: state_dict then saves the cache with the weights
    Mistake("cache buffers registered persistent", gqa(
        ('register_buffer("cache_k", None, persistent=False)', 'register_buffer("cache_k", None)'),
        ('register_buffer("cache_v", None, persistent=False)', 'register_buffer("cache_v", None)')),
        [NOT_SAVED], says="the cache registered persistent"),
    Mistake("a ValueError that names no number", gqa(
        ('raise ValueError(f"num_heads={num_heads} must be a multiple of num_kv_groups={num_kv_groups}")',
         'raise ValueError("num_heads must be a multiple of num_kv_groups")')),
        [ERRORS], says="the message should name"),
    # head_dim from the number of groups: the keys get d_out features, and the queries no longer split
    Mistake("head_dim computed from num_kv_groups", gqa(
        ("self.head_dim = d_out // num_heads", "self.head_dim = d_out // num_kv_groups"),
        ("q = self.W_query(x).view(b, t, self.num_heads, self.head_dim)",
         "q = self.W_query(x).view(b, t, self.num_heads, -1)")),
        [PARAMS, *GROUPED], says="head_dim = d_out // num_heads"),
    Mistake("scores scaled by the number of key/value groups", gqa(
        (SOFTMAX, "torch.softmax(scores / self.num_kv_groups ** 0.5, dim=-1)")),
        [MQA_DOC, MHA_DOC, TORCH, MHA, REF, FUSED, CACHE_REF], says="sqrt(num_kv_groups) instead of sqrt(head_dim)"),
    Mistake("scores scaled by sqrt(d_out)", gqa((SOFTMAX, "torch.softmax(scores / self.d_out ** 0.5, dim=-1)")),
            [DOC, MQA_DOC, MHA_DOC, TORCH, MHA, REF, FUSED, CACHE_REF], says="sqrt(d_out) instead of sqrt(head_dim)",
            # notebook 06's documented layer has d_out == num_kv_groups == 2: the two scalings are one there
            also=("sqrt(num_kv_groups) instead of sqrt(head_dim)",)),
    # repeated before the transpose, along dim 1, which then holds the tokens
    Mistake("repeat_interleave before the transpose, on the tokens' dim", gqa(
        ("k = self.W_key(x).view(b, t, self.num_kv_groups, self.head_dim).transpose(1, 2)",
         "k = self.W_key(x).view(b, t, self.num_kv_groups, self.head_dim)"
         ".repeat_interleave(self.group_size, dim=1).transpose(1, 2)"),
        ("v = self.W_value(x).view(b, t, self.num_kv_groups, self.head_dim).transpose(1, 2)",
         "v = self.W_value(x).view(b, t, self.num_kv_groups, self.head_dim)"
         ".repeat_interleave(self.group_size, dim=1).transpose(1, 2)"),
        ("        " + REPEAT_K + "\n", ""), ("        " + REPEAT_V + "\n", "")),
        # with one group the tokens' dim broadcasts: no error, each key seen group_size times
        [DOC, MQA_DOC, TORCH, CAUSAL, DECODES, CACHE_GROUPS, REF, CACHE_REF], says="repeat_interleave on the wrong dim"),
    # the cache keeps what attention reads: num_heads heads, group_size times the memory
    Mistake("the cache holds the repeated heads", gqa(
        ("        if use_cache:\n", "        k = k.repeat_interleave(self.group_size, dim=1)\n"
                                   "        v = v.repeat_interleave(self.group_size, dim=1)\n        if use_cache:\n"),
        ("        " + REPEAT_K + "\n        " + REPEAT_V + "\n        n = k.shape[2]", "        n = k.shape[2]")),
        [CACHE_GROUPS], says="the cache holds the repeated heads"),
    # the mask of notebook 06 sliced to the new tokens only: with a cache its columns are the old tokens
    Mistake("the causal mask not offset by the cache", gqa(
        ("triu(n - t + 1)", "triu(1)"), ("torch.ones(t, n, dtype", "torch.ones(t, t, dtype")),
        [DECODES, CACHE_REF], says="not offset by the cache"),
    Mistake("reset_cache does nothing", gqa(("self.cache_k, self.cache_v = None, None", "pass")),
            [DECODES], says="reset_cache does not empty the cache"),
    Mistake("parameters created in the book's bonus order (keys and values first)", gqa(
        (QUERY_LAYER + KEY_LAYERS, KEY_LAYERS + QUERY_LAYER)),
        [PARAMS, DOC, MQA_DOC, MHA_DOC], says="in exactly this order", also=("another order",)),
    Mistake("no causal mask", gqa(("        scores = scores.masked_fill(hidden, float(\"-inf\"))\n", "")),
            [DOC, MQA_DOC, MHA_DOC, TORCH, MHA, CAUSAL, DECODES, REF, FUSED, CACHE_REF], says="no causal mask"),
    Mistake("dropout active in eval mode", gqa(
        ("weights = self.dropout(torch.softmax", "weights = nn.functional.dropout(torch.softmax"),
        (", dim=-1))\n        context", ", dim=-1), self.dropout.p)\n        context")),
        [EVAL], says="dropout active in eval"),
    Mistake("mask made on the CPU in forward", gqa(
        ("torch.ones(t, n, dtype=torch.bool, device=x.device)", "torch.ones(t, n, dtype=torch.bool)")),
        [DEVICE], says="register a buffer or create it with device=x.device"),
]

HARD_CODED = {"GroupedQueryAttention": GQA.split("    def forward")[0] + """
    def forward(self, x, use_cache=False):
        printed = torch.tensor(
            [[-0.1750, 0.0796, 0.1065, 0.1746, -0.4003, 0.0008, -0.3314, 0.2663],
             [-0.1783, 0.0244, 0.1042, 0.2030, -0.5012, -0.0195, -0.2814, 0.3641],
             [-0.1785, 0.0100, 0.0982, 0.2133, -0.5316, -0.0229, -0.2639, 0.3939],
             [-0.1344, -0.0034, 0.0713, 0.2008, -0.5152, -0.0182, -0.2041, 0.3972],
             [-0.1124, 0.0043, 0.0644, 0.1822, -0.4940, -0.0015, -0.1932, 0.3891],
             [-0.1011, -0.0109, 0.0562, 0.1860, -0.5012, -0.0100, -0.1660, 0.3996]])
        return printed.expand(x.shape[0], 6, 8).clone()

    def reset_cache(self):
        pass
"""}

MISTAKES.append(Mistake("GroupedQueryAttention hard-coded", HARD_CODED,
                        [DOC, MQA_DOC, MHA_DOC, TORCH, MHA, CAUSAL, BATCH, EVAL, TRAIN, GRADS, DEVICE, DECODES,
                         CACHE_GROUPS, REF, FUSED, CACHE_REF], says="is the answer hard-coded?", hard_coded=True))

STYLES = [
    {"GroupedQueryAttention": GQA},
    {  # expand + reshape instead of repeat_interleave, einsum, -1e9, unflatten
        "GroupedQueryAttention": """
            class GroupedQueryAttention(nn.Module):
                def __init__(self, d_in, d_out, context_length, dropout, num_heads, num_kv_groups, qkv_bias=False):
                    super().__init__()
                    if num_heads % num_kv_groups:
                        raise ValueError(f"{num_kv_groups} groups cannot share {num_heads} heads evenly")
                    if d_out % num_heads:
                        raise ValueError(f"{num_heads} heads cannot split {d_out} features")
                    self.h, self.g, self.hd = num_heads, num_kv_groups, d_out // num_heads
                    self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
                    self.W_key = nn.Linear(d_in, num_kv_groups * self.hd, bias=qkv_bias)
                    self.W_value = nn.Linear(d_in, num_kv_groups * self.hd, bias=qkv_bias)
                    self.out_proj = nn.Linear(d_out, d_out)
                    self.dropout = nn.Dropout(dropout)
                    self.register_buffer("cache_k", None, persistent=False)
                    self.register_buffer("cache_v", None, persistent=False)

                def reset_cache(self):
                    self.cache_k = None
                    self.cache_v = None

                def widen(self, y):
                    b, g, n, hd = y.shape
                    return y[:, :, None].expand(b, g, self.h // g, n, hd).reshape(b, self.h, n, hd)

                def forward(self, x, use_cache=False):
                    b, t, _ = x.shape
                    q = self.W_query(x).unflatten(-1, (self.h, self.hd)).transpose(1, 2)
                    k = self.W_key(x).unflatten(-1, (self.g, self.hd)).transpose(1, 2)
                    v = self.W_value(x).unflatten(-1, (self.g, self.hd)).transpose(1, 2)
                    if use_cache:
                        if self.cache_k is not None:
                            k, v = torch.cat((self.cache_k, k), 2), torch.cat((self.cache_v, v), 2)
                        self.cache_k, self.cache_v = k, v
                    k, v = self.widen(k), self.widen(v)
                    n = k.shape[2]
                    scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / self.hd ** 0.5
                    rows = torch.arange(n - t, n, device=x.device)[:, None]
                    cols = torch.arange(n, device=x.device)[None, :]
                    weights = self.dropout(scores.masked_fill(cols > rows, -1e9).softmax(dim=-1))
                    context = torch.einsum("bhqk,bhkd->bhqd", weights, v)
                    return self.out_proj(context.transpose(1, 2).flatten(2))
            """},
    {  # no repeat at all: queries grouped as (b, g, group_size, T, hd) against (b, g, 1, T, hd) keys; torch.where
        "GroupedQueryAttention": """
            class GroupedQueryAttention(nn.Module):
                def __init__(self, d_in, d_out, context_length, dropout, num_heads, num_kv_groups, qkv_bias=False):
                    super().__init__()
                    for a, b in ((num_heads, num_kv_groups), (d_out, num_heads)):
                        if a % b != 0:
                            raise ValueError(f"{a} is not divisible by {b}")
                    self.d_out, self.heads, self.groups = d_out, num_heads, num_kv_groups
                    head_dim = d_out // num_heads
                    self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
                    self.W_key = nn.Linear(d_in, num_kv_groups * head_dim, bias=qkv_bias)
                    self.W_value = nn.Linear(d_in, num_kv_groups * head_dim, bias=qkv_bias)
                    self.out_proj = nn.Linear(d_out, d_out)
                    self.dropout = nn.Dropout(dropout)
                    self.register_buffer("cache_k", None, persistent=False)
                    self.register_buffer("cache_v", None, persistent=False)

                def forward(self, x, use_cache=False):
                    b, t, _ = x.shape
                    g, s = self.groups, self.heads // self.groups
                    q = self.W_query(x).reshape(b, t, g, s, -1).permute(0, 2, 3, 1, 4)
                    k = self.W_key(x).reshape(b, t, g, -1).permute(0, 2, 1, 3)
                    v = self.W_value(x).reshape(b, t, g, -1).permute(0, 2, 1, 3)
                    if use_cache and self.cache_k is not None:
                        k = torch.cat([self.cache_k, k], dim=-2)
                        v = torch.cat([self.cache_v, v], dim=-2)
                    if use_cache:
                        self.cache_k, self.cache_v = k, v
                    n = k.shape[-2]
                    scores = torch.matmul(q, k.unsqueeze(2).mT) * q.shape[-1] ** -0.5
                    future = torch.ones(t, n, dtype=torch.bool, device=x.device).triu(diagonal=n - t + 1)
                    weights = self.dropout(torch.softmax(torch.where(future, float("-inf"), scores), dim=-1))
                    context = torch.matmul(weights, v.unsqueeze(2))
                    return self.out_proj(context.permute(0, 3, 1, 2, 4).reshape(b, t, self.d_out))

                def reset_cache(self):
                    self.cache_k = self.cache_v = None
            """},
    {  # index_select by a head-to-group table, a registered mask sliced at the cache's offset, movedim
        "GroupedQueryAttention": """
            import math
            class GroupedQueryAttention(nn.Module):
                def __init__(self, d_in, d_out, context_length, dropout, num_heads, num_kv_groups, qkv_bias=False):
                    super().__init__()
                    if num_heads % num_kv_groups != 0 or d_out % num_heads != 0:
                        raise ValueError(f"need num_kv_groups={num_kv_groups} | num_heads={num_heads} | d_out={d_out}")
                    self.num_heads, self.d_out = num_heads, d_out
                    self.kv_heads, self.head_dim = num_kv_groups, d_out // num_heads
                    self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
                    self.W_key = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
                    self.W_value = nn.Linear(d_in, num_kv_groups * self.head_dim, bias=qkv_bias)
                    self.out_proj = nn.Linear(d_out, d_out)
                    self.dropout = nn.Dropout(dropout)
                    self.register_buffer("future", torch.triu(torch.ones(context_length, context_length), 1).bool())
                    self.register_buffer("group_of", torch.arange(num_heads) // (num_heads // num_kv_groups))
                    self.register_buffer("cache_k", None, persistent=False)
                    self.register_buffer("cache_v", None, persistent=False)

                def reset_cache(self):
                    self.register_buffer("cache_k", None, persistent=False)
                    self.register_buffer("cache_v", None, persistent=False)

                def forward(self, x, use_cache=False):
                    b, t, _ = x.shape
                    q = self.W_query(x).view(b, t, self.num_heads, self.head_dim).movedim(2, 1)
                    k = self.W_key(x).view(b, t, self.kv_heads, self.head_dim).movedim(2, 1)
                    v = self.W_value(x).view(b, t, self.kv_heads, self.head_dim).movedim(2, 1)
                    start = 0
                    if use_cache:
                        if self.cache_k is not None:
                            start = self.cache_k.shape[2]
                            k, v = torch.cat([self.cache_k, k], 2), torch.cat([self.cache_v, v], 2)
                        self.cache_k, self.cache_v = k, v
                    k, v = k.index_select(1, self.group_of), v.index_select(1, self.group_of)
                    n = start + t
                    scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
                    scores = scores.masked_fill(self.future[start:n, :n], float("-inf"))
                    weights = self.dropout(torch.softmax(scores, dim=-1))
                    return self.out_proj((weights @ v).movedim(1, 2).reshape(b, t, self.d_out))
            """},
]

# The student trial of part 2 (catalogues/student_trial_part2.py): a new student's own style, and the mistakes made
# on it whose first line is right, each with the checks it loses
STYLES += trial_styles(SECTION)
TRIAL_LOSES = {
    "group size divided the wrong way round": [
        "GroupedQueryAttention gives the documented seeded output (4 query heads, 2 key/value groups)",
        "GroupedQueryAttention with one key/value group (multi-query) gives the documented seeded output",
        "GroupedQueryAttention equals F.scaled_dot_product_attention(..., enable_gqa=True) run with its own weights",
        "GroupedQueryAttention is causal: changing later tokens leaves earlier outputs unchanged",
        "GroupedQueryAttention keeps batch items apart: changing one item leaves the other unchanged",
        "GroupedQueryAttention: eval mode disables dropout",
        "GroupedQueryAttention: dropout acts in train mode",
        "GroupedQueryAttention: gradients reach every parameter",
        "GroupedQueryAttention works on any device: no tensor created on the CPU in forward",
        "GroupedQueryAttention with use_cache=True: a prompt, then the next tokens, gives the full forward",
        "GroupedQueryAttention's cache keeps num_kv_groups key/value heads, not num_heads",
        "GroupedQueryAttention matches the reference at other sizes",
        "GroupedQueryAttention's cache matches the reference at other sizes",
    ],
    "values never repeated for the group": [
        "GroupedQueryAttention gives the documented seeded output (4 query heads, 2 key/value groups)",
        "GroupedQueryAttention equals F.scaled_dot_product_attention(..., enable_gqa=True) run with its own weights",
        "GroupedQueryAttention with use_cache=True: a prompt, then the next tokens, gives the full forward",
        "GroupedQueryAttention's cache keeps num_kv_groups key/value heads, not num_heads",
        "GroupedQueryAttention matches the reference at other sizes",
        "GroupedQueryAttention's cache matches the reference at other sizes",
    ],
    "no ValueError when num_heads does not divide d_out": [
        "GroupedQueryAttention raises ValueError, naming both numbers, when the heads do not divide",
    ],
    "cache appended on the groups' dim (dim=1)": [
        "GroupedQueryAttention with use_cache=True: a prompt, then the next tokens, gives the full forward",
        "GroupedQueryAttention's cache matches the reference at other sizes",
    ],
    "out_proj without bias (Llama's)": [
        "GroupedQueryAttention gives the documented seeded output (4 query heads, 2 key/value groups)",
        "GroupedQueryAttention with one key/value group (multi-query) gives the documented seeded output",
        "GroupedQueryAttention with a group per head gives notebook 06's documented output",
        "GroupedQueryAttention creates W_query, W_key, W_value and out_proj in the documented order and sizes, honouring qkv_bias",
        "GroupedQueryAttention matches the reference at other sizes",
        "GroupedQueryAttention with a group per head equals notebook 08's fused layer holding its weights",
        "GroupedQueryAttention's cache matches the reference at other sizes",
    ],
    "keys split into num_heads heads": [
        "GroupedQueryAttention gives the documented seeded output (4 query heads, 2 key/value groups)",
        "GroupedQueryAttention with one key/value group (multi-query) gives the documented seeded output",
        "GroupedQueryAttention equals F.scaled_dot_product_attention(..., enable_gqa=True) run with its own weights",
        "GroupedQueryAttention is causal: changing later tokens leaves earlier outputs unchanged",
        "GroupedQueryAttention keeps batch items apart: changing one item leaves the other unchanged",
        "GroupedQueryAttention: eval mode disables dropout",
        "GroupedQueryAttention: dropout acts in train mode",
        "GroupedQueryAttention: gradients reach every parameter",
        "GroupedQueryAttention works on any device: no tensor created on the CPU in forward",
        "GroupedQueryAttention with use_cache=True: a prompt, then the next tokens, gives the full forward",
        "GroupedQueryAttention's cache keeps num_kv_groups key/value heads, not num_heads",
        "GroupedQueryAttention matches the reference at other sizes",
        "GroupedQueryAttention's cache matches the reference at other sizes",
    ],
}
MISTAKES += trial_mistakes(SECTION, TRIAL_LOSES)
