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


def _same(given, expected) -> bool:
    """An argument the student's code passed against one a table row holds: tensors of one shape whose values
    are close (float32 arithmetic differs with the order of operations; on the meta device, where there are no
    values, the shape alone), anything else equal."""
    if isinstance(expected, dict) and set(expected) == {"shape"}:  # a layout's argument: any tensor of that shape
        sizes = list(expected["shape"])  # -1: any size there
        return (isinstance(given, torch.Tensor) and given.dim() == len(sizes)
                and all(want in (-1, got) for want, got in zip(sizes, given.shape)))
    if isinstance(expected, torch.Tensor):
        if not isinstance(given, torch.Tensor) or given.shape != expected.shape:
            return False
        if given.device.type == "meta":
            return True
        a, b = given.detach().cpu(), expected
        if a.dtype == torch.bool or b.dtype == torch.bool:
            return a.dtype == b.dtype and bool(torch.equal(a, b))
        a, b = a.double(), b.double()
        return bool(torch.equal(torch.isinf(a), torch.isinf(b))) and bool(
            torch.allclose(a.nan_to_num(posinf=0, neginf=0), b.nan_to_num(posinf=0, neginf=0), rtol=1e-4, atol=1e-5))
    return type(given) is type(expected) and given == expected


def _bound(params: list, defaults: dict, args: tuple, kwargs: dict):
    """The call's arguments by the contract's parameter names (`params`, in order), defaults filled in;
    None where they do not fit that signature."""
    if len(args) > len(params) or set(kwargs) - set(params) or set(kwargs) & set(params[:len(args)]):
        return None
    return {**defaults, **dict(zip(params, args)), **kwargs}


LAYOUT_STEPS = {"reshape": lambda x, dims: x.reshape(dims), "transpose": lambda x, dims: x.transpose(*dims)}


def _future(square):
    """(T, T) bool on `square`'s device for its last dim T, True above the diagonal: the keys after each query."""
    size = square.shape[-1]
    return torch.triu(torch.ones(size, size, dtype=torch.bool, device=square.device), diagonal=1)


# Steps that compute from the argument, each one small operation: a stand-in's answer is their composition, named
# in the trusted side's table (checks/section_04_causal_mask.right_weights), so that no function here is a graded
# name's answer written out (the wheel ships this module: tests/test_wheel_holds_no_answer.py)
VALUE_STEPS = {
    "future_hidden": lambda x: x.masked_fill(_future(x), float("-inf")),
    "log": torch.log,  # then the softmax of the logs is each row divided by its sum (weights renormalized)
    "softmax": lambda x: torch.softmax(x, dim=-1),
    "square_of_true": lambda size: torch.ones(size, size, dtype=torch.bool),  # from an int: a mask to cut out
    "on_and_below_diagonal": lambda x: torch.tril(x),
    "negated": lambda x: torch.logical_not(x),
}
# steps that also take the call's other arguments, by parameter name
ARGUMENT_STEPS = {"over_sqrt": lambda x, size: x / size ** 0.5,
                  "near_diagonal": lambda x, width: torch.triu(x, 1 - width)}  # at most width - 1 below it


def rearranged(tensor, steps, bound=None):
    """`tensor` put through `steps`, each [op, dims]: op one of LAYOUT_STEPS with ints for dims, one of VALUE_STEPS
    with no dims, or one of ARGUMENT_STEPS with the parameter names of the call's other arguments it takes. A collaborator whose right
    answer is its argument laid out anew (split_heads, combine_heads) or computed from its arguments
    (causal_attention_weights, mask_and_renormalize) needs no values in its table, and the answer keeps the
    argument's autograd graph and device."""
    bound = bound or {}
    for op, dims in steps:
        if op in LAYOUT_STEPS and all(type(d) is int for d in dims):
            tensor = LAYOUT_STEPS[op](tensor, list(dims))
        elif op in VALUE_STEPS and not dims:
            tensor = VALUE_STEPS[op](tensor)
        elif op in ARGUMENT_STEPS and all(type(d) is str and d in bound for d in dims):
            tensor = ARGUMENT_STEPS[op](tensor, *(bound[d] for d in dims))
        else:
            raise ValueError(f"a stand-in cannot rearrange by {op!r} {dims!r}")
    return tensor


def answered_from(name: str, table: dict, own, used: set | None = None):
    """A graded function's stand-in while another one is called. table: "params" (the contract's parameter
    names, in order), "defaults", and "rows", each [arguments by name, the right answer] (from the trusted
    side). A call whose arguments match a row gets its answer, on the `device` it names or else its first
    tensor's (the CPU where there is none), a tuple of tensors as a tuple; a row's argument given as {"shape"}
    matches any tensor of that shape (-1: any size there), and an answer given as {"of", "steps"} is that
    argument rearranged or computed (`rearranged`). Any other call goes to the student's own function `own`.
    used: where `name` is added when a row answered (the call's reply says which stand-ins it met)."""

    def answer(*args, **kwargs):
        bound = _bound(table["params"], table["defaults"], args, kwargs)
        for key, value in table["rows"] if bound is not None else ():
            if all(param in bound and _same(bound[param], expected) for param, expected in key.items()):
                if used is not None:
                    used.add(name)
                tensors = [a for a in bound.values() if isinstance(a, torch.Tensor)]
                device = bound.get("device") or (tensors[0].device if tensors else "cpu")
                if isinstance(value, dict):  # {"of": a parameter, "steps": [...]}: that argument rearranged
                    return rearranged(bound[value["of"]], value["steps"], bound)
                if isinstance(value, tuple):  # a pair such as padded_attention's (out, weights)
                    return tuple(part.to(device, copy=True) for part in value)
                return value.to(device, copy=True)
        if own is None:
            raise NameError(f"name '{name}' is not defined")
        return own(*args, **kwargs)

    return answer


@contextlib.contextmanager
def standing_in(namespace: dict, tables: dict, used: set | None = None):
    """Within: each graded name of `tables` (name -> table, see answered_from) answered from its table in
    `namespace` (the student's, where their functions look their collaborators up); afterwards the
    student's own definitions (or their absence) as they were. used: the names whose table answered a call."""
    saved = {name: namespace.get(name, MISSING) for name in tables}
    try:
        for name, table in tables.items():
            namespace[name] = answered_from(name, table, None if saved[name] is MISSING else saved[name], used)
        yield
    finally:
        for name, own in saved.items():
            if own is MISSING:
                namespace.pop(name, None)
            else:
                namespace[name] = own
