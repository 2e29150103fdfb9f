"""Hints for errors a student's code raises: given only when the evidence fits.

A hint names a likely cause, so a wrong one misleads. Each hint therefore states what it needs to
see: the exception's type, a pattern of its message, and a pattern of the student's line that
raised it (the worker reports that line, and so does a notebook's traceback). "Any error in this
function" is never enough. The grader (core/student.py) and the notebooks (autograder/notebook.py)
read this one table; tests/test_catalogues.py shows that each hint is the declared hint of a catalogued
mistake, and that grading each catalogued mistake gives exactly its declared hint (so no other).

The table is made at import time, before a language is chosen: its texts are marked with N_ and
translated where they are shown (`Hint.say`, `device_hint`); a hint's `mistake` stays as written,
the name the class report counts.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from autograder.i18n import N_, _, _f
from autograder.worker.transposed import attribute_chain

BATCHED_T = N_(".T on a batched (3-D) tensor, which reverses every dim (batch included)")
TRANSPOSE_HINT = N_("with batch dims, transpose only the last two dims of the keys: keys.transpose(-2, -1) "
                    "(or keys.mT), not keys.T, which reverses every dim")
BARE_VIEW = N_("a bare .view of the transposed tensor")
ODD_COSINE = N_("the cosine columns given every angle for an odd d_model")
UNSLICED_MASK = N_("the mask buffer not sliced to the input's length ([:num_tokens, :num_tokens])")
FLOAT_SIZE = N_("a float head_dim (d_out / num_heads instead of d_out // num_heads)")
KEEPDIM = N_("a sum or max taken without keepdim=True (its result broadcast against the wrong dim)")
BATCH_SWAPPED = N_("transpose(0, 1) on a batched (B, T, d) tensor, which swaps the batch and token dims")
MAX_PAIR = N_("x.max(dim=...) used as a tensor, though with a dim it returns the pair (values, indices)")
EMPTY_CACHE = N_("an empty tensor kept as the empty cache, where an empty cache is None")
CACHE_HEAD_DIM = N_("the cache concatenated along dim 1, the heads, instead of dim 2, the tokens")
# whole sentences, not assembled from the names above: a translation may order them otherwise
BARE_VIEW_HINT = N_("This looks like a bare .view of the transposed tensor: after a transpose it is non-contiguous, "
                    "so use .reshape(...) or .contiguous().view(...)")
# {operand}: the `.T` operand of the student's raising line, as they wrote it (`keys`, `inputs`)
BATCHED_T_HINT = N_("This looks like .T on a batched (3-D) tensor, which reverses every dim (batch included): "
                    "with batch dims, transpose only the last two dims of {operand}: {operand}.transpose(-2, -1) "
                    "(or {operand}.mT), not {operand}.T, which reverses every dim")

# a call's result transposed, `self.W_k(X).T`: the worker measures names and attributes only, so the text names
# no operand
BATCHED_T_CALL_HINT = N_("This looks like .T on a batched (3-D) tensor, which reverses every dim (batch included): "
                         "with batch dims, transpose only the last two dims: .transpose(-2, -1) (or .mT), not .T")
BATCH_SWAPPED_HINT = N_("This looks like transpose(0, 1) on a batched (B, T, d) tensor, which swaps the batch and "
                        "token dims: transpose the last two dims, .transpose(-2, -1) (or .mT)")
# what torch says when a batched matmul meets operands whose batch dims no longer line up
BATCH_MISMATCH = r"must match the size of tensor|Expected size for first two dimensions|shapes cannot be multiplied"


@dataclass(frozen=True)
class Hint:
    mistake: str  # the mistake it names, in the student's terms (what the class report counts)
    text: str
    error: str  # the exception's type name
    message: str  # a regular expression the exception's message must match
    line: str  # a regular expression the student's raising line must match
    # the worker's measurement the hint's premise needs (an error's field, worker/transposed.py), or "":
    # the hint fires only when that field holds a value other than `usual` (the premise seen, not guessed)
    evidence: str = ""
    usual: int = 0

    def say(self, line: str, evidence: dict | None = None) -> str:
        """The hint's text in the reader's language, worded from the student's raising `line` where the
        hint names what it holds (the `.T` operand the worker measured)."""
        if "{operand}" not in self.text:
            return _(self.text)
        return _f(self.text, operand=transposed_operand(line, (evidence or {}).get(self.evidence) or []))

    @property
    def start(self) -> str:
        """The words before the hint's first field, in the reader's language: what every wording of it shows."""
        return _(self.text).split("{")[0]

    def fits(self, error: str, message: str, line: str, evidence: dict | None = None) -> bool:
        return (error == self.error and re.search(self.message, message) is not None
                and re.search(self.line, line) is not None and self.seen(evidence or {}))

    def seen(self, evidence: dict) -> bool:
        """Whether the worker's measurements show the hint's premise (always, for a hint that needs none)."""
        if not self.evidence:
            return True
        measured = evidence.get(self.evidence)
        return isinstance(measured, list) and any(value != self.usual for value in measured)


HINTS = (
    # q @ k.T with k of shape (B, T, d): k.T is (d, T, B), so the batch dims no longer line up; the `.T` of
    # a matrix (v2.W_query.weight.T) is right, so the hint needs a `.T` operand the worker saw with other dims
    Hint(BATCHED_T, BATCHED_T_HINT, "RuntimeError", BATCH_MISMATCH, r"\.T\b", evidence="transposed_dims", usual=2),
    # the same `.T` on what a call returned (`self.W_k(X).T`), which the worker cannot measure without calling it
    # again: the raising line and torch's batch-dims message are the evidence (a matrix's `.T` raises no such error)
    Hint(BATCHED_T, BATCHED_T_CALL_HINT, "RuntimeError", BATCH_MISMATCH, r"\)\.T\b"),
    # keys.transpose(0, 1) on (B, T, d) keys: (T, B, d), whose batch dim no longer lines up with the queries'
    Hint(BATCH_SWAPPED, BATCH_SWAPPED_HINT, "RuntimeError", BATCH_MISMATCH,
         r"\.transpose\(\s*(0\s*,\s*1|1\s*,\s*0)\s*\)"),
    Hint(BARE_VIEW, BARE_VIEW_HINT, "RuntimeError", r"view size is not compatible", r"\.view\("),
    # self.head_dim = d_out / num_heads: a float even where it divides evenly, refused by every view and reshape
    Hint(FLOAT_SIZE,
         N_("A size given as a float: d_out / num_heads is a float even where it divides evenly; compute "
            "head_dim = d_out // num_heads (integer division)"), "TypeError", r"tuple of ints, ?but got float",
         r"\.(view|reshape|unflatten)\("),
    # scores.masked_fill(self.mask, ...) with the (context_length, context_length) buffer and T < context_length
    Hint(UNSLICED_MASK,
         N_("The mask buffer was made for context_length tokens and is used whole: slice it to the input's "
            "length, self.mask[:num_tokens, :num_tokens]"), "RuntimeError", r"must match the size of tensor",
         r"self\.\w*mask\w*\b(?!\s*\[)(?!\.\w+\s*\[)"),
    # exps / exps.sum(dim=dim) on a (T, d) input: the sum's (T,) lines up with the last dim, d; a line with a
    # reduction along a dim and no keepdim anywhere (one with keepdim=True raises for another reason)
    Hint(KEEPDIM,
         N_("This looks like a sum or max taken without keepdim=True: its result lost the reduced dim, so it lines "
            "up with the wrong dim of the tensor it meets; keep the dim: .sum(dim=dim, keepdim=True)"),
         "RuntimeError", r"must match the size of tensor",
         r"^(?!.*keepdim)(?=.*[-+*/]\s*[\w.]*\b(sum|amax|max|amin|min|mean|logsumexp)\(\s*(dim\s*=|-?\d|dim\b|[\w.]+\s*,\s*(dim\b|-?\d)))"),
    # x - x.max(dim=dim, keepdim=True): with a dim, max returns a named pair (values, indices), which no tensor
    # subtracts; torch's message names the pair's type, the student's line the call
    Hint(MAX_PAIR,
         N_("This looks like x.max(dim=...) used as a tensor, though with a dim it returns (values, indices): use "
            "its .values, x.max(dim=dim, keepdim=True).values (or x.amax(dim=dim, keepdim=True), the values alone)"),
         "TypeError", r"torch\.return_types\.max\b", r"\.max\("),
    # reset_cache leaving torch.empty(0): the next call reads the cache's token count from a tensor of one dim
    Hint(EMPTY_CACHE,
         N_("This looks like an empty tensor (torch.empty(0), say) kept as the empty cache: it has no token dim to "
            "read; an empty cache is None: set cache_k and cache_v to None in reset_cache and __init__"),
         "IndexError", r"tuple index out of range", r"cache\w*\.(shape\b|size\()"),
    # torch.cat((self.cache_k, k), dim=1) on (b, heads, T, head_dim): the tokens (dim 2) differ between the cache
    # and the new keys, which cat allows only along the dim it joins, so torch names dim 1 as the one joined
    Hint(CACHE_HEAD_DIM,
         N_("This looks like the cache concatenated along dim 1, the heads, while the tokens are dim 2 of (b, heads, "
            "T, head_dim): torch.cat((self.cache_k, k), dim=2)"),
         "RuntimeError", r"Sizes of tensors must match except in dimension 1\b", r"\bcat\(.*cache"),
    # PE[:, 1::2] = torch.cos(angles) with an odd d_model: one cosine column fewer than angles
    Hint(ODD_COSINE,
         N_("For an odd d_model there is one sine column more than cosine columns: give the odd columns only "
            "the first d_model // 2 angles"), "RuntimeError", r"must match the existing size", r"1::2|cos"),
)


def transposed_operand(line: str, dims: list) -> str:
    """The `.T` operand of `line` that the worker measured with other than 2 dims, as the student wrote it
    (the worker measures each operand written as a name or a chain of attributes, in the order of `ast.walk`);
    the first such operand where the measurements do not pair with them, and "x" where the line holds none."""
    try:
        tree = ast.parse(line.strip().rstrip(":\\"), mode="exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "x"
    operands = [".".join(names) for node in ast.walk(tree)
                if isinstance(node, ast.Attribute) and node.attr == "T" and (names := attribute_chain(node.value))]
    paired = [operand for operand, count in zip(operands, dims) if count != 2] if len(operands) == len(dims) else []
    return next(iter(paired or operands), "x")


def hint_for(error: str, message: str, line: str, evidence: dict | None = None) -> Hint | None:
    """The hint whose evidence the error fits, or None (then the error speaks for itself).
    evidence: the worker's description of the error, whose measurements some hints need (Hint.evidence)."""
    return next((hint for hint in HINTS if hint.fits(error, message, line, evidence)), None)


# What torch says when code made for the CPU meets a GPU, and what to do about it: these mistakes
# pass on a CPU (the meta-device checks catch some of them) and break every call on a GPU. Torch's
# message alone is the evidence here: it names the two devices, whichever line raised it.
DEVICE_MISTAKES = (
    (re.compile(r"same device|at least two devices|is on cpu|not on the expected device", re.IGNORECASE),
     N_("Your code mixes tensors of two devices (the CPU and the one the inputs are on): a tensor made "
        "inside forward without device=x.device, or a fixed tensor (a mask) kept as a plain attribute, which "
        ".to(device) does not move. Create new tensors with device=x.device, and register fixed ones with "
        "self.register_buffer(...).")),
    (re.compile(r"can't convert cuda.*numpy", re.IGNORECASE),
     N_("Your code calls .numpy() on a tensor on the GPU. Stay in torch (it has every operation this "
        "needs), or call .cpu() first where a NumPy array is really wanted.")),
)


# A call that answers on the CPU while its inputs lie on the GPU: no error, the answer is just elsewhere.
# No full stop at its end: the checks go on after it with ". Most likely ...".
RETURNED_ELSEWHERE = N_("A tensor made without device= lands on the CPU, wherever the inputs are: make new "
                         "tensors with device=x.device, and register fixed ones with self.register_buffer(...), "
                         "which .to(device) moves")
DEVICE_HINTS = tuple(hint for _pattern, hint in DEVICE_MISTAKES) + (RETURNED_ELSEWHERE,)  # every way a device mistake is named


def device_hint(message: str) -> str:
    """What to tell the student about the device mistake behind the error `message`, or ""
    (in the reader's language)."""
    for pattern, hint in DEVICE_MISTAKES:
        if pattern.search(message):
            return _(hint)
    return ""
