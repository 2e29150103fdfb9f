"""The portable worker path (Windows, macOS, AUTOGRADER_WORKER=spawn): its plumbing, one choice each.

Runs here on Linux: the path uses nothing but subprocess pipes, threads and a
queue, so what it does here it does there. `tests/test_windows_selfcheck.py`
runs the whole self-check under an emulation of Windows' Python surface.
"""
from __future__ import annotations

import subprocess
import sys
import time

import pytest
from support import EXAMPLES, ROOT, correct_source

from autograder.sandbox import tiers
from autograder.core.grade import SandboxRefused, run_checks
from autograder.sandbox.portable import Launcher
from autograder.core.submission import locate
from autograder.sandbox.launch import start_launcher
from autograder.sandbox.limits import OUTPUT_CAP, Limits


@pytest.fixture
def launcher():
    made = Launcher()
    yield made
    made.close()


def load(session, source: str, timeout: float = 60):
    return session.request({"op": "load", "cells": [{"label": "cell", "source": source}]}, timeout)


def call(session, name: str):
    """The value `name()` returns in `session` (a call without arguments)."""
    reply, status = session.request({"op": "call", "target": {"name": name}, "args": [],
                                     "kwargs": {"__dict__": []}}, 30)
    assert status == "ok" and reply["ok"], reply
    return reply["value"]


# which of the modules that the meta device's kernels (sympy) and torch's compiler bring are loaded,
# and whether the collector runs (the worker imports torch with it off, as the zygote does)
LOADED = ("import gc, sys\nLOADED = [m for m in ('sympy', 'torch._dynamo', 'torch._inductor') if m in sys.modules]"
          " + ['collecting'] * gc.isenabled()\n")


def test_spawn_is_chosen_where_asked(monkeypatch):
    monkeypatch.setenv("AUTOGRADER_WORKER", "spawn")
    chosen = start_launcher()
    try:
        assert isinstance(chosen, Launcher)
    finally:
        chosen.close()


def test_a_call_past_its_time_kills_the_process(launcher):
    launcher.warm("meta")
    session = launcher.spawn(Limits(), {"names": ["spin"]})
    reply, status = load(session, "def spin():\n    while True:\n        pass\n")
    assert status == "ok" and reply["ok"]
    process = session.process
    started = time.monotonic()
    reply, status = session.request({"op": "call", "target": {"name": "spin"}, "args": [],
                                     "kwargs": {"__dict__": []}}, 1.0)
    assert (reply, status) == (None, "timeout")
    assert time.monotonic() - started < 5
    assert process.popen.poll() is not None, "the spinning interpreter is still running"
    again = launcher.spawn(Limits(), {"names": ["loaded"]})  # the next section gets a fresh interpreter
    assert again.process is not process and again.process.alive()
    reply, _ = load(again, LOADED + "def loaded():\n    return LOADED\n")
    assert call(again, "loaded") == ["sympy", "collecting"]  # warmed, as the one it replaced was


def test_printed_output_is_capped(launcher):
    session = launcher.spawn(Limits(), {"names": []})
    reply, status = load(session, "for _ in range(64):\n    print('x' * 16384)\n")
    assert status == "ok" and reply["ok"]
    text = session.printed()
    assert text.startswith("xxxx")
    assert OUTPUT_CAP <= len(text) <= OUTPUT_CAP + 200
    assert "dropped" in text


def test_a_crash_is_a_death_not_a_hang(launcher):
    session = launcher.spawn(Limits(), {"names": []})
    reply, status = load(session, "import os\nos._exit(3)\n")
    assert (reply, status) == (None, "died")


def test_sections_do_not_see_each_others_global_changes(launcher):
    first = launcher.spawn(Limits(), {"names": []})
    reply, _ = load(first, "import torch\ntorch.set_default_dtype(torch.float64)\ntorch.softmax = None\n"
                           "torch.Tensor.sum = lambda self, *a, **k: 42\ntorch.use_deterministic_algorithms(True)\n")
    assert reply["ok"] and all(cell["ok"] for cell in reply["cells"])
    second = launcher.spawn(Limits(), {"names": ["probe"]})
    reply, _ = load(second, "import torch\ndef probe():\n"
                            "    return [str(torch.ones(1).dtype), torch.softmax is not None, "
                            "float(torch.ones(2).sum()), torch.are_deterministic_algorithms_enabled()]\n")
    assert reply["ok"]
    assert call(second, "probe") == ["torch.float32", True, 2.0, False]


def test_the_meta_device_is_warmed_before_the_first_section_and_no_switch_imports_the_compiler(launcher):
    """The portable self-check's speed: the meta device's kernels load once, before any section
    (Launcher.warm), without torch's compiler (a second of CPU); nor does restoring the baseline
    between sections import it (torch.use_deterministic_algorithms would, called when nothing changed).
    The student's code runs with the collector on, as Python's always does."""
    launcher.warm("meta")
    first = launcher.spawn(Limits(), {"names": ["loaded"]})
    reply, _ = load(first, LOADED + "def loaded():\n    return LOADED\n")
    assert reply["ok"] and all(cell["ok"] for cell in reply["cells"]), reply["cells"]
    assert call(first, "loaded") == ["sympy", "collecting"]
    second = launcher.spawn(Limits(), {"names": ["loaded"]})  # a switch: the baseline restored
    reply, _ = load(second, LOADED + "def loaded():\n    return LOADED\n")
    assert reply["ok"] and all(cell["ok"] for cell in reply["cells"]), reply["cells"]
    assert call(second, "loaded") == ["sympy", "collecting"]


def test_a_submodule_one_section_imported_stays_importable_for_the_next(launcher):
    """numpy loads numpy.random on first use (its __getattr__ imports it): restoring numpy's namespace
    between sections must keep that attribute, or `import numpy.random as random` (pandas does it)
    recurses without end in the next section."""
    first = launcher.spawn(Limits(), {"names": []})
    reply, _ = load(first, "import numpy.random\n")
    assert reply["ok"] and all(cell["ok"] for cell in reply["cells"]), reply
    second = launcher.spawn(Limits(), {"names": []})
    reply, _ = load(second, "import numpy.random as random\nrandom.default_rng(0)\n")
    assert reply["ok"] and all(cell["ok"] for cell in reply["cells"]), reply["cells"]


def test_a_student_exception_reads_as_the_students(launcher, tmp_path):
    source = correct_source("01_scores").replace(
        "def dot_scores(query, inputs):", "def dot_scores(query, inputs):\n    raise ValueError('my own bug')", 1)
    path = tmp_path / "01_scores.py"
    path.write_text(source, encoding="utf-8")
    result = run_checks(locate(path), "cpu", visible_only=True, launcher=launcher)
    messages = [c.message for c in result.sections[0].checks if not c.passed]
    assert messages and all("dot_scores raised ValueError: my own bug" in m for m in messages), messages
    assert result.sandbox == tiers.NONE and not result.weak  # a self-check is never "weak"


def test_hidden_grading_refuses_the_portable_path(launcher, tmp_path):
    path = tmp_path / "01_scores.py"
    path.write_text(correct_source("01_scores"), encoding="utf-8")
    with pytest.raises(SandboxRefused, match="hidden grading refused"):
        run_checks(locate(path), "cpu", launcher=launcher)
    weak = run_checks(locate(path), "cpu", Limits(sandbox="weak"), launcher=launcher)
    assert weak.weak and weak.sandbox == tiers.NONE and weak.score == weak.max_score


def scores_and_messages(result):
    return {(c.section, c.name): (c.points, c.message) for s in result.sections for c in s.checks}


def test_same_scores_and_messages_as_the_fork_path(launcher):
    """Only the plumbing differs: the partial example's every check reads the same on both paths."""
    from support import zygote

    portable = run_checks(locate(EXAMPLES / "partial"), "cpu", visible_only=True, launcher=launcher)
    forked = run_checks(locate(EXAMPLES / "partial"), "cpu", visible_only=True, launcher=zygote())
    assert 0 < portable.score < portable.max_score
    assert scores_and_messages(portable) == scores_and_messages(forked)


def test_cli_refuses_hidden_grading_in_one_line():
    env = {"AUTOGRADER_WORKER": "spawn", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-m", "autograder", "grade", str(EXAMPLES / "correct_py" / "01_scores.py")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("autograder: error: hidden grading refused"), done.stderr
    assert "--sandbox weak" in lines[0] and "Traceback" not in done.stderr
    assert done.stdout == ""


def test_a_worker_no_grading_took_is_closed_with_its_folder(tmp_path):
    """`python -m autograder check` starts the worker process before it reads its command line (its
    import of torch overlaps the grader's); where the command then stops (here: no such submission),
    the process is closed and its working folder removed, not left in the temporary folder."""
    env = {"AUTOGRADER_WORKER": "spawn", "PATH": "/usr/bin:/bin", "TMPDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "autograder", "check", str(tmp_path / "missing.ipynb")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr
    assert not list(tmp_path.glob("attn-grade-*")), "the prestarted worker's folder was left behind"
