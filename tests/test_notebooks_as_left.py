"""Notebooks as students really leave them: a slow leftover cell, magics, a section never handed in.

Jupyter and nbgrader are the reference: what a cell defines there, it defines
in grading; a cell past its time limit is interrupted and the rest still runs.
"""
from __future__ import annotations

import json
import shutil

import pytest
from support import EXAMPLES, zygote

from autograder.core.extract import from_notebook
from autograder.core.grade import run_checks
from autograder.core.magics import to_python
from autograder.core.submission import locate
from autograder.sandbox.limits import Limits


def notebook_with(section: str, cells: list[tuple[int, str]], folder):
    """The correct notebook of `section` with code cells inserted (index, source); -1 appends."""
    data = json.loads((EXAMPLES / "correct" / f"{section}.ipynb").read_text())
    for index, source in cells:
        cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": source}
        data["cells"].insert(len(data["cells"]) if index < 0 else index, cell)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{section}.ipynb").write_text(json.dumps(data))
    return folder


def grade_section(folder, section, limits=None):
    result = run_checks(locate(folder, section), "cpu", limits, launcher=zygote())
    assert not result.grader_errors, result.grader_errors
    return result.sections[0]


# ----------------------------------------------------------------- per-cell limits
def test_a_slow_leftover_cell_is_interrupted_and_the_section_keeps_its_points(tmp_path):
    """nbgrader interrupts the one cell; before, the whole notebook's load limit zeroed the section."""
    folder = notebook_with("06_multihead", [(-1, "import time\ntry:\n    time.sleep(45)\nexcept Exception:\n"
                                                  "    pass\n")], tmp_path / "s")
    section = grade_section(folder, "06_multihead", Limits(cell_seconds=1.5, load_seconds=20))
    assert section.score == section.max_score
    assert any("interrupted after 1.5 s" in note for note in section.notes), section.notes


def test_only_what_the_interrupted_cell_had_yet_to_define_is_missing(tmp_path):
    slow_then_define = "import time\ntime.sleep(30)\ndef softmax(x, dim=-1):\n    return x\n"
    source = (EXAMPLES / "correct_py" / "02_softmax.py").read_text()
    source = source.replace("def softmax(x, dim=-1):", "def _unused_softmax(x, dim=-1):", 1)
    folder = tmp_path / "s"
    folder.mkdir()
    data = {"cells": [{"cell_type": "code", "metadata": {}, "source": source},
                      {"cell_type": "code", "metadata": {}, "source": slow_then_define}],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (folder / "02_softmax.ipynb").write_text(json.dumps(data))
    section = grade_section(folder, "02_softmax", Limits(cell_seconds=1.0, load_seconds=20))
    lost = [c for c in section.checks if not c.passed]
    assert lost and all("softmax" in c.name.lower() or "softmax" in c.message for c in lost)
    assert any(c.passed and "context" in c.name.lower() for c in section.checks)


@pytest.mark.parametrize("flag", ["--cell-timeout"])
def test_the_cell_limit_has_a_flag_on_every_grading_verb(flag):
    from autograder.cli import build_parser

    parser = build_parser()
    for verb in (["grade", "x"], ["check"], ["batch", "x"]):
        args = parser.parse_args(verb + [flag, "7"])
        assert args.cell_timeout == 7


# ----------------------------------------------------------------- magics
@pytest.mark.parametrize("magic", ["%%time", "%%capture", "%%timeit -n1 -r1"])
def test_a_cell_magic_still_defines_its_names(tmp_path, magic):
    source = (EXAMPLES / "correct_py" / "01_scores.py").read_text()
    data = {"cells": [{"cell_type": "code", "metadata": {}, "source": magic + "\n" + source}],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "01_scores.ipynb").write_text(json.dumps(data))
    section = grade_section(folder, "01_scores")
    assert section.score == section.max_score, [c.message for c in section.checks if not c.passed]


def test_magics_become_what_ipython_runs_with_the_line_numbers_kept():
    notes = []
    code = to_python("a = 1\n%matplotlib inline\n%time b = a + 1\n!pip install x\nc = !ls\n%pip install y\n",
                     "code cell 4", notes)
    lines = code.split("\n")
    assert lines[0] == "a = 1" and lines[2] == "b = a + 1"  # %time's statement runs, on its own line
    assert "run_line_magic('matplotlib'" in lines[1]  # answered by the worker's stand-in shell
    assert [note.split(":")[0] for note in notes] == ["code cell 4, line 4", "code cell 4, line 5",
                                                      "code cell 4, line 6"]
    assert to_python("%%bash\nrm -rf ~\n", "code cell 5", notes) == ""
    assert "%%bash" in notes[-1]
    assert to_python("%%time\nimport gc\n", "code cell 6", []) == "\nimport gc\n"  # the scans see it


def test_code_inside_a_magic_is_scanned_like_any_other():
    from autograder.core.extract import tampering

    extracted = from_notebook("02_softmax.ipynb", json.dumps({"cells": [
        {"cell_type": "code", "metadata": {}, "source": "%%time\nimport gc\n"}]}).encode())
    assert tampering(extracted.cells) == ['the cell "%%time", line 2: import gc (the garbage collector)']


def test_magics_in_the_notebook_are_noted_in_the_grading(tmp_path):
    folder = notebook_with("01_scores", [(2, "%pip install torch\n!nvidia-smi\n%matplotlib inline\n")],
                           tmp_path / "s")
    section = grade_section(folder, "01_scores")
    assert section.score == section.max_score
    assert sum("is not run while grading" in note for note in section.notes) == 2


# ----------------------------------------------------------------- not handed in
def test_a_section_not_handed_in_is_not_called_unreadable(tmp_path):
    folder = tmp_path / "s"
    folder.mkdir()
    shutil.copy(EXAMPLES / "correct" / "01_scores.ipynb", folder)
    (folder / "02_softmax.ipynb").write_text("{ not json")
    result = run_checks(locate(folder), "cpu", launcher=zygote())
    kinds = {s.id: {c.kind for c in s.checks} for s in result.sections}
    assert kinds["02_softmax"] == {"unreadable"}
    assert kinds["03_trainable_qkv"] == {"not_handed_in"}
    assert any("was not handed in" in note for note in result.sections[2].notes)


def test_the_course_notebooks_load_in_grading_without_a_failing_cell():
    """The notebooks' own setup cells call Jupyter's shell (get_ipython().set_custom_exc, ...): in
    grading those calls do nothing, and no cell of a correct notebook fails."""
    result = run_checks(locate(EXAMPLES / "correct"), "cpu", launcher=zygote())
    assert not result.grader_errors
    assert {s.id: s.notes for s in result.sections if s.notes} == {}
    assert all(s.score == s.max_score > 0 for s in result.sections), [(s.id, s.score) for s in result.sections]
    assert result.score == result.max_score + result.bonus_max  # a bonus section adds to the score, not the maximum


def test_a_section_not_started_says_so_once_in_plain_words(tmp_path):
    """The notebook as released (every graded name its stub): one note that the section is not started, no
    stub's NotImplementedError from its cells as notes, and the table prints no check's message (each would
    repeat it). A section with one name written is started: its notes and messages are as usual."""
    from autograder.feedback.formats import table
    from support import ROOT

    untouched = tmp_path / "untouched"
    untouched.mkdir()
    shutil.copy(ROOT / "student_template" / "03_trainable_qkv.ipynb", untouched)
    result = run_checks(locate(untouched, "03_trainable_qkv"), "cpu", launcher=zygote())
    section = result.sections[0]
    assert section.not_started and len(section.notes) == 1 and section.notes[0].startswith("not started:")
    shown = table(result)
    assert shown.count("NotImplementedError") == 1 and "not implemented yet" not in shown, shown

    started = notebook_with("03_trainable_qkv", [], tmp_path / "started")
    result = run_checks(locate(started, "03_trainable_qkv"), "cpu", launcher=zygote())
    assert not result.sections[0].not_started and not result.sections[0].notes
