"""The visible checks: a module of their own per section, shippable to students as it is.

A check is visible when its `@check(...)` says visibility="visible" (or its
shorthands visible=True, documented=True). Each section's visible checks are
checks/section_<id>.py, its hidden ones checks/hidden/hidden_<id>.py; the
self-check wheel ships every file of checks/ but the hidden folder, whole, so
none of them may import the reference solutions, the course, a test or a hidden
module; together the checks of a section make exactly its 10 points.
"""
from __future__ import annotations

import ast
import importlib

import pytest
import torch

from autograder.checks import common, declared
from autograder.core.grade import check_files
from autograder.core.harness import VISIBILITIES, check
from autograder.core.sections import CHECKS_DIR, SECTIONS, check_file, check_module, hidden_file, hidden_module
from autograder.instructor.selfcheck_export import hidden_checks
from support import ROOT

IDS = [section.id for section in SECTIONS]


def imports(source: str, name: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            names |= {module} | {f"{module}.{alias.name}" for alias in node.names}
            assert node.level == 0, f"{name}: a relative import (checks are imported by file path)"
    return names




PUBLIC_FILES = sorted(CHECKS_DIR.glob("*.py"))  # every file of checks/ but hidden/ ships to students, whole


@pytest.mark.parametrize("path", PUBLIC_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_what_students_get_of_the_checks_imports_no_answers(path):
    source = path.read_text()
    leaked = {m for m in imports(source, path.name)
              if m.split(".")[0] in ("solutions", "course", "tests") or m.startswith("autograder.checks.hidden")}
    assert not leaked, f"{path.relative_to(ROOT)} ships with {sorted(leaked)}"
    names = {n.id for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Name)}
    assert "ref" not in names, f"{path.relative_to(ROOT)}: a visible check uses the reference (ref)"


def checks_in(module_name: str) -> dict:
    """name -> function of every check a module defines (what pytest collects from it)."""
    module = importlib.import_module(module_name)
    return {name: f for name, f in vars(module).items() if name.startswith("test_") and hasattr(f, "grading")}


@pytest.mark.parametrize("section_id", IDS)
def test_the_visible_module_holds_the_visible_checks_and_the_hidden_module_the_hidden_ones(section_id):
    visible, hidden = checks_in(check_module(section_id)), checks_in(hidden_module(section_id))
    assert visible and hidden
    assert all(f.grading["visible"] for f in visible.values())
    assert not any(f.grading["visible"] for f in hidden.values())
    assert hidden_checks(check_file(section_id).read_text()) == []  # what the wheel's build looks at agrees


@pytest.mark.parametrize("section_id", IDS)
def test_each_check_is_collected_once_from_the_module_that_defines_it(section_id):
    """A hidden module imports helpers from its visible module, never a check: pytest would run it twice."""
    for name in (check_module(section_id), hidden_module(section_id)):
        assert all(f.__module__ == name for f in checks_in(name).values()), name


@pytest.mark.parametrize("section_id", IDS)
def test_a_section_s_checks_make_its_10_points_with_some_visible_and_some_hidden(section_id):
    checks = declared(section_id)
    assert any(g["visible"] for g in checks.values()) and not all(g["visible"] for g in checks.values())
    assert all(g["visibility"] in VISIBILITIES for g in checks.values())
    assert all(g["visible"] == (g["visibility"] == "visible") for g in checks.values())
    assert sum(g["points"] for g in checks.values()) == 10


@pytest.mark.parametrize("section_id", IDS)
def test_a_section_s_visible_checks_come_before_its_hidden_ones(section_id):
    """What the grader collects, in order: the visible checks, then the hidden ones (a report keeps that order)."""
    order = [grading["visible"] for grading in declared(section_id).values()]
    assert order == sorted(order, reverse=True), "a visible check after a hidden one"


def test_check_declares_its_visibility():
    def grading(**keywords):
        return check(1, "a title", **keywords)(lambda student: None).grading

    assert grading()["visibility"] == "after_due_date" and not grading()["visible"]
    assert grading(visibility="visible", cell="softmax")["visible"]
    assert grading(visible=True, cell="softmax")["visibility"] == "visible"
    documented = grading(documented=True, cell="softmax")
    assert documented["visibility"] == "visible" and documented["visible"] and documented["documented"]
    assert documented["cell"] == "softmax"
    assert grading(visibility="after_published") == {"points": 1.0, "title": "a title", "documented": False,
                                                     "visible": False, "visibility": "after_published", "cell": ""}
    for wrong in ({"visibility": "hidden"}, {"visibility": "after_due_date", "visible": True},
                  {"visibility": "after_published", "documented": True},
                  {"visibility": "visible"}, {"documented": True}):  # a visible check places itself: cell=
        with pytest.raises(ValueError):
            grading(**wrong)


def test_the_wheel_refuses_a_visible_module_holding_a_check_not_declared_visible():
    source = '''from autograder.core.harness import check


def helper():
    return 1


@check(1, "shipped", visibility="visible")
def test_a(student):
    return helper()


@check(1, "shipped too", visible=True)
def test_b(student):
    pass


@check(1, "after the due date", visibility="after_due_date")
def test_c(student):
    pass


@check(1, "after publication", visibility="after_published")
def test_d(student):
    pass


@check(1, "the default")
def test_e(student):
    pass
'''
    assert hidden_checks(source) == ["test_c", "test_d", "test_e"]


def test_grading_runs_each_section_s_visible_module_then_its_hidden_one():
    for section_id in IDS:
        assert check_files([section_id], visible_only=False) == [str(check_file(section_id)),
                                                                 str(hidden_file(section_id))]
        # the self-check: the visible module alone (the wheel holds no other)
        assert check_files([section_id], visible_only=True) == [str(check_file(section_id))]
    assert check_files(IDS[:2], visible_only=False) == [str(path) for section_id in IDS[:2]
                                                        for path in (check_file(section_id), hidden_file(section_id))]


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
    ("02_softmax", "softmax without the max subtraction", "magnitude 1000"),
    ("02_softmax", "softmax shifts its input in place", "leave their input unchanged"),
    ("03_trainable_qkv", "softmax over the queries", "sum to 1 over the keys"),
    ("03_trainable_qkv", "copy without the transpose", "copy_v2_weights_into_v1"),
    ("04_causal_mask", "mask filled with 0 instead of -inf", "causal_attention_weights gives the documented"),
    ("04_causal_mask", "CausalAttention fills the mask with 0", "with seed 123 gives the documented"),
    ("04_causal_mask", "CausalAttention hides the past (tril, diagonal kept)", "with seed 123 gives the documented"),
    ("04_causal_mask", "CausalAttention hides the past and the diagonal (tril)", "with seed 123 gives the documented"),
    ("06_multihead", "bare view when splitting heads", "MultiHeadAttention gives the documented"),
]


@pytest.mark.parametrize("section_id, mistake_id, title", NAMED_IN_THE_SELF_CHECK,
                         ids=[f"{s}:{m}" for s, m, _ in NAMED_IN_THE_SELF_CHECK])
def test_the_self_check_names_the_mistake_as_grading_does(section_id, mistake_id, title):
    from catalogues import CATALOGUES
    from support import failing, grade_source

    catalogue = CATALOGUES[section_id].MISTAKES
    mistake = next(m for m in catalogue if m.id == mistake_id)
    assert mistake.says, mistake_id
    lost = failing(grade_source(section_id, mistake.source(section_id), visible_only=True))
    matches = [t for t in lost if title in t]
    assert matches, f"{mistake_id}: the self-check does not fail {title!r}; failing: {lost}"
    assert mistake.says.lower() in lost[matches[0]].lower(), lost[matches[0]]
