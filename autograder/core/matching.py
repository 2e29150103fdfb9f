"""Which notebook of a submission folder is which section when its name does not say.

A student may hand in `02_softmax (1).ipynb`, `Untitled.ipynb` or `work/02_softmax.ipynb`
(a browser's download, a renamed file, a subfolder). A section's own names come first
(`02_softmax.ipynb`, nbgrader's `02_softmax/02_softmax.ipynb`, `02_softmax.py`: submission.py);
where none of them is there, a notebook under another name is taken for the section by its
content: the cells of a released notebook carry nbgrader metadata whose `grade_id` (also the
cell's own `id`) is a graded name of the section (`softmax`) or its test cell (`test_softmax`),
and those names belong to one section only. A notebook is taken when it is the only one whose
cells name that section and its cells name no other section. So

- a decoy notebook holding the cells of every section is taken for none;
- two notebooks holding one section's cells (two copies, say) are both left: the section is not
  graded, and the student and the instructor are told which files they were;
- no notebook at all: the section was not handed in, and the message names the files that were.

Bounded, because the folder is the student's: the walk takes no link and no hidden folder
(`.git`, `.ipynb_checkpoints`), goes MAX_DEPTH folders down, looks at MAX_ENTRIES entries, reads
at most MAX_NOTEBOOKS notebooks of at most MAX_SUBMISSION_FILE each (through files.read_inside:
regular files inside the folder only) and MAX_BYTES in all; where it stops early it says so. What a
notebook names is kept per file (its path, size, time and inode), so that the several lookups of one
grading (the grading itself, the batch's hashes, the gradebook) parse each file once.
"""
from __future__ import annotations

import functools
import itertools
import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from autograder.core.files import MAX_SUBMISSION_FILE, Refused, lexists_inside, read_inside
from autograder.core.sections import SECTIONS, Section

MAX_DEPTH = 3  # folders below the submission folder
MAX_ENTRIES = 2000  # directory entries looked at
MAX_NOTEBOOKS = 50  # notebooks read for their cells
MAX_BYTES = 100 * 1024 * 1024  # read for their cells in all
MAX_SHOWN = 10  # file names a message lists
CHECKPOINT = "-checkpoint.ipynb"  # Jupyter's autosaved copy, in a hidden folder or not: never the student's choice


@dataclass
class Found:
    """Where one section's file is in a submission folder."""
    relative: str | None = None  # the file to grade, relative to the folder; None when there is none
    by_content: bool = False  # taken by its cells, not by its name
    claimants: list = field(default_factory=list)  # several notebooks hold the section's cells: these
    files: list = field(default_factory=list)  # the folder's files (at most MAX_SHOWN), when there is none
    more_files: int = 0  # how many more files the folder holds than `files` lists
    stopped_early: bool = False  # the walk stopped at one of its bounds


def own_names(section: Section) -> tuple[str, ...]:
    """The paths where `section`'s file is found by its name, in order of preference."""
    return (section.notebook, f"{section.id}/{section.notebook}", f"{section.id}.py")


@functools.cache
def section_ids() -> dict[str, str]:
    """Cell id -> the section it belongs to: each graded name and its test cell, of one section only."""
    owners: dict[str, set] = {}
    for section in SECTIONS:
        for name in section.names:
            for cell_id in (name, f"test_{name}"):
                owners.setdefault(cell_id, set()).add(section.id)
    return {cell_id: next(iter(ids)) for cell_id, ids in owners.items() if len(ids) == 1}


def _cell_names(cell) -> set[str]:
    if not isinstance(cell, dict):
        return set()
    names = {cell.get("id")}
    meta = cell.get("metadata")
    nbgrader = meta.get("nbgrader") if isinstance(meta, dict) else None
    if isinstance(nbgrader, dict):
        names.add(nbgrader.get("grade_id"))
    return {name for name in names if isinstance(name, str)}


@functools.lru_cache(maxsize=512)
def _claims(root: str, relative: str, size: int, mtime_ns: int, inode: int) -> frozenset:
    """The sections whose cells the notebook `root/relative` holds (the stat fields key the cache)."""
    try:
        notebook = json.loads(read_inside(Path(root), relative))
    except (Refused, ValueError, RecursionError):  # not a notebook, a link, too big: it claims nothing
        return frozenset()
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    owners = section_ids()
    names = set().union(*(_cell_names(cell) for cell in cells)) if isinstance(cells, list) else set()
    return frozenset(owners[name] for name in names if name in owners)


@dataclass
class Listing:
    files: list = field(default_factory=list)  # every regular file seen, relative, in walk order
    notebooks: list = field(default_factory=list)  # (relative, os.stat_result) of the .ipynb among them
    stopped_early: bool = False


def listing(folder: Path) -> Listing:
    """The folder's regular files, walked breadth first without links or hidden folders, within the bounds."""
    found, seen = Listing(), 0
    pending = [("", 0)]
    while pending:
        relative, depth = pending.pop(0)
        try:
            with os.scandir(Path(folder) / relative) as entries:
                # never more than the bound taken from the directory, however many it holds
                batch = list(itertools.islice(entries, MAX_ENTRIES - seen + 1))
        except OSError:
            continue
        for entry in sorted(batch, key=lambda e: e.name):
            seen += 1
            if seen > MAX_ENTRIES:
                found.stopped_early = True
                return found
            _add_entry(found, pending, entry, f"{relative}{entry.name}", depth)
    return found


def _add_entry(found: Listing, pending: list, entry, relative: str, depth: int) -> None:
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return
    if stat.S_ISDIR(info.st_mode):
        if entry.name.startswith(".") or depth >= MAX_DEPTH:
            found.stopped_early |= not entry.name.startswith(".")
        else:
            pending.append((relative + "/", depth + 1))
    elif stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode):
        found.files.append(relative)  # a link is listed (the student is told), never read
        if stat.S_ISREG(info.st_mode) and relative.endswith(".ipynb") and not relative.endswith(CHECKPOINT):
            found.notebooks.append((relative, info))


def claims(folder: Path, found: Listing) -> dict[str, frozenset]:
    """Each notebook of the listing that is no section's own file -> the sections its cells name."""
    own = {name for section in SECTIONS for name in own_names(section)}
    result, budget = {}, MAX_BYTES
    for relative, info in found.notebooks:
        if relative in own:
            continue
        if len(result) >= MAX_NOTEBOOKS or info.st_size > min(budget, MAX_SUBMISSION_FILE):
            found.stopped_early = True
            continue
        budget -= info.st_size
        result[relative] = _claims(str(folder), relative, info.st_size, info.st_mtime_ns, info.st_ino)
    return result


def find_section(folder: Path, section: Section) -> Found:
    """Where `section`'s file is in `folder` (see the module's docstring)."""
    for candidate in own_names(section):
        if lexists_inside(folder, candidate):  # found by name even if a link: refused when read, and said why
            return Found(candidate)
    found = listing(folder)
    held = [relative for relative, ids in claims(folder, found).items() if ids == {section.id}]
    if len(held) == 1:
        return Found(held[0], by_content=True)
    if held:
        return Found(claimants=held[:MAX_SHOWN], stopped_early=found.stopped_early)
    return Found(files=found.files[:MAX_SHOWN], more_files=max(0, len(found.files) - MAX_SHOWN),
                 stopped_early=found.stopped_early)


def holds_anything(folder: Path) -> bool:
    """Whether `folder` holds a notebook or a Python file anywhere within the walk's bounds (a student's folder)."""
    return any(name.endswith((".ipynb", ".py")) for name in listing(folder).files)


_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def shown_name(relative: str) -> str:
    """A file name of the student's, fit for one line of a message: no control characters, not too long."""
    text = _UNPRINTABLE.sub("?", relative.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))
    return text if len(text) <= 80 else text[:77] + "..."
