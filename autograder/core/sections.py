"""The six graded sections: what each one asks for and what it forbids.

This registry is the one place that turns CURRICULUM.md's contract into data:
the course builder, the extractor, the worker's forbidden-API watch and the
hidden checks all read it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

SOFTMAX_APIS = (
    "torch.softmax",
    "torch.nn.functional.softmax",
    "torch.nn.Softmax",
    "Tensor.softmax",
    "torch.special.softmax",
    "torch.log_softmax",
    "torch.nn.functional.log_softmax",
    "torch.nn.LogSoftmax",
    "Tensor.log_softmax",
    "torch.special.log_softmax",
)
ATTENTION_APIS = (
    "torch.nn.functional.scaled_dot_product_attention",
    "torch.nn.MultiheadAttention",
)


@dataclass(frozen=True)
class Section:
    id: str  # "02_softmax": folder, notebook stem and nbgrader assignment name
    title: str
    solution_module: str  # the reference module under solutions/
    names: tuple[str, ...]  # every graded function and class, in notebook order
    forbidden: tuple[str, ...] = ()  # APIs the graded names below may not call
    forbidden_in: tuple[str, ...] = ()  # which graded names the ban applies to
    provided: tuple[str, ...] = field(default=())  # "module:name" given in locked cells
    uses_meta: bool = False  # some checks run code on the meta device (a batch warms it up front)

    @property
    def notebook(self) -> str:
        return f"{self.id}.ipynb"


SECTIONS: tuple[Section, ...] = (
    Section(
        "01_scores",
        "Attention scores without trainable weights",
        "solutions.scores",
        ("dot_scores", "score_matrix", "AdditiveScore", "DotProductScore", "SelfAttentionScore"),
    ),
    Section(
        "02_softmax",
        "From scores to weights to context vectors",
        "solutions.softmax",
        ("normalize_by_sum", "softmax_naive", "softmax", "context_vectors", "simple_self_attention"),
        forbidden=SOFTMAX_APIS,
        forbidden_in=("softmax_naive", "softmax"),
        provided=("solutions.scores:score_matrix",),
    ),
    Section(
        "03_trainable_qkv",
        "Scaled dot-product attention with trainable weights",
        "solutions.trainable_qkv",
        ("project_qkv", "scaled_dot_product_attention", "SelfAttention_v1", "SelfAttention_v2",
         "copy_v2_weights_into_v1"),
        forbidden=ATTENTION_APIS,
        forbidden_in=("scaled_dot_product_attention", "SelfAttention_v1", "SelfAttention_v2"),
    ),
    Section(
        "04_causal_mask",
        "Hiding the future",
        "solutions.causal_mask",
        ("causal_mask", "mask_and_renormalize", "causal_attention_weights", "CausalAttention"),
        forbidden=ATTENTION_APIS,
        forbidden_in=("causal_attention_weights", "CausalAttention"),
        uses_meta=True,
    ),
    Section(
        "05_padding_mask",
        "Batches of sentences of different lengths",
        "solutions.padding_mask",
        ("key_padding_mask", "mask_padded_scores", "padded_attention", "PaddedSelfAttention"),
        forbidden=ATTENTION_APIS,
        forbidden_in=("padded_attention", "PaddedSelfAttention"),
    ),
    Section(
        "06_multihead",
        "Split into heads, attend, rebuild",
        "solutions.multihead",
        ("split_heads", "combine_heads", "MultiHeadAttentionWrapper", "MultiHeadAttention"),
        forbidden=ATTENTION_APIS,
        forbidden_in=("MultiHeadAttentionWrapper", "MultiHeadAttention"),
        provided=("solutions.causal_mask:CausalAttention",),
        uses_meta=True,
    ),
)

BY_ID = {section.id: section for section in SECTIONS}


def find(section_id: str) -> Section:
    """The section named `section_id` (also accepts "02" or "softmax")."""
    if section_id in BY_ID:
        return BY_ID[section_id]
    matches = [s for s in SECTIONS if section_id in (s.id[:2], s.id[3:])]
    if len(matches) == 1:
        return matches[0]
    raise KeyError(section_id)
