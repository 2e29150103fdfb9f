"""The fused layers' forward written out by the checks of section 08, with a layer's own weights, and what their
common wrong versions return: W_qkv read in another order, notebook 06's mistakes, the SDPA layer's own wrong
calls, a load_from that stacks or copies wrongly. Shipped whole with the visible checks: it never imports
`solutions`; its messages are section 08's (autograder/i18n/catalogues.py)."""
from functools import partial
from types import SimpleNamespace

import torch

from autograder.checks.common import manual_seed
from autograder.checks.multihead_forward import NAMES, attend, mha_mistakes
from autograder.i18n import N_

ORDER = "W_qkv (Linear(d_in, 3 * d_out, bias=qkv_bias)), out_proj (Linear(d_out, d_out))"
INTERLEAVED = N_("W_qkv's columns read head by head ([q_0, k_0, v_0, q_1, ...], a view to (b, T, num_heads, 3, "
                 "head_dim)) instead of in three blocks, queries, keys, values (a view to (b, T, 3, num_heads, "
                 "head_dim))")
KEYS_FIRST = N_("the keys taken from W_qkv's first block and the queries from the second (the blocks are queries, "
                "keys, values)")
LOADED_ORDER = N_("the three projections stacked in another order than queries, keys, values")
LOADED_NO_OUT_PROJ = N_("out_proj not copied by load_from")
LOADED_NO_BIAS = N_("the biases of W_query, W_key, W_value not copied into W_qkv.bias")
SDPA_MASK_KEPT = N_("a True-means-hidden mask passed as attn_mask: F.scaled_dot_product_attention's boolean "
                    "attn_mask means True = may attend, so it hides the past and shows the future; "
                    "use is_causal=True")
# the fused layer's own forward slips, with its own weights: what exp(0) and a softmax along the queries give
ZERO_FILL = N_("the masked scores filled with 0 instead of -inf before the softmax (exp(0) = 1: the future keeps "
               "its weight; use masked_fill(mask, float('-inf')))")
OVER_QUERIES = N_("softmax over dim=-2 (over the queries) instead of the last dim (over the keys): each query's "
                  "weights must sum to 1, softmax(scores, dim=-1)")
# the split's view kept without its transpose: the function attends over the second-to-last dim, here the heads
HEADS_AS_TOKENS = N_("F.scaled_dot_product_attention given (b, T, num_heads, head_dim) tensors: it attends over "
                     "the second-to-last dim, so each token's heads attend to one another instead of the tokens; "
                     "transpose to (b, num_heads, T, head_dim) first")
HEADS_NOT_SPLIT = N_("the heads never split: F.scaled_dot_product_attention called on (b, T, d_out) tensors "
                     "attends with one head of size d_out; split into (b, num_heads, T, head_dim) first")


def blocks(params, d_in: int, d_out: int, num_heads: int, order=(0, 1, 2), interleaved: bool = False,
           device="cpu"):
    """The student's fused layer as notebook 06's layers (what multihead_forward.attend takes): W_query, W_key,
    W_value cut from W_qkv's weight and bias (the blocks in `order`; interleaved: read head by head, a mistake),
    out_proj as it is. None when W_qkv or out_proj lacks the documented names or shapes (the parameter checks
    say so)."""
    params = params if isinstance(params, dict) else {}
    weight, bias = params.get("W_qkv.weight"), params.get("W_qkv.bias")
    out_weight, out_bias = params.get("out_proj.weight"), params.get("out_proj.bias")
    if not (isinstance(weight, torch.Tensor) and tuple(weight.shape) == (3 * d_out, d_in)
            and isinstance(out_weight, torch.Tensor) and tuple(out_weight.shape) == (d_out, d_out)):
        return None
    if not isinstance(bias, torch.Tensor) or tuple(bias.shape) != (3 * d_out,):
        bias = torch.zeros(3 * d_out)
    if not isinstance(out_bias, torch.Tensor) or tuple(out_bias.shape) != (d_out,):
        out_bias = torch.zeros(d_out)
    head_dim = d_out // num_heads

    def cut(tensor, block):
        if interleaved:  # (num_heads, 3, head_dim, ...): head h's queries, keys, values side by side
            return tensor.reshape(num_heads, 3, head_dim, -1)[:, block].reshape(d_out, -1).squeeze(-1)
        return tensor[block * d_out:(block + 1) * d_out]

    layers = {name: partial(torch.nn.functional.linear, weight=cut(weight, block).detach().float().to(device),
                            bias=cut(bias, block).detach().float().to(device)) for name, block in zip(NAMES, order)}
    layers["out_proj"] = partial(torch.nn.functional.linear, weight=out_weight.detach().float().to(device),
                                 bias=out_bias.detach().float().to(device))
    return SimpleNamespace(**layers, num_heads=num_heads, head_dim=head_dim, d_out=d_out)


def split_heads(own, x, transpose: bool):
    """Queries, keys and values of `own` (blocks') on x, split into heads: (b, num_heads, T, head_dim), or without
    the transpose (b, T, num_heads, head_dim), a mistake."""
    b, t = x.shape[:2]
    parts = (layer(x).reshape(b, t, own.num_heads, own.head_dim) for layer in (own.W_query, own.W_key, own.W_value))
    return [part.transpose(1, 2) if transpose else part for part in parts]


def written_out(own, x, *, fill: float, dim: int):
    """The fused layer's eval-mode forward written out with the weights of `own` (blocks'): the causal mask's
    scores filled with `fill`, the softmax taken over `dim` (the right forward at -inf and -1, slips otherwise)."""
    with torch.no_grad():
        b, t = x.shape[:2]
        q, k, v = split_heads(own, x, transpose=True)
        future = torch.ones(t, t, dtype=torch.bool).triu(1)
        scores = (q @ k.transpose(2, 3) / own.head_dim ** 0.5).masked_fill(future, fill)
        context = scores.softmax(dim) @ v
        return own.out_proj(context.transpose(1, 2).reshape(b, t, own.d_out))


def fused_mistakes(params, x, got, d_in: int, d_out: int, num_heads: int) -> dict:
    """What common wrong forwards return with the student's own weights (empty where they are not the documented
    ones): W_qkv read in another order, and notebook 06's common mistakes."""
    own = blocks(params, d_in, d_out, num_heads)
    if own is None:
        return {}
    wrong = {INTERLEAVED: attend(blocks(params, d_in, d_out, num_heads, interleaved=True), x),
             KEYS_FIRST: attend(blocks(params, d_in, d_out, num_heads, order=(1, 0, 2)), x)}
    wrong.update(mha_mistakes(own, x, got))
    wrong[ZERO_FILL] = written_out(own, x, fill=0.0, dim=-1)
    wrong[OVER_QUERIES] = written_out(own, x, fill=float("-inf"), dim=-2)
    return wrong


def sdpa_mistakes(params, x, got, d_in: int, d_out: int, num_heads: int) -> dict:
    """fused_mistakes, and what the SDPA layer's own common wrong calls return with its own weights: the causal
    mask of notebook 06 (True = hidden) passed as attn_mask, and the heads never split."""
    wrong = fused_mistakes(params, x, got, d_in, d_out, num_heads)
    own = blocks(params, d_in, d_out, num_heads)
    if own is None:
        return wrong
    with torch.no_grad():
        b, t = x.shape[:2]
        q, k, v = split_heads(own, x, transpose=True)
        hidden = torch.ones(t, t, dtype=torch.bool).triu(1)
        context = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=hidden)
        wrong[SDPA_MASK_KEPT] = own.out_proj(context.transpose(1, 2).reshape(b, t, d_out))
        # the context of the heads attending to one another, then transposed as if it were (b, heads, T, hd)
        context = torch.nn.functional.scaled_dot_product_attention(*split_heads(own, x, transpose=False),
                                                                   is_causal=True)
        wrong[HEADS_AS_TOKENS] = own.out_proj(context.transpose(1, 2).reshape(b, t, d_out))
    one_head = SimpleNamespace(**{name: getattr(own, name) for name in (*NAMES, "out_proj")}, num_heads=1,
                               head_dim=d_out, d_out=d_out)
    wrong[HEADS_NOT_SPLIT] = attend(one_head, x)
    return wrong


MISTAKES_OF = {"MultiHeadAttentionFused": fused_mistakes, "MultiHeadAttentionSDPA": sdpa_mistakes}


def seeded_mha(d_in: int, d_out: int, seed: int, qkv_bias: bool = True) -> dict:
    """The parameters of notebook 06's MultiHeadAttention(d_in, d_out, ...) after torch.manual_seed(seed), in its
    documented creation order: name -> (weight, bias or None)."""
    manual_seed(seed)
    layers = {name: torch.nn.Linear(d_in, d_out, bias=qkv_bias) for name in NAMES}
    layers["out_proj"] = torch.nn.Linear(d_out, d_out)
    return {name: (layer.weight.detach(), None if layer.bias is None else layer.bias.detach())
            for name, layer in layers.items()}


def as_mha(source: dict, num_heads: int) -> SimpleNamespace:
    """seeded_mha's parameters as the layers multihead_forward.attend takes (a missing bias counts as zero)."""
    d_out = source["out_proj"][0].shape[0]
    layers = {name: partial(torch.nn.functional.linear, weight=weight, bias=bias)
              for name, (weight, bias) in source.items()}
    return SimpleNamespace(**layers, num_heads=num_heads, head_dim=d_out // num_heads, d_out=d_out)


def load_mistakes(source: dict, x, num_heads: int, seed: int) -> dict:
    """What a fused layer built after torch.manual_seed(seed) and loaded wrongly from `source` returns on x: the
    projections stacked keys first, the biases left as the layer drew them, out_proj left as the layer drew it."""
    swapped = {**source, "W_query": source["W_key"], "W_key": source["W_query"]}
    d_in, d_out = source["W_query"][0].shape[1], source["W_query"][0].shape[0]
    qkv, out_proj = built_layers(seed, d_in, d_out)
    bias = qkv.bias.detach().reshape(3, d_out)
    kept_bias = {**source, **{name: (source[name][0], bias[i]) for i, name in enumerate(NAMES)}}
    kept_out = {**source, "out_proj": (out_proj.weight.detach(), out_proj.bias.detach())}
    return {LOADED_ORDER: attend(as_mha(swapped, num_heads), x), LOADED_NO_BIAS: attend(as_mha(kept_bias, num_heads), x),
            LOADED_NO_OUT_PROJ: attend(as_mha(kept_out, num_heads), x)}


def built_layers(seed: int, d_in: int, d_out: int) -> tuple:
    """W_qkv and out_proj of a MultiHeadAttentionFused(d_in, d_out, ..., qkv_bias=True) built after
    torch.manual_seed(seed) in the documented order: what a load_from that copies nothing into them leaves behind."""
    manual_seed(seed)
    return torch.nn.Linear(d_in, 3 * d_out), torch.nn.Linear(d_out, d_out)
