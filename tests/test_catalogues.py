"""Every section's catalogue of common mistakes, graded: the same tests for each section, parametrized.

A section's catalogue is data in tests/catalogues/mistakes_<id>.py: MISTAKES (each a
support.Mistake with the checks it must lose, exactly), STYLES (other correct
ways to write the section, which must get full marks) and, where the notebook
prints values worth copying, HARD_CODED. It holds no tests: the tests below run
for every section the registry knows, so a new section's catalogue is tested by
adding its data (and importing it in tests/catalogues/__init__.py).
"""
from __future__ import annotations

import pytest
from catalogues import CATALOGUES
from support import (assert_every_check_catches, assert_every_visible_check_catches, assert_full_marks,
                     assert_hard_coded_scores_at_most_40_percent, assert_mistake_caught, matched_titles)

from autograder.checks import declared
from autograder.core.hints import HINTS
from autograder.core.sections import SECTIONS

SECTION_IDS = [section.id for section in SECTIONS]
MISTAKES = [pytest.param(section_id, mistake, id=f"{section_id}:{mistake.id}")
            for section_id, catalogue in CATALOGUES.items() for mistake in catalogue.MISTAKES]
STYLES = [pytest.param(section_id, style, id=f"{section_id}:{'+'.join(style)}")
          for section_id, catalogue in CATALOGUES.items() for style in catalogue.STYLES]
HARD_CODED = [section_id for section_id, catalogue in CATALOGUES.items() if getattr(catalogue, "HARD_CODED", None)]
WRITTEN_OUT = [pytest.param(section_id, mistake, id=f"{section_id}:{mistake.id}")
               for section_id, catalogue in CATALOGUES.items() for mistake in catalogue.MISTAKES if mistake.hard_coded]


def test_every_section_has_a_catalogue():
    assert sorted(CATALOGUES) == sorted(SECTION_IDS)
    empty = [section_id for section_id, catalogue in CATALOGUES.items() if not catalogue.MISTAKES]
    assert not empty, f"sections whose catalogue names no mistake: {empty}"


@pytest.mark.parametrize("section_id", SECTION_IDS)
def test_correct_gets_full_marks(section_id):
    assert_full_marks(section_id, {})


@pytest.mark.parametrize("section_id, mistake", MISTAKES)
def test_mistake_loses_exactly_its_checks(section_id, mistake):
    assert_mistake_caught(section_id, mistake)


@pytest.mark.parametrize("section_id, style", STYLES)
def test_other_correct_style_gets_full_marks(section_id, style):
    assert_full_marks(section_id, style)


@pytest.mark.parametrize("section_id", SECTION_IDS)
def test_every_check_catches_a_mistake(section_id):
    assert_every_check_catches(section_id, CATALOGUES[section_id].MISTAKES)


@pytest.mark.parametrize("section_id", SECTION_IDS)
def test_every_visible_check_catches_a_mistake_in_the_self_check(section_id):
    assert_every_visible_check_catches(section_id, CATALOGUES[section_id].MISTAKES)


@pytest.mark.parametrize("section_id", HARD_CODED)
def test_hard_coded_printed_values_score_at_most_40_percent(section_id):
    assert_hard_coded_scores_at_most_40_percent(section_id, CATALOGUES[section_id].HARD_CODED)


def losses(section_id: str, mistake) -> tuple[float, float]:
    """(what grading takes, what the self-check takes) for a catalogued mistake: the points of the checks its
    `loses` names (exactly those that fail: test_mistake_loses_exactly_its_checks), and of the visible ones among
    them (the self-check runs the visible checks as grading does)."""
    checks = declared(section_id)
    named = matched_titles(mistake, checks)
    return (sum(checks[title]["points"] for title in named),
            sum(checks[title]["points"] for title in named if checks[title]["visible"]))


def test_every_graded_name_has_a_written_out_mistake_of_its_own():
    """Each graded name's hard-coding is catalogued on its own (its cell must say so: `says`), where the
    section's catalogue writes it out at all."""
    from autograder.core.sections import BY_ID

    alone = {(section_id, name) for section_id, catalogue in CATALOGUES.items() for mistake in catalogue.MISTAKES
             if mistake.hard_coded for name in mistake.replacements if len(mistake.replacements) == 1}
    expected = {(section_id, name) for section_id in ("01_scores", "03_trainable_qkv", "04_causal_mask",
                                                       "05_padding_mask", "06_multihead")
                for name in BY_ID[section_id].names}
    # written out in the sections' documented-values mistakes only: named there with the others
    expected -= {("01_scores", "score_matrix"), ("03_trainable_qkv", "scaled_dot_product_attention"),
                 ("03_trainable_qkv", "SelfAttention_v1"), ("03_trainable_qkv", "SelfAttention_v2"),
                 ("04_causal_mask", "causal_attention_weights"), ("04_causal_mask", "CausalAttention")}
    assert expected <= alone, sorted(expected - alone)


@pytest.mark.parametrize("section_id, mistake", WRITTEN_OUT)
def test_a_written_out_answer_costs_the_self_check_within_a_point_of_the_grade(section_id, mistake):
    """A student who hard-codes an answer learns it from the self-check at about the price grading asks: the
    visible checks in the name's own cell say so (`says`), and take all but at most one point of the grade's loss."""
    assert "hard-coded" in mistake.says, mistake.id
    grade, self_check = losses(section_id, mistake)
    assert grade - self_check <= 1, (f"{mistake.id}: grading takes {grade} points, the self-check {self_check}")


@pytest.mark.parametrize("hint", HINTS, ids=lambda h: h.mistake)
def test_every_hint_is_the_catalogued_hint_of_a_mistake(hint):
    """Each hint fires on a catalogued mistake (test_mistake_loses_exactly_its_checks asserts that grading
    gives each mistake exactly its declared hint, so no hint fires on another mistake of the catalogue)."""
    assert any(mistake.hint == hint.mistake for catalogue in CATALOGUES.values() for mistake in catalogue.MISTAKES)


def self_check_cells(section_id: str, mistake) -> set[str]:
    """The graded names whose check cells lose points for `mistake` in the self-check: the cells (`home`) of the
    visible checks among those its `loses` names (exactly those that fail: test_mistake_loses_exactly_its_checks)."""
    from autograder.core.sections import BY_ID, home

    checks = declared(section_id)
    return {home(checks[title], BY_ID[section_id]) for title in matched_titles(mistake, checks)
            if checks[title]["visible"]}


@pytest.mark.parametrize("section_id, mistake", MISTAKES)
def test_what_the_grade_catches_the_self_check_catches_in_the_name_s_own_cell(section_id, mistake):
    """No mistake is the hidden checks' alone: every documented behaviour has a visible check of its own name, so a
    mistake that costs points in the grade costs them in the self-check too, in the cell of a name it replaces."""
    assert self_check_cells(section_id, mistake) & set(mistake.replacements), (
        f"{mistake.id}: grading takes points, and no check cell of {sorted(mistake.replacements)} fails in the "
        f"self-check (its failing visible checks are those of {sorted(self_check_cells(section_id, mistake))})")
