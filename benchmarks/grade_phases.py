"""Where one grading's time goes: a timeline of its phases, in a fresh process.

    .venv/bin/python benchmarks/grade_phases.py [grade|check] [SUBMISSION] [--cprofile N]

Runs `python -m autograder VERB SUBMISSION` in a child interpreter whose grader
functions are wrapped with timestamps (nothing else changes), and prints, in
seconds since the child was started: when each phase began and how long it
took, on the trusted side (imports, the zygote's start, extraction, each
section's worker start and load, pytest's collection and checks, rendering)
and what the trusted side saw of the worker side (a child's fork and
confinement is the time its spawn request waited; its load is the `load`
request). The worker zygote's own start (interpreter, `import torch`, warm-up)
is timed apart, as the same command line run alone. `--cprofile N` also prints
the trusted side's N most expensive functions (cumulative). Used by grade_speed.py,
which writes the phases into results/grade-speed.json, and by portable_speed.py,
which runs it under an interpreter with Windows' Python surface (the portable
worker path: its process's start and every request it serves are timed too).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Runs inside the timed child: wraps the grader's phases, then runs the CLI as `-m autograder` would.
PROBE = r"""
import gc, json, os, sys, time
gc.disable()  # as autograder/__main__.py does for the grader's imports
T0 = float(os.environ["PHASES_T0"])
EVENTS = []
def mark(name, start, end=None):
    EVENTS.append([name, round(start - T0, 4), round((end if end is not None else time.time()) - start, 4)])
mark("interpreter start", T0, time.time())

def timed(owner, attr, label):
    inner = getattr(owner, attr)
    def wrapper(*args, **kwargs):
        start = time.time()
        try:
            return inner(*args, **kwargs)
        finally:
            mark(label(*args, **kwargs) if callable(label) else label, start)
    setattr(owner, attr, wrapper)

import autograder.sandbox.launch as launch
if sys.argv[1:2] in (["grade"], ["check"]):  # as `python -m autograder` does: see autograder/__main__.py
    start = time.time()
    launch.prestart()
    mark("worker side started (prestart: the zygote, or the portable path's process)", start)
start = time.time()
import autograder.cli as cli
mark("import autograder.cli (argparse, the grader's modules)", start)
gc.freeze()
gc.enable()
timed(cli, "locate", "extraction (read + parse the notebooks)")
timed(launch, "start_launcher", "start_launcher (hands over the prestarted zygote, else starts one)")
timed(cli, "resolve_device", "resolve --device")
timed(cli, "preload_trusted", "preload the renderers")
timed(cli, "render", "render the output")
timed(cli, "write_feedback", "the feedback report (HTML, Markdown, heatmaps)")
PATCHES = {}
def patch(module_name):
    def decorate(function):
        PATCHES[module_name] = function
        return function
    return decorate

@patch("autograder.core.grade")
def _(grade):
    timed(grade, "preload_checks", "preload the solutions (trusted side: import torch)")
    timed(grade, "contained_tier", "sandbox probe (waits for the zygote's torch import)")
    timed(grade, "run_pytest", "pytest: start, collection, checks, end")

@patch("autograder.sandbox.zygote")
def _(zygote):
    timed(zygote.Zygote, "spawn", "worker child: fork + confinement (spawn request)")

@patch("autograder.sandbox.portable")
def _(portable):  # the portable path: its one process's start, and each request by op and section
    timed(portable.Process, "__init__", "portable worker: spawned (Popen, reader threads)")
    timed(portable.Launcher, "_ready_process", "portable worker: waited for its greeting (import torch, warm-up)")
    timed(portable.Session, "request", lambda session, message, timeout:
          f"portable request: {message.get('op')} ({session.name})")

@patch("autograder.core.student")
def _(student):
    real_ensure = student.SectionWorker.ensure
    def ensure(self):
        if self.child is not None:
            return self.child
        start = time.time()
        try:
            return real_ensure(self)
        finally:
            mark(f"section {self.section.id}: worker start + load of the cells", start)
    student.SectionWorker.ensure = ensure

class Hooks:
    def pytest_collection(self, session):
        self.start = time.time()
    def pytest_collection_finish(self, session):
        mark("pytest: collection", self.start)
        self.run = time.time()
    def pytest_sessionfinish(self, session):
        mark("pytest: the checks (calls into the workers included)", self.run)

@patch("pytest")
def _(pytest):
    real_main = pytest.main
    def main_with_hooks(args, plugins=()):
        return real_main(args, plugins=list(plugins) + [Hooks()])
    pytest.main = main_with_hooks

def loading(module):
    return getattr(getattr(module, "__spec__", None), "_initializing", False)

import builtins
real_import = builtins.__import__
def watched_import(name, *args, **kwargs):
    fresh = name in ("torch", "pytest") and name not in sys.modules
    start = time.time()
    try:
        return real_import(name, *args, **kwargs)
    finally:
        if fresh:
            mark(f"trusted side: import {name}", start)
        for module_name in [m for m in PATCHES if m in sys.modules and not loading(sys.modules[m])]:
            PATCHES.pop(module_name)(sys.modules[module_name])
builtins.__import__ = watched_import
profile = int(os.environ.get("PHASES_CPROFILE", "0"))
if profile:
    import cProfile
    profiler = cProfile.Profile()
    profiler.enable()
start = time.time()
code = cli.main(sys.argv[1:])
mark("whole command (from cli.main)", start)
if profile:
    import io, pstats
    profiler.disable()
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats(os.environ.get("PHASES_SORT", "cumulative")).print_stats(profile)
    EVENTS.append(["cprofile", 0, 0, text.getvalue()])
with open(os.environ["PHASES_OUT"], "w") as out:
    json.dump(EVENTS, out)
sys.stdout.flush()
os._exit(code)
"""


def trusted_timeline(verb: str, submission: str, cprofile: int = 0, report: bool = True,
                     python: str = sys.executable, env: dict | None = None) -> tuple[list, str]:
    """The phases of one run of VERB on SUBMISSION, in seconds since the interpreter was started
    (`grade` writes its feedback report too, unless `report` is False; `check` always does), run by
    `python` (portable_speed.py passes the interpreter with Windows' Python surface) in `env`."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "events.json"
        extra = ["--report", str(Path(scratch) / "feedback")] if verb == "grade" and report else []
        env = {**(os.environ if env is None else env), "PHASES_OUT": str(out), "PHASES_CPROFILE": str(cprofile)}
        command = [python, "-c", PROBE, verb, submission, "--format", "json", "--output", os.devnull] + extra
        started = time.time()
        env["PHASES_T0"] = repr(started)
        subprocess.run(command, cwd=scratch if verb == "check" else ROOT,  # check: ./feedback/
                       env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ended = time.time()
        events = json.loads(out.read_text())
    profile = ""
    if events and events[-1][0] == "cprofile":
        profile = events.pop()[3]
    events.append(["process exit seen by the parent", 0.0, round(ended - started, 4)])
    return events, profile


ZYGOTE_STEPS = r"""
import os, runpy, sys, time
start = float(sys.argv[1])
marks = [time.time()]
runpy.run_path(sys.argv[2])["load"]()  # the worker's folder as the package `worker`, as worker/boot.py loads it
from worker import main  # the zygote's own steps, as worker/main.py takes them (collection off for the imports)
main.gc.disable()
import torch
marks.append(time.time())
from worker import lazy_torch
lazy_torch.defer_dynamo()
lazy_torch.quick_shape_checks()
main.warm("cpu")
marks.append(time.time())
main.warm("meta")
marks.append(time.time())
print(" ".join(repr(m - start) for m in marks))
sys.stdout.flush()
os._exit(0)  # as the zygote ends: never through torch's teardown (a quarter of a second)
"""


def zygote_timeline() -> list:
    """The worker zygote's start as its own command line (with the zygote's -I -B): interpreter,
    `import torch`, warm-ups. Ends by os._exit, as the zygote does, so no teardown is counted."""
    started = time.time()
    done = subprocess.run([sys.executable, "-I", "-B", "-c", ZYGOTE_STEPS, repr(started), str(ROOT / "autograder" / "worker" / "boot.py")],
                          capture_output=True, text=True, check=True)
    ready, imported, warm, meta = (float(x) for x in done.stdout.split())
    return [["zygote: interpreter start", 0.0, round(ready, 4)],
            ["zygote: import torch", round(ready, 4), round(imported - ready, 4)],
            ["zygote: warm-up (first dispatch watch)", round(imported, 4), round(warm - imported, 4)],
            ["zygote: warm-up of the meta device (its kernels import sympy)", round(warm, 4), round(meta - warm, 4)]]


def show(events: list) -> str:
    lines = []
    for name, at, took in events:
        where = "      " if at is None else f"{at:6.3f}"
        lines.append(f"  {where}  {took:6.3f}  {name}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("verb", nargs="?", default="grade", choices=("grade", "check"))
    parser.add_argument("submission", nargs="?", default="examples/correct")
    parser.add_argument("--cprofile", type=int, default=0, metavar="N")
    parser.add_argument("--no-report", action="store_true", help="grade without --report")
    args = parser.parse_args()
    submission = str((ROOT / args.submission).resolve())
    events, profile = trusted_timeline(args.verb, submission, args.cprofile, report=not args.no_report)
    print(f"{args.verb} {args.submission}: phases (start s, took s)\n{show(events)}")
    print(f"worker zygote, alone\n{show(zygote_timeline())}")
    if profile:
        print(profile)


if __name__ == "__main__":
    main()
