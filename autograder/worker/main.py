"""Worker entry point: a zygote that imports torch once and forks one child per section.

Started by the trusted side as `python -I autograder/worker/main.py CONTROL_FD`.
The trusted side sends `spawn` requests over the control socket with two file
descriptors attached (the child's request socket and its output pipe). The
zygote forks; the child confines itself (`confine.py`), loads the student's
cells and answers requests until the socket closes. The zygote never runs
student code, so every child starts from the same clean state, and a child
that dies costs only the checks it was running.
"""
import os
import signal
import socket
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE]

import wire  # noqa: E402  (only this folder is on the path)


def main(control_fd: int) -> None:
    import torch  # noqa: F401  the expensive import, paid once for all sections

    import confine
    import serve

    serve.warm_up()  # first use of a dispatch mode imports a lot: pay it once, before forking

    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    control = socket.socket(fileno=control_fd)
    while True:
        message, fds, _flags, _addr = socket.recv_fds(control, 65536, 4)
        if not message:
            return
        request = wire.loads(message)
        if request.get("op") != "spawn" or len(fds) != 2:
            for fd in fds:
                os.close(fd)
            control.sendall(wire.dumps({"ok": False, "error": "bad spawn request"}))
            continue
        pid = os.fork()
        if pid == 0:
            control.close()
            conn_fd, out_fd = fds
            try:
                confine.enter(request.get("limits", {}), out_fd)
                serve.serve(socket.socket(fileno=conn_fd), request.get("config", {}))
            finally:
                os._exit(0)
        for fd in fds:
            os.close(fd)
        control.sendall(wire.dumps({"ok": True, "pid": pid}))


if __name__ == "__main__":
    main(int(sys.argv[1]))
