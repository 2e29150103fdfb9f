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
    return GradeResult("submissions/ada", "cpu", [softmax, blank], execution_time=1.25)


@pytest.mark.parametrize("fmt", FORMATS)
def test_report_matches_golden_file(fmt):
    text = render(fixed_result(), fmt)
    golden = GOLDEN / f"report.{fmt}"
    if os.environ.get("AUTOGRADER_UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text()


def test_gradescope_json_totals():
    data = json.loads(render(fixed_result(), "json"))
    assert data["score"] == 2 and data["max_score"] == 6.5
    assert [t["status"] for t in data["tests"]] == ["passed", "failed", "failed", "failed"]
    assert data["tests"][1]["tags"] == ["02_softmax", "check"]
