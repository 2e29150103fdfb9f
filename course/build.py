"""Build every course notebook from the specs and the reference solutions.

    python -m course.build          # (re)write all generated files
    python -m course.build --check  # exit 1 and name every generated file that is out of date

Inputs (hand-written):
    course/notebooks/<id>.py         notebook spec of a section (teaching text, setup, visible tests);
                                     `# %% [test] <name> <weight>`: the cell's share of the section's
                                     points, which are the grader's (the points of the section's checks
                                     in autograder/checks/), so nbgrader and grades.csv count the same
    course/attention_plots.py        the plotting helper the notebooks import (`show_weights`)
    solutions/<module>.py            reference code, one `# %% <name>` block per graded name
    course/partial_submissions.py    what the partial example submission holds
    course/student_readme.md         the students' README, with {{placeholders}} for the torch
                                     releases the self-check accepts (autograder/instructor/selfcheck_export.py)
    assignments/nbgrader_config.py   the nbgrader course configuration

Outputs (generated, committed, never edited by hand):
    assignments/source/<id>/<id>.ipynb   nbgrader source notebook (solutions between markers)
    student_template/<id>.ipynb          released notebook (what students receive)
    examples/correct/<id>.ipynb          released notebook with the reference code filled in
    examples/partial/<id>.ipynb          released notebook with a mix of right, wrong and blank answers
    examples/correct_py/<id>.py          the reference code as one self-contained Python file
    student_template/attention_plots.py  a copy of the helper (students' repositories need the file)
    student_template/README.md           the students' README (install, check), torch range filled in
    student_template/grader/<wheel>.whl  the grader without the answers (`python -m autograder
                                         export-selfcheck`): students install it to run `check`
    assignments/source/<id>/attention_plots.py, README.md, grader/<wheel>.whl
                                         copies of the helper, the students' README (with a note on
                                         the section) and the wheel: nbgrader releases every file of
                                         the source folder with the notebook, so a folder released
                                         through nbgrader's exchange carries the self-check too. Real
                                         files, never links: assignments/ is a course directory that
                                         instructors copy to their JupyterHub as it is.
    attention_plots.py                   a symbolic link to the helper next to the other notebooks
                                         in examples/correct/ and examples/partial/
    assignments/zh/, student_template/zh/, locale/notebooks.pot
                                         the course in Chinese and the translators' template, written
                                         by course/localized.py from locale/zh_CN/LC_MESSAGES/notebooks.po
                                         (docs/translating.md)

A section whose spec does not exist yet gets only its `correct_py` file. Every
output is a pure function of the inputs: building twice gives identical bytes.
"""
from __future__ import annotations

import argparse
import copy
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import nbformat

from autograder.checks import declared
from autograder.instructor import selfcheck_export
from autograder.core.sections import SECTIONS, Section
from course.partial_submissions import SOLVED, STUB, Mistake, plan_for

ROOT = Path(__file__).resolve().parents[1]

BEGIN = "# BEGIN SOLUTION"
END = "# END SOLUTION"
STUB_LINES = ("# YOUR CODE HERE", "raise NotImplementedError()")  # nbgrader's python stub

KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}
LANGUAGE_INFO = {"name": "python"}

# Where the generated files go, relative to the repository root.
SOURCE_NB = "assignments/source/{id}/{id}.ipynb"
RELEASED_NB = "student_template/{id}.ipynb"
CORRECT_NB = "examples/correct/{id}.ipynb"
PARTIAL_NB = "examples/partial/{id}.ipynb"
CORRECT_PY = "examples/correct_py/{id}.py"
# The plotting helper and where its copies go (next to the notebooks that import it).
HELPER = "course/attention_plots.py"
HELPER_NAME = "attention_plots.py"
SOURCE_HELPER = "assignments/source/{id}/" + HELPER_NAME
SOURCE_README = "assignments/source/{id}/README.md"
SOURCE_GRADER = "assignments/source/{id}/grader"
TEMPLATE_HELPER = "student_template/" + HELPER_NAME
# The students' README: written from its source so that the torch range has one home.
README_SOURCE = "course/student_readme.md"
STUDENT_README = "student_template/README.md"
LINKED_HELPERS = tuple(f"{folder}/{HELPER_NAME}" for folder in ("examples/correct", "examples/partial"))
# The self-check wheel: its name carries the course version, so an older one is noticed as stale.
TEMPLATE_GRADER = "student_template/grader"
# Globs of generated files, so that a file that is no longer generated is noticed.
GENERATED_GLOBS = (
    "assignments/source/*/*.ipynb",
    "student_template/*.ipynb",
    "examples/correct/*.ipynb",
    "examples/partial/*.ipynb",
    "examples/correct_py/*.py",
    SOURCE_HELPER.format(id="*"),
    SOURCE_README.format(id="*"),
    SOURCE_GRADER.format(id="*") + "/*.whl",
    TEMPLATE_HELPER,
    STUDENT_README,
    *LINKED_HELPERS,
    f"{TEMPLATE_GRADER}/*.whl",
)


class BuildError(Exception):
    """A spec, a solutions module or the partial data does not fit the contract."""


# --------------------------------------------------------------------------- solutions


@dataclass
class SolutionModule:
    """A solutions module split into its preamble and its `# %% <name>` blocks."""

    path: Path
    preamble: str
    blocks: dict[str, str]

    def imports(self) -> list[str]:
        """The preamble's import lines, except imports from the solutions package."""
        lines = []
        for line in self.preamble.splitlines():
            if re.match(r"(import|from)\s", line) and not re.match(r"(from|import)\s+solutions\b", line):
                lines.append(line.rstrip())
        return lines


def _strip_blank_edges(lines: list[str]) -> list[str]:
    start, stop = 0, len(lines)
    while start < stop and not lines[start].strip():
        start += 1
    while stop > start and not lines[stop - 1].strip():
        stop -= 1
    return [line.rstrip() for line in lines[start:stop]]


def read_solution_module(module: str, root: Path = ROOT) -> SolutionModule:
    """Parse `solutions.<x>` (a dotted module name) from the files under `root`."""
    path = root.joinpath(*module.split(".")).with_suffix(".py")
    if not path.is_file():
        raise BuildError(f"{path}: no such solutions module")
    preamble: list[str] = []
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("# %%"):
            name = line[4:].strip()
            if not name:
                current = None  # an anonymous cell ends the previous block
                continue
            if name in blocks:
                raise BuildError(f"{path}:{number}: block {name!r} appears twice")
            current = blocks[name] = []
        elif current is not None:
            current.append(line)
        elif not blocks:
            preamble.append(line)
    result = {}
    for name, lines in blocks.items():
        code = "\n".join(_strip_blank_edges(lines))
        _solution_regions(code, f"{path} block {name!r}")  # validates the markers
        result[name] = code
    return SolutionModule(path, "\n".join(preamble), result)


def _solution_regions(code: str, where: str) -> list[tuple[int, int]]:
    """(begin, end) line indices of every BEGIN/END SOLUTION pair in `code`."""
    regions, begin = [], None
    for index, line in enumerate(code.split("\n")):
        text = line.strip()
        if text == BEGIN:
            if begin is not None:
                raise BuildError(f"{where}: nested {BEGIN}")
            begin = index
        elif text == END:
            if begin is None:
                raise BuildError(f"{where}: {END} without {BEGIN}")
            regions.append((begin, index))
            begin = None
        elif "BEGIN SOLUTION" in text or "END SOLUTION" in text:
            raise BuildError(f"{where}: write the markers alone on their line: {text!r}")
    if begin is not None:
        raise BuildError(f"{where}: {BEGIN} without {END}")
    return regions


def strip_markers(code: str) -> str:
    """The code with its BEGIN/END SOLUTION lines removed: the complete reference."""
    return "\n".join(line for line in code.split("\n") if line.strip() not in (BEGIN, END))


def solution_body_lines(code: str) -> list[str]:
    """The lines between the markers (what nbgrader hides from students)."""
    lines = code.split("\n")
    body = []
    for begin, end in _solution_regions(code, "block"):
        body.extend(lines[begin + 1 : end])
    return body


def fill_regions(code: str, replacements: list[str | None], where: str) -> str:
    """Replace each solution region: None keeps the reference, STUB puts nbgrader's stub
    (`raise NotImplementedError()`),
    any other text is dedented and indented like the region's BEGIN marker."""
    lines = code.split("\n")
    regions = _solution_regions(code, where)
    if len(replacements) != len(regions):
        raise BuildError(f"{where}: {len(replacements)} replacement(s) for {len(regions)} solution region(s)")
    out: list[str] = []
    previous_end = -1
    for (begin, end), replacement in zip(regions, replacements):
        out.extend(lines[previous_end + 1 : begin])
        indent = re.match(r"\s*", lines[begin]).group(0)
        if replacement is None:
            out.extend(lines[begin + 1 : end])
        else:
            text = "\n".join(STUB_LINES) if replacement == STUB else textwrap.dedent(replacement)
            out.extend(indent + line if line.strip() else "" for line in _strip_blank_edges(text.split("\n")))
        previous_end = end
    out.extend(lines[previous_end + 1 :])
    return "\n".join(out)


def stubbed(code: str, where: str = "block") -> str:
    """The code as students receive it: every solution region replaced by nbgrader's stub."""
    return fill_regions(code, [STUB] * len(_solution_regions(code, where)), where)


# --------------------------------------------------------------------------- specs


@dataclass
class SpecCell:
    kind: str  # markdown, setup, solution, provided, test, code
    args: tuple[str, ...]
    lines: list[str]
    line_number: int


SPEC_KINDS = {"markdown": 0, "setup": 0, "solution": 1, "provided": 1, "test": 2}


NOTEBOOK_SETUP = "course/notebook_setup.py"  # the start every setup cell shares: torch, the checks, the example
NOTEBOOK_SETUP_MARK = "# <common setup>"
NOTEBOOK_SETUP_START = "# --- the notebooks' copy starts here ---"


def common_setup() -> str:
    """The part of course/notebook_setup.py that every notebook's setup cell starts with (one source)."""
    text = (ROOT / NOTEBOOK_SETUP).read_text(encoding="utf-8")
    if NOTEBOOK_SETUP_START not in text:
        raise BuildError(f"{NOTEBOOK_SETUP}: the line {NOTEBOOK_SETUP_START!r} is missing")
    return text.split(NOTEBOOK_SETUP_START + "\n", 1)[1].strip("\n")


def with_common_setup(code: str) -> str:
    """A setup cell's code with its `# <common setup>` line replaced by the shared setup."""
    return "\n".join(common_setup() if line == NOTEBOOK_SETUP_MARK else line for line in code.split("\n"))


def read_spec(path: Path) -> list[SpecCell]:
    """Split a spec file into cells; anything before the first `# %%` line is ignored."""
    cells: list[SpecCell] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("# %%"):
            rest = line[4:].strip()
            if not rest:
                cells.append(SpecCell("code", (), [], number))
                continue
            match = re.fullmatch(r"\[(\w+)\]\s*(.*)", rest)
            if not match or match.group(1) not in SPEC_KINDS:
                raise BuildError(f"{path}:{number}: unknown cell header {line!r}")
            kind, args = match.group(1), tuple(match.group(2).split())
            if len(args) != SPEC_KINDS[kind]:
                raise BuildError(
                    f"{path}:{number}: [{kind}] takes {SPEC_KINDS[kind]} argument(s), got {len(args)}: {line!r}"
                )
            cells.append(SpecCell(kind, args, [], number))
        elif cells:
            cells[-1].lines.append(line)
    if not cells:
        raise BuildError(f"{path}: no `# %%` cells")
    return cells


def _markdown_source(cell: SpecCell, path: Path) -> str:
    out = []
    for offset, line in enumerate(cell.lines, 1):
        if line.startswith("# "):
            out.append(line[2:])
        elif line.rstrip() in ("#", ""):
            out.append("")
        else:
            raise BuildError(
                f"{path}:{cell.line_number + offset}: markdown lines must start with '# ' (got {line!r})"
            )
    return "\n".join(_strip_blank_edges(out))


def _weight(text: str, where: str) -> Fraction:
    try:
        value = Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise BuildError(f"{where}: weight must be a number, got {text!r}") from None
    if value <= 0:
        raise BuildError(f"{where}: weight must be positive, got {text!r}")
    return value


# nbgrader's points of a test cell are multiples of a quarter point, as the checks' points are.
POINT_GRID = Fraction(1, 4)


def _number(value: Fraction) -> int | float:
    return int(value) if value.denominator == 1 else float(value)


def apportion(maximum: float, weights: list, where: str) -> list[int | float]:
    """`maximum` points shared out over cells in proportion to `weights`, in multiples of
    POINT_GRID, summing to exactly `maximum` (the units left over after rounding down go to
    the largest remainders, the earlier cell first on a tie)."""
    if not weights:
        raise BuildError(f"{where}: no [test] cell to carry the section's {maximum:g} points")
    units = Fraction(maximum) / POINT_GRID
    if units.denominator != 1:
        raise BuildError(f"{where}: the section's maximum {maximum:g} is not a multiple of {float(POINT_GRID):g} points")
    total = sum(Fraction(w) for w in weights)
    exact = [units * Fraction(w) / total for w in weights]
    shares = [math.floor(x) for x in exact]
    left = int(units) - sum(shares)
    for index in sorted(range(len(weights)), key=lambda i: (shares[i] - exact[i], i))[:left]:
        shares[index] += 1
    for index, share in enumerate(shares):
        if share == 0:
            raise BuildError(f"{where}: test cell #{index + 1} gets no points of the section's {maximum:g}: "
                             "raise its weight")
    return [_number(share * POINT_GRID) for share in shares]


def section_maximum(section: Section) -> float:
    """The most points the grader gives `section` (its maximum in grades.csv): the sum of the
    points its checks declare with @check, visible and hidden (autograder/checks/), counted
    as the grader's pytest run collects them (module-level functions named test_*)."""
    module_name = f"autograder.checks.test_{section.id}"
    try:
        checks = declared(section.id)
    except ModuleNotFoundError as error:
        if error.name != module_name:
            raise  # the check file exists but imports something missing: show that
        raise BuildError(f"{section.id}: no check file {module_name}") from None
    total = sum(grading["points"] for grading in checks.values())
    if total <= 0:
        raise BuildError(f"{section.id}: its checks carry no points")
    return total


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


def _unique(grade_id: str, used: set[str]) -> str:
    candidate, suffix = grade_id, 2
    while candidate in used:
        candidate, suffix = f"{grade_id}_{suffix}", suffix + 1
    used.add(candidate)
    return candidate


def _new_notebook(cells: list) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata = nbformat.from_dict({"kernelspec": dict(KERNELSPEC), "language_info": dict(LANGUAGE_INFO)})
    nb.metadata["course"] = {"language": "en"}  # the prose's language (course/localized.py writes the others)
    nb.cells = cells
    for index, cell in enumerate(cells):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        cell.id = grade_id or f"cell-{index:02d}"
    return nb


def provided_code(item: str, root: Path = ROOT) -> str:
    """The complete code of a `module:name` block (markers removed)."""
    module, _, name = item.partition(":")
    blocks = read_solution_module(module, root).blocks
    if name not in blocks:
        raise BuildError(f"{item}: no block `# %% {name}` in {module}")
    return strip_markers(blocks[name])


def build_source_notebook(section: Section, spec_path: Path, root: Path = ROOT,
                          maximum: float | None = None) -> nbformat.NotebookNode:
    """The nbgrader source notebook of `section` (solutions between the markers).

    Its test cells share out `maximum` points (default: the grader's maximum of the section,
    section_maximum) in proportion to the weights of their `[test] <name> <weight>` headers,
    so that nbgrader's gradebook and grades.csv count the same points per section."""
    module = read_solution_module(section.solution_module, root)
    spec = read_spec(spec_path)
    used: set[str] = set()
    cells = []
    tests: list[tuple[nbformat.NotebookNode, Fraction]] = []
    solved: list[str] = []
    provided: list[str] = []
    for cell in spec:
        where = f"{spec_path}:{cell.line_number}"
        code = "\n".join(_strip_blank_edges(cell.lines))
        if cell.kind == "markdown":
            cells.append(nbformat.v4.new_markdown_cell(_markdown_source(cell, spec_path)))
        elif cell.kind == "code":
            cells.append(nbformat.v4.new_code_cell(code))
        elif cell.kind == "setup":
            meta = _nbgrader(_unique("setup", used), locked=True)
            cells.append(nbformat.v4.new_code_cell(with_common_setup(code), metadata=meta))
        elif cell.kind == "solution":
            (name,) = cell.args
            if name not in section.names:
                raise BuildError(f"{where}: {name!r} is not a graded name of {section.id} {section.names}")
            if name in solved:
                raise BuildError(f"{where}: a second solution cell for {name!r}")
            if name not in module.blocks:
                raise BuildError(f"{where}: {module.path} has no block `# %% {name}`")
            if not _solution_regions(module.blocks[name], name):
                raise BuildError(f"{where}: block {name!r} of {module.path} has no {BEGIN} region")
            solved.append(name)
            meta = _nbgrader(_unique(name, used), solution=True)
            cells.append(nbformat.v4.new_code_cell(module.blocks[name], metadata=meta))
        elif cell.kind == "provided":
            (item,) = cell.args
            if item not in section.provided:
                raise BuildError(f"{where}: {item!r} is not listed as provided for {section.id} {section.provided}")
            provided.append(item)
            name = item.partition(":")[2]
            meta = _nbgrader(_unique(f"provided_{name}", used), locked=True)
            cells.append(nbformat.v4.new_code_cell(provided_code(item, root), metadata=meta))
        elif cell.kind == "test":
            name, weight = cell.args
            if not re.fullmatch(r"\w+", name):
                raise BuildError(f"{where}: test name must be an identifier, got {name!r}")
            if not code:
                raise BuildError(f"{where}: empty test cell")
            meta = _nbgrader(_unique(f"test_{name}", used), grade=True, locked=True, points=None)
            cells.append(nbformat.v4.new_code_cell(code, metadata=meta))
            tests.append((cells[-1], _weight(weight, where)))
    missing = [name for name in section.names if name not in solved]
    if missing:
        raise BuildError(f"{spec_path}: no [solution] cell for {missing}")
    if solved != list(section.names):
        raise BuildError(f"{spec_path}: solution cells must follow the registry order {list(section.names)}")
    if sorted(provided) != sorted(section.provided):
        raise BuildError(f"{spec_path}: [provided] cells {provided} do not match the registry {list(section.provided)}")
    maximum = section_maximum(section) if maximum is None else maximum
    shares = apportion(maximum, [weight for _, weight in tests], str(spec_path))
    for (cell, _), points in zip(tests, shares):
        # a bonus section's test cells carry 0 points: nbgrader's maximum leaves the bonus out, as ours
        # does, and `batch --gradebook` writes its points as extra credit (instructor/gradebook.py)
        cell.metadata["nbgrader"]["points"] = 0 if section.bonus else points
    return _new_notebook(cells)


# --------------------------------------------------------------------------- nbgrader


def helper_text(root: Path = ROOT) -> str:
    path = root / HELPER
    if not path.is_file():
        raise BuildError(f"{path}: missing plotting helper")
    return path.read_text(encoding="utf-8")


def notebook_table(sections: tuple[Section, ...] = SECTIONS) -> str:
    """The students' list of notebooks, from the registry: a new section appears in it by itself."""
    core = [s for s in sections if not s.bonus]
    lines = [f"{len(core)} notebooks, one per section, to work through in order"
             + (f", and {len(sections) - len(core)} bonus" if len(core) < len(sections) else "") + ":", "",
             "| notebook | section | you implement |", "|---|---|---|"]
    for s in sections:
        names = ", ".join(f"`{name}`" for name in s.names)
        lines.append(f"| `{s.notebook}` | {s.title}{' (bonus)' if s.bonus else ''} | {names} |")
    return "\n".join(lines)


def student_readme(root: Path = ROOT) -> str:
    """The students' README: its source with the notebooks and the self-check's torch releases filled in."""
    path = root / README_SOURCE
    if not path.is_file():
        raise BuildError(f"{path}: missing students' README source")
    values = {
        "notebooks": notebook_table(),
        "torch_pin": selfcheck_export.TORCH_TESTED[0],  # the course's own release, what students install
        "torch_range": selfcheck_export.TORCH_RANGE,
        "torch_tested": " and ".join(selfcheck_export.TORCH_TESTED),
    }
    text = path.read_text(encoding="utf-8")
    unknown = sorted(set(re.findall(r"\{\{(\w*)\}\}", text)) - set(values))
    if unknown:
        raise BuildError(f"{path}: unknown placeholder(s) {unknown}; known: {sorted(values)}")
    for name, value in values.items():
        text = text.replace("{{" + name + "}}", value)
    return text


def section_readme(section: Section, root: Path = ROOT) -> str:
    """The students' README as it comes with one section released through nbgrader's exchange:
    a note under its title says that this folder is one section and how to check it alone."""
    title, _, rest = student_readme(root).partition("\n")
    note = (
        f"This folder holds one section of the course, `{section.notebook}` ({section.title}), "
        "released on its own: each section comes with this README and the self-check in `grader/`. "
        "Install once (below), then check this notebook alone, in this folder with the environment "
        f"activated: `python -m autograder check --section {section.id}`."
    )
    return f"{title}\n\n" + "\n".join(textwrap.wrap(note, 78)) + "\n" + rest


def release(sources: dict[str, nbformat.NotebookNode], root: Path = ROOT) -> dict[str, nbformat.NotebookNode]:
    """Run `nbgrader generate_assignment` on each source notebook, in a scratch copy of
    the course directory (its gradebook and release/ never touch the repository).
    The plotting helper sits next to each source notebook, as in assignments/source/,
    and must come out next to the released one."""
    if not sources:
        return {}
    config = root / "assignments" / "nbgrader_config.py"
    if not config.is_file():
        raise BuildError(f"{config}: missing nbgrader configuration")
    released = {}
    with tempfile.TemporaryDirectory(prefix="course-build-") as tmp:
        course_dir = Path(tmp)
        shutil.copy(config, course_dir / "nbgrader_config.py")
        helper = helper_text(root)
        for section_id, nb in sources.items():
            target = course_dir / "source" / section_id / f"{section_id}.ipynb"
            target.parent.mkdir(parents=True)
            target.write_text(notebook_text(nb), encoding="utf-8", newline="\n")
            (target.parent / HELPER_NAME).write_text(helper, encoding="utf-8", newline="\n")
        # nbgrader runs `alembic` from PATH: make the interpreter's own scripts visible.
        env = dict(os.environ)
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
        # One nbgrader run for all sections: its start-up costs more than the conversions.
        result = subprocess.run(
            [sys.executable, "-m", "nbgrader", "generate_assignment", "*", "--force", "--log-level=WARN"],
            cwd=course_dir,
            capture_output=True,
            text=True,
            encoding="utf-8",  # not the locale's code page (cp1252 on Windows): nbgrader logs paths and names
            errors="replace",
            env=env,
        )
        for section_id in sources:
            out = course_dir / "release" / section_id / f"{section_id}.ipynb"
            if result.returncode != 0 or not out.is_file():
                raise BuildError(
                    f"nbgrader generate_assignment failed ({result.returncode}) for {section_id}:\n"
                    f"{result.stdout}\n{result.stderr}"
                )
            copied = out.parent / HELPER_NAME
            if not copied.is_file() or copied.read_text(encoding="utf-8") != helper:
                raise BuildError(f"nbgrader did not release {HELPER_NAME} next to {section_id}.ipynb")
            released[section_id] = clean_released(nbformat.read(out, as_version=4))
    return released


def clean_released(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Drop what nbgrader adds that is not needed and could vary between runs."""
    course = nb.metadata.get("course")  # the prose's language, kept
    nb.metadata = nbformat.from_dict({"kernelspec": dict(KERNELSPEC), "language_info": dict(LANGUAGE_INFO)})
    if course:
        nb.metadata["course"] = course
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        for key in ("collapsed", "scrolled", "execution"):
            cell.metadata.pop(key, None)
    return nb


def notebook_text(nb: nbformat.NotebookNode) -> str:
    """Canonical serialisation (sorted keys, one-space indent, trailing newline)."""
    text = nbformat.writes(nb, version=4)
    return text if text.endswith("\n") else text + "\n"


# --------------------------------------------------------------------------- examples


def fill_notebook(released: nbformat.NotebookNode, answers: dict[str, str]) -> nbformat.NotebookNode:
    """A copy of a released notebook with the solution cells named in `answers` replaced."""
    nb = copy.deepcopy(released)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and meta.get("grade_id") in answers:
            cell.source = answers[meta["grade_id"]]
    return nb


def correct_answers(section: Section, root: Path = ROOT) -> dict[str, str]:
    blocks = read_solution_module(section.solution_module, root).blocks
    return {name: strip_markers(blocks[name]) for name in section.names}


def partial_answers(section: Section, root: Path = ROOT) -> dict[str, str]:
    """What the partial example holds for each graded name (see course/partial_submissions.py)."""
    plan = plan_for(section.id)
    if isinstance(plan, str):
        plan = {name: plan for name in section.names}
    unknown = set(plan) - set(section.names)
    missing = [name for name in section.names if name not in plan]
    if unknown or missing:
        raise BuildError(f"course/partial_submissions.py [{section.id}]: unknown {sorted(unknown)}, missing {missing}")
    blocks = read_solution_module(section.solution_module, root).blocks
    answers = {}
    for name in section.names:
        entry, code = plan[name], blocks[name]
        where = f"course/partial_submissions.py [{section.id}] {name}"
        if entry == SOLVED:
            answers[name] = strip_markers(code)
        elif entry == STUB:
            answers[name] = stubbed(code, where)
        elif isinstance(entry, Mistake):
            answers[name] = fill_regions(code, list(entry.regions), where)
        else:
            raise BuildError(f"{where}: expected SOLVED, STUB or Mistake(...), got {entry!r}")
    return answers


def correct_py(section: Section, root: Path = ROOT) -> str:
    """The reference submission of `section` as one self-contained Python file."""
    module = read_solution_module(section.solution_module, root)
    imports: list[str] = []
    parts: list[str] = []
    for item in section.provided:
        provided_module = item.partition(":")[0]
        imports += read_solution_module(provided_module, root).imports()
        parts.append(f"# %% provided: {item.partition(':')[2]}\n{provided_code(item, root)}")
    imports += module.imports()
    for name in section.names:
        if name not in module.blocks:
            raise BuildError(f"{module.path}: no block `# %% {name}`")
        parts.append(f"# %% {name}\n{strip_markers(module.blocks[name])}")
    header = (
        f'"""Section {section.id}: {section.title}. A complete, correct submission.\n\n'
        "Generated by `python -m course.build` from the reference solutions; do not edit.\n"
        '"""\n'
    )
    unique_imports = list(dict.fromkeys(imports))
    return header + "\n".join(unique_imports) + "\n\n\n" + "\n\n\n".join(parts) + "\n"


# --------------------------------------------------------------------------- whole build


@dataclass
class BuildResult:
    files: dict[str, str] = field(default_factory=dict)  # relative path -> text
    blobs: dict[str, bytes] = field(default_factory=dict)  # relative path -> bytes (the self-check wheel)
    links: dict[str, str] = field(default_factory=dict)  # relative path -> the file it links to
    sections_built: list[str] = field(default_factory=list)  # with a notebook spec
    sections_without_spec: list[str] = field(default_factory=list)

    def paths(self) -> set[str]:
        """Every generated path: text files, binary files and links."""
        return set(self.files) | set(self.blobs) | set(self.links)


def spec_path(section: Section, spec_dir: Path | None = None) -> Path:
    return (spec_dir or ROOT / "course" / "notebooks") / f"{section.id}.py"


def build(root: Path = ROOT, sections=SECTIONS, spec_dir: Path | None = None) -> BuildResult:
    """Compute every generated file in memory (specs from `spec_dir`, default course/notebooks)."""
    result = BuildResult()
    sources = {}
    spec_dir = spec_dir or root / "course" / "notebooks"
    for section in sections:
        result.files[CORRECT_PY.format(id=section.id)] = correct_py(section, root)
        spec = spec_path(section, spec_dir)
        if not spec.is_file():
            result.sections_without_spec.append(section.id)
            continue
        sources[section.id] = build_source_notebook(section, spec, root)
        result.sections_built.append(section.id)
    released = release(sources, root)
    try:
        wheel_name, wheel = selfcheck_export.build_wheel(root)
    except selfcheck_export.ExportError as error:
        raise BuildError(f"the self-check wheel: {error}") from None
    result.blobs[f"{TEMPLATE_GRADER}/{wheel_name}"] = wheel
    for section_id in sources:
        result.blobs[f"{SOURCE_GRADER.format(id=section_id)}/{wheel_name}"] = wheel
    result.files[STUDENT_README] = student_readme(root)
    if sources:
        result.files[TEMPLATE_HELPER] = helper_text(root)
        result.links.update((rel, HELPER) for rel in LINKED_HELPERS)
    for section in sections:
        if section.id not in sources:
            continue
        result.files[SOURCE_NB.format(id=section.id)] = notebook_text(sources[section.id])
        result.files[SOURCE_HELPER.format(id=section.id)] = helper_text(root)
        result.files[SOURCE_README.format(id=section.id)] = section_readme(section, root)
        result.files[RELEASED_NB.format(id=section.id)] = notebook_text(released[section.id])
        correct = fill_notebook(released[section.id], correct_answers(section, root))
        result.files[CORRECT_NB.format(id=section.id)] = notebook_text(correct)
        partial = fill_notebook(released[section.id], partial_answers(section, root))
        result.files[PARTIAL_NB.format(id=section.id)] = notebook_text(partial)
    # --- hook: the other languages (to become a build step of its own) ---
    from course import localized  # imported here: it builds on this module
    try:
        localized.add_languages(result, sources, root)
    except localized.LocalizationError as error:
        raise BuildError(str(error)) from None
    # --- end of hook ---
    return result


def existing_generated(root: Path = ROOT) -> set[str]:
    found = set()
    from course import localized  # --- hook: the other languages' generated files ---
    for pattern in GENERATED_GLOBS + localized.generated_globs():
        found.update(path.relative_to(root).as_posix() for path in root.glob(pattern))
    return found


def drift(result: BuildResult, root: Path = ROOT) -> list[str]:
    """One line per generated file that differs from what is on disk."""
    problems = []
    for rel, text in sorted(result.files.items()):
        path = root / rel
        if path.is_symlink():
            problems.append(f"a link, not a file: {rel}")
        elif not path.is_file():
            problems.append(f"missing: {rel}")
        elif path.read_bytes() != text.encode("utf-8"):  # bytes: reading text would hide CRLF line ends
            problems.append(f"out of date: {rel}")
    for rel, data in sorted(result.blobs.items()):
        path = root / rel
        if path.is_symlink():
            problems.append(f"a link, not a file: {rel}")
        elif not path.is_file():
            problems.append(f"missing: {rel}")
        elif path.read_bytes() != data:
            problems.append(f"out of date: {rel}")
    for rel, target in sorted(result.links.items()):
        path = root / rel
        if not path.is_symlink() or os.readlink(path) != link_target(rel):
            problems.append(f"not a link to {target}: {rel}")
    for rel in sorted(existing_generated(root) - result.paths()):
        problems.append(f"no longer generated: {rel}")
    return problems


def link_target(rel: str) -> str:
    """The relative link from `rel` to the helper (links keep one copy of the helper in the repository)."""
    return os.path.relpath(HELPER, os.path.dirname(rel))


def write(result: BuildResult, root: Path = ROOT) -> list[str]:
    """Write the generated files (only those that changed); remove stale ones."""
    changed = []
    for rel, text in sorted(result.files.items()):
        path = root / rel
        if not path.is_symlink() and path.is_file() and path.read_bytes() == text.encode("utf-8"):
            continue
        _clear(path)
        # "\n" on every system: on Windows, text mode would write CRLF, and the committed files would change
        path.write_text(text, encoding="utf-8", newline="\n")
        changed.append(f"wrote {rel}")
    for rel, data in sorted(result.blobs.items()):
        path = root / rel
        if not path.is_symlink() and path.is_file() and path.read_bytes() == data:
            continue
        _clear(path)
        path.write_bytes(data)
        changed.append(f"wrote {rel}")
    for rel in sorted(result.links):
        path = root / rel
        if path.is_symlink() and os.readlink(path) == link_target(rel):
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink() or path.exists():
            path.unlink()
        path.symlink_to(link_target(rel))
        changed.append(f"linked {rel}")
    for rel in sorted(existing_generated(root) - result.paths()):
        (root / rel).unlink()
        changed.append(f"removed {rel}")
    return changed


def _clear(path: Path) -> None:
    """Make way for a generated file: a link in its place is removed, since writing through it
    would change the file it points to and leave the link."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink():
        path.unlink()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.build", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if any generated file is out of date")
    args = parser.parse_args(argv)
    try:
        result = build()
    except BuildError as error:
        print(f"course.build: error: {error}", file=sys.stderr)
        return 2
    if result.sections_without_spec:
        print("no notebook spec yet (only examples/correct_py built): " + ", ".join(result.sections_without_spec))
    if args.check:
        problems = drift(result)
        for line in problems:
            print(line)
        if problems:
            print(f"{len(problems)} generated file(s) out of date: run `python -m course.build`", file=sys.stderr)
            return 1
        print(f"all {len(result.paths())} generated files are up to date")
        return 0
    for line in write(result):
        print(line)
    print(f"{len(result.paths())} generated files up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
