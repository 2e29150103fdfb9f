"""Where each section's code is in a submission, and what to say when it is not.

A submission is a folder shaped like student_template/ (`01_scores.ipynb`, …,
also accepted: nbgrader's `01_scores/01_scores.ipynb`, or `01_scores.py`; a notebook
under another name or in a subfolder is taken by its cells, core/matching.py),
one notebook, or one Python file.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from autograder.core.extract import NOT_HANDED_IN, TOO_BIG, Extracted, banned_uses, extract, notebook_language, tampering
from autograder.core.files import Refused, TooBig, read_inside
from autograder.core.matching import MAX_ENTRIES, MAX_NOTEBOOKS, Found, find_section, shown_name
from autograder.core.sections import SECTIONS, Section, find
from autograder.i18n import _f


class UsageError(ValueError):
    """A bad command line: exit status 2 with this one-line message."""


@dataclass
class SectionSource:
    section: Section
    path: Path | None
    extracted: Extracted
    found: Found | None = None  # how the file was found in a folder (core/matching); None for a file given

    @property
    def banned_in_source(self) -> dict:
        return banned_uses(self.extracted.cells, self.section.forbidden_in, self.section.forbidden)

    @property
    def tampering(self) -> list[str]:
        """Where the code reaches into the grader's watch or torch's internals (extract.tampering)."""
        return tampering(self.extracted.cells)


def own_name(path) -> str:
    """A submission's own name: its folder's name ("." resolved) or its notebook's file name."""
    resolved = Path(path).resolve()
    return resolved.name or str(resolved)


def section_named(section_id: str) -> Section:
    """The section a `--section` flag names; UsageError listing the sections when there is none."""
    try:
        return find(section_id)
    except KeyError:
        raise UsageError(_f("unknown section {section}; sections are: {sections}", section=repr(section_id),
                            sections=", ".join(s.id for s in SECTIONS))) from None


def sections_named(values) -> list[Section]:
    """The sections that `--section` flags name: each value one id or a comma-separated list
    ("01_scores,02_softmax"), repeated or not; in the course's order, each once. UsageError (listing
    the sections) for an unknown id or an empty list."""
    wanted = {section_named(word.strip()).id for value in values for word in str(value).split(",") if word.strip()}
    if not wanted:
        raise UsageError(_f("--section: no section named; sections are: {sections}",
                            sections=", ".join(s.id for s in SECTIONS)))
    return [section for section in SECTIONS if section.id in wanted]


def section_file(folder: Path, section: Section) -> str | None:
    """Where `section`'s file is inside `folder` (a path relative to it), or None: by its own name,
    else the one notebook holding its cells (core/matching).

    Found without following links: a link is found here and refused when read,
    so the student is told why rather than that the file is missing."""
    return find_section(folder, section).relative


def _listed(names: list, more: int = 0) -> str:
    shown = ", ".join(repr(shown_name(name)) for name in names)
    return _f("{names} and {count} more", names=shown, count=more) if more else shown


def missing_section(section: Section, found: Found) -> Extracted:
    """Why a section of a folder has no file: not handed in (naming what was), or held by several notebooks."""
    if found.claimants:
        problem = _f("{notebook} was not handed in under its name, and several notebooks hold its cells ({files}); "
                     "rename the one to grade {notebook}", notebook=section.notebook, files=_listed(found.claimants))
        kind = "ambiguous"
    elif found.files:
        problem = _f("{notebook} was not handed in (the submission holds {files}, none of them with this "
                     "section's cells alone)", notebook=section.notebook,
                     files=_listed(found.files, found.more_files))
        kind = NOT_HANDED_IN
    else:
        problem = _f("{notebook} was not handed in (it is not in the submission)", notebook=section.notebook)
        kind = NOT_HANDED_IN
    extracted = Extracted([], problem, kind=kind)
    if found.stopped_early:
        extracted.notes.append(_f("the submission folder holds too many files: only the first {count} entries "
                                  "and {notebooks} notebooks were examined", count=MAX_ENTRIES,
                                  notebooks=MAX_NOTEBOOKS))
    return extracted


def read_section(root: Path, relative: str, section: Section, found: Found | None = None) -> SectionSource:
    """One section's file, read safely (files.read_inside) and extracted; a refusal becomes its note."""
    try:
        data = read_inside(root, relative)
    except TooBig as error:  # saved outputs (images, long prints) are what makes a notebook this big
        advice = _f("{refusal}: clear its outputs (in Jupyter: Edit > Clear Outputs of All Cells), save it and hand "
                    "it in again", refusal=error)
        return SectionSource(section, root / relative, Extracted([], advice, kind=TOO_BIG), found)
    except Refused as error:
        return SectionSource(section, root / relative, Extracted([], str(error)), found)
    source = SectionSource(section, root / relative, extract(Path(relative).name, data), found)
    if found is not None and found.by_content:
        source.extracted.notes.insert(0, _f("{notebook} was not in the submission under its name: graded {file}, "
                                            "which holds this section's cells", notebook=section.notebook,
                                            file=repr(shown_name(relative))))
    return source


def locate(path: Path, section_ids=None) -> list[SectionSource]:
    """The sources of the sections `section_ids` names (one id, a comma list, or a list of them;
    None: every section) in the submission at `path`. A section named but not in a folder is
    "not handed in"; a section not named is not there at all (it counts for nothing)."""
    if not os.path.lexists(path):
        raise UsageError(_f("{path}: no such file or folder", path=path))
    if isinstance(section_ids, str):
        section_ids = [section_ids]
    chosen = None if section_ids is None else sections_named(section_ids)
    if path.is_dir():
        sources = []
        for section in chosen or SECTIONS:
            found = find_section(path, section)
            if found.relative is None:
                sources.append(SectionSource(section, None, missing_section(section, found), found))
            else:
                sources.append(read_section(path, found.relative, section, found))
        return sources
    if path.suffix not in (".ipynb", ".py"):
        raise UsageError(_f("{path}: expected a folder, a .ipynb notebook or a .py file", path=path))
    if chosen is None:
        matches = [s for s in SECTIONS if path.stem.startswith(s.id) or path.stem == s.id[3:]]
        if len(matches) != 1:
            raise UsageError(_f("{name}: cannot tell which section this is; add --section ID", name=path.name))
        chosen = matches
    if len(chosen) != 1:
        raise UsageError(_f("{name}: one file holds one section; name one with --section", name=path.name))
    return [read_section(path.parent, path.name, chosen[0])]



def written_language(sources: list[SectionSource]) -> str | None:
    """The language the submission's notebooks ask for (metadata.course.language of the first
    notebook that names one), or None; i18n.resolve checks the code."""
    return next((src.extracted.language for src in sources if src.extracted.language), None)


def folder_language(folder: Path) -> str | None:
    """The language the notebooks of `folder` named as sections (01_scores.ipynb, ...) ask for, or None:
    read before a command line is parsed, so that a student's `check --help` and its errors speak it.
    Nothing here is an error: a file that cannot be read or is not a notebook says nothing."""
    for section in SECTIONS:
        relative = f"{section.id}.ipynb"
        try:
            notebook = json.loads(read_inside(folder, relative))
        except (Refused, OSError, ValueError):
            continue
        language = notebook_language(notebook) if isinstance(notebook, dict) else None
        if language:
            return language
    return None
