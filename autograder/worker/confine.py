"""What a worker child does to itself before it runs any student code.

The zygote forks a child per section and calls `start` in it. The child starts
its own session (one process group for the trusted side to kill), then asks
`sandbox.isolate` for the OS-level layers (namespaces, hidden answers,
read-only filesystem). With a PID namespace it forks once more: the new
process is PID 1 of the namespace and runs the student's code; the first one
stays outside as its supervisor, only to report the inner PID so the trusted
side can kill it, which makes the kernel kill everything left inside.

The student's process then: mounts its own /proc, drops root (to a uid of
its own), sends its output to a capped pipe, closes standard input, moves to
its private working directory and sets resource limits. Each layer in force
and each one the machine refused is reported to the trusted side, which says
so once and grades on.
"""
import json
import os
import resource
import signal
import sys
import time

import sandbox

DEFAULT_LIMITS = {
    "memory_bytes": 4 * 1024**3,  # address space of the child
    "cpu_seconds": 120,  # CPU time of the child over all its checks
    "file_bytes": 64 * 1024**2,  # largest file it may write
    "processes": 256,  # RLIMIT_NPROC (binds once the child is no longer root)
}
RLIMITS = (
    ("memory_bytes", resource.RLIMIT_AS),
    ("cpu_seconds", resource.RLIMIT_CPU),
    ("file_bytes", resource.RLIMIT_FSIZE),
    ("processes", resource.RLIMIT_NPROC),
)
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUPERVISOR_GRACE = 60  # seconds the supervisor outlives the student's process (keeps its PID taken)


def _report(fd: int, message: dict) -> None:
    os.write(fd, (json.dumps(message) + "\n").encode())


def start(limits: dict, conn_fd: int, out_fd: int, report_fd: int) -> None:
    """Confine the current (freshly forked) process; returns in the process that serves.

    Writes one or two JSON lines to `report_fd` (layers, missing, and the PID of
    the namespace's init when there is one), then closes it.
    """
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the zygote ignores it; student code may wait()
    sandbox.die_with_parent()  # if the zygote is killed, so is this child
    os.setsid()
    supervisor = os.getpid()
    workdir = limits.get("workdir") or ""
    state = {}
    layers, missing = ["process group"], []
    if limits.get("sandbox", True) and workdir:
        try:
            state = sandbox.isolate(workdir, limits.get("repo") or REPO, want_pid=True)
        except Exception as error:  # never grade unconfined by accident without saying so
            missing.append(f"namespaces ({type(error).__name__}: {str(error)[:80]})")
        layers += state.get("layers", [])
        missing += state.get("missing", [])
    else:
        missing.append("namespaces (turned off: --sandbox off, for debugging only)")

    if state.get("pidns"):
        pid = os.fork()
        if pid > 0:  # the supervisor
            os.close(conn_fd)
            os.close(out_fd)
            _report(report_fd, {"init": pid, "layers": layers, "missing": missing})
            os.close(report_fd)
            _supervise(pid)
        layers, missing = [], []

    if state:
        more, lacking = sandbox.as_init(state, workdir, sandbox.student_uid(supervisor))
        layers += more
        missing += lacking
    layers += enter(limits, out_fd)
    _report(report_fd, {"layers": layers, "missing": missing})
    os.close(report_fd)


def _supervise(pid: int) -> None:
    """Wait for the student's process without reaping it, then leave."""
    try:
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    except ChildProcessError:
        pass
    time.sleep(SUPERVISOR_GRACE)  # the trusted side kills us long before, in the normal case
    os._exit(0)


def enter(limits: dict, out_fd: int) -> list:
    """Standard streams, working directory and resource limits. Returns the layers in force."""
    layers = []
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(out_fd, 1)
    os.dup2(out_fd, 2)
    os.close(out_fd)
    sys.stdout = open(1, "w", buffering=1, closefd=False, errors="replace")
    sys.stderr = sys.stdout
    workdir = limits.get("workdir")
    if workdir:
        os.chdir(workdir)
        os.environ["HOME"] = workdir
        os.environ["TMPDIR"] = workdir
        layers.append("private directory")
    settings = {**DEFAULT_LIMITS, **{k: v for k, v in limits.items() if k in DEFAULT_LIMITS}}
    for name, key in RLIMITS:
        value = settings[name]
        if value:
            try:
                resource.setrlimit(key, (int(value), int(value)))
                layers.append(f"rlimit:{name}")
            except (ValueError, OSError):
                pass
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return layers
