"""Who needs help: the students of a graded class an instructor should turn to first, most urgent first.

Read from each student's stored grade (its record and the batch's provenance), never from a
rendered report, and said in the reader's language. One row per student, for the most urgent of:

    grader_error    the grader could not grade them: their zero is no grade (grade them again)
    refused         the grader refused a section (grades_table.refused): a notebook over the size
                    limit, an unreadable one, or code that reaches into the grader; its zero is no
                    grade of the work, and the student's report says what to do
    not_handed_in   an assigned section (a core section this run graded; a bonus section is
                    optional) has no notebook: its checks failed as "not_handed_in"
    blank           handed in, but nothing implemented: no point, and every check failed because a
                    stub still raises NotImplementedError or a graded function is gone ("stub",
                    "missing")
    low             the core sections' points are under LOW_SHARE (half) of their maximum; a bonus
                    section is optional, so its points do not lift a student off this list

A student with none of these is doing well enough not to be listed. Ties: the lower score first
(the one further behind), then the student's id.
"""
from __future__ import annotations

from dataclasses import dataclass

from autograder.core.extract import NOT_HANDED_IN
from autograder.core.failures import NOT_WRITTEN
from autograder.i18n import N_, _f
from autograder.instructor.grades_table import refused, refused_words
from autograder.instructor.student_files import Stored

LOW_SHARE = 0.5  # "low": the core sections' points under half of their maximum
# the reasons, most urgent first
REASONS = ("grader_error", "refused", "not_handed_in", "blank", "low")
WORDS = {
    "grader_error": N_("the grader could not grade this student: the zero is not a grade (grade again, and see "
                       "the batch's logs/)"),
    "refused": N_("refused, not graded: {refusals}; their report says how to hand it in again"),
    "not_handed_in": N_("not handed in: {sections}"),
    "blank": N_("handed in, but nothing implemented (every function is still the stub)"),
    "low": N_("{score:g} / {max_score:g}: under {share:.0%} of the maximum"),
}
COLUMNS = ["student", "reason", "sections", "score", "max_score", "explanation"]


@dataclass(frozen=True)
class Attention:
    """One student who needs help, and why (`reason`: one of REASONS)."""
    student: str
    reason: str
    score: float  # the core sections' points
    max_score: float
    sections: tuple[str, ...] = ()  # not_handed_in: the sections without a notebook; refused: those refused
    refusals: str = ""  # refused: the sections and why, in words (grades_table.refused_words)

    @property
    def explanation(self) -> str:
        """The reason in the reader's language."""
        return _f(WORDS[self.reason], sections=", ".join(self.sections), score=self.score,
                  max_score=self.max_score, share=LOW_SHARE, refusals=self.refusals)

    @property
    def urgency(self) -> tuple:
        return REASONS.index(self.reason), self.score, self.student


def not_handed_in(stored: Stored) -> tuple[str, ...]:
    """The graded core sections of `stored` that have no notebook (a bonus section is optional)."""
    return tuple(section.id for section in stored.grade.sections
                 if not section.bonus and section.not_handed_in)


def is_blank(stored: Stored) -> bool:
    """Handed in (some section), and nothing in it implemented: no point, every check a stub's."""
    checks = [check for section in stored.grade.sections for check in section.checks
              if check.kind != NOT_HANDED_IN]
    return bool(checks) and all(not check.passed and check.points == 0 and check.kind in NOT_WRITTEN
                                for check in checks)


def attention_for(student: str, stored: Stored, share: float = LOW_SHARE) -> Attention | None:
    """Why `student` needs help (the most urgent reason), or None."""
    grade = stored.grade
    score, best = round(grade.score - grade.bonus_score, 4), grade.max_score
    if stored.grader_errors:
        return Attention(student, "grader_error", score, best)
    if refused(stored):
        return Attention(student, "refused", score, best, tuple(section_id for section_id, _ in refused(stored)),
                         refused_words(stored))
    missing = not_handed_in(stored)
    if missing:
        return Attention(student, "not_handed_in", score, best, missing)
    if is_blank(stored):
        return Attention(student, "blank", score, best)
    if best > 0 and score < share * best:
        return Attention(student, "low", score, best)
    return None


def who_needs_help(results: dict[str, Stored], share: float = LOW_SHARE) -> list[Attention]:
    """Every student of `results` who needs help, most urgent first."""
    found = [attention_for(student, stored, share) for student, stored in results.items()]
    return sorted((item for item in found if item is not None), key=lambda item: item.urgency)


def help_table(results: dict[str, Stored]):
    """who_needs_help as a table: the reason as data (its code, the sections, the points) and in words."""
    import pandas as pd

    rows = [{"student": item.student, "reason": item.reason, "sections": " ".join(item.sections),
             "score": item.score, "max_score": item.max_score, "explanation": item.explanation}
            for item in who_needs_help(results)]
    return pd.DataFrame(rows, columns=COLUMNS)


def heading() -> str:
    """The class report's heading of the list, with the threshold it uses."""
    return _f("Students who need help, most urgent first (low: under {share:.0%} of the maximum)", share=LOW_SHARE)

