"""Make a section's nbgrader source notebook from its spec and its reference solutions.

Each kind of spec cell (`# %% [kind]`) becomes one kind of notebook cell, with the nbgrader
metadata of its role; the test cells' points are shared out afterwards (course/builder/points.py).
"""
from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import nbformat

from autograder.core.sections import Section
from course.builder.layout import ROOT, BuildError
from course.builder.points import share_points
from course.builder.reference import BEGIN, SolutionModule, provided_code, read_solution_module, \
    solution_regions, strip_blank_edges
from course.builder.stated_rules import stated
from course.builder.specs import SpecCell, insert_common_setup, markdown_source, read_spec, weight

KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}
LANGUAGE_INFO = {"name": "python"}


def notebook_metadata() -> nbformat.NotebookNode:
    """The notebook-level metadata every generated notebook carries (nothing that varies by machine)."""
    return nbformat.from_dict({"kernelspec": dict(KERNELSPEC), "language_info": dict(LANGUAGE_INFO)})


def notebook_text(nb: nbformat.NotebookNode) -> str:
    """Canonical serialisation (sorted keys, one-space indent, trailing newline)."""
    text = nbformat.writes(nb, version=4)
    return text if text.endswith("\n") else text + "\n"


def _nbgrader(grade_id: str, *, solution=False, grade=False, locked=False, points=None) -> dict:
    meta = {
        "grade": grade,
        "grade_id": grade_id,
        "locked": locked,
        "schema_version": 3,
        "solution": solution,
        "task": False,
    }
    if grade:
        meta["points"] = points
    return {"nbgrader": meta}


class SourceNotebook:
    """The cells of one section's source notebook, made one spec cell at a time."""

    def __init__(self, section: Section, spec_path: Path, module: SolutionModule, root: Path = ROOT):
        self.section, self.spec_path, self.module, self.root = section, spec_path, module, root
        self.cells: list = []
        self.tests: list[tuple[nbformat.NotebookNode, str, Fraction]] = []  # each test cell, its name, its weight
        self.solved: list[str] = []
        self.provided: list[str] = []
        self._used: set[str] = set()

    def grade_id(self, wanted: str) -> str:
        """`wanted`, or `wanted_2`, `wanted_3`, ... where it is taken: nbgrader's ids are unique."""
        candidate, suffix = wanted, 2
        while candidate in self._used:
            candidate, suffix = f"{wanted}_{suffix}", suffix + 1
        self._used.add(candidate)
        return candidate

    def add(self, cell: SpecCell) -> None:
        """The notebook cell of one spec cell, made by the maker of its kind (MAKERS)."""
        where = f"{self.spec_path}:{cell.line_number}"
        code = "\n".join(strip_blank_edges(cell.lines))
        self.MAKERS[cell.kind](self, cell, code, where)

    def _add_markdown(self, cell: SpecCell, code: str, where: str) -> None:
        self.cells.append(nbformat.v4.new_markdown_cell(markdown_source(cell, self.spec_path)))

    def _add_code(self, cell: SpecCell, code: str, where: str) -> None:
        self.cells.append(nbformat.v4.new_code_cell(code))

    def _add_setup(self, cell: SpecCell, code: str, where: str) -> None:
        meta = _nbgrader(self.grade_id("setup"), locked=True)
        self.cells.append(nbformat.v4.new_code_cell(insert_common_setup(code), metadata=meta))

    def _add_solution(self, cell: SpecCell, code: str, where: str) -> None:
        (name,) = cell.args
        section, module = self.section, self.module
        if name not in section.names:
            raise BuildError(f"{where}: {name!r} is not a graded name of {section.id} {section.names}")
        if name in self.solved:
            raise BuildError(f"{where}: a second solution cell for {name!r}")
        if name not in module.blocks:
            raise BuildError(f"{where}: {module.path} has no block `# %% {name}`")
        if not solution_regions(module.blocks[name], name):
            raise BuildError(f"{where}: block {name!r} of {module.path} has no {BEGIN} region")
        self.solved.append(name)
        meta = _nbgrader(self.grade_id(name), solution=True)
        self.cells.append(nbformat.v4.new_code_cell(module.blocks[name], metadata=meta))

    def _add_provided(self, cell: SpecCell, code: str, where: str) -> None:
        (item,) = cell.args
        if item not in self.section.provided:
            raise BuildError(
                f"{where}: {item!r} is not listed as provided for {self.section.id} {self.section.provided}")
        self.provided.append(item)
        meta = _nbgrader(self.grade_id(f"provided_{item.partition(':')[2]}"), locked=True)
        self.cells.append(nbformat.v4.new_code_cell(provided_code(item, self.root), metadata=meta))

    def _add_test(self, cell: SpecCell, code: str, where: str) -> None:
        name, text = cell.args
        if not re.fullmatch(r"\w+", name):
            raise BuildError(f"{where}: test name must be an identifier, got {name!r}")
        if not code:
            raise BuildError(f"{where}: empty test cell")
        # no points yet: share_points gives each test cell its share once all are known
        meta = _nbgrader(self.grade_id(f"test_{name}"), grade=True, locked=True, points=None)
        self.cells.append(nbformat.v4.new_code_cell(code, metadata=meta))
        self.tests.append((self.cells[-1], name, weight(text, where)))

    # spec cell kind (specs.SPEC_KINDS) -> the method that makes its notebook cell
    MAKERS = {"markdown": _add_markdown, "code": _add_code, "setup": _add_setup, "solution": _add_solution,
              "provided": _add_provided, "test": _add_test}

    def check_complete(self) -> None:
        """Every graded name solved, in the registry's order; the provided cells those listed."""
        section, path = self.section, self.spec_path
        missing = [name for name in section.names if name not in self.solved]
        if missing:
            raise BuildError(f"{path}: no [solution] cell for {missing}")
        if self.solved != list(section.names):
            raise BuildError(f"{path}: solution cells must follow the registry order {list(section.names)}")
        if sorted(self.provided) != sorted(section.provided):
            raise BuildError(
                f"{path}: [provided] cells {self.provided} do not match the registry {list(section.provided)}")

    def notebook(self) -> nbformat.NotebookNode:
        nb = nbformat.v4.new_notebook()
        nb.metadata = notebook_metadata()
        nb.metadata["course"] = {"language": "en"}  # the prose's language (course/localized.py writes the others)
        nb.cells = self.cells
        for index, cell in enumerate(self.cells):
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            cell.id = grade_id or f"cell-{index:02d}"
        return stated(nb, self.section)  # the section's rules, where the student writes (builder/stated_rules.py)


def make_source_notebook(section: Section, spec_path: Path, cells: list[SpecCell], module: SolutionModule,
                         root: Path = ROOT) -> SourceNotebook:
    """The source notebook of `section` from its spec's cells, its test cells without points yet."""
    source = SourceNotebook(section, spec_path, module, root)
    for cell in cells:
        source.add(cell)
    source.check_complete()
    return source


def build_source_notebook(section: Section, spec_path: Path, root: Path = ROOT,
                          maximum: float | None = None) -> nbformat.NotebookNode:
    """The nbgrader source notebook of `section` (solutions between the markers), read and made in
    one go: its test cells share out `maximum` points (default: the grader's maximum of the section)."""
    module = read_solution_module(section.solution_module, root)
    source = make_source_notebook(section, spec_path, read_spec(spec_path), module, root)
    share_points(section, source.tests, str(spec_path), maximum)
    return source.notebook()
