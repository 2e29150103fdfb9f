"""What the checks of section 06 call the common mistakes they name, and how the report draws
heads (public inputs only: the documented example, a visible check's inputs). The descriptions and
hints are made at import time: marked with N_ here, translated with _() where they are shown."""
from autograder.i18n import N_, _f

BARE_SPLIT = N_("a bare view to (B, H, T, hd) without transpose (tokens and heads get mixed)")
# a split into (B, T, H, hd) returned as is: on the documented input (T = H) it has the documented shape
NO_SPLIT_SWAP = N_("the heads split off as (B, T, H, hd) and returned without .transpose(1, 2) (tokens and heads "
                   "get mixed)")
# the future leaks into the past: the question "no causal mask?" only where the module's own weights without a
# mask give its output (section_06's leak_hint); an inverted mask or mixed-up heads leak too, and have a mask
# a split into (B, T, hd, H) read back as heads: head h holds features h, h + H, h + 2H, ...
STRIDED_HEADS = N_("head h taking every H-th feature instead of the block [h*hd, (h+1)*hd)")
NO_MASK_LEAK = N_("They changed, so the future leaks into the past: no causal mask? Hide the scores strictly "
                  "above the diagonal in every head")
FUTURE_LEAKS = N_("They changed, so the future leaks into the past: hide the scores strictly above the diagonal in "
                  "every head")
NO_SWAP_BACK = N_("a bare reshape to (B, T, H*hd) without swapping H and T back")
INVERSE_HINT = N_("combine_heads must undo split_heads: split_heads reshapes to (B, T, H, hd) then swaps T and H, "
                   "so combine_heads swaps them back, then reshapes")
MHA_ORDER = "W_query, W_key, W_value (Linear(d_in, d_out, bias=qkv_bias)), out_proj (Linear(d_out, d_out))"
WRAPPER_ORDER = N_("the heads one after the other, each CausalAttention(d_in, d_out, context_length, dropout, "
                    "qkv_bias) creating W_query, W_key, W_value")
TOKEN_DIM = N_("the heads concatenated along the token dim instead of the last dim")
NO_WRAPPER_BIAS = N_("qkv_bias not passed on to the CausalAttention heads")
NO_WRAPPER_DROPOUT = N_("dropout not passed on to the CausalAttention heads")
# out_proj made as nn.Linear(d_out, d_out, bias=qkv_bias) or bias=False: the documented one has a bias, always
QKV_IGNORED = N_("qkv_bias ignored (W_query, W_key, W_value built without bias)")
EVAL_DROPOUT = N_("dropout active in eval mode (F.dropout defaults to training=True; use the self.dropout "
                   "module, which eval() switches off)")
NO_TRAIN_DROPOUT = N_("no dropout applied in train mode (apply self.dropout to the attention weights)")
CONTEXT_DROPOUT = N_("dropout on the context vectors instead of the attention weights")

# The report's pictures (public inputs only: the documented example, a visible check's inputs).
# (B, H, T, hd) heads are drawn as batch item 0 with one row per (head, token), so a mixed-up split shows.
# (the note is marked for the catalogues: the report's figure shows it beside the check's `what`)
HEAD_ROWS = (lambda heads: heads[0].reshape(-1, heads.shape[-1]), N_("batch item 0, one row per head and token"))


def head_rows(num_heads: int, num_tokens: int) -> list[str]:
    # i18n: a heatmap's row label, short: the margin is 90 px
    return [_f("head {h} t{t}", h=h, t=t) for h in range(num_heads) for t in range(num_tokens)]


def head_columns(num_heads: int, head_dim: int) -> list[str]:
    """Column names of combined heads (B, T, H*hd): each head's block of features side by side."""
    # i18n: a heatmap's column label: head h, feature i of that head
    return [_f("head {h}: {i}", h=h, i=i) for h in range(num_heads) for i in range(head_dim)]
