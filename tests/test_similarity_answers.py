"""The same wrong answers as evidence (core/answers.py, instructor/similarity_answers.py): a failed comparison
keeps a fingerprint of the values it received, and the similarity report finds the pairs of students who
returned the same rare wrong values, whatever the rewrite of their code."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
import torch
from similarity_class import originals, write_notebook
from support import ROOT

from autograder.core.answers import answer_of, is_answer
from autograder.core.harness import CheckFailed, expect_close
from autograder.core.record import RecordError, check_data, check_from
from autograder.core.results import CheckResult
from autograder.core.sections import find
from autograder.instructor.similarity_answers import Answer, shared_answers

SECTION = find("03_trainable_qkv")


def test_the_fingerprint_is_the_values_whatever_their_order_of_summing_and_tells_a_multiple_apart():
    values = torch.randn(2, 6, 4, generator=torch.Generator().manual_seed(5))
    first = answer_of(values)
    assert is_answer(first) and first["shape"] == [2, 6, 4] and len(first["values"]) == 6
    assert answer_of(values + 1e-7)["digest"] == first["digest"]  # another spelling's float noise
    assert answer_of(values * 2)["digest"] != first["digest"]  # a factor off is another answer
    assert answer_of(values.reshape(6, 2, 4))["digest"] != first["digest"]
    nan = answer_of(torch.tensor([float("nan"), 1.0]))
    assert nan["values"] == ["nan", 1.0] and json.loads(json.dumps(nan)) == nan  # JSON holds it
    assert answer_of("not a tensor") is None and answer_of(torch.zeros(0)) is None


def test_a_failed_comparison_carries_its_answer_and_a_passed_one_none():
    expected = torch.ones(2, 3)
    with pytest.raises(CheckFailed) as failed:
        expect_close(torch.full((2, 3), 2.0), expected, "weights")
    assert failed.value.answer == answer_of(torch.full((2, 3), 2.0))
    with pytest.raises(CheckFailed) as wrong_shape:
        expect_close(torch.ones(3, 2), expected, "weights")
    assert wrong_shape.value.answer["shape"] == [3, 2]
    expect_close(expected.clone(), expected, "weights")  # passes: nothing raised, nothing kept


def test_the_record_keeps_the_answer_and_refuses_one_not_shaped_as_answer_of_makes_it():
    answer = answer_of(torch.arange(4.0))
    check = CheckResult("03_trainable_qkv", "a check", 1.0, 0.0, "wrong", "check", id="test_x", answer=answer)
    data = check_data(check)
    assert check_from("03_trainable_qkv", json.loads(json.dumps(data))).answer == answer
    assert "answer" not in check_data(CheckResult("03_trainable_qkv", "passed", 1.0, 1.0))
    for bad in ({**answer, "digest": "<script>"}, {**answer, "values": list(range(50))}, "text",
                {**answer, "extra": 1}):
        with pytest.raises(RecordError, match="answer"):
            check_from("03_trainable_qkv", {**data, "answer": bad})


def answer(check: str, digest: str, explained: bool = False) -> Answer:
    return Answer(check, f"title of {check}", digest.ljust(16, "0"), (2,), (0.5, 1.0), explained)


def test_only_rare_wrong_answers_no_catalogued_mistake_gives_are_shared():
    answers = {
        "copier_a": [answer("c1", "aa"), answer("c2", "bb")],
        "copier_b": [answer("c1", "aa"), answer("c2", "bb")],
        "common_1": [answer("c1", "cc")], "common_2": [answer("c1", "cc")], "common_3": [answer("c1", "cc")],
        "common_4": [answer("c1", "cc")], "common_5": [answer("c1", "cc")],
        "named_1": [answer("c2", "dd", explained=True)], "named_2": [answer("c2", "dd", explained=True)],
        "alone": [answer("c1", "ee")],
    }
    shared = shared_answers(answers)
    assert set(shared) == {("copier_a", "copier_b")}, shared  # 5 of 8 failing alike: the class's own mistake
    assert [item["check"] for item in shared["copier_a", "copier_b"]] == ["c1", "c2"]
    first = shared["copier_a", "copier_b"][0]
    assert first["students"] == 2 and first["failing"] == 8 and first["weight"] > 1.0


# --------------------------------------------------------------------------- a class graded for real

RARE_SLIP = ("d_k**0.5", "d_k**0.25")  # a typo nobody else makes: the scores divided by d_k's fourth root
OTHER_SLIP = ("d_k**0.5", "d_k**0.75")  # another student's own slip, not the copier's
NAMED_SLIP = ("attn_scores / d_k**0.5", "attn_scores")  # no scaling: a mistake of the course's catalogue
# the copier's function rewritten as a chatbot would, keeping what it computes (and its slip)
REWRITTEN = {
    "einsum-free": """def scaled_dot_product_attention(queries, keys, values):
    \"\"\"Weights from scaled scores, then their mix of the values.\"\"\"
    import math
    import torch.nn.functional as F
    feature_size = keys.size(-1)
    score_table = torch.matmul(queries, keys.mT)
    normalised_rows = F.softmax(score_table / math.sqrt(math.sqrt(feature_size)), dim=-1)
    return torch.matmul(normalised_rows, values), normalised_rows
""",
    "one-line": """def scaled_dot_product_attention(queries, keys, values):
    weights = (queries @ keys.transpose(-2, -1) * keys.shape[-1] ** -0.25).softmax(dim=-1)
    context = weights @ values
    return context, weights
""",
}


def with_slip(blocks, slip):
    found = [(name, text.replace(*slip)) for name, text in blocks if name == "scaled_dot_product_attention"]
    assert found[0][1] != dict(blocks)["scaled_dot_product_attention"], "the slip must change the reference"
    return [(name, found[0][1] if name == found[0][0] else text) for name, text in blocks]


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """A class of 03 graded by the batch with --similarity: a wrong solution and its copies under every rewrite,
    a student with another slip, two who make the catalogued one, and two right ones."""
    root = tmp_path_factory.mktemp("answers")
    reference = originals(SECTION)["a"]
    wrong = with_slip(reference, RARE_SLIP)
    plan = {"copier_original": wrong, "other_slip": with_slip(reference, OTHER_SLIP),
            "named_1": with_slip(reference, NAMED_SLIP), "named_2": with_slip(reference, NAMED_SLIP),
            "right_1": reference, "right_2": originals(SECTION)["b"]}
    plan.update({f"copier_{how}": [(name, REWRITTEN[how] if name == "scaled_dot_product_attention" else text)
                                   for name, text in reference] for how in REWRITTEN})
    for student, blocks in plan.items():
        write_notebook(root / "class" / student, SECTION, blocks)
    out = root / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "autograder", "batch", str(root / "class"), "--section", SECTION.id,
                          "--out", str(out), "--similarity", "--jobs", "2"], capture_output=True, text=True,
                         env=env, cwd=ROOT, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    return out, sorted(plan)


def test_copies_of_a_wrong_solution_share_its_wrong_answers_whatever_the_rewrite(graded_class):
    out, students = graded_class
    pairs = json.loads((out / "similarity.json").read_text(encoding="utf-8"))["sections"][SECTION.id]["pairs"]
    sharing = {(p["student_a"], p["student_b"]): p for p in pairs if p["wrong_answers"]}
    copiers = [s for s in students if s.startswith("copier_")]
    expected = {(a, b) for a in copiers for b in copiers if a < b}
    assert set(sharing) == expected, sorted(sharing)  # nobody else: another slip, nor the catalogued one
    for pair in sharing.values():
        checks = {item["check"] for item in pair["wrong_answers"]}
        assert any("scaled_dot_product_attention" in item["title"] or "sqrt(d_k)" in item["title"]
                   for item in pair["wrong_answers"]), checks
        assert pair["answer_weight"] > 0


def test_the_report_ranks_the_shared_wrong_answers_with_their_check_and_values(graded_class):
    out, _ = graded_class
    page = (out / "similarity.html").read_text(encoding="utf-8")
    table = page.split("The same rare wrong answers", 1)[1].split("</table>", 1)[0]
    assert "copier_original" in table and "other_slip" not in table and "named_1" not in table
    assert re.search(r"<code>\(\d+(, \d+)*\) -?\d", table), "the values both returned are shown"
    csv = (out / "similarity.csv").read_text(encoding="utf-8").splitlines()
    assert csv[0].endswith(",same_wrong_answers")


def test_a_students_own_results_and_report_never_show_the_fingerprint(graded_class):
    out, _ = graded_class
    stored = json.loads((out / "students" / "copier_original.json").read_text(encoding="utf-8"))
    digests = [c["answer"]["digest"] for s in stored["extra_data"]["record"]["sections"] for c in s["checks"]
               if "answer" in c]
    assert digests, "the instructor's record keeps the wrong answers"
    shown = json.dumps({key: value for key, value in stored.items() if key != "extra_data"})
    assert not any(digest in shown for digest in digests)
