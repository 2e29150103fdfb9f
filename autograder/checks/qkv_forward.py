"""What section 03's checks measure attention against: torch's own F.scaled_dot_product_attention (which the
section forbids the student to call), with the documented seeded weights or the student's own, and the same
function with one argument changed for the common mistakes. Nothing here is the section's attention written out.
Shipped whole with the visible checks: it never imports `solutions`."""
import torch
import torch.nn.functional as F


def seeded_weights(draw, seed=123):
    """W_query, W_key, W_value drawn one after the other, as after torch.manual_seed(seed)."""
    generator = torch.Generator().manual_seed(seed)
    return [draw(3, 2, generator=generator) for _ in range(3)]


def attend(queries, keys, values, scale, dim=-1):
    """(context, weights) of softmax(queries keys^T / scale) along `dim`, as torch's scaled_dot_product_attention
    computes them (the weights: with the identity as the values; along the queries, dim=-2: the same function
    with queries and keys swapped, transposed back)."""
    single = queries.dim() == 1
    q = queries.unsqueeze(0) if single else queries
    if dim in (-2, q.dim() - 2):
        q, k = keys, q
    else:
        k = keys
    identity = torch.eye(k.shape[-2]).expand(*k.shape[:-2], -1, -1)
    weights = F.scaled_dot_product_attention(q, k, identity, scale=1 / scale)
    if k is not keys:
        weights = weights.transpose(-2, -1)
    weights = weights[0] if single else weights
    return weights @ values, weights


def formula_output(projections, x: torch.Tensor) -> torch.Tensor:
    """torch's own attention on `x` with `projections` (see seeded_projections): the documented formula's output."""
    with torch.no_grad():
        queries, keys, values = ((x @ w if isinstance(w, torch.Tensor) else w(x)) for w in
                                 (projections.W_query, projections.W_key, projections.W_value))
        return torch_attention(queries, keys, values)[0]


def torch_attention(queries, keys, values):
    """(context, weights) as torch's own F.scaled_dot_product_attention computes them, in float64
    (the weights are what it gives with the identity as the values); queries may be one query (d,)."""
    single = queries.dim() == 1
    q, k, v = (queries.unsqueeze(0) if single else queries).double(), keys.double(), values.double()
    identity = torch.eye(k.shape[-2], dtype=torch.float64).expand(*k.shape[:-2], -1, -1)
    context = F.scaled_dot_product_attention(q, k, v).float()
    weights = F.scaled_dot_product_attention(q, k, identity).float()
    return (context[0], weights[0]) if single else (context, weights)
