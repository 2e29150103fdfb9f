"""The warnings a student's code raises while it is checked reach the student: in the self-check's
and the grade's notes, once each, with the cell and line (torch's own warning about `x.T` included);
a worker's reply cannot carry anything else under that name."""
from __future__ import annotations

import pytest
from support import correct_source, grade_source, replace_def

from autograder.worker import wire

WARNING_SOFTMAX = '''
def softmax(x, dim=-1):
    import warnings
    torch.ones(2, 3, 4).T
    warnings.warn("softmax was called")
    shifted = x - x.amax(dim=dim, keepdim=True)
    return shifted.exp() / shifted.exp().sum(dim=dim, keepdim=True)
'''


def test_the_student_s_warnings_are_notes_of_the_section_once_each():
    source = replace_def(correct_source("02_softmax"), "softmax", WARNING_SOFTMAX)
    lines = source.split("\n")
    transposed, warned = lines.index("    torch.ones(2, 3, 4).T") + 1, lines.index('    warnings.warn("softmax was called")') + 1
    section = grade_source("02_softmax", source, visible_only=True)
    said = [note for note in section.notes if note.startswith("warning from your code")]
    assert len(said) == 2, section.notes
    assert f"line {transposed}): UserWarning: The use of `x.T`" in said[0], said
    assert "Triggered internally" not in said[0]  # where in torch's C++: nothing the student can act on
    assert said[1].endswith(f"line {warned}): UserWarning: softmax was called"), said
    assert all(check.passed for check in section.checks if "softmax" in check.name and "naive" not in check.name)


@pytest.mark.parametrize("forged", [
    [{"category": "UserWarning", "message": "x", "cell": "c", "lineno": 1, "extra": "field"}],
    [{"category": "UserWarning", "message": ["not text"], "cell": "c", "lineno": 1}],
    [{"category": "UserWarning", "message": "x", "cell": "c", "lineno": -1}],
    "not a list",
])
def test_a_reply_whose_warnings_do_not_fit_the_schema_is_refused(forged):
    with pytest.raises(wire.WireError):
        wire.check_reply({"ok": True, "warnings": forged})


def test_code_that_warns_something_new_on_every_call_adds_a_bounded_number_of_notes():
    from autograder.core.failures import WARNINGS_SHOWN, heard

    kept: list = []
    for call in range(50):
        reply = {"ok": True, "warnings": [{"category": "UserWarning", "message": f"call {call}", "cell": "c",
                                           "lineno": 3}] * 2}
        assert heard(kept, reply) is reply
    assert len(kept) == WARNINGS_SHOWN and kept[0]["message"] == "call 0" and kept[1]["message"] == "call 1"
