"""The worker sandbox: which layers are in force, the fallbacks, and the one line that reports them.

Tests that need a layer this machine does not give are skipped as degraded
(the reason says which layer and why), never passed.
"""
from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import tempfile
import time

import pytest
from support import ROOT, linked_venv, zygote

from autograder.sandbox import tiers
from autograder.cli import build_parser
from autograder.sandbox.limits import Limits
from autograder.sandbox.zygote import kill_session, session_members

WORKER_BOOT = ROOT / "autograder" / "worker" / "boot.py"


@pytest.fixture(scope="module")
def report():
    return zygote().probe()


def test_report_lists_every_layer_once_with_limits(report):
    line = tiers.describe(report, Limits())
    assert line.startswith(f"sandbox: tier {tiers.tier(report)}: process group")
    assert "rlimits (memory 4 GiB, cpu 120 s, files 64 MiB, processes 256)" in line
    assert "timeouts (10 s per call, 30 s per cell, 60 s per load)" in line
    assert line.count("\n") == 0
    names = [x["id"] for x in report["layers"] if x["id"] != "rlimit"]
    assert len(names) == len(set(names))
    if report["missing"]:
        assert "; missing: " in line


def test_describe_names_what_is_missing():
    fake = {"layers": [{"id": "process_group"}, {"id": "rlimit", "name": "memory_bytes"}],
            "missing": [{"id": "network_namespace", "errno": errno.EPERM}]}
    line = tiers.describe(fake, Limits(memory_bytes=2 * 1024**3))
    assert "rlimits (memory 2 GiB)" in line
    assert f"missing: network namespace ({os.strerror(errno.EPERM).lower()}), rlimit cpu_seconds" in line


def test_root_gets_every_layer(report):
    if os.geteuid() != 0:
        pytest.skip("degraded: not root; the user-namespace fallback is tested below")
    missing = [name for name in tiers.GUARANTEES if name != "quota" and not tiers.holds(report, name)]
    if missing:
        pytest.skip(f"degraded: layers {missing} not available here: {report['missing']}")
    assert report["missing"] == []
    assert tiers.tier(report) == tiers.NAMESPACES


def test_sandbox_off_is_reported_as_missing():
    z = zygote()
    child = z.spawn(Limits(sandbox=False), {"names": []})
    try:
        reply, status = child.request({"op": "load", "cells": [
            {"label": "c", "source": "import os\nprint('uid', os.getuid(), 'pid', os.getpid())"}]}, 30)
        assert status == "ok" and reply["ok"]
    finally:
        child.kill()
    assert child.init_pid is None  # no PID namespace: killed by process group and session
    assert f"pid {child.pid}" in child.printed()


def isolate_unprivileged(workdir: str) -> dict:
    """Run sandbox.isolate in a forked child that gave up root first (the non-root path)."""
    from autograder.worker import namespaces as worker_sandbox

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            if os.geteuid() == 0:
                os.setgroups([])
                os.setresgid(65534, 65534, 65534)
                os.setresuid(65534, 65534, 65534)
            # as in the worker: no folder of the repository on the path but the venv's
            sys.path[:] = [p for p in sys.path if not p.startswith(str(ROOT)) or ".venv" in p]
            state = worker_sandbox.isolate(workdir, str(ROOT), want_pid=False)
            state["repo"] = sorted(os.listdir(ROOT)) if os.access(ROOT, os.R_OK) else None
            os.write(write, json.dumps(state).encode())
        except BaseException as error:  # report, never raise out of the fork
            os.write(write, json.dumps({"error": repr(error)}).encode())
        finally:
            os._exit(0)
    os.close(write)
    data = b""
    while chunk := os.read(read, 65536):
        data += chunk
    os.close(read)
    os.waitpid(pid, 0)
    return json.loads(data)


def test_unprivileged_fallback_uses_a_user_namespace():
    if not sys.platform.startswith("linux"):
        pytest.skip("degraded: namespaces are Linux only")
    with tempfile.TemporaryDirectory() as workdir:
        os.chmod(workdir, 0o777)
        state = isolate_unprivileged(workdir)
    assert "error" not in state, state
    if not state["userns"]:
        assert any(m["id"] == "user_namespace" for m in state["missing"])
        pytest.skip(f"degraded: unprivileged user namespaces are not allowed here: {state['missing']}")
    assert {"id": "network_namespace"} in state["layers"]
    assert state["mounts"]
    assert state["repo"] is not None and set(state["repo"]) <= {"autograder", ".venv"}, state["repo"]


def test_session_kill_reaches_double_forked_processes():
    """Without a PID namespace, the trusted side kills the child's whole session."""
    marker = f"{900 + os.getpid() % 50}.{int(time.time() * 1000) % 1000:03d}5"
    leader = subprocess.Popen(
        [sys.executable, "-c", "import os, time\n"
         "if os.fork() == 0:\n"
         "    if os.fork() == 0:\n"
         f"        os.execv('/bin/sleep', ['sleep', '{marker}'])\n"
         "    os._exit(0)\n"
         "time.sleep(60)\n"],
        start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while len(session_members(leader.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(session_members(leader.pid)) >= 2
        kill_session(leader.pid)
        leader.wait(timeout=10)
        deadline = time.monotonic() + 5
        while session_members(leader.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert session_members(leader.pid) == []
    finally:
        if leader.poll() is None:
            leader.kill()
            leader.wait()


def test_limit_flags_parse():
    args = build_parser().parse_args(["grade", "x", "--cpu-limit", "30", "--file-limit", "8",
                                      "--process-limit", "32", "--sandbox", "off"])
    assert (args.cpu_limit, args.file_limit, args.process_limit, args.sandbox) == (30, 8, 32, "off")
    defaults = build_parser().parse_args(["grade", "x"])
    assert defaults.sandbox == "on" and defaults.process_limit == Limits.processes


def worker_sandbox():
    from autograder.worker import namespaces

    return namespaces


def test_the_allow_list_grants_the_packages_but_never_the_answers(tmp_path):
    """allowed.plan, which both tiers take: an import path folder is read but for the answer
    packages in it; the repository and any folder above it are never read, a .venv inside it is."""
    from autograder.worker import allowed

    site = tmp_path / "venv" / "site-packages"
    for name in ("solutions", "autograder/checks", "autograder/worker", "torch"):
        (site / name).mkdir(parents=True)
    repo = tmp_path / "attention-course"
    for name in ("solutions", "autograder/worker", ".git", ".venv/lib/site-packages/numpy"):
        (repo / name).mkdir(parents=True)
    workdir = tmp_path / "work" / "attn-grade-1"
    workdir.mkdir(parents=True)

    def readable(path, plan):
        """The innermost granted folder or hole around `path` decides (the new root binds them in
        that order; Landlock carves the holes out of what holds them)."""
        around = [(len(h), False) for h in plan["holes"] if allowed.inside(str(path), h)]
        around += [(len(os.path.realpath(r)), True) for r in plan["read"] + plan["keep"]
                   if allowed.inside(str(path), os.path.realpath(r))]
        return bool(around) and max(around)[1]

    # a checkout (an editable install puts the repository itself, and the folder above it, on the path)
    venv_site = repo / ".venv" / "lib" / "site-packages"
    plan = allowed.plan(str(workdir), str(repo), [str(site), str(repo), str(tmp_path), str(venv_site)], [],
                        str(repo / "autograder" / "worker"))
    for path in (repo / "solutions", repo / ".git", site / "solutions", site / "autograder" / "checks", workdir.parent):
        assert not readable(path, plan), path
    for path in (site / "torch", venv_site / "numpy", repo / "autograder" / "worker"):
        assert readable(path, plan), path
    # the course installed into site-packages: its answer packages are holes, its worker kept
    plan = allowed.plan(str(workdir), str(site), [str(site)], [], str(site / "autograder" / "worker"))
    assert not readable(site / "solutions", plan) and not readable(site / "autograder" / "checks", plan)
    assert readable(site / "torch", plan) and readable(site / "autograder" / "worker", plan)


def test_a_venv_reached_through_a_symlink_still_imports_inside_the_sandbox(tmp_path):
    """A .venv linked from elsewhere (into a folder the sandbox covers: the repository, /tmp): the cover
    cuts the link, so a module imported only during grading (pandas in 07's notebook) must still be
    found through the link made again in the cover."""
    run = subprocess.run([str(linked_venv(tmp_path) / "bin" / "python"), "-m", "autograder", "grade", "examples/correct",
                          "--section", "07_positional_encoding", "--format", "json", "--sandbox", "on"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    result = json.loads(run.stdout)
    assert "No module named" not in run.stdout, [t.get("output") for t in result["tests"]]
    assert result["tests"] and all(t["status"] == "passed" for t in result["tests"])


# A worker readied for the GPU starts CUDA before the filters hold: on a real GPU the driver opens a
# socket of its own when it starts (seccomp refuses socket()), and it fails under Landlock too. Here
# `ready` stands in for the GPU's start: it must still be able to open a socket, the student's code after
# it must not.
READY_ORDER = r'''
import json, os, runpy, select, signal, socket, sys, tempfile
runpy.run_path(sys.argv[1])["load"]()  # the worker's folder as the package `worker`, as worker/boot.py loads it
from worker import confine, main

def ready():
    try:
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()
        return [{"id": "ready", "socket": True}], []
    except OSError as error:
        return [], [{"id": "ready", "errno": error.errno}]

workdir = tempfile.mkdtemp()
report_read, report_write = os.pipe()
out_read, out_write = os.pipe()
mine, theirs = socket.socketpair()
pid = os.fork()
if pid == 0:
    os.close(report_read)
    os.close(out_read)
    try:
        confine.start({"workdir": workdir}, theirs.fileno(), out_write, report_write, ready=ready)
        try:
            socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            print("after: socket opened", flush=True)
        except OSError:
            print("after: socket refused", flush=True)
    finally:
        os._exit(0)
os.close(report_write)
os.close(out_write)
lines = main.read_report(report_read)
printed = b""
while select.select([out_read], [], [], 20)[0]:
    chunk = os.read(out_read, 4096)
    if not chunk:
        break
    printed += chunk
try:
    os.killpg(pid, signal.SIGKILL)  # the namespace's supervisor waits a while otherwise
except OSError:
    pass
print(json.dumps({"layers": [x for line in lines for x in line.get("layers", [])],
                  "missing": [x for line in lines for x in line.get("missing", [])],
                  "printed": printed.decode(errors="replace")}))
'''


def test_the_worker_is_readied_before_its_filters_hold(tmp_path):
    done = subprocess.run([sys.executable, "-c", READY_ORDER, str(WORKER_BOOT)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    if {"id": "seccomp"} not in found["layers"]:
        pytest.skip(f"degraded: no seccomp filter here: {found['missing']}")
    assert {"id": "ready", "socket": True} in found["layers"], found
    assert "after: socket refused" in found["printed"], found


def test_a_prestarted_zygote_is_started_without_torch_and_handed_over_once():
    """`python -m autograder grade|check` starts the zygote before the grader imports torch, so the two
    imports overlap; the first launcher asked for is that zygote, the next a new one."""
    script = ("import sys\n"
              "from autograder.sandbox import launch\n"
              "launch.prestart()\n"
              "print('torch imported:', 'torch' in sys.modules)\n"
              "first = launch.start_launcher()\n"
              "second = launch.start_launcher()\n"
              "print('handed over:', launch._PRESTARTED == [] and first is not second)\n"
              "print('probe:', first.probe()['layers'][0]['id'])\n"
              "first.close(); second.close()\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env={**os.environ, "AUTOGRADER_WORKER": "fork"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert "torch imported: False" in done.stdout
    assert "handed over: True" in done.stdout
    assert "probe: process_group" in done.stdout


CHILD_QUESTIONS = '''
import gc
import sys
import torch

def collecting():
    return gc.isenabled()

def modules_a_meta_op_loads():
    before = set(sys.modules)
    torch.ones(2, 3, device="meta").softmax(-1) @ torch.ones(3, 2, device="meta")
    return len(set(sys.modules) - before)
'''


def _ask_a_child(launcher, name: str = "modules_a_meta_op_loads"):
    """Fork a child, load CHILD_QUESTIONS in it and return what its function `name` answers."""
    child = launcher.spawn(Limits(), {"names": [name]})
    try:
        loaded, status = child.request({"op": "load", "cells": [{"label": "cell", "source": CHILD_QUESTIONS}]},
                                       60)
        assert status == "ok" and loaded["ok"], (status, loaded)
        reply, status = child.request({"op": "call", "target": {"name": name}, "args": [],
                                       "kwargs": {"__dict__": []}}, 60)
        assert status == "ok" and reply["ok"], (status, reply)
        return reply["value"]
    finally:
        child.kill()


def test_the_zygote_warms_the_meta_device_once_when_asked():
    """A grading whose checks use the meta device asks the zygote to load its kernels once: every child
    forked after finds them loaded. Unasked (a grading that never uses it), the zygote never loads them."""
    from autograder.sandbox.zygote import Zygote

    launcher = Zygote()
    try:
        assert _ask_a_child(launcher) > 0  # cold: the child's first meta op imports the kernels
        launcher.warm("cuda")  # ignored: starting the GPU's driver in the zygote would keep it from every child
        launcher.warm("meta")
        launcher.warm("meta")  # asked again: nothing more to do
        assert _ask_a_child(launcher) == 0
        assert _ask_a_child(launcher) == 0
    finally:
        launcher.close()


def test_children_collect_garbage_as_python_does():
    """The zygote imports torch with the garbage collector off (a seventh of the import's CPU); every
    child it forks, before and after a warm-up, collects again."""
    assert _ask_a_child(zygote(), "collecting") is True
    zygote().warm("meta")
    assert _ask_a_child(zygote(), "collecting") is True


LAZY_TORCH = """
import runpy, sys
runpy.run_path(sys.argv[1])["load"]()  # the worker's folder as the package `worker`, as worker/boot.py loads it
import torch
from worker import lazy_torch
print("deferred", lazy_torch.defer_dynamo() > 0, "checks", lazy_torch.quick_shape_checks())
x = torch.ones(2, 3, 4, device="meta")
attention = torch.nn.MultiheadAttention(4, 2, batch_first=True).to("meta")
attention(x, x, x, key_padding_mask=torch.zeros(2, 3, dtype=torch.bool, device="meta"))
print("compiler imported", "torch._dynamo" in sys.modules)
"""


def test_the_meta_device_runs_without_importing_the_compiler():
    """The zygote gives torch's 'do not compile' wrappers a direct call while torch._dynamo is not loaded
    (lazy_torch.defer_dynamo): the meta device's kernels then never import the compiler."""
    done = subprocess.run([sys.executable, "-I", "-c", LAZY_TORCH, str(WORKER_BOOT)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "deferred True checks True" in done.stdout
    assert "compiler imported False" in done.stdout
