"""The time budgets of student code: one per section, one shared by all sections of a submission."""
from __future__ import annotations

from autograder.i18n import _f


class Budget:
    """Seconds of student code left: one for a section, one shared by all sections of a submission.

    Only the time spent waiting for the worker counts (what student code controls),
    so no pattern of calls, each under its own limit, can hold the grading longer
    than the budgets allow.
    """

    def __init__(self, seconds: float, parent: "Budget | None" = None):
        self.seconds, self.used, self.parent = seconds, 0.0, parent

    def left(self) -> float:
        own = self.seconds - self.used
        return own if self.parent is None else min(own, self.parent.left())

    def spend(self, seconds: float) -> None:
        self.used += seconds
        if self.parent is not None:
            self.parent.spend(seconds)

    def which(self) -> str:
        """Which budget is exhausted first: this section's or the submission's."""
        if self.parent is not None and self.parent.left() <= self.seconds - self.used:
            return _f("the submission's {seconds:g} s time budget", seconds=self.parent.seconds)
        return _f("the section's {seconds:g} s time budget", seconds=self.seconds)
