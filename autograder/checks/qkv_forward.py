"""Section 03's attention written out by its checks: the documented formula with seeded weights, and torch's
own attention as the measure of a student's. Shipped whole with the visible checks: it never imports `solutions`."""
import math

import torch
import torch.nn.functional as F


def seeded_weights(draw, seed=123):
    """W_query, W_key, W_value drawn one after the other, as after torch.manual_seed(seed)."""
    generator = torch.Generator().manual_seed(seed)
    return [draw(3, 2, generator=generator) for _ in range(3)]


def attend(queries, keys, values, scale, dim=-1):
    """(context, weights) of softmax(queries keys^T / scale) along `dim`, computed in the grader."""
    weights = torch.softmax(queries @ keys.transpose(-2, -1) / scale, dim=dim)
    return weights @ values, weights


def formula_output(projections, x: torch.Tensor) -> torch.Tensor:
    """The documented formula's output on `x` with `projections` (see seeded_projections)."""
    with torch.no_grad():
        queries, keys, values = ((x @ w if isinstance(w, torch.Tensor) else w(x)) for w in
                                 (projections.W_query, projections.W_key, projections.W_value))
    return attend(queries, keys, values, math.sqrt(keys.shape[-1]))[0]


def torch_attention(queries, keys, values):
    """(context, weights) as torch's own F.scaled_dot_product_attention computes them, in float64
    (the weights are what it gives with the identity as the values); queries may be one query (d,)."""
    single = queries.dim() == 1
    q, k, v = (queries.unsqueeze(0) if single else queries).double(), keys.double(), values.double()
    identity = torch.eye(k.shape[-2], dtype=torch.float64).expand(*k.shape[:-2], -1, -1)
    context = F.scaled_dot_product_attention(q, k, v).float()
    weights = F.scaled_dot_product_attention(q, k, identity).float()
    return (context[0], weights[0]) if single else (context, weights)
