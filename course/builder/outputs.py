"""The generated files in memory, and the one mechanism that compares them with the disk
(`--check`) and writes them: every kind of output (a text file, a binary file, a link) says
how it is out of date and how it is put in place, and `drift` and `write` walk them all alike."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from course.builder.layout import GENERATED_GLOBS, ROOT


@dataclass(frozen=True)
class FileOutput:
    """A generated file and its exact bytes (text is UTF-8 with "\\n" line ends on every system:
    on Windows, text mode would write CRLF, and the committed files would change)."""

    data: bytes

    def problem(self, path: Path) -> str | None:
        if path.is_symlink():
            return "a link, not a file"
        if not path.is_file():
            return "missing"
        if path.read_bytes() != self.data:  # bytes: reading text would hide CRLF line ends
            return "out of date"
        return None

    def put(self, path: Path) -> str:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink():  # writing through a link would change the file it points to
            path.unlink()
        path.write_bytes(self.data)
        return "wrote"


@dataclass(frozen=True)
class LinkOutput:
    """A symbolic link to a file of the repository (one copy of the helper, seen from elsewhere)."""

    target: str  # relative to the repository root
    rel: str  # where the link lies, relative to the repository root

    def relative_target(self) -> str:
        return os.path.relpath(self.target, os.path.dirname(self.rel))

    def problem(self, path: Path) -> str | None:
        if not path.is_symlink() or os.readlink(path) != self.relative_target():
            return f"not a link to {self.target}"
        return None

    def put(self, path: Path) -> str:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink() or path.exists():
            path.unlink()
        path.symlink_to(self.relative_target())
        return "linked"


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

    def outputs(self) -> list[tuple[str, FileOutput | LinkOutput]]:
        """Every generated path and what belongs there: text files, binary files, then links."""
        return ([(rel, FileOutput(text.encode("utf-8"))) for rel, text in sorted(self.files.items())]
                + [(rel, FileOutput(data)) for rel, data in sorted(self.blobs.items())]
                + [(rel, LinkOutput(target, rel)) for rel, target in sorted(self.links.items())])


def existing_generated(root: Path = ROOT) -> set[str]:
    """The files on disk where generated files go (whether still generated or not)."""
    found = set()
    for pattern in GENERATED_GLOBS:
        found.update(path.relative_to(root).as_posix() for path in root.glob(pattern))
    return found


def drift(result: BuildResult, root: Path = ROOT) -> list[str]:
    """One line per generated file that differs from what is on disk."""
    problems = []
    for rel, output in result.outputs():
        problem = output.problem(root / rel)
        if problem:
            problems.append(f"{problem}: {rel}")
    problems += [f"no longer generated: {rel}" for rel in sorted(existing_generated(root) - result.paths())]
    return problems


def write(result: BuildResult, root: Path = ROOT) -> list[str]:
    """Write the generated files (only those that changed); remove stale ones."""
    changed = []
    for rel, output in result.outputs():
        if output.problem(root / rel):
            changed.append(f"{output.put(root / rel)} {rel}")
    for rel in sorted(existing_generated(root) - result.paths()):
        (root / rel).unlink()
        changed.append(f"removed {rel}")
    return changed
