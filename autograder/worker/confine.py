"""What a worker child does to itself before it runs any student code (Linux, fork path).

The zygote forks a child per section and calls `start` in it. The child starts
its own session, then confines itself in one of two tiers, the strongest the
machine allows:

- **namespaces** (`namespaces.py`): network, mount and PID namespaces, a new
  root that holds only what the allow-list grants (`allowed.py`, `new_root.py`),
  everything read-only but a private tmpfs, and the same allow-list stacked on
  it as Landlock rules where the kernel has Landlock. Needs root, or
  unprivileged user namespaces with capabilities inside.
- **landlock**, for containers and restricted hosts, needs no privilege: the
  same allow-list as Landlock rules (`landlock.py`), a subreaper supervisor that kills
  everything the student's process starts, a uid of its own when the grader
  is root. Where namespaces were only partly granted, what was granted stays
  and this tier is added on top.

In both, the student's process then takes no_new_privs, a seccomp filter
(`seccomp.py`: no sockets, no ptrace, no namespaces), resource limits, a
capped output pipe and its private working directory. Each layer in force
and each one refused is reported; the trusted side names the tier reached
and refuses hidden grading when neither holds.

Process shapes: with a PID namespace, the first process stays outside as the
namespace's supervisor and the second is its PID 1; without one, the first
process becomes a child subreaper and, told to stop (SIGTERM from the trusted
side, or its parent's death), kills every process below it before it exits.
"""
import json
import os
import resource
import signal
import stat
import sys
import time

from . import landlock, namespaces, procfs, seccomp

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
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SUPERVISOR_GRACE = 60  # seconds the namespace supervisor outlives the student's process (keeps its PID taken)
REAP_SECONDS = 5.0  # the subreaper's bound on killing what is left


def _report(fd: int, message: dict) -> None:
    os.write(fd, (json.dumps(message) + "\n").encode())


def start(limits: dict, conn_fd: int, out_fd: int, report_fd: int, ready=None) -> None:
    """Confine the current (freshly forked) process; returns in the process that serves.

    Writes one or two JSON lines to `report_fd` (layers, missing, and the PID of
    the namespace's init or of the subreaper when there is one), then closes it.
    `ready`: run confined, as the student's user and under the resource limits, just before the
    seccomp filter (the GPU's start, gpu.prepare): returns (layers, missing) to add. The trusted
    side times nothing until the report comes.
    """
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the zygote ignores it; student code may wait()
    namespaces.die_with_parent()  # if the zygote is killed, so is this child
    os.setsid()
    supervisor = os.getpid()
    workdir = limits.get("workdir") or ""
    confined = limits.get("sandbox", "on") != "off" and bool(workdir)
    state, layers, missing = _isolate(workdir, limits.get("repo") or REPO, confined)
    unprivileged_tier = confined and not namespaces.complete(state)
    if workdir:  # now, while root may still enter every folder above it (its tmpfs, in the namespaces tier)
        os.chdir(workdir)
    if _fork_keeper(state, unprivileged_tier, supervisor, (conn_fd, out_fd, report_fd), layers, missing):
        layers, missing = [], []  # the keeper reported those
    report = _confine_self(state, limits, workdir, supervisor, (confined, unprivileged_tier), out_fd, ready)
    report["layers"], report["missing"] = layers + report["layers"], missing + report["missing"]
    _report(report_fd, report)
    os.close(report_fd)


def _isolate(workdir: str, repo: str, confined: bool) -> tuple[dict, list, list]:
    """(the namespaces' state, the layers in force, those missing) once the namespaces are entered."""
    state = {}
    layers, missing = [{"id": "process_group"}], []
    if confined:
        try:
            state = namespaces.isolate(workdir, repo, want_pid=True)
        except Exception as error:  # never grade unconfined by accident without saying so
            missing.append({"id": "namespaces", "error": f"{type(error).__name__}: {str(error)[:80]}"})
        layers += state.get("layers", [])
        missing += state.get("missing", [])
    else:
        missing.append({"id": "sandbox", "why": "turned_off"})
    return state, layers, missing


def _fork_keeper(state: dict, unprivileged_tier: bool, supervisor: int, fds: tuple, layers: list,
                 missing: list) -> bool:
    """Fork the process that stays behind: the PID namespace's supervisor, or the subreaper of the
    landlock tier. The keeper reports `layers` and `missing` and never returns; the student's
    process returns True. False (no fork) where neither applies."""
    conn_fd, out_fd, report_fd = fds
    if state.get("pidns"):
        pid = os.fork()
        if pid > 0:  # the supervisor
            os.close(conn_fd)
            os.close(out_fd)
            _report(report_fd, {"init": pid, "layers": layers, "missing": missing})
            os.close(report_fd)
            _supervise(pid)
        return True
    if unprivileged_tier:
        namespaces.become_subreaper()
        pid = os.fork()
        if pid > 0:  # the subreaper: keeps the output pipe open until all below it are gone
            os.close(conn_fd)
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGCHLD})
            namespaces.die_with_parent(signal.SIGTERM)  # the zygote gone: clean up, then go
            _report(report_fd, {"reaper": supervisor, "layers": layers + [{"id": "subreaper"}], "missing": missing})
            os.close(report_fd)
            _reap(out_fd)
        return True
    return False


def _confine_self(state: dict, limits: dict, workdir: str, supervisor: int, tiers: tuple, out_fd: int,
                  ready) -> dict:
    """The layers the student's own process takes, the seccomp filter last; returns its report:
    layers, missing, and `unreadable`, the folder of Python or the grader that other users cannot
    read when that kept student code running as root ("" otherwise), as data for the trusted side.
    `tiers`: (confined at all, in the landlock tier)."""
    confined, unprivileged_tier = tiers
    layers, missing, unreadable = [], [], ""
    stacked = {}
    if state:
        def stack():  # the new root's allow-list again, as Landlock rules (an independent layer)
            if state.get("plan") and not unprivileged_tier:
                try:
                    stacked["ruleset"] = landlock.prepare(landlock.rules(state["plan"], shm=True))
                except OSError as error:
                    missing.append(namespaces.refused("landlock_filesystem", error))

        more, lacking = namespaces.as_init(state, workdir, namespaces.student_uid(supervisor), stack)
        layers += more
        missing += lacking
    if confined:
        if namespaces.no_new_privs():
            layers.append({"id": "no_new_privs"})
        else:
            missing.append({"id": "no_new_privs"})
    ruleset = stacked.get("ruleset")
    if unprivileged_tier:
        repo = limits.get("repo") or REPO
        more, lacking, unreadable, ruleset = _unprivileged(state, workdir, repo, namespaces.student_uid(supervisor))
        layers += more
        missing += lacking
    landlock_at = len(layers)  # its layers are listed here, where they were always listed
    layers += enter(limits, out_fd)
    # The GPU starts before Landlock and seccomp hold. Seen on an H200 (driver 580): CUDA's start fails
    # under our seccomp filter (the driver opens a socket of its own) and under Landlock (even with every
    # path allowed), while a context started before the filter keeps working under it. Landlock only
    # judges what is opened after it, so the same order serves that tier.
    if ready is not None:
        more, lacking = ready()
        layers += more
        missing += lacking
    if ruleset is not None:
        more, lacking = _restrict_files(ruleset)
        layers[landlock_at:landlock_at] = more
        missing += lacking
    if confined:
        try:
            seccomp.install()
            layers.append({"id": "seccomp"})
        except OSError as error:
            missing.append(namespaces.refused("seccomp", error))
    return {"layers": layers, "missing": missing, "unreadable": unreadable}


def _supervise(pid: int) -> None:
    """Wait for the student's process without reaping it, then leave."""
    try:
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    except ChildProcessError:
        pass
    time.sleep(SUPERVISOR_GRACE)  # the trusted side kills us long before, in the normal case
    os._exit(0)


def _reap(out_fd: int) -> None:
    """The subreaper's life: reap while the student works; when told to stop, kill all below, go."""
    while True:
        sig = signal.sigwait({signal.SIGTERM, signal.SIGCHLD})
        _reap_zombies()
        if sig == signal.SIGTERM:
            break
    me, deadline = os.getpid(), time.monotonic() + REAP_SECONDS
    while time.monotonic() < deadline:
        below = procfs.processes_where(procfs.PARENT, me)
        for pid in below:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        _reap_zombies()
        if not below:
            try:
                os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break  # nothing below any more: every orphan has come here and been reaped
        time.sleep(0.002)
    os.close(out_fd)
    os._exit(0)


def _reap_zombies() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def readable_by_others(path: str) -> bool:
    """Whether a user with no relation to the files can reach and read `path`."""
    path = os.path.realpath(path)
    try:
        if not os.stat(path).st_mode & stat.S_IROTH:
            return False
        while path != "/":
            path = os.path.dirname(path)
            if not os.stat(path).st_mode & stat.S_IXOTH:
                return False
    except OSError:
        return False
    return True


def _unprivileged(state: dict, workdir: str, repo: str, uid: int) -> tuple[list, list, str, tuple | None]:
    """The landlock tier's first half, in the student's process: the Landlock ruleset built, then its
    own uid (when root). The ruleset is built first: after the uid change a path under a folder only
    root may enter (pytest's temporary folders, say) could no longer be opened. Returns (layers,
    missing, the folder other users cannot read that kept the uid from changing or "", the ruleset
    for `_restrict_files` or None)."""
    layers, missing, unreadable = [], [], ""
    try:
        prepared = landlock.prepare(landlock.plan(workdir, repo, sys.path, [sys.base_prefix, sys.prefix], HERE))
    except OSError as error:
        prepared = None
        missing.append(namespaces.refused("landlock_filesystem", error))
    if os.geteuid() == 0 and not state.get("userns"):  # (the namespaces tier switched already if it could)
        needed = [sys.base_prefix, sys.prefix, HERE]
        unreadable = next((p for p in needed if not readable_by_others(p)), "")
        if unreadable:
            missing.append({"id": "unprivileged_user", "why": "unreadable", "folder": unreadable})
        else:
            try:
                os.chown(workdir, uid, uid)
                os.setgroups(namespaces.gpu_groups())
                os.setresgid(uid, uid, uid)
                os.setresuid(uid, uid, uid)
                os.environ["USER"] = os.environ["LOGNAME"] = "student"
                layers.append({"id": "unprivileged_user", "uid": uid})
                namespaces.die_with_parent()  # the uid change cleared it
            except OSError as error:
                missing.append(namespaces.refused("unprivileged_user", error))
    return layers, missing, unreadable, prepared


def _restrict_files(prepared: tuple) -> tuple[list, list]:
    """The landlock tier's second half: the ruleset enforced (no_new_privs is already set)."""
    layers, missing = [], []
    try:
        got = landlock.enforce(prepared)
    except OSError as error:
        missing.append(namespaces.refused("landlock_filesystem", error))
        return layers, missing
    layers.append({"id": "landlock_filesystem", "abi": got["abi"]})
    if got["tcp"]:
        layers.append({"id": "landlock_network"})
    if got["scoped"]:
        layers.append({"id": "landlock_scope"})
    else:
        missing.append({"id": "landlock_scope", "why": "landlock_abi", "abi": got["abi"]})
    return layers, missing


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
    if workdir:  # the process is in it already (`start`)
        os.environ["HOME"] = workdir
        os.environ["TMPDIR"] = workdir
        layers.append({"id": "private_directory"})
    settings = {**DEFAULT_LIMITS, **{k: v for k, v in limits.items() if k in DEFAULT_LIMITS}}
    for name, key in RLIMITS:
        value = settings[name]
        if value:
            try:
                resource.setrlimit(key, (int(value), int(value)))
                layers.append({"id": "rlimit", "name": name})
            except (ValueError, OSError):
                pass
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return layers
