"""Reports rendered from a fixed result, compared with golden files.

To update after an intended change: AUTOGRADER_UPDATE_GOLDEN=1 pytest tests/test_formats.py
"""
import json
import os

import pytest
from support import ROOT

from autograder.feedback.formats import FORMATS, render
from autograder.core.results import CheckResult, GradeResult, SectionResult

GOLDEN = ROOT / "tests" / "golden"


def fixed_result() -> GradeResult:
    softmax = SectionResult("02_softmax", "From scores to weights to context vectors")
    softmax.checks = [
        CheckResult("02_softmax", "softmax gives the documented weights", 2, 2, documented=True, visible=True),
        CheckResult("02_softmax", "softmax rows sum to 1 along the last dim", 2, 0,
                    "softmax(x): wrong values, largest difference 0.2 at [0, 1] (expected 0.2689, got 0.5000). "
                    "This looks like softmax over dim 0 (the wrong dim)", "check"),
        CheckResult("02_softmax", "softmax is stable for large inputs", 1.5, 0,
                    "softmax is not implemented yet: it still raises NotImplementedError (code cell 7, line 20)", "stub"),
    ]
    blank = SectionResult("06_multihead", "Split into heads, attend, rebuild",
                          notes=["06_multihead.ipynb is missing from the submission"])
    blank.checks = [CheckResult("06_multihead", "split_heads | combine_heads round trip", 1, 0,
                                "06_multihead.ipynb is missing from the submission", "unreadable")]
    # a bonus section: its points add to the score, not to the maximum
    bonus = SectionResult("07_positional_encoding", "Sinusoidal positional encoding")
    bonus.checks = [CheckResult("07_positional_encoding", "every value of the encoding lies in [-1, 1]", 0.5, 0.5,
                                visible=True, visibility="visible"),
                    CheckResult("07_positional_encoding", "sinusoidal_encoding matches the reference on new sizes",
                                2, 0, "sinusoidal_encoding(5, 6): wrong values. This looks like sin and cos swapped",
                                "check", mistake="sin and cos swapped")]
    return GradeResult("submissions/ada", "cpu", [softmax, blank, bonus], execution_time=1.25)


@pytest.mark.parametrize("fmt", FORMATS)
def test_report_matches_golden_file(fmt):
    text = render(fixed_result(), fmt)
    golden = GOLDEN / f"report.{fmt}"
    if os.environ.get("AUTOGRADER_UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text()


def test_gradescope_json_totals():
    data = json.loads(render(fixed_result(), "json"))
    # the bonus section's 0.5 counts in the score, its 2.5 not in the maximum (Gradescope's extra credit:
    # its tests have max_score 0, their own points in extra_data)
    assert data["score"] == 2.5 and data["max_score"] == 6.5
    assert sum(t["score"] for t in data["tests"]) == data["score"]
    assert sum(t["max_score"] for t in data["tests"]) == data["max_score"]
    assert [t["status"] for t in data["tests"]] == ["passed", "failed", "failed", "failed", "passed", "failed"]
    assert data["tests"][1]["tags"] == ["02_softmax", "check"]


@pytest.mark.parametrize("score, maximum, bonus, bonus_max", [(55.5, 49, 6.5, 6.5), (23, 49.5, 0, 6.5), (40, 60, 0, 0)])
def test_a_total_never_reads_above_its_maximum(score, maximum, bonus, bonus_max):
    """`score` counts the bonus (GradeResult.score): the total shows the core points over the core maximum, and the
    bonus apart, so full marks with the whole bonus read "49 / 49, plus 6.5 / 6.5 bonus", never "55.5 / 49"."""
    from autograder.core.results import total_text

    text = total_text(score, maximum, bonus, bonus_max)
    shown, most = (float(number) for number in text.split(",")[0].split(" / "))
    assert shown <= most and shown == score - bonus, text
    assert (f"{bonus:g} / {bonus_max:g} bonus" in text) == bool(bonus_max), text


def with_part_two(result: GradeResult) -> GradeResult:
    """The fixed result with a section of the course's second part graded too."""
    fused = SectionResult("08_efficient_mha", "Efficient multi-head attention")
    fused.checks = [CheckResult("08_efficient_mha", "MultiHeadAttentionFused gives the documented seeded output",
                                3, 3, documented=True, visible=True),
                    CheckResult("08_efficient_mha", "MultiHeadAttentionSDPA calls F.scaled_dot_product_attention",
                                1, 0, "MultiHeadAttentionSDPA does not call F.scaled_dot_product_attention", "check")]
    result.sections.append(fused)
    return result


def test_each_part_shows_its_own_total_where_both_parts_are_graded():
    # part 1 alone: the total line as it always was (a student who does part 1 only reads it so)
    assert fixed_result().total_text() == "2 / 6.5, plus 0.5 / 2.5 bonus"
    # both parts: the course's total, then each part's, part 1's bonus apart, as in the total
    assert with_part_two(fixed_result()).total_text() == \
        "5 / 10.5, plus 0.5 / 2.5 bonus; part 1: 2 / 6.5, plus 0.5 / 2.5 bonus; part 2: 3 / 4"
    text = render(with_part_two(fixed_result()), "table")
    assert "part 1: 2 / 6.5, plus 0.5 / 2.5 bonus; part 2: 3 / 4" in text.splitlines()[-1]
