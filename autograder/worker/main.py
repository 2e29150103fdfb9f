"""Worker entry point: a zygote that imports torch once and forks one child per section.

Started by the trusted side as `python -I -B autograder/worker/boot.py CONTROL_FD [meta]`
(boot.py loads this folder as the package `worker`, then calls `run`).
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
so that no copy pays for it again. Without it the zygote warms the meta
device when a `warm` request asks (a grading whose checks use it, once its
sandbox probe is answered): every child forked after it finds the meta
kernels (and the sympy they import) loaded, and none loads them again; a
grading that never uses the meta device never pays for them.

A batch also names, as `preload=NAME,...`, the modules the course's notebooks import
beyond torch (pandas, in one section): the zygote imports them before the first copy,
so that no child pays for that import again (an import already done is a lookup).

With `huge` (a batch's zygote), before it forks anything, the zygote backs its memory with
huge pages (huge_pages.py): each fork then copies a few hundred page-table entries instead
of tens of thousands.

`boot.py --spawn LIMITS_JSON` is the portable path instead (Windows, macOS, or
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

from . import wire


WARMED = set()  # the devices warmed in this process; a forked copy inherits the set with the warm state


def warm(device: str) -> None:
    """Run the first use of `device` here, once, so that no child forked afterwards pays for it."""
    from . import serve

    if device in WARMED:
        return
    collecting = gc.isenabled()
    gc.disable()  # it imports (the meta device: some 500 modules): see main
    try:
        serve.warm_up(device)
        WARMED.add(device)
    finally:
        if collecting:
            gc.freeze()  # its objects join torch's: shared pages, skipped by every collection
            gc.enable()


def main(control_fd: int, warm_meta_first: bool = False, preload: tuple = (), huge: bool = False) -> None:
    from . import huge_pages, namespaces

    namespaces.not_dumpable()  # nothing of the same uid may read this process's memory or environment
    # Importing torch makes few cycles but a great many objects, and each collection they set off
    # walks all of them: a seventh of the import's CPU. Collection resumes, as before, once every
    # object of the imports is frozen (serve_spawns), before any child is forked.
    gc.disable()
    import torch  # noqa: F401  the expensive import, paid once for all sections

    from . import guards, lazy_torch, serve

    lazy_torch.defer_dynamo()  # the meta device's kernels then never import torch's compiler
    lazy_torch.quick_shape_checks()
    warm("cpu")  # first use of a dispatch watch: pay it once, before forking
    if warm_meta_first:
        warm("meta")
    serve.preload(preload)
    guards.install()  # once here, inherited by every child (guards.install says why)
    if huge:
        huge_pages.collapse()  # every fork below copies a few hundred page-table entries, not 45,000
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    serve_spawns(socket.socket(fileno=control_fd))


def serve_spawns(control) -> None:
    """Answer `spawn`, `warm` and `zygote` requests on `control` until it closes."""
    from . import confine, namespaces, serve

    namespaces.become_subreaper()  # orphans of killed children are reaped here, not left to the host's init
    gc.freeze()  # a child's collections then skip torch's objects: their pages stay shared, not copied
    gc.enable()  # (main disabled it for the imports): every child collects as Python always does
    while True:
        message, fds, _flags, _addr = socket.recv_fds(control, 65536, 4)
        if not message:
            return
        request = wire.loads(message)
        if request.get("op") == "zygote" and len(fds) == 1:
            fork_zygote(control, fds[0])
            continue
        if request.get("op") == "warm" and not fds:
            # only the meta device: warming "cuda" here would start the driver in the zygote, and no
            # child forked from it could use the GPU (see serve.warm_up)
            if request.get("device") == "meta":
                warm("meta")
            control.sendall(wire.dumps({"ok": True}))
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
            conn_fd, out_fd = fds
            try:
                from . import gpu

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
            reply["layers"] += [x for x in line.get("layers", []) if isinstance(x, dict)]
            reply["missing"] += [x for x in line.get("missing", []) if isinstance(x, dict)]
            reply["unreadable"] = str(line.get("unreadable") or reply["unreadable"])
        control.sendall(wire.dumps(reply))


def fork_zygote(control, job_fd: int) -> None:
    """Fork a copy of this zygote that serves one job on `job_fd`; no reply (the job's
    first spawn request simply waits until the copy is there)."""
    if os.fork() == 0:
        try:
            from . import namespaces

            control.close()
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
    gc.disable()  # the zygote's start, in this one process: see main
    import torch  # noqa: F401

    from . import lazy_torch, serve

    lazy_torch.defer_dynamo()  # else the meta device's first use imports torch's compiler: a second of CPU
    lazy_torch.quick_shape_checks()
    warm("cpu")
    gc.freeze()  # every later collection skips torch's objects
    gc.enable()
    layers, missing = enter_portable(limits)
    replies.write(json.dumps({"ready": True, "pid": os.getpid(), "layers": layers,
                              "missing": missing}).encode() + b"\n")
    serve.serve_sessions(sys.stdin.buffer, replies.write)


def enter_portable(limits: dict) -> tuple[list, list]:
    """What every platform offers: a private working directory, and resource limits where they exist."""
    layers, missing = [], [{"id": "sandbox", "why": "portable", "platform": sys.platform}]
    workdir = limits.get("workdir")
    if workdir:
        os.chdir(workdir)
        os.environ["HOME"] = os.environ["TMPDIR"] = os.environ["TEMP"] = os.environ["TMP"] = workdir
        layers.append({"id": "private_directory"})
    try:
        import resource
    except ImportError:
        missing.append({"id": "rlimits", "why": "not_on_this_platform"})
        return layers, missing
    wanted = [("cpu_seconds", "RLIMIT_CPU"), ("file_bytes", "RLIMIT_FSIZE")]
    if sys.platform.startswith("linux"):  # macOS accepts RLIMIT_AS but never enforces it
        wanted.insert(0, ("memory_bytes", "RLIMIT_AS"))
    for name, key in wanted:
        value = limits.get(name)
        if value and hasattr(resource, key):
            try:
                resource.setrlimit(getattr(resource, key), (int(value), int(value)))
                layers.append({"id": "rlimit", "name": name})
            except (ValueError, OSError):
                pass
    return layers, missing


def run(argv: list[str]) -> None:
    """The command line boot.py passes on: `CONTROL_FD [meta] [preload=NAME,...] [huge]`, or
    `--spawn LIMITS_JSON` (the portable path)."""
    if argv[:1] == ["--spawn"]:
        spawned(json.loads(argv[1]) if len(argv) > 1 else {})
    else:
        options = argv[1:]
        named = [option.split("=", 1)[1] for option in options if option.startswith("preload=")]
        main(int(argv[0]), warm_meta_first="meta" in options,
             preload=tuple(name for names in named for name in names.split(",") if name), huge="huge" in options)
