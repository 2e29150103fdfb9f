"""Section 05's hidden checks against the catalogue of common mistakes and other correct styles."""
from support import catalogue_tests, Mistake

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


MISTAKES = [
    Mistake("inverted padding mask", {"key_padding_mask": """
            def key_padding_mask(seq_lens, max_len):
                lengths = torch.as_tensor(seq_lens)
                return torch.arange(max_len)[None, :] < lengths[:, None]
            """}, ["True at padding, from a list", "gives the documented mask"], says="inverted padding mask"),
    Mistake("off by one", {"key_padding_mask": """
            def key_padding_mask(seq_lens, max_len):
                lengths = torch.as_tensor(seq_lens)
                return torch.arange(max_len)[None, :] > lengths[:, None]
            """}, ["True at padding, from a list"], says="off-by-one"),
    Mistake("a list of lengths not turned into a tensor", {"key_padding_mask": """
            def key_padding_mask(seq_lens, max_len):
                if (seq_lens < 1).any() or (seq_lens > max_len).any():
                    raise ValueError(f"lengths {seq_lens.tolist()} outside [1, {max_len}]")
                return torch.arange(max_len)[None, :] >= seq_lens[:, None]
            """}, ["True at padding, from a list", "gives the documented mask"], says="TypeError"),
    Mistake("bad lengths accepted", {"key_padding_mask": """
            def key_padding_mask(seq_lens, max_len):
                lengths = torch.as_tensor(seq_lens)
                return torch.arange(max_len)[None, :] >= lengths[:, None]
            """}, ["raises ValueError naming a length"], says="should raise ValueError"),
    Mistake("ValueError that does not name the entry", {"key_padding_mask": """
            def key_padding_mask(seq_lens, max_len):
                lengths = torch.as_tensor(seq_lens)
                if ((lengths < 1) | (lengths > max_len)).any():
                    raise ValueError("every length must be between 1 and max_len")
                return torch.arange(max_len)[None, :] >= lengths[:, None]
            """}, ["raises ValueError naming a length"], says="should name 0"),
    Mistake("query-side padding mask", {"mask_padded_scores": """
            def mask_padded_scores(scores, key_padding_mask):
                return scores.masked_fill(key_padding_mask[:, :, None], float("-inf"))
            """}, ["hides the padded key columns", "padded_attention matches"], says="padded queries (rows)"),
    Mistake("inverted mask when filling", {"mask_padded_scores": """
            def mask_padded_scores(scores, key_padding_mask):
                return scores.masked_fill(~key_padding_mask[:, None, :], -1e9)
            """}, ["hides the padded key columns"], says="inverted padding mask"),
    Mistake("mask_padded_scores fills its argument in place", {"mask_padded_scores": """
            def mask_padded_scores(scores, key_padding_mask):
                return scores.masked_fill_(key_padding_mask[:, None, :], float("-inf"))
            """}, ["leaves its argument unchanged"], says="modified its argument"),
    Mistake("no scaling", {"padded_attention": """
            def padded_attention(queries, keys, values, key_padding_mask):
                weights = torch.softmax(mask_padded_scores(queries @ keys.transpose(-2, -1), key_padding_mask), -1)
                return weights @ values, weights
            """}, ["padded_attention matches"], says="sqrt(d)"),
    Mistake("masked after softmax without renormalising", {"padded_attention": """
            def padded_attention(queries, keys, values, key_padding_mask):
                weights = torch.softmax(queries @ keys.transpose(-2, -1) / queries.shape[-1] ** 0.5, dim=-1)
                weights = weights.masked_fill(key_padding_mask[:, None, :], 0.0)
                return weights @ values, weights
            """}, ["every row sums to 1", "padded_attention matches"], says="sum to 1"),
    Mistake("parameters created out of order", {"PaddedSelfAttention": padded_self_attention(init=(
        INIT.replace("        self.W_out = nn.Linear(embed_dim, embed_dim, bias=False)", "")
        .replace("self.W_q =", "self.W_out = nn.Linear(embed_dim, embed_dim, bias=False)\n        self.W_q =")))},
        ["parameters W_q, W_k, W_v, W_out created in order", "equals nn.MultiheadAttention"], says="order"),
    Mistake("no W_out", {"PaddedSelfAttention": padded_self_attention(out="weights @ values")},
            ["equals nn.MultiheadAttention", "gradients reach every parameter"], says="no W_out"),
    Mistake("unscaled module", {"PaddedSelfAttention": padded_self_attention(scale="")},
            ["equals nn.MultiheadAttention"], says="sqrt(d)"),
    Mistake("query-side padding mask in the module", {"PaddedSelfAttention": padded_self_attention(
        masks=MASKS.replace("key_padding_mask[:, None, :]", "key_padding_mask[:, :, None]"))},
        ["equals nn.MultiheadAttention", "outputs at real positions ignore"], says="padded queries (rows)"),
    Mistake("key_padding_mask ignored", {"PaddedSelfAttention": padded_self_attention(masks=ATTN_MASK)},
            ["outputs at real positions ignore", "equals nn.MultiheadAttention"], says="padded keys still get weight"),
    Mistake("attn_mask ignored", {"PaddedSelfAttention": padded_self_attention(masks=PADDING)},
            ["attn_mask of shape"], says="attn_mask ignored"),
    Mistake("wraps nn.MultiheadAttention", {"PaddedSelfAttention": """
            class PaddedSelfAttention(nn.Module):
                def __init__(self, embed_dim):
                    super().__init__()
                    self.inner = nn.MultiheadAttention(embed_dim, 1, bias=False, batch_first=True)
                def forward(self, q, k, v, key_padding_mask=None, attn_mask=None):
                    return self.inner(q, k, v, key_padding_mask=key_padding_mask, attn_mask=attn_mask)
            """}, ["equals nn.MultiheadAttention", "attn_mask of shape"], says="forbids"),
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
            seq_lens = [int(n) for n in seq_lens]
            mask = torch.zeros(len(seq_lens), max_len, dtype=torch.bool)
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
            return ~(torch.arange(max_len) < lengths)
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


globals().update(catalogue_tests(SECTION, MISTAKES, STYLES, HARD_CODED))


def test_reference_equals_torch_multihead_attention_with_the_same_weights():
    """What the hidden check 'equals nn.MultiheadAttention' relies on, at the sizes it uses."""
    import torch

    from autograder.checks.common import randn, seeded
    from autograder.checks.test_05_padding_mask import lengths_mask
    from solutions.padding_mask import PaddedSelfAttention

    for dim, seq_lens, seed in ((3, [4, 3, 2], 52), (6, [5, 3], 53)):
        x = randn(seed + 500, len(seq_lens), max(seq_lens), dim)
        mask = lengths_mask(seq_lens, max(seq_lens))
        ours = seeded(PaddedSelfAttention, dim, seed=seed)
        theirs = torch.nn.MultiheadAttention(dim, 1, bias=False, batch_first=True).eval()
        with torch.no_grad():
            theirs.in_proj_weight.copy_(torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight]))
            theirs.out_proj.weight.copy_(ours.W_out.weight)
            expected_out, expected_weights = theirs(x, x, x, key_padding_mask=mask)
            out, weights = ours(x, x, x, key_padding_mask=mask)
        torch.testing.assert_close(out, expected_out, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(weights, expected_weights, rtol=1e-5, atol=1e-6)
