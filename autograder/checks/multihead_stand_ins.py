"""The right split_heads and combine_heads for the checks of MultiHeadAttention: a student's forward may call
their own two helpers, and a mistake in either must cost that helper's checks only, not every check of the
module on top (Student.standing_in, worker/stand_in.py).

The answers are those of a right forward with the module's own weights on the check's input: the three
projections split into heads, and the context of every head combined again. Made here from the contract's
layout in the visible checks (shipped to students: nothing here imports `solutions`), from the reference's
functions in the hidden ones. The answers carry no autograd graph: a call that asks for gradients runs the
student's own helpers."""
from functools import partial

import torch

from autograder.checks.common import stand_in_table
from autograder.checks.multihead_forward import NAMES, attend, documented_split, own_layers


def documented_combine(x):
    """(B, H, T, hd) -> (B, T, H * hd): the inverse of documented_split."""
    b, h, t, hd = x.shape
    return x.transpose(1, 2).reshape(b, t, h * hd)


def right_heads(own, x, padding=None, dropout=None, split=documented_split, combine=documented_combine) -> dict:
    """split_heads' and combine_heads' answers to the calls a right MultiHeadAttention with the weights `own`
    (own_layers) makes on x (B, T, d_in) with the key_padding_mask `padding`; dropout: a function applied to
    the attention weights in train mode (drawing from the generator as the module's own dropout does)."""
    with torch.no_grad():
        projected = [getattr(own, name)(x) for name in NAMES]
        splits = [({"x": y, "num_heads": own.num_heads}, split(y, own.num_heads)) for y in projected]
        combined = attend(own, x, out_proj=False, padding=None if padding is None else (padding, "keys"),
                          weights_dropout=dropout)
        heads = split(combined, own.num_heads)
    return {"split_heads": stand_in_table(("x", "num_heads"), splits),
            "combine_heads": stand_in_table(("x",), [({"x": heads}, combine(heads))])}


class MeetingRightHeads:
    """The student's MultiHeadAttention (a StudentModule) whose forward meets the right split_heads and
    combine_heads on each call (right_heads, with its own weights, read once). Where its parameters lack the
    documented names or shapes (the parameter checks' business), or a call asks for gradients, its calls run
    the student's own helpers."""

    def __init__(self, module, d_in: int, d_out: int, num_heads: int, dropout: float, **functions):
        self.module, self.class_name, self.handle = module, module.class_name, module.handle
        self.shape, self.dropout, self.functions, self.weights = (d_in, d_out, num_heads), dropout, functions, None

    @property
    def arg(self):
        return self.module.arg

    def __call__(self, *args, mode="eval", seed=None, **kwargs):
        return self.run(*args, mode=mode, seed=seed, **kwargs).value

    def params(self) -> dict:
        return self.module.params()

    def run(self, x, *args, mode="eval", seed=None, **kwargs):
        tables = {} if kwargs.get("backward") is not None else self.tables(x, kwargs.get("key_padding_mask"), mode, seed)
        with self.module.student.standing_in(tables):
            return self.module.run(x, *args, mode=mode, seed=seed, **kwargs)

    def tables(self, x, padding, mode: str, seed) -> dict:
        """The answers for one call; in train mode, those of the dropout the module's own draws after
        torch.manual_seed(seed) on the grading device (without a seed, split_heads' answers alone)."""
        if self.weights is None:
            self.weights = self.params()
        if own_layers(self.weights, *self.shape) is None or not isinstance(x, torch.Tensor):
            return {}
        if mode != "train" or self.dropout == 0:
            return right_heads(own_layers(self.weights, *self.shape), x, padding, **self.functions)
        if seed is None:  # its dropout draws what no table can know: its own combine_heads answers
            return {"split_heads": right_heads(own_layers(self.weights, *self.shape), x, **self.functions)["split_heads"]}
        device = "cpu" if self.module.student.device == "meta" else self.module.student.device
        torch.manual_seed(seed)
        tables = right_heads(own_layers(self.weights, *self.shape, device=device), x.to(device),
                             None if padding is None else padding.to(device),
                             partial(torch.nn.functional.dropout, p=self.dropout), **self.functions)
        return {name: {**table, "rows": [[{k: v.cpu() if isinstance(v, torch.Tensor) else v for k, v in key.items()},
                                          value.cpu()] for key, value in table["rows"]]} for name, table in tables.items()}
