"""A grading that could not happen, as data: `grade` writes it where its JSON result would have gone.

Gradescope's run_autograder (instructor/gradescope.py) then finds a results.json that says why,
with the reason as data in `extra_data["not_graded"]`: a `kind` a machine reads (one of KINDS,
the same in every language) and the `reason`, the one translated line a person reads, the line
the command also prints on stderr.
"""
from __future__ import annotations

from dataclasses import dataclass

from autograder.i18n import _f

NO_SANDBOX = "no_sandbox"  # no sandbox tier holds on this machine (and --sandbox weak was not given)
SUBMISSION = "submission"  # the submission cannot be read as one (no such file, not a notebook, ...)
COMMAND_LINE = "command_line"  # the command itself is wrong (an unknown section, no GPU for --device cuda)
VISIBLE_CHECKS_ONLY = "visible_checks_only"  # this copy of the grader is the students' self-check
GRADER_FAILED = "grader_failed"  # the grader itself failed before it had a result
KINDS = (NO_SANDBOX, SUBMISSION, COMMAND_LINE, VISIBLE_CHECKS_ONLY, GRADER_FAILED)


@dataclass(frozen=True)
class NotGraded:
    kind: str  # one of KINDS
    reason: str  # one line, translated

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown kind of not graded: {self.kind!r}")

    def to_gradescope(self) -> dict:
        """Gradescope's results.json for a submission nothing of which was graded: no tests, a zero,
        and why, to the student in words and to a machine as data."""
        return {
            "score": 0,
            "tests": [],
            "output": _f("This submission could not be graded, through no fault of yours. Please tell your "
                         "instructor; the reason: {reason}", reason=self.reason),
            "visibility": "visible",
            "stdout_visibility": "hidden",  # the grader's own lines, for the instructor (as a grade's: core/results)
            "output_format": "text",
            "extra_data": {"not_graded": {"kind": self.kind, "reason": self.reason}},
        }
