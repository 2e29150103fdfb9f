"""Modules built from data the trusted side sends: the collaborators a check hands a student's function
instead of the student's own classes.

A check of copy_v2_weights_into_v1 needs a v1 and a v2 to copy between; built from the student's own
classes, a mistake in SelfAttention_v2 would cost the copy's check too. A stand-in holds the documented
parameters (their names, kinds and values, all public) and nothing of any answer: its forward is no graded
computation, only a graph through every parameter it holds when called, for a check of which of them
still learn.

In the same way a graded function that the function being checked calls (causal_mask, inside the student's
mask_and_renormalize) answers from a table the trusted side sends for that call (`standing_in`): the
function checked then meets a right collaborator, and a wrong causal_mask costs causal_mask's checks only.
"""
import contextlib

import torch

MISSING = object()


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


def answered_from(table: dict, own):
    """A graded function's stand-in while another one is called: its answers for the integer arguments in
    `table` ((ints) -> tensor, from the trusted side), each on the `device` it is asked for (keyword or the
    first argument after the integers; the CPU where none is named, as torch's default). Arguments the table
    does not hold go to the student's own function `own` (None: the NameError Python would raise)."""

    def answer(*args, **kwargs):
        count = 0
        while count < len(args) and type(args[count]) is int:
            count += 1
        key = tuple(args[:count])
        if key not in table or len(args) > count + 1 or set(kwargs) - {"device"}:
            if own is None:
                raise NameError("a graded function is not defined")
            return own(*args, **kwargs)
        device = kwargs.get("device", args[count] if count < len(args) else None)
        return table[key].to(device) if device is not None else table[key].clone()

    return answer


@contextlib.contextmanager
def standing_in(namespace: dict, tables: dict):
    """Within: each graded name of `tables` (name -> {(ints): tensor}) answered from its table in
    `namespace` (the student's, whose functions look their collaborators up there); afterwards the
    student's own definitions (or their absence) as they were."""
    saved = {name: namespace.get(name, MISSING) for name in tables}
    try:
        for name, table in tables.items():
            namespace[name] = answered_from(table, None if saved[name] is MISSING else saved[name])
        yield
    finally:
        for name, own in saved.items():
            if own is MISSING:
                namespace.pop(name, None)
            else:
                namespace[name] = own
