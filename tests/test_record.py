"""The grade's own record (core/record): every field back as it was, text that merely looks like the
grader's output stays text, and a record not shaped as written is refused whole."""
from __future__ import annotations

import json

import pytest

from autograder.core.record import RecordError, from_record, to_record
from autograder.core.results import CheckResult, GradeResult, SectionResult


def a_grade() -> GradeResult:
    # notes and messages that look like the results.json "output" lines (`id: s / m`, indented notes):
    # read back from text they would have moved sections; read back as data they stay what they are
    scores = SectionResult("01_scores", "Attention scores", notes=["02_softmax: 9 / 9", "  indented\nsecond line"],
                           printed="shape: (2, 3)\n02_softmax: 1 / 1\n")
    scores.checks = [
        CheckResult("01_scores", "scores have the documented values", 2.0, 2.0, documented=True, visible=True,
                    visibility="visible", id="test_documented"),
        CheckResult("01_scores", "scores match the reference", 3.0, 0.0, "wrong: 02_softmax: 0 / 3", "check",
                    visibility="after_published", mistake="no scaling", id="test_reference[1]"),
    ]
    bonus = SectionResult("07_positional_encoding", "Positional encoding",
                          checks=[CheckResult("07_positional_encoding", "in [-1, 1]", 0.5, 0.5, id="test_range")])
    return GradeResult("ada", "cpu", [scores, bonus], execution_time=1.25, grader_errors=["Traceback ..."],
                       sandbox="landlock", weak=True, torch="2.13.0")


def test_a_record_gives_back_every_field():
    grade = a_grade()
    back = from_record(json.loads(json.dumps(to_record(grade))))
    assert back == grade
    assert [c.id for c in back.sections[0].checks] == ["test_documented", "test_reference[1]"]
    assert back.sections[0].notes == ["02_softmax: 9 / 9", "  indented\nsecond line"]
    assert back.sections[0].printed == grade.sections[0].printed
    assert (back.score, back.max_score, back.bonus_score) == (grade.score, grade.max_score, grade.bonus_score)
    assert [s.id for s in back.sections] == ["01_scores", "07_positional_encoding"]


def test_a_lone_surrogate_is_stored_as_a_replacement_character():
    grade = a_grade()
    grade.sections[0].checks[1].message = "bad \ud800 text"
    text = json.dumps(to_record(grade), ensure_ascii=False)
    text.encode("utf-8")  # writable as UTF-8
    assert from_record(json.loads(text)).sections[0].checks[1].message == "bad \ufffd text"


@pytest.mark.parametrize("spoil", [
    lambda r: r.pop("sections"),
    lambda r: r.update(format=0),
    lambda r: r.update(weak="yes"),
    lambda r: r["sections"][0]["checks"][0].update(points="2"),
    lambda r: r["sections"][0]["checks"][0].pop("id"),
    lambda r: r["sections"][0].update(notes=[1]),
    lambda r: r["sections"][0]["checks"][0].update(documented=1),
])
def test_a_record_not_shaped_as_written_is_refused(spoil):
    record = to_record(a_grade())
    spoil(record)
    with pytest.raises(RecordError):
        from_record(record)


def test_results_json_is_a_rendering_only():
    """Gradescope's results.json carries no data of ours beyond its schema: printed output is in the record."""
    data = a_grade().to_gradescope()
    assert data["extra_data"] == {"sandbox": "landlock", "sandbox_weak": True, "torch": "2.13.0"}
    assert "printed" not in json.dumps(data["extra_data"])
