"""The mutation runner (benchmarks/mutants.py): it makes the mutants, kills a wrong one, and accepts a
surviving one only where the list of equivalent mutants names it.

The whole run over every section's solutions (about 1,000 mutants, minutes) is the slow test at the
end: every mutant must lose points or be listed as equivalent, with its reason.
"""
from __future__ import annotations

import functools
import importlib.util
import sys

import pytest
from support import ROOT, zygote

from autograder.core.sections import SECTIONS

SPEC = importlib.util.spec_from_file_location("mutants", ROOT / "benchmarks" / "mutants.py")
mutants = sys.modules.setdefault("mutants", importlib.util.module_from_spec(SPEC))  # its dataclasses look it up
SPEC.loader.exec_module(mutants)

BY_ID = {section.id: section for section in SECTIONS}
# a wrong mutant and an equivalent one, by id: what the runner must kill, and what it must accept only when listed
WRONG = ("04_causal_mask:causal_mask:function: torch.triu(ones, diagonal=1) -> torch.tril(ones, diagonal=1)")
SAME = ("02_softmax:simple_self_attention:keyword dropped: softmax(score_matrix(inputs), dim=-1) -> "
        "softmax(score_matrix(inputs))")


@functools.cache
def section_mutants(section_id: str) -> tuple:
    """The mutants of a section, made once per test run (each is a copy of a definition)."""
    return tuple(mutants.section_mutants(BY_ID[section_id]))


def made(identifier: str):
    """The mutant of that id, as the runner makes it."""
    section = BY_ID[identifier.split(":")[0]]
    found = [m for m in section_mutants(section.id) if m.id == identifier]
    assert len(found) == 1, f"the runner makes {len(found)} mutants of id {identifier!r}"
    return section, found[0]


# the classic operators, each seen at work on a section's graded code
OPERATORS = [
    ("04_causal_mask", "causal_mask:function: torch.triu(ones, diagonal=1) -> torch.tril(ones, diagonal=1)"),
    ("04_causal_mask", "mask_and_renormalize:keyword dropped: causal_mask(num_tokens, device=attn_weights.device)"),
    ("03_trainable_qkv", "scaled_dot_product_attention:operand dropped: attn_scores / d_k ** 0.5 -> attn_scores"),
    ("05_padding_mask", "PaddedSelfAttention.forward:argument: self.W_k(k) -> self.W_k(q)"),
    ("05_padding_mask", "mask_padded_scores:index order: key_padding_mask[:, None, :] -> key_padding_mask[None, :, :]"),
    ("06_multihead", "MultiHeadAttention.forward:role:"),
    ("02_softmax", "softmax:keyword dropped: x.amax(dim=dim, keepdim=True) -> x.amax(dim=dim)"),
    ("01_scores", "score_matrix:number:"),
    ("02_softmax", "softmax_naive:number: x, dim=-1 -> x, dim=-2"),  # a default value of the signature
    ("04_causal_mask", "CausalAttention.__init__:boolean: self, d_in, d_out, context_length, dropout, qkv_bias=False"),
    ("07_positional_encoding", "sinusoidal_encoding:function: torch.sin(angles) -> torch.cos(angles)"),
]


@pytest.mark.parametrize("section_id, fragment", OPERATORS, ids=[f"{s}:{f.split(':')[1]}" for s, f in OPERATORS])
def test_the_runner_makes_the_classic_mutants(section_id, fragment):
    ids = [m.id for m in section_mutants(section_id)]
    assert any(fragment in i for i in ids), f"no mutant of {section_id} matches {fragment!r}"


def test_only_graded_code_is_mutated():
    """The given code (outside BEGIN/END SOLUTION: a class statement, a docstring) is never changed."""
    for mutant in section_mutants("04_causal_mask"):
        assert "Mask convention" not in mutant.diff(), mutant.id
        assert "class CausalAttention(nn.Module)" in mutant.source or mutant.name != "CausalAttention"


def test_a_wrong_mutant_is_killed_and_an_equivalent_one_accepted_only_when_listed():
    section, wrong = made(WRONG)
    other, same = made(SAME)
    unlisted = mutants.run([section, other], mutants=[wrong, same], equivalents={}, launcher=zygote())
    assert [o.mutant.id for o in unlisted.killed] == [WRONG]
    assert [o.mutant.id for o in unlisted.survivors] == [SAME] and not unlisted.ok
    assert "SURVIVED " + SAME in unlisted.summary() and "+" in same.diff()
    listed = mutants.Report(unlisted.outcomes, {SAME: "the default dim"}, 0.0, unlisted.sections)
    assert listed.ok and [o.mutant.id for o in listed.equivalent] == [SAME]
    wrongly_listed = mutants.Report(unlisted.outcomes, {SAME: "the default dim", WRONG: "not so"}, 0.0,
                                    unlisted.sections)
    assert wrongly_listed.stale == [WRONG] and not wrongly_listed.ok


def test_every_listed_equivalent_has_a_reason_and_names_a_mutant_the_runner_makes():
    listed = mutants.load_equivalents()
    assert listed, "the list of equivalent mutants is empty"
    ids = {m.id for section in SECTIONS for m in section_mutants(section.id)}
    assert not set(listed) - ids, f"entries that name no mutant: {sorted(set(listed) - ids)}"
    assert all(len(reason.splitlines()) == 1 for reason in listed.values())


@pytest.mark.slow
def test_every_mutant_of_the_solutions_loses_points_or_is_a_listed_equivalent():
    report = mutants.run(list(SECTIONS), launcher=zygote())
    assert report.ok, report.summary()
