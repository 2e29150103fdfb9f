"""The right mask_padded_scores and padded_attention for the checks of PaddedSelfAttention: a student's forward
may call their own two helpers, and a mistake in either must cost that helper's checks only, not every check
of the module on top (Student.standing_in, worker/stand_in.py).

The answers are those a right forward with the module's own weights meets on the check's inputs: the scores
(scaled or not yet, the attn_mask applied first or not) with their padded key columns at -inf, and the
(out, weights) of the projected inputs. Made here from the contract in the visible checks (shipped to
students: nothing here imports `solutions`), from the reference's functions in the hidden ones. The answers
carry no autograd graph: a call that asks for gradients runs the student's own helpers."""
import math

import torch

from autograder.checks.common import MeetingModule, stand_in_table

INF = float("-inf")
LAYERS = ("W_q", "W_k", "W_v")
SCORES_PARAMS = ("scores", "key_padding_mask")  # mask_padded_scores', in the contract's order


def documented_masked(scores, hidden_columns):
    """mask_padded_scores by its contract, with the key padding mask already laid out as (B, 1, T): the padded
    key columns at -inf."""
    return scores.masked_fill(hidden_columns, INF)


def documented_attention(queries, keys, values, key_padding_mask):
    """padded_attention by its contract, as torch's own scaled_dot_product_attention computes it (the weights:
    with the identity as the values): softmax(q k^T / sqrt(d), padded keys hidden), and that @ values."""
    identity = torch.eye(keys.shape[-2]).expand(*keys.shape[:-1], -1)
    added = torch.zeros(key_padding_mask.shape).masked_fill(key_padding_mask, INF)[:, None, :]
    weights = torch.nn.functional.scaled_dot_product_attention(queries, keys, identity, attn_mask=added)
    return weights @ values, weights


def right_helpers(weights: dict, q, k, v, padding, attn_mask=None, masked=None,
                  attention=documented_attention) -> dict:
    """The two helpers' answers to the calls a right PaddedSelfAttention with `weights` (W_q, W_k, W_v by
    name) makes on (q, k, v) with the key_padding_mask `padding` (none without one) and `attn_mask`."""
    masked = masked or (lambda scores, padding: documented_masked(scores, padding[:, None, :]))
    with torch.no_grad():
        queries, keys, values = (torch.nn.functional.linear(x, weights[name]) for x, name in zip((q, k, v), LAYERS))
        scores = queries @ keys.transpose(-2, -1)
        inputs = [scores / math.sqrt(queries.shape[-1]), scores]
        if attn_mask is not None:  # applied before the padding: the scores the helper meets have it already
            inputs += [s.masked_fill(attn_mask, INF) for s in inputs]
        masked_rows = [({"scores": s, "key_padding_mask": padding}, masked(s, padding)) for s in inputs]
        pair = tuple(attention(queries, keys, values, padding))
    arguments = {"queries": queries, "keys": keys, "values": values, "key_padding_mask": padding}
    return {"mask_padded_scores": stand_in_table(SCORES_PARAMS, masked_rows),
            "padded_attention": stand_in_table(tuple(arguments), [(arguments, pair)] if attn_mask is None else [])}


class MeetingRightHelpers(MeetingModule):
    """The student's PaddedSelfAttention (a StudentModule) whose forward meets the right mask_padded_scores and
    padded_attention on each call with a key_padding_mask (right_helpers, with its own weights, read once).
    Where its parameters lack the documented names or shapes (the parameter check's business), or a call asks
    for gradients, its calls run the student's own helpers. functions: the hidden checks' masked and attention."""

    def __init__(self, module, dim: int, **functions):
        super().__init__(module)
        self.dim, self.functions, self.weights = dim, functions, None

    def run(self, *args, **kwargs):
        tables = {} if kwargs.get("backward") is not None else self.tables(args, kwargs)
        with self.module.student.standing_in(tables):
            return self.module.run(*args, **kwargs)

    def tables(self, args: tuple, kwargs: dict) -> dict:
        if self.weights is None:
            params = self.params()
            params = params if isinstance(params, dict) else {}
            self.weights = {name: params.get(f"{name}.weight") for name in LAYERS}
        padding, attn_mask = kwargs.get("key_padding_mask"), kwargs.get("attn_mask")
        if not (len(args) == 3 and isinstance(padding, torch.Tensor)
                and all(isinstance(w, torch.Tensor) and tuple(w.shape) == (self.dim, self.dim)
                        for w in self.weights.values())):
            return {}
        return right_helpers(self.weights, *args, padding, attn_mask, **self.functions)


def right_masked_scores(queries, keys, mask, masked=None) -> dict:
    """mask_padded_scores' answers for the scores padded_attention(queries, keys, ...) passes it (scaled before
    the masking, or after it), made here from its contract (or by `masked`): what the checks of padded_attention
    hand it in place of the student's own (Student.standing_in), so a wrong mask_padded_scores costs its own
    checks only."""
    scores = queries @ keys.transpose(-2, -1)
    masked = masked or (lambda scores, padding: documented_masked(scores, padding[:, None, :]))
    rows = [({"scores": s, "key_padding_mask": mask}, masked(s, mask)) for s in (scores / math.sqrt(queries.shape[-1]), scores)]
    return {"mask_padded_scores": stand_in_table(SCORES_PARAMS, rows)}


def new_padded(student, dim, *, seed, **functions):
    """The student's PaddedSelfAttention(dim), its forward meeting the right mask_padded_scores and
    padded_attention (functions: the hidden checks' masked and attention)."""
    return MeetingRightHelpers(student.new("PaddedSelfAttention", dim, seed=seed), dim, **functions)
