"""Section 05's catalogue: common mistakes, each with the checks it must lose, and other correct styles.

Each mistake's `loses` lists exactly the checks that lose points for it."""
from support import Mistake

SECTION = "05_padding_mask"

# PaddedSelfAttention with one piece swapped: {init}, {scale}, {masks} and {out} fill in the changed parts.
PADDED_SELF_ATTENTION = """
class PaddedSelfAttention(nn.Module):
    def __init__(self, embed_dim):
        super().__init__()
        {init}

    def forward(self, q, k, v, key_padding_mask=None, attn_mask=None):
        queries, keys, values = self.W_q(q), self.W_k(k), self.W_v(v)
        scores = queries @ keys.transpose(-2, -1){scale}
        {masks}
        weights = torch.softmax(scores, dim=-1)
        return {out}, weights
"""
INIT = """self.W_q = nn.Linear(embed_dim, embed_dim, bias=False)
        self.W_k = nn.Linear(embed_dim, embed_dim, bias=False)
        self.W_v = nn.Linear(embed_dim, embed_dim, bias=False)
        self.W_out = nn.Linear(embed_dim, embed_dim, bias=False)"""
SCALE = " / queries.shape[-1] ** 0.5"
ATTN_MASK = """if attn_mask is not None:
            scores = scores.masked_fill(attn_mask, float("-inf"))"""
PADDING = """if key_padding_mask is not None:
            scores = scores.masked_fill(key_padding_mask[:, None, :], float("-inf"))"""
MASKS = ATTN_MASK + "\n        " + PADDING
OUT = "self.W_out(weights @ values)"


def padded_self_attention(init=INIT, scale=SCALE, masks=MASKS, out=OUT):
    return PADDED_SELF_ATTENTION.format(init=init, scale=scale, masks=masks, out=out)


CHECK_LENGTHS = """
                lengths = torch.as_tensor(seq_lens)
                if ((lengths < 1) | (lengths > max_len)).any():
                    raise ValueError(f"seq_lens {lengths.tolist()} must lie in [1, {max_len}]")"""


def key_padding_mask(mask, check=CHECK_LENGTHS):
    """key_padding_mask with the lengths checked as `check` says, returning `mask` (of positions, lengths)."""
    return f"""
            def key_padding_mask(seq_lens, max_len):{check}
                positions = torch.arange(max_len, device=torch.as_tensor(seq_lens).device)
                return {mask}
            """


# A wrong mask_padded_scores costs its own checks only: the checks of padded_attention, which calls it, hand it
# the right masked scores in its place (Student.standing_in).
MODULE_VALUES = ["equals nn.MultiheadAttention", "matches the reference with both masks"]
BOTH_MASKS = "with both masks, a pair is hidden"
# a forbidden API fails every check that runs the class
EVERY_MODULE_CHECK = ["created in order", *MODULE_VALUES, "attn_mask of shape", "outputs at real positions ignore",
                      "gradients reach W_q", BOTH_MASKS]
CORRECT_MASK = "positions[None, :] >= lengths[:, None]"

MISTAKES = [
    Mistake("inverted padding mask", {"key_padding_mask": key_padding_mask("positions[None, :] < lengths[:, None]")},
            ["True at padding, from a list", "gives the documented mask"], says="inverted padding mask"),
    Mistake("off by one", {"key_padding_mask": key_padding_mask("positions[None, :] > lengths[:, None]")},
            ["True at padding, from a list", "gives the documented mask"], says="off-by-one"),
    Mistake("float 0/1 padding mask", {"key_padding_mask": key_padding_mask(f"({CORRECT_MASK}).float()")},
            ["True at padding, from a list", "gives the documented mask"], says="dtype bool"),
    Mistake("a list of lengths not turned into a tensor", {"key_padding_mask": key_padding_mask(
        "positions[None, :] >= seq_lens[:, None]", check="""
                if (seq_lens < 1).any() or (seq_lens > max_len).any():
                    raise ValueError(f"lengths {seq_lens.tolist()} outside [1, {max_len}]")""")},
        ["True at padding, from a list", "gives the documented mask"], says="TypeError"),
    Mistake("positions made on the default device", {"key_padding_mask": key_padding_mask(CORRECT_MASK).replace(
        "torch.arange(max_len, device=torch.as_tensor(seq_lens).device)", "torch.arange(max_len)")}, ["on the device of the lengths"], says="device="),
    Mistake("bad lengths accepted", {"key_padding_mask": key_padding_mask(
        CORRECT_MASK, check="\n                lengths = torch.as_tensor(seq_lens)")},
        ["raises ValueError naming a length"], says="should raise ValueError"),
    Mistake("ValueError that does not name the entry", {"key_padding_mask": key_padding_mask(
        CORRECT_MASK, check=CHECK_LENGTHS.replace('f"seq_lens {lengths.tolist()} must lie in [1, {max_len}]"',
                                                  '"every length must be between 1 and max_len"'))},
        ["raises ValueError naming a length"], says="should name 0"),
    Mistake("query-side padding mask", {"mask_padded_scores": """
            def mask_padded_scores(scores, key_padding_mask):
                return scores.masked_fill(key_padding_mask[:, :, None], float("-inf"))
            """}, ["hides the padded key columns"], says="padded queries (rows)", asks=("a row with every key hidden",)),
    Mistake("inverted mask when filling", {"mask_padded_scores": """
            def mask_padded_scores(scores, key_padding_mask):
                return scores.masked_fill(~key_padding_mask[:, None, :], -1e9)
            """}, ["hides the padded key columns"], says="inverted padding mask"),
    Mistake("padded keys filled with 0 instead of -inf", {"mask_padded_scores": """
            def mask_padded_scores(scores, key_padding_mask):
                return scores.masked_fill(key_padding_mask[:, None, :], 0)
            """}, ["hides the padded key columns"], says="filled with 0 instead of -inf"),
    Mistake("mask_padded_scores fills its argument in place", {"mask_padded_scores": """
            def mask_padded_scores(scores, key_padding_mask):
                return scores.masked_fill_(key_padding_mask[:, None, :], float("-inf"))
            """}, ["leaves its argument unchanged"], says="modified its argument"),
    Mistake("no scaling", {"padded_attention": """
            def padded_attention(queries, keys, values, key_padding_mask):
                weights = torch.softmax(mask_padded_scores(queries @ keys.transpose(-2, -1), key_padding_mask), -1)
                return weights @ values, weights
            """}, ["padded_attention equals softmax", "padded_attention matches the reference"], says="sqrt(d)"),
    # a right PaddedSelfAttention on top of it, calling padded_attention (mask_padded_scores with an attn_mask):
    # still padded_attention's checks only
    Mistake("no scaling, PaddedSelfAttention right on top", {"padded_attention": """
            def padded_attention(queries, keys, values, key_padding_mask):
                weights = torch.softmax(mask_padded_scores(queries @ keys.transpose(-2, -1), key_padding_mask), -1)
                return weights @ values, weights
            """, "PaddedSelfAttention": padded_self_attention(masks=ATTN_MASK + """
        if key_padding_mask is not None:
            scores = mask_padded_scores(scores, key_padding_mask)""").replace(
        "self.W_v(v)\n", "self.W_v(v)\n        if attn_mask is None and key_padding_mask is not None:\n"
        "            out, weights = padded_attention(queries, keys, values, key_padding_mask)\n"
        "            return self.W_out(out), weights\n")},
            ["padded_attention equals softmax", "padded_attention matches the reference"], says="sqrt(d)"),
    Mistake("masked after softmax without renormalising", {"padded_attention": """
            def padded_attention(queries, keys, values, key_padding_mask):
                weights = torch.softmax(queries @ keys.transpose(-2, -1) / queries.shape[-1] ** 0.5, dim=-1)
                weights = weights.masked_fill(key_padding_mask[:, None, :], 0.0)
                return weights @ values, weights
            """}, ["each real query's weights sum to 1", "padded_attention equals softmax",
                   "padded_attention matches the reference"], says="sum to 1"),
    # found by trying the notebook as a student: its Chinese line set a space between two Chinese words
    Mistake("PaddedSelfAttention returns only the output", {"PaddedSelfAttention": padded_self_attention().replace(
            "return self.W_out(weights @ values), weights", "return self.W_out(weights @ values)")},
            ["equals nn.MultiheadAttention", "attn_mask of shape", "outputs at real positions",
             "matches the reference with both masks", BOTH_MASKS],
            says="should return the pair (out, weights)"),
    # found by trying the notebook as a student: the NaN was put down to a row with every key hidden
    Mistake("padded_attention softmax over dim 1", {"padded_attention": """
            def padded_attention(queries, keys, values, key_padding_mask):
                scores = queries @ keys.transpose(-2, -1) / queries.shape[-1] ** 0.5
                weights = torch.softmax(mask_padded_scores(scores, key_padding_mask), dim=1)
                return weights @ values, weights
            """}, ["padded key columns get weight 0", "each real query's weights sum to 1",
                   "padded_attention equals softmax", "padded_attention matches the reference"],
            says="softmax over dim 1 (down the queries)", asks=("a row with every key hidden",)),
    Mistake("parameters created out of order", {"PaddedSelfAttention": padded_self_attention(init=(
        INIT.replace("        self.W_out = nn.Linear(embed_dim, embed_dim, bias=False)", "")
        .replace("self.W_q =", "self.W_out = nn.Linear(embed_dim, embed_dim, bias=False)\n        self.W_q =")))},
        ["parameters W_q, W_k, W_v, W_out created in order"], says="order"),
    Mistake("no W_out", {"PaddedSelfAttention": padded_self_attention(out="weights @ values")},
            MODULE_VALUES, says="no W_out"),
    Mistake("unscaled module", {"PaddedSelfAttention": padded_self_attention(scale="")},
            MODULE_VALUES, says="sqrt(d)"),
    Mistake("query-side padding mask in the module", {"PaddedSelfAttention": padded_self_attention(
        masks=MASKS.replace("key_padding_mask[:, None, :]", "key_padding_mask[:, :, None]"))},
        [*MODULE_VALUES, "outputs at real positions ignore"], says="padded queries (rows)", asks=("a row with every key hidden",)),
    Mistake("key_padding_mask ignored", {"PaddedSelfAttention": padded_self_attention(masks=ATTN_MASK)},
            ["outputs at real positions ignore", *MODULE_VALUES], says="padded keys still get weight", also=("no padding mask applied",)),
    Mistake("attn_mask ignored", {"PaddedSelfAttention": padded_self_attention(masks=PADDING)},
            ["attn_mask of shape", "matches the reference with both masks"], says="attn_mask ignored"),
    Mistake("inverted attn_mask", {"PaddedSelfAttention": padded_self_attention(
        masks=MASKS.replace("masked_fill(attn_mask,", "masked_fill(~attn_mask,"))},
        ["attn_mask of shape", "matches the reference with both masks"], says="inverted attn_mask"),
    Mistake("queries and keys projected from each other's input", {"PaddedSelfAttention": padded_self_attention(
    ).replace("self.W_q(q), self.W_k(k)", "self.W_q(k), self.W_k(q)")}, MODULE_VALUES, says="queries projected from k"),
    Mistake("keys projected from the queries' input", {"PaddedSelfAttention": padded_self_attention(
    ).replace("self.W_k(k)", "self.W_k(q)")}, MODULE_VALUES, says="keys projected from q"),
    Mistake("values projected from the keys' input", {"PaddedSelfAttention": padded_self_attention(
    ).replace("self.W_v(v)", "self.W_v(k)")}, MODULE_VALUES),
    Mistake("every projection applied to q", {"PaddedSelfAttention": padded_self_attention(
    ).replace("self.W_q(q), self.W_k(k), self.W_v(v)", "self.W_q(q), self.W_k(q), self.W_v(q)")}, MODULE_VALUES,
        says="every projection applied to q"),
    Mistake("attention weights detached", {"PaddedSelfAttention": padded_self_attention().replace(
        "weights = torch.softmax(scores, dim=-1)", "weights = torch.softmax(scores, dim=-1).detach()")},
        ["gradients reach W_q"], says="received no gradient"),
    # "when both are given, a pair is hidden if either mask hides it": the visible check of both masks sees it
    Mistake("attn_mask ignored when key_padding_mask is given", {"PaddedSelfAttention": padded_self_attention(
        masks=PADDING + "\n        elif attn_mask is not None:\n            scores = scores.masked_fill(attn_mask, float(\"-inf\"))")},
        [BOTH_MASKS, "matches the reference with both masks"], says="attn_mask ignored when key_padding_mask"),
    Mistake("wraps nn.MultiheadAttention", {"PaddedSelfAttention": """
            class PaddedSelfAttention(nn.Module):
                def __init__(self, embed_dim):
                    super().__init__()
                    self.inner = nn.MultiheadAttention(embed_dim, 1, bias=False, batch_first=True)
                def forward(self, q, k, v, key_padding_mask=None, attn_mask=None):
                    return self.inner(q, k, v, key_padding_mask=key_padding_mask, attn_mask=attn_mask)
            """}, EVERY_MODULE_CHECK, says="forbids"),
]

STUB = "    raise NotImplementedError\n"
HARD_CODED = {
    "key_padding_mask": """
        def key_padding_mask(seq_lens, max_len):
            return torch.tensor([[False, False, False, False], [False, False, False, True],
                                 [False, False, True, True]])
        """,
    "mask_padded_scores": "def mask_padded_scores(scores, key_padding_mask):\n" + STUB,
    "padded_attention": "def padded_attention(queries, keys, values, key_padding_mask):\n" + STUB,
    "PaddedSelfAttention": padded_self_attention(out="torch.zeros_like(q)"),
}
# the documented mask written out: named in key_padding_mask's own cell
MISTAKES.append(Mistake("key_padding_mask hard-coded", {"key_padding_mask": HARD_CODED["key_padding_mask"]},
                        ["gives the documented mask", "True at padding, from a list", "raises ValueError naming a length",
                         "on the device of the lengths"], says="is the answer hard-coded?", hard_coded=True,
                 also=("default device",)))
# answers written out (a demo's printout) for the other three names: each named in its own cell
MISTAKES.append(Mistake("mask_padded_scores hard-coded", {"mask_padded_scores": """
            def mask_padded_scores(scores, key_padding_mask):
                return torch.tensor([[0.5, -0.25, 1.0, -1e9, -1e9]] * 5).expand(3, 5, 5)
            """}, ["hides the padded key columns"], says="is the answer hard-coded?", hard_coded=True))
MISTAKES.append(Mistake("padded_attention hard-coded", {"padded_attention": """
            def padded_attention(queries, keys, values, key_padding_mask):
                weights = torch.tensor([[0.4, 0.35, 0.25, 0.0, 0.0]] * 5).expand(3, 5, 5)
                return torch.full((3, 5, 4), 0.125), weights
            """}, ["padded_attention equals softmax", "padded key columns get weight 0",
                   "sum to 1", "padded_attention matches the reference"], says="is the answer hard-coded?", hard_coded=True))
MISTAKES.append(Mistake("PaddedSelfAttention hard-coded", {"PaddedSelfAttention": padded_self_attention(
    ).replace("return self.W_out(weights @ values), weights",
              "return torch.full((3, 4, 3), 0.5), torch.full((3, 4, 4), 0.25)")},
    [*MODULE_VALUES, "attn_mask of shape", "outputs at real positions ignore",
     "gradients reach W_q"], says="is the answer hard-coded?", hard_coded=True))

STYLES = [
    # -1e9 through torch.where, a vectorised length check, einsum, both masks merged into one
    {"key_padding_mask": """
        def key_padding_mask(seq_lens, max_len):
            lengths = torch.tensor(seq_lens) if isinstance(seq_lens, list) else seq_lens
            bad = lengths[(lengths < 1) | (lengths > max_len)]
            if len(bad):
                raise ValueError(f"lengths must lie in [1, {max_len}]; got {bad.tolist()}")
            return torch.arange(max_len, device=lengths.device).expand(len(lengths), max_len) >= lengths.unsqueeze(1)
        """,
     "mask_padded_scores": """
        def mask_padded_scores(scores, key_padding_mask):
            return torch.where(key_padding_mask.unsqueeze(1), -1e9, scores)
        """,
     "padded_attention": """
        def padded_attention(queries, keys, values, key_padding_mask):
            scores = torch.einsum("bid,bjd->bij", queries, keys) / queries.shape[-1] ** 0.5
            weights = torch.nn.functional.softmax(mask_padded_scores(scores, key_padding_mask), dim=-1)
            return torch.einsum("bij,bjd->bid", weights, values), weights
        """,
     "PaddedSelfAttention": padded_self_attention(masks="""hidden = torch.zeros_like(scores, dtype=torch.bool)
        if attn_mask is not None:
            hidden = hidden | attn_mask
        if key_padding_mask is not None:
            hidden = hidden | key_padding_mask[:, None, :]
        scores = torch.where(hidden, -1e9, scores)""")},
    # a loop over sentences, in-place filling of a clone, a hand-written softmax, additive -1e9 masks
    {"key_padding_mask": """
        def key_padding_mask(seq_lens, max_len):
            device = seq_lens.device if isinstance(seq_lens, torch.Tensor) else None
            seq_lens = [int(n) for n in seq_lens]
            mask = torch.zeros(len(seq_lens), max_len, dtype=torch.bool, device=device)
            for row, n in enumerate(seq_lens):
                if not 1 <= n <= max_len:
                    raise ValueError(f"sentence {row} has length {n}, outside 1..{max_len}")
                mask[row, n:] = True
            return mask
        """,
     "mask_padded_scores": """
        def mask_padded_scores(scores, key_padding_mask):
            out = scores.clone()
            out[key_padding_mask[:, None, :].expand_as(out)] = float("-inf")
            return out
        """,
     "padded_attention": """
        def padded_attention(queries, keys, values, key_padding_mask):
            scores = mask_padded_scores(queries @ keys.mT / queries.shape[-1] ** 0.5, key_padding_mask)
            exp = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
            weights = exp / exp.sum(dim=-1, keepdim=True)
            return weights @ values, weights
        """,
     "PaddedSelfAttention": padded_self_attention(masks="""if attn_mask is not None:
            scores = scores + attn_mask.float() * -1e9
        if key_padding_mask is not None:
            scores = scores + key_padding_mask[:, None, :].float() * -1e9""")},
    # masks as (B, L, L) before filling, bmm, -inf via torch.finfo
    {"key_padding_mask": """
        def key_padding_mask(seq_lens, max_len):
            lengths = torch.as_tensor(seq_lens).reshape(-1, 1)
            if lengths.min() < 1 or lengths.max() > max_len:
                raise ValueError(f"seq_lens {lengths.flatten().tolist()} must be within [1, {max_len}]")
            return ~(torch.arange(max_len, device=lengths.device) < lengths)
        """,
     "mask_padded_scores": """
        def mask_padded_scores(scores, key_padding_mask):
            return scores.masked_fill(key_padding_mask.unsqueeze(-2).expand(-1, scores.shape[-2], -1),
                                      torch.finfo(scores.dtype).min)
        """,
     "PaddedSelfAttention": """
        class PaddedSelfAttention(nn.Module):
            def __init__(self, embed_dim):
                super().__init__()
                for name in ("W_q", "W_k", "W_v", "W_out"):
                    setattr(self, name, nn.Linear(embed_dim, embed_dim, bias=False))

            def forward(self, q, k, v, key_padding_mask=None, attn_mask=None):
                B, L, D = q.shape
                scores = torch.bmm(self.W_q(q), self.W_k(k).transpose(1, 2)) / D ** 0.5
                if attn_mask is not None:
                    scores = scores.masked_fill(attn_mask.expand(B, L, L), float("-inf"))
                if key_padding_mask is not None:
                    scores = scores.masked_fill(key_padding_mask.view(B, 1, L), float("-inf"))
                weights = scores.softmax(dim=-1)
                return self.W_out(torch.bmm(weights, self.W_v(v))), weights
        """},
]

# Tried as a new student would, from the notebook's text alone (benchmarks/student_trial.py tabulates them)
TRIAL_MISTAKES = [
    Mistake("key_padding_mask compares a column of positions with a row of lengths", {
        "key_padding_mask": key_padding_mask("positions[:, None] >= lengths[None, :]")}, ['key_padding_mask([4, 3, 2], 4) gives the documented', 'key_padding_mask: (B, max_len) bool'], says='expected shape (3, 4), got (4, 3)',
            also=("the mask transposed",)),  # a column of positions against a row of lengths is (max_len, B)
    Mistake("key_padding_mask checks lengths with assert", {"key_padding_mask": key_padding_mask(
        CORRECT_MASK, check="""
                lengths = torch.as_tensor(seq_lens)
                assert ((lengths >= 1) & (lengths <= max_len)).all(), "bad length\"""")}, ['key_padding_mask raises ValueError'], says='it raised AssertionError'),
    Mistake("mask_padded_scores without a query axis", {"mask_padded_scores": """
            def mask_padded_scores(scores, key_padding_mask):
                return scores.masked_fill(key_padding_mask, float("-inf"))
            """}, ['mask_padded_scores hides the padded key columns']),
    Mistake("padded_attention scaled by the length", {"padded_attention": """
            def padded_attention(queries, keys, values, key_padding_mask):
                scores = mask_padded_scores(queries @ keys.transpose(-2, -1) / keys.shape[1] ** 0.5, key_padding_mask)
                weights = torch.softmax(scores, dim=-1)
                return weights @ values, weights
            """}, ['padded_attention equals softmax', 'padded_attention matches the reference on new'],
            says="instead of sqrt(d) = sqrt(keys.shape[-1])"),
    Mistake("padded_attention returns (weights, out)", {"padded_attention": """
            def padded_attention(queries, keys, values, key_padding_mask):
                scores = mask_padded_scores(queries @ keys.transpose(-2, -1) / queries.shape[-1] ** 0.5, key_padding_mask)
                weights = torch.softmax(scores, dim=-1)
                return weights, weights @ values
            """}, ['padded_attention: padded key columns', "each real query's weights sum to 1", 'padded_attention equals softmax', 'padded_attention matches the reference on new'], says='the pair returned as (weights, out)'),
    Mistake("both masks combined with & instead of |", {"PaddedSelfAttention": padded_self_attention(masks="""hidden = None
        if attn_mask is not None and key_padding_mask is not None:
            hidden = attn_mask & key_padding_mask[:, None, :]
        elif attn_mask is not None:
            hidden = attn_mask
        elif key_padding_mask is not None:
            hidden = key_padding_mask[:, None, :]
        if hidden is not None:
            scores = scores.masked_fill(hidden, float("-inf"))""")}, [BOTH_MASKS, 'matches the reference with both masks'], says='only where both masks hide it'),
    Mistake("padded_attention with F.scaled_dot_product_attention (forbidden)", {"padded_attention": """
            def padded_attention(queries, keys, values, key_padding_mask):
                keep = ~key_padding_mask[:, None, :]
                out = torch.nn.functional.scaled_dot_product_attention(queries, keys, values, attn_mask=keep)
                scores = mask_padded_scores(queries @ keys.transpose(-2, -1) / queries.shape[-1] ** 0.5, key_padding_mask)
                return out, torch.softmax(scores, dim=-1)
            """}, ['padded_attention: padded key columns', "each real query's weights sum to 1", 'padded_attention equals softmax', 'padded_attention matches the reference on new'], says='which this section forbids'),
]

TRIAL_STYLES = {
    "expand and unsqueeze, torch.where, einsum, one combined mask filled with -1e9": {
        "key_padding_mask": key_padding_mask(
            "positions.expand(len(lengths), max_len) >= lengths.unsqueeze(1)"),
        "mask_padded_scores": """
            def mask_padded_scores(scores, key_padding_mask):
                return torch.where(key_padding_mask.unsqueeze(1), float("-inf"), scores)
            """,
        "padded_attention": """
            def padded_attention(queries, keys, values, key_padding_mask):
                scores = torch.einsum("bqd,bkd->bqk", queries, keys) / queries.size(-1) ** 0.5
                weights = mask_padded_scores(scores, key_padding_mask).softmax(dim=-1)
                return torch.einsum("bqk,bkd->bqd", weights, values), weights
            """,
        "PaddedSelfAttention": padded_self_attention(masks="""hidden = torch.zeros(scores.shape, dtype=torch.bool, device=scores.device)
        if attn_mask is not None:
            hidden = hidden | attn_mask
        if key_padding_mask is not None:
            hidden = hidden | key_padding_mask.view(key_padding_mask.shape[0], 1, -1)
        scores = scores.masked_fill(hidden, -1e9)""")},
}
MISTAKES += [mistake for mistake in TRIAL_MISTAKES if mistake.loses]  # the rest no check catches
STYLES += TRIAL_STYLES.values()
