"""A grading in two processes (core/two_processes.py) gives what one process gives, and loses nothing when
its second process dies or hangs: run as the command line runs it, in a process of its own (the test
runner's threads make its own process unsafe to fork, and the grader then grades in one)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from support import EXAMPLES, ROOT

from autograder.core import two_processes
from autograder.core.results import GradeResult, SectionResult
from autograder.sandbox import tiers

SECTIONS = "01_scores,02_softmax,04_causal_mask,06_multihead"
ONE = {two_processes.SWITCH: "1"}
# Run in a process of its own: the command line, with `patch` run first (a test's stand-in for a failing copy)
SCRIPT = """
import os, sys, time
from autograder.core import two_processes
{patch}
from autograder.cli import main
sys.exit(main(sys.argv[1:]))
"""


def graded(*args, env: dict | None = None, patch: str = "") -> tuple[dict, str]:
    """(the JSON result without its timings, what was logged) of `grade ARGS` in a process of its own."""
    run = subprocess.run([sys.executable, "-c", SCRIPT.format(patch=patch), "grade", *args, "--format", "json",
                          "-v"], cwd=ROOT, env={**os.environ, **(env or {})}, capture_output=True, text=True,
                         timeout=300, stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stderr[-2000:]
    result = json.loads(run.stdout)
    for key in ("execution_time", "seconds"):
        result.pop(key, None)
    return result, run.stderr


def without_printed(data: dict) -> dict:
    """A report's data without what the student's code printed (the notebooks print their own timings)."""
    for section in data["sections"]:
        section["printed"] = ""
    return data


def test_two_processes_grade_as_one_does(tmp_path):
    one, _ = graded(str(EXAMPLES / "partial"), "--section", SECTIONS, "--report", str(tmp_path / "one"), env=ONE)
    two, log = graded(str(EXAMPLES / "partial"), "--section", SECTIONS, "--report", str(tmp_path / "two"))
    assert "grading in two processes: 01_scores 04_causal_mask here, 02_softmax 06_multihead in the second" in log
    assert two == one
    # the report's data, heatmaps' matrices included, comes back whole from the second process
    reports = [without_printed(json.loads((tmp_path / name / "report-data.json").read_text(encoding="utf-8")))
               for name in ("one", "two")]
    for report in reports:
        report["submission"] = None  # the report's own folder
    assert reports[0] == reports[1]
    assert any(check["figures"] for section in reports[1]["sections"] for check in section["checks"]
               if section["id"] in ("02_softmax", "06_multihead"))


@pytest.mark.parametrize("patch, why", [
    ("two_processes.to_record = lambda *a, **k: os._exit(3)", "failed (exit status 3)"),
    ("two_processes.to_record = lambda *a, **k: time.sleep(600)\ntwo_processes.MARGIN_SECONDS = 1.0",
     "did not answer in time"),
], ids=["dies", "hangs"])
def test_a_second_process_that_fails_loses_nothing(patch, why):
    one, _ = graded(str(EXAMPLES / "partial"), "--section", SECTIONS, env=ONE)
    two, log = graded(str(EXAMPLES / "partial"), "--section", SECTIONS, "--submission-budget", "15", patch=patch)
    assert why in log and "its sections are graded again here" in log
    assert two == one


def test_one_section_or_a_threaded_process_grades_in_one(monkeypatch):
    launcher = type("Launcher", (), {"kind": "fork", "copy_for_job": None})()
    monkeypatch.delenv(two_processes.SWITCH, raising=False)
    monkeypatch.setattr(two_processes, "cores", lambda: 2)
    monkeypatch.setattr(two_processes, "safe_to_fork", lambda: True)
    assert two_processes.wanted([1, 2], launcher)
    assert not two_processes.wanted([1], launcher)
    monkeypatch.setattr(two_processes, "cores", lambda: 1)
    assert not two_processes.wanted([1, 2], launcher)
    monkeypatch.setattr(two_processes, "cores", lambda: 2)
    monkeypatch.setenv(two_processes.SWITCH, "1")
    assert not two_processes.wanted([1, 2], launcher)
    monkeypatch.delenv(two_processes.SWITCH)
    monkeypatch.setattr(two_processes, "safe_to_fork", lambda: False)
    assert not two_processes.wanted([1, 2], launcher)


def test_this_test_runner_is_not_safe_to_fork_only_when_it_runs_threads():
    import threading

    others = [t for t in threading.enumerate() if t is not threading.main_thread()]
    assert two_processes.safe_to_fork() == all(t.name == "worker-output" for t in others)


def test_the_merge_keeps_the_sections_order_and_the_weaker_tier():
    class Source:
        def __init__(self, section_id):
            self.section = type("Section", (), {"id": section_id})()

    sources = [Source(s) for s in ("01_scores", "02_softmax", "03_trainable_qkv")]
    first = GradeResult("s", "cpu", sections=[SectionResult("01_scores", "a"), SectionResult("03_trainable_qkv", "c")],
                        grader_errors=["x"], sandbox=tiers.NAMESPACES, torch="2.13.0")
    second = GradeResult("s", "cpu", sections=[SectionResult("02_softmax", "b")], grader_errors=["y"],
                         sandbox=tiers.LANDLOCK, torch="2.13.0")
    merged = two_processes._merged(sources, first, second)
    assert [s.id for s in merged.sections] == ["01_scores", "02_softmax", "03_trainable_qkv"]
    assert merged.grader_errors == ["x", "y"] and merged.sandbox == tiers.LANDLOCK and not merged.weak
    assert tiers.weakest(tiers.NAMESPACES, tiers.NONE) == tiers.NONE
