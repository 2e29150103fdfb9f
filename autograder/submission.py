"""Where each section's code is in a submission, and what to say when it is not.

A submission is a folder shaped like student_template/ (`01_scores.ipynb`, …,
also accepted: nbgrader's `01_scores/01_scores.ipynb`, or `01_scores.py`),
one notebook, or one Python file.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autograder.extract import Extracted, banned_uses, extract
from autograder.sections import SECTIONS, Section, find


class UsageError(ValueError):
    """A bad command line: exit status 2 with this one-line message."""


@dataclass
class SectionSource:
    section: Section
    path: Path | None
    extracted: Extracted

    @property
    def banned_in_source(self) -> dict:
        return banned_uses(self.extracted.cells, self.section.forbidden_in, self.section.forbidden)


def _in_folder(folder: Path, section: Section) -> Path | None:
    for candidate in (folder / section.notebook, folder / section.id / section.notebook,
                      folder / f"{section.id}.py"):
        if candidate.is_file():
            return candidate
    return None


def locate(path: Path, section_id: str | None = None) -> list[SectionSource]:
    if not path.exists():
        raise UsageError(f"{path}: no such file or folder")
    chosen = None
    if section_id is not None:
        try:
            chosen = find(section_id)
        except KeyError:
            raise UsageError(f"unknown section {section_id!r}; sections are: "
                             + ", ".join(s.id for s in SECTIONS)) from None
    if path.is_dir():
        sources = []
        for section in [chosen] if chosen else SECTIONS:
            found = _in_folder(path, section)
            if found is None:
                sources.append(SectionSource(section, None, Extracted(
                    [], f"{section.notebook} is missing from the submission")))
            else:
                sources.append(SectionSource(section, found, extract(found)))
        return sources
    if path.suffix not in (".ipynb", ".py"):
        raise UsageError(f"{path}: expected a folder, a .ipynb notebook or a .py file")
    if chosen is None:
        matches = [s for s in SECTIONS if path.stem.startswith(s.id) or path.stem == s.id[3:]]
        if len(matches) != 1:
            raise UsageError(f"{path.name}: cannot tell which section this is; add --section ID")
        chosen = matches[0]
    return [SectionSource(chosen, path, extract(path))]
