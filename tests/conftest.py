"""Project-wide pytest hooks of the course's own tests (keep this file small and generic).

A test module may set `SUMMARY_LINE = "label"`: the run then ends with one line
for it, "label: N/M contained" (passed / collected), plus how many tests were
skipped as degraded (their reason starts with "degraded") and how many failed.

A run that collects tests/test_selfcheck_share.py ends with its line too:
"self-check flags N/M catalogue mistakes (P%); K named mistakes in the catalogue".

A test may record what it measured for the end of the run, one line each:
`record_property("summary", "container as root: tier landlock ...")`.

The fixture `chinese` has the grader speak Chinese for one test; `chinese_partial_report` is
`grade --lang zh --report` of the partial example, run once for the tests that read its report.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

_labels: dict = {}  # nodeid -> label, for the modules that ask for a summary line
_share: list = []  # the self-check's share of the catalogue is printed when its test module was collected


def pytest_collection_modifyitems(session, config, items):
    _share[:] = [True] if any(item.nodeid.split("::")[0].endswith("test_selfcheck_share.py") for item in items) else []
    for item in items:
        label = getattr(getattr(item, "module", None), "SUMMARY_LINE", None)
        if label:
            _labels[item.nodeid] = label


def _share_line(terminalreporter):
    try:
        from test_selfcheck_share import summary_line

        terminalreporter.write_line(summary_line())
    except Exception as error:  # the line is a report: its test says what is wrong
        terminalreporter.write_line(f"self-check share not measured: {type(error).__name__}: {error}")


def _recorded_lines(terminalreporter) -> list:
    return [value for outcome in ("passed", "failed") for report in terminalreporter.stats.get(outcome, [])
            if report.when == "call" for key, value in report.user_properties if key == "summary"]


def pytest_terminal_summary(terminalreporter):
    if _share:
        _share_line(terminalreporter)
    for line in _recorded_lines(terminalreporter):
        terminalreporter.write_line(str(line))
    if not _labels:
        return
    counts: dict = {}
    for outcome in ("passed", "failed", "error", "skipped"):
        for report in terminalreporter.stats.get(outcome, []):
            label = _labels.get(getattr(report, "nodeid", ""))
            if not label or (outcome == "passed" and report.when != "call"):
                continue
            tally = counts.setdefault(label, {"passed": 0, "failed": 0, "degraded": 0, "skipped": 0})
            if outcome == "skipped":
                reason = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
                tally["degraded" if "degraded" in reason else "skipped"] += 1
            elif outcome == "passed":
                tally["passed"] += 1
            else:
                tally["failed"] += 1
    for label, tally in counts.items():
        total = tally["passed"] + tally["failed"] + tally["degraded"]
        line = f"{label}: {tally['passed']}/{total} contained"
        extra = [f"{tally[k]} {k}" for k in ("degraded", "failed") if tally[k]]
        if extra:
            line += " (" + ", ".join(extra) + ")"
        terminalreporter.write_line(line)


@pytest.fixture
def chinese():
    """The grader speaks Chinese for one test, then English again."""
    from autograder import i18n

    i18n.set_language("zh")
    try:
        yield
    finally:
        i18n.set_language("en")


@pytest.fixture
def drawn(monkeypatch):
    """The figures the plotting helper drew (under Agg it closes them; they are kept instead, and closed after
    the test)."""
    import matplotlib.pyplot as plt

    figures = []
    close = plt.close
    monkeypatch.setattr(plt, "close", lambda figure=None: figures.append(figure))
    yield figures
    for figure in figures:
        close(figure)


@pytest.fixture(scope="session")
def course_build():
    """Every generated file of the course, built once for the run (a build takes tens of seconds: the modules that
    read its result share this one)."""
    from course.builder import steps

    return steps.build()


@pytest.fixture(scope="session")
def chinese_partial_report(tmp_path_factory):
    """(the finished `grade examples/partial --lang zh --report DIR`, DIR), graded once per run."""
    root = Path(__file__).resolve().parents[1]
    folder = tmp_path_factory.mktemp("chinese-report")
    env = {**os.environ, "PYTHONPATH": str(root)}
    env.pop("ATTENTION_COURSE_LANG", None)
    done = subprocess.run([sys.executable, "-m", "autograder", "grade", "examples/partial", "--lang", "zh",
                           "--report", str(folder)], capture_output=True, text=True, cwd=root, env=env, timeout=600)
    return done, folder
