"""What the checks of section 06 measure a MultiHeadAttention against: torch's own attention (nn.MultiheadAttention
and F.scaled_dot_product_attention, which the section forbids the student to call) with a module's own weights (the
student's, or the reference's), the heads and masks arranged by switches that reproduce common mistakes. The
attention itself is always torch's: nothing here is the section's forward written out. Shipped whole with the
visible checks: it never imports `solutions`."""
from functools import partial
from types import SimpleNamespace

import torch

from autograder.checks.common import manual_seed, seeded_projections
from autograder.i18n import N_

NAMES = ("W_query", "W_key", "W_value")
BARE_SPLIT_IN_FORWARD = N_("a bare view to (B, H, T, head_dim) when splitting heads, without the transpose "
                           "(tokens and heads get mixed): view to (B, T, H, head_dim), then .transpose(1, 2)")


def bare_split_output(x, d_in, d_out, num_heads, seed):
    """What MultiHeadAttention(d_in, d_out, T, 0.0, num_heads) after torch.manual_seed(seed) returns when it
    splits the heads with a bare view to (B, H, T, head_dim): the weights of the public creation order."""
    projection = seeded_projections(d_in, d_out, seed=seed)
    module = SimpleNamespace(W_query=projection.W_query, W_key=projection.W_key, W_value=projection.W_value,
                             out_proj=torch.nn.Linear(d_out, d_out),  # created right after W_value
                             num_heads=num_heads, head_dim=d_out // num_heads, d_out=d_out)
    return attend(module, x, bare_split=True)


def own_layers(params, d_in, d_out, num_heads, device="cpu"):
    """The student's MultiHeadAttention weights as functions (a bias it lacks counts as zero), with
    num_heads, head_dim and d_out: what `attend` takes. None when the parameters lack the documented
    names or shapes (the parameter checks say so). device: where the functions compute."""
    params = params if isinstance(params, dict) else {}
    layers = {}
    for name, n_in in (*((name, d_in) for name in NAMES), ("out_proj", d_out)):
        weight, bias = params.get(f"{name}.weight"), params.get(f"{name}.bias")
        if not isinstance(weight, torch.Tensor) or tuple(weight.shape) != (d_out, n_in):
            return None
        if not isinstance(bias, torch.Tensor) or tuple(bias.shape) != (d_out,):
            bias = torch.zeros(d_out)
        layers[name] = partial(torch.nn.functional.linear, weight=weight.detach().float().to(device),
                               bias=bias.detach().float().to(device))
    return SimpleNamespace(**layers, num_heads=num_heads, head_dim=d_out // num_heads, d_out=d_out)


def attend(module, x, **switches):
    """torch's attention with the weights of `module`, the heads and masks as the switches say, without autograd:
    see _attend."""
    with torch.no_grad():
        return _attend(module, x, **switches)


def _attend(module, x, *, scale_by=None, bare_split=False, bare_combine=False, out_proj=True,
           causal=True, diagonal=1, padding=None, fill=float("-inf"), weights_dropout=None, context_dropout=None):
    """torch's scaled_dot_product_attention with the weights of `module` (the reference, or own_layers of the
    student's), the heads and masks arranged by switches that reproduce common mistakes.

    scale_by: divide the scores by sqrt(scale_by) (default head_dim; 1 = unscaled).
    bare_split / bare_combine: a view to (B, H, T, hd) without the transpose, and back.
    diagonal: 1 for the causal mask, 0 to hide the diagonal too.
    padding: (mask, how), how in "keys", "inverted", "queries", "instead" (of the causal mask).
    fill: -inf or -1e9; they differ only on rows where every key is hidden.
    weights_dropout / context_dropout: a function applied to the (B, H, T, T) attention weights (where
    dropout belongs) or to the (B, H, T, hd) context (dropout in the wrong place).
    The masks are made on x's device.
    """
    b, t, _ = x.shape
    h, hd = module.num_heads, module.head_dim

    def split(y):
        return y.reshape(b, h, t, hd) if bare_split else y.reshape(b, t, h, hd).transpose(1, 2)

    queries, keys, values = split(module.W_query(x)), split(module.W_key(x)), split(module.W_value(x))
    hidden = torch.zeros(t, t, dtype=torch.bool, device=x.device)
    if causal:
        hidden = torch.triu(torch.ones(t, t, dtype=torch.bool, device=x.device), diagonal=diagonal)
    if padding is not None:
        mask, how = padding[0].to(x.device), padding[1]
        if how == "keys":
            hidden = hidden | mask[:, None, None, :]
        elif how == "inverted":
            hidden = hidden | ~mask[:, None, None, :]
        elif how == "queries":
            hidden = hidden | mask[:, None, :, None]
        elif how == "instead":
            hidden = mask[:, None, None, :].expand(b, 1, t, t)
    # the weights as torch's attention gives them with the identity as the values; the hidden pairs' scores
    # become `fill` (times the scale: -inf stays -inf, and -1e9 hides as surely)
    identity = torch.eye(t, device=x.device).expand(b, h, t, t)
    added = torch.zeros(hidden.shape, device=x.device).masked_fill(hidden, fill)
    weights = torch.nn.functional.scaled_dot_product_attention(queries, keys, identity, attn_mask=added,
                                                               scale=(scale_by or hd) ** -0.5)
    if fill == float("-inf"):  # a row whose every key is hidden: softmax's NaN, whichever kernel torch picks
        weights = weights.masked_fill(hidden.all(-1, keepdim=True), float("nan"))
    if weights_dropout is not None:
        weights = weights_dropout(weights)
    context = weights @ values  # (b, h, t, hd)
    if context_dropout is not None:
        context = context_dropout(context)
    context = context.reshape(b, t, h * hd) if bare_combine else context.transpose(1, 2).reshape(b, t, h * hd)
    return module.out_proj(context) if out_proj else context


def fill_of(got):
    """-inf if the student's output has NaN (rows with every key hidden), else -1e9."""
    if isinstance(got, torch.Tensor) and got.is_floating_point() and bool(torch.isnan(got).any()):
        return float("-inf")
    return -1e9


def mixed_heads_mistakes(module, x, fill=float("-inf")):
    """What a forward that mixes tokens and heads up (a bare view when splitting or combining them) returns with
    the weights of `module`: under a causal mask, such a forward also lets the future leak into the past."""
    return {
        BARE_SPLIT_IN_FORWARD: attend(module, x, bare_split=True, fill=fill),
        N_("a bare view to (B, H, T, head_dim) when splitting heads and when combining them "
           "(tokens and heads get mixed)"): attend(module, x, bare_split=True, bare_combine=True, fill=fill),
        N_("combining heads without swapping H and T back first"): attend(module, x, bare_combine=True, fill=fill),
    }


def mha_mistakes(module, x, got):
    """What common wrong versions of MultiHeadAttention return with the weights of `module`."""
    fill = fill_of(got)
    return {
        N_("scores scaled by sqrt(d_out) instead of sqrt(head_dim)"):
            attend(module, x, scale_by=module.d_out, fill=fill),
        N_("unscaled scores (divide by sqrt(head_dim))"): attend(module, x, scale_by=1, fill=fill),
        **mixed_heads_mistakes(module, x, fill),
        N_("no out_proj applied to the combined heads"): attend(module, x, out_proj=False, fill=fill),
        N_("the diagonal masked too (a token must see itself)"): attend(module, x, diagonal=0, fill=fill),
        N_("no causal mask (every token sees the future)"): attend(module, x, causal=False, fill=fill),
        # the batch flattened into one sequence of B*T tokens under one causal mask
        N_("every token of the batch attending to the earlier tokens of every item, as one long sequence: "
           "keep the batch dim apart (scores of shape (B, H, T, T))"):
            attend(module, x.reshape(1, -1, x.shape[-1]), fill=fill).reshape(*x.shape[:-1], -1),
    }


def causal_torch_output(own, x):
    """nn.MultiheadAttention (d_in == d_out) holding the weights of `own`, under a causal attn_mask."""
    torch_module = torch.nn.MultiheadAttention(own.d_out, own.num_heads, batch_first=True)
    with torch.no_grad():
        torch_module.in_proj_weight.copy_(torch.cat([getattr(own, name).keywords["weight"] for name in NAMES]))
        torch_module.in_proj_bias.copy_(torch.cat([getattr(own, name).keywords["bias"] for name in NAMES]))
        torch_module.out_proj.weight.copy_(own.out_proj.keywords["weight"])
        torch_module.out_proj.bias.copy_(own.out_proj.keywords["bias"])
        t = x.shape[1]
        future = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        out, _ = torch_module.eval()(x, x, x, attn_mask=future, need_weights=False)
    return out


def wrapper_output(x, d_in, d_out, num_heads, seed, dim=-1):
    """What MultiHeadAttentionWrapper(d_in, d_out, T, 0.0, num_heads) after torch.manual_seed(seed) returns: its
    heads are CausalAttention modules made in order, each creating W_query, W_key, W_value (the public
    creation order), their causal outputs side by side (concatenated along `dim`: another dim is a mistake)."""
    manual_seed(seed)
    heads = [SimpleNamespace(**{name: torch.nn.Linear(d_in, d_out, bias=False) for name in NAMES},
                             num_heads=1, head_dim=d_out, d_out=d_out) for _ in range(num_heads)]
    return torch.cat([attend(head, x, out_proj=False) for head in heads], dim=dim)
