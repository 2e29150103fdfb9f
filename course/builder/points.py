"""Share out a section's points over its notebook's test cells.

The section's points are the grader's (the sum of the points its checks declare), so that
nbgrader's gradebook and grades.csv count the same. Each `[test] <name> <weight>` cell carries the
points of the checks about its graded name (core/sections.home), so that `batch --gradebook` can
give each test cell exactly what the grader gave those checks; where one name has several test
cells, they share its points in proportion to their weights, on nbgrader's grid of quarter points.
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


def name_points(section: Section) -> dict[str, float]:
    """Each graded name -> the points of the checks about it (core/sections.home): what its test cell carries."""
    from autograder.checks import homes

    totals: dict[str, float] = {}
    for name, points in homes(section.id).values():
        totals[name] = totals.get(name, 0.0) + points
    return totals


def share_points(section: Section, tests: list, where: str, maximum: float | None = None) -> None:
    """Give each test cell of `tests` ((cell, graded name, weight) triples) the points of the checks about its
    name, so that nbgrader scores each test cell as the grader scores those checks (instructor/cell_scores.py);
    several test cells of one name share its points by their weights. With `maximum` (the builder's own
    tests), the section's `maximum` points are shared out by the weights alone."""
    if maximum is not None:
        shares = apportion(maximum, [weight for _, _, weight in tests], where)
    else:
        shares = by_checks(section, tests, where)
    for (cell, _, _), points in zip(tests, shares):
        # a bonus section's test cells carry 0 points: nbgrader's maximum leaves the bonus out, as ours
        # does, and `batch --gradebook` writes its points as extra credit (instructor/gradebook.py)
        cell.metadata["nbgrader"]["points"] = 0 if section.bonus else points


def by_checks(section: Section, tests: list, where: str) -> list:
    """Each test cell's share of its graded name's points (name_points), in the order of `tests`."""
    totals = name_points(section)
    tested = {name for _, name, _ in tests}
    untested = sorted(set(totals) - tested)
    if untested:
        raise BuildError(f"{where}: no [test] cell for {untested}: their checks' points would count in "
                         "grades.csv and not in nbgrader")
    shares: dict[int, int | float] = {}
    for name in tested:
        indices = [i for i, (_, cell_name, _) in enumerate(tests) if cell_name == name]
        if name not in totals:
            raise BuildError(f"{where}: [test] {name}: no check of {section.id} is about {name!r}, so the cell "
                             "would carry no points")
        for index, points in zip(indices, apportion(totals[name], [tests[i][2] for i in indices], where)):
            shares[index] = points
    return [shares[i] for i in range(len(tests))]
