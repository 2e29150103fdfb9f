"""The grader's message catalogues: extract, merge, check and compile (the course's side; needs Babel).

    python -m autograder.i18n.catalogues update   # extract from the code, merge into every PO
    python -m autograder.i18n.catalogues check    # fail, listing path:line of each message to translate

One catalogue per area of the code (AREAS), so translators of different areas never edit the same
file. `update` extracts each area's messages with Babel (the calls _, _f, N_ and the title, second
argument, of the checks' `@check(points, title)`; the sections' titles go to the core's area) into a
template kept in memory, and merges it into
autograder/i18n/<locale>/LC_MESSAGES/<area>.po: a new message comes in untranslated, a changed one
comes in fuzzy (Babel's nearest old translation, to be reviewed), a message gone from the code is
dropped. `check` lists what a reader of that language would still see in English. The MO files the
grader loads are compiled from the PO files by the course build (course/builder/steps.py), with
`mo_bytes` here, so that `python -m course.builder --check` notices a stale one.
"""
from __future__ import annotations

import ast
import io
import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from autograder.i18n import HERE, LANGUAGES
from autograder.i18n.mo import mo_bytes

ROOT = HERE.parents[1]
# every section's number, read from its check file's name (checks/section_NN_name.py): one area each
SECTION_NUMBERS = sorted({int(path.name[len("section_"):][:2]) for path in (ROOT / "autograder/checks").glob("section_[0-9][0-9]_*.py")})
# area -> the source files whose messages it holds (globs relative to the repository root)
AREAS: dict[str, tuple[str, ...]] = {
    "core": ("autograder/core/*.py", "autograder/sandbox/*.py", "autograder/notebook.py"),
    "feedback": ("autograder/feedback/*.py",),
    "instructor": ("autograder/instructor/*.py",),
    "cli": ("autograder/cli.py", "autograder/__main__.py", "autograder/i18n/__init__.py", "autograder/i18n/argparse_words.py"),
    "checks_common": ("autograder/checks/common.py", "autograder/checks/parameters.py", "autograder/checks/multihead_*.py"),
    # a section's visible checks' module and its hidden checks' module
    **{f"checks_{number:02d}": (f"autograder/checks/section_{number:02d}_*.py",
                                f"autograder/checks/hidden/hidden_{number:02d}_*.py") for number in SECTION_NUMBERS},
}
# a section's message-holding helper modules speak for that section
AREAS["checks_03"] += ("autograder/checks/qkv_mistakes.py",)
AREAS["checks_08"] += ("autograder/checks/fused_forward.py",)
AREAS["checks_09"] += ("autograder/checks/cached_forward.py",)
AREAS["checks_10"] += ("autograder/checks/grouped_forward.py",)
AREAS["checks_11"] += ("autograder/checks/window_forward.py",)
AREAS["checks_12"] += ("autograder/checks/rope_slips.py",)
AREAS["checks_13"] += ("autograder/checks/tiled_forward.py",)
# The sections' titles (each check file's SECTION["title"]) belong to the core's catalogue
SECTION_FILES, TITLES_AREA = "autograder/checks/section_*.py", "core"
# Babel's keyword specification: which calls carry a message, and in which argument
KEYWORDS = {"_": None, "_f": None, "N_": None, "check": (2,)}
COMMENT_TAGS = ("i18n:",)  # a comment "# i18n: ..." above a message reaches its translators
NEW_HEADER = ("# The grader's messages of the area {area} in {locale}.\n"
              "# Made by `python -m autograder.i18n.catalogues update`; see docs/translating-the-grader.md.\n")
FIXED_DATE = datetime(2026, 1, 1, tzinfo=timezone.utc)  # so that an update changes only what changed


@dataclass(frozen=True)
class Problem:
    where: str  # path:line of the message in the code
    area: str
    locale: str
    what: str  # "untranslated", "fuzzy" or "not in the catalogue"
    msgid: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what} in {self.locale}/{self.area}.po: {self.msgid!r}"


def area_files(area: str, root: Path = ROOT) -> list[Path]:
    return sorted({path for pattern in AREAS[area] for path in root.glob(pattern)})


def extract_text(source: str) -> list[tuple[int, str, list[str]]]:
    """(line, msgid, translator comments) of every message in a Python source text."""
    from babel.messages.extract import extract  # the course's side only: the grader itself never extracts
    found = extract("python", io.BytesIO(source.encode("utf-8")), keywords=KEYWORDS, comment_tags=COMMENT_TAGS,
                    strip_comment_tags=True)
    return [(line, message, comments) for line, message, comments, _context in found if isinstance(message, str)]


def section_title(source: str) -> list[tuple[int, str, list[str]]]:
    """The title of a check file's `SECTION = {"title": ...}` (a literal the registry reads without
    importing the file, so it cannot be wrapped in N_; the core translates it where it is shown)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["SECTION"] \
                and isinstance(node.value, ast.Dict):
            for key, value in zip(node.value.keys, node.value.values):
                if getattr(key, "value", None) == "title" and isinstance(getattr(value, "value", None), str):
                    return [(value.lineno, value.value, ["the title of a section"])]
    return []


def template(area: str, root: Path = ROOT):
    """The area's messages as a Babel catalogue (a template: no translations), each with its places."""
    sources = [(path, extract_text(path.read_text(encoding="utf-8"))) for path in area_files(area, root)]
    if area == TITLES_AREA:  # the registry shows them: in the area of its code, not of the checks
        sources += [(path, section_title(path.read_text(encoding="utf-8")))
                    for path in sorted(root.glob(SECTION_FILES))]
    from babel.messages.catalog import Catalog
    catalogue = Catalog(project="attention-course", creation_date=FIXED_DATE, revision_date=FIXED_DATE,
                        fuzzy=False)
    for path, messages in sources:
        rel = path.relative_to(root).as_posix()
        for line, msgid, comments in messages:
            catalogue.add(msgid, locations=[(rel, line)], auto_comments=comments)
    return catalogue


def po_path(locale: str, area: str, folder: Path = HERE) -> Path:
    return folder / locale / "LC_MESSAGES" / f"{area}.po"


def locales() -> list[str]:
    return [locale for locale in LANGUAGES.values() if locale]


def read(path: Path, locale: str):
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import read_po
    if not path.is_file():  # a new language, or a new area: an empty catalogue with a plain header
        return Catalog(locale=locale, project="attention-course", version="", creation_date=FIXED_DATE,
                       revision_date=FIXED_DATE, fuzzy=False, header_comment=NEW_HEADER.format(
                           area=path.stem, locale=locale), copyright_holder="", msgid_bugs_address="",
                       last_translator="the course's translators", language_team=locale)
    with path.open("rb") as stream:
        return read_po(stream, locale=locale)


def po_text(catalogue) -> bytes:
    from babel.messages.pofile import write_po
    stream = io.BytesIO()
    write_po(stream, catalogue, width=100, omit_header=False, ignore_obsolete=True, include_previous=False)
    return stream.getvalue()


def update(root: Path = ROOT, folder: Path = HERE) -> list[str]:
    """Merge each area's messages into each locale's PO file; the paths that changed."""
    changed = []
    for locale in locales():
        for area in AREAS:
            path = po_path(locale, area, folder)
            catalogue = read(path, locale)
            catalogue.update(template(area, root), update_creation_date=False)
            catalogue.revision_date = FIXED_DATE
            data = po_text(catalogue)
            if not path.is_file() or path.read_bytes() != data:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
                changed.append(path.relative_to(root).as_posix())
    return changed


def problems(root: Path = ROOT, folder: Path = HERE, areas: list[str] | None = None) -> list[Problem]:
    """Every message of the code that some locale does not translate yet (untranslated, fuzzy, missing)."""
    found = []
    for locale in locales():
        for area in areas or AREAS:
            catalogue = read(po_path(locale, area, folder), locale)
            for message in template(area, root):
                if not message.id:
                    continue
                entry = catalogue.get(message.id)
                what = ("not in the catalogue" if entry is None else "fuzzy" if entry.fuzzy
                        else "untranslated" if not entry.string else None)
                if what:
                    path, line = message.locations[0]
                    found.append(Problem(f"{path}:{line}", area, locale, what, message.id))
    return found


def translations(path: Path, locale: str) -> dict[str, str]:
    """msgid -> translation of a PO file, fuzzy entries left out (they are not reviewed yet)."""
    return {message.id: message.string for message in read(path, locale)
            if message.id and isinstance(message.id, str) and message.string and not message.fuzzy}


def compiled(root: Path = ROOT, folder: Path = HERE) -> dict[str, bytes]:
    """Repository path -> the MO bytes of every PO file there is (the course build writes them)."""
    result = {}
    for locale in locales():
        for po in sorted((folder / locale / "LC_MESSAGES").glob("*.po")):
            rel = po.with_suffix(".mo").relative_to(root).as_posix()
            result[rel] = mo_bytes(translations(po, locale), locale)
    return result


def main(argv: list[str]) -> int:
    if argv not in (["update"], ["check"]):
        print("usage: python -m autograder.i18n.catalogues update|check", file=sys.stderr)
        return 2
    if argv == ["update"]:
        for rel in update():
            print(f"updated {rel}")
        return 0
    found = problems()
    for problem in found:
        print(problem)
    catalogues = sorted({f"{problem.locale}/{problem.area}.po" for problem in found})
    print(f"{len(found)} message(s) to translate" + (f" in {', '.join(catalogues)}" if found else ""),
          file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
