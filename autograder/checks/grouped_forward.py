"""Grouped-query attention written out by the checks of section 10, with a layer's own weights, and what its
common wrong versions return: the key/value heads tiled instead of interleaved, the scores scaled by another
number, no causal mask. Shipped whole with the visible checks: it never imports `solutions`; its messages are
section 10's (autograder/i18n/catalogues.py)."""
from functools import partial
from types import SimpleNamespace

import torch

from autograder.checks.multihead_forward import NAMES
from autograder.i18n import N_

ORDER = ("W_query (Linear(d_in, d_out, bias=qkv_bias)), W_key and W_value (Linear(d_in, num_kv_groups * head_dim, "
         "bias=qkv_bias)), out_proj (Linear(d_out, d_out))")
TILED = N_("the key/value heads repeated with .repeat (tiled: groups 0, 1, 0, 1, ...) instead of "
           ".repeat_interleave (0, 0, 1, 1, ...): query head h shares the keys of group h // group_size")
KV_SCALE = N_("scores scaled by sqrt(num_kv_groups) instead of sqrt(head_dim)")
D_OUT_SCALE = N_("scores scaled by sqrt(d_out) instead of sqrt(head_dim)")
UNSCALED = N_("unscaled scores (divide by sqrt(head_dim))")
NO_MASK = N_("no causal mask (every token sees the future)")
DIAGONAL = N_("the diagonal masked too (a token must see itself)")
NO_OUT_PROJ = N_("no out_proj applied to the combined heads")
# the keys' and values' projection to d_out features: no saving over multi-head attention
KV_WIDTH = N_("W_key and W_value project to num_kv_groups * head_dim features (head_dim = d_out // num_heads), "
              "not to d_out: that is where grouped-query attention saves")
CACHE_REPEATED = N_("the cache holds the repeated heads: store keys and values before repeat_interleave, so that "
                    "it keeps num_kv_groups heads (that is the saving)")
WRONG_DIM = N_("repeat_interleave on the wrong dim: after .transpose(1, 2) the heads are dim 1; before it they "
               "are dim 2, and dim 1 holds the tokens")


def own_grouped(params, d_in: int, d_out: int, num_heads: int, num_kv_groups: int, device="cpu"):
    """The student's layer as functions (a bias it lacks counts as zero), with its sizes: what `grouped_attend`
    takes. None when the parameters lack the documented names or shapes (the parameter checks say so)."""
    params = params if isinstance(params, dict) else {}
    head_dim = d_out // num_heads
    kv = num_kv_groups * head_dim
    layers = {}
    for name, (rows, cols) in (("W_query", (d_out, d_in)), ("W_key", (kv, d_in)), ("W_value", (kv, d_in)),
                               ("out_proj", (d_out, d_out))):
        weight, bias = params.get(f"{name}.weight"), params.get(f"{name}.bias")
        if not isinstance(weight, torch.Tensor) or tuple(weight.shape) != (rows, cols):
            return None
        if not isinstance(bias, torch.Tensor) or tuple(bias.shape) != (rows,):
            bias = torch.zeros(rows)
        layers[name] = partial(torch.nn.functional.linear, weight=weight.detach().float().to(device),
                               bias=bias.detach().float().to(device))
    return SimpleNamespace(**layers, num_heads=num_heads, num_kv_groups=num_kv_groups, head_dim=head_dim,
                           d_out=d_out)


def grouped_attend(layer, x, *, tiled=False, scale_by=None, causal=True, diagonal=1, out_proj=True):
    """F.scaled_dot_product_attention with the weights of `layer` (own_grouped's), without autograd: torch's own
    grouping (enable_gqa=True: query head h reads key/value head h // group_size), the right output by another
    route; with switches that reproduce common mistakes: tiled (.repeat instead of .repeat_interleave), scale_by
    (divide the scores by sqrt(scale_by); default head_dim), causal, diagonal (0 hides the diagonal too),
    out_proj. Torch attends, never code of its own: the section forbids that function to the student."""
    with torch.no_grad():
        b, t, _ = x.shape
        h, g, hd = layer.num_heads, layer.num_kv_groups, layer.head_dim
        queries = layer.W_query(x).reshape(b, t, h, hd).transpose(1, 2)  # (b, h, t, hd)
        keys, values = (proj(x).reshape(b, t, g, hd).transpose(1, 2) for proj in (layer.W_key, layer.W_value))
        if tiled:  # every query head given its own (wrongly chosen) key/value head: no grouping left to torch
            keys, values = keys.repeat(1, h // g, 1, 1), values.repeat(1, h // g, 1, 1)
        hidden = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(diagonal) if causal else None
        mask = None if hidden is None else torch.zeros(t, t, device=x.device).masked_fill(hidden, float("-inf"))
        context = torch.nn.functional.scaled_dot_product_attention(
            queries, keys, values, attn_mask=mask, scale=(scale_by or hd) ** -0.5, enable_gqa=not tiled)
        if hidden is not None:  # a query that sees no key: softmax over nothing is NaN by hand, 0 in torch
            context = context.masked_fill(hidden.all(-1)[:, None], float("nan"))
        context = context.transpose(1, 2).reshape(b, t, h * hd)
        return layer.out_proj(context) if out_proj else context


def torch_grouped(layer, x):
    """F.scaled_dot_product_attention(..., enable_gqa=True) with the weights of `layer` under a causal mask."""
    return grouped_attend(layer, x)


def grouped_mistakes(layer, x) -> dict:
    """What common wrong forwards return with the weights of `layer` (empty where there are none)."""
    if layer is None:
        return {}
    wrong = {}
    if layer.num_kv_groups not in (1, layer.num_heads):  # tiling and interleaving differ only between these
        wrong[TILED] = grouped_attend(layer, x, tiled=True)
    if layer.num_kv_groups != layer.head_dim:
        wrong[KV_SCALE] = grouped_attend(layer, x, scale_by=layer.num_kv_groups)
    wrong.update({D_OUT_SCALE: grouped_attend(layer, x, scale_by=layer.d_out),
                  UNSCALED: grouped_attend(layer, x, scale_by=1),
                  NO_MASK: grouped_attend(layer, x, causal=False),
                  DIAGONAL: grouped_attend(layer, x, diagonal=0),
                  NO_OUT_PROJ: grouped_attend(layer, x, out_proj=False)})
    return wrong


def mha_layer(layer):
    """`layer` (own_grouped's, num_kv_groups == num_heads) as notebook 06's MultiHeadAttention's weights, the
    shape multihead_forward.attend and causal_torch_output take."""
    return SimpleNamespace(**{name: getattr(layer, name) for name in (*NAMES, "out_proj")},
                           num_heads=layer.num_heads, head_dim=layer.head_dim, d_out=layer.d_out)
