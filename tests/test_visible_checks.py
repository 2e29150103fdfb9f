"""The split of each section's checks: visible ones in autograder/checks/visible/, hidden ones beside it.

The visible files are shipped to students (the self-check wheel), so they may
import neither the reference solutions nor a hidden check file; together with
the hidden file they must still make exactly the section's 10 points.
"""
from __future__ import annotations

import ast
import importlib

import pytest
import torch

from autograder.checks import common
from autograder.core.grade import CHECKS_DIR, VISIBLE_DIR, check_files
from autograder.core.sections import SECTIONS
from support import ROOT

IDS = [section.id for section in SECTIONS]


def imports(path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            names |= {module} | {f"{module}.{alias.name}" for alias in node.names}
            assert node.level == 0, f"{path.name}: a relative import (checks are imported by file path)"
    return names


def checks_of(module_name: str) -> dict:
    """title -> the grading record of each check function of the module."""
    module = importlib.import_module(module_name)
    return {f.grading["title"]: f.grading for name, f in vars(module).items()
            if name.startswith("test_") and callable(f) and hasattr(f, "grading")}


@pytest.mark.parametrize("path", sorted(VISIBLE_DIR.glob("*.py")) + [CHECKS_DIR / "common.py"],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_public_check_files_import_no_answers(path):
    leaked = {m for m in imports(path)
              if m.split(".")[0] in ("solutions", "course", "tests") or m.startswith("autograder.checks.test_")}
    assert not leaked, f"{path.relative_to(ROOT)} imports {sorted(leaked)}"


@pytest.mark.parametrize("section_id", IDS)
def test_visible_and_hidden_checks_split_the_section_s_10_points(section_id):
    visible = checks_of(f"autograder.checks.visible.test_{section_id}")
    hidden = checks_of(f"autograder.checks.test_{section_id}")
    assert visible and hidden
    assert all(g["visible"] for g in visible.values()), "a visible file holds a check the self-check would skip"
    assert not any(g["visible"] for g in hidden.values()), "a visible check is left in the hidden file"
    assert not set(visible) & set(hidden)
    assert sum(g["points"] for g in (*visible.values(), *hidden.values())) == 10


def test_grading_runs_both_files_visible_first_and_check_only_the_visible_ones():
    full = check_files(["02_softmax", "05_padding_mask"], visible_only=False)
    assert full == [str(VISIBLE_DIR / "test_02_softmax.py"), str(CHECKS_DIR / "test_02_softmax.py"),
                    str(VISIBLE_DIR / "test_05_padding_mask.py"), str(CHECKS_DIR / "test_05_padding_mask.py")]
    assert check_files(["02_softmax"], visible_only=True) == full[:2]  # the plugin keeps the visible checks


def test_grading_without_hidden_checks_is_refused(tmp_path, monkeypatch):
    from autograder.core import grade

    monkeypatch.setattr(grade, "hidden_checks_present", lambda: False)  # as in the self-check wheel
    with pytest.raises(grade.HiddenChecksMissing, match="only the visible checks"):
        grade.check_files(["01_scores"], visible_only=False)
    assert grade.check_files(["01_scores"], visible_only=True)


@pytest.mark.parametrize("raw, cls, seed", [(True, "SelfAttention_v1", 123), (False, "SelfAttention_v2", 789),
                                            (False, "CausalAttention", 123)])
def test_seeded_projections_equal_the_seeded_reference_weights(raw, cls, seed):
    """The visible checks build their mistakes from these instead of the reference modules."""
    from solutions import causal_mask, trainable_qkv

    module = getattr(trainable_qkv, cls, None) or getattr(causal_mask, cls)
    reference = common.seeded(module, 3, 2, *((6, 0.0) if cls == "CausalAttention" else ()), seed=seed)
    projections = common.seeded_projections(3, 2, seed=seed, raw=raw)
    for name in ("W_query", "W_key", "W_value"):
        ours, theirs = getattr(projections, name), getattr(reference, name)
        assert type(ours) is type(theirs)
        weight = (lambda layer: layer) if raw else (lambda layer: layer.weight)
        assert torch.equal(weight(ours), weight(theirs)), name


# (section, catalogued mistake id, visible check title part): mistakes the visible checks catch too;
# the student's self-check must name them as grading does (the catalogue entry's `says`)
NAMED_IN_THE_SELF_CHECK = [
    ("04_causal_mask", "mask filled with 0 instead of -inf", "causal_attention_weights gives the documented"),
    ("04_causal_mask", "CausalAttention fills the mask with 0", "with seed 123 gives the documented"),
    ("04_causal_mask", "CausalAttention hides the past (tril, diagonal kept)", "with seed 123 gives the documented"),
    ("04_causal_mask", "CausalAttention hides the past and the diagonal (tril)", "with seed 123 gives the documented"),
    ("06_multihead", "bare view when splitting heads", "MultiHeadAttention gives the documented"),
]


@pytest.mark.parametrize("section_id, mistake_id, title", NAMED_IN_THE_SELF_CHECK,
                         ids=[f"{s}:{m}" for s, m, _ in NAMED_IN_THE_SELF_CHECK])
def test_the_self_check_names_the_mistake_as_grading_does(section_id, mistake_id, title):
    from support import failing, grade_source

    catalogue = importlib.import_module(f"tests.test_checks_{section_id}").MISTAKES
    mistake = next(m for m in catalogue if m.id == mistake_id)
    assert mistake.says, mistake_id
    lost = failing(grade_source(section_id, mistake.source(section_id), visible_only=True))
    matches = [t for t in lost if title in t]
    assert matches, f"{mistake_id}: the self-check does not fail {title!r}; failing: {lost}"
    assert mistake.says.lower() in lost[matches[0]].lower(), lost[matches[0]]
