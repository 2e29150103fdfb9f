"""Project-wide pytest hooks of the course's own tests (keep this file small and generic).

A test module may set `SUMMARY_LINE = "label"`: the run then ends with one line
for it, "label: N/M contained" (passed / collected), plus how many tests were
skipped as degraded (their reason starts with "degraded") and how many failed.

A test may record what it measured for the end of the run, one line each:
`record_property("summary", "container as root: tier landlock ...")` (the self-check's share of
the catalogue: "self-check flags N/M catalogue mistakes (P%); ...").

Both travel in the test reports' user_properties, so the lines are the same whether the suite runs
in one process or on several (pytest-xdist, `-n 2`, where the controller collects nothing itself).

The fixture `chinese` has the grader speak Chinese for one test; `chinese_partial_report` is
`grade --lang zh --report` of the partial example, run once for the tests that read its report.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SUMMARY_LABEL = "summary_label"  # the user property naming a test's summary line (its module's SUMMARY_LINE)


def pytest_collection_modifyitems(session, config, items):
    for item in items:
        label = getattr(getattr(item, "module", None), "SUMMARY_LINE", None)
        if label:
            item.user_properties.append((SUMMARY_LABEL, label))


def _property(report, name: str):
    return next((value for key, value in getattr(report, "user_properties", ()) if key == name), None)


def _recorded_lines(terminalreporter) -> list:
    return [value for outcome in ("passed", "failed") for report in terminalreporter.stats.get(outcome, [])
            if report.when == "call" for key, value in report.user_properties if key == "summary"]


def pytest_terminal_summary(terminalreporter):
    for line in _recorded_lines(terminalreporter):
        terminalreporter.write_line(str(line))
    counts: dict = {}
    for outcome in ("passed", "failed", "error", "skipped"):
        for report in terminalreporter.stats.get(outcome, []):
            label = _property(report, SUMMARY_LABEL)
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
