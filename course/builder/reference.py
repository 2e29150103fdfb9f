"""Read the reference solutions: each solutions module split into `# %% <name>` blocks, and the
BEGIN/END SOLUTION regions inside a block (what nbgrader hides from students)."""
from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

from course.builder.layout import ROOT, BuildError
from course.partial_submissions import STUB

BEGIN = "# BEGIN SOLUTION"
END = "# END SOLUTION"
STUB_LINES = ("# YOUR CODE HERE", "raise NotImplementedError()")  # nbgrader's python stub


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

    def block(self, name: str) -> str:
        if name not in self.blocks:
            raise BuildError(f"{self.path}: no block `# %% {name}`")
        return self.blocks[name]


def strip_blank_edges(lines: list[str]) -> list[str]:
    """The lines without the blank ones at either end, each without trailing spaces."""
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
        code = "\n".join(strip_blank_edges(lines))
        solution_regions(code, f"{path} block {name!r}")  # validates the markers
        result[name] = code
    return SolutionModule(path, "\n".join(preamble), result)


def solution_regions(code: str, where: str) -> list[tuple[int, int]]:
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
    for begin, end in solution_regions(code, "block"):
        body.extend(lines[begin + 1 : end])
    return body


def fill_regions(code: str, replacements: list[str | None], where: str) -> str:
    """Replace each solution region: None keeps the reference, STUB puts nbgrader's stub
    (`raise NotImplementedError()`),
    any other text is dedented and indented like the region's BEGIN marker."""
    lines = code.split("\n")
    regions = solution_regions(code, where)
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
            out.extend(indent + line if line.strip() else "" for line in strip_blank_edges(text.split("\n")))
        previous_end = end
    out.extend(lines[previous_end + 1 :])
    return "\n".join(out)


def stubbed(code: str, where: str = "block") -> str:
    """The code as students receive it: every solution region replaced by nbgrader's stub."""
    return fill_regions(code, [STUB] * len(solution_regions(code, where)), where)


def provided_code(item: str, root: Path = ROOT) -> str:
    """The complete code of a `module:name` block (markers removed)."""
    module, _, name = item.partition(":")
    blocks = read_solution_module(module, root).blocks
    if name not in blocks:
        raise BuildError(f"{item}: no block `# %% {name}` in {module}")
    return strip_markers(blocks[name])
