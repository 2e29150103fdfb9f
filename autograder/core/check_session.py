"""One pytest session that grades one submission after another: a batch job's.

`grade` runs pytest once per submission: its configuration, its plugins and the
collection of the check files, then the checks. A batch job grades student after
student in one process, so it pays the first part once: `serve_in_session(serve)`
starts pytest over every section's check file and, in place of pytest's own test
loop, calls `serve(session)`; `serve` grades each student with
`run_checks(..., session=session)`, which runs `session.run(grading)`.

Each grading runs its own sections' checks (plugin.Grading.select) through
pytest's own protocol, with the same fixtures and reports as a run of its own, and
ends with every fixture torn down: nothing of one student's checks is kept for the
next. The check modules are imported once per process either way (pytest's
importlib mode reuses what sys.modules holds).
"""
from __future__ import annotations

import traceback

import pytest

from autograder.core.grade import CHECKS_ARGS, check_files, pytest_alone
from autograder.core.plugin import GradingPlugin
from autograder.core.sections import SECTIONS

# The run of `grade`, without the terminal's report: nobody reads it here, and over a whole class
# it would keep every check's report. Nor output capture: the job's own output goes to its log.
SESSION_ARGS = CHECKS_ARGS + ["-p", "no:terminal", "--capture=no"]


class CheckSession:
    """The session's collected checks, run for one grading at a time (`run`)."""

    def __init__(self, session, plugin: GradingPlugin, collection_errors: list[str]):
        self.session, self.plugin = session, plugin
        self.items = list(session.items)
        self.collection_errors = collection_errors

    def run(self, grading) -> tuple[int, str]:
        """Run `grading`'s checks: (an exit code as pytest's, what to tell the instructor when it is
        not 0 or 1). A check file that failed to load fails every grading, as it would alone."""
        if self.collection_errors:
            return 2, "\n".join(self.collection_errors)[-3000:]
        keep, _drop = grading.select(self.items)
        failed_before = self.session.testsfailed
        self.plugin.grading = grading
        item = None
        try:
            for index, item in enumerate(keep):
                following = keep[index + 1] if index + 1 < len(keep) else None  # None: tear everything down
                item.ihook.pytest_runtest_protocol(item=item, nextitem=following)
        except Exception:  # the grader's own hooks failed: this grading reports it; the next starts clean
            said = traceback.format_exc()[-3000:]
            tear_down_after(item)
            return 3, said
        finally:
            self.plugin.grading = None
        return (1 if self.session.testsfailed > failed_before else 0), ""


def tear_down_after(item) -> None:
    """Tear down every fixture and node still set up once `item`'s protocol broke off: what pytest does
    after a session's last check, through its public teardown hook with no next item (pytest's runner
    then tears the whole stack down). An error while tearing down is dropped: the grading reports
    already the one that broke it off."""
    if item is None:  # no check ran: nothing was set up
        return
    try:
        item.ihook.pytest_runtest_teardown(item=item, nextitem=None)
    except Exception:
        pass


class SessionLoop:
    """The plugin that puts `serve` where pytest's test loop would run."""

    def __init__(self, serve, plugin: GradingPlugin):
        self.serve, self.plugin = serve, plugin
        self.collection_errors: list[str] = []
        self.served = False

    def pytest_configure(self, config):
        # what --tb=no says (the terminal plugin that defines it is off): a failed check's traceback is
        # not formatted, the check's own message is its report (plugin.Grading.record)
        config.option.tbstyle = "no"

    def pytest_collectreport(self, report):
        if report.failed:
            self.collection_errors.append(f"{report.nodeid}: {report.longrepr}")

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session):
        self.served = True
        self.serve(CheckSession(session, self.plugin, self.collection_errors))
        return True  # pytest's own loop does not run


def serve_in_session(serve) -> bool:
    """Run `serve(session)` inside one pytest session over every section's checks; False where the
    session could not start (the caller then grades each student with a pytest of its own)."""
    plugin = GradingPlugin()
    loop = SessionLoop(serve, plugin)
    files = check_files([section.id for section in SECTIONS], visible_only=False)
    with pytest_alone():
        pytest.main(files + SESSION_ARGS, plugins=[plugin, loop])
    return loop.served
