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
so that no copy pays for it again.
"""
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


def main(control_fd: int, warm_meta_first: bool = False) -> None:
    import torch  # noqa: F401  the expensive import, paid once for all sections

    import serve

    serve.warm_up("cpu")  # first use of a dispatch watch: pay it once, before forking
    if warm_meta_first:
        serve.warm_up("meta")
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    serve_spawns(socket.socket(fileno=control_fd), meta_warm=warm_meta_first)


def serve_spawns(control: socket.socket, meta_warm: bool) -> None:
    """Answer `spawn` (and `zygote`) requests on `control` until it closes."""
    import confine
    import serve

    become_subreaper()  # orphans of killed children are reaped here, not left to the host's init
    gc.freeze()  # a child's collections then skip torch's objects: their pages stay shared, not copied
    while True:
        if not meta_warm and not select.select([control], [], [], 0)[0]:
            # Idle: warm the meta device now. The first sections (no meta checks) are
            # usually forked before this, so its cost overlaps their grading.
            serve.warm_up("meta")
            gc.freeze()
            meta_warm = True
        message, fds, _flags, _addr = socket.recv_fds(control, 65536, 4)
        if not message:
            return
        request = wire.loads(message)
        if request.get("op") == "zygote" and len(fds) == 1:
            fork_zygote(control, fds[0], meta_warm)
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
                confine.start(request.get("limits", {}), conn_fd, out_fd, report_write)
                serve.serve(socket.socket(fileno=conn_fd), request.get("config", {}))
            finally:
                os._exit(0)
        for fd in fds:
            os.close(fd)
        os.close(report_write)
        reply = {"ok": True, "pid": pid, "init": None, "layers": [], "missing": []}
        for line in sorted(read_report(report_read), key=lambda line: "init" not in line):
            reply["init"] = line.get("init", reply["init"])
            reply["layers"] += [str(x) for x in line.get("layers", [])]
            reply["missing"] += [str(x) for x in line.get("missing", [])]
        control.sendall(wire.dumps(reply))


def fork_zygote(control: socket.socket, job_fd: int, meta_warm: bool) -> None:
    """Fork a copy of this zygote that serves one job on `job_fd`; no reply (the job's
    first spawn request simply waits until the copy is there)."""
    if os.fork() == 0:
        try:
            control.close()
            import sandbox

            sandbox.die_with_parent()  # the batch closes this zygote: its copies go with it
            serve_spawns(socket.socket(fileno=job_fd), meta_warm)
        finally:
            os._exit(0)
    os.close(job_fd)


def become_subreaper() -> None:
    try:
        import ctypes

        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER (Linux only; not inherited)
    except (OSError, AttributeError):
        pass


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


if __name__ == "__main__":
    main(int(sys.argv[1]), warm_meta_first="meta" in sys.argv[2:])
