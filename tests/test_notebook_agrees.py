"""The notebook and the grader agree: a correct answer is never red in the notebook.

Every correct implementation the project knows (the reference solutions, which the examples are
made of, and each catalogue's other correct styles, among them the book's own answer to exercise
3.1) runs through the released notebook's locked check cells, and every one of them passes. The
grader gives the same implementations full marks (tests/test_catalogues.py).
"""
from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

import pytest

from catalogues import CATALOGUES

RUNNER = Path(__file__).resolve().parent / "notebook_runner.py"


def correct_variants(section_id: str) -> list[tuple[str, dict]]:
    styles = CATALOGUES[section_id].STYLES
    return [("reference", {})] + [(f"style {i}: {'+'.join(style)}", style) for i, style in enumerate(styles, 1)]


@functools.cache
def notebook_outcomes(section_id: str, variants: tuple[tuple[str, str], ...]) -> dict:
    """{variant id: {check cell: None or the error}}, from one run of the section's notebook per variant."""
    payload = json.dumps([{"id": vid, "replacements": json.loads(code)} for vid, code in variants])
    run = subprocess.run([sys.executable, str(RUNNER), section_id], input=payload, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout)


def outcomes_of(section_id: str, variants: list[tuple[str, dict]]) -> dict:
    return notebook_outcomes(section_id, tuple((vid, json.dumps(code, sort_keys=True)) for vid, code in variants))


CASES = [pytest.param(section_id, variant_id, id=f"{section_id}:{variant_id}")
         for section_id in CATALOGUES for variant_id, _ in correct_variants(section_id)]


@pytest.mark.parametrize("section_id, variant_id", CASES)
def test_correct_implementation_passes_every_notebook_check(section_id, variant_id):
    outcomes = outcomes_of(section_id, correct_variants(section_id))[variant_id]
    assert outcomes, f"{section_id}: the notebook has no check cells"
    red = {cell: error for cell, error in outcomes.items() if error is not None}
    assert not red, f"{variant_id} is correct, yet these notebook checks fail: {red}"


def test_the_books_exercise_answer_is_among_the_correct_ones():
    """The book's exercise 3.1 answer assigns new Parameters; it must be one of the styles tested above."""
    styles = [style.get("copy_v2_weights_into_v1", "") for style in CATALOGUES["03_trainable_qkv"].STYLES]
    assert any("nn.Parameter(v2.W_query.weight.T)" in code for code in styles)


def test_a_wrong_copy_is_red_in_the_notebook():
    """The runner can fail: copying without the transpose fails the exercise's check cell, and only it."""
    wrong = {"copy_v2_weights_into_v1": "def copy_v2_weights_into_v1(v1, v2):\n"
                                        "    with torch.no_grad():\n"
                                        "        v1.W_query.copy_(v2.W_query.weight)\n"
                                        "        v1.W_key.copy_(v2.W_key.weight)\n"
                                        "        v1.W_value.copy_(v2.W_value.weight)\n"}
    outcomes = outcomes_of("03_trainable_qkv", [("no transpose", wrong)])["no transpose"]
    red = {cell for cell, error in outcomes.items() if error is not None}
    assert red == {"test_copy_v2_weights_into_v1"}, outcomes
