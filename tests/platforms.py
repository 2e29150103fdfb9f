"""The platforms where hidden grading really runs, reproduced on one Linux machine.

    python tests/platforms.py PLATFORM [--uid N] -- COMMAND ARGS...

runs COMMAND as it would run there, by the kernel's own mechanisms (no mock):

- ``runner``: GitHub's hosted ubuntu-24.04 runner. An ordinary user; Ubuntu's
  AppArmor policy (kernel.apparmor_restrict_unprivileged_userns=1) lets it
  create a user namespace but gives it no capability inside, so every other
  namespace and mount() fail with EPERM. Reproduced by a seccomp filter that
  lets unshare/clone pass with CLONE_NEWUSER alone and answers EPERM to any
  other namespace flag and to the mount calls.
- ``container-root``: a default Docker container (GitLab's docker executor,
  Gradescope, a Kubernetes pod) as root: the capability bounding set cut to
  Docker's default list (no CAP_SYS_ADMIN), and Docker's seccomp answers for
  what matters here: no namespace of any kind, no mount, no keyctl, bpf,
  perf_event_open; clone3 gets ENOSYS.
- ``container-user``: the same container as an ordinary user.
- ``no-sandbox``: the container as root on a kernel without Landlock (its
  three calls answer ENOSYS): no sandbox tier can hold there.

The Python here lives under /root, which only root may enter; on a runner or
in a container image Python is world-readable. So the harness first enters a
private mount namespace (while it is still fully root) and makes the folders
above the interpreter, the virtual environment and the repository enterable
(an empty tmpfs of mode 0755 over the first one that is not, with the needed
path bound back), the way those platforms' images have them. Then it installs
the filter (as root, without no_new_privs, as those platforms do), cuts the
capabilities, switches user where the platform has one, and execs COMMAND.
"""
from __future__ import annotations

import ctypes
import errno
import os
import platform as host
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "autograder" / "worker"))
import namespaces  # noqa: E402  (the worker's own mount helpers: the same calls, no second copy)
import seccomp  # noqa: E402

PLATFORMS = {
    "runner": "GitHub-hosted ubuntu-24.04 runner: an ordinary user, user namespaces without capabilities",
    "container-root": "a default Docker/Kubernetes/GitLab/Gradescope container, as root without CAP_SYS_ADMIN",
    "container-user": "the same container as an ordinary user",
    "no-sandbox": "a default container as root on a kernel without Landlock",
}
USERS = {"runner": 1001, "container-user": 1000}

# Docker's default capabilities (moby's defaults), by number
DOCKER_CAPS = {0: "CHOWN", 1: "DAC_OVERRIDE", 3: "FOWNER", 4: "FSETID", 5: "KILL", 6: "SETGID", 7: "SETUID",
               8: "SETPCAP", 10: "NET_BIND_SERVICE", 13: "NET_RAW", 18: "SYS_CHROOT", 27: "MKNOD",
               29: "AUDIT_WRITE", 31: "SETFCAP"}
PR_CAPBSET_DROP = 24
CLONE_NEWUSER = 0x10000000
MOUNT_CALLS = ("mount", "umount2", "pivot_root", "open_tree", "move_mount", "fsopen", "fsconfig",
               "fsmount", "fspick", "mount_setattr", "setns")
DOCKER_DENIED = MOUNT_CALLS + ("keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
                               "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
                               "open_by_handle_at", "name_to_handle_at")
LANDLOCK_CALLS = (444, 445, 446)


def can_emulate() -> str | None:
    """None where the platforms can be reproduced here, else why not."""
    if not sys.platform.startswith("linux"):
        return "not Linux"
    if os.geteuid() != 0:
        return "not root (the harness needs root to build each platform, then gives it up)"
    if host.machine().lower() not in seccomp.ARCHES:
        return f"no system call table for {host.machine()}"
    return None


def filter_program(name: str) -> list[tuple[int, int, int, int]]:
    """The platform's seccomp filter, in classic BPF (see the module docstring)."""
    audit_arch, numbers = seccomp.ARCHES[host.machine().lower()]
    eperm, enosys = seccomp.RET_ERRNO | errno.EPERM, seccomp.RET_ERRNO | errno.ENOSYS
    allow = seccomp.RET_ALLOW
    code = [(seccomp.LD_W_ABS, 0, 0, seccomp.OFFSET_ARCH), (seccomp.JEQ_K, 1, 0, audit_arch),
            (seccomp.RET_K, 0, 0, allow), (seccomp.LD_W_ABS, 0, 0, seccomp.OFFSET_NR)]
    denied = MOUNT_CALLS if name == "runner" else DOCKER_DENIED
    for call in denied:
        code += [(seccomp.JEQ_K, 0, 1, numbers[call]), (seccomp.RET_K, 0, 0, eperm)]
    if name == "no-sandbox":
        for number in LANDLOCK_CALLS:
            code += [(seccomp.JEQ_K, 0, 1, number), (seccomp.RET_K, 0, 0, enosys)]
    code += [(seccomp.JEQ_K, 0, 1, numbers["clone3"]), (seccomp.RET_K, 0, 0, enosys)]
    refused_flags = seccomp.CLONE_NEW_FLAGS & ~CLONE_NEWUSER if name == "runner" else seccomp.CLONE_NEW_FLAGS
    for call in ("unshare", "clone"):  # their flags are the first argument
        code += [(seccomp.JEQ_K, 0, 4, numbers[call]),
                 (seccomp.LD_W_ABS, 0, 0, seccomp.OFFSET_ARG0),
                 (seccomp.JSET_K, 0, 1, refused_flags),
                 (seccomp.RET_K, 0, 0, eperm),
                 (seccomp.RET_K, 0, 0, allow)]
    code.append((seccomp.RET_K, 0, 0, allow))
    return code


def install_filter(name: str) -> None:
    code = filter_program(name)
    instructions = (seccomp._Instruction * len(code))(*[seccomp._Instruction(*c) for c in code])
    program = seccomp._Program(len(code), instructions)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(seccomp.PR_SET_SECCOMP, seccomp.SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp filter")


def enterable(path: str) -> bool:
    return bool(os.stat(path).st_mode & stat.S_IXOTH)


def open_up(paths: list[str]) -> None:
    """In a private mount namespace: make every folder above `paths` enterable by any user."""
    namespaces.unshare(namespaces.CLONE_NEWNS)
    namespaces.mount(None, "/", None, namespaces.MS_REC | namespaces.MS_PRIVATE)
    for path in paths:
        path = os.path.realpath(path)
        parts = Path(path).parts
        for depth in range(1, len(parts)):
            folder = str(Path(*parts[:depth]))
            if not enterable(folder):
                namespaces._cover(folder, [str(Path(*parts[:depth + 1]))])
                os.chmod(folder, 0o755)


def drop_bounding_set() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    for cap in range(last + 1):
        if cap not in DOCKER_CAPS and libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), f"dropping capability {cap}")


def become(name: str, argv: list[str], uid: int | None) -> None:
    """Turn this process into the platform, then exec argv (never returns)."""
    open_up([sys.base_prefix, sys.prefix, sys.executable, str(ROOT)])
    uid = USERS.get(name) if uid is None else uid
    home = os.environ.get("HOME", "")
    if not home.startswith(tempfile.gettempdir()) or not os.path.isdir(home):
        raise SystemExit("platforms: HOME must be a fresh folder under the temporary folder (run() makes one)")
    if uid:
        os.chown(home, uid, uid)
    if name != "runner":
        drop_bounding_set()
    install_filter(name)  # as root, so no no_new_privs is needed (none of these platforms sets it)
    if uid:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)  # every capability goes with root
    os.execvp(argv[0], argv)


def run(platform: str, argv: list[str], *, env: dict | None = None, cwd: str | None = None,
        timeout: float = 600, uid: int | None = None) -> subprocess.CompletedProcess:
    """Run argv under `platform`; returns the completed process (text output)."""
    if platform not in PLATFORMS:
        raise ValueError(f"unknown platform {platform!r}; platforms are: {', '.join(PLATFORMS)}")
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
                   "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
    command = [sys.executable, str(Path(__file__).resolve()), platform]
    if uid is not None:
        command += ["--uid", str(uid)]
    with tempfile.TemporaryDirectory(prefix=f"home-{platform}-") as home:  # the platform's user's own
        return subprocess.run(command + ["--", *argv], env={**environment, "HOME": home, "TMPDIR": home}, cwd=cwd,
                              capture_output=True, text=True, timeout=timeout)


def main(args: list[str]) -> int:
    usage = "usage: python tests/platforms.py PLATFORM [--uid N] -- COMMAND ARGS..."
    if "--" not in args or not args or args[0] not in PLATFORMS or args.index("--") == len(args) - 1:
        print(f"{usage}\nplatforms: {', '.join(PLATFORMS)}", file=sys.stderr)
        return 2
    split = args.index("--")
    options, argv = args[1:split], args[split + 1:]
    uid = None
    if options[:1] == ["--uid"] and len(options) == 2 and options[1].isdigit():
        uid = int(options[1])
    elif options:
        print(f"platforms: unexpected options {' '.join(options)}\n{usage}", file=sys.stderr)
        return 2
    reason = can_emulate()
    if reason:
        print(f"platforms: cannot emulate {args[0]} here: {reason}", file=sys.stderr)
        return 3
    become(args[0], argv, uid)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
