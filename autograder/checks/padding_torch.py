"""PyTorch's own attention layer holding a student's weights: what the visible checks of section 05 compare
PaddedSelfAttention with (the layer the section forbids the student to call, run here with the student's own
projections), and the documented creation order of its four projections. Nothing here imports `solutions`."""
from types import SimpleNamespace

import torch

from autograder.checks.common import manual_seed

NAMES = ("W_q", "W_k", "W_v", "W_out")  # PaddedSelfAttention's projections, in their documented creation order


def documented_layers(dim, seed):
    """W_q, W_k, W_v, W_out = nn.Linear(dim, dim, bias=False), created in this order after torch.manual_seed(seed)."""
    manual_seed(seed)
    return SimpleNamespace(**{name: torch.nn.Linear(dim, dim, bias=False) for name in NAMES})


def own_layers(module, dim, seed):
    """The four projections holding the student's own weights, where its parameters have the documented
    names and shapes (else the documented seeded ones): an output check then grades forward alone."""
    layers = documented_layers(dim, seed)
    params = module.params()
    params = params if isinstance(params, dict) else {}
    with torch.no_grad():
        for name in NAMES:
            value = params.get(f"{name}.weight")
            if isinstance(value, torch.Tensor) and tuple(value.shape) == (dim, dim):
                getattr(layers, name).weight.copy_(value)
    return layers


def multihead_attention(layers, q, k, v, **masks):
    """torch's nn.MultiheadAttention(D, 1, bias=False) holding the weights of `layers`, on (q, k, v)."""
    dim = q.shape[-1]
    reference = torch.nn.MultiheadAttention(dim, 1, bias=False, batch_first=True).eval()
    with torch.no_grad():
        reference.in_proj_weight.copy_(torch.cat([layers.W_q.weight, layers.W_k.weight, layers.W_v.weight]))
        reference.out_proj.weight.copy_(layers.W_out.weight)
        return reference(q, k, v, **masks)
