"""Grading results: the one result model of a grade.

Everything that shows or gathers a grade reads a GradeResult: kept on disk, it is its record
(core/record.py), read back as data. `GradeResult.to_gradescope()` renders Gradescope's
results.json, as feedback/formats.py renders the table, JUnit and Markdown: renderings only,
never read back.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from autograder.core.extract import NOT_HANDED_IN, REFUSALS
from autograder.core.harness import DEFAULT_VISIBILITY
from autograder.core.sections import is_bonus, part_of
from autograder.i18n import N_, _, _f

# a surrogate alone in a str cannot be encoded (results.json is UTF-8); student text may hold one
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def encodable(text) -> str:
    """`text` with every lone surrogate replaced by U+FFFD, so that it can be written as UTF-8."""
    return _SURROGATE.sub("\ufffd", str(text))


# (marked for the catalogues: translated with _() where it is shown)
WEAK_WARNING = N_("graded WITHOUT a sandbox (--sandbox weak): the student's code was not contained, "
                "so it could have read the answers or changed these results")


@dataclass
class CheckResult:
    section: str
    name: str  # the check's title: one idea, e.g. "softmax sums to 1 along the last dim"
    max_points: float
    points: float
    message: str = ""  # empty when it passed
    kind: str = ""  # why it failed: check, stub, missing, raised, timeout, forbidden, ...
    documented: bool = False
    visible: bool = False
    # Gradescope's visibility of its test, as the check declared it ("visible", "after_due_date",
    # "after_published"); "" for a result made by hand: then "visible" if `visible`, else the
    # harness's default for a hidden check (shown_when)
    visibility: str = ""
    # the catalogued mistake the check recognised (harness.CheckFailed.mistake), "" if none;
    # serialised as the test's extra_data["mistake"], which the class report counts
    mistake: str = ""
    # expected/actual matrices for the feedback report's heatmaps, each a dict as in
    # harness.CheckFailed.figure ("passed": True for a comparison that matched and is shown anyway);
    # never in results.json: to_gradescope and every format leave them out
    figures: list = field(default_factory=list, repr=False, compare=False)
    id: str = ""  # the check's own name in its check file (the test function's), "" for one made by hand
    # the fingerprint of the wrong values a failed comparison received (core/answers.py), None if none:
    # in the grade's own record for the instructor's similarity, never in results.json or a student's report
    answer: dict | None = field(default=None, repr=False, compare=False)
    # the graded name whose cell carries the check (sections.home), and the graded names whose right stand-in
    # answered one of its calls in place of the student's own (the worker's `stood_in`): what grading words as
    # "with a correct ... in place of yours" (grade.section_result); never in results.json, as the figures
    home: str = field(default="", repr=False, compare=False)
    stood_in: list = field(default_factory=list, repr=False, compare=False)

    @property
    def passed(self) -> bool:
        return self.points >= self.max_points

    @property
    def shown_when(self) -> str:
        """Gradescope's visibility of this check's test: as declared, else as harness.check defaults it."""
        return self.visibility or ("visible" if self.visible else DEFAULT_VISIBILITY)


@dataclass
class SectionResult:
    id: str
    title: str
    checks: list = field(default_factory=list)
    notes: list = field(default_factory=list)  # e.g. cells that raised while loading
    printed: str = ""  # what the student's code printed (capped)
    # how the section's file was found in the submission folder (core/matching), for the instructor's table
    handed_in_as: str = ""  # the file graded, where it was taken by its cells rather than by its name
    files_found: list = field(default_factory=list)  # no file graded: the folder's files (capped), or with
    ambiguous: bool = False  # `ambiguous` the several notebooks that hold the section's cells

    @property
    def score(self) -> float:
        return sum(c.points for c in self.checks)

    @property
    def max_score(self) -> float:
        return sum(c.max_points for c in self.checks)

    @property
    def not_handed_in(self) -> bool:
        """Whether the section's notebook is missing: every check failed for that reason (grades.csv's
        status and the class report's list of who needs help name such sections)."""
        return bool(self.checks) and all(c.kind == NOT_HANDED_IN for c in self.checks)

    @property
    def refused(self) -> str:
        """Why the grader refused the section (extract.REFUSALS: its checks all failed so), else ""."""
        kinds = {c.kind for c in self.checks if not c.passed}
        return next(iter(kinds)) if len(kinds) == 1 and kinds <= set(REFUSALS) and not any(
            c.passed for c in self.checks) else ""

    @property
    def not_started(self) -> bool:
        """Whether every check failed on a stub still raising NotImplementedError: then one note says the
        section is not started (grade.section_result), and the table leaves out the checks' messages,
        which would all repeat it."""
        return bool(self.checks) and all(c.kind == "stub" and not c.passed for c in self.checks)

    @property
    def bonus(self) -> bool:
        """Whether the registry marks this section as a bonus: its points add to the score, not to the maximum."""
        return is_bonus(self.id)

    @property
    def part(self) -> int:
        """The part of the course the section belongs to: its points count in that part's total too."""
        return part_of(self.id)

    @property
    def heading(self) -> str:
        """The section's title as reports show it: a bonus section says so."""
        return _f("{title} (bonus)", title=self.title) if self.bonus else self.title


def total_text(score: float, max_score: float, bonus_score: float | None = None, bonus_max: float = 0.0,
               number=lambda value: f"{value:g}") -> str:
    """"56 / 60", or with a bonus section graded "60 / 60, plus 4 / 10 bonus" (`score` counts the bonus; the
    total shown never reads above its maximum: the bonus is shown apart), or with only a bonus section graded
    "4 / 10 bonus"."""
    if bonus_max and not max_score:
        return _f("{score} / {max_score} bonus", score=number(bonus_score or 0.0), max_score=number(bonus_max))
    text = f"{number(round(score - (bonus_score or 0.0), 4))} / {number(max_score)}"
    if bonus_max:
        text = _f("{total}, plus {score} / {max_score} bonus", total=text,
                  score=number(bonus_score or 0.0), max_score=number(bonus_max))
    return text


@dataclass
class GradeResult:
    submission: str
    device: str
    sections: list = field(default_factory=list)
    execution_time: float = 0.0
    grader_errors: list = field(default_factory=list)  # for the instructor, never shown to students
    sandbox: str = ""  # the tier the student's code ran under: namespaces, landlock or none
    weak: bool = False  # graded with hidden checks at tier none (--sandbox weak): not contained
    torch: str = ""  # the torch version the grading ran with

    @property
    def provenance(self) -> str:
        """E.g. "sandbox: landlock, torch 2.13.0" (empty when neither is known)."""
        parts = (([_f("sandbox: {tier}", tier=self.sandbox)] if self.sandbox else [])
                 + ([_f("torch {version}", version=self.torch)] if self.torch else []))
        return _(", ").join(parts)

    @property
    def plain_provenance(self) -> str:
        """What a student reads of where their code ran: one plain phrase (no tier, no layer), and torch."""
        ran = ""
        if self.sandbox:
            ran = _("your code ran in a protected process") if self.sandbox != "none" else _(
                "your code ran without protection, as you")
        parts = ([ran] if ran else []) + ([_f("torch {version}", version=self.torch)] if self.torch else [])
        return _(", ").join(parts)

    # The bonus rule: a bonus section's points add to the score but not to the maximum, so that
    # a student's points can pass the maximum; the total shows them apart ("60 / 60, plus 4 / 10 bonus").
    @property
    def score(self) -> float:
        """Every section's points, the bonus sections' included."""
        return round(sum(s.score for s in self.sections), 4)

    @property
    def max_score(self) -> float:
        """The maximum of the core sections only (a bonus section adds nothing to it)."""
        return round(sum(s.max_score for s in self.sections if not s.bonus), 4)

    @property
    def bonus_score(self) -> float:
        return round(sum(s.score for s in self.sections if s.bonus), 4)

    @property
    def bonus_max(self) -> float:
        return round(sum(s.max_score for s in self.sections if s.bonus), 4)

    def total_text(self, number=lambda value: f"{value:g}") -> str:
        """The total; where sections of several parts of the course were graded, each part's total after it, so
        that a student who does one part reads that part's total ("38 / 70; part 1: 30 / 60; part 2: 8 / 10"),
        each written as the total is (its bonus apart, never above its maximum)."""
        text = total_text(self.score, self.max_score, self.bonus_score, self.bonus_max, number)
        parts = sorted({section.part for section in self.sections})
        if len(parts) < 2:
            return text
        totals = []
        for part in parts:
            held = [s for s in self.sections if s.part == part]
            bonus = [s for s in held if s.bonus]
            totals.append(_f("part {part}: {total}", part=part, total=total_text(
                round(sum(s.score for s in held), 4), round(sum(s.max_score for s in held if not s.bonus), 4),
                round(sum(s.score for s in bonus), 4), round(sum(s.max_score for s in bonus), 4), number)))
        return _f("{total}; {parts}", total=text, parts=_("; ").join(totals))  # a part's total may hold a comma

    def to_gradescope(self) -> dict:
        """Gradescope's results.json: a rendering of this result for Gradescope, never read back
        (what the grader reads again is the record, to_record)."""
        lines = []
        for section in self.sections:
            lines.append(f"{section.id}: {section.score:g} / {section.max_score:g}")
            lines.extend(f"  {encodable(note)}" for note in section.notes)
        data = {
            "score": self.score,
            "max_score": self.max_score,
            "execution_time": round(self.execution_time, 3),
            "output": "\n".join(([_(WEAK_WARNING), ""] if self.weak else []) + lines),
            "visibility": "visible",
            "stdout_visibility": "hidden",  # stdout is the grader's own log, never for students
            "output_format": "text",  # messages quote student text: shown as text, never as HTML/Markdown
            "test_output_format": "text",
            "tests": [gradescope_test(c, section.bonus) for section in self.sections for c in section.checks],
        }
        if self.sandbox or self.torch:  # Gradescope's own field for data of ours
            data["extra_data"] = {"sandbox": self.sandbox, "sandbox_weak": self.weak, "torch": self.torch}
        return data


def gradescope_test(c: CheckResult, bonus: bool) -> dict:
    """One check as a test of Gradescope's results.json."""
    # a bonus check is Gradescope's extra credit: max_score 0, its earned points as the score
    # (its own points kept in extra_data["max_points"]), so that Gradescope's total is ours
    test = {
        "name": f"{c.section}: {c.name}",
        "score": c.points,
        "max_score": 0.0 if bonus else c.max_points,
        "status": "passed" if c.passed else "failed",
        "output": encodable(c.message),
        "tags": [c.section] + (["documented"] if c.documented else []) + ([c.kind] if c.kind else []),
        # as the check declared it: a visible check (the self-check runs it too) is shown at once;
        # a hidden one (fresh seeds against the reference) after the due date, or once published
        "visibility": c.shown_when,
    }
    if c.mistake and not c.passed:  # Gradescope keeps a test's extra_data as it is
        test["extra_data"] = {"mistake": c.mistake}
    if bonus:
        test.setdefault("extra_data", {})["max_points"] = c.max_points
    return test
