"""The right split_heads and combine_heads for the checks of MultiHeadAttention: a student's forward may call
their own two helpers, and a mistake in either must cost that helper's checks only, not every check of the
module on top (Student.standing_in, worker/stand_in.py).

Both helpers only lay their argument out anew, as the contract says (head h holds the features
[h*hd, (h+1)*hd)), so their stand-ins hold no values at all: a call with an argument of the shape a right
forward passes on the check's input gets that argument rearranged (reshape and transpose, in the worker),
keeping its autograd graph and its device; any other call runs the student's own function. The same for the
visible and the hidden checks: nothing of `solutions` is needed, nor any answer."""
from autograder.checks.common import MeetingModule, stand_in_table


def right_heads(batch: int, num_tokens: int, d_out: int, num_heads: int) -> dict:
    """split_heads' and combine_heads' stand-ins for a MultiHeadAttention(…, d_out, …, num_heads) forward on a
    (batch, num_tokens, d_in) input: (B, T, d_out) -> (B, H, T, hd) and back."""
    head_dim = d_out // num_heads
    split = {"of": "x", "steps": [["reshape", [batch, num_tokens, num_heads, head_dim]], ["transpose", [1, 2]]]}
    combine = {"of": "x", "steps": [["transpose", [1, 2]], ["reshape", [batch, num_tokens, d_out]]]}
    return {"split_heads": stand_in_table(("x", "num_heads"), [({"x": {"shape": [batch, num_tokens, d_out]},
                                                                 "num_heads": num_heads}, split)]),
            "combine_heads": stand_in_table(("x",), [({"x": {"shape": [batch, num_heads, num_tokens, head_dim]}},
                                                      combine)])}


class MeetingRightHeads(MeetingModule):
    """The student's MultiHeadAttention (a StudentModule) whose forward meets the right split_heads and
    combine_heads on each call (right_heads, for the shape of the call's input)."""

    def __init__(self, module, d_out: int, num_heads: int):
        super().__init__(module)
        self.d_out, self.num_heads = d_out, num_heads

    def run(self, x, *args, **kwargs):
        shape = tuple(getattr(x, "shape", ()))
        tables = right_heads(shape[0], shape[1], self.d_out, self.num_heads) if len(shape) == 3 else {}
        with self.module.student.standing_in(tables):
            return self.module.run(x, *args, **kwargs)


def new_mha(student, d_in, d_out, context_length, dropout, *, num_heads, **kwargs):
    """The student's MultiHeadAttention, its forward meeting the right split_heads and combine_heads (an error it
    raises on a bare .view gets its hint: core/hints.py)."""
    module = student.new("MultiHeadAttention", d_in, d_out, context_length, dropout, num_heads=num_heads, **kwargs)
    return MeetingRightHeads(module, d_out, num_heads)
