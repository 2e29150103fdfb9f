"""Modules built from data the trusted side sends: the collaborators a check hands a student's function
instead of the student's own classes.

A check of copy_v2_weights_into_v1 needs a v1 and a v2 to copy between; built from the student's own
classes, a mistake in SelfAttention_v2 would cost the copy's check too. A stand-in holds the documented
parameters (their names, kinds and values, all public) and nothing of any answer: its forward is no graded
computation, only a graph through every parameter it holds when called, for a check of which of them
still learn.
"""
import torch


class StandIn(torch.nn.Module):
    """parameters: [name, tensor] pairs, each held as an nn.Parameter; linears: [name, weight, bias or None]
    triples, each held as an nn.Linear with those values (weight (out, in), as nn.Linear stores it); in the
    order given."""

    def __init__(self, parameters, linears):
        super().__init__()
        self.held = []
        for name, value in parameters:
            setattr(self, self._named(name), torch.nn.Parameter(value.detach().clone()))
        for name, weight, bias in linears:
            layer = torch.nn.Linear(weight.shape[1], weight.shape[0], bias=bias is not None,
                                    device=weight.device, dtype=weight.dtype)
            with torch.no_grad():
                layer.weight.copy_(weight)
                if bias is not None:
                    layer.bias.copy_(bias)
            setattr(self, self._named(name), layer)

    def _named(self, name) -> str:
        if not (isinstance(name, str) and name.isidentifier() and not hasattr(self, name)):
            raise ValueError(f"a stand-in cannot hold {name!r}")
        self.held.append(name)
        return name

    def forward(self, x):
        """x @ P for each Parameter, layer(x) for each Linear, added up: whatever each name holds now
        (a function being checked may have replaced it)."""
        out = None
        for name in self.held:
            part = getattr(self, name)
            term = part(x) if isinstance(part, torch.nn.Module) else x @ part
            out = term if out is None else out + term
        return out
