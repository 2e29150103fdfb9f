"""Shared tools of the hidden checks: inputs, reference modules, recurring checks.

Every random input is made on the CPU from a fixed hidden seed, so a regrade
sees the same inputs and every device grades the same numbers.
"""
from __future__ import annotations

import torch

from autograder.harness import CheckFailed, expect, expect_close

WORKED_INPUTS = torch.tensor(
    [[0.43, 0.15, 0.89],  # Your
     [0.55, 0.87, 0.66],  # journey
     [0.57, 0.85, 0.64],  # starts
     [0.22, 0.58, 0.33],  # with
     [0.77, 0.25, 0.10],  # one
     [0.05, 0.80, 0.55]])  # step
WORKED_BATCH = torch.stack((WORKED_INPUTS, WORKED_INPUTS))  # (2, 6, 3)
TOKENS = ["Your", "journey", "starts", "with", "one", "step"]


def randn(seed: int, *shape, scale: float = 1.0) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=generator) * scale


def rand(seed: int, *shape) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.rand(*shape, generator=generator)


def seeded(cls, *args, seed: int, **kwargs):
    """The reference module built the way the student's is: torch.manual_seed(seed) first."""
    torch.manual_seed(seed)
    module = cls(*args, **kwargs)
    module.eval()
    return module


def expect_unchanged(reply, originals, name: str) -> None:
    """The call must not have modified its tensor arguments (reply made with return_args=True)."""
    for index, (before, after) in enumerate(zip(originals, reply.args_after)):
        if isinstance(before, torch.Tensor) and isinstance(after, torch.Tensor):
            same = before.shape == after.shape and torch.equal(before.nan_to_num(), after.nan_to_num())
            expect(same, f"{name} modified its argument #{index + 1} in place; "
                         "use out-of-place ops (masked_fill, not masked_fill_) on tensors you were given")


def expect_no_loop(counts: dict, name: str, over: str) -> None:
    """Op counts at two sizes must be equal: a Python loop dispatches more ops for a larger size."""
    (small, n_small), (large, n_large) = sorted(counts.items())
    expect(n_small == n_large,
           f"{name} dispatched {n_small} tensor ops for {small} {over} but {n_large} for {large}: "
           f"it looks like a Python loop over {over}; compute them all with one batched operation")


def expect_grads(reply, reference: torch.nn.Module, name: str) -> None:
    """Every parameter gets a gradient, equal to the reference's for the same upstream gradient."""
    expect(reply.graph, f"{name}: the output has no autograd graph (no requires_grad): "
                        "avoid .detach(), torch.no_grad() and .data in forward")
    ref_grads = {n: p.grad for n, p in reference.named_parameters()}
    for param_name, expected in ref_grads.items():
        got = reply.param_grads.get(param_name)
        if got is None:
            raise CheckFailed(f"{name}: parameter {param_name} received no gradient "
                              "(is it used in forward? was it created as a Parameter / Linear?)")
        expect_close(got, expected, f"{name}: gradient of {param_name}")


def reference_grads(module: torch.nn.Module, grad_output: torch.Tensor, *inputs, **kwargs) -> torch.Tensor:
    module.zero_grad(set_to_none=True)
    out = module(*inputs, **kwargs)
    out = out[0] if isinstance(out, tuple) else out
    (out * grad_output).sum().backward()
    return out


def expect_same_params(module, reference: torch.nn.Module, name: str, order: str) -> None:
    """Same parameter names and shapes as the reference, and the same seeded values.

    Equal values under the same seed show the parameters were created in the
    documented order (each creation draws from the random stream in turn).
    """
    got = module.params()
    expected = dict(reference.named_parameters())
    expect(sorted(got) == sorted(expected),
           f"{name} should have the parameters {sorted(expected)}; found {sorted(got)}")
    for param_name, value in expected.items():
        expect(tuple(got[param_name].shape) == tuple(value.shape),
               f"{name}.{param_name} should have shape {tuple(value.shape)}, got {tuple(got[param_name].shape)}")
    for param_name, value in expected.items():
        expect(torch.allclose(got[param_name], value.detach()),
               f"{name}.{param_name} differs from the seeded reference: create the parameters in "
               f"exactly this order: {order}")
