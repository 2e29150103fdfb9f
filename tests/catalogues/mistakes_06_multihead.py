"""Section 06's catalogue: common mistakes, each with the checks it must lose, and other correct styles."""
from support import (Mistake)
from autograder.core.hints import BARE_VIEW, FLOAT_SIZE

SECTION = "06_multihead"


# A correct MultiHeadAttention in a style of its own (view + transpose, contiguous().view back, a
# registered mask); most mistakes below are one edit of it.
MHA = """
class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError(f"d_out={d_out} must be a multiple of num_heads={num_heads}")
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        full = torch.ones(context_length, context_length, dtype=torch.bool)
        self.register_buffer("mask", torch.triu(full, diagonal=1))

    def forward(self, x, key_padding_mask=None):
        b, t, _ = x.shape
        def split(y):
            return y.view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        q, k, v = split(self.W_query(x)), split(self.W_key(x)), split(self.W_value(x))
        scores = q @ k.transpose(2, 3)
        hidden = self.mask[:t, :t]
        if key_padding_mask is not None:
            hidden = hidden | key_padding_mask[:, None, None, :]
        scores = scores.masked_fill(hidden, float("-inf"))
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        context = (weights @ v).transpose(1, 2).contiguous().view(b, t, self.d_out)
        return self.out_proj(context)
"""


def mha(*edits):
    """MHA with each (old, new) replacement made (every occurrence; each must occur)."""
    source = MHA
    for old, new in edits:
        assert old in source, old
        source = source.replace(old, new)
    return {"MultiHeadAttention": source}


SOFTMAX_LINE = "weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))"
EQUALS_TORCH = "equals nn.MultiheadAttention run with its own weights"
OTHER_SIZES = "MultiHeadAttention matches the reference at other sizes"

# split_heads with a bare view: (B, T, D) read as (B, H, T, hd) without the transpose
BARE_VIEW_SPLIT = """
            def split_heads(x, num_heads):
                b, t, d = x.shape
                if d % num_heads:
                    raise ValueError("D must be a multiple of num_heads")
                return x.view(b, num_heads, t, d // num_heads)
            """

# the everyday nanoGPT idiom, which this section forbids (its first cell and the task say so): every check of
# MultiHeadAttention fails, those of the other names still run
BUILT_IN_ATTENTION = mha(("""        scores = q @ k.transpose(2, 3)
        hidden = self.mask[:t, :t]
        if key_padding_mask is not None:
            hidden = hidden | key_padding_mask[:, None, None, :]
        scores = scores.masked_fill(hidden, float("-inf"))
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        context = (weights @ v).transpose(1, 2).contiguous().view(b, t, self.d_out)""", """        hidden = self.mask[:t, :t]
        if key_padding_mask is not None:
            hidden = hidden | key_padding_mask[:, None, None, :]
        out = nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=~hidden,
                                                         dropout_p=self.dropout.p if self.training else 0.0)
        context = out.transpose(1, 2).contiguous().view(b, t, self.d_out)"""))

MISTAKES = [
    Mistake("split_heads with a bare view", {"split_heads": BARE_VIEW_SPLIT},
            ["split_heads matches the reference", "split_heads gives the documented"], says="bare view"),
    # a right MultiHeadAttention on top of it, calling split_heads and combine_heads: still split_heads' checks only
    Mistake("split_heads with a bare view, MultiHeadAttention right on top", {
            "split_heads": BARE_VIEW_SPLIT,
            **mha(("split(self.W_query(x)), split(self.W_key(x)), split(self.W_value(x))",
                   "(split_heads(y, self.num_heads) for y in (self.W_query(x), self.W_key(x), self.W_value(x)))"),
                  ("(weights @ v).transpose(1, 2).contiguous().view(b, t, self.d_out)", "combine_heads(weights @ v)"))},
            ["split_heads matches the reference", "split_heads gives the documented"], says="bare view"),
    # (B, T, H, hd) returned as is: on the documented input (T = H) it looks like a bare view; named as what it is
    Mistake("split_heads without the transpose", {"split_heads": """
            def split_heads(x, num_heads):
                b, t, d = x.shape
                if d % num_heads:
                    raise ValueError("D must be a multiple of num_heads")
                return x.reshape(b, t, num_heads, d // num_heads)
            """}, ["split_heads gives the documented", "split_heads matches the reference"],
            says="returned without .transpose(1, 2)"),
    Mistake("split_heads without the ValueError", {"split_heads": """
            def split_heads(x, num_heads):
                b, t, d = x.shape
                return x.reshape(b, t, num_heads, -1).transpose(1, 2)
            """}, ["split_heads raises ValueError"], says="should raise ValueError"),
    Mistake("combine_heads with a bare view of the non-contiguous tensor", {"combine_heads": """
            def combine_heads(x):
                b, h, t, hd = x.shape
                return x.transpose(1, 2).view(b, t, h * hd)
            """}, ["combine_heads works on a contiguous"], says="non-contiguous", hint=BARE_VIEW),
    Mistake("combine_heads without swapping H and T back", {"combine_heads": """
            def combine_heads(x):
                b, h, t, hd = x.shape
                return x.reshape(b, t, h * hd)
            """}, ["combine_heads undoes the documented split"], says="without swapping"),
    Mistake("wrapper concatenates along the token dim", {"MultiHeadAttentionWrapper": """
            class MultiHeadAttentionWrapper(nn.Module):
                def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
                    super().__init__()
                    self.heads = nn.ModuleList(
                        [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)])
                def forward(self, x):
                    return torch.cat([head(x) for head in self.heads], dim=1)
            """}, ["MultiHeadAttentionWrapper matches the reference", "MultiHeadAttentionWrapper gives the documented"],
            says="token dim"),
    Mistake("wrapper drops qkv_bias", {"MultiHeadAttentionWrapper": """
            class MultiHeadAttentionWrapper(nn.Module):
                def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
                    super().__init__()
                    self.heads = nn.ModuleList(
                        [CausalAttention(d_in, d_out, context_length, dropout) for _ in range(num_heads)])
                def forward(self, x):
                    return torch.cat([head(x) for head in self.heads], dim=-1)
            """}, ["MultiHeadAttentionWrapper creates its heads in order"], says="qkv_bias not passed"),
    Mistake("wrapper drops dropout", {"MultiHeadAttentionWrapper": """
            class MultiHeadAttentionWrapper(nn.Module):
                def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
                    super().__init__()
                    self.heads = nn.ModuleList([CausalAttention(d_in, d_out, context_length, 0.0, qkv_bias)
                                                for _ in range(num_heads)])
                def forward(self, x):
                    return torch.cat([head(x) for head in self.heads], dim=-1)
            """}, ["MultiHeadAttentionWrapper creates its heads in order"], says="dropout not passed"),
    Mistake("scale by sqrt(d_out)", mha(("self.head_dim ** 0.5", "self.d_out ** 0.5")),
            [EQUALS_TORCH, "MultiHeadAttention gives the documented", OTHER_SIZES],
            says="sqrt(d_out) instead of sqrt(head_dim)"),
    Mistake("bare view when splitting heads", mha(
        ("y.view(b, t, self.num_heads, self.head_dim).transpose(1, 2)", "y.view(b, self.num_heads, t, self.head_dim)")),
        ["MultiHeadAttention gives the documented", EQUALS_TORCH, "causality", OTHER_SIZES],
        says="bare view to (B, H, T, head_dim) when splitting heads"),
    Mistake("bare view of the transposed context in forward", mha(
        ("(weights @ v).transpose(1, 2).contiguous().view(b, t, self.d_out)",
         "(weights @ v).transpose(1, 2).view(b, t, self.d_out)")),
        [EQUALS_TORCH, OTHER_SIZES], says="bare .view of the transposed tensor", hint=BARE_VIEW),
    # heads combined by a view to (B, T, d_out) without the transpose back: the future leaks into the past through
    # the mixed rows, with the mask right; the causality check named the mask before it named the mix-up
    Mistake("heads combined without the transpose back in forward", mha(
        ("(weights @ v).transpose(1, 2).contiguous().view(b, t, self.d_out)",
         "(weights @ v).contiguous().view(b, t, self.d_out)")),
        ["MultiHeadAttention gives the documented", EQUALS_TORCH, "causality", OTHER_SIZES],
        says="without swapping H and T back"),
    Mistake("no out_proj", mha(("return self.out_proj(context)", "return context")),
            [EQUALS_TORCH, "MultiHeadAttention gives the documented", "gradients reach every parameter",
             OTHER_SIZES], says="no out_proj"),
    Mistake("loop over heads", mha(("scores = q @ k.transpose(2, 3)", "scores = torch.stack(["
                                    "q[:, i] @ k[:, i].transpose(1, 2) for i in range(self.num_heads)], dim=1)")),
            ["no Python loop over heads"], says="Python loop over heads"),
    Mistake("mask made on the CPU in forward", mha(
        ("hidden = self.mask[:t, :t]", "hidden = torch.triu(torch.ones(t, t), diagonal=1).bool()")),
        ["works on any device"], says="register a buffer or create it with device=x.device"),
    Mistake("dropout active in eval", mha((SOFTMAX_LINE, "weights = nn.functional.dropout(torch.softmax("
                                           "scores / self.head_dim ** 0.5, dim=-1), self.dropout.p)")),
            ["eval mode disables dropout"], says="dropout active in eval"),
    Mistake("no dropout in train mode",
            mha((SOFTMAX_LINE, "weights = torch.softmax(scores / self.head_dim ** 0.5, dim=-1)")),
            ["dropout acts in train mode"], says="no dropout applied"),
    Mistake("dropout on the scores before the softmax", mha((SOFTMAX_LINE,
            "weights = torch.softmax(self.dropout(scores) / self.head_dim ** 0.5, dim=-1)")),
            ["dropout on the attention weights as nn.Dropout"], says="dropout applied to the masked scores"),
    Mistake("dropout on the context vectors", mha(
        (SOFTMAX_LINE, "weights = torch.softmax(scores / self.head_dim ** 0.5, dim=-1)"),
        ("context = (weights @ v).transpose(1, 2)", "context = self.dropout(weights @ v).transpose(1, 2)")),
        ["dropout on the attention weights as nn.Dropout"], says="context vectors"),
    Mistake("diagonal masked", mha(("torch.triu(full, diagonal=1)", "torch.triu(full, diagonal=0)")),
            [EQUALS_TORCH, "MultiHeadAttention gives the documented", OTHER_SIZES], says="diagonal masked", asks=("a row with every key hidden",)),
    Mistake("no causal mask", mha(("hidden = self.mask[:t, :t]", "hidden = torch.zeros_like(self.mask[:t, :t])")),
            ["causality", EQUALS_TORCH, "MultiHeadAttention gives the documented", OTHER_SIZES], says="causal mask", also=("no causal mask",)),
    Mistake("padding mask replaces the causal mask", mha(
        ("        hidden = self.mask[:t, :t]\n        if key_padding_mask is not None:\n"
         "            hidden = hidden | key_padding_mask[:, None, None, :]\n",
         "        hidden = self.mask[:t, :t]\n        if key_padding_mask is not None:\n"
         "            hidden = key_padding_mask[:, None, None, :]\n")),
        ["key_padding_mask hides padded keys"], says="without the causal mask"),
    Mistake("padding mask inverted", mha(("hidden | key_padding_mask", "hidden | ~key_padding_mask")),
            ["key_padding_mask hides padded keys"], says="inverted"),
    Mistake("parameters created out of order", mha(
        ("        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)\n",
         "        self.out_proj = nn.Linear(d_out, d_out)\n"
         "        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)\n"),
        ("        self.out_proj = nn.Linear(d_out, d_out)\n        self.dropout", "        self.dropout")),
        ["MultiHeadAttention creates its parameters in the documented order", "MultiHeadAttention gives the documented"],
        says="in exactly this order", also=("another order",)),
    Mistake("no ValueError for d_out % num_heads", mha(
        ("        if d_out % num_heads != 0:\n            raise ValueError(f\"d_out={d_out} must be a multiple of "
         "num_heads={num_heads}\")\n", "")),
        ["raises ValueError when d_out"], says="should raise ValueError"),
    Mistake("qkv_bias ignored", mha(("bias=qkv_bias", "bias=False")),
            ["honours qkv_bias"], says="qkv_bias ignored"),
    Mistake("batch dim dropped: all tokens of the batch attend to each other", mha(
        ("return y.view(b, t, self.num_heads, self.head_dim).transpose(1, 2)",
         "return y.view(-1, self.num_heads, self.head_dim).transpose(0, 1)"),
        ("hidden = self.mask[:t, :t]", "hidden = torch.ones(b * t, b * t, dtype=torch.bool, device=x.device).triu(1)"),
        ("hidden = hidden | key_padding_mask[:, None, None, :]", "hidden = hidden | key_padding_mask.reshape(1, -1)"),
        ("scores = q @ k.transpose(2, 3)", "scores = q @ k.transpose(1, 2)"),
        ("(weights @ v).transpose(1, 2).contiguous()", "(weights @ v).transpose(0, 1).contiguous()")),
        ["batch items independent", EQUALS_TORCH, "MultiHeadAttention gives the documented", OTHER_SIZES],
        says="keep the batch dim apart"),
    # one raw TypeError in every check of the class, with no hint, before it was named
    Mistake("float head_dim", mha(("self.head_dim = d_out, num_heads, d_out // num_heads",
                                   "self.head_dim = d_out, num_heads, d_out / num_heads")),
            ["MultiHeadAttention gives the documented", EQUALS_TORCH, "causality:", "on top of the causal",
             "keeps batch items", "eval mode disables", "dropout acts in train", "as nn.Dropout does",
             "out_proj included", "no Python loop over heads", "MultiHeadAttention works on any device", OTHER_SIZES],
            says="d_out // num_heads", hint=FLOAT_SIZE),
    Mistake("MultiHeadAttention uses F.scaled_dot_product_attention", BUILT_IN_ATTENTION,
            ["MultiHeadAttention gives the documented", "MultiHeadAttention creates its parameters",
             "honours qkv_bias", "raises ValueError when d_out", EQUALS_TORCH, "causality:", "on top of the causal",
             "keeps batch items", "eval mode disables", "dropout acts in train", "as nn.Dropout does",
             "out_proj included", "no Python loop over heads", "MultiHeadAttention works on any device",
             OTHER_SIZES], says="forbids"),
]

HARD_CODED = {
    "split_heads": """
        def split_heads(x, num_heads):
            return torch.tensor([[[1, 2, 3, 4], [9, 10, 11, 12]], [[5, 6, 7, 8], [13, 14, 15, 16]],
                                 [[17, 18, 19, 20], [25, 26, 27, 28]], [[21, 22, 23, 24], [29, 30, 31, 32]]]
                                ).reshape(2, 2, 2, 4)
        """,
    "MultiHeadAttentionWrapper": """
        class MultiHeadAttentionWrapper(nn.Module):
            def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
                super().__init__()
                self.heads = nn.ModuleList(
                    [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)])
            def forward(self, x):
                printed = torch.tensor([[-0.4519, 0.2216, 0.4772, 0.1063], [-0.5874, 0.0058, 0.5891, 0.3257],
                                        [-0.6300, -0.0632, 0.6202, 0.3860], [-0.5675, -0.0843, 0.5478, 0.3589],
                                        [-0.5526, -0.0981, 0.5321, 0.3428], [-0.5299, -0.1081, 0.5077, 0.3493]])
                return printed.expand(x.shape[0], 6, 4).clone()
        """,
    "MultiHeadAttention": MHA.split("    def forward")[0] + """
    def forward(self, x, key_padding_mask=None):
        printed = torch.tensor([[0.3190, 0.4858], [0.2943, 0.3897], [0.2856, 0.3593],
                                [0.2693, 0.3873], [0.2639, 0.3928], [0.2575, 0.4028]])
        return printed.expand(x.shape[0], 6, 2).clone()
""",
}
# the documented layout written out: named in split_heads's own cell
MISTAKES.append(Mistake("split_heads hard-coded", {"split_heads": HARD_CODED["split_heads"]},
                        ["split_heads gives the documented", "split_heads raises ValueError",
                         "split_heads matches the reference on new"], says="is the answer hard-coded?",
                        hard_coded=True))
# answers written out for the other names: each named in its own cell
MISTAKES.append(Mistake("combine_heads hard-coded", {"combine_heads": """
            def combine_heads(x):
                return torch.linspace(-1.0, 1.0, 2 * 7 * 12).reshape(2, 7, 12)
            """}, ["combine_heads undoes the documented split", "combine_heads works on a contiguous"], says="is the answer hard-coded?",
                        hard_coded=True))
MISTAKES.append(Mistake("MultiHeadAttentionWrapper hard-coded",
                        {"MultiHeadAttentionWrapper": HARD_CODED["MultiHeadAttentionWrapper"]},
                        ["MultiHeadAttentionWrapper gives the documented", "MultiHeadAttentionWrapper matches the reference"], says="is the answer hard-coded?",
                        hard_coded=True))
MISTAKES.append(Mistake("MultiHeadAttention hard-coded", {"MultiHeadAttention": HARD_CODED["MultiHeadAttention"]},
                        ["MultiHeadAttention gives the documented", EQUALS_TORCH, "causality",
                         "key_padding_mask hides padded keys", "batch items independent", "eval mode disables dropout",
                         "dropout acts in train mode", "gradients reach every parameter", "no Python loop over heads",
                         "works on any device", OTHER_SIZES], says="is the answer hard-coded?",
                        hard_coded=True))

STYLES = [
    {"MultiHeadAttention": MHA},
    {  # einsum, reshape/permute, -1e9, the mask built per call on x.device
        "split_heads": """
            def split_heads(x, num_heads):
                b, t, d = x.shape
                if d % num_heads:
                    raise ValueError(f"{d} features cannot be split into {num_heads} heads")
                return x.reshape(b, t, num_heads, d // num_heads).permute(0, 2, 1, 3)
            """,
        "combine_heads": """
            def combine_heads(x):
                b, h, t, hd = x.shape
                return x.permute(0, 2, 1, 3).reshape(b, t, h * hd)
            """,
        "MultiHeadAttention": """
            class MultiHeadAttention(nn.Module):
                def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
                    super().__init__()
                    if d_out % num_heads:
                        raise ValueError("d_out must be divisible by num_heads")
                    self.h = num_heads
                    self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
                    self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
                    self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
                    self.out_proj = nn.Linear(d_out, d_out)
                    self.dropout = nn.Dropout(dropout)

                def forward(self, x, key_padding_mask=None):
                    b, t, _ = x.shape
                    q = split_heads(self.W_query(x), self.h)
                    k = split_heads(self.W_key(x), self.h)
                    v = split_heads(self.W_value(x), self.h)
                    scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / q.shape[-1] ** 0.5
                    causal = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(diagonal=1)
                    scores = scores.masked_fill(causal, -1e9)
                    if key_padding_mask is not None:
                        scores = scores.masked_fill(key_padding_mask.view(b, 1, 1, t), -1e9)
                    weights = self.dropout(scores.softmax(dim=-1))
                    return self.out_proj(combine_heads(torch.einsum("bhqk,bhkd->bhqd", weights, v)))
            """},
    {  # torch.where with -inf, unflatten/flatten, a float mask buffer, a wrapper built in a loop
        "split_heads": """
            def split_heads(x, num_heads):
                if x.shape[-1] % num_heads != 0:
                    raise ValueError("num_heads must divide the feature size")
                return x.unflatten(-1, (num_heads, -1)).transpose(1, 2)
            """,
        "combine_heads": """
            def combine_heads(x):
                return x.transpose(1, 2).flatten(start_dim=2)
            """,
        "MultiHeadAttentionWrapper": """
            class MultiHeadAttentionWrapper(nn.Module):
                def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
                    super().__init__()
                    self.heads = nn.ModuleList()
                    for _ in range(num_heads):
                        self.heads.append(CausalAttention(d_in, d_out, context_length, dropout, qkv_bias=qkv_bias))
                def forward(self, x):
                    outputs = []
                    for head in self.heads:
                        outputs.append(head(x))
                    return torch.concat(outputs, dim=2)
            """,
        "MultiHeadAttention": """
            class MultiHeadAttention(nn.Module):
                def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
                    super().__init__()
                    if d_out % num_heads:
                        raise ValueError("d_out % num_heads must be 0")
                    self.num_heads = num_heads
                    self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
                    self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
                    self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
                    self.out_proj = nn.Linear(d_out, d_out)
                    self.dropout = nn.Dropout(dropout)
                    self.register_buffer("future", torch.triu(torch.ones(context_length, context_length), 1))

                def forward(self, x, key_padding_mask=None):
                    t = x.shape[1]
                    layers = (self.W_query, self.W_key, self.W_value)
                    q, k, v = (split_heads(layer(x), self.num_heads) for layer in layers)
                    scores = torch.matmul(q, k.mT) * q.shape[-1] ** -0.5
                    hidden = self.future[:t, :t].bool()
                    if key_padding_mask is not None:
                        hidden = torch.logical_or(hidden, key_padding_mask.unsqueeze(1).unsqueeze(2))
                    scores = torch.where(hidden, float("-inf"), scores)
                    weights = self.dropout(torch.softmax(scores, dim=-1))
                    return self.out_proj(combine_heads(torch.matmul(weights, v)))
            """},
]

# Tried as a new student would, from the notebook's text alone (benchmarks/student_trial.py tabulates them)
WRAPPER = """
            class MultiHeadAttentionWrapper(nn.Module):
                def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
                    super().__init__()
                    self.heads = {heads}
                def forward(self, x):
                    return {out}
            """
HEADS = "nn.ModuleList([CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)])"
CONCAT = "torch.cat([head(x) for head in self.heads], dim=-1)"

TRIAL_MISTAKES = [
    Mistake("split_heads reshapes to (head_dim, num_heads)", {"split_heads": """
            def split_heads(x, num_heads):
                b, t, d = x.shape
                if d % num_heads:
                    raise ValueError(f"{d} is not a multiple of {num_heads}")
                return x.reshape(b, t, d // num_heads, num_heads).permute(0, 3, 1, 2)
            """}, ['split_heads gives the documented layout', 'split_heads matches the reference on new'], says='every H-th feature'),
    Mistake("wrapper stacks the heads", {"MultiHeadAttentionWrapper": WRAPPER.format(
        heads=HEADS, out="torch.stack([head(x) for head in self.heads], dim=-1)")}, ['MultiHeadAttentionWrapper gives the documented', 'MultiHeadAttentionWrapper matches the reference at other sizes'], says='expected shape (2, 6, 4), got (2, 6, 2, 2)'),
    Mistake("wrapper repeats one head num_heads times", {"MultiHeadAttentionWrapper": WRAPPER.format(
        heads="nn.ModuleList([CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)] * num_heads)",
        out=CONCAT)}, ['MultiHeadAttentionWrapper gives the documented', 'MultiHeadAttentionWrapper creates its heads', 'MultiHeadAttentionWrapper matches the reference at other sizes'],
            says="one head repeated num_heads times"),
    Mistake("wrapper keeps its heads in a plain list", {"MultiHeadAttentionWrapper": WRAPPER.format(
        heads="[CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)]",
        out=CONCAT)}, ['MultiHeadAttentionWrapper creates its heads'], says='should have the parameters'),
    Mistake("out_proj follows qkv_bias", mha(("self.out_proj = nn.Linear(d_out, d_out)",
                                              "self.out_proj = nn.Linear(d_out, d_out, bias=qkv_bias)")), ['MultiHeadAttention gives the documented', 'MultiHeadAttention creates its parameters', OTHER_SIZES], says='out_proj made without its bias'),
    Mistake("padding mask hides query rows", mha(("hidden | key_padding_mask[:, None, None, :]",
                                                  "hidden | key_padding_mask[:, None, :, None]")), ['on top of the causal'], says='padding hidden on the query side'),
    Mistake("MultiHeadAttention wraps nn.MultiheadAttention (forbidden)", {"MultiHeadAttention": """
            class MultiHeadAttention(nn.Module):
                def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
                    super().__init__()
                    self.attn = nn.MultiheadAttention(d_out, num_heads, dropout=dropout, bias=qkv_bias,
                                                      kdim=d_in, vdim=d_in, batch_first=True)
                    self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), 1).bool())
                def forward(self, x, key_padding_mask=None):
                    t = x.shape[1]
                    out, _ = self.attn(x, x, x, attn_mask=self.mask[:t, :t], key_padding_mask=key_padding_mask)
                    return out
            """}, ['MultiHeadAttention gives the documented', 'MultiHeadAttention creates its parameters', 'honours qkv_bias', 'raises ValueError when d_out', EQUALS_TORCH, 'causality:', 'on top of the causal', 'keeps batch items', 'eval mode disables', 'dropout acts in train', 'as nn.Dropout does', 'out_proj included', 'no Python loop over heads', 'MultiHeadAttention works on any device', OTHER_SIZES], says='which this section forbids'),
]

TRIAL_STYLES = {
    "view(..., -1) and permute, contiguous().view back, split_heads and combine_heads called, einsum, torch.where": {
        "split_heads": """
            def split_heads(x, num_heads):
                b, t, d = x.shape
                if d % num_heads != 0:
                    raise ValueError(f"d={d} must be divisible by num_heads={num_heads}")
                return x.view(b, t, num_heads, -1).permute(0, 2, 1, 3)
            """,
        "combine_heads": """
            def combine_heads(x):
                b, h, t, hd = x.shape
                return x.permute(0, 2, 1, 3).contiguous().view(b, t, h * hd)
            """,
        "MultiHeadAttention": MHA.replace(
            "        q, k, v = split(self.W_query(x)), split(self.W_key(x)), split(self.W_value(x))\n"
            "        scores = q @ k.transpose(2, 3)\n",
            "        q, k, v = (split_heads(W(x), self.num_heads) for W in (self.W_query, self.W_key, self.W_value))\n"
            "        scores = torch.einsum('bhqd,bhkd->bhqk', q, k)\n").replace(
            '        scores = scores.masked_fill(hidden, float("-inf"))\n',
            '        scores = torch.where(hidden, float("-inf"), scores)\n').replace(
            "        context = (weights @ v).transpose(1, 2).contiguous().view(b, t, self.d_out)\n",
            "        context = combine_heads(torch.einsum('bhqk,bhkd->bhqd', weights, v))\n")},
    "unflatten and flatten, the wrapper from a generator, a mask made in forward filled with -1e9": {
        "split_heads": """
            def split_heads(x, num_heads):
                if x.shape[-1] % num_heads:
                    raise ValueError(f"{x.shape[-1]} features do not split into {num_heads} heads")
                return x.unflatten(-1, (num_heads, x.shape[-1] // num_heads)).transpose(1, 2)
            """,
        "combine_heads": """
            def combine_heads(x):
                return x.transpose(1, 2).flatten(2)
            """,
        "MultiHeadAttentionWrapper": WRAPPER.format(
            heads="nn.ModuleList(CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) "
                  "for _ in range(num_heads))",
            out="torch.cat(list(map(lambda head: head(x), self.heads)), dim=2)"),
        "MultiHeadAttention": MHA.replace(
            "        hidden = self.mask[:t, :t]\n",
            "        hidden = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)\n").replace(
            '        scores = scores.masked_fill(hidden, float("-inf"))\n',
            "        scores = scores.masked_fill(hidden, -1e9)\n")},
}
MISTAKES += [mistake for mistake in TRIAL_MISTAKES if mistake.loses]  # the rest no check catches
STYLES += TRIAL_STYLES.values()
