"""Worker entry point: a zygote that imports torch once and forks one child per section.

Started by the trusted side as `python -I autograder/worker/main.py CONTROL_FD [meta]`.
The trusted side sends `spawn` requests over the control socket with two file
descriptors attached (the child's request socket and its output pipe). The
zygote forks; the child confines itself (`confine.py`), loads the student's
cells and answers requests until the socket closes. Before replying to the
trusted side, the zygote waits (briefly) for the child's report on a pipe:
which sandbox layers are in force, which are missing, and the PID to kill.
The zygote never runs student code, so every child starts from the same
clean state, and a child that dies costs only the checks it was running.

A batch shares one zygote's imports between its job processes: a `zygote`
request (one socket attached, no reply) forks a copy that serves `spawn`
requests on that socket, for one job, until the job closes it. With `meta`
on the command line the meta device is warmed before the first such copy,
so that no copy pays for it again. Without it a forked copy of the zygote
serves the first requests at once while the zygote warms the meta device on
the other core, and hands them back once it is warm (`serve_while_warming`):
a grading never waits for that warm-up, and its later sections get it.

A batch also names, as `preload=NAME,...`, the modules the course's notebooks import
beyond torch (pandas, in one section): the zygote imports them before the first copy,
so that no child pays for that import again (an import already done is a lookup).

With `huge` (a batch's zygote), before it forks anything, the zygote backs its memory with
huge pages (huge_pages.py): each fork then copies a few hundred page-table entries instead
of tens of thousands.

`main.py --spawn LIMITS_JSON` is the portable path instead (Windows, macOS, or
wherever fork is unavailable or unsafe): one freshly spawned interpreter,
requests on stdin, replies on the original stdout, a session per section
(serve.serve_sessions). It applies only what the platform offers (resource
limits where `resource` exists, a private working directory) and reports
that no sandbox holds.
"""
import functools
import gc
import json
import os
import select
import signal
import socket
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE]

import wire  # noqa: E402  (only this folder is on the path)


def main(control_fd: int, warm_meta_first: bool = False, preload: tuple = (), huge: bool = False) -> None:
    import huge_pages
    import namespaces

    namespaces.not_dumpable()  # nothing of the same uid may read this process's memory or environment
    import torch  # noqa: F401  the expensive import, paid once for all sections

    import lazy_torch
    import serve

    lazy_torch.defer_dynamo()  # the meta device's kernels then never import torch's compiler
    lazy_torch.quick_shape_checks()
    serve.warm_up("cpu")  # first use of a dispatch watch: pay it once, before forking
    if warm_meta_first:
        serve.warm_up("meta")
    serve.preload(preload)
    if huge:
        huge_pages.collapse()  # every fork below copies a few hundred page-table entries, not 45,000
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    control = socket.socket(fileno=control_fd)
    if warm_meta_first:
        serve_spawns(control)
    else:
        serve_while_warming(control)


def serve_while_warming(control) -> None:
    """Warm the meta device here while a forked copy of this zygote serves the first requests (cold)
    on the other core; once warm, take the requests back between two of them, so that the later
    sections' children start with the meta kernels loaded. The copy then stops reading and ends
    when the children it forked have ended (they die with their parent)."""
    import namespaces
    import serve

    namespaces.become_subreaper()  # what the copy leaves behind comes here, not to the host's init
    warm_read, warm_write = os.pipe()  # this process -> the copy: "warm, stop reading"
    done_read, done_write = os.pipe()  # the copy -> this process: "stopped" (EOF: it is gone)
    if os.fork() == 0:
        try:
            os.close(warm_write)
            os.close(done_read)
            namespaces.die_with_parent()
            if serve_spawns(control, handover=warm_read, private=(warm_read, done_write)):
                os.write(done_write, b"1")
            os.close(done_write)
            while True:  # until every child it forked is gone (SIGCHLD ignored: wait() then fails)
                os.wait()
        except ChildProcessError:
            pass
        finally:
            os._exit(0)
    os.close(warm_read)
    os.close(done_write)
    serve.warm_up("meta")
    try:
        os.write(warm_write, b"1")
    except OSError:  # the copy is gone already (the grading ended): nothing to take back
        pass
    os.read(done_read, 1)  # its "stopped", or the end of the pipe: either way, serve from here on
    os.close(warm_write)
    os.close(done_read)
    serve_spawns(control)


def serve_spawns(control, handover: int | None = None, private: tuple = ()) -> bool:
    """Answer `spawn` (and `zygote`) requests on `control` until it closes (returns False), or,
    with `handover` (the warming zygote's pipe), until that says it is warm (returns True).
    `private`: descriptors of this process's own that no forked child may keep."""
    import confine
    import namespaces
    import serve

    namespaces.become_subreaper()  # orphans of killed children are reaped here, not left to the host's init
    gc.freeze()  # a child's collections then skip torch's objects: their pages stay shared, not copied
    while True:
        if handover is not None and handover in select.select([control, handover], [], [])[0]:
            if os.read(handover, 1) == b"1":
                return True
            handover = None  # the zygote is gone (the grading ended): serve on until the socket closes
        message, fds, _flags, _addr = socket.recv_fds(control, 65536, 4)
        if not message:
            return False
        request = wire.loads(message)
        if request.get("op") == "zygote" and len(fds) == 1:
            fork_zygote(control, fds[0], private)
            continue
        if request.get("op") != "spawn" or len(fds) != 2:
            for fd in fds:
                os.close(fd)
            control.sendall(wire.dumps({"ok": False, "error": "bad spawn request"}))
            continue
        report_read, report_write = os.pipe()
        pid = os.fork()
        if pid == 0:
            control.close()
            os.close(report_read)
            for fd in private:
                os.close(fd)
            conn_fd, out_fd = fds
            try:
                import gpu

                config = request.get("config", {})
                warm_gpu = functools.partial(gpu.prepare, str(config.get("device", "cpu")),
                                             int(config.get("gpu_memory_bytes") or 0))
                confine.start(request.get("limits", {}), conn_fd, out_fd, report_write, ready=warm_gpu)
                conn = socket.socket(fileno=conn_fd)
                serve.serve(conn.makefile("rb"), conn.sendall, config)
            finally:
                os._exit(0)
        for fd in fds:
            os.close(fd)
        os.close(report_write)
        reply = {"ok": True, "pid": pid, "init": None, "reaper": None, "layers": [], "missing": [], "unreadable": ""}
        for line in sorted(read_report(report_read), key=lambda line: "init" not in line and "reaper" not in line):
            reply["init"] = line.get("init", reply["init"])
            reply["reaper"] = line.get("reaper", reply["reaper"])
            reply["layers"] += [str(x) for x in line.get("layers", [])]
            reply["missing"] += [str(x) for x in line.get("missing", [])]
            reply["unreadable"] = str(line.get("unreadable") or reply["unreadable"])
        control.sendall(wire.dumps(reply))


def fork_zygote(control, job_fd: int, private: tuple = ()) -> None:
    """Fork a copy of this zygote that serves one job on `job_fd`; no reply (the job's
    first spawn request simply waits until the copy is there)."""
    if os.fork() == 0:
        try:
            import namespaces

            control.close()
            for fd in private:
                os.close(fd)
            namespaces.die_with_parent()  # the batch closes this zygote: its copies go with it
            serve_spawns(socket.socket(fileno=job_fd))
        finally:
            os._exit(0)
    os.close(job_fd)


def read_report(fd: int, timeout: float = 20.0) -> list:
    """The JSON lines a new child writes about its confinement, until it closes the pipe."""
    data, deadline = b"", time.monotonic() + timeout
    try:
        while len(data) < 65536:
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    lines = []
    for raw in data.splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if isinstance(line, dict):
            lines.append(line)
    return lines


def spawned(limits: dict) -> None:
    """The portable path: serve sessions on stdin/stdout in this one process."""
    replies = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)  # output below Python's sys.stdout (C libraries) goes to the trusted side's log pipe
    import serve

    serve.warm_up("cpu")
    layers, missing = enter_portable(limits)
    replies.write(json.dumps({"ready": True, "pid": os.getpid(), "layers": layers,
                              "missing": missing}).encode() + b"\n")
    serve.serve_sessions(sys.stdin.buffer, replies.write)


def enter_portable(limits: dict) -> tuple[list, list]:
    """What every platform offers: a private working directory, and resource limits where they exist."""
    layers, missing = [], [f"sandbox (no namespaces, Landlock or seccomp on {sys.platform}: "
                           "the code runs as the user who started it)"]
    workdir = limits.get("workdir")
    if workdir:
        os.chdir(workdir)
        os.environ["HOME"] = os.environ["TMPDIR"] = os.environ["TEMP"] = os.environ["TMP"] = workdir
        layers.append("private directory")
    try:
        import resource
    except ImportError:
        missing.append("rlimits (not on this platform)")
        return layers, missing
    wanted = [("cpu_seconds", "RLIMIT_CPU"), ("file_bytes", "RLIMIT_FSIZE")]
    if sys.platform.startswith("linux"):  # macOS accepts RLIMIT_AS but never enforces it
        wanted.insert(0, ("memory_bytes", "RLIMIT_AS"))
    for name, key in wanted:
        value = limits.get(name)
        if value and hasattr(resource, key):
            try:
                resource.setrlimit(getattr(resource, key), (int(value), int(value)))
                layers.append(f"rlimit:{name}")
            except (ValueError, OSError):
                pass
    return layers, missing


if __name__ == "__main__":
    if sys.argv[1:2] == ["--spawn"]:
        spawned(json.loads(sys.argv[2]) if len(sys.argv) > 2 else {})
    else:
        options = sys.argv[2:]
        named = [option.split("=", 1)[1] for option in options if option.startswith("preload=")]
        main(int(sys.argv[1]), warm_meta_first="meta" in options,
             preload=tuple(name for names in named for name in names.split(",") if name), huge="huge" in options)
