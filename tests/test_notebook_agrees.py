"""The notebook and the grader agree: a correct answer is never red in the notebook.

Every correct implementation the project knows (the reference solutions, which the examples are
made of, and each catalogue's other correct styles, among them the book's own answer to exercise
3.1) runs through the released notebook's locked check cells, and every one of them passes. The
grader gives the same implementations full marks (tests/test_catalogues.py).
"""
from __future__ import annotations

import concurrent.futures
import functools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from catalogues import CATALOGUES
from support import ROOT, self_check

from autograder.checks import declared
from autograder.core.sections import BY_ID, SECTIONS
from autograder.notebook import home
from course.builder import layout

RUNNER = Path(__file__).resolve().parent / "notebook_runner.py"


def correct_variants(section_id: str) -> list[tuple[str, dict]]:
    styles = CATALOGUES[section_id].STYLES
    return [("reference", {})] + [(f"style {i}: {'+'.join(style)}", style) for i, style in enumerate(styles, 1)]


# Every run a section's notebook is asked for here (its correct styles, its catalogue's mistakes, each graded name
# left a stub, and WRONG_COPY below) is made by one runner process: starting one costs seconds (torch, the
# notebook's first cells), a variant a tenth of that. The first test that asks runs every section, RUNNERS at once
# (the machine has 2 CPUs); the test process only waits for them.
RUNNERS = 2

# copying without the transpose: the runner can fail (test_a_wrong_copy_is_red_in_the_notebook)
WRONG_COPY = ("no transpose", "03_trainable_qkv", {
    "copy_v2_weights_into_v1": "def copy_v2_weights_into_v1(v1, v2):\n"
                               "    with torch.no_grad():\n"
                               "        v1.W_query.copy_(v2.W_query.weight)\n"
                               "        v1.W_key.copy_(v2.W_key.weight)\n"
                               "        v1.W_value.copy_(v2.W_value.weight)\n"})


def section_runs(section_id: str) -> list[dict]:
    """The runner's input for one section: every variant the tests of this module and
    test_lines_students_read.py read, each id once."""
    variants = correct_variants(section_id) + mistake_variants(section_id)
    variants += [(WRONG_COPY[0], WRONG_COPY[2])] * (section_id == WRONG_COPY[1])
    runs = [{"id": vid, "replacements": code} for vid, code in variants]
    runs += [{"id": f"stub {name}", "replacements": {}, "stubs": [name]} for name in BY_ID[section_id].names]
    ids = [run["id"] for run in runs]
    assert len(set(ids)) == len(ids), f"{section_id}: two notebook variants share an id: {sorted(ids)}"
    return runs


def run_section(section_id: str, runs: list[dict] | None = None, language: str = "en") -> dict:
    """The runner's outcomes of `runs` (every run of the section unless given), the check cells in `language`."""
    done = subprocess.run([sys.executable, str(RUNNER), section_id],
                          input=json.dumps(section_runs(section_id) if runs is None else runs),
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "ATTENTION_COURSE_LANG": language})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@functools.cache
def every_section_outcomes() -> dict:
    """{section id: {variant id: {check cell: None or the error}}}, one runner per section."""
    with concurrent.futures.ThreadPoolExecutor(max(1, min(RUNNERS, os.cpu_count() or 1))) as pool:
        return dict(zip(CATALOGUES, pool.map(run_section, CATALOGUES)))


def outcomes_of(section_id: str, variant_id: str) -> dict:
    """{check cell: None when it passed, else the error's last line} of one variant of `section_id`'s notebook
    (a correct style's id, a mistake's id, "stub NAME", or WRONG_COPY's)."""
    return every_section_outcomes()[section_id][variant_id]


@functools.cache
def spoken_outcomes(section_id: str, variants: tuple[tuple[str, str], ...], language: str) -> dict:
    """{variant id: {check cell: None or the error}} of the given variants (id, their code as JSON) alone, the
    check cells speaking `language` (as a notebook's do where the environment names one): one runner."""
    return run_section(section_id, [{"id": vid, "replacements": json.loads(code)} for vid, code in variants],
                       language)


CASES = [pytest.param(section_id, variant_id, id=f"{section_id}:{variant_id}")
         for section_id in CATALOGUES for variant_id, _ in correct_variants(section_id)]


@pytest.mark.parametrize("section_id, variant_id", CASES)
def test_correct_implementation_passes_every_notebook_check(section_id, variant_id):
    outcomes = outcomes_of(section_id, variant_id)
    assert outcomes, f"{section_id}: the notebook has no check cells"
    red = {cell: error for cell, error in outcomes.items() if error is not None}
    assert not red, f"{variant_id} is correct, yet these notebook checks fail: {red}"


def test_the_books_exercise_answer_is_among_the_correct_ones():
    """The book's exercise 3.1 answer assigns new Parameters; it must be one of the styles tested above."""
    styles = [style.get("copy_v2_weights_into_v1", "") for style in CATALOGUES["03_trainable_qkv"].STYLES]
    assert any("nn.Parameter(v2.W_query.weight.T)" in code for code in styles)


def test_a_wrong_copy_is_red_in_the_notebook():
    """The runner can fail: copying without the transpose fails the exercise's check cell, and only it."""
    outcomes = outcomes_of(WRONG_COPY[1], WRONG_COPY[0])
    red = {cell for cell, error in outcomes.items() if error is not None}
    assert red == {"test_copy_v2_weights_into_v1"}, outcomes


# --------------------------------------------------------------------------- the other direction


def cell_name(grade_id: str) -> str:
    """test_combine_heads, test_combine_heads_2 -> combine_heads: the graded name a check cell is about."""
    return re.sub(r"_\d+$", "", grade_id.removeprefix("test_"))


def selfcheck_failures(section_id: str, mistake) -> dict[str, list[str]]:
    """graded name -> the messages of the self-check's failing checks whose notebook cell is that name's."""
    section = BY_ID[section_id]
    gradings = declared(section_id)
    result = self_check(section_id, mistake.source(section_id))
    failures: dict[str, list[str]] = {}
    for outcome in result.checks:
        if not outcome.passed:
            failures.setdefault(home(gradings[outcome.name], section), []).append(outcome.message)
    return failures


# where a message names the student's line: "(the cell "def f(x):", line 3: ...)" in a notebook,
# "(01_scores.py, line 31: ...)" for the .py files the catalogue grades
LOCATION = re.compile(r' \((?:the cell "|[\w.-]+\.py, line \d|code cell \d)')


TAMPERING = "not run: your notebook reaches into the grader's watch or torch's internals"


def without_location(message: str) -> str:
    """A message up to where it names the student's cell: the rest differs between a .py file and a notebook."""
    return LOCATION.split(message)[0]


WHERE_LARGEST = re.compile(r" at \[[\d, ]+\]")


def says_the_same(shown: str, said: str) -> bool:
    """Whether `shown` (a notebook cell's lines) says `said` (the self-check's message). Either may be
    shortened ("…", core/shortening.py) at another place: a notebook cell keeps the student's whole line, which
    leaves the rest of its message less room. What stands before a cut is the start of the full text, so the
    two agree when, from where `said` starts in `shown`, one uncut part is a start of the other."""
    # the index of the largest difference: where batch items tie (the worked batch holds one sentence twice), the
    # kernel's and the worker's last bits may make either the largest
    shown, said = (WHERE_LARGEST.sub(" at [...]", text) for text in (shown, said))
    if said in shown:
        return True
    head = said.split("…")[0].rstrip()
    start = shown.find(head[:40])
    if len(head) < 40 or start < 0:
        return False
    other = shown[start:].split("…")[0].rstrip()
    return head.startswith(other) or other.startswith(head)


def mistake_variants(section_id: str) -> list[tuple[str, dict]]:
    return [(mistake.id, mistake.replacements) for mistake in CATALOGUES[section_id].MISTAKES]


MISTAKES = [pytest.param(section_id, mistake, id=f"{section_id}:{mistake.id}")
            for section_id, catalogue in CATALOGUES.items() for mistake in catalogue.MISTAKES]


@pytest.mark.parametrize("section_id, mistake", MISTAKES)
def test_the_notebook_fails_where_the_self_check_fails_and_names_the_same_mistake(section_id, mistake):
    outcomes = outcomes_of(section_id, mistake.id)
    red: dict[str, list[str]] = {}
    for cell, error in outcomes.items():
        if error is not None:
            red.setdefault(cell_name(cell), []).append(error)
    expected = selfcheck_failures(section_id, mistake)
    if all(TAMPERING in m for messages in expected.values() for m in messages):
        # grading refuses a notebook that tampers as a whole; run top to bottom, a cell above the
        # tampering one cannot know of it yet
        names = BY_ID[section_id].names
        first = min(names.index(name) for name in mistake.replacements)
        expected = {name: messages for name, messages in expected.items() if names.index(name) >= first}
    assert set(red) == set(expected), (
        f"{mistake.id}: the self-check fails the checks of {sorted(expected)}, the notebook the cells of "
        f"{sorted(red)}.\nself-check: {expected}\nnotebook: {red}")
    for name, messages in expected.items():
        shown = " ".join(red[name])
        said = without_location(messages[0])
        assert says_the_same(shown, said), f"{mistake.id}: the cell of {name} should say {said!r}; it says {shown!r}"
        if mistake.says and any(mistake.says.lower() in m.lower() for m in messages):
            assert mistake.says.lower() in shown.lower(), f"{mistake.id}: the cell of {name} does not name the mistake"


@pytest.mark.parametrize("section", SECTIONS, ids=[s.id for s in SECTIONS])
def test_every_visible_check_runs_in_a_notebook_cell(section):
    """Each visible check has a home among the section's names, and that name has a check cell that runs it."""
    nb = nbformat.read(ROOT / layout.RELEASED_NB.format(id=section.id), as_version=4)
    first_cells = {}
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if cell.metadata.get("nbgrader", {}).get("grade"):
            first_cells.setdefault(cell_name(grade_id), cell.source)
    for grading in declared(section.id).values():
        if grading["visible"]:
            name = home(grading, section)
            assert name in section.names
            assert first_cells[name].startswith(f'check("{name}")'), f"the first check cell of {name} must run check"


@pytest.mark.parametrize("section", SECTIONS, ids=[s.id for s in SECTIONS])
def test_each_graded_name_s_own_cell_fails_in_one_line_while_it_is_a_stub(section):
    """A student who runs a graded name's check cell with that name still the stub reads, in that cell and
    in one line, that it is not written yet: never nothing, which reads as passed."""
    for name in section.names:
        own = outcomes_of(section.id, f"stub {name}")[f"test_{name}"]
        assert own is not None, f"{section.id}: with {name} a stub, the cell check({name!r}) passes"
        said = own.removeprefix("autograder.notebook.").removeprefix("NotebookCheckFailed: ")
        assert "\n" not in said and said.startswith(f"{name} is not implemented yet: it still raises "
                                                     "NotImplementedError"), (
            f"{section.id}: with {name} a stub, its cell says {own!r}")
