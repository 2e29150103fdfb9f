"""Landlock: a filesystem allow-list the worker child puts on itself, with no privilege.

Used where namespaces are not to be had (containers without CAP_SYS_ADMIN,
hosts whose AppArmor policy strips user namespaces of their capabilities).
Once restricted, the child and everything it starts can:

- read and run what `allowed.plan` grants: the Python install, the import
  path's packages (except the course's answer packages, when the course is
  installed there), this folder, the system's libraries and a few files of
  /etc the C library reads, /sys;
- read and write its private working directory, /dev/null and, for CUDA, the
  GPU's device files;
- nothing else: not the course repository, not /tmp, not the home folders,
  not /proc beyond its own entry (so no other process's environment), and,
  from Landlock ABI 4 on, no TCP bind or connect; from ABI 6 on, no signal
  and no abstract UNIX socket outside its own domain. A Landlock domain can
  never ptrace a process outside it, whatever the ABI.

The rules are paths: a folder that holds a hole of the plan (an answer package,
the repository) is carved up into its other entries, since a rule always covers
a whole subtree. In the namespaces tier the same rules are stacked on the new
root, a second layer that does not depend on the first.
"""
from __future__ import annotations

import ctypes
import os
import stat

from . import allowed, namespaces

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446  # the same on every architecture
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1, 5: (1 << 16) - 1}
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # the rights a rule on a file may hold
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1, 2

READ = EXECUTE | READ_FILE | READ_DIR
DEVICE = READ_FILE | WRITE_FILE | IOCTL_DEV

PROC = ("/proc/cpuinfo", "/proc/meminfo", "/proc/driver/nvidia")  # the rest of /proc: only its own entry


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _fail(what: str):
    err = ctypes.get_errno()
    raise OSError(err, f"landlock {what}: {os.strerror(err)}")


def abi_version() -> int:
    """The kernel's Landlock ABI (0 when Landlock is missing or disabled)."""
    try:
        version = namespaces.libc().syscall(ctypes.c_long(SYS_CREATE_RULESET), None, ctypes.c_size_t(0),
                                 ctypes.c_uint32(CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(0, int(version))


def carve(root: str, holes: list[str]) -> list[str]:
    """Paths whose subtrees together are `root` without the `holes` inside it."""
    inside = [h for h in holes if h == root or h.startswith(root.rstrip("/") + "/")]
    if not inside:
        return [root]
    if root in inside or not os.path.isdir(root) or os.path.islink(root):
        return []
    parts = []
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    for name in names:
        parts += carve(os.path.join(root, name), inside)
    return parts


def plan(workdir: str, repo: str, search_path: list[str], prefixes: list[str], here: str) -> dict:
    """{"read": [...], "write": [...], "device": [...]}: the paths each kind of rule covers, from the
    allow-list (`allowed.plan`)."""
    return rules(allowed.plan(workdir, repo, search_path, prefixes, here))


def rules(granted: dict, shm: bool = False) -> dict:
    """The rules of an allow-list (`allowed.plan`), its holes carved out; `shm`: /dev/shm is the
    child's own (the namespaces tier's fresh tmpfs), so it may write there too."""
    read = []
    for root in granted["read"]:
        read += carve(os.path.realpath(root), granted["holes"])
    read += [p for p in PROC if os.path.exists(p)]
    try:
        read.append(os.path.realpath("/proc/self"))  # its own /proc entry, no other process's
    except OSError:
        pass
    read += [os.path.realpath(k) for k in granted["keep"]]
    write = granted["write"] + (["/dev/shm"] if shm and os.path.isdir("/dev/shm") else [])
    return {"read": sorted(set(read)), "write": write, "device": granted["device"]}


def _add(ruleset: int, path: str, rights: int, handled: int) -> bool:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= FILE_RIGHTS
        rule = _PathBeneath(rights & handled, fd)
        if namespaces.libc().syscall(ctypes.c_long(SYS_ADD_RULE), ctypes.c_int(ruleset), ctypes.c_int(RULE_PATH_BENEATH),
                          ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
            _fail(f"rule for {path}")
    finally:
        os.close(fd)
    return True




def prepare(paths: dict) -> tuple[int, int]:
    """Build the ruleset now, while every path can still be opened (before a uid change):
    returns (ruleset fd, ABI) for `enforce`."""
    abi = abi_version()
    if abi < 1:
        raise OSError(38, "Landlock is not available in this kernel")
    handled_fs = FS_BY_ABI[min(abi, 5)]
    attr = _RulesetAttr(handled_fs, NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0,
                        SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    ruleset = namespaces.libc().syscall(ctypes.c_long(SYS_CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(size),
                             ctypes.c_uint32(0))
    if ruleset < 0:
        _fail("ruleset")
    try:
        for path in paths["read"]:
            _add(ruleset, path, READ, handled_fs)
        for path in paths["write"]:
            _add(ruleset, path, handled_fs, handled_fs)
        for path in paths["device"]:
            _add(ruleset, path, DEVICE | READ_DIR, handled_fs)
    except OSError:
        os.close(ruleset)
        raise
    return ruleset, abi


def enforce(prepared: tuple[int, int]) -> dict:
    """Restrict the calling thread (and what it starts) to the prepared ruleset."""
    ruleset, abi = prepared
    try:
        if namespaces.libc().syscall(ctypes.c_long(SYS_RESTRICT_SELF), ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            _fail("restrict_self")
    finally:
        os.close(ruleset)
    return {"abi": abi, "tcp": abi >= 4, "scoped": abi >= 6}
