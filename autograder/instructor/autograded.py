"""nbgrader's autograded copy of a student's notebook, with the grader's results in it.

For every section score recorded, the student's notebook is also written where
nbgrader's own `autograde` would leave it, `COURSE/autograded/<student>/<section>/<section>.ipynb`
(COURSE: the folder holding the students' `submitted/` folder, else the gradebook
file's folder). Its autograded test cells carry the grader's results as their
outputs: the section's score, its notes and every check with its points and, when
it failed, its message, all under the first test cell (a pointer under the
others), since the hidden checks are not one per cell. With the submission, its
grades and its comments already in the gradebook (`add_submission` creates a grade
per graded cell and a comment per answer cell), `nbgrader generate_feedback
<section>` then writes `feedback/<student>/<section>/<section>.html` with the
scores and those messages, and `nbgrader release_feedback` hands it back. An
instructor's comments typed in the formgrader are never touched.

A notebook is the student's file, so it is rebuilt rather than copied, because
the feedback page renders it as HTML: the outputs the student saved are dropped
(the grader's are plain-text stream outputs, which nbconvert escapes); each
cell's nbgrader metadata, and the source of every locked cell, come from the
gradebook (as nbgrader's autograde restores them); a Markdown cell is rendered
only when it is one of the instructor's (the released notebook's, or a locked
cell), any other one is shown as text in a fenced block; a graded cell the
student deleted comes back from the gradebook so that its score shows. A file
that is not a notebook gives a notebook of the gradebook's cells, with the
grader's message saying why.

The results come from the grade's own record (a SectionResult), never from the results.json
rendered for Gradescope; the student's files are read through core/files.read_inside only.
"""
from __future__ import annotations

import warnings
from pathlib import Path

from autograder.core.files import read_inside, write_atomically
from autograder.core.results import SectionResult
from autograder.core.sections import BY_ID, is_bonus
from autograder.core.submission import section_file
from autograder.feedback.formats import fenced, plain_text
from autograder.i18n import _, _f
from autograder.instructor.autograded_mark import write_mark
from autograder.instructor.cell_scores import cell_shares
from autograder.instructor.exchange_files import write_exchange_files

AUTOGRADED = "autograded"  # nbgrader's CourseDirectory.autograded_directory (the course's nbgrader_config.py)
RELEASE = "release"


def folder_name(student: str) -> str | None:
    """`student` as one folder name under autograded/, or None when it cannot be one."""
    if student in ("", ".", "..") or any(c in student for c in "/\\\0") or student != student.strip("\n"):
        return None
    return student


def _source(cell) -> str:
    """A cell's source as text, whatever shape the student's file gave it."""
    source = cell.get("source", "") if isinstance(cell, dict) else ""
    if isinstance(source, list):
        source = "".join(part for part in source if isinstance(part, str))
    return source if isinstance(source, str) else ""


def as_plain_markdown(text: str) -> str:
    """Student text in a Markdown cell, shown as itself: a fenced block, which Markdown never interprets
    (the feedback page renders Markdown cells as HTML, and a student's cell could hold a script)."""
    return "\n".join(fenced(plain_text(text)))


def _read_notebook(root: Path, relative: str | None, limit: int = 16 * 1024 * 1024):
    """The notebook `root/relative` (read without following links) or None when it is not one."""
    import nbformat

    if not relative or not relative.endswith(".ipynb"):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # nbformat's comments on an old or odd notebook
            notebook = nbformat.reads(read_inside(root, relative, limit=limit).decode("utf-8"), as_version=4)
    except Exception:  # not UTF-8, not JSON, not a notebook, a link: the grader said why; cells come from the gradebook
        return None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    return notebook if isinstance(cells, list) else None


def released_markdown(course: Path, section_id: str) -> set[str]:
    """The instructor's Markdown cells of the released notebook: shown rendered; any other is the student's."""
    released = _read_notebook(course, f"{RELEASE}/{section_id}/{section_id}.ipynb")
    if released is None:
        return set()
    return {_source(c) for c in released.cells if isinstance(c, dict) and c.get("cell_type") == "markdown"}


def _nbgrader_metadata(name: str, cells: dict) -> dict:
    """The cell's nbgrader metadata as the gradebook has it (the student's copy is never trusted)."""
    grade = cells["grade"].get(name)
    metadata = {"grade": grade is not None, "grade_id": name, "locked": bool(cells["source"][name].locked),
                "schema_version": 3, "solution": name in cells["solution"], "task": name in cells["task"]}
    if grade is not None or name in cells["task"]:
        metadata["points"] = float((grade or cells["task"][name]).max_score or 0)
    return metadata


def _gradebook_cells(notebook) -> dict:
    return {"source": {c.name: c for c in notebook.source_cells},
            "grade": {c.name: c for c in notebook.grade_cells},
            "solution": {c.name for c in notebook.solution_cells},
            "task": {c.name: c for c in notebook.task_cells}}


def _trusted_cell(name: str, student_source: str | None, cells: dict):
    """The cell `name` of the gradebook, with the student's source where the cell was theirs to write."""
    import nbformat

    stored = cells["source"][name]
    source = (stored.source or "") if stored.locked or student_source is None else student_source
    if stored.cell_type == "markdown":
        # an unlocked Markdown answer is the student's text: shown as text, never rendered
        cell = nbformat.v4.new_markdown_cell(source if stored.locked else as_plain_markdown(source))
    else:
        cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = _nbgrader_metadata(name, cells)
    return cell


def rebuilt_cells(submitted, cells: dict, known_markdown: set[str]) -> list:
    """The student's cells made safe to render: outputs dropped (they are whatever the student saved),
    nbgrader metadata and locked cells from the gradebook, Markdown not the instructor's shown as text.
    Graded cells the student deleted come back from the gradebook at the end, so every score shows."""
    import nbformat

    rebuilt, used = [], set()
    for cell in submitted.cells if submitted is not None else []:
        if not isinstance(cell, dict):
            continue
        meta = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
        nbgrader = meta.get("nbgrader") if isinstance(meta.get("nbgrader"), dict) else {}
        name = nbgrader.get("grade_id")
        if isinstance(name, str) and name in cells["source"] and name not in used:
            used.add(name)
            rebuilt.append(_trusted_cell(name, _source(cell), cells))
        elif cell.get("cell_type") == "code":
            rebuilt.append(nbformat.v4.new_code_cell(_source(cell)))
        elif cell.get("cell_type") == "markdown" and _source(cell) in known_markdown:
            rebuilt.append(nbformat.v4.new_markdown_cell(_source(cell)))
        elif _source(cell).strip():  # a student's Markdown or raw cell
            rebuilt.append(nbformat.v4.new_markdown_cell(as_plain_markdown(_source(cell))))
    graded = set(cells["grade"]) | set(cells["solution"]) | set(cells["task"])
    for name in cells["source"]:
        if name in graded and name not in used:
            rebuilt.append(_trusted_cell(name, None, cells))
    return rebuilt


def check_lines(checks: list) -> list[str]:
    """The grader's per-check results, as plain lines."""
    lines = []
    for check in checks:
        mark = _("passed") if check.passed else _("FAILED")  # a bonus check's own points, as every check's
        lines.append(_f("{mark}: {check} ({points:g} / {max_points:g})", mark=mark, check=plain_text(check.name),
                        points=check.points, max_points=check.max_points))
        message = plain_text(check.message).strip("\n")
        lines += [f"    {line}" for line in message.splitlines()] if not check.passed and message else []
    return lines


def section_feedback(section: SectionResult) -> list[str]:
    """The grader's notes and per-check results of one section, as plain lines."""
    return note_lines(section) + check_lines(section.checks)


def note_lines(section: SectionResult) -> list[str]:
    return [_f("note: {note}", note=plain_text(note.strip())) for note in section.notes]


def _stream(text: str):
    import nbformat

    # a stream output is plain text: nbconvert and the formgrader escape it, whatever the student wrote
    return nbformat.v4.new_output("stream", name="stdout", text=text)


def attach_feedback(cells: list, section: SectionResult) -> str | None:
    """The grader's results as the outputs of the autograded cells: under each, the checks that scored
    it (instructor/cell_scores.py), the section's notes under the first; where the checks cannot be told
    apart, all of them under the first and a pointer to it under the others. Returns the first one's
    grade_id (None if there is none)."""
    section_id = section.id
    bonus = is_bonus(section_id)  # a bonus section's test cells carry 0 points (extra credit)
    graded = [c for c in cells if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("grade")
              and (c.metadata["nbgrader"].get("points") or bonus)]
    if not graded:
        return None
    ids = [c.metadata["nbgrader"]["grade_id"] for c in graded]
    shares = cell_shares(section, [(i, float(c.metadata["nbgrader"].get("points") or 0)) for i, c in zip(ids, graded)],
                         bonus)
    apart = any(share.checks for share in shares.values())
    scored = _f("The course's hidden checks of {section}: {score:g} / {max_score:g} points.", section=section_id,
                score=section.score, max_score=section.max_score)
    how = (_("This section is a bonus: its points are extra credit, shared out over the test cells of this "
             "notebook, which count for 0 points (they add to your score, not to the maximum).") if bonus else
           _("Each test cell of this notebook scores what the checks below it scored.") if apart else
           _("Each test cell of this notebook gets that fraction of its points."))
    head = _f("{scored} {how}", scored=scored, how=how)
    for index, (cell, grade_id) in enumerate(zip(graded, ids)):
        notes = note_lines(section) if index == 0 else []
        if apart:
            text = [head] + notes + check_lines(shares[grade_id].checks)
        else:
            text = [head] + (section_feedback(section) if index == 0
                             else [_f("The checks and their messages are under test cell {cell}.", cell=ids[0])])
        cell.outputs = [_stream("\n".join(text) + "\n")]
    return ids[0]


def autograded_notebook(notebook, folder: Path | None, section: SectionResult, known_markdown: set[str]):
    """nbgrader's autograded copy of the student's notebook, with the grader's results in it."""
    import nbformat

    section_id = section.id
    relative = section_file(folder, BY_ID[section_id]) if folder is not None and section_id in BY_ID else None
    submitted = _read_notebook(folder, relative) if relative else None
    cells = rebuilt_cells(submitted, _gradebook_cells(notebook), known_markdown)
    attach_feedback(cells, section)
    built = nbformat.v4.new_notebook(cells=cells)
    built.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    built.metadata["language_info"] = {"name": "python"}
    return built


def write_autograded(gradebook, course: Path, student: str, section: SectionResult,
                     folder: Path | None) -> Path | None:
    """Write autograded/<student>/<section>/<section>.ipynb, which generate_feedback and the formgrader
    read, with the files nbgrader's feedback steps need beside it (exchange_files) and this grader's
    mark (autograded_mark); returns its path, or None when the student's id cannot be a folder name."""
    import nbformat

    name = folder_name(student)
    if name is None:
        return None
    section_id = section.id
    notebook = gradebook.find_notebook(section_id, section_id)
    built = autograded_notebook(notebook, folder, section, released_markdown(course, section_id))
    target = course / AUTOGRADED / name / section_id / f"{section_id}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    text = nbformat.writes(built)
    write_atomically(target, text)
    write_exchange_files(target.parent, folder, section_id)
    write_mark(target.parent, text)
    return target
