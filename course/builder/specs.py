"""Read the notebook specs (course/notebooks/<id>.py): cells separated by `# %% [kind] args`
lines, and the shared start of every setup cell (course/notebook_setup.py)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from course.builder.layout import ROOT, BuildError
from course.builder.reference import strip_blank_edges


@dataclass
class SpecCell:
    kind: str  # markdown, setup, solution, provided, test, code
    args: tuple[str, ...]
    lines: list[str]
    line_number: int


SPEC_KINDS = {"markdown": 0, "setup": 0, "solution": 1, "provided": 1, "test": 2}  # kind -> its arguments

NOTEBOOK_SETUP = "course/notebook_setup.py"  # the start every setup cell shares: torch, the checks, the example
NOTEBOOK_SETUP_MARK = "# <common setup>"
NOTEBOOK_SETUP_START = "# --- the notebooks' copy starts here ---"


def common_setup() -> str:
    """The part of course/notebook_setup.py that every notebook's setup cell starts with (one source)."""
    text = (ROOT / NOTEBOOK_SETUP).read_text(encoding="utf-8")
    if NOTEBOOK_SETUP_START not in text:
        raise BuildError(f"{NOTEBOOK_SETUP}: the line {NOTEBOOK_SETUP_START!r} is missing")
    return text.split(NOTEBOOK_SETUP_START + "\n", 1)[1].strip("\n")


def insert_common_setup(code: str) -> str:
    """A setup cell's code with its `# <common setup>` line replaced by the shared setup."""
    shared = common_setup()
    return "\n".join(shared if line == NOTEBOOK_SETUP_MARK else line for line in code.split("\n"))


def read_spec(path: Path) -> list[SpecCell]:
    """Split a spec file into cells; anything before the first `# %%` line is ignored."""
    cells: list[SpecCell] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("# %%"):
            cells.append(_header(line, f"{path}:{number}", number))
        elif cells:
            cells[-1].lines.append(line)
    if not cells:
        raise BuildError(f"{path}: no `# %%` cells")
    return cells


def _header(line: str, where: str, number: int) -> SpecCell:
    """The (still empty) cell that a `# %%` line opens."""
    rest = line[4:].strip()
    if not rest:
        return SpecCell("code", (), [], number)
    match = re.fullmatch(r"\[(\w+)\]\s*(.*)", rest)
    if not match or match.group(1) not in SPEC_KINDS:
        raise BuildError(f"{where}: unknown cell header {line!r}")
    kind, args = match.group(1), tuple(match.group(2).split())
    if len(args) != SPEC_KINDS[kind]:
        raise BuildError(f"{where}: [{kind}] takes {SPEC_KINDS[kind]} argument(s), got {len(args)}: {line!r}")
    return SpecCell(kind, args, [], number)


def markdown_source(cell: SpecCell, path: Path) -> str:
    """A markdown cell's text: its lines without their leading `# `."""
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
    return "\n".join(strip_blank_edges(out))


def weight(text: str, where: str) -> Fraction:
    """A test cell's weight (its share of the section's points), a positive number."""
    try:
        value = Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise BuildError(f"{where}: weight must be a number, got {text!r}") from None
    if value <= 0:
        raise BuildError(f"{where}: weight must be positive, got {text!r}")
    return value
