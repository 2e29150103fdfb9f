"""No student lost by a file name: a notebook under another name or in a subfolder is graded by its cells.

`02_softmax (1).ipynb` (a browser's second download), `work/Untitled.ipynb`: taken for the one
section whose cells they alone hold (core/matching.py). Two notebooks holding one section, a decoy
holding every section, a link: never guessed; the student is told which files were found, and
grades.csv's status names them. A hostile folder (10,000 notebooks, a 1 GB file) is examined
within bounds, and said so.
"""
from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import nbformat
import pytest

from support import EXAMPLES, zygote

SECTION = "02_softmax"


def copy(source: Path, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(source, target)
    return target


def one(folder: Path, section_id: str = SECTION):
    from autograder.core.submission import locate

    (source,) = locate(folder, section_id)
    return source


def decoy(target: Path) -> Path:
    """A notebook whose cells carry the ids of every section's graded names and test cells."""
    from autograder.core.sections import SECTIONS

    cells = [nbformat.v4.new_code_cell("pass", metadata={"nbgrader": {"grade_id": cell_id}})
             for section in SECTIONS for name in section.names for cell_id in (name, f"test_{name}")]
    for cell in cells:
        cell.id = cell.metadata["nbgrader"]["grade_id"]
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nbformat.v4.new_notebook(cells=cells), target)
    return target


# --------------------------------------------------------------------------- found by its cells


@pytest.mark.parametrize("name", ["02_softmax (1).ipynb", "Untitled.ipynb", "work/notebooks/mine.ipynb"])
def test_a_notebook_under_another_name_is_taken_by_its_cells(tmp_path, name):
    copy(EXAMPLES / "partial" / f"{SECTION}.ipynb", tmp_path / name)
    source = one(tmp_path)
    assert source.path == tmp_path / name and source.found.by_content
    assert source.extracted.cells and not source.extracted.problem
    assert source.extracted.notes[0].startswith(f"{SECTION}.ipynb was not in the submission under its name: "
                                                f"graded {name!r}")
    from autograder.core.submission import section_file

    assert section_file(tmp_path, one(tmp_path).section) == name  # the batch's hashes, the gradebook: the same file


def test_its_own_name_wins_over_a_copy(tmp_path):
    copy(EXAMPLES / "correct" / f"{SECTION}.ipynb", tmp_path / f"{SECTION}.ipynb")
    copy(EXAMPLES / "partial" / f"{SECTION}.ipynb", tmp_path / "02_softmax (1).ipynb")
    source = one(tmp_path)
    assert source.path == tmp_path / f"{SECTION}.ipynb" and not source.found.by_content
    assert not any("under its name" in note for note in source.extracted.notes)


def test_two_copies_of_one_section_are_not_guessed(tmp_path):
    for name in ("a.ipynb", "copy/b.ipynb"):
        copy(EXAMPLES / "partial" / f"{SECTION}.ipynb", tmp_path / name)
    copy(EXAMPLES / "correct" / "01_scores.ipynb", tmp_path / "c.ipynb")
    source = one(tmp_path)
    assert source.path is None and source.extracted.kind == "ambiguous"
    assert "'a.ipynb', 'copy/b.ipynb'" in source.extracted.problem and "c.ipynb" not in source.extracted.problem
    assert one(tmp_path, "01_scores").path == tmp_path / "c.ipynb"  # the other section is still graded


def test_a_decoy_holding_every_section_is_taken_for_none(tmp_path):
    decoy(tmp_path / "everything.ipynb")
    source = one(tmp_path)
    assert source.path is None and source.extracted.kind == "not_handed_in"
    assert "'everything.ipynb'" in source.extracted.problem  # the student is told what was found
    copy(EXAMPLES / "partial" / f"{SECTION}.ipynb", tmp_path / "mine.ipynb")
    assert one(tmp_path).path == tmp_path / "mine.ipynb"  # the decoy does not make the real one ambiguous


def test_a_linked_notebook_or_folder_is_never_read(tmp_path):
    outside = copy(EXAMPLES / "correct" / f"{SECTION}.ipynb", tmp_path / "outside" / "answers.ipynb")
    folder = tmp_path / "student"
    folder.mkdir()
    (folder / "mine.ipynb").symlink_to(outside)
    (folder / "linked").symlink_to(outside.parent, target_is_directory=True)
    source = one(folder)
    assert source.path is None and source.extracted.kind == "not_handed_in"
    assert "'mine.ipynb'" in source.extracted.problem and "answers" not in source.extracted.problem


def test_a_notebook_given_by_name_as_a_link_is_still_refused(tmp_path):
    outside = copy(EXAMPLES / "correct" / f"{SECTION}.ipynb", tmp_path / "outside.ipynb")
    folder = tmp_path / "student"
    folder.mkdir()
    (folder / f"{SECTION}.ipynb").symlink_to(outside)
    copy(EXAMPLES / "partial" / f"{SECTION}.ipynb", folder / "other.ipynb")
    source = one(folder)
    assert source.path == folder / f"{SECTION}.ipynb" and "symbolic link" in source.extracted.problem


# --------------------------------------------------------------------------- a hostile folder: bounded


def test_ten_thousand_notebooks_are_examined_within_bounds(tmp_path):
    from autograder.core import matching

    for index in range(10_000):
        (tmp_path / f"n{index:05d}.ipynb").write_text('{"cells": []}')
    started = time.monotonic()
    source = one(tmp_path)
    seconds = time.monotonic() - started
    assert seconds < 5, seconds
    assert source.path is None and source.found.stopped_early
    assert any(f"only the first {matching.MAX_ENTRIES} entries" in note for note in source.extracted.notes)
    assert "and 9990 more" not in source.extracted.problem and " more" in source.extracted.problem
    listed = matching.listing(tmp_path)  # what the walk took from the folder: no more than its bound
    assert len(listed.files) == matching.MAX_ENTRIES and listed.stopped_early


def test_a_huge_file_is_never_read(tmp_path):
    with open(tmp_path / "huge.ipynb", "wb") as handle:  # 1 GiB, sparse: nothing is written to disk
        handle.truncate(1024 ** 3)
    copy(EXAMPLES / "partial" / f"{SECTION}.ipynb", tmp_path / "mine.ipynb")
    started = time.monotonic()
    source = one(tmp_path)
    assert time.monotonic() - started < 2
    assert source.path == tmp_path / "mine.ipynb"


# --------------------------------------------------------------------------- the class table, Gradescope


def test_a_folder_with_only_another_name_is_a_student(tmp_path):
    from autograder.instructor.roster import discover

    copy(EXAMPLES / "partial" / f"{SECTION}.ipynb", tmp_path / "alice" / "Untitled.ipynb")
    (tmp_path / "carol").mkdir()
    (tmp_path / "carol" / "notes.ipynb").write_text("{}")
    (tmp_path / "empty").mkdir()
    assert list(discover(tmp_path)) == ["alice", "carol"]


def stored(*sections):
    from autograder.core.results import GradeResult
    from autograder.instructor.student_files import Stored

    return Stored("s", GradeResult("s", "cpu", list(sections)), {"grader_errors": []})


def test_the_status_names_the_files_found_and_survives_the_record():
    from autograder.core.record import from_record, to_record
    from autograder.core.results import SectionResult
    from autograder.instructor.grades_table import status_of

    taken = SectionResult("02_softmax", "t", handed_in_as="02_softmax (1).ipynb")
    both = SectionResult("03_trainable_qkv", "t", files_found=["a.ipynb", "b.ipynb"], ambiguous=True)
    lost = SectionResult("04_causal_mask", "t", files_found=["02_softmax (1).ipynb", "a.ipynb", "Untitled.ipynb",
                                                             "README.md", "01_scores.ipynb"])
    also = SectionResult("05_padding_mask", "t", files_found=lost.files_found)
    result = stored(taken, both, lost, also)
    status = status_of(result)
    assert status == ("graded; 02_softmax from '02_softmax (1).ipynb'; 03_trainable_qkv not graded, several "
                      "notebooks hold it: 'a.ipynb', 'b.ipynb'; 04_causal_mask, 05_padding_mask not found in "
                      "'Untitled.ipynb'")
    result.grade = from_record(json.loads(json.dumps(to_record(result.grade))))
    assert status_of(result) == status
    assert status_of(stored(SectionResult("02_softmax", "t"))) == "graded"


def test_gradescope_names_what_was_uploaded_and_what_was_graded(tmp_path):
    from autograder.core.grade import run_checks
    from autograder.core.submission import locate

    copy(EXAMPLES / "partial" / f"{SECTION}.ipynb", tmp_path / "02_softmax (1).ipynb")
    (tmp_path / "notes.txt").write_text("my notes")
    result = run_checks(locate(tmp_path), "cpu", launcher=zygote())
    output = result.to_gradescope()["output"]
    assert "graded '02_softmax (1).ipynb'" in output
    assert "01_scores.ipynb was not handed in (the submission holds '02_softmax (1).ipynb', 'notes.txt'" in output
    by_id = {section.id: section for section in result.sections}
    assert 0 < by_id[SECTION].score < by_id[SECTION].max_score


def test_a_new_file_in_the_folder_grades_the_student_again(tmp_path):
    """The batch's hash of a student's files covers what a missing section's message names, so the
    message and the status never go stale."""
    from autograder.instructor.student_files import section_hashes

    copy(EXAMPLES / "partial" / "01_scores.ipynb", tmp_path / "01_scores.ipynb")
    before = section_hashes(tmp_path, [SECTION])
    (tmp_path / "Untitled.ipynb").write_text("{}")
    assert section_hashes(tmp_path, [SECTION]) != before
