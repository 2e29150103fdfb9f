"""The system calls of mounts, through the C library (no package): the namespaces tier's tools.

Kept apart from namespaces.py so that the new root (new_root.py) and the namespaces can both use
them without importing each other.
"""
from __future__ import annotations

import ctypes
import os

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


def check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare(flags: int) -> None:
    check(libc().unshare(ctypes.c_int(flags)), "unshare")


def mount(source, target, fstype, flags, data=None) -> None:
    enc = lambda s: None if s is None else str(s).encode()  # noqa: E731
    check(libc().mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)),
          f"mount {target}")


def set_mount_attr(path: str, set_flags: int, clear_flags: int = 0, recursive: bool = False) -> None:
    attr = _MountAttr(set_flags, clear_flags, 0, 0)
    result = libc().syscall(ctypes.c_long(SYS_MOUNT_SETATTR), ctypes.c_int(AT_FDCWD), path.encode(),
                            ctypes.c_uint(AT_RECURSIVE if recursive else 0), ctypes.byref(attr),
                            ctypes.c_size_t(ctypes.sizeof(attr)))
    check(result, f"mount_setattr {path}")


