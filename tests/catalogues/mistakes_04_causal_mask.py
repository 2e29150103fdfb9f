"""Section 04's catalogue: common mistakes, each with the checks it must lose, and other correct styles.

Each mistake's `loses` lists exactly the checks that lose points for it."""
from support import Mistake

from autograder.core.hints import UNSLICED_MASK

SECTION = "04_causal_mask"

# CausalAttention with one piece swapped: {init}, {check}, {mask} and {dropout} fill in the changed parts.
CAUSAL_ATTENTION = """
class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.context_length = context_length
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        {init}

    def forward(self, x):
        b, num_tokens, d_in = x.shape
        {check}
        queries, keys, values = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = queries @ keys.transpose(1, 2)
        {mask}
        weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)
        {dropout}
        return weights @ values
"""
BUFFER = 'self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), diagonal=1).bool())'
CHECK = ('if num_tokens > self.context_length:\n'
         '            raise ValueError(f"{num_tokens} tokens > context_length {self.context_length}")')
MASK = 'scores = scores.masked_fill(self.mask[:num_tokens, :num_tokens], float("-inf"))'
DROPOUT = "weights = self.dropout(weights)"


def causal_attention(init=BUFFER, check=CHECK, mask=MASK, dropout=DROPOUT):
    return CAUSAL_ATTENTION.format(init=init, check=check, mask=mask, dropout=dropout)


# CausalAttention whose weights come from the student's own causal_attention_weights
CALLING_THE_WEIGHTS = causal_attention().replace(
    MASK + "\n        weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)",
    "weights = causal_attention_weights(scores, keys.shape[-1])")
assert "causal_attention_weights(scores" in CALLING_THE_WEIGHTS
# ... or from its mask_and_renormalize of the unmasked softmax (the simple way)
RENORMALISING = causal_attention().replace(
    MASK + "\n        weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)",
    "weights = mask_and_renormalize(torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1))")
assert "mask_and_renormalize(torch.softmax" in RENORMALISING

# two weight functions wrong alone and under a CausalAttention that calls them
UNSCALED_WEIGHTS = """
            def causal_attention_weights(attn_scores, d_k):
                return torch.softmax(attn_scores.masked_fill(causal_mask(attn_scores.shape[-1], attn_scores.device), -torch.inf), dim=-1)
            """
UNRENORMALISED = """
            def mask_and_renormalize(attn_weights):
                return attn_weights.masked_fill(causal_mask(attn_weights.shape[-1], attn_weights.device), 0.0)
            """

OTHER_SIZES = "CausalAttention matches the reference at other sizes"
# a forbidden API fails every check that runs the class
EVERY_CAUSAL_ATTENTION_CHECK = ["in the documented order", "CausalAttention is causal", "items of a batch",
                                "raises ValueError naming both numbers", "eval mode disables dropout",
                                "gradients reach every parameter", "works on any device", OTHER_SIZES,
                                "dropout on the attention weights as nn.Dropout"]


# A wrong causal_mask costs causal_mask's checks only: the checks of the two weight functions, which call it,
# hand them the right masks in its place (Student.standing_in).
MISTAKES = [
    # the documented weights written out: named in mask_and_renormalize's own cell
    Mistake("mask_and_renormalize hard-coded", {"mask_and_renormalize": """
            def mask_and_renormalize(attn_weights):
                return torch.tensor([[1.0, 0, 0, 0, 0, 0], [0.5517, 0.4483, 0, 0, 0, 0], [0.3800, 0.3097, 0.3103, 0, 0, 0],
                                     [0.2758, 0.2460, 0.2462, 0.2319, 0, 0], [0.2175, 0.1983, 0.1984, 0.1888, 0.1971, 0],
                                     [0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529]])
            """},
            ["mask_and_renormalize gives the documented", "mask_and_renormalize zeroes the future",
             "mask_and_renormalize makes its mask"], says="is the answer hard-coded?", hard_coded=True),
    # the worked example's 6x6 mask written out: named in causal_mask's own cell
    Mistake("causal_mask hard-coded", {"causal_mask": """
            def causal_mask(num_tokens, device=None):
                return torch.tensor([[False, True, True, True, True, True], [False, False, True, True, True, True],
                                     [False, False, False, True, True, True], [False, False, False, False, True, True],
                                     [False, False, False, False, False, True], [False] * 6], device=device)
            """}, ["causal_mask: (T, T) bool", "causal_mask creates the mask on the device"],
            says="is the answer hard-coded?", hard_coded=True),
    Mistake("diagonal masked", {"causal_mask": """
            def causal_mask(num_tokens, device=None):
                return torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool, device=device))
            """}, ["causal_mask: (T, T) bool"], says="diagonal masked", asks=("a row with every key hidden",)),
    Mistake("inverted causal mask", {"causal_mask": """
            def causal_mask(num_tokens, device=None):
                return torch.tril(torch.ones(num_tokens, num_tokens, dtype=torch.bool, device=device))
            """}, ["causal_mask: (T, T) bool"], says="inverted mask", also=("instead of the future",), asks=("a row with every key hidden",)),
    # a right CausalAttention on top of it (its mask buffer made by causal_mask): still causal_mask's checks only
    Mistake("diagonal masked, CausalAttention right on top", {"causal_mask": """
            def causal_mask(num_tokens, device=None):
                return torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool, device=device))
            """, "CausalAttention": causal_attention(init='self.register_buffer("mask", causal_mask(context_length))')},
            ["causal_mask: (T, T) bool"], says="diagonal masked", asks=("a row with every key hidden",)),
    Mistake("float mask", {"causal_mask": """
            def causal_mask(num_tokens, device=None):
                return torch.triu(torch.ones(num_tokens, num_tokens, device=device), diagonal=1)
            """}, ["causal_mask: (T, T) bool"], says="dtype bool"),
    Mistake("causal_mask ignores device", {"causal_mask": """
            def causal_mask(num_tokens, device=None):
                return torch.triu(torch.ones(num_tokens, num_tokens), diagonal=1).bool()
            """}, ["causal_mask creates the mask on the device"], says="on `device`"),
    Mistake("mask_and_renormalize makes its mask on the CPU", {"mask_and_renormalize": """
            def mask_and_renormalize(attn_weights):
                masked = attn_weights.masked_fill(causal_mask(attn_weights.shape[-1]), 0.0)
                return masked / masked.sum(dim=-1, keepdim=True)
            """}, ["mask_and_renormalize makes its mask"], says="device="),
    Mistake("causal_attention_weights makes its mask on the CPU", {"causal_attention_weights": """
            def causal_attention_weights(attn_scores, d_k):
                T = attn_scores.shape[-1]
                hidden = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
                return torch.softmax(attn_scores.masked_fill(hidden, float("-inf")) / d_k ** 0.5, dim=-1)
            """}, ["causal_attention_weights makes its mask"], says="device="),
    # found by trying the notebook as a student: the values differed, with no name for why
    Mistake("renormalised down the columns", {"mask_and_renormalize": """
            def mask_and_renormalize(attn_weights):
                mask = causal_mask(attn_weights.shape[-1], device=attn_weights.device)
                masked = attn_weights.masked_fill(mask, 0.0)
                return masked / masked.sum(dim=0, keepdim=True)
            """}, ["mask_and_renormalize gives the documented", "mask_and_renormalize zeroes"],
            says="divided by the column sums"),
    Mistake("not renormalised", {"mask_and_renormalize": UNRENORMALISED},
            ["mask_and_renormalize zeroes", "mask_and_renormalize gives the documented"], says="not renormalised"),
    # a right CausalAttention that calls it meets a right one during its checks: still its own checks only
    Mistake("not renormalised, CausalAttention calling it",
            {"mask_and_renormalize": UNRENORMALISED, "CausalAttention": RENORMALISING},
            ["mask_and_renormalize zeroes", "mask_and_renormalize gives the documented"], says="not renormalised"),
    Mistake("mask_and_renormalize fills its argument in place", {"mask_and_renormalize": """
            def mask_and_renormalize(attn_weights):
                attn_weights.masked_fill_(causal_mask(attn_weights.shape[-1], attn_weights.device), 0.0)
                return attn_weights / attn_weights.sum(dim=-1, keepdim=True)
            """}, ["mask_and_renormalize leaves"], says="modified its argument"),
    Mistake("causal_attention_weights fills its scores in place", {"causal_attention_weights": """
            def causal_attention_weights(attn_scores, d_k):
                attn_scores.masked_fill_(causal_mask(attn_scores.shape[-1], attn_scores.device), float("-inf"))
                return torch.softmax(attn_scores / d_k ** 0.5, dim=-1)
            """}, ["causal_attention_weights leaves"], says="causal_attention_weights modified its argument"),
    Mistake("masked after softmax without renormalising", {"causal_attention_weights": """
            def causal_attention_weights(attn_scores, d_k):
                weights = torch.softmax(attn_scores / d_k ** 0.5, dim=-1)
                return weights.masked_fill(causal_mask(attn_scores.shape[-1], attn_scores.device), 0.0)
            """}, ["causal_attention_weights masks before", "causal_attention_weights gives the documented"],
            says="after the softmax without renormalising"),
    Mistake("no scaling", {"causal_attention_weights": UNSCALED_WEIGHTS},
            ["causal_attention_weights masks before", "causal_attention_weights gives the documented"], says="sqrt(d_k)"),
    # a right CausalAttention that calls it meets a right one during its checks: still the weights' checks only
    Mistake("no scaling, CausalAttention calling it",
            {"causal_attention_weights": UNSCALED_WEIGHTS, "CausalAttention": CALLING_THE_WEIGHTS},
            ["causal_attention_weights masks before", "causal_attention_weights gives the documented"], says="sqrt(d_k)"),
    # ... but the gradient check runs the module with the student's own weight functions, as training would:
    # one that cuts the graph costs that point (its own checks do not follow the graph)
    Mistake("causal_attention_weights detached, CausalAttention calling it", {"causal_attention_weights": """
            def causal_attention_weights(attn_scores, d_k):
                hidden = causal_mask(attn_scores.shape[-1], attn_scores.device)
                return torch.softmax(attn_scores.masked_fill(hidden, -torch.inf) / d_k ** 0.5, dim=-1).detach()
            """, "CausalAttention": CALLING_THE_WEIGHTS}, ["CausalAttention: gradients reach every parameter"],
            says="cut from the autograd graph"),
    # ... and a wrong d_k handed to it is the module's mistake
    Mistake("CausalAttention hands d_in to causal_attention_weights as d_k",
            {"CausalAttention": CALLING_THE_WEIGHTS.replace("(scores, keys.shape[-1])", "(scores, x.shape[-1])")},
            ["with seed 123 gives the documented", OTHER_SIZES], says="sqrt(d_in)"),
    Mistake("scaled by sqrt(T)", {"causal_attention_weights": """
            def causal_attention_weights(attn_scores, d_k):
                T = attn_scores.shape[-1]
                return torch.softmax(attn_scores.masked_fill(causal_mask(T, attn_scores.device), -torch.inf) / T ** 0.5, dim=-1)
            """}, ["causal_attention_weights masks before", "causal_attention_weights gives the documented"],
            says="number of tokens"),
    Mistake("mask filled with 0 instead of -inf", {"causal_attention_weights": """
            def causal_attention_weights(attn_scores, d_k):
                masked = attn_scores.masked_fill(causal_mask(attn_scores.shape[-1], attn_scores.device), 0)
                return torch.softmax(masked / d_k ** 0.5, dim=-1)
            """}, ["causal_attention_weights masks before", "causal_attention_weights gives the documented"],
            says="filled with 0 instead of -inf"),
    Mistake("CausalAttention fills the mask with 0", {"CausalAttention": causal_attention(
        mask=MASK.replace('float("-inf")', "0"))},
        ["with seed 123 gives the documented", "CausalAttention is causal", OTHER_SIZES],
        says="filled with 0 instead of -inf"),
    Mistake("CausalAttention hides the past (tril, diagonal kept)", {"CausalAttention": causal_attention(
        init=BUFFER.replace("torch.triu(", "torch.tril(").replace("diagonal=1", "diagonal=-1"))},
        ["with seed 123 gives the documented", "CausalAttention is causal", OTHER_SIZES],
        says="the past hidden instead of the future"),
    Mistake("CausalAttention hides the past and the diagonal (tril)", {"CausalAttention": causal_attention(
        init=BUFFER.replace("torch.triu(", "torch.tril(").replace(", diagonal=1", ""))},
        ["with seed 123 gives the documented", "CausalAttention is causal", OTHER_SIZES],
        says="the past and the diagonal hidden instead of the future", asks=("a row with every key hidden",)),
    Mistake("parameters created out of order", {"CausalAttention": causal_attention().replace(
        "        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)\n", "").replace(
        "        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)\n",
        "        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)\n"
        "        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)\n")},
        ["in the documented order", "with seed 123 gives the documented"], says="order"),
    Mistake("attention scaled by sqrt(d_in)", {"CausalAttention": causal_attention().replace(
        "keys.shape[-1] ** 0.5", "x.shape[-1] ** 0.5")},
        ["with seed 123 gives the documented", OTHER_SIZES], says="sqrt(d_in)"),
    Mistake("no causal mask in forward", {"CausalAttention": causal_attention(mask="pass")},
            ["CausalAttention is causal", "with seed 123 gives the documented", OTHER_SIZES], says="future leaks", also=("no causal mask",)),
    Mistake("softmax over the batch", {"CausalAttention": causal_attention(mask=MASK.replace('float("-inf")', "-1e9"))
            .replace("dim=-1)", "dim=0)")},
            ["items of a batch do not influence", "CausalAttention is causal", "with seed 123 gives the documented",
             OTHER_SIZES], says="keep the batch dim apart"),
    Mistake("no ValueError for too-long input", {"CausalAttention": causal_attention(check="pass")},
            ["raises ValueError naming both numbers"], says="should raise ValueError"),
    Mistake("ValueError without the numbers", {"CausalAttention": causal_attention(check=(
        'if num_tokens > self.context_length:\n'
        '            raise ValueError("the input is longer than the context")'))},
        ["raises ValueError naming both numbers"], says="should name 8 and 5"),
    Mistake("dropout active in eval", {"CausalAttention": causal_attention(
        dropout="weights = nn.functional.dropout(weights, self.dropout.p, training=True)")},
        ["eval mode disables dropout"], says="dropout active in eval"),
    Mistake("dropout on the scores before the softmax", {"CausalAttention": causal_attention(dropout="pass").replace(
        "weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)",
        "weights = torch.softmax(self.dropout(scores) / keys.shape[-1] ** 0.5, dim=-1)")},
        ["dropout on the attention weights as nn.Dropout"], says="dropout applied to the masked scores"),
    Mistake("dropout on the context vectors", {"CausalAttention": causal_attention(dropout="pass").replace(
        "return weights @ values", "return self.dropout(weights @ values)")},
        ["dropout on the attention weights as nn.Dropout"], says="context vectors"),
    Mistake("qkv_bias ignored", {"CausalAttention": causal_attention().replace("bias=qkv_bias", "bias=False")},
            ["in the documented order"], says="W_query.bias"),
    Mistake("mask built on the CPU inside forward", {"CausalAttention": causal_attention(init="", mask=(
        "scores = scores.masked_fill(torch.triu(torch.ones(num_tokens, num_tokens), 1).bool(), -torch.inf)"))},
        ["works on any device"], says="register the mask"),
    Mistake("mask kept as a plain attribute, not a buffer", {"CausalAttention": causal_attention(
        init="self.mask = torch.triu(torch.ones(context_length, context_length), diagonal=1).bool()")},
        ["works on any device"], says="register_buffer"),
    # the book readers' most common slip: told that a tensor was still on the CPU (the meta device's error read
    # as a device error); the checks at T = context_length pass, those at a shorter T raise
    Mistake("mask buffer not sliced to T", {"CausalAttention": causal_attention(
        mask='scores = scores.masked_fill(self.mask.bool(), float("-inf"))')},
        ["items of a batch", "CausalAttention: gradients reach", OTHER_SIZES], says="slice it", hint=UNSLICED_MASK),
    Mistake("uses F.scaled_dot_product_attention", {"CausalAttention": causal_attention().replace(
        "        weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)\n", "").replace(
        "        weights = self.dropout(weights)\n        return weights @ values",
        "        return nn.functional.scaled_dot_product_attention(queries, keys, values, is_causal=True)")},
        ["with seed 123 gives the documented", *EVERY_CAUSAL_ATTENTION_CHECK], says="forbids"),
]

HARD_CODED = {
    "causal_mask": """
        def causal_mask(num_tokens, device=None):
            return torch.tensor([[False, True, True, True], [False, False, True, True],
                                 [False, False, False, True], [False, False, False, False]])
        """,
    "mask_and_renormalize": """
        DOC = [[1.0, 0, 0, 0, 0, 0], [0.5517, 0.4483, 0, 0, 0, 0], [0.3800, 0.3097, 0.3103, 0, 0, 0],
               [0.2758, 0.2460, 0.2462, 0.2319, 0, 0], [0.2175, 0.1983, 0.1984, 0.1888, 0.1971, 0],
               [0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529]]

        def mask_and_renormalize(attn_weights):
            return torch.tensor(DOC)
        """,
    "causal_attention_weights": """
        def causal_attention_weights(attn_scores, d_k):
            return torch.tensor(DOC)
        """,
    "CausalAttention": causal_attention().replace(
        "return weights @ values",
        "return torch.tensor([[-0.4519, 0.2216], [-0.5874, 0.0058], [-0.6300, -0.0632], [-0.5675, -0.0843], "
        "[-0.5526, -0.0981], [-0.5299, -0.1081]]).expand(b, 6, 2)"),
}
STYLES = [
    # the module's weights from causal_attention_weights
    {"CausalAttention": CALLING_THE_WEIGHTS},
    {"CausalAttention": RENORMALISING},
    # -1e9 instead of -inf, masks from tril, the mask made in forward with device=x.device, F.dropout
    {"causal_mask": """
        def causal_mask(num_tokens, device=None):
            return ~torch.tril(torch.ones(num_tokens, num_tokens, device=device)).bool()
        """,
     "causal_attention_weights": """
        import math

        def causal_attention_weights(attn_scores, d_k):
            masked = attn_scores.masked_fill(causal_mask(attn_scores.shape[-1], attn_scores.device), -1e9)
            return torch.softmax(masked / math.sqrt(d_k), dim=-1)
        """,
     "mask_and_renormalize": """
        def mask_and_renormalize(attn_weights):
            T = attn_weights.shape[-1]
            kept = attn_weights * torch.tril(torch.ones(T, T, device=attn_weights.device))
            return kept / kept.sum(-1, keepdim=True)
        """,
     "CausalAttention": causal_attention(init="", check=(
         'if num_tokens > self.context_length:\n'
         '            raise ValueError(f"context_length is {self.context_length}, got {num_tokens} tokens")'),
         mask="scores = scores.masked_fill(~torch.tril(torch.ones(num_tokens, num_tokens, device=x.device)).bool(), "
              "-1e9)",
         dropout="weights = nn.functional.dropout(weights, self.dropout.p, training=self.training)")},
    # torch.where, scaling before masking, einsum, a non-persistent buffer made by comparing positions
    {"causal_mask": """
        def causal_mask(num_tokens, device=None):
            positions = torch.arange(num_tokens, device=device)
            return positions[None, :] > positions[:, None]
        """,
     "causal_attention_weights": """
        def causal_attention_weights(attn_scores, d_k):
            scaled = attn_scores / d_k ** 0.5
            hidden = causal_mask(scaled.shape[-1], device=scaled.device)
            return torch.where(hidden, torch.tensor(float("-inf")), scaled).softmax(dim=-1)
        """,
     "mask_and_renormalize": """
        def mask_and_renormalize(attn_weights):
            hidden = causal_mask(attn_weights.shape[-1], device=attn_weights.device)
            kept = torch.where(hidden, torch.zeros_like(attn_weights), attn_weights)
            return kept / kept.sum(dim=-1, keepdim=True)
        """,
     "CausalAttention": """
        import math

        class CausalAttention(nn.Module):
            def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
                super().__init__()
                self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
                self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
                self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
                self.dropout = nn.Dropout(dropout)
                self.register_buffer("mask", causal_mask(context_length), persistent=False)

            def forward(self, x):
                T = x.shape[1]
                if T > self.mask.shape[0]:
                    raise ValueError(f"got {T} tokens but the context holds only {self.mask.shape[0]}")
                q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
                scores = torch.einsum("btd,bsd->bts", q, k) / math.sqrt(k.shape[-1])
                scores = torch.where(self.mask[:T, :T], float("-inf"), scores)
                weights = self.dropout(torch.softmax(scores, dim=-1))
                return torch.einsum("bts,bsd->btd", weights, v)
        """},
    # the simple way inside the module (softmax, zero, renormalise) with the book's float mask buffer
    {"mask_and_renormalize": """
        def mask_and_renormalize(attn_weights):
            masked = attn_weights.clone()
            masked[..., causal_mask(masked.shape[-1], masked.device)] = 0.0
            return masked / masked.sum(-1, keepdim=True)
        """,
     "CausalAttention": causal_attention(
         init="self.register_buffer('mask', torch.triu(torch.ones(context_length, context_length), diagonal=1))",
         mask="pass").replace(
         "        weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)\n",
         "        weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)\n"
         "        weights = weights.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], 0.0)\n"
         "        weights = weights / weights.sum(dim=-1, keepdim=True)\n")},
]

# Tried as a new student would, from the notebook's text alone (benchmarks/student_trial.py tabulates them)
TRIAL_MISTAKES = [
    Mistake("mask_and_renormalize divides without keepdim", {"mask_and_renormalize": """
            def mask_and_renormalize(attn_weights):
                masked = attn_weights.masked_fill(causal_mask(attn_weights.shape[-1], attn_weights.device), 0.0)
                return masked / masked.sum(dim=-1)
            """}, ['mask_and_renormalize gives the documented', 'mask_and_renormalize zeroes the future'],
            says="a sum taken without keepdim=True"),
    Mistake("causal_attention_weights fills -1e-9 for -1e9", {"causal_attention_weights": """
            def causal_attention_weights(attn_scores, d_k):
                mask = causal_mask(attn_scores.shape[-1], device=attn_scores.device)
                return torch.softmax(attn_scores.masked_fill(mask, -1e-9) / d_k ** 0.5, dim=-1)
            """}, ['causal_attention_weights gives the documented', 'causal_attention_weights masks before the softmax'], says='filled with 0 instead of -inf'),
    Mistake("causal_attention_weights fills +inf", {"causal_attention_weights": """
            def causal_attention_weights(attn_scores, d_k):
                mask = causal_mask(attn_scores.shape[-1], device=attn_scores.device)
                return torch.softmax(attn_scores.masked_fill(mask, float("inf")) / d_k ** 0.5, dim=-1)
            """}, ['causal_attention_weights gives the documented', 'causal_attention_weights masks before the softmax'], says='filled with +inf instead of -inf'),
    Mistake("ValueError at T == context_length", {"CausalAttention": causal_attention(check=(
        'if num_tokens >= self.context_length:\n'
        '            raise ValueError(f"{num_tokens} tokens > context_length {self.context_length}")'))}, ['with seed 123 gives the documented', 'CausalAttention is causal', 'eval mode disables dropout', 'dropout on the attention weights as nn.Dropout'], says='raised ValueError: 6 tokens > context_length 6'),
    Mistake("CausalAttention softmax over the queries (dim=1)", {"CausalAttention": causal_attention().replace(
        "weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)",
        "weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=1)")}, ['with seed 123 gives the documented', 'CausalAttention is causal', OTHER_SIZES], says='softmax over dim=-2'),
    Mistake("CausalAttention with nn.MultiheadAttention (forbidden)", {"CausalAttention": """
            class CausalAttention(nn.Module):
                def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
                    super().__init__()
                    self.context_length = context_length
                    self.attn = nn.MultiheadAttention(d_out, 1, dropout=dropout, bias=qkv_bias, batch_first=True,
                                                      kdim=d_in, vdim=d_in)
                    self.register_buffer("mask", causal_mask(context_length))
                def forward(self, x):
                    T = x.shape[1]
                    if T > self.context_length:
                        raise ValueError(f"{T} tokens > context_length {self.context_length}")
                    out, _ = self.attn(x, x, x, attn_mask=self.mask[:T, :T], need_weights=False)
                    return out
            """}, ['with seed 123 gives the documented', *EVERY_CAUSAL_ATTENTION_CHECK], says='which this section forbids'),
]

TRIAL_STYLES = {
    "triu(1) of ones compared, torch.where, an additive -inf buffer, masked_fill_ in place": {
        "causal_mask": """
            def causal_mask(num_tokens, device=None):
                return torch.ones(num_tokens, num_tokens, device=device).triu(1) == 1
            """,
        "mask_and_renormalize": """
            def mask_and_renormalize(attn_weights):
                keep = ~causal_mask(attn_weights.shape[-1], attn_weights.device)
                kept = torch.where(keep, attn_weights, 0.0)
                return kept / kept.sum(-1, keepdim=True)
            """,
        "causal_attention_weights": """
            def causal_attention_weights(attn_scores, d_k):
                scores = attn_scores.clone()
                scores.masked_fill_(causal_mask(scores.shape[-1], scores.device), -torch.inf)
                return torch.nn.functional.softmax(scores / d_k ** 0.5, dim=-1)
            """,
        "CausalAttention": causal_attention(
            init="self.register_buffer('bias', torch.full((context_length, context_length), float('-inf')).triu(1))",
            mask="scores = scores + self.bias[:num_tokens, :num_tokens]")},
    "the book's forward: a float buffer, masked_fill_ with -torch.inf, -1e9 for the weights": {
        "causal_attention_weights": """
            def causal_attention_weights(attn_scores, d_k):
                T = attn_scores.size(-1)
                hidden = torch.triu(torch.ones(T, T, dtype=torch.bool, device=attn_scores.device), diagonal=1)
                return (attn_scores.masked_fill(hidden, -1e9) / d_k ** 0.5).softmax(-1)
            """,
        "CausalAttention": causal_attention(
            init="self.register_buffer('mask', torch.triu(torch.ones(context_length, context_length), diagonal=1))",
            mask="scores.masked_fill_(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)")},
}
MISTAKES += [mistake for mistake in TRIAL_MISTAKES if mistake.loses]  # the rest no check catches
STYLES += TRIAL_STYLES.values()
