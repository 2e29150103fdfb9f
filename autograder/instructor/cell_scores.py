"""Each test cell's score in nbgrader: what the grader gave the checks about the cell's graded name.

The build gives the test cell `test_<name>` of a section's notebook the points of the checks
about `<name>` (course/builder/points.py; which name a check is about: core/sections.home), several
test cells of one name sharing them by their points. So a student's share of a cell is the points
the grader gave those checks: a failed function's test cell shows 0 of its points, a correct one
all of them, and the cells add up to the section's score, as grades.csv has it.

Where the checks cannot all be placed on the notebook's cells (a result made by hand, with no
check ids; a gradebook whose cells name no graded name, e.g. a notebook released before the
build placed the points this way), every cell gets the section's fraction of its points, as
before: the notebook's total is right, its cells are not told apart.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from autograder.core.results import SectionResult
from autograder.core.sections import BY_ID, Section


@dataclass
class CellShare:
    points: float  # the cell's automatic score (0 for a bonus section's cell: see extra)
    extra: float = 0.0  # a bonus section's points, as nbgrader's extra credit
    checks: list = field(default_factory=list)  # the checks that gave them; empty when not told apart


def graded_name(cell_name: str, section: Section) -> str | None:
    """The graded name a test cell is for: `test_<name>`, or `test_<name>_<n>` for a second one (the
    build's unique ids), the longest name first so that `test_softmax_naive` is softmax_naive's."""
    for name in sorted(section.names, key=len, reverse=True):
        if cell_name == f"test_{name}" or re.fullmatch(rf"test_{re.escape(name)}_\d+", cell_name):
            return name
    return None


def _checks_by_name(section: SectionResult) -> dict[str, list] | None:
    from autograder.checks import homes

    try:
        about = homes(section.id)
    except (ImportError, KeyError, ValueError):
        return None
    by_name: dict[str, list] = {}
    for check in section.checks:
        place = about.get(check.id.split("[")[0])  # a parametrised check's id carries its parameters
        if place is None:
            return None
        by_name.setdefault(place[0], []).append(check)
    return by_name


def cell_shares(section: SectionResult, cells: list[tuple[str, float]], bonus: bool) -> dict[str, CellShare]:
    """grade cell name -> its share, for the section's autograded cells ((name, points) pairs)."""
    known = BY_ID.get(section.id)
    by_name = _checks_by_name(section) if known is not None else None
    names = {cell: graded_name(cell, known) for cell, _ in cells} if known is not None else {}
    if by_name is None or None in names.values() or set(by_name) - set(names.values()):
        return _fractions(section, cells, bonus)
    shares = {}
    for cell, points in cells:
        siblings = [(other, most) for other, most in cells if names[other] == names[cell]]
        checks = by_name.get(names[cell], [])
        given = sum(check.points for check in checks)
        if bonus:  # 0-point cells: the name's points shared out evenly, as extra credit
            shares[cell] = CellShare(0.0, given / len(siblings), checks)
        else:
            most = sum(value for _, value in siblings)
            shares[cell] = CellShare(given * points / most if most else 0.0, 0.0, checks)
    return shares


def _fractions(section: SectionResult, cells: list[tuple[str, float]], bonus: bool) -> dict[str, CellShare]:
    """Every cell the section's fraction of its points (a bonus section's points evenly as extra credit)."""
    fraction = section.score / section.max_score if section.max_score > 0 else 0.0
    if bonus:
        return {cell: CellShare(0.0, section.score / len(cells)) for cell, _ in cells}
    return {cell: CellShare(float(points) * fraction) for cell, points in cells}
