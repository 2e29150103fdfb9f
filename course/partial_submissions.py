"""What the partial example submission (`examples/partial/`) holds.

The partial example is what a student who is halfway through might hand in:
some graded names right, some with a mistake that is common in practice, some
still the untouched stub. The grader's tests use it to check that each mistake
loses points and that the feedback names it.

Per section, either one value for every graded name (SOLVED or STUB) or a dict
giving one value per graded name; a section not listed is the untouched stub
(a student halfway through has not reached it yet), so a new section needs no
entry here:
    SOLVED        the reference code (taken from solutions/, not repeated here)
    STUB          the released stub (raise NotImplementedError())
    Mistake(...)  one replacement per BEGIN/END SOLUTION region of the reference
                  block, in order; None keeps the reference code of that region
                  (e.g. a right __init__ with a wrong forward).
The bodies below are deliberately wrong; they are not solutions.
"""
from __future__ import annotations

from dataclasses import dataclass

SOLVED = "solved"
STUB = "stub"


@dataclass(frozen=True)
class Mistake:
    note: str  # the mistake, as the feedback should name it
    regions: tuple[str | None, ...]


PARTIAL: dict[str, object] = {
    "01_scores": SOLVED,
    "02_softmax": {
        "normalize_by_sum": SOLVED,
        "softmax_naive": SOLVED,
        "softmax": Mistake(
            "softmax over dim 0 instead of the `dim` argument",
            (
                """
                top = x.max(dim=0, keepdim=True).values
                e = torch.exp(x - top)
                return e / e.sum(dim=0, keepdim=True)
                """,
            ),
        ),
        "context_vectors": SOLVED,
        "simple_self_attention": SOLVED,
    },
    "03_trainable_qkv": {
        "project_qkv": SOLVED,
        "scaled_dot_product_attention": Mistake(
            "no 1/sqrt(d_k) scaling of the scores",
            (
                """
                scores = queries @ keys.transpose(-2, -1)
                weights = torch.softmax(scores, dim=-1)
                return weights @ values, weights
                """,
            ),
        ),
        "SelfAttention_v1": Mistake(
            "no 1/sqrt(d_k) scaling of the scores",
            (
                None,
                """
                q = x @ self.W_query
                k = x @ self.W_key
                v = x @ self.W_value
                weights = torch.softmax(q @ k.T, dim=-1)
                return weights @ v
                """,
            ),
        ),
        "SelfAttention_v2": SOLVED,
        "copy_v2_weights_into_v1": STUB,
    },
    "04_causal_mask": {
        "causal_mask": SOLVED,
        "mask_and_renormalize": STUB,
        "causal_attention_weights": STUB,
        "CausalAttention": STUB,
    },
    "05_padding_mask": {
        "key_padding_mask": Mistake(
            "inverted padding mask (True at the real tokens)",
            (
                """
                lengths = torch.as_tensor(seq_lens)
                positions = torch.arange(max_len)
                return positions[None, :] < lengths[:, None]
                """,
            ),
        ),
        "mask_padded_scores": SOLVED,
        "padded_attention": SOLVED,
        "PaddedSelfAttention": STUB,
    },
    "06_multihead": STUB,
}


def plan_for(section_id: str):
    """The partial example's plan for a section: SOLVED, STUB, or {graded name: entry}."""
    return PARTIAL.get(section_id, STUB)
