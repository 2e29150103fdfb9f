"""The course's sections: what each one asks for and what it forbids.

The registry is derived, not written: each section declares itself in its own
visible checks' module, `autograder/checks/section_<id>.py`, as a literal `SECTION = {...}`
at the top (title, reference module, graded names, forbidden APIs, ...). This
module reads those declarations with `ast` (nothing is imported, so reading
the registry never imports torch or a check's reference solution) and turns
them into `Section`s, in the order of their ids. Adding a section is adding
its files (docs/adding-a-section.md); nothing here changes.

The course builder, the extractor, the worker's forbidden-API watch, the
reports and the instructor's tools all read SECTIONS: counts, lists and
totals come from here, never from literals.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

SOFTMAX_APIS = (
    "torch.softmax",
    "torch.nn.functional.softmax",
    "torch.nn.Softmax",
    "Tensor.softmax",
    "torch.special.softmax",
    "torch.log_softmax",
    "torch.nn.functional.log_softmax",
    "torch.nn.LogSoftmax",
    "Tensor.log_softmax",
    "torch.special.log_softmax",
)
ATTENTION_APIS = (
    "torch.nn.functional.scaled_dot_product_attention",
    "torch.nn.MultiheadAttention",
)
API_FAMILIES = {"softmax": SOFTMAX_APIS, "attention": ATTENTION_APIS,  # what a SECTION's "forbidden" may name
                "softmax and attention": SOFTMAX_APIS + ATTENTION_APIS}

# The rules a check may hold a graded name to besides its values (SECTION's "rules": rule id -> the names it
# binds). Their words are autograder/core/rules.py's; which checks enforce each one, tests/test_rules_stated.py finds.
RULE_IDS = ("unchanged", "no_loop", "param_order", "device", "input_dtype", "float32", "mask_true_hidden")

CHECKS_DIR = Path(__file__).resolve().parents[1] / "checks"
# A section's checks are two modules named after it: the one spelling of those names, which the registry,
# the grader's pytest run (core/grade.PYTEST_ARGS), the notebooks and the self-check follow. Not test_*:
# the checks are the grader's, never the project's tests.
#   checks/section_<id>.py         its registry entry (SECTION) and its visible checks: shipped to students
#   checks/hidden/hidden_<id>.py   its hidden checks, which compare with solutions/: never shipped
CHECK_PREFIX = "section_"
CHECK_FILE = CHECK_PREFIX + "{id}.py"
CHECK_GLOB = CHECK_FILE.format(id="[0-9][0-9]_*")
HIDDEN_PACKAGE = "hidden"  # the folder of checks/ that the self-check wheel leaves out
HIDDEN_PREFIX = "hidden_"
HIDDEN_FILE = HIDDEN_PREFIX + "{id}.py"
HIDDEN_GLOB = HIDDEN_FILE.format(id="[0-9][0-9]_*")


def check_file(section_id: str, checks_dir: Path = CHECKS_DIR) -> Path:
    """The module of the section `section_id`'s registry entry and visible checks."""
    return checks_dir / CHECK_FILE.format(id=section_id)


def hidden_file(section_id: str, checks_dir: Path = CHECKS_DIR) -> Path:
    """The module of the section `section_id`'s hidden checks."""
    return checks_dir / HIDDEN_PACKAGE / HIDDEN_FILE.format(id=section_id)


def check_module(section_id: str) -> str:
    """The dotted name of the section `section_id`'s visible checks (and registry entry)."""
    return f"autograder.checks.{CHECK_PREFIX}{section_id}"


def hidden_module(section_id: str) -> str:
    """The dotted name of the section `section_id`'s hidden checks."""
    return f"autograder.checks.{HIDDEN_PACKAGE}.{HIDDEN_PREFIX}{section_id}"


def section_of_module(module_name: str) -> str:
    """The section id of a check module, visible or hidden (by its dotted or bare name), "" for any other."""
    prefixes = "|".join(map(re.escape, (CHECK_PREFIX, HIDDEN_PREFIX)))
    match = re.fullmatch(rf"(?:{prefixes})(\d\d_\w+)", module_name.rsplit(".", 1)[-1])
    return match.group(1) if match else ""


class SectionError(Exception):
    """A check file's SECTION declaration cannot be read (the message starts with path:line)."""


@dataclass(frozen=True)
class Section:
    id: str  # "02_softmax": folder, notebook stem and nbgrader assignment name
    title: str
    solution_module: str  # the reference module under solutions/
    names: tuple[str, ...]  # every graded function and class, in notebook order
    forbidden: tuple[str, ...] = ()  # APIs the graded names below may not call
    forbidden_in: tuple[str, ...] = ()  # which graded names the ban applies to
    rules: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (rule id, the graded names it binds), in RULE_IDS' order
    provided: tuple[str, ...] = field(default=())  # "module:name" given in locked cells
    uses_meta: bool = False  # some checks use the meta device: the zygote warms it once (grade.run_checks, batch)
    bonus: bool = False  # its points come on top of the course's total (see results.GradeResult)
    part: int = 1  # the part of the course it belongs to (1: sections 01-07, 2: today's models); totals per part

    @property
    def notebook(self) -> str:
        return f"{self.id}.ipynb"

    def rules_of(self, name: str) -> tuple[str, ...]:
        """The ids of the rules that bind the graded name `name`, in RULE_IDS' order."""
        return tuple(rule for rule, names in self.rules if name in names)


FIELDS = {"title": str, "solution": str, "names": tuple, "forbidden": str, "forbidden_in": tuple, "rules": dict,
          "provided": tuple, "uses_meta": bool, "bonus": bool, "part": int}
REQUIRED = ("title", "solution", "names")


def declaring_part(text: str, filename: str) -> ast.Module:
    """The check file's statements up to the end of its SECTION dict (the whole file where it cannot
    be cut there): every start of the grader reads the registry, and parsing all the checks in full
    cost it about 60 ms. A prefix keeps its line numbers; the checks are parsed when pytest runs them."""
    end = re.search(r"^SECTION\s*=\s*\{.*?^\}[ \t]*$", text, re.MULTILINE | re.DOTALL)
    if end is not None:
        try:
            return ast.parse(text[:end.end()], filename=filename)
        except SyntaxError:
            pass
    return ast.parse(text, filename=filename)


def declaration(path: Path) -> tuple[dict, int]:
    """The literal SECTION dict of the check file at `path`, and its line."""
    where = f"{path}:1"
    try:
        tree = declaring_part(path.read_text(encoding="utf-8"), str(path))
    except (OSError, SyntaxError, UnicodeDecodeError) as error:
        raise SectionError(f"{where}: cannot read the section's check file ({type(error).__name__}: {error})") \
            from None
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["SECTION"]:
            where = f"{path}:{node.lineno}"
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                raise SectionError(f"{where}: SECTION must be a literal dict (strings, tuples, booleans)") from None
            if not isinstance(value, dict):
                raise SectionError(f"{where}: SECTION must be a dict, not {type(value).__name__}")
            return value, node.lineno
    raise SectionError(f"{where}: no SECTION = {{...}} declaration at the top of the check file")


def read_section(path: Path) -> Section:
    """The Section that the check file at `path` (checks/section_<id>.py) declares."""
    data, line = declaration(path)
    where = f"{path}:{line}"
    for key in REQUIRED:
        if key not in data:
            raise SectionError(f"{where}: SECTION lacks {key!r}")
    for key, value in data.items():
        if key not in FIELDS:
            raise SectionError(f"{where}: SECTION has an unknown key {key!r} (known: {', '.join(FIELDS)})")
        if not isinstance(value, FIELDS[key]):
            raise SectionError(f"{where}: SECTION[{key!r}] must be a {FIELDS[key].__name__}")
    family = data.get("forbidden")
    if family is not None and family not in API_FAMILIES:
        raise SectionError(f"{where}: SECTION['forbidden'] must name one of {', '.join(API_FAMILIES)}")
    unknown = [name for name in data.get("forbidden_in", ()) if name not in data["names"]]
    if unknown:
        raise SectionError(f"{where}: SECTION['forbidden_in'] names {', '.join(unknown)}, not graded names")
    rules = data.get("rules", {})
    for rule, names in rules.items():
        if rule not in RULE_IDS:
            raise SectionError(f"{where}: SECTION['rules'] has an unknown rule {rule!r} (known: {', '.join(RULE_IDS)})")
        if not isinstance(names, tuple) or not names:
            raise SectionError(f"{where}: SECTION['rules'][{rule!r}] must be a tuple of the graded names it binds")
        unknown = [name for name in names if name not in data["names"]]
        if unknown:
            raise SectionError(f"{where}: SECTION['rules'][{rule!r}] names {', '.join(unknown)}, not graded names")
    return Section(
        id=path.stem[len(CHECK_PREFIX):], title=data["title"], solution_module=data["solution"],
        names=tuple(data["names"]), forbidden=API_FAMILIES[family] if family else (),
        forbidden_in=tuple(data.get("forbidden_in", ())),
        rules=tuple((rule, tuple(rules[rule])) for rule in RULE_IDS if rule in rules),
        provided=tuple(data.get("provided", ())),
        uses_meta=data.get("uses_meta", False), bonus=data.get("bonus", False),
        part=data.get("part", 1))


def discover(checks_dir: Path = CHECKS_DIR) -> tuple[Section, ...]:
    """Every section with a check file in `checks_dir`, in the order of their ids."""
    return tuple(read_section(path) for path in sorted(checks_dir.glob(CHECK_GLOB)))


SECTIONS: tuple[Section, ...] = discover()
BY_ID = {section.id: section for section in SECTIONS}
CORE = tuple(section for section in SECTIONS if not section.bonus)  # the sections the course's total counts
BONUS = tuple(section for section in SECTIONS if section.bonus)


def is_bonus(section_id: str) -> bool:
    """Whether `section_id` is a bonus section (its points add to the score, not to the maximum);
    False for an id the registry does not know (a result read back from an older course)."""
    return section_id in BY_ID and BY_ID[section_id].bonus


def part_of(section_id: str) -> int:
    """The part of the course `section_id` belongs to (1 for an id the registry does not know)."""
    return BY_ID[section_id].part if section_id in BY_ID else 1


def find(section_id: str) -> Section:
    """The section named `section_id` (also accepts "02" or "softmax")."""
    if section_id in BY_ID:
        return BY_ID[section_id]
    matches = [s for s in SECTIONS if section_id in (s.id[:2], s.id[3:])]
    if len(matches) == 1:
        return matches[0]
    raise KeyError(section_id)


def home(grading: dict, section: Section) -> str:
    """The graded name a check is about (a check's `grading`, harness.check): the `cell` it declares (every
    visible check declares one: a notebook's check cell of that name runs it, autograder/notebook.py), else,
    for a hidden check, which no notebook cell runs, the last graded name its title mentions in the
    section's order, else the section's only name. That name's test cell carries the check's points in
    nbgrader (course/builder/points.py, instructor/cell_scores.py)."""
    if grading.get("cell"):
        if grading["cell"] not in section.names:
            raise ValueError(f"{section.id}: the check {grading['title']!r} declares cell={grading['cell']!r}, "
                             f"not one of the section's graded names {section.names}")
        return grading["cell"]
    if grading.get("visible"):
        raise ValueError(f"{section.id}: the visible check {grading['title']!r} declares no cell=")
    named = [n for n in section.names if re.search(rf"(?<![\w.]){re.escape(n)}(?!\w)", grading["title"])]
    if named:
        return named[-1]
    if len(section.names) == 1:
        return section.names[0]
    raise ValueError(f"{section.id}: the hidden check {grading['title']!r} names no graded name in its title: "
                     f"give it cell=")
