"""Grading on the platforms where it really runs, reproduced with the kernel's own denials.

`tests/platforms.py` builds each platform (seccomp filter, capabilities,
users; see its docstring); here the real command line grades under it:

- on a GitHub-hosted runner (a user namespace without capabilities), in a
  default container as root, and in the same container as an ordinary user,
  a correct submission gets full marks at the landlock tier, probes for the
  answers, the grader's environment and the network find nothing, nothing
  survives the grading, and the whole evil corpus is contained;
- where no tier can hold (no namespaces, no Landlock), hidden grading refuses
  in one line and exits 1, and `--sandbox weak` grades with the mark.

Where the emulation cannot be set up (not root, not Linux, an unknown
architecture), every test here is skipped with the reason.
"""
from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

import pytest
from support import EXAMPLES, ROOT

import platforms
from hunting import SECRET, hunting_source, interpreter_roots, loopback_listeners, plant, sleepers, walking_source

CONTAINED = ["runner", "container-root", "container-user"]


@pytest.fixture(scope="module", autouse=True)
def emulation_possible():
    reason = platforms.can_emulate()
    if reason:
        pytest.skip(f"the platforms cannot be emulated here: {reason}")


@pytest.fixture(scope="module")
def shared():
    """A folder every emulated user can reach, read and write (submissions, pytest's temp, reports)."""
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="attn-platforms-", dir="/tmp")
    os.chmod(folder, 0o1777)
    yield Path(folder)
    shutil.rmtree(folder, ignore_errors=True)


def grade(platform: str, submission, *more, env=None, timeout=300):
    argv = [sys.executable, "-m", "autograder", "grade", str(submission), "--format", "json", *map(str, more)]
    return platforms.run(platform, argv, env={"ROSTER_TOKEN": SECRET, **(env or {})}, cwd=str(ROOT),
                         timeout=timeout)


def full_marks(data: dict) -> bool:
    """Every check of a results.json passed (its score may pass its max_score: a bonus section's
    points add to the score only)."""
    return data["max_score"] > 0 and bool(data["tests"]) and all(t["status"] == "passed" for t in data["tests"])


def tier_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith("sandbox: tier ")]
    assert lines, stderr[-2000:]
    return lines[-1]


@pytest.mark.parametrize("platform", CONTAINED)
def test_correct_submission_gets_full_marks(platform):
    done = grade(platform, EXAMPLES / "correct")
    assert done.returncode == 0, done.stderr[-3000:]
    data = json.loads(done.stdout)
    assert full_marks(data), [t["name"] for t in data["tests"] if t["status"] != "passed"]
    assert data["extra_data"]["sandbox"] == "landlock" and not data["extra_data"]["sandbox_weak"]
    assert tier_line(done.stderr).startswith("sandbox: tier landlock: ")


@pytest.mark.parametrize("platform", CONTAINED)
def test_probes_find_nothing_and_nothing_survives(platform, shared):
    tcp, udp, port = loopback_listeners()
    marker = f"{4242 + os.getpid() % 1000}.{len(platform)}"
    folder = shared / platform
    folder.mkdir()
    path = folder / "01_scores.py"
    path.write_text(hunting_source(port, marker), encoding="utf-8")
    os.chmod(folder, 0o755)
    os.chmod(path, 0o644)
    try:
        done = grade(platform, path)
        assert done.returncode == 0, done.stderr[-3000:]
        data = json.loads(done.stdout)
        dot = [t for t in data["tests"] if t["name"].startswith("01_scores: dot_scores")]
        assert dot and all(t["status"] == "passed" for t in dot), [t["output"] for t in dot]
        assert data["score"] == data["max_score"]
        with pytest.raises(BlockingIOError):
            tcp.accept()
        with pytest.raises(BlockingIOError):
            udp.recvfrom(16)
        deadline = time.monotonic() + 5
        while sleepers(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not sleepers(marker), "a process started by the submission outlived its grading"
    finally:
        tcp.close()
        udp.close()


@pytest.fixture(scope="module")
def planted():
    """Copies of the answers, a classmate's work and a gradebook at random paths no code names."""
    import random
    import shutil

    files, homes = plant(random.Random())
    yield files
    for home in homes:
        shutil.rmtree(home, ignore_errors=True)


@pytest.mark.parametrize("platform", CONTAINED)
def test_nothing_outside_the_allow_list_is_readable(platform, shared, planted):
    """The landlock tier grants the same allow-list as the namespaces tier's new root
    (tests/test_allow_list.py): the planted copies, and every file outside the interpreter's own
    folders, stay unreadable, whoever the grader runs as."""
    folder = shared / f"walk-{platform}"
    folder.mkdir()
    path = folder / "01_scores.py"
    path.write_text(walking_source(planted, interpreter_roots()), encoding="utf-8")
    os.chmod(folder, 0o755)
    os.chmod(path, 0o644)
    done = grade(platform, path, "--section", "01_scores")
    assert done.returncode == 0, done.stderr[-3000:]
    assert tier_line(done.stderr).startswith("sandbox: tier landlock: ")
    data = json.loads(done.stdout)
    dot = [t["output"] for t in data["tests"] if t["name"].startswith("01_scores: dot_scores gives")]
    assert dot and not any(dot), dot


EVIL_SUMMARY = re.compile(r"evil corpus: (\d+)/(\d+) contained(?: \((\d+) degraded\))?")


@pytest.mark.parametrize("platform", CONTAINED)
def test_the_whole_evil_corpus_is_contained(platform, shared):
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_evil_corpus.py",
            "-rs", "--basetemp", str(shared / f"evil-{platform}")]
    done = platforms.run(platform, argv, env={"ROSTER_TOKEN": SECRET}, cwd=str(ROOT), timeout=600)
    summary = EVIL_SUMMARY.search(done.stdout)
    assert done.returncode == 0 and summary, done.stdout[-4000:] + done.stderr[-2000:]
    contained, total = int(summary.group(1)), int(summary.group(2))
    degraded = int(summary.group(3) or 0)
    print(f"{platform}: evil corpus {contained}/{total} contained, {degraded} degraded")
    # the landlock tier has no tmpfs quota (the disk-filling case); every other case is contained there
    assert contained + degraded == total and degraded <= 1, done.stdout[-4000:]
    assert degraded == 0 or "guarantee(s) quota not given" in done.stdout, done.stdout[-4000:]


def test_refuses_where_no_tier_holds():
    done = grade("no-sandbox", EXAMPLES / "correct_py" / "01_scores.py")
    assert done.returncode == 1, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("autograder: error: hidden grading refused") and "--sandbox weak" in lines[0]
    assert "landlock" in lines[0].lower()
    assert done.stdout == ""


def test_weak_grades_and_says_so_where_no_tier_holds():
    done = grade("no-sandbox", EXAMPLES / "correct_py" / "01_scores.py", "--sandbox", "weak")
    assert done.returncode == 0, done.stderr[-2000:]
    data = json.loads(done.stdout)
    assert data["extra_data"] == {"sandbox": "none", "sandbox_weak": True, "torch": data["extra_data"]["torch"]}
    assert data["output"].startswith("graded WITHOUT a sandbox")
    assert tier_line(done.stderr).startswith("sandbox: tier none")


def test_the_self_check_runs_everywhere_and_says_how_protected(shared):
    argv = [sys.executable, "-m", "autograder", "check", str(EXAMPLES / "correct"), "--format", "json",
            "--report", str(shared / "feedback")]
    done = platforms.run("no-sandbox", argv, cwd=str(ROOT), timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    data = json.loads(done.stdout)
    assert full_marks(data), [t["name"] for t in data["tests"] if t["status"] != "passed"]
    assert "self-check: no sandbox" in done.stderr


def test_the_probes_find_what_an_unconfined_grading_exposes(shared):
    """The hunting cell above has teeth: graded unconfined (--sandbox weak where no tier holds),
    it finds the answers on disk and its dot_scores loses its points."""
    folder = shared / "weak"
    folder.mkdir()
    path = folder / "01_scores.py"
    path.write_text(hunting_source(9, f"5151.{os.getpid() % 1000}"), encoding="utf-8")
    done = grade("no-sandbox", path, "--sandbox", "weak")
    assert done.returncode == 0, done.stderr[-3000:]
    data = json.loads(done.stdout)
    # the checks of dot_scores' values (its mutation check passes a wrong value)
    dot = [t for t in data["tests"] if t["name"].startswith(("01_scores: dot_scores gives",
                                                             "01_scores: dot_scores matches"))]
    assert dot and not any(t["status"] == "passed" for t in dot)
