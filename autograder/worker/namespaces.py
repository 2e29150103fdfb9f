"""The namespaces tier of a worker child: namespaces, a hidden filesystem, no privileges.

Called in the freshly forked (so single-threaded) child of the zygote, before any
student code exists in the process. Every layer is tried on its own; one the
machine refuses is recorded in `missing` with the reason, and the rest still
apply. The trusted side prints the result once.

Layers, in the order they are tried:

- user namespace: only when not root, to gain the right to create the others
  (uid/gid maps of one id each, setgroups denied);
- network namespace: the child sees only its own loopback interface, down;
  nothing on the host, not even a listener on 127.0.0.1, is reachable;
- mount namespace: a private copy of the mount table in which the course
  repository (solutions/, autograder/checks/, tests/, .git, ...), home
  directories, /tmp, /run and the like are covered by empty tmpfs, except the
  few paths the interpreter needs (the worker folder, the Python install) and
  the child's own working directory; then every mount is made read-only and
  nosuid except the working directory and a fresh /dev/shm;
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

import ctypes
import os
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000

SYS_MOUNT_SETATTR = 442  # the same number on every architecture (added in Linux 5.12)
AT_FDCWD = -100
AT_RECURSIVE = 0x8000
MOUNT_ATTR_RDONLY = 0x1
MOUNT_ATTR_NOSUID = 0x2

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36
FIRST_UID = 200000  # the student's process gets a uid of its own: FIRST_UID + (supervisor PID % UID_SPAN)
UID_SPAN = 100000
WORKDIR_BYTES = 256 * 1024**2  # the private working directory (a tmpfs: memory, not disk)
SHM_BYTES = 64 * 1024**2

# Paths covered by an empty tmpfs when they exist (besides the course repository).
ANSWER_PACKAGES = ("solutions", "autograder", "course", "tests")  # as guards.BLOCKED_PACKAGES
NEVER_COVERED = ("/", "/usr", "/proc", "/dev", "/sys", "/etc", "/lib", "/lib64", "/bin")
HIDDEN = ("/tmp", "/var/tmp", "/root", "/home", "/run", "/mnt", "/media", "/srv", "/opt")


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


_libc = None


def libc():
    """The C library, loaded once, with errno kept for ctypes.get_errno (every worker module's)."""
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare(flags: int) -> None:
    _check(libc().unshare(ctypes.c_int(flags)), "unshare")


def mount(source, target, fstype, flags, data=None) -> None:
    enc = lambda s: None if s is None else str(s).encode()  # noqa: E731
    _check(libc().mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)),
           f"mount {target}")


def set_mount_attr(path: str, set_flags: int, clear_flags: int = 0, recursive: bool = False) -> None:
    attr = _MountAttr(set_flags, clear_flags, 0, 0)
    result = libc().syscall(ctypes.c_long(SYS_MOUNT_SETATTR), ctypes.c_int(AT_FDCWD), path.encode(),
                            ctypes.c_uint(AT_RECURSIVE if recursive else 0), ctypes.byref(attr),
                            ctypes.c_size_t(ctypes.sizeof(attr)))
    _check(result, f"mount_setattr {path}")


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


def _inside(path: str, folder: str) -> bool:
    return path != folder and path.startswith(folder.rstrip("/") + "/")


def plan(workdir: str, repo: str, search_path: list[str]) -> tuple[list[str], list[str]]:
    """(folders to cover with an empty tmpfs, outer first; directories to keep visible inside them).

    The course repository is covered whole, except when it is a site-packages
    folder (the course installed, not checked out): then only its answer
    packages are. Installed copies of the answer packages in any folder
    of the import path are covered too (a non-editable `pip install .` puts
    solutions/ and autograder/checks/ into site-packages).
    """
    here = os.path.dirname(os.path.abspath(__file__))
    places = [os.path.realpath(p) for p in search_path if p and os.path.isabs(p)]
    places = [p for p in places if os.path.isdir(p)]
    repo = os.path.realpath(repo)
    covers = {os.path.dirname(workdir), *HIDDEN}
    installed = os.path.basename(repo) in ("site-packages", "dist-packages")
    if installed:
        covers |= {os.path.join(repo, name) for name in ANSWER_PACKAGES}
    else:
        covers.add(repo)
    for place in places:
        covers |= {os.path.join(place, name) for name in ANSWER_PACKAGES}
    covers = sorted((c for c in covers if c not in NEVER_COVERED and c != workdir and os.path.isdir(c)),
                    key=lambda c: (len(c), c))

    wanted = [here, workdir, sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix, *places,
              *library_folders(here)]
    paths = []
    for path in wanted:
        path = os.path.realpath(path)
        # a covered folder is never kept whole (an editable install puts the repository on sys.path)
        if not os.path.isdir(path) or path == "/" or path in covers:
            continue
        if not installed and (path == repo or _inside(repo, path)):
            continue
        paths.append(path)
    # nested kept paths stay listed: a folder covered inside a kept one gets them back
    keep = sorted(set(paths), key=lambda p: (len(p), p))
    # a folder inside one already covered is gone anyway, unless it came back with a kept path
    covers = [c for c in covers
              if not any(_inside(c, other) for other in covers) or any(_inside(c, k) for k in keep)]
    return covers, keep


def links_on_the_way(covers: list[str], entries: list[str]) -> list[tuple[str, str]]:
    """(link, its real target) for each symlink inside a covered folder on the way to an import path
    entry: a .venv linked into the repository from elsewhere would be cut off by the cover, though
    `plan` keeps the real folder it leads to."""
    links = {}
    for entry in entries:
        if not entry or not os.path.isabs(entry):
            continue
        path = "/"
        for part in os.path.normpath(entry).split("/")[1:]:
            path = os.path.join(path, part)
            if os.path.islink(path) and any(_inside(path, folder) for folder in covers):
                links[path] = os.path.realpath(path)
    return sorted(links.items())


def _put_back(links: list[tuple[str, str]]) -> None:
    """Each link of links_on_the_way made again in the cover (only the link, with its parent folders
    empty), so the import path reaches its kept folder as it did before."""
    for link, target in links:
        if os.path.lexists(link):
            continue
        os.makedirs(os.path.dirname(link), mode=0o755, exist_ok=True)
        os.symlink(target, link)


# LD_LIBRARY_PATH: a GPU image often finds the driver's library (libcuda) there, in
# /usr/local/nvidia/lib64, say, rather than in the system's library folders. Both tiers keep these
# folders readable (this one, and landlock.plan), except one that holds the course's answer packages
# or lies above the grader (a repository is never a library folder).
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


def library_folders(here: str) -> list[str]:
    """The absolute folders of LD_LIBRARY_PATH that hold no answers and do not contain `here`."""
    here = os.path.realpath(here)
    found = []
    for entry in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep):
        if not entry or not os.path.isabs(entry) or not os.path.isdir(entry):
            continue
        folder = os.path.realpath(entry)
        if folder == "/" or here == folder or here.startswith(folder.rstrip("/") + "/"):
            continue
        if any(os.path.isdir(os.path.join(folder, name)) for name in ANSWER_PACKAGES):
            continue
        if folder not in found:
            found.append(folder)
    return found


def _cover(folder: str, keep: list[str]) -> None:
    """Mount an empty tmpfs over `folder`, then bind back the kept paths inside it."""
    inner = [k for k in keep if _inside(k, folder)]
    inner = [k for k in inner if not any(_inside(k, other) for other in inner)]  # outermost only
    handles = [(k, os.open(k, os.O_PATH | os.O_DIRECTORY)) for k in inner]
    try:
        mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=755")
        for path, fd in handles:
            os.makedirs(path, mode=0o755, exist_ok=True)
            mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
    finally:
        for _, fd in handles:
            os.close(fd)


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
        _build_view(workdir, repo, layers, missing)

    if want_pid:
        try:
            unshare(CLONE_NEWPID)
            state["pidns"] = True
            layers.append({"id": "pid_namespace"})
        except OSError as error:
            missing.append(refused("pid_namespace", error))
    return state


def _build_view(workdir: str, repo: str, layers: list, missing: list) -> None:
    try:
        # a tmpfs of its own: capped in size, writable when the rest is not, gone with the namespace
        mount("tmpfs", workdir, "tmpfs", MS_NOSUID | MS_NODEV, f"size={WORKDIR_BYTES},mode=700")
        covers, keep = plan(workdir, repo, sys.path)
        links = links_on_the_way(covers, [*sys.path, sys.prefix, sys.exec_prefix])
        for folder in covers:
            _cover(folder, keep)
        _put_back(links)
        layers.append({"id": "answers_hidden", "folders": list(covers)})
        layers.append({"id": "private_tmpfs", "mib": WORKDIR_BYTES // 1024**2})
    except OSError as error:
        missing.append(refused("hidden_repository", error))
        return
    try:
        set_mount_attr("/", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, recursive=True)
        set_mount_attr(workdir, 0, MOUNT_ATTR_RDONLY)
        layers.append({"id": "read_only_filesystem"})
    except OSError as error:
        missing.append(refused("read_only_filesystem", error))
    try:
        if os.path.isdir("/dev/shm"):
            mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, f"size={SHM_BYTES},mode=1777")
    except OSError as error:
        missing.append(refused("private_dev_shm", error))


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
    """Whether every layer of this tier is in force: no network, answers hidden, read-only, own PIDs."""
    ids = {layer.get("id") for layer in state.get("layers", [])}
    return bool(state.get("pidns") and state.get("mounts")
                and {"network_namespace", "read_only_filesystem", "answers_hidden"} <= ids)


def no_new_privs() -> bool:
    """Set no_new_privs (no setuid program can give privileges back; Landlock and seccomp need it)."""
    try:
        return libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def student_uid(supervisor_pid: int) -> int:
    """A uid no file and no other worker has: RLIMIT_NPROC then counts this child's processes only."""
    return FIRST_UID + supervisor_pid % UID_SPAN


def as_init(state: dict, workdir: str, uid: int) -> tuple[list, list]:
    """In the student's process (PID 1 of its namespace when there is one): /proc, privileges."""
    layers, missing = [], []
    if state.get("pidns") and state.get("mounts"):
        try:
            mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
            layers.append({"id": "private_proc"})
        except OSError as error:
            missing.append(refused("private_proc", error))
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
