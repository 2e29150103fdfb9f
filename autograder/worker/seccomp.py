"""A seccomp filter the worker child installs on itself just before student code runs.

It needs no privilege (only no_new_privs, which the child sets first) and holds
in containers and on restricted hosts alike. The kernel then answers EPERM to:

- socket(): no network of any kind (TCP, UDP, raw, netlink, a UNIX socket to a
  host daemon); the worker's own channel was created before and is inherited;
- ways to read or steer another process: ptrace, process_vm_readv/writev,
  pidfd_getfd;
- kernel surfaces a grading never needs and escapes have used: bpf,
  perf_event_open, keyctl and the key calls, io_uring, userfaultfd,
  open_by_handle_at, module and kexec loading;
- namespaces and mounts: unshare, setns, mount and the new mount API, chroot,
  pivot_root, and clone with a CLONE_NEW* flag. clone3 gets ENOSYS, because its
  flags live in memory a filter cannot read: the C library then falls back to
  clone, whose flags it can.

Only x86_64 and aarch64 are known here; elsewhere `install` raises and the
layer is reported missing.
"""
from __future__ import annotations

import ctypes
import errno
import os
import platform

from . import namespaces

PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000

# classic BPF opcodes
LD_W_ABS = 0x20
JEQ_K = 0x15
JSET_K = 0x45
JGE_K = 0x35
RET_K = 0x06

OFFSET_NR, OFFSET_ARCH, OFFSET_ARG0 = 0, 4, 16  # struct seccomp_data (arg0's low word, little-endian)

CLONE_NEW_FLAGS = (0x00020000 | 0x02000000 | 0x04000000 | 0x08000000  # NEWNS, NEWCGROUP, NEWUTS, NEWIPC
                   | 0x10000000 | 0x20000000 | 0x40000000)  # NEWUSER, NEWPID, NEWNET

# name -> (x86_64 number, aarch64 number), from the kernel's system call tables
NUMBERS = {
    "socket": (41, 198), "ptrace": (101, 117), "process_vm_readv": (310, 270),
    "process_vm_writev": (311, 271), "pidfd_getfd": (438, 438), "bpf": (321, 280),
    "perf_event_open": (298, 241), "keyctl": (250, 219), "add_key": (248, 217), "request_key": (249, 218),
    "io_uring_setup": (425, 425), "io_uring_enter": (426, 426), "io_uring_register": (427, 427),
    "userfaultfd": (323, 282), "open_by_handle_at": (304, 265), "name_to_handle_at": (303, 264),
    "init_module": (175, 105), "finit_module": (313, 273), "delete_module": (176, 106),
    "kexec_load": (246, 104), "kexec_file_load": (320, 294), "unshare": (272, 97), "setns": (308, 268),
    "mount": (165, 40), "umount2": (166, 39), "chroot": (161, 51), "pivot_root": (155, 41),
    "open_tree": (428, 428), "move_mount": (429, 429), "fsopen": (430, 430), "fsconfig": (431, 431),
    "fsmount": (432, 432), "fspick": (433, 433), "mount_setattr": (442, 442), "clone": (56, 220),
    "clone3": (435, 435),
}
# architecture -> (AUDIT_ARCH value, {name: number})
ARCHES = {
    "x86_64": (0xC000003E, {name: pair[0] for name, pair in NUMBERS.items()}),
    "aarch64": (0xC00000B7, {name: pair[1] for name, pair in NUMBERS.items()}),
}
ARCHES["amd64"] = ARCHES["x86_64"]
ARCHES["arm64"] = ARCHES["aarch64"]

DENIED = tuple(name for name in NUMBERS if name not in ("clone", "clone3"))


class _Instruction(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte),
                ("k", ctypes.c_uint32)]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Instruction))]


def program(arch: str, denied=DENIED, clone_flags: int = CLONE_NEW_FLAGS) -> list[tuple[int, int, int, int]]:
    """The filter as (code, jt, jf, k) tuples: deny `denied` and clone with `clone_flags`."""
    audit_arch, numbers = ARCHES[arch]
    eperm, enosys = RET_ERRNO | errno.EPERM, RET_ERRNO | errno.ENOSYS
    code = [
        (LD_W_ABS, 0, 0, OFFSET_ARCH),
        (JEQ_K, 1, 0, audit_arch),
        (RET_K, 0, 0, eperm),  # another ABI (e.g. 32-bit calls on a 64-bit kernel): nothing passes
        (LD_W_ABS, 0, 0, OFFSET_NR),
    ]
    if arch in ("x86_64", "amd64"):
        code += [(JGE_K, 0, 1, 0x40000000), (RET_K, 0, 0, eperm)]  # the x32 ABI's numbers
    for name in denied:
        code += [(JEQ_K, 0, 1, numbers[name]), (RET_K, 0, 0, eperm)]
    code += [(JEQ_K, 0, 1, numbers["clone3"]), (RET_K, 0, 0, enosys)]
    if clone_flags:
        code += [(JEQ_K, 0, 3, numbers["clone"]),
                 (LD_W_ABS, 0, 0, OFFSET_ARG0),
                 (JSET_K, 0, 1, clone_flags),
                 (RET_K, 0, 0, eperm)]
    code.append((RET_K, 0, 0, RET_ALLOW))
    return code


def install(denied=DENIED, clone_flags: int = CLONE_NEW_FLAGS) -> str:
    """Install the filter on the calling thread (and its future children). Needs no_new_privs
    or CAP_SYS_ADMIN. Returns the architecture's name; raises OSError when it cannot."""
    arch = platform.machine().lower()
    if arch not in ARCHES:
        raise OSError(errno.ENOSYS, f"no system call table for {arch}")
    code = program(arch, denied, clone_flags)
    instructions = (_Instruction * len(code))(*[_Instruction(*c) for c in code])
    prog = _Program(len(code), instructions)
    if namespaces.libc().prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"seccomp: {os.strerror(err)}")
    return arch
