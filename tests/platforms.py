"""Reproduce, on one Linux machine, the platforms where hidden grading really runs.

    python tests/platforms.py PLATFORM [--uid N] -- COMMAND ARGS...

execs COMMAND as it would run on PLATFORM, built from the kernel's own
mechanisms (a seccomp filter, the capability sets, a uid switch), never a
mock, so the real grader meets the real denials. From Python: `PLATFORMS`,
`can_emulate()`, `run()`, and `filter_program()` to inspect a filter.

The platforms
-------------
``runner``
    GitHub's hosted ubuntu-24.04 runner: an ordinary user (uid 1001, no
    capability). Ubuntu's AppArmor policy
    (kernel.apparmor_restrict_unprivileged_userns=1) lets it create a user
    namespace, and write its uid_map, gid_map and setgroups, but gives it no
    capability inside: every other namespace, mount() and chroot() fail with
    EPERM. Built as: uid switch, plus a filter that lets unshare and clone
    pass when CLONE_NEWUSER is their only namespace flag and answers EPERM
    when any other CLONE_NEW* flag is set, EPERM to mount, umount2,
    pivot_root, setns, chroot and the new mount API (open_tree, move_mount,
    fsopen, fsconfig, fsmount, fspick, mount_setattr). The capability bounding
    set stays full, as on the runner.
``container-root``
    A default Docker container (also what Kubernetes' RuntimeDefault, GitLab's
    docker executor and Gradescope give) running as root without
    CAP_SYS_ADMIN. Built as: bounding, permitted and effective sets cut to
    Docker's default list (CHOWN, DAC_OVERRIDE, FSETID, FOWNER, MKNOD,
    NET_RAW, SETGID, SETUID, SETFCAP, SETPCAP, NET_BIND_SERVICE, SYS_CHROOT,
    KILL, AUDIT_WRITE: CapEff 00000000a80425fb), the inheritable and ambient
    sets empty (Docker stopped filling the inheritable set in 20.10.14,
    CVE-2022-24769), and the answers of Docker's default seccomp profile for
    the calls that matter: unshare, setns, mount, umount2, pivot_root and the
    new mount API EPERM; clone with any CLONE_NEW* flag EPERM (CLONE_NEWUSER
    included); keyctl, add_key, request_key, bpf, perf_event_open,
    userfaultfd, kcmp, pidfd_getfd, process_madvise, the NUMA memory-policy
    calls, syslog, fanotify_init, quotactl, sethostname, open_by_handle_at,
    module and kexec loading, reboot, swapon, clock setting, ... EPERM;
    personality() only with the values Docker lets pass; AF_VSOCK sockets
    EPERM.
``container-user``
    The same container, as an ordinary user (uid 1000): the same filter and
    bounding set, and no capability left after the uid switch.
``no-sandbox``
    ``container-root`` on a kernel without Landlock (before 5.13, or built
    without it): landlock_create_ruleset, landlock_add_rule and
    landlock_restrict_self answer ENOSYS. Neither sandbox tier can hold there,
    which is what hidden grading must refuse.

On every platform clone3 answers ENOSYS, as Docker's profile does: its flags
live in memory a filter cannot read, and the C library then falls back to
clone, whose flags it can (on a real runner clone3 works; only a direct
clone3 call can tell the difference). No platform sets no_new_privs (none of the real ones
does): the filter goes in while the harness is still root with CAP_SYS_ADMIN,
which the kernel accepts instead, and before privileges are dropped.

The filter is classic BPF written here through ctypes, independent of the
grader's own filter (autograder/worker/seccomp.py) so that a mistake there
cannot hide in both. It checks seccomp_data.arch: x86_64 (AUDIT_ARCH
0xC000003E) and aarch64 (0xC00000B7) each have their own call numbers; any other
ABI a process might reach (32-bit calls on a 64-bit kernel, x32) gets ENOSYS
for every call, as on a kernel built without it. On any other architecture
`can_emulate()` says it cannot emulate.

The filesystem view
-------------------
The Python here lives under /root, which is mode 0700: an ordinary user could
not even start it, where on a runner or in a container image Python is
world-readable. So, while still fully root, the harness enters a private mount
namespace (nothing it mounts is seen outside, and all of it goes when the
command ends) and, for each path the emulated process needs (the real paths of
sys.base_prefix, sys.prefix, the interpreter, the repository and the command),
covers the first enclosing folder that other users cannot traverse with an
empty tmpfs of mode 0755 and bind-mounts the needed child back into it. That
view matches those platforms (Python world-readable) and changes nothing else
but the homes (below).

HOME is a fresh, empty folder owned by the platform's user, on a tmpfs that
vanishes with the namespace: /home/runner on the runner, /home/user for the
container's user (the real /home is hidden behind that tmpfs, as on a fresh
machine), /root for root (a fresh tmpfs over /root, with only the bound-back
paths above in it). USER and LOGNAME name that user, since this machine's
passwd need not know it. `run()` also gives the command a fresh TMPDIR under
/tmp of mode 1777, writable by every uid the grader may use, like /tmp itself,
and removed afterwards.

Not reproduced
--------------
Inside a user namespace, the emulated runner still holds that namespace's
capabilities for the calls the filter does not cover (e.g. landlock or
seccomp without no_new_privs), where AppArmor denies them all on Ubuntu.
Docker's profile is an allow-list; only the calls above are answered as it
answers them, and calls newer than a given Docker release (which it refuses)
are let through. The GitHub runner's supplementary groups (docker, adm) and
its sudo are left out: the runner's user here has only its own group.

Exit status of the command line: the command's own once it runs; 2 for bad
arguments; 125 when the platform cannot be built here; 126 when the command
cannot be executed; 127 when it is not found.
"""
from __future__ import annotations

import ctypes
import errno
import functools
import os
import platform as _host
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
USAGE = "usage: python tests/platforms.py PLATFORM [--uid N] -- COMMAND ARGS..."

PLATFORMS = {
    "runner": "GitHub's hosted ubuntu-24.04 runner: an ordinary user; user namespaces, but no capability inside",
    "container-root": "a default Docker/Kubernetes/GitLab docker executor/Gradescope container, as root "
                      "without CAP_SYS_ADMIN",
    "container-user": "the same default container, as an ordinary user",
    "no-sandbox": "the default container as root, on a kernel without Landlock: no sandbox tier can hold",
}
DEFAULT_UIDS = {"runner": 1001, "container-user": 1000}  # the rest run as root
USER_NAMES = {"runner": "runner", "container-user": "user"}
HOMES = {"runner": "/home/runner", "container-user": "/home/user"}  # root's is /root
MAX_UID = 2**32 - 2  # (uid_t)-1 means "unchanged" to setresuid

# Docker's default capabilities (moby's oci/caps/defaults.go), by number
DOCKER_CAPS = {0: "CHOWN", 1: "DAC_OVERRIDE", 3: "FOWNER", 4: "FSETID", 5: "KILL", 6: "SETGID", 7: "SETUID",
               8: "SETPCAP", 10: "NET_BIND_SERVICE", 13: "NET_RAW", 18: "SYS_CHROOT", 27: "MKNOD",
               29: "AUDIT_WRITE", 31: "SETFCAP"}
DOCKER_CAP_MASK = sum(1 << cap for cap in DOCKER_CAPS)
assert DOCKER_CAP_MASK == 0xA80425FB  # the CapEff every default container shows
# what building a platform takes from the harness before it gives everything up
SETUP_CAPS = {0: "CHOWN", 6: "SETGID", 7: "SETUID", 8: "SETPCAP", 21: "SYS_ADMIN"}

CLONE_NEWTIME = 0x00000080  # unshare only: in clone's first argument these bits are the exit signal
CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
CLONE_NAMESPACES = (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER
                    | CLONE_NEWPID | CLONE_NEWNET)
assert CLONE_NAMESPACES == 0x7E020000  # the mask of Docker's clone rule

# name -> (x86_64, aarch64), from the kernel's tables (arch/x86/entry/syscalls/syscall_64.tbl,
# include/uapi/asm-generic/unistd.h); None where the architecture has no such call
SYSCALLS = {
    "socket": (41, 198), "clone": (56, 220), "clone3": (435, 435), "unshare": (272, 97),
    "setns": (308, 268), "mount": (165, 40), "umount2": (166, 39), "pivot_root": (155, 41),
    "chroot": (161, 51), "open_tree": (428, 428), "move_mount": (429, 429), "fsopen": (430, 430),
    "fsconfig": (431, 431), "fsmount": (432, 432), "fspick": (433, 433), "mount_setattr": (442, 442),
    "personality": (135, 92), "keyctl": (250, 219), "add_key": (248, 217), "request_key": (249, 218),
    "bpf": (321, 280), "perf_event_open": (298, 241), "userfaultfd": (323, 282), "kcmp": (312, 272),
    "pidfd_getfd": (438, 438), "process_madvise": (440, 440), "get_mempolicy": (239, 236),
    "set_mempolicy": (238, 237), "mbind": (237, 235), "set_mempolicy_home_node": (450, 450),
    "move_pages": (279, 239), "migrate_pages": (256, 238), "syslog": (103, 116),
    "fanotify_init": (300, 262), "lookup_dcookie": (212, 18), "quotactl": (179, 60),
    "quotactl_fd": (443, 443), "sethostname": (170, 161), "setdomainname": (171, 162),
    "open_by_handle_at": (304, 265), "kexec_load": (246, 104), "kexec_file_load": (320, 294),
    "init_module": (175, 105), "finit_module": (313, 273), "delete_module": (176, 106), "acct": (163, 89),
    "reboot": (169, 142), "swapon": (167, 224), "swapoff": (168, 225), "settimeofday": (164, 170),
    "clock_settime": (227, 112), "vhangup": (153, 58), "nfsservctl": (180, 42), "iopl": (172, None),
    "ioperm": (173, None), "uselib": (134, None), "ustat": (136, None), "sysfs": (139, None),
    "_sysctl": (156, None), "landlock_create_ruleset": (444, 444), "landlock_add_rule": (445, 445),
    "landlock_restrict_self": (446, 446),
}
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
ARCH_ALIASES = {"amd64": "x86_64", "arm64": "aarch64"}

MOUNT_CALLS = ("mount", "umount2", "pivot_root", "setns", "open_tree", "move_mount", "fsopen", "fsconfig",
               "fsmount", "fspick", "mount_setattr")
# outside its namespace the runner's user lacks the capability; inside, AppArmor takes them all
RUNNER_DENIED = MOUNT_CALLS + ("chroot",)
# Docker's profile: allowed only with CAP_SYS_ADMIN (or another capability a default container
# lacks), or absent from its allow-list; the rest of these fail without the capability anyway
DOCKER_DENIED = MOUNT_CALLS + (
    "unshare", "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd", "kcmp",
    "pidfd_getfd", "process_madvise", "get_mempolicy", "set_mempolicy", "mbind", "set_mempolicy_home_node",
    "move_pages", "migrate_pages", "syslog", "fanotify_init", "lookup_dcookie", "quotactl", "quotactl_fd",
    "sethostname", "setdomainname", "open_by_handle_at", "kexec_load", "kexec_file_load", "init_module",
    "finit_module", "delete_module", "acct", "reboot", "swapon", "swapoff", "settimeofday", "clock_settime",
    "vhangup", "nfsservctl", "iopl", "ioperm", "uselib", "ustat", "sysfs", "_sysctl")
LANDLOCK_CALLS = ("landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self")
DOCKER_PERSONALITIES = (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF)  # PER_LINUX, with UNAME26/32BIT; the query
AF_VSOCK = 40

# classic BPF and seccomp
BPF_LD_W_ABS, BPF_JEQ_K, BPF_JGE_K, BPF_JSET_K, BPF_RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
DATA_NR, DATA_ARCH, DATA_ARG0_LO, DATA_ARG0_HI = 0, 4, 16, 20  # struct seccomp_data, little-endian
X32_SYSCALL_BIT = 0x40000000
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
LINUX_CAPABILITY_VERSION_3 = 0x20080522

MS_NOSUID, MS_NODEV, MS_BIND, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x1000, 0x4000, 0x40000


class SetupError(Exception):
    """The platform could not be built on this machine."""


class UsageError(ValueError):
    """Bad arguments; the message is one line."""


def host_arch() -> str | None:
    """The architecture's name in SYSCALLS' terms, or None when its call numbers are unknown here."""
    machine = _host.machine().lower()
    machine = ARCH_ALIASES.get(machine, machine)
    return machine if machine in AUDIT_ARCH else None


# ---------------------------------------------------------------------------------------------
# the seccomp filter

def filter_program(platform: str, arch: str | None = None) -> list[tuple[int, int, int, int]]:
    """The platform's seccomp filter as (code, jt, jf, k) instructions of classic BPF."""
    if platform not in PLATFORMS:
        raise ValueError(f"unknown platform {platform!r}")
    arch = arch or host_arch()
    if arch not in AUDIT_ARCH:
        raise ValueError(f"no system call numbers for architecture {arch!r}")
    column = 0 if arch == "x86_64" else 1

    def nr(name: str) -> int | None:
        return SYSCALLS[name][column]

    docker = platform != "runner"
    eperm = DOCKER_DENIED if docker else RUNNER_DENIED
    enosys = ("clone3",) + (LANDLOCK_CALLS if platform == "no-sandbox" else ())

    # jump targets are labels, resolved below: hand-counted offsets are where filters go wrong
    code: list[list] = []
    labels: dict[str, int] = {}

    def emit(op: int, k: int = 0, jt: str | int = 0, jf: str | int = 0) -> None:
        code.append([op, jt, jf, k])

    def label(name: str) -> None:
        labels[name] = len(code)

    emit(BPF_LD_W_ABS, DATA_ARCH)
    emit(BPF_JEQ_K, AUDIT_ARCH[arch], jf="foreign")
    emit(BPF_LD_W_ABS, DATA_NR)
    if arch == "x86_64":
        emit(BPF_JGE_K, X32_SYSCALL_BIT, jt="foreign")  # x32 shares the arch value; its numbers carry this bit
    for name in eperm:
        if nr(name) is not None:
            emit(BPF_JEQ_K, nr(name), jt="eperm")
    for name in enosys:
        emit(BPF_JEQ_K, nr(name), jt="enosys")
    if not docker:
        emit(BPF_JEQ_K, nr("unshare"), jt="unshare")
    emit(BPF_JEQ_K, nr("clone"), jt="clone")
    if docker:
        emit(BPF_JEQ_K, nr("personality"), jt="personality")
        emit(BPF_JEQ_K, nr("socket"), jt="socket")
    emit(BPF_RET_K, SECCOMP_RET_ALLOW)

    if not docker:
        label("unshare")  # its flags are its only argument; CLONE_NEWTIME counts here
        emit(BPF_LD_W_ABS, DATA_ARG0_LO)
        emit(BPF_JSET_K, (CLONE_NAMESPACES | CLONE_NEWTIME) & ~CLONE_NEWUSER, jt="eperm", jf="allow")
    label("clone")  # flags are the first argument on both architectures; the kernel reads only the low word
    emit(BPF_LD_W_ABS, DATA_ARG0_LO)
    emit(BPF_JSET_K, CLONE_NAMESPACES & ~CLONE_NEWUSER if not docker else CLONE_NAMESPACES,
         jt="eperm", jf="allow")
    if docker:
        label("personality")  # Docker compares all 64 bits
        emit(BPF_LD_W_ABS, DATA_ARG0_HI)
        emit(BPF_JEQ_K, 0, jf="eperm")
        emit(BPF_LD_W_ABS, DATA_ARG0_LO)
        for value in DOCKER_PERSONALITIES:
            emit(BPF_JEQ_K, value, jt="allow")
        emit(BPF_RET_K, SECCOMP_RET_ERRNO | errno.EPERM)
        label("socket")
        emit(BPF_LD_W_ABS, DATA_ARG0_LO)
        emit(BPF_JEQ_K, AF_VSOCK, jt="eperm", jf="allow")
    label("allow")
    emit(BPF_RET_K, SECCOMP_RET_ALLOW)
    label("eperm")
    emit(BPF_RET_K, SECCOMP_RET_ERRNO | errno.EPERM)
    label("enosys")
    emit(BPF_RET_K, SECCOMP_RET_ERRNO | errno.ENOSYS)
    label("foreign")
    emit(BPF_RET_K, SECCOMP_RET_ERRNO | errno.ENOSYS)

    program = []
    for index, (op, jt, jf, k) in enumerate(code):
        jumps = []
        for target in (jt, jf):
            offset = labels[target] - index - 1 if isinstance(target, str) else target
            if not 0 <= offset <= 255:  # classic BPF jumps forward, by one byte
                raise AssertionError(f"jump out of range at instruction {index}")
            jumps.append(offset)
        program.append((op, jumps[0], jumps[1], k))
    if len(program) > 4096:
        raise AssertionError("filter longer than the kernel accepts")
    return program


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


@functools.lru_cache(maxsize=None)
def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
    libc.unshare.argtypes = [ctypes.c_int]
    return libc


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise SetupError(f"{what}: {os.strerror(code)}")


def _prctl(option: int, *args: int) -> int:
    # prctl is variadic and reads unsigned longs: pass full-width values
    values = [ctypes.c_ulong(a) for a in (list(args) + [0, 0, 0, 0])[:4]]
    return _libc().prctl(ctypes.c_int(option), *values)


def _install_filter(platform: str) -> None:
    code = filter_program(platform)
    instructions = (_SockFilter * len(code))(*(_SockFilter(*instruction) for instruction in code))
    program = _SockFprog(len(code), instructions)
    libc = _libc()
    result = libc.prctl(ctypes.c_int(PR_SET_SECCOMP), ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(program),
                        ctypes.c_ulong(0), ctypes.c_ulong(0))
    _check(result, "installing the seccomp filter")


# ---------------------------------------------------------------------------------------------
# capabilities and users

def _drop_bounding_set(keep: dict[int, str]) -> None:
    last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    for cap in range(last + 1):
        if cap not in keep:
            _check(_prctl(PR_CAPBSET_DROP, cap), f"dropping capability {cap} from the bounding set")


def _set_capabilities(mask: int) -> None:
    header = _CapHeader(LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    for word in range(2):
        part = (mask >> (32 * word)) & 0xFFFFFFFF
        data[word].effective, data[word].permitted, data[word].inheritable = part, part, 0
    _check(_libc().capset(ctypes.byref(header), data), "setting the capability sets")
    if _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL) != 0 and ctypes.get_errno() != errno.EINVAL:
        _check(-1, "clearing the ambient capabilities")  # EINVAL: a kernel before ambient sets has none


def _become_user(uid: int) -> None:
    # without SECBIT_KEEP_CAPS, leaving uid 0 empties the permitted, effective and ambient sets
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


# ---------------------------------------------------------------------------------------------
# the filesystem view

def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def raw(text):
        return None if text is None else os.fsencode(text)
    _check(_libc().mount(raw(source), raw(target), raw(fstype), flags, raw(data)), f"mounting on {target}")


def _inside(path: str, folder: str) -> bool:
    return path != folder and (path + "/").startswith(folder.rstrip("/") + "/")


def _child_towards(folder: str, path: str) -> str:
    """The entry of `folder` on the way to `path` (inside it)."""
    return os.path.join(folder, os.path.relpath(path, folder).split(os.sep)[0])


def _cover(folder: str, paths: list[str], mode: int) -> None:
    """An empty tmpfs over `folder`, with its entries leading to `paths` bound back in."""
    children = sorted({_child_towards(folder, p) for p in paths if _inside(p, folder)})
    # opened before the tmpfs hides them; bound back through /proc/self/fd
    handles = [(child, os.open(child, os.O_PATH | os.O_CLOEXEC)) for child in children]
    try:
        _mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, f"mode={mode:o}")
        for child, fd in handles:
            if stat.S_ISDIR(os.fstat(fd).st_mode):
                os.mkdir(child)
            else:
                os.close(os.open(child, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
            _mount(f"/proc/self/fd/{fd}", child, None, MS_BIND | MS_REC)
    finally:
        for _, fd in handles:
            os.close(fd)


def _traversable(folder: str) -> bool:
    return bool(os.stat(folder).st_mode & stat.S_IXOTH)


def _open_up(paths: list[str]) -> None:
    """Make every folder above `paths` traversable by any user, in this mount namespace."""
    for _ in range(64):
        blocked: dict[str, list[str]] = {}
        for path in paths:
            parts = Path(path).parts
            for depth in range(1, len(parts)):
                folder = str(Path(*parts[:depth]))
                if not _traversable(folder):
                    if folder == "/":
                        raise SetupError("/ itself is closed to other users here")
                    blocked.setdefault(folder, []).append(path)
                    break
        if not blocked:
            return
        # each path stops at its first blocked folder, so no two of these are nested
        for folder, inside in blocked.items():
            _cover(folder, inside, 0o755)
    raise SetupError("could not open the way to " + ", ".join(paths))


def _needed_paths(argv: list[str]) -> list[str]:
    candidates = [sys.base_prefix, sys.prefix, sys.executable, str(ROOT)]
    command = shutil.which(argv[0]) if argv else None
    if command:
        candidates.append(command)
    return sorted({os.path.realpath(p) for p in candidates if os.path.exists(p)})


def _fresh_home(platform: str, uid: int, needed: list[str]) -> str:
    if uid == 0:
        home = "/root"
        if not os.path.isdir(home):
            raise SetupError("/root does not exist here, so root's home cannot be made")
        # 0755 only when this machine keeps something needed under /root (its Python, here)
        _cover(home, needed, 0o755 if any(_inside(p, home) for p in needed) else 0o700)
        return home
    home = HOMES[platform]
    parent = os.path.dirname(home)
    if not os.path.isdir(parent):
        raise SetupError(f"{parent} does not exist here, so {home} cannot be made")
    _cover(parent, needed, 0o755)  # this machine's other homes do not exist on a fresh runner
    if os.path.lexists(home):  # bound back above: a needed path lives in it
        inside = [p for p in needed if p == home or _inside(p, home)]
        raise SetupError(f"{home} would be the fresh home, but {', '.join(inside)} lives there")
    os.mkdir(home, 0o755)
    os.chown(home, uid, uid)
    return home


# ---------------------------------------------------------------------------------------------
# the platforms

def _status_field(name: str) -> str | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key == name:
                return value.strip()
    except OSError:
        pass
    return None


def _read_int(path: str) -> int | None:
    try:
        return int(Path(path).read_text().strip())
    except (OSError, ValueError):
        return None


# Run in a fresh interpreter: the calling process may hold threads, and unshare(CLONE_NEWNS)
# would change it for good.
_PROBE = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
def step(result, what):
    if result != 0:
        print(what + ": " + os.strerror(ctypes.get_errno()))
        sys.exit(1)
step(libc.unshare(0x00020000), "unshare(CLONE_NEWNS)")
step(libc.mount(b"none", b"/", None, 0x4000 | 0x40000, None), "making / private in a mount namespace")
os.setgroups([]); os.setresgid(65534, 65534, 65534); os.setresuid(65534, 65534, 65534)
step(libc.unshare(0x10000000), "unshare(CLONE_NEWUSER) as an ordinary user")
"""


@functools.lru_cache(maxsize=None)
def can_emulate() -> str | None:
    """None when the platforms can be built on this machine, else the reason why not (one line)."""
    if not sys.platform.startswith("linux"):
        return f"not Linux ({sys.platform}): the platforms are built from Linux's seccomp, capabilities and " \
               "mount namespaces"
    if host_arch() is None:
        return f"unknown architecture {_host.machine()}: only x86_64 and aarch64 system call numbers are known"
    if struct.calcsize("P") != 8 or sys.byteorder != "little":
        return "this Python is not a 64-bit little-endian build, so its calls would not be the ones filtered"
    if os.geteuid() != 0:
        return "not root: building a platform takes root (a mount namespace, a seccomp filter without " \
               "no_new_privs, a uid switch), which the harness then gives up"
    effective = int(_status_field("CapEff") or "0", 16)
    missing = [name for cap, name in SETUP_CAPS.items() if not effective >> cap & 1]
    if missing:
        return f"root without CAP_{', CAP_'.join(missing)} (a container?): the platforms cannot be built from here"
    if _read_int("/proc/sys/user/max_user_namespaces") == 0 \
            or _read_int("/proc/sys/kernel/unprivileged_userns_clone") == 0:
        return "user namespaces are disabled for ordinary users here, so the runner's cannot be granted"
    try:
        probe = subprocess.run([sys.executable, "-I", "-S", "-c", _PROBE], capture_output=True, text=True,
                               timeout=60)
    except (OSError, subprocess.SubprocessError) as error:
        return f"could not probe this machine: {error}"
    if probe.returncode != 0:
        reason = (probe.stdout.strip() or probe.stderr.strip() or f"exit {probe.returncode}").splitlines()[-1]
        return f"this machine refuses what the harness needs: {reason}"
    return None


def become(platform: str, argv: list[str], uid: int | None = None) -> None:
    """Turn this process into `platform`, then exec argv. Never returns; raises SetupError."""
    uid = DEFAULT_UIDS.get(platform, 0) if uid is None else uid
    cwd = os.getcwd()
    needed = _needed_paths(argv)
    _check(_libc().unshare(CLONE_NEWNS), "entering a private mount namespace")
    _mount("none", "/", None, MS_REC | MS_PRIVATE)  # nothing mounted below may leak to the machine
    home = _fresh_home(platform, uid, needed)
    _open_up(needed)
    if platform != "runner":
        _drop_bounding_set(DOCKER_CAPS)
    _install_filter(platform)  # while CAP_SYS_ADMIN still stands in for no_new_privs
    if uid == 0:
        _set_capabilities(DOCKER_CAP_MASK)
    else:
        _become_user(uid)
    try:
        os.chdir(cwd)  # found again in the new view, with the platform's own rights
    except OSError as error:
        raise SetupError(f"the working folder {cwd} is out of reach there: {error.strerror}") from None
    name = USER_NAMES.get(platform, "root")
    env = dict(os.environ, HOME=home, USER=name, LOGNAME=name)
    try:
        os.execvpe(argv[0], argv, env)
    except FileNotFoundError:
        print(f"platforms: {argv[0]}: command not found", file=sys.stderr)
        os._exit(127)
    except OSError as error:
        print(f"platforms: {argv[0]}: cannot execute: {error.strerror}", file=sys.stderr)
        os._exit(126)


def parse_uid(text: str, platform: str) -> int:
    if platform not in DEFAULT_UIDS:
        raise UsageError(f"--uid applies to {' and '.join(DEFAULT_UIDS)}; {platform} runs as root")
    if not text.isdigit() or not 1 <= int(text) <= MAX_UID:
        raise UsageError(f"--uid needs a whole number from 1 to {MAX_UID}, not {text!r} "
                         "(for root, use container-root)")
    return int(text)


def parse_args(args: list[str]) -> tuple[str, int | None, list[str]]:
    """(platform, uid or None, command) from the command line; raises UsageError."""
    if "--" not in args:
        if not args:
            raise UsageError(f"missing the platform and the command ({USAGE})")
        raise UsageError(f"missing '--' before the command ({USAGE})")
    split = args.index("--")
    head, command = args[:split], args[split + 1:]
    if not head:
        raise UsageError(f"missing the platform before '--' (one of: {', '.join(PLATFORMS)})")
    platform, options = head[0], head[1:]
    if platform not in PLATFORMS:
        raise UsageError(f"unknown platform {platform!r} (one of: {', '.join(PLATFORMS)})")
    uid = None
    while options:
        option = options.pop(0)
        if option == "--uid":
            if not options:
                raise UsageError(f"--uid needs a whole number from 1 to {MAX_UID}")
            value = options.pop(0)
        elif option.startswith("--uid="):
            value = option[len("--uid="):]
        else:
            raise UsageError(f"unexpected argument {option!r} before '--' ({USAGE})")
        if uid is not None:
            raise UsageError("--uid given twice")
        uid = parse_uid(value, platform)
    if not command:
        raise UsageError("missing the command after '--'")
    return platform, uid, command


def run(platform: str, argv: list[str], *, env: dict | None = None, cwd: str | None = None,
        timeout: float = 600, uid: int | None = None) -> subprocess.CompletedProcess:
    """Run argv under `platform` and wait; returns the completed process with text output.

    The command starts from a small environment (PATH, LANG, PYTHONDONTWRITEBYTECODE, a fresh
    TMPDIR), not the caller's, then `env` on top. Raises ValueError for a bad platform or uid,
    RuntimeError when `can_emulate()` says no, subprocess.TimeoutExpired after killing it."""
    if platform not in PLATFORMS:
        raise ValueError(f"unknown platform {platform!r} (one of: {', '.join(PLATFORMS)})")
    if uid is not None:
        parse_uid(str(uid), platform)
    reason = can_emulate()
    if reason:
        raise RuntimeError(f"cannot emulate {platform} here: {reason}")
    # /tmp, not the caller's TMPDIR, which may be a folder only root can enter
    tmp = tempfile.mkdtemp(prefix=f"platform-{platform}-", dir="/tmp")
    os.chmod(tmp, 0o1777)  # like /tmp: the grader may hand parts of its work to other uids
    environment = {"PATH": os.environ.get("PATH", os.defpath), "LANG": "C.UTF-8",
                   "PYTHONDONTWRITEBYTECODE": "1", "TMPDIR": tmp, **(env or {})}
    command = [sys.executable, str(Path(__file__).resolve()), platform,
               *(["--uid", str(uid)] if uid is not None else []), "--", *argv]
    try:
        with subprocess.Popen(command, env=environment, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, start_new_session=True) as process:
            try:
                stdout, stderr = process.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(process.pid, signal.SIGKILL)  # its helpers too, not only the first process
                except ProcessLookupError:
                    pass
                process.communicate()
                raise
        return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(args: list[str]) -> int:
    if args[:1] in (["-h"], ["--help"]):
        print(USAGE)
        for name, description in PLATFORMS.items():
            print(f"  {name:15} {description}")
        return 0
    try:
        platform, uid, command = parse_args(args)
    except UsageError as error:
        print(f"platforms: {error}", file=sys.stderr)
        return 2
    reason = can_emulate()
    if reason:
        print(f"platforms: cannot emulate {platform} here: {reason}", file=sys.stderr)
        return 125
    try:
        become(platform, command, uid)
    except (SetupError, OSError) as error:
        print(f"platforms: cannot build {platform} here: {error}", file=sys.stderr)
        return 125
    return 125  # not reached: become() execs or raises


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
