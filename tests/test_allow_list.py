"""The sandbox reads only what the interpreter needs, wherever the answers lie on the grading machine.

Copies of the solutions, the hidden checks, a classmate's submission in an nbgrader exchange and a
gradebook are placed at random paths that no code of the grader names (under /usr/local/share, a
new top-level folder, /var/lib), readable by everyone. A submission then tries to read each of them
by its path and walks the whole filesystem it can list, trying every file outside the interpreter's
own folders (`hunting.interpreter_roots`, stated from the interpreter's layout, not from the
grader's allow-list). Whatever it reads makes its dot_scores raise, naming the paths.

Here the grader runs as root, so the tier is `namespaces` (the new root, with the same allow-list
stacked on it as Landlock rules); tests/test_platforms.py runs the same hunt in the landlock tier
(a runner, a container as root and as a user) and tests/test_container.py in a real container.
Needs root on Linux with mount namespaces; skipped, saying why, elsewhere.
"""
from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys

import pytest
from support import ROOT

from hunting import interpreter_roots, interpreter_source, plant, walking_source


def grade(path, *more):
    return subprocess.run([sys.executable, "-m", "autograder", "grade", str(path), "--section", "01_scores",
                           "--format", "json", *more], cwd=ROOT, capture_output=True, text=True, timeout=300)


def dot_outputs(done) -> list[str]:
    """The outputs of dot_scores' checks whose values matter (a failing one names what was read)."""
    assert done.returncode == 0, done.stderr[-3000:]
    data = json.loads(done.stdout)
    return [t["output"] for t in data["tests"] if t["name"].startswith("01_scores: dot_scores gives")]


@pytest.fixture(scope="module")
def planted():
    import os

    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        pytest.skip("placing copies across the filesystem needs root on Linux")
    files, homes = plant(random.Random())
    yield files
    for home in homes:
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="module")
def walker(planted, tmp_path_factory):
    folder = tmp_path_factory.mktemp("walker")
    folder.chmod(0o755)
    path = folder / "01_scores.py"
    path.write_text(walking_source(planted, interpreter_roots()), encoding="utf-8")
    path.chmod(0o644)
    return path


def test_nothing_outside_the_interpreters_folders_is_readable(walker):
    done = grade(walker, "--sandbox", "on")
    tier = [line for line in done.stderr.splitlines() if line.startswith("sandbox: tier ")]
    if not tier or not tier[-1].startswith("sandbox: tier namespaces"):
        pytest.skip(f"the namespaces tier does not hold here: {tier[-1:] or done.stderr[-300:]}")
    assert "filesystem: only what the interpreter needs" in tier[-1]
    outputs = dot_outputs(done)
    assert outputs and not any(outputs), outputs


def test_the_walk_reads_the_planted_copies_where_nothing_confines_it(walker, planted):
    """The control: unconfined (--sandbox off), the same walk reads the planted copies, so the test
    above would fail on a sandbox that let them through."""
    outputs = dot_outputs(grade(walker, "--sandbox", "off"))
    assert outputs and all("files outside the allow-list" in text for text in outputs), outputs
    assert all(any(copy in text for copy in planted) for text in outputs), outputs


def test_what_the_interpreter_needs_is_there(tmp_path):
    """The allow-list is no empty room: matplotlib and pandas import in the student's process, and
    a fresh interpreter started through the venv's links imports torch and numpy and computes."""
    path = tmp_path / "01_scores.py"
    path.write_text(interpreter_source(), encoding="utf-8")
    tmp_path.chmod(0o755)
    path.chmod(0o644)
    done = grade(path, "--sandbox", "on")
    outputs = dot_outputs(done)
    assert outputs and not any(outputs), outputs
