"""Run inside the test image's container (tests/test_container.py starts it): grade as an
instructor would there, and print what happened as one JSON object for the test to judge.

    python tests/in_container.py [--unreadable-python] STEP...

Steps (each one key of the JSON):
    tier      `python -m autograder.sandbox`: the tier this container gives, and its words
    correct   `grade examples/correct --format json`: the exit status, the tier, the checks that failed
    probe     grade tests/hunting.py's submission while this process listens on the loopback (TCP
              and UDP) and the grader's environment holds hunting.SECRET (docker run -e): whether
              dot_scores kept its points (nothing found), what reached the listeners, what survived
    unconfined  the same probe graded with --sandbox off: the control, where the hunt must succeed
    refusal   `grade examples/correct_py/01_scores.py`: the exit status and what stderr said
    walk      copies of the answers, a classmate's work and a gradebook placed at random paths
              (hunting.plant: as root across the filesystem, as a user in /tmp and /var/tmp), then
              tests/hunting.py's walking submission graded: whether dot_scores kept its points
              (nothing outside the interpreter's folders was read), and what it said if not

--unreadable-python first makes a Python the grader's root cannot share: a virtual environment
with its own copy of the interpreter under /root/.pyenv (a 0700 home, as pyenv installs Python),
seeing the image's packages, and runs every step with it.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import random

from hunting import SECRET, hunting_source, interpreter_roots, loopback_listeners, plant, sleepers, walking_source
from support import EXAMPLES, ROOT

UNREADABLE_HOME = Path("/root/.pyenv/versions/course")
TIMEOUT = 300


def unreadable_python() -> str:
    os.chmod("/root", 0o700)  # Debian's already is
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", "--copies", str(UNREADABLE_HOME)], check=True,
                   timeout=120)
    site = "lib/python{}.{}/site-packages".format(*sys.version_info[:2])
    (UNREADABLE_HOME / site / "image.pth").write_text(str(Path(sys.prefix) / site) + "\n")
    return str(UNREADABLE_HOME / "bin" / "python")


def run(python: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([python, *args], cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT)


def tier(python: str) -> dict:
    done = run(python, "-m", "autograder.sandbox")
    first = (done.stdout.splitlines() or [""])[0]
    return {"returncode": done.returncode, "tier": first.removeprefix("sandbox tier: ").strip(),
            "said": done.stdout[-3000:] + done.stderr[-2000:]}


def failed_tests(data: dict) -> list:
    return [t["name"] for t in data.get("tests", []) if t.get("status") != "passed"]


def correct(python: str) -> dict:
    done = run(python, "-m", "autograder", "grade", str(EXAMPLES / "correct"), "--format", "json")
    try:
        data = json.loads(done.stdout)
    except ValueError:
        return {"returncode": done.returncode, "said": done.stderr[-3000:]}
    return {"returncode": done.returncode, "score": data["score"], "max_score": data["max_score"],
            "tests": len(data["tests"]), "failed": failed_tests(data), "sandbox": data["extra_data"]["sandbox"],
            "weak": data["extra_data"]["sandbox_weak"]}


def probe(python: str, *flags: str) -> dict:
    confined = "off" not in flags
    tcp, udp, port = loopback_listeners()
    marker = f"{4242 + os.getpid() % 1000}.{len(flags)}7"
    folder = Path(tempfile.mkdtemp(prefix="submission-"))
    path = folder / "01_scores.py"
    path.write_text(hunting_source(port, marker), encoding="utf-8")
    os.chmod(folder, 0o755)  # the student's own uid reads it
    os.chmod(path, 0o644)
    try:
        done = run(python, "-m", "autograder", "grade", str(path), "--format", "json", *flags)
        reached = []
        try:
            tcp.accept()[0].close()
            reached.append("tcp")
        except BlockingIOError:
            pass
        try:
            udp.recvfrom(16)
            reached.append("udp")
        except BlockingIOError:
            pass
        # a daemon of the submission ends within a moment of its grading when the sandbox holds
        # (wait for it to go); with the sandbox off it lives on (wait only until it shows)
        deadline = time.monotonic() + 5
        while bool(sleepers(marker)) == confined and time.monotonic() < deadline:
            time.sleep(0.05)
        survivors = sleepers(marker)
        for pid in survivors:  # say so, then leave nothing behind here either
            os.kill(pid, 9)
    finally:
        tcp.close()
        udp.close()
    try:
        data = json.loads(done.stdout)
    except ValueError:
        return {"returncode": done.returncode, "said": done.stderr[-3000:]}
    dot = [t for t in data["tests"] if t["name"].startswith(("01_scores: dot_scores gives",
                                                             "01_scores: dot_scores matches"))]
    return {"returncode": done.returncode, "dot_checks": len(dot),
            "dot_passed": bool(dot) and all(t["status"] == "passed" for t in dot),
            "failed": failed_tests(data), "reached": reached, "survivors": survivors,
            "sandbox": data["extra_data"]["sandbox"]}


def refusal(python: str) -> dict:
    done = run(python, "-m", "autograder", "grade", str(EXAMPLES / "correct_py" / "01_scores.py"))
    return {"returncode": done.returncode, "stdout": done.stdout,
            "stderr": [line for line in done.stderr.splitlines() if line.strip()]}


def walk(python: str) -> dict:
    planted, _ = plant(random.Random(), () if os.getuid() == 0 else ("/tmp", "/var/tmp"))
    folder = Path(tempfile.mkdtemp(prefix="submission-"))
    path = folder / "01_scores.py"
    path.write_text(walking_source(planted, interpreter_roots()), encoding="utf-8")
    os.chmod(folder, 0o755)
    os.chmod(path, 0o644)
    done = run(python, "-m", "autograder", "grade", str(path), "--section", "01_scores", "--format", "json")
    try:
        data = json.loads(done.stdout)
    except ValueError:
        return {"returncode": done.returncode, "said": done.stderr[-3000:]}
    dot = [t for t in data["tests"] if t["name"].startswith("01_scores: dot_scores gives")]
    return {"returncode": done.returncode, "planted": planted, "dot_checks": len(dot),
            "dot_passed": bool(dot) and all(t["status"] == "passed" for t in dot),
            "said": [t["output"] for t in dot if t["output"]], "sandbox": data["extra_data"]["sandbox"]}


STEPS = {"tier": tier, "walk": walk, "correct": correct, "probe": probe, "refusal": refusal,
         "unconfined": lambda python: probe(python, "--sandbox", "off")}


def main(argv: list) -> int:
    python = sys.executable
    if argv[:1] == ["--unreadable-python"]:
        python, argv = unreadable_python(), argv[1:]
    said = {"uid": os.getuid(), "python": python, "secret_in_environment": os.environ.get("ROSTER_TOKEN") == SECRET}
    for name in argv:
        started = time.monotonic()
        said[name] = STEPS[name](python)
        said[name]["seconds"] = round(time.monotonic() - started, 1)
    print(json.dumps(said))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
