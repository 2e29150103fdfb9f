"""The code a class was given for a section: every release its students may have started from.

The similarity report subtracts the released code from each student's (it is
everyone's, not evidence). A class is given one of several releases of a
section: the course's English notebook (student_template/), its Chinese one
(student_template/zh/: the same code with Chinese comments, docstrings and
messages, and a `choose_language("zh")` line), or the instructor's own
release of the assignment in an nbgrader course folder (release/<assignment>/,
whatever they changed in it). Subtracting the English notebook alone left a
Chinese class's given code counted as its students' own, so that two blank
Chinese students were 1.00 alike.

Every release found is subtracted from every student, not one chosen per
student: a student who edited every given cell (a comment, a blank line)
matches no release better than another, and choosing wrong would bring the
accusation back. The releases hold the same code but for their words, so
subtracting all of them removes nothing a student wrote.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autograder.core.extract import extract
from autograder.core.sections import Section

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = (ROOT / "student_template", ROOT / "student_template" / "zh")  # English, Chinese
RELEASE = "release"  # nbgrader's folder of the released assignments, beside submitted/


@dataclass(frozen=True)
class Released:
    """A section's given code, every release of it together."""
    notebooks: tuple[Path, ...]  # the released notebooks read
    cells: tuple[tuple, ...]  # each release's extracted code cells (core.extract)
    sources: frozenset[str]  # the source of every code cell of every release, as the notebooks hold it


def course_releases(class_dir: Path | None) -> tuple[Path, ...]:
    """The release/ folder of the nbgrader course `class_dir` is (or whose submitted/ it is), if any."""
    if class_dir is None:
        return ()
    class_dir = Path(class_dir)
    for course in (class_dir, class_dir.parent if class_dir.name == "submitted" else None):
        if course is not None and (course / RELEASE).is_dir():
            return (course / RELEASE,)
    return ()


def release_notebooks(section: Section, courses: tuple[Path, ...] = ()) -> tuple[Path, ...]:
    """The section's notebook in each shipped template and in every assignment of the courses' release
    folders (an assignment may be named otherwise than the section: the notebook's name finds it)."""
    found = [folder / section.notebook for folder in SHIPPED]
    for release in courses:
        found += sorted(release.glob(f"*/{section.notebook}"))
    return tuple(path for path in found if path.is_file() and not path.is_symlink())


def released(section: Section, courses: tuple[Path, ...] = ()) -> Released:
    """Every release's code cells of `section`; a release that cannot be read is not given code."""
    import json

    notebooks, cells, sources = [], [], set()
    for path in release_notebooks(section, courses):
        data = path.read_bytes()
        try:
            extracted = extract(path.name, data)
            notebook = json.loads(data)
        except (ValueError, RecursionError):
            continue
        notebooks.append(path)
        cells.append(tuple(extracted.cells))
        sources.update(cell_text(cell) for cell in code_cells(notebook))
    return Released(tuple(notebooks), tuple(cells), frozenset(sources))


def code_cells(notebook) -> list:
    cells = notebook.get("cells", []) if isinstance(notebook, dict) else []
    return [cell for cell in cells if isinstance(cell, dict) and cell.get("cell_type") == "code"]


def cell_text(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(part for part in source if isinstance(part, str)) if isinstance(source, list) else str(source)
