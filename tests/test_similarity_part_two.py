"""Part 2's independent hands (similarity_part_two.py) are correct solutions: each gets full marks.

The similarity tests (test_similarity.py, test_similarity_rewrites.py) take every
hand as an independent, correct solution of its section; for sections 08 to 13
this is where that is checked, by the grader itself (the hidden checks with the
visible ones), each hand's blocks put in place of the reference's in the
section's correct example.
"""
from __future__ import annotations

import pytest
from similarity_class import blocks_of
from similarity_part_two import FAMILY_B, FAMILY_C, FAMILY_D, FAMILY_E, FAMILY_F
from support import correct_source, failing, grade_source, replace_def

PART_TWO = {"b": FAMILY_B, "c": FAMILY_C, "d": FAMILY_D, "e": FAMILY_E, "f": FAMILY_F}
SECTION_IDS = sorted(FAMILY_B)


def test_every_family_solves_the_same_sections():
    assert all(sorted(hand) == SECTION_IDS for hand in PART_TWO.values())
    assert SECTION_IDS == ["08_efficient_mha", "09_kv_cache", "10_grouped_query", "11_sliding_window", "12_rope",
                           "13_tiled_attention"]


def with_blocks(section_id: str, blocks) -> str:
    """The section's correct example with each graded name's definition replaced by the hand's block (its
    helpers with it)."""
    source = correct_source(section_id)
    for name, block in blocks:
        source = replace_def(source, name, block)
    return source


@pytest.mark.parametrize("family", sorted(PART_TWO))
@pytest.mark.parametrize("section_id", SECTION_IDS)
def test_each_hand_of_part_two_gets_full_marks(section_id, family):
    result = grade_source(section_id, with_blocks(section_id, blocks_of(PART_TWO[family][section_id])))
    assert result.score == result.max_score, failing(result)
