"""The namespaces tier's filesystem: a new root that holds what the allow-list grants, and nothing else.

Called in the worker child, inside its own mount namespace, before any student code exists in the
process. As bubblewrap and nsjail do: an empty tmpfs becomes the new root; each path of
`allowed.plan` is bound into it read-only at its own place (the symbolic links on the way made
again, so /lib -> usr/lib and a venv's bin/python resolve as before), the holes covered by empty
tmpfs, this worker's folder bound back; a minimal /dev (the plan's device files bound one by one, a
private /dev/shm, the /dev/fd links), /proc (the init of the PID namespace mounts its own over it)
and the private working directory, a tmpfs at the worker's path. Then pivot_root, and the old root
is detached: no path leads out of the new one. Everything is made read-only and nosuid but the
working directory and /dev/shm.
"""
from __future__ import annotations

import ctypes
import os
import platform

from . import mounts as ns

MNT_DETACH = 2
STAGE_BYTES = 1024**2  # the root's own tmpfs holds only folders and mount points
SHM_BYTES = 64 * 1024**2
# pivot_root has no wrapper in the C library; its number, from the kernel's system call tables
PIVOT_ROOT = {"x86_64": 155, "amd64": 155, "aarch64": 41, "arm64": 41, "riscv64": 41, "loongarch64": 41,
              "i386": 217, "i686": 217, "s390x": 217, "ppc64le": 203, "ppc64": 203, "armv7l": 218}
DEV_LINKS = {"/dev/fd": "/proc/self/fd", "/dev/stdin": "/proc/self/fd/0", "/dev/stdout": "/proc/self/fd/1",
             "/dev/stderr": "/proc/self/fd/2"}


def _place(stage: str, path: str, links: int = 0) -> str:
    """Make `path` exist under `stage` as it is on this machine, every symbolic link on the way made
    again (a link to a link too: a venv's bin/python -> python3.11 -> /usr/bin/python3.11), its
    folders made; returns the real path the mount goes on (inside the stage)."""
    if links > 40:
        raise OSError(40, f"too many levels of symbolic links: {path}")  # ELOOP, as the kernel says
    real = "/"
    for part in path.strip("/").split("/"):
        host = os.path.join(real, part)
        if os.path.islink(host):
            target = os.readlink(host)
            if not os.path.lexists(stage + host):
                os.symlink(target, stage + host)
            real = _place(stage, os.path.normpath(os.path.join(real, target)), links + 1)
        else:
            real = host
            if not os.path.lexists(stage + real) and os.path.isdir(real):
                os.mkdir(stage + real, 0o755)
    target = stage + real
    if not os.path.isdir(real) and not os.path.lexists(target):
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT, 0o644))  # a file's mount point
    return real


def _bind(stage: str, path: str, made: set, read_only: bool = True) -> None:
    """Bind `path` into the stage at its own place; `made`: the real paths bound already (/lib and
    /usr/lib on a merged-/usr system: one mount, two names)."""
    real = _place(stage, path)
    if real in made:
        return
    ns.mount(real, stage + real, None, ns.MS_BIND | ns.MS_REC)
    made.add(real)
    if read_only:  # at once: nothing made inside it later may reach the machine's own folder
        ns.set_mount_attr(stage + real, ns.MOUNT_ATTR_RDONLY | ns.MOUNT_ATTR_NOSUID, recursive=True)


def _cover(stage: str, hole: str) -> None:
    """An empty tmpfs over a hole (an answer package, the repository) inside something bound."""
    ns.mount("tmpfs", stage + hole, "tmpfs", ns.MS_NOSUID | ns.MS_NODEV, "size=4k,mode=755")


def _dev(stage: str, devices: list[str], made: set) -> None:
    os.makedirs(stage + "/dev", mode=0o755, exist_ok=True)
    for device in devices:
        _bind(stage, device, made, read_only=False)
    for link, target in DEV_LINKS.items():
        if not os.path.lexists(stage + link):
            os.symlink(target, stage + link)
    os.mkdir(stage + "/dev/shm", 0o1777)
    ns.mount("tmpfs", stage + "/dev/shm", "tmpfs", ns.MS_NOSUID | ns.MS_NODEV, f"size={SHM_BYTES},mode=1777")


def pivot_root(new: str) -> None:
    number = PIVOT_ROOT.get(platform.machine().lower())
    if number is None:
        raise OSError(38, f"pivot_root: no system call number known for {platform.machine()}")
    os.chdir(new)
    ns.check(ns.libc().syscall(ctypes.c_long(number), b".", b"."), "pivot_root")
    ns.check(ns.libc().umount2(b".", ctypes.c_int(MNT_DETACH)), "umount old root")  # the old root, stacked under "."
    os.chdir("/")


def build(workdir: str, plan: dict, workdir_bytes: int) -> int:
    """Make the new root (the stage is the working directory's own path, ours already) and enter it;
    returns how many paths it holds. The working directory is a tmpfs of `workdir_bytes`."""
    stage = workdir
    ns.mount("tmpfs", stage, "tmpfs", ns.MS_NOSUID | ns.MS_NODEV, f"size={STAGE_BYTES},mode=755")
    made: set = set()
    steps = [(p, "read") for p in plan["read"]] + [(h, "hole") for h in plan["holes"]]
    steps += [(k, "keep") for k in plan["keep"]]
    for path, kind in sorted(steps, key=lambda step: (len(os.path.realpath(step[0])), step[1])):
        if kind == "hole":
            _cover(stage, path)
        else:
            _bind(stage, path, made)
    _dev(stage, plan["device"], made)
    os.mkdir(stage + "/proc", 0o555)
    ns.mount("/proc", stage + "/proc", None, ns.MS_BIND | ns.MS_REC)  # until the init mounts its own over it
    os.makedirs(stage + workdir, mode=0o755, exist_ok=True)
    ns.mount("tmpfs", stage + workdir, "tmpfs", ns.MS_NOSUID | ns.MS_NODEV, f"size={workdir_bytes},mode=700")
    pivot_root(stage)
    ns.set_mount_attr("/", ns.MOUNT_ATTR_RDONLY | ns.MOUNT_ATTR_NOSUID, recursive=True)
    ns.set_mount_attr(workdir, 0, ns.MOUNT_ATTR_RDONLY)
    ns.set_mount_attr("/dev/shm", 0, ns.MOUNT_ATTR_RDONLY)
    return len(plan["read"]) + len(plan["keep"])
