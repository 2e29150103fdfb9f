"""The pytest plugin that connects the checks to a submission.

It gives each check module the `student` fixture for its section and turns
every test outcome into a `CheckResult`. Only the grader's check modules are
collected (checks/section_<id>.py and checks/hidden/hidden_<id>.py, mapped to their section by the
module's name: sections.section_of_module), with the grader's own ini file and rootdir:
the submission's folder is never pytest's rootdir, never on sys.path, never a source of conftest.py.
"""
from __future__ import annotations

import traceback

import pytest

from autograder.core.answers import is_answer
from autograder.core.harness import CheckFailed, StudentFailure, take_passing_figures, translated_title, verdict
from autograder.core.results import CheckResult
from autograder.core.sections import BY_ID, home, section_of_module
from autograder.core.student import Student
from autograder.i18n import N_, _, _f

GRADER_FAULT = N_("the grader itself failed in this check (not your code's fault); "
                   "your instructor can see the details")


def section_of(module) -> str:
    return section_of_module(module.__name__)


def figures_of(excinfo) -> list[dict]:
    """The heatmaps of the check that just ran (public inputs only): the comparisons that passed and
    asked to be shown (expect_close's show_passing), then the one a failed expect_close attached."""
    error = excinfo.value if excinfo else None
    failed = error.figure if isinstance(error, CheckFailed) and isinstance(error.figure, dict) else None
    return take_passing_figures() + ([failed] if failed else [])


def mistake_of(excinfo) -> str:
    """The catalogued mistake a CheckFailed named, else "": only the check's own verdict names one,
    never a message that merely quotes the student (an exception, printed output)."""
    error = excinfo.value if excinfo else None
    if isinstance(error, StudentFailure):  # an error whose evidence fitted a hint (core/hints.py)
        mistake = error.error.get("hint", "")
    else:
        mistake = getattr(error, "mistake", "") if isinstance(error, CheckFailed) else ""
    return mistake if isinstance(mistake, str) else ""


def answer_of_failure(excinfo) -> dict | None:
    """The fingerprint of the wrong values a failed comparison received (CheckFailed.answer), else None."""
    error = excinfo.value if excinfo else None
    answer = getattr(error, "answer", None) if isinstance(error, CheckFailed) else None
    return answer if is_answer(answer) else None


class Grading:
    """One submission's checks: its sections' workers, the checks' results as they come
    (CheckResult), and the grader's own errors. `GradingPlugin` feeds it pytest's outcomes."""

    def __init__(self, workers: dict, visible_only: bool = False):
        self.workers = workers  # section id -> SectionWorker
        self.visible_only = visible_only
        self.results: list[CheckResult] = []
        self.grader_errors: list[str] = []

    def select(self, items: list) -> tuple[list, list]:
        """(the checks this grading runs, in order; those it leaves out). Each kept section's worker
        is told which section comes next, to start that one's worker ahead."""
        keep, drop = [], []
        for item in items:
            grading = getattr(getattr(item, "function", None), "grading", None)
            section = section_of(item.module)
            wanted = section in self.workers and (not self.visible_only or (grading or {}).get("visible"))
            (keep if wanted else drop).append(item)
        order = list(dict.fromkeys(section_of(item.module) for item in keep))
        for section, after in zip(order, order[1:]):  # each section's worker starts the next one's ahead
            self.workers[section].next_up = self.workers[after]
        return keep, drop

    def record(self, item, call, report) -> None:
        """One phase's outcome of a check: a CheckResult after its call (or its failed setup)."""
        grading = getattr(item.function, "grading", None)
        if grading is None:
            if call.when == "call":
                self.grader_errors.append(_f("{test}: a test without @check", test=item.nodeid))
            return
        failed = report.failed or (call.excinfo is not None and call.when != "teardown")
        if call.when == "setup":  # nothing recorded before this check began belongs to it
            take_passing_figures()
        if call.when == "call" or (call.when == "setup" and failed):
            message, kind = "", ""
            if failed:
                message, kind = self._explain(item, call.excinfo)
            self.results.append(CheckResult(
                section=section_of(item.module),
                name=translated_title(grading),
                max_points=grading["points"],
                points=0.0 if failed else grading["points"],
                message=message,
                kind=kind,
                documented=grading["documented"],
                visible=grading["visible"],
                visibility=grading.get("visibility", ""),
                # pictures of public inputs only: a hidden check's (fresh seeds, the reference's values) never
                figures=figures_of(call.excinfo) if grading["visible"] else [],
                mistake=mistake_of(call.excinfo) if failed else "",
                id=item.name,
                answer=answer_of_failure(call.excinfo) if failed else None,
                home=home(grading, BY_ID[section_of(item.module)]),
                stood_in=sorted(getattr(item.funcargs.get("student"), "stood_in", ()) or ()),
            ))

    def _explain(self, item, excinfo):
        error = excinfo.value if excinfo else None
        said = verdict(error)
        if said is not None:
            return said
        detail = "".join(traceback.format_exception(error)) if error else "no exception"
        self.grader_errors.append(f"{item.nodeid}: {detail}")
        return _(GRADER_FAULT), "grader"


class GradingPlugin:
    """pytest's side: the `student` fixture and every outcome, for the grading under way.

    One plugin per pytest run (`grade`), or one for a whole session that grades one
    submission after another (core/check_session.py), which sets `grading` for each;
    None while that session collects: every check is kept, each grading chooses its own."""

    def __init__(self, grading: Grading | None = None):
        self.grading = grading

    @pytest.fixture
    def student(self, request):
        return Student(self.grading.workers[section_of(request.module)])

    def pytest_collection_modifyitems(self, session, config, items):
        if self.grading is None:
            return
        items[:], drop = self.grading.select(items)
        if drop:
            config.hook.pytest_deselected(items=drop)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        report = yield
        self.grading.record(item, call, report)
        return report
