"""How many rows a module's named sublayers were handed during one call: the evidence that a cached
forward projects each new token once (09's KV cache), whatever the wall time says.

A row is one vector of the layer's input: a (b, T, d_in) input is b * T rows. Only numbers go back,
one per name; what they mean is the checks' business. A name the module lacks, or that is no
nn.Module, is left out (the layer was never called as a module: nothing was seen).
"""
import contextlib

import torch

MAX_NAMES = 8  # sublayers counted per call: a request names the few the contract has


@contextlib.contextmanager
def counting_rows(module, names):
    """Within: rows[name] grows by the rows of every input the sublayer `name` of `module` receives
    (its first positional argument); the hooks are removed on leaving, whatever the call did."""
    rows, hooks = {}, []
    if isinstance(module, torch.nn.Module) and names:
        layers = dict(module.named_modules())
        for name in [str(name) for name in names][:MAX_NAMES]:
            layer = layers.get(name)
            if isinstance(layer, torch.nn.Module) and layer is not module:
                rows[name] = 0
                hooks.append(layer.register_forward_pre_hook(_counter(rows, name)))
    try:
        yield rows
    finally:
        for hook in hooks:
            hook.remove()


def _counter(rows: dict, name: str):
    def count(_layer, args):
        first = args[0] if args else None
        if isinstance(first, torch.Tensor) and first.dim() >= 1 and first.shape[-1]:
            rows[name] += first.numel() // first.shape[-1]
    return count
