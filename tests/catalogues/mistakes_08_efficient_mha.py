"""Section 08's catalogue: common mistakes, each with the checks it must lose, and other correct styles."""
from support import Mistake
from catalogues.student_trial_part2 import trial_mistakes, trial_styles
from autograder.core.hints import BARE_VIEW

SECTION = "08_efficient_mha"

# A correct MultiHeadAttentionFused in a style of its own (unflatten + permute + unbind, a registered mask,
# load_from through torch.cat); most mistakes below are one edit of it.
FUSED = """
class MultiHeadAttentionFused(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_out={d_out} must be a multiple of num_heads={num_heads}")
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.W_qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        full = torch.ones(context_length, context_length, dtype=torch.bool)
        self.register_buffer("mask", torch.triu(full, diagonal=1))

    def forward(self, x):
        b, t, _ = x.shape
        qkv = self.W_qkv(x).unflatten(-1, (3, self.num_heads, self.head_dim))
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)
        scores = (q @ k.transpose(2, 3)).masked_fill(self.mask[:t, :t], float("-inf"))
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        context = (weights @ v).transpose(1, 2).reshape(b, t, self.d_out)
        return self.out_proj(context)

    def load_from(self, mha):
        with torch.no_grad():
            self.W_qkv.weight.copy_(torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight]))
            if self.W_qkv.bias is not None:
                self.W_qkv.bias.copy_(torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias]))
            self.out_proj.load_state_dict(mha.out_proj.state_dict())
        return self
"""

# A correct MultiHeadAttentionSDPA: the same split, the function's dropout only in training.
SDPA = """
class MultiHeadAttentionSDPA(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_out={d_out} must be a multiple of num_heads={num_heads}")
        self.d_out, self.num_heads = d_out, num_heads
        self.W_qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = dropout

    def forward(self, x):
        b, t, _ = x.shape
        qkv = self.W_qkv(x).view(b, t, 3, self.num_heads, -1)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)
        p = self.dropout if self.training else 0.0
        context = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
        return self.out_proj(context.transpose(1, 2).reshape(b, t, self.d_out))
"""


def edited(name, source, *edits):
    """source with each (old, new) replacement made (every occurrence; each must occur), as {name: source}."""
    for old, new in edits:
        assert old in source, old
        source = source.replace(old, new)
    return {name: source}


def fused(*edits):
    return edited("MultiHeadAttentionFused", FUSED, *edits)


def sdpa(*edits):
    return edited("MultiHeadAttentionSDPA", SDPA, *edits)


SPLIT = "qkv = self.W_qkv(x).unflatten(-1, (3, self.num_heads, self.head_dim))"
SOFTMAX_LINE = "weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))"
FUSED_DOC = "MultiHeadAttentionFused gives the documented"
FUSED_TORCH = "MultiHeadAttentionFused equals nn.MultiheadAttention"
FUSED_REF = "MultiHeadAttentionFused matches the reference"
SDPA_DOC = "MultiHeadAttentionSDPA gives the documented"
SDPA_TORCH = "MultiHeadAttentionSDPA equals nn.MultiheadAttention"
SDPA_REF = "MultiHeadAttentionSDPA matches the reference"
LOAD_DOC = "load_from gives the documented"
LOAD_PARAMS = "load_from stacks W_query"
LOAD_REF = "load_from matches notebook 06"
SDPA_CALL = "context = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)"

MISTAKES = [
    # the other column order of the fused projection: head by head, as some code bases store it
    Mistake("W_qkv read head by head", fused(
        (SPLIT, "qkv = self.W_qkv(x).unflatten(-1, (self.num_heads, 3, self.head_dim))"),
        ("qkv.permute(2, 0, 3, 1, 4)", "qkv.permute(3, 0, 2, 1, 4)")),
        [FUSED_DOC, FUSED_TORCH, "MultiHeadAttentionFused.load_from gives", LOAD_REF, FUSED_REF],
        says="read head by head"),
    Mistake("keys and queries swapped in the fused output", fused(
        ("q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)", "k, q, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)")),
        [FUSED_DOC, FUSED_TORCH, "MultiHeadAttentionFused.load_from gives", LOAD_REF, FUSED_REF],
        # loaded, queries read from the keys' block give what keys stacked first give: the same mistake seen there
        says="the keys taken from W_qkv's first block", also=("another order than queries, keys, values",)),
    Mistake("fused: scale by sqrt(d_out)", fused(("scores / self.head_dim ** 0.5", "scores / self.d_out ** 0.5")),
            [FUSED_DOC, FUSED_TORCH, "MultiHeadAttentionFused.load_from gives", LOAD_REF, FUSED_REF],
            says="sqrt(d_out) instead of sqrt(head_dim)"),
    Mistake("fused: no causal mask", fused(
        ("(q @ k.transpose(2, 3)).masked_fill(self.mask[:t, :t], float(\"-inf\"))", "q @ k.transpose(2, 3)")),
        [FUSED_DOC, FUSED_TORCH, "MultiHeadAttentionFused is causal", "MultiHeadAttentionFused.load_from gives",
         LOAD_REF, FUSED_REF], says="no causal mask"),
    Mistake("fused: dropout active in eval", fused(
        (SOFTMAX_LINE, "weights = F.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1), self.dropout.p)")),
        ["MultiHeadAttentionFused: eval mode disables dropout"], says="dropout active in eval"),
    Mistake("fused: mask made on the CPU in forward", fused(
        ("masked_fill(self.mask[:t, :t]", "masked_fill(torch.ones(t, t).triu(1).bool()")),
        ["MultiHeadAttentionFused works on any device"], says="register a buffer or create it with device=x.device"),
    Mistake("fused: parameters created out of order", fused(
        ("        self.W_qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)\n        self.out_proj = nn.Linear(d_out, d_out)\n",
         "        self.out_proj = nn.Linear(d_out, d_out)\n        self.W_qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)\n")),
        ["MultiHeadAttentionFused creates W_qkv", FUSED_DOC], says="in exactly this order", also=("another order",)),
    Mistake("fused: no ValueError", fused(
        ("        if d_out % num_heads != 0:\n            raise ValueError(f\"d_out={d_out} must be a multiple of "
         "num_heads={num_heads}\")\n", "")), ["MultiHeadAttentionFused raises ValueError"],
        says="should raise ValueError"),
    Mistake("load_from stacks keys first", fused(
        ("torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight])",
         "torch.cat([mha.W_key.weight, mha.W_query.weight, mha.W_value.weight])"),
        ("torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias])",
         "torch.cat([mha.W_key.bias, mha.W_query.bias, mha.W_value.bias])")),
        [LOAD_DOC, LOAD_PARAMS, LOAD_REF], says="another order than queries, keys, values"),
    Mistake("load_from copies no bias", fused(
        ("            if self.W_qkv.bias is not None:\n                self.W_qkv.bias.copy_(torch.cat([mha.W_query.bias, "
         "mha.W_key.bias, mha.W_value.bias]))\n", "")),
        [LOAD_DOC, LOAD_PARAMS, LOAD_REF], says="biases of W_query, W_key, W_value not copied"),
    Mistake("load_from forgets out_proj", fused(
        ("            self.out_proj.load_state_dict(mha.out_proj.state_dict())\n", "")),
        [LOAD_DOC, LOAD_PARAMS, LOAD_REF], says="out_proj not copied"),
    Mistake("load_from not written", {"MultiHeadAttentionFused": FUSED.split("    def load_from")[0]},
            [LOAD_DOC, LOAD_PARAMS, LOAD_REF], says="MultiHeadAttentionFused has no load_from"),
    Mistake("load_from without torch.no_grad", fused(
        ("        with torch.no_grad():\n            self.W_qkv.weight.copy_", "        if True:\n            self.W_qkv.weight.copy_")),
        [LOAD_DOC, LOAD_PARAMS, LOAD_REF], says="torch.no_grad()"),
    Mistake("SDPA: parameters created out of order", sdpa(
        ("        self.W_qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)\n        self.out_proj = nn.Linear(d_out, d_out)\n",
         "        self.out_proj = nn.Linear(d_out, d_out)\n        self.W_qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)\n")),
        ["MultiHeadAttentionSDPA creates W_qkv", SDPA_DOC], says="in exactly this order", also=("another order",)),
    Mistake("SDPA: no ValueError", sdpa(
        ("        if d_out % num_heads != 0:\n            raise ValueError(f\"d_out={d_out} must be a multiple of "
         "num_heads={num_heads}\")\n", "")), ["MultiHeadAttentionSDPA raises ValueError"],
        says="should raise ValueError"),
    Mistake("SDPA: dropout_p in eval mode too", sdpa(("p = self.dropout if self.training else 0.0", "p = self.dropout")),
            ["MultiHeadAttentionSDPA: eval mode disables dropout"], says="dropout_p passed to F.scaled_dot_product_attention in eval mode"),
    Mistake("SDPA: no dropout in train mode", sdpa(("p = self.dropout if self.training else 0.0", "p = 0.0")),
            ["MultiHeadAttentionSDPA: in train mode"], says="no dropout applied"),
    Mistake("SDPA: notebook 06's mask passed as attn_mask", sdpa(
        (SDPA_CALL, "hidden = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)\n"
                    "        context = F.scaled_dot_product_attention(q, k, v, attn_mask=hidden, dropout_p=p)")),
        [SDPA_DOC, SDPA_TORCH, "MultiHeadAttentionSDPA is causal", SDPA_REF, "MultiHeadAttentionSDPA: in train mode"],
        says="True = may attend"),
    Mistake("SDPA: is_causal forgotten", sdpa((SDPA_CALL, SDPA_CALL.replace(", is_causal=True", ""))),
            [SDPA_DOC, SDPA_TORCH, "MultiHeadAttentionSDPA is causal", SDPA_REF, "MultiHeadAttentionSDPA: in train mode"],
            says="no causal mask"),
    Mistake("SDPA: heads never split", sdpa(
        ("qkv = self.W_qkv(x).view(b, t, 3, self.num_heads, -1)", "qkv = self.W_qkv(x).view(b, t, 3, 1, -1)"),
        ("return self.out_proj(context.transpose(1, 2).reshape(b, t, self.d_out))",
         "return self.out_proj(context.squeeze(1))")),
        [SDPA_DOC, SDPA_TORCH, SDPA_REF, "MultiHeadAttentionSDPA: in train mode"], says="heads never split"),
    Mistake("SDPA: bare view of the transposed context", sdpa(
        ("context.transpose(1, 2).reshape(b, t, self.d_out)", "context.transpose(1, 2).view(b, t, self.d_out)")),
        ["MultiHeadAttentionSDPA: in train mode"], says="view size is not compatible", hint=BARE_VIEW),
    Mistake("SDPA: softmax written out instead of the function", sdpa(
        (SDPA_CALL, "weights = torch.softmax((q @ k.transpose(2, 3) / q.shape[-1] ** 0.5).masked_fill(\n"
                    "            torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1), float('-inf')), dim=-1)\n"
                    "        context = F.dropout(weights, p, training=True) @ v")),
        ["MultiHeadAttentionSDPA calls F.scaled_dot_product_attention"],
        says="does not call F.scaled_dot_product_attention"),
]

HARD_CODED = {
    "MultiHeadAttentionFused": FUSED.split("    def forward")[0] + """
    def forward(self, x):
        printed = torch.tensor([[0.3190, 0.4858], [0.2943, 0.3897], [0.2856, 0.3593],
                                [0.2693, 0.3873], [0.2639, 0.3928], [0.2575, 0.4028]])
        return printed.expand(x.shape[0], 6, 2).clone()

    def load_from(self, mha):
        return self
""",
    "MultiHeadAttentionSDPA": SDPA.split("    def forward")[0] + """
    def forward(self, x):
        printed = torch.tensor([[0.3190, 0.4858], [0.2943, 0.3897], [0.2856, 0.3593],
                                [0.2693, 0.3873], [0.2639, 0.3928], [0.2575, 0.4028]])
        return printed.expand(x.shape[0], 6, 2).clone()
""",
}

STYLES = [
    {"MultiHeadAttentionFused": FUSED, "MultiHeadAttentionSDPA": SDPA},
    {  # chunk on the last dim, einsum, -1e9, a mask made per call on x.device; SDPA as a subclass, split by reshape
        "MultiHeadAttentionFused": """
            class MultiHeadAttentionFused(nn.Module):
                def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
                    super().__init__()
                    if d_out % num_heads:
                        raise ValueError("d_out must be divisible by num_heads")
                    self.h = num_heads
                    self.W_qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
                    self.out_proj = nn.Linear(d_out, d_out)
                    self.dropout = nn.Dropout(dropout)

                def split(self, y):
                    b, t, d = y.shape
                    return y.reshape(b, t, self.h, d // self.h).permute(0, 2, 1, 3)

                def forward(self, x):
                    b, t, _ = x.shape
                    q, k, v = (self.split(part) for part in self.W_qkv(x).chunk(3, dim=-1))
                    scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / q.shape[-1] ** 0.5
                    causal = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(diagonal=1)
                    weights = self.dropout(scores.masked_fill(causal, -1e9).softmax(dim=-1))
                    context = torch.einsum("bhqk,bhkd->bhqd", weights, v)
                    return self.out_proj(context.permute(0, 2, 1, 3).reshape(b, t, -1))

                def load_from(self, mha):
                    with torch.no_grad():
                        for i, layer in enumerate((mha.W_query, mha.W_key, mha.W_value)):
                            rows = slice(i * layer.out_features, (i + 1) * layer.out_features)
                            self.W_qkv.weight[rows] = layer.weight
                            if self.W_qkv.bias is not None:
                                self.W_qkv.bias[rows] = layer.bias
                        self.out_proj.weight.copy_(mha.out_proj.weight)
                        self.out_proj.bias.copy_(mha.out_proj.bias)
                    return self
            """,
        "MultiHeadAttentionSDPA": """
            class MultiHeadAttentionSDPA(MultiHeadAttentionFused):
                def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
                    super().__init__(d_in, d_out, context_length, 0.0, num_heads, qkv_bias)
                    del self.dropout
                    self.dropout = dropout

                def forward(self, x):
                    b, t, _ = x.shape
                    q, k, v = (self.split(part) for part in self.W_qkv(x).chunk(3, dim=-1))
                    context = nn.functional.scaled_dot_product_attention(
                        q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=True)
                    return self.out_proj(context.transpose(1, 2).flatten(2))
            """},
    {  # split by slicing, torch.where with -inf, a float mask buffer; SDPA through torch.nn.functional by name
        "MultiHeadAttentionFused": """
            class MultiHeadAttentionFused(nn.Module):
                def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
                    super().__init__()
                    if d_out % num_heads != 0:
                        raise ValueError("d_out % num_heads must be 0")
                    self.d_out, self.num_heads = d_out, num_heads
                    self.W_qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
                    self.out_proj = nn.Linear(d_out, d_out)
                    self.dropout = nn.Dropout(dropout)
                    self.register_buffer("future", torch.triu(torch.ones(context_length, context_length), 1))

                def forward(self, x):
                    b, t, _ = x.shape
                    qkv = self.W_qkv(x)
                    d, h = self.d_out, self.num_heads
                    q, k, v = (qkv[..., i * d:(i + 1) * d].view(b, t, h, d // h).transpose(1, 2) for i in range(3))
                    scores = torch.matmul(q, k.mT) * (d // h) ** -0.5
                    scores = torch.where(self.future[:t, :t].bool(), float("-inf"), scores)
                    weights = self.dropout(torch.softmax(scores, dim=-1))
                    return self.out_proj(torch.matmul(weights, v).transpose(1, 2).contiguous().view(b, t, d))

                def load_from(self, mha):
                    state = {"W_qkv.weight": torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight], 0),
                             "out_proj.weight": mha.out_proj.weight, "out_proj.bias": mha.out_proj.bias}
                    if self.W_qkv.bias is not None:
                        state["W_qkv.bias"] = torch.cat([mha.W_query.bias, mha.W_key.bias, mha.W_value.bias])
                    self.load_state_dict(state, strict=False)
                    return self
            """,
        "MultiHeadAttentionSDPA": """
            import torch.nn.functional
            class MultiHeadAttentionSDPA(nn.Module):
                def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
                    super().__init__()
                    if d_out % num_heads != 0:
                        raise ValueError("d_out % num_heads must be 0")
                    self.heads, self.dropout = num_heads, dropout
                    self.W_qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
                    self.out_proj = nn.Linear(d_out, d_out)

                def forward(self, x):
                    b, t, d3 = *x.shape[:2], self.W_qkv.out_features
                    q, k, v = self.W_qkv(x).view(b, t, 3, self.heads, d3 // (3 * self.heads)).permute(2, 0, 3, 1, 4)
                    out = torch.nn.functional.scaled_dot_product_attention(
                        q, k, v, is_causal=True, dropout_p=self.dropout * self.training)
                    return self.out_proj(out.permute(0, 2, 1, 3).reshape(b, t, -1))
            """},
    {  # qkv.split, rearranged heads with movedim, a causal mask of -inf added to the scores
        "MultiHeadAttentionFused": """
            class MultiHeadAttentionFused(nn.Module):
                def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
                    super().__init__()
                    if d_out % num_heads != 0:
                        raise ValueError(f"{num_heads} heads cannot share {d_out} features")
                    self.d_out, self.num_heads = d_out, num_heads
                    self.W_qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
                    self.out_proj = nn.Linear(d_out, d_out)
                    self.dropout = nn.Dropout(dropout)
                    bias = torch.full((context_length, context_length), float("-inf")).triu(1)
                    self.register_buffer("causal_bias", bias, persistent=False)

                def forward(self, x):
                    b, t, _ = x.shape
                    heads = [y.view(b, t, self.num_heads, -1).movedim(2, 1)
                             for y in self.W_qkv(x).split(self.d_out, dim=-1)]
                    q, k, v = heads
                    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5 + self.causal_bias[:t, :t]
                    weights = self.dropout(torch.softmax(scores, dim=-1))
                    return self.out_proj((weights @ v).movedim(1, 2).reshape(b, t, self.d_out))

                def load_from(self, mha):
                    weight = torch.cat([mha.W_query.weight.data, mha.W_key.weight.data, mha.W_value.weight.data])
                    self.W_qkv.weight.data.copy_(weight)
                    if self.W_qkv.bias is not None:
                        self.W_qkv.bias.data.copy_(torch.cat([mha.W_query.bias.data, mha.W_key.bias.data,
                                                              mha.W_value.bias.data]))
                    self.out_proj.weight.data.copy_(mha.out_proj.weight.data)
                    self.out_proj.bias.data.copy_(mha.out_proj.bias.data)
                    return self
            """,
        "MultiHeadAttentionSDPA": """
            from torch.nn.functional import scaled_dot_product_attention
            class MultiHeadAttentionSDPA(nn.Module):
                def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
                    super().__init__()
                    if d_out % num_heads != 0:
                        raise ValueError(f"{num_heads} heads cannot share {d_out} features")
                    self.d_out, self.num_heads, self.dropout = d_out, num_heads, dropout
                    self.W_qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
                    self.out_proj = nn.Linear(d_out, d_out)

                def forward(self, x):
                    b, t, _ = x.shape
                    q, k, v = (y.view(b, t, self.num_heads, -1).transpose(1, 2)
                               for y in self.W_qkv(x).split(self.d_out, dim=-1))
                    if self.training:
                        out = scaled_dot_product_attention(q, k, v, dropout_p=self.dropout, is_causal=True)
                    else:
                        out = scaled_dot_product_attention(q, k, v, is_causal=True)
                    return self.out_proj(out.transpose(1, 2).reshape(b, t, self.d_out))
            """},
]

# answers written out: each named in its own cell
MISTAKES.append(Mistake("MultiHeadAttentionFused hard-coded",
                        {"MultiHeadAttentionFused": HARD_CODED["MultiHeadAttentionFused"]},
                        [FUSED_DOC, FUSED_TORCH, "MultiHeadAttentionFused is causal", "MultiHeadAttentionFused: eval",
                         "MultiHeadAttentionFused: dropout acts", "MultiHeadAttentionFused: gradients",
                         "MultiHeadAttentionFused works on any device", LOAD_DOC, LOAD_PARAMS, LOAD_REF, FUSED_REF],
                        says="is the answer hard-coded?", hard_coded=True))
MISTAKES.append(Mistake("MultiHeadAttentionSDPA hard-coded",
                        {"MultiHeadAttentionSDPA": HARD_CODED["MultiHeadAttentionSDPA"]},
                        [SDPA_DOC, "calls F.scaled_dot_product_attention", SDPA_TORCH, "MultiHeadAttentionSDPA is causal",
                         "MultiHeadAttentionSDPA: eval", "MultiHeadAttentionSDPA: in train mode",
                         "MultiHeadAttentionSDPA: gradients", SDPA_REF],
                        # an answer written out calls no function either
                        says="is the answer hard-coded?", hard_coded=True, also=("not called",)))

# The student trial of part 2 (catalogues/student_trial_part2.py): a new student's own style, and the mistakes made
# on it whose first line is right, each with the checks it loses
STYLES += trial_styles(SECTION)
TRIAL_LOSES = {
    "heads never moved before the tokens (unflatten without transpose)": [
        "MultiHeadAttentionFused gives the documented seeded output",
        "MultiHeadAttentionFused.load_from gives the documented output of a MultiHeadAttention with biases",
        "MultiHeadAttentionFused equals nn.MultiheadAttention run with its own weights",
        "MultiHeadAttentionFused is causal: changing later tokens leaves earlier outputs unchanged",
        "MultiHeadAttentionFused: eval mode disables dropout",
        "MultiHeadAttentionFused: dropout acts in train mode",
        "MultiHeadAttentionFused: gradients reach every parameter",
        "MultiHeadAttentionFused works on any device: no tensor created on the CPU in forward",
        "MultiHeadAttentionFused matches the reference at other sizes",
        "MultiHeadAttentionFused.load_from matches notebook 06's MultiHeadAttention at other sizes",
    ],
    "masked scores filled with 0 instead of -inf": [
        "MultiHeadAttentionFused gives the documented seeded output",
        "MultiHeadAttentionFused.load_from gives the documented output of a MultiHeadAttention with biases",
        "MultiHeadAttentionFused equals nn.MultiheadAttention run with its own weights",
        "MultiHeadAttentionFused is causal: changing later tokens leaves earlier outputs unchanged",
        "MultiHeadAttentionFused matches the reference at other sizes",
        "MultiHeadAttentionFused.load_from matches notebook 06's MultiHeadAttention at other sizes",
    ],
    "softmax over the queries (dim=-2)": [
        "MultiHeadAttentionFused gives the documented seeded output",
        "MultiHeadAttentionFused.load_from gives the documented output of a MultiHeadAttention with biases",
        "MultiHeadAttentionFused equals nn.MultiheadAttention run with its own weights",
        "MultiHeadAttentionFused is causal: changing later tokens leaves earlier outputs unchanged",
        "MultiHeadAttentionFused matches the reference at other sizes",
        "MultiHeadAttentionFused.load_from matches notebook 06's MultiHeadAttention at other sizes",
    ],
    "heads combined without moving the tokens back (bhqd flattened)": [
        "MultiHeadAttentionFused gives the documented seeded output",
        "MultiHeadAttentionFused.load_from gives the documented output of a MultiHeadAttention with biases",
        "MultiHeadAttentionFused equals nn.MultiheadAttention run with its own weights",
        "MultiHeadAttentionFused is causal: changing later tokens leaves earlier outputs unchanged",
        "MultiHeadAttentionFused matches the reference at other sizes",
        "MultiHeadAttentionFused.load_from matches notebook 06's MultiHeadAttention at other sizes",
    ],
    "load_from replaces W_qkv.weight by a new Parameter": [
        "MultiHeadAttentionFused.load_from stacks W_query, W_key, W_value into W_qkv and copies out_proj",
    ],
    "load_from stacks the transposed weights (notebook 03's copy)": [
        "MultiHeadAttentionFused.load_from gives the documented output of a MultiHeadAttention with biases",
        "MultiHeadAttentionFused.load_from stacks W_query, W_key, W_value into W_qkv and copies out_proj",
        "MultiHeadAttentionFused.load_from matches notebook 06's MultiHeadAttention at other sizes",
    ],
    "out_proj without bias": [
        "MultiHeadAttentionSDPA gives the documented seeded output",
        "MultiHeadAttentionSDPA creates W_qkv and out_proj in the documented order, honouring qkv_bias",
        "MultiHeadAttentionSDPA matches the reference at other sizes",
    ],
    "SDPA given (b, T, heads, head_dim): attention across heads": [
        "MultiHeadAttentionSDPA gives the documented seeded output",
        "MultiHeadAttentionSDPA equals nn.MultiheadAttention run with its own weights",
        "MultiHeadAttentionSDPA is causal: changing later tokens leaves earlier outputs unchanged",
        "MultiHeadAttentionSDPA: in train mode, dropout as F.scaled_dot_product_attention draws it",
        "MultiHeadAttentionSDPA matches the reference at other sizes",
    ],
}
MISTAKES += trial_mistakes(SECTION, TRIAL_LOSES)
