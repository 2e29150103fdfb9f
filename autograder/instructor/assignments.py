"""The course's assignments: which sections make up each, as the instructor writes it in a TOML file.

    # assignments.toml, at the top of the course repository
    week1 = ["01_scores", "02_softmax"]
    week2 = ["03_trainable_qkv", "04_causal_mask"]

Each key is an assignment's name, each value the list of its sections' ids (as `--section` takes
them). `batch --assignment NAME` and `export-gradescope --assignment NAME` grade those sections.
Every mistake in the file stops the command with one line naming the file, the line and what is
wrong; nothing is graded.
"""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

from autograder.core.sections import SECTIONS, find
from autograder.core.submission import UsageError, sections_named
from autograder.i18n import _, _f

ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENTS_FILE = ROOT / "assignments.toml"  # the default: the course repository's own
# tomllib ends its message with where the parse stopped: "... (at line 3, column 9)"
WHERE = re.compile(r"\s*\(at line (\d+), column \d+\)\s*$")


class AssignmentsError(UsageError):
    """A mistake in the assignments file (one line: file:line: what)."""


def key_line(text: str, name: str) -> int:
    """The line (1-based) where the key `name` is given, else 1 (for a message)."""
    pattern = re.compile(r"^\s*(?:\"|')?" + re.escape(name) + r"(?:\"|')?\s*=")
    return next((number for number, line in enumerate(text.splitlines(), 1) if pattern.match(line)), 1)


def parse(text: str, path: Path) -> dict[str, list[str]]:
    """{assignment: [section id, ...] in the course's order}; AssignmentsError naming file:line."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        found = WHERE.search(message)
        line = found[1] if found else "1"
        raise AssignmentsError(_f("{path}:{line}: not valid TOML: {error}", path=path, line=line,
                                  error=WHERE.sub("", message))) from None
    assignments = {}
    for name, value in data.items():
        line = key_line(text, name)
        if not isinstance(value, list) or not value or not all(isinstance(item, str) for item in value):
            raise AssignmentsError(_f("{path}:{line}: {name}: expected a list of section ids, e.g. "
                                      "[\"01_scores\", \"02_softmax\"]", path=path, line=line, name=name))
        unknown = [item for item in value if not known(item)]
        if unknown:
            raise AssignmentsError(_f("{path}:{line}: {name}: unknown section {sections}; sections are: {known}",
                                      path=path, line=line, name=name, sections=", ".join(map(repr, unknown)),
                                      known=", ".join(s.id for s in SECTIONS)))
        assignments[name] = [section.id for section in sections_named(value)]
    return assignments


def known(section_id: str) -> bool:
    try:
        find(section_id)
    except KeyError:
        return False
    return True


def read_assignments(path: Path | None = None) -> dict[str, list[str]]:
    """The assignments of the file at `path` (default: the course repository's assignments.toml)."""
    path = Path(path) if path is not None else ASSIGNMENTS_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise AssignmentsError(_f("{path}: no such file (it says which sections make up each assignment)",
                                  path=path)) from None
    except (OSError, UnicodeDecodeError) as error:
        raise AssignmentsError(_f("{path}: cannot be read ({error})", path=path, error=error)) from None
    return parse(text, path)


def chosen_sections(assignment_names, section_values, path: Path | None = None) -> list[str] | None:
    """The section ids that `--assignment` (names, each maybe a comma list) and `--section` (ids) ask
    for together, in the course's order; None when neither was given (every section)."""
    wanted: list[str] = []
    names = [word.strip() for value in assignment_names or [] for word in value.split(",") if word.strip()]
    if assignment_names and not names:
        raise UsageError(_f("--assignment: no assignment named"))
    if names:
        assignments = read_assignments(path)
        for name in names:
            if name not in assignments:
                raise UsageError(_f("--assignment {name}: not in {path}; its assignments are: {names}",
                                    name=repr(name), path=path or ASSIGNMENTS_FILE,
                                    names=", ".join(assignments) or _("(none)")))
            wanted += assignments[name]
    if section_values:
        wanted += [section.id for section in sections_named(section_values)]
    if not wanted:
        return None
    return [section.id for section in SECTIONS if section.id in wanted]


def add_selection_flags(parser, what: str) -> None:
    """--assignment, --section and --assignments FILE, for a verb that grades some sections only."""
    parser.add_argument("--assignment", action="append", metavar="NAME[,NAME...]",
                        help=_f("{what} only the sections of these assignments (named in the assignments file; "
                                "repeatable)", what=_(what)))
    parser.add_argument("--section", action="append", metavar="ID[,ID...]",
                        help=_f("{what} only these sections (e.g. 02_softmax, or 01_scores,02_softmax; repeatable; "
                                "an nbgrader assignment is one section)", what=_(what)))
    parser.add_argument("--assignments", type=Path, metavar="FILE", default=None,
                        help=_("the assignments file (default: assignments.toml at the top of the course repository)"))
