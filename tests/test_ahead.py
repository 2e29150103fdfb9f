"""The next section's worker is started on a thread of its own (SectionWorker.prepare, through
concurrent.futures): the grading goes on meanwhile, a start that fails is met again by the section's
own first call, and one never asked for is killed."""
from __future__ import annotations

import threading
import time

import pytest

from autograder.core.extract import Extracted
from autograder.core.harness import StudentFailure
from autograder.core.sections import find
from autograder.core.student import SectionWorker
from autograder.sandbox.limits import Limits


class FakeChild:
    def __init__(self):
        self.sent, self.killed = [], False

    def send(self, message):
        self.sent.append(message["op"])
        return True

    def receive(self, deadline):
        return {"ok": True, "cells": [], "defined": []}, "ok"

    def request(self, message, timeout):
        self.sent.append(message["op"])
        return self.receive(None)

    def bye(self):
        pass

    def signal(self):
        self.killed = True

    def kill(self):
        self.killed = True

    def printed(self):
        return ""


class FakeLauncher:
    """Forks nothing: its spawns wait for `go` (a zygote still warming up), or fail while `failing`."""

    kind = "fork"

    def __init__(self, failing: int = 0):
        self.go, self.failing, self.children = threading.Event(), failing, []

    def spawn(self, limits, config):
        if not self.go.wait(10):
            raise TimeoutError("the test never let the spawn go")
        if self.failing:
            self.failing -= 1
            raise RuntimeError("the grading worker could not start: zygote gone")
        self.children.append(FakeChild())
        return self.children[-1]


def worker(launcher) -> SectionWorker:
    return SectionWorker(launcher, find("02_softmax"), Extracted(cells=[{"label": "cell 1", "source": "x = 1"}]),
                         Limits(), "cpu", {})


def test_prepare_returns_before_the_zygote_answers():
    launcher = FakeLauncher()
    section = worker(launcher)
    started = time.monotonic()
    section.prepare()  # would wait here for `go` (10 s) if the start were not on a thread of its own
    assert time.monotonic() - started < 5
    assert launcher.children == []
    launcher.go.set()
    child = section.ensure()
    assert child is launcher.children[0] and child.sent == ["load"]
    assert len(launcher.children) == 1  # the one started ahead, not a second


def test_a_start_ahead_that_failed_is_met_again_by_the_sections_own_call():
    launcher = FakeLauncher(failing=2)
    launcher.go.set()
    section = worker(launcher)
    section.prepare()
    with pytest.raises(RuntimeError, match="could not start"):  # its own start fails too, in its check
        section.ensure()
    child = section.ensure()  # and the next start, which works, serves the section
    assert child is launcher.children[0] and child.sent == ["load"]


def test_a_worker_started_ahead_and_never_asked_for_is_killed():
    launcher = FakeLauncher()
    launcher.go.set()
    section = worker(launcher)
    section.prepare()
    section.stop()
    section.close()
    assert launcher.children[0].killed and section.loading is None


def test_no_start_ahead_for_a_notebook_that_could_not_be_read():
    launcher = FakeLauncher()
    launcher.go.set()
    section = SectionWorker(launcher, find("02_softmax"), Extracted(cells=[], problem="unreadable"), Limits(), "cpu",
                            {})
    section.prepare()
    assert section.loading is None
    with pytest.raises(StudentFailure):
        section.ensure()
    assert launcher.children == []
