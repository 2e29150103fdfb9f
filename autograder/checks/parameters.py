"""The student's parameters: their names and shapes, and their creation in the documented order.

A seeded module's parameters equal the documented ones only when created in the documented order (each creation
draws from the random stream in turn): what the checks compare, and where they differ, the evidence a hint needs
(created otherwise, a seed inside __init__, an out_proj without its bias). Shipped with the visible checks.
"""
from __future__ import annotations

import torch

from autograder.core.harness import CheckFailed, expect
from autograder.i18n import N_, _, _f


def expect_same_params(module, reference, name: str, order: str) -> None:
    """Same parameter names and shapes as the reference, and the same seeded values.

    reference: a seeded module, or a dict name -> tensor (e.g. layers made with torch ops
    after torch.manual_seed, as the notebook says). Equal values under the same seed show
    the parameters were created in the documented order (each creation draws from the
    random stream in turn).
    """
    got = module.params()
    got = got if isinstance(got, dict) else {}
    expected = dict(reference) if isinstance(reference, dict) else dict(reference.named_parameters())
    expect(sorted(got) == sorted(expected),
           _f("{name} should have the parameters {expected}; found {found}", name=name, expected=sorted(expected),
              found=sorted(got)))
    for param_name, value in expected.items():
        expect_param_shape(got[param_name], tuple(value.shape), name, param_name)
    differ = [p for p, value in expected.items() if not torch.allclose(got[p], value.detach())]
    if differ and seeds_itself(module, got):
        raise CheckFailed(_f("{name} gets the same parameters whatever seed is set before it is built: a "
                             "torch.manual_seed inside __init__? Leave seeding to the caller (the notebook seeds, "
                             "then builds)", name=name), SEED_INSIDE)
    for param_name, value in expected.items():
        # i18n: {order} lists the parameters as code, sometimes with a few words (translated by the caller)
        expect(torch.allclose(got[param_name], value.detach()),
               _f("{name}.{parameter} differs from the seeded weights: create the parameters in "
                  "exactly this order: {order}", name=name, parameter=param_name, order=_(order)))


def created_otherwise(got, expected: dict) -> bool:
    """Whether the student's parameters `got` (name -> tensor) have the names and shapes of the seeded ones of
    `expected` (created as documented) but other values: the evidence that they were created otherwise (in another
    order, or drawn another way), which a hint about their creation needs; an output that differs while they are
    the seeded ones says nothing of it."""
    if not isinstance(got, dict) or sorted(got) != sorted(expected):
        return False
    if not all(isinstance(value, torch.Tensor) and value.shape == expected[name].shape for name, value in got.items()):
        return False
    return not all(torch.allclose(value.detach().cpu(), expected[name].detach().cpu()) for name, value in got.items())


def seeds_itself(module, got: dict) -> bool:
    """Whether `module`, built again under another seed, gets the very same parameters `got` (the evidence of a
    seed set inside __init__); False where it cannot be built again (a stand-in) or that build fails."""
    varied = any(isinstance(t, torch.Tensor) and t.numel() > 1 and bool((t != t.flatten()[0]).any())
                 for t in got.values())  # constant parameters (zeros, ones) would be alike under any seed
    if getattr(module, "built", None) is None or not varied:
        return False
    args, kwargs, seed = module.built
    try:
        again = module.student.new(module.class_name, *args, seed=(seed or 0) + 1, **kwargs).params()
    except Exception:  # noqa: BLE001  (the checks of the build itself judge a build that fails)
        return False
    return isinstance(again, dict) and sorted(again) == sorted(got) and all(
        isinstance(again[p], torch.Tensor) and again[p].shape == got[p].shape and torch.equal(again[p], got[p])
        for p in got)


SEED_INSIDE = N_("a torch.manual_seed inside __init__ (the parameters do not follow the caller's seed)")
# the documented output missed by a forward that is right with the module's own weights: the weights differ
OTHER_ORDER = N_("the parameters created in another order than the documented one (your forward is right with "
                 "your own weights)")
# the same miss where out_proj has no bias (Llama's layers have none): the own-weights forward counts it as zero,
# so the order is not what differs
NO_OUT_PROJ_BIAS = N_("out_proj made without its bias: notebook 06's out_proj is nn.Linear(d_out, d_out), "
                      "with a bias whatever qkv_bias says")


def weights_differ(params) -> str:
    """The mistake to name where a forward right with the module's own weights misses the documented output:
    OTHER_ORDER, or NO_OUT_PROJ_BIAS where `params` (name -> tensor) hold no out_proj.bias."""
    has_bias = isinstance(params, dict) and isinstance(params.get("out_proj.bias"), torch.Tensor)
    return OTHER_ORDER if has_bias else NO_OUT_PROJ_BIAS
# a Linear layer made as nn.Linear(d_out, d_in): its weight has the shape of the other way round
LINEAR_SWAPPED = N_("nn.Linear(d_out, d_in): in and out swapped")


def expect_param_shape(param, shape: tuple, name: str, param_name: str) -> None:
    """The parameter `param_name` of `name` has `shape`; where a Linear's weight has the transposed shape,
    the message says why (the cause of every failure of the forward that follows: said first)."""
    got = tuple(param.shape) if isinstance(param, torch.Tensor) else ()
    if got == shape:
        return
    message = _f("{name}.{parameter} should have shape {expected}, got {got}", name=name, parameter=param_name,
                 expected=shape, got=got)
    swapped = param_name.endswith(".weight") and len(shape) == 2 and got == shape[::-1]
    if swapped:
        # i18n: a shape that is wrong, then why (Chinese ends the first with 。)
        message = _f("{message}: nn.Linear(in_features, out_features) stores its weight as (out_features, "
                     "in_features), so this layer was made as nn.Linear({d_out}, {d_in}) where nn.Linear({d_in}, "
                     "{d_out}) belongs", message=message, d_in=shape[1], d_out=shape[0])
    raise CheckFailed(message, LINEAR_SWAPPED if swapped else "")


def expect_layer_shapes(module, name: str, d_in: int, d_out: int, layers=("W_query", "W_key", "W_value")) -> None:
    """Before a forward is run: each of `layers` of the student's `module` has the weight of
    nn.Linear(d_in, d_out), shape (d_out, d_in). A layer missing is the parameter checks' business."""
    params = module.params()
    for layer in layers:
        weight = params.get(f"{layer}.weight") if isinstance(params, dict) else None
        if isinstance(weight, torch.Tensor):
            expect_param_shape(weight, (d_out, d_in), name, f"{layer}.weight")
