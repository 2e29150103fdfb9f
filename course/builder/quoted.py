"""The lines of the grader's screen that the students' README quotes, made from the grader's own
messages in the README's language, so that a quote always reads as the screen does.

One more line comes from the notebooks themselves: what a check cell prints where the checks are not
installed (the stand-in of course/notebook_setup.py), its words taken from the setup cell's printed
label as the notebooks show it (`stand_in_line`).

course/student_readme.md writes `{{check_passed}}` where it shows a passed check's line; the build
fills each such placeholder from QUOTED: the grader's message (its msgid, exactly as the code writes
it) with example values for its fields, translated through the grader's catalogue of the README's
language (autograder/i18n/<locale>/LC_MESSAGES/*.po). A message the grader no longer has stops the
build: a README never quotes a line that does not appear.
"""
from __future__ import annotations

from pathlib import Path

from autograder.i18n import catalogues as grader_catalogues
from autograder.i18n import fill
from course import prose
from course.builder.layout import ROOT, BuildError
from course.builder.specs import common_setup

GRADER_CATALOGUES = "autograder/i18n"

# placeholder -> (the grader's message, its fields: a value, or a message of its own as (msgid, fields))
QUOTED: dict[str, tuple[str, dict]] = {
    "check_passed": ("ok  {title}", {"title": "..."}),  # autograder/notebook.py: a passed check's line
    "not_implemented": ("{label} is not implemented yet: it still raises NotImplementedError{where}",
                        {"label": "combine_heads", "where": ""}),  # core/failures.py: a stub's failure
    "hint": ("Hint: {hint}", {"hint": "..."}),  # autograder/notebook.py: under an error that fits a known mistake
    "picture_passed": ("passed: {what}", {"what": "..."}),  # the report's pictures of a passing check
    "cell_line": ("{cell}, line {line}", {"cell": ('the cell "{first}"', {"first": "def combine_heads(x):"}),
                                          "line": 11}),  # how a message names the student's cell
    "sandboxed": ("self-check: your code runs in a sandbox, away from the network and from your other files", {}),
    "unsandboxed": ("self-check: no sandbox on {where}: the visible checks run your code as you",
                    {"where": "Windows"}),  # sandbox/tiers.py's protection_line, on Windows
    "unsandboxed_elsewhere": ("self-check: no sandbox on {where}: the visible checks run your code as you",
                              {"where": ("this machine", {})}),  # ... on a system that is neither
}


def grader_translations(locale: str | None, root: Path = ROOT) -> dict[str, str]:
    """msgid -> its translation in every catalogue of the grader in `locale`; None: English, whose
    msgids are the messages themselves (any locale's catalogue lists which messages the code has)."""
    locales = grader_catalogues.locales()
    folder = root / GRADER_CATALOGUES
    found: dict[str, str] = {}
    for area in grader_catalogues.AREAS:
        path = grader_catalogues.po_path(locale or locales[0], area, folder)
        found.update(grader_catalogues.translations(path, locale or locales[0]))
    return {msgid: msgid for msgid in found} if locale is None else found


def said(message: tuple[str, dict], words: dict[str, str]) -> str:
    """`message` as the grader says it with `words`, its fields filled (a field that is a message, too)."""
    msgid, fields = message
    if msgid not in words:
        raise BuildError(f"the students' README quotes a message the grader does not have (or not translated): "
                         f"{msgid!r}: course/builder/quoted.py")
    values = {name: said(value, words) if isinstance(value, tuple) else value for name, value in fields.items()}
    return fill(words[msgid], values)  # joined as the grader joins it (its spacing rule for Chinese)


def quoted_values(locale: str | None, root: Path = ROOT) -> dict[str, str]:
    """placeholder -> the quoted line in `locale` (None: English)."""
    words = grader_translations(locale, root)
    return {name: said(message, words) for name, message in QUOTED.items()}


STAND_IN = "skipped: the checks of {name}"  # how the setup cell's stand-in `check` line starts
STAND_IN_EXAMPLE = {"name": "combine_heads"}


def stand_in_unit() -> prose.Unit:
    """The printed label of the setup cell's stand-in `check` (course/notebook_setup.py)."""
    units = [u for u in prose.printed_units("setup", common_setup()) if u.text.startswith(STAND_IN)]
    if len(units) != 1:
        raise BuildError(f"course/notebook_setup.py: {len(units)} printed line(s) start with {STAND_IN!r}; "
                         "the students' README quotes exactly one")
    return units[0]


def stand_in_line(translate=lambda unit: unit.text) -> str:
    """The stand-in check's line as a notebook prints it; `translate`: a unit -> its text in the README's language."""
    return translate(stand_in_unit()).format(**STAND_IN_EXAMPLE)
