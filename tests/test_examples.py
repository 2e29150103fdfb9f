"""The bundled examples grade as they should, the same way every time."""
import json

import pytest
from support import EXAMPLES, ROOT, zygote

from autograder.feedback.formats import render
from autograder.core.grade import run_checks
from autograder.core.sections import BONUS, CORE, SECTIONS
from autograder.core.submission import locate


def grade(path, section=None):
    result = run_checks(locate(path, section), "cpu", launcher=zygote())
    assert not result.grader_errors, result.grader_errors
    return result


@pytest.mark.parametrize("section", [s.id for s in SECTIONS])
def test_correct_notebook_and_python_file_get_full_marks(section):
    for path in (EXAMPLES / "correct", EXAMPLES / "correct_py" / f"{section}.py"):
        result = grade(path, section)
        failing = {c.name: c.message for s in result.sections for c in s.checks if not c.passed}
        assert all(s.score == s.max_score > 0 for s in result.sections), (path, failing)
        # a bonus section's points add to the score, not to the maximum
        assert result.score == result.max_score + result.bonus_max, (path, failing)


def test_blank_template_gets_zero_with_a_message_per_check():
    result = grade(ROOT / "student_template")
    assert result.score == 0 and result.max_score == 10 * len(CORE) and result.bonus_max == 10 * len(BONUS)
    for section in result.sections:
        for check in section.checks:
            assert check.message and check.kind in {"stub", "missing", "raised", "load"}, (check.name, check.message)


def test_partial_example_gets_partial_marks():
    result = grade(EXAMPLES / "partial")
    assert 0 < result.score < result.max_score
    scores = {s.id: s.score for s in result.sections}
    assert scores["01_scores"] == 10, scores  # the partial example's first section is complete
    assert scores["06_multihead"] == 0, scores  # and its last is blank


def test_five_gradings_give_identical_json_apart_from_timing():
    outputs = []
    for _ in range(5):
        data = json.loads(render(grade(EXAMPLES / "partial"), "json"))
        data.pop("execution_time")
        outputs.append(data)
    assert all(o == outputs[0] for o in outputs[1:])


def test_the_readme_main_job_grades_the_examples_as_a_class():
    """README's first command (after setup): ci/run_examples.sh grades the four examples as a class."""
    import os
    import subprocess
    import sys

    done = subprocess.run(["bash", "ci/run_examples.sh"], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, PY=sys.executable))
    assert done.returncode == 0, done.stderr[-3000:]
    said = done.stdout + done.stderr
    core, bonus = 10 * len(CORE), 10 * len(BONUS)  # a bonus section adds to the score, not to the maximum
    full = f"{core} / {core}, plus {bonus} / {bonus} bonus"  # the total never reads above its maximum
    for line in (f"graded correct: {full}", f"graded correct_py: {full}", f"graded blank: 0 / {core}, plus 0 / {bonus} bonus",
                 "4 graded, 0 unchanged, 0 with grader errors"):
        assert line in said, said[-3000:]
    assert "left out" not in said  # every example is a student of the class
