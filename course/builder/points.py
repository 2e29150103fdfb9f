"""Share out a section's points over its notebook's test cells.

The section's points are the grader's (the sum of the points its checks declare), so that
nbgrader's gradebook and grades.csv count the same; each `[test] <name> <weight>` cell gets
a share in proportion to its weight, on nbgrader's grid of quarter points.
"""
from __future__ import annotations

import math
from fractions import Fraction

from autograder.checks import declared
from autograder.core.sections import Section, check_module, hidden_module
from course.builder.layout import BuildError

# nbgrader's points of a test cell are multiples of a quarter point, as the checks' points are.
POINT_GRID = Fraction(1, 4)


def _number(value: Fraction) -> int | float:
    return int(value) if value.denominator == 1 else float(value)


def apportion(maximum: float, weights: list, where: str) -> list[int | float]:
    """`maximum` points shared out over cells in proportion to `weights`, in multiples of
    POINT_GRID, summing to exactly `maximum` (the units left over after rounding down go to
    the largest remainders, the earlier cell first on a tie)."""
    if not weights:
        raise BuildError(f"{where}: no [test] cell to carry the section's {maximum:g} points")
    units = Fraction(maximum) / POINT_GRID
    if units.denominator != 1:
        raise BuildError(f"{where}: the section's maximum {maximum:g} is not a multiple of {float(POINT_GRID):g} points")
    total = sum(Fraction(w) for w in weights)
    exact = [units * Fraction(w) / total for w in weights]
    shares = [math.floor(x) for x in exact]
    left = int(units) - sum(shares)
    for index in sorted(range(len(weights)), key=lambda i: (shares[i] - exact[i], i))[:left]:
        shares[index] += 1
    for index, share in enumerate(shares):
        if share == 0:
            raise BuildError(f"{where}: test cell #{index + 1} gets no points of the section's {maximum:g}: "
                             "raise its weight")
    return [_number(share * POINT_GRID) for share in shares]


def section_maximum(section: Section) -> float:
    """The most points the grader gives `section` (its maximum in grades.csv): the sum of the
    points its checks declare with @check, visible and hidden (autograder/checks/section_<id>.py and
    autograder/checks/hidden/hidden_<id>.py), counted
    as the grader's pytest run collects them (autograder.checks.declared)."""
    try:
        checks = declared(section.id)
    except ModuleNotFoundError as error:
        if error.name not in (check_module(section.id), hidden_module(section.id)):
            raise  # the checks' module exists but imports something missing: show that
        raise BuildError(f"{section.id}: no checks' module {error.name}") from None
    total = sum(grading["points"] for grading in checks.values())
    if total <= 0:
        raise BuildError(f"{section.id}: its checks carry no points")
    return total


def share_points(section: Section, tests: list, where: str, maximum: float | None = None) -> None:
    """Give each test cell of `tests` ((cell, weight) pairs) its share of `maximum` (default:
    the grader's maximum of the section) in its nbgrader metadata."""
    maximum = section_maximum(section) if maximum is None else maximum
    shares = apportion(maximum, [weight for _, weight in tests], where)
    for (cell, _), points in zip(tests, shares):
        # a bonus section's test cells carry 0 points: nbgrader's maximum leaves the bonus out, as ours
        # does, and `batch --gradebook` writes its points as extra credit (instructor/gradebook.py)
        cell.metadata["nbgrader"]["points"] = 0 if section.bonus else points
