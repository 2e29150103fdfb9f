"""worker/guards.py: installed once, in the zygote, before it forks a child per section.

Each check runs in a fresh interpreter: installing the guards blocks the grader's
own packages and wraps torch's functions, which this test process still needs.
"""
from __future__ import annotations

import subprocess
import sys

from support import ROOT

WORKER = ROOT / "autograder" / "worker"

TWICE = """
import sys
sys.path.insert(0, sys.argv[1])
import torch, guards
guards.install()
wrapped = torch.softmax
guards.install()
finders = [f for f in sys.meta_path if type(f).__name__ == "_BlockAnswers"]
print(torch.softmax is wrapped, len(finders))
"""

BEFORE_SERVING = """
import socket, sys
sys.path.insert(0, sys.argv[1])
import main, guards
main.serve_spawns = lambda control: print("installed before serving:", guards._installed)
ours, theirs = socket.socketpair()
main.main(theirs.fileno())
"""


def run(code: str) -> str:
    done = subprocess.run([sys.executable, "-I", "-c", code, str(WORKER)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_installing_twice_wraps_and_blocks_once():
    # a child's own call after the zygote's must not wrap the wrappers or add a second blocker
    assert run(TWICE) == "True 1"


def test_the_zygote_installs_them_before_it_serves_any_spawn():
    # every child then inherits them instead of paying a thousand copy-on-write faults of its own
    assert run(BEFORE_SERVING) == "installed before serving: True"
