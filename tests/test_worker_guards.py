"""worker/guards.py: installed once, in the zygote, before it forks a child per section.

Each check runs in a fresh interpreter: installing the guards blocks the grader's
own packages and wraps torch's functions, which this test process still needs.
"""
from __future__ import annotations

import subprocess
import sys

from support import ROOT

BOOT = ROOT / "autograder" / "worker" / "boot.py"

TWICE = """
import runpy, sys
runpy.run_path(sys.argv[1])["load"]()  # the worker's folder as the package `worker`, as worker/boot.py loads it
import torch
from worker import guards
guards.install()
wrapped = torch.softmax
guards.install()
finders = [f for f in sys.meta_path if type(f).__name__ == "BlockAnswers"]
print(torch.softmax is wrapped, len(finders))
"""

BEFORE_SERVING = """
import runpy, socket, sys
runpy.run_path(sys.argv[1])["load"]()  # the worker's folder as the package `worker`, as worker/boot.py loads it
from worker import guards, main
main.serve_spawns = lambda control: print("installed before serving:", guards._installed)
ours, theirs = socket.socketpair()
main.main(theirs.fileno())
"""


def run(code: str) -> str:
    done = subprocess.run([sys.executable, "-I", "-c", code, str(BOOT)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_installing_twice_wraps_and_blocks_once():
    # a child's own call after the zygote's must not wrap the wrappers or add a second blocker
    assert run(TWICE) == "True 1"


def test_the_zygote_installs_them_before_it_serves_any_spawn():
    # every child then inherits them instead of paying a thousand copy-on-write faults of its own
    assert run(BEFORE_SERVING) == "installed before serving: True"
