"""The namespaces tier of a worker child: namespaces, an allow-listed filesystem, no privileges.

Called in the freshly forked (so single-threaded) child of the zygote, before any
student code exists in the process. Every layer is tried on its own; one the
machine refuses is recorded in `missing` with the reason, and the rest still
apply. The trusted side prints the result once.

Layers, in the order they are tried:

- user namespace: only when not root, to gain the right to create the others
  (uid/gid maps of one id each, setgroups denied);
- network namespace: the child sees only its own loopback interface, down;
  nothing on the host, not even a listener on 127.0.0.1, is reachable;
- mount namespace and a new root: the child sees a filesystem built for it
  (`new_root.py`) that holds exactly what `allowed.plan` grants (the Python
  install, the import path's packages but the course's answer packages, the
  system's libraries, a few files of /etc, /sys, this worker's folder), a
  minimal /dev, its own /proc and its private working directory; nothing else
  exists there, wherever on the machine the answers, an exchange or a
  gradebook lie; everything read-only and nosuid but the working directory
  and a fresh /dev/shm;
- PID namespace: the student's process is PID 1 of its own namespace; when it
  is killed, the kernel kills every process it left, double forks and setsid
  included, and /proc (mounted fresh) shows only those processes;
- no privileges: as root, the student's process switches to a uid of its own
  (no passwd entry, no files, not shared with another worker), so
  RLIMIT_NPROC binds and counts only its processes (it never binds root),
  and nothing root owns can be changed; no_new_privs stops setuid programs
  from giving privileges back.
"""
from __future__ import annotations

import os
import sys

from . import allowed, new_root
from .mounts import MS_NODEV, MS_NOEXEC, MS_NOSUID, MS_PRIVATE, MS_REC, libc, mount, unshare

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36
FIRST_UID = 200000  # the student's process gets a uid of its own: FIRST_UID + (supervisor PID % UID_SPAN)
UID_SPAN = 100000
WORKDIR_BYTES = 256 * 1024**2  # the private working directory (a tmpfs: memory, not disk)



def refused(layer: str, error: BaseException) -> dict:
    """A missing layer as the report says it: its id and why, as data (the system's error number, or
    the exception's own text); the trusted side words it (sandbox/layer_words.py)."""
    if isinstance(error, OSError) and error.errno:
        return {"id": layer, "errno": error.errno}
    return {"id": layer, "error": str(error)[:80] or type(error).__name__}


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def gpu_groups(pattern: str = "/dev/nvidia*") -> list[int]:
    """The groups the student's uid keeps: those of GPU device files that only their group may open
    (a machine whose /dev/nvidia* are 0660 root:video, say); none where everyone may (0666, the usual)."""
    import glob
    import stat

    groups = set()
    for path in glob.glob(pattern):
        try:
            info = os.stat(path)
        except OSError:
            continue
        if stat.S_ISCHR(info.st_mode) and info.st_mode & 0o066 == 0o060:
            groups.add(info.st_gid)
    return sorted(groups)


def isolate(workdir: str, repo: str, want_pid: bool) -> dict:
    """Enter new namespaces and build the filesystem view. Returns what worked."""
    state = {"layers": [], "missing": [], "userns": False, "pidns": False, "mounts": False}
    layers, missing = state["layers"], state["missing"]
    if not sys.platform.startswith("linux"):
        missing.append({"id": "namespaces", "why": "not_linux"})
        return state
    try:
        libc()
    except OSError as error:
        missing.append(refused("namespaces", error))
        return state

    if os.geteuid() != 0:
        uid, gid = os.getuid(), os.getgid()
        try:
            libc().prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # after a uid change /proc/self would be root's
            unshare(CLONE_NEWUSER)
            _write("/proc/self/setgroups", "deny")
            _write("/proc/self/uid_map", f"0 {uid} 1")
            _write("/proc/self/gid_map", f"0 {gid} 1")
            state["userns"] = True
            layers.append({"id": "user_namespace"})
        except OSError as error:
            missing.append(refused("user_namespace", error))  # not root: no other namespace either
            missing += [{"id": "network_namespace"}, {"id": "mount_namespace"}, {"id": "pid_namespace"}]
            return state

    try:
        unshare(CLONE_NEWNET)
        layers.append({"id": "network_namespace"})
    except OSError as error:
        missing.append(refused("network_namespace", error))

    try:
        unshare(CLONE_NEWNS)
        mount(None, "/", None, MS_REC | MS_PRIVATE)
        state["mounts"] = True
        layers.append({"id": "mount_namespace"})
    except OSError as error:
        missing.append(refused("mount_namespace", error))

    if state["mounts"]:
        _build_view(workdir, repo, state)

    if want_pid:
        try:
            unshare(CLONE_NEWPID)
            state["pidns"] = True
            layers.append({"id": "pid_namespace"})
        except OSError as error:
            missing.append(refused("pid_namespace", error))
    return state


def _build_view(workdir: str, repo: str, state: dict) -> None:
    layers, missing = state["layers"], state["missing"]
    try:
        plan = allowed.plan(workdir, repo, sys.path, [sys.base_prefix, sys.prefix], os.path.dirname(
            os.path.abspath(__file__)))
        paths = new_root.build(workdir, plan, WORKDIR_BYTES)
    except OSError as error:
        missing.append(refused("allowed_root", error))
        return
    state["plan"] = plan  # for the Landlock rules stacked on top (confine.py)
    layers.append({"id": "allowed_root", "paths": paths})
    layers.append({"id": "private_tmpfs", "mib": WORKDIR_BYTES // 1024**2})
    layers.append({"id": "read_only_filesystem"})


def die_with_parent(sig: int = 9) -> None:
    try:
        libc().prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def not_dumpable() -> None:
    """PR_SET_DUMPABLE 0: no process of the same uid may read this one's memory or /proc environ.
    For the trusted processes (the grader, the zygote); Linux only, a no-op elsewhere."""
    if sys.platform.startswith("linux"):
        try:
            libc().prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        except (OSError, AttributeError):
            pass


def become_subreaper() -> None:
    """PR_SET_CHILD_SUBREAPER: orphans below this process are re-parented to it (not inherited)."""
    try:
        libc().prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def complete(state: dict) -> bool:
    """Whether every layer of this tier is in force: no network, only the allowed files, read-only, own PIDs."""
    ids = {layer.get("id") for layer in state.get("layers", [])}
    return bool(state.get("pidns") and state.get("mounts")
                and {"network_namespace", "read_only_filesystem", "allowed_root"} <= ids)


def no_new_privs() -> bool:
    """Set no_new_privs (no setuid program can give privileges back; Landlock and seccomp need it)."""
    try:
        return libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def student_uid(supervisor_pid: int) -> int:
    """A uid no file and no other worker has: RLIMIT_NPROC then counts this child's processes only."""
    return FIRST_UID + supervisor_pid % UID_SPAN


def as_init(state: dict, workdir: str, uid: int, before_uid=None) -> tuple[list, list]:
    """In the student's process (PID 1 of its namespace when there is one): /proc, privileges.
    `before_uid`: called once /proc is its own and before the uid changes (while every allowed path
    can still be opened): the Landlock rules stacked on the new root are built there."""
    layers, missing = [], []
    if state.get("pidns") and state.get("mounts"):
        try:
            mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
            layers.append({"id": "private_proc"})
        except OSError as error:
            missing.append(refused("private_proc", error))
    if before_uid is not None:
        before_uid()
    if os.geteuid() == 0 and not state.get("userns"):
        if state.get("mounts"):
            try:
                os.chown(workdir, uid, uid)
                os.setgroups(gpu_groups())
                os.setresgid(uid, uid, uid)
                os.setresuid(uid, uid, uid)
                os.environ["USER"] = os.environ["LOGNAME"] = "student"  # getpass without a passwd entry
                layers.append({"id": "unprivileged_user", "uid": uid})
            except OSError as error:
                missing.append(refused("unprivileged_user", error))
    if state.get("pidns"):  # if the supervisor dies, so does the namespace (after the uid change,
        die_with_parent()  # which would clear it)
    return layers, missing
