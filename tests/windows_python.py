"""An interpreter with Windows' Python surface, built on this Linux machine for the tests.

    python tests/windows_python.py DIR     # build it in DIR, print its interpreter's path

The self-check runs on students' laptops, Windows among them, where CPython has
no fork, no AF_UNIX sockets, no `resource` module and a `select` that takes
sockets only. `build(DIR)` makes a virtual environment (`venv --without-pip`)
whose site-packages holds

- a `.pth` line that adds this interpreter's own site-packages (torch, pytest,
  matplotlib and the course's editable install resolve as they do here), and
- `sitecustomize.py`, which runs `apply()` below in every process of that
  interpreter. `site` imports `sitecustomize` even under `-I`, which ignores
  PYTHONPATH and the environment, so the trusted process AND every worker it
  spawns with `sys.executable -I` see the same reduced surface.

What `apply()` takes away, each absent from CPython 3.11-3.14 on Windows:

- os: fork, forkpty (no fork at all); setsid, getsid,
  setpgid, getpgid, getpgrp, killpg, tcgetpgrp, tcsetpgrp (no sessions or
  process groups); getuid, geteuid, getgid, getegid, setuid, seteuid, setgid,
  setegid, setreuid, setregid, setresuid, setresgid, getresuid, getresgid,
  getgroups, setgroups, initgroups (no Unix users); waitid, wait, wait3, wait4
  (only waitpid exists there); sched_getaffinity (neither Windows nor macOS).
- signal: SIGKILL, SIGCHLD, SIGALRM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2,
  SIGPIPE, SIGSTOP, SIGCONT, SIGTSTP, SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ;
  alarm, setitimer, getitimer and the ITIMER_* constants, pause, siginterrupt,
  sigwait, sigpending, pthread_kill, pthread_sigmask (the only signals of
  Windows' signal module are SIGINT, SIGTERM, SIGABRT, SIGFPE, SIGILL, SIGSEGV,
  SIGBREAK and the CTRL_* events, and it has no timers and no signal masks).
- socket: AF_UNIX, send_fds, recv_fds, CMSG_LEN, CMSG_SPACE, SCM_RIGHTS,
  SCM_CREDENTIALS, SO_PEERCRED, MSG_DONTWAIT, AF_NETLINK, AF_PACKET (no Unix
  domain sockets, no descriptor passing). `socketpair()` becomes Windows'
  own: a pair of TCP sockets over the loopback, made through a listener.
- select: poll and epoll are gone, and `select.select` raises
  OSError(10038, ...) (WSAENOTSOCK) when given anything but a socket, and
  OSError(10022, ...) (WSAEINVAL) when all three lists are empty, as Winsock's
  select does. `selectors.DefaultSelector` is SelectSelector, Windows' default.
- modules that do not exist there: `import resource`, `fcntl`, `pwd`, `grp`,
  `termios` raise ImportError (`sys.modules[name] = None`).
- text encoding: `open()` (and `io.open`, which pathlib uses) without
  `encoding=` reads and writes cp1252, the ANSI code page of a US or
  Western-European Windows (Python 3.11-3.14 outside UTF-8 mode), and so do
  `locale.getpreferredencoding()`/`getencoding()`; sys.stdout and sys.stderr,
  when they are not a terminal (a pipe, CI's log, `> out.txt`), write cp1252
  too, strictly on stdout, as Windows' Python does when redirected.
- multiprocessing's default start method is spawn, Windows' only one.

What stays, and why (each is looked up by the standard library's POSIX code,
which Windows' Python replaces with its own, so removing it would break what
works there rather than emulate it):

- `subprocess` and `selectors` are imported before poll and epoll go: the
  POSIX subprocess picks its selector (PollSelector, bound to the real
  `select.poll`) at import, where Windows' `communicate()` uses threads.
  `os.posix_spawn`, `os.waitpid`, `os.WNOHANG` and the W*() status macros
  stay: the POSIX subprocess and multiprocessing call them (bound at import or
  looked up at each call) where Windows' versions call WaitForSingleObject.
  `subprocess.Popen.kill` sends SIGKILL by number: on Windows it is
  TerminateProcess, which the child cannot catch either.
- The selectors' PollSelector and EpollSelector classes stay (bound to the
  real poll/epoll): multiprocessing.connection picks one by name to wait on
  pipes, where Windows' version uses WaitForMultipleObjects.
- os.register_at_fork stays: torch registers its after-fork hooks with it
  wherever sys.platform is not "win32" (torch/multiprocessing/_atfork.py), and
  without fork no hook ever runs, so keeping it changes nothing else.
- os.sysconf, os.O_NOFOLLOW/O_CLOEXEC/O_DIRECTORY and os.supports_dir_fd
  stay: psutil, shutil and tempfile pick Linux code paths by sys.platform or
  at import, and those paths call them; Windows' Python never takes them.
- The enums signal.Signals and socket.AddressFamily keep their members (they
  are built when the modules are first imported, before this runs).

What it cannot show: os.name stays "posix" and sys.platform "linux" (the
standard library chooses posixpath, the POSIX subprocess and much more by
them), so code behind `os.name == "nt"` never runs here; nor do backslash
paths, drive letters, case-insensitive names, CRLF line endings, the locks
that stop an open file from being deleted, or console (not redirected) output,
which is UTF-8 on Windows. Those need a real Windows runner (the self-check's
CI matrix). `io.TextIOWrapper` opened without an encoding (e.g.
subprocess's `text=True`) keeps this machine's encoding: it is a C type whose
instances other code checks with isinstance, so it is not replaced.
"""
from __future__ import annotations

import sys

WSAEINVAL = 10022
WSAENOTSOCK = 10038
ANSI_CODE_PAGE = "cp1252"

TAKEN_AWAY = {
    "os": ("fork", "forkpty", "setsid", "getsid", "setpgid", "getpgid", "getpgrp", "killpg",
           "tcgetpgrp", "tcsetpgrp", "getuid", "geteuid", "getgid", "getegid", "setuid", "seteuid", "setgid",
           "setegid", "setreuid", "setregid", "setresuid", "setresgid", "getresuid", "getresgid", "getgroups",
           "setgroups", "initgroups", "waitid", "wait", "wait3", "wait4", "sched_getaffinity"),
    "signal": ("SIGKILL", "SIGCHLD", "SIGALRM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGPIPE", "SIGSTOP",
               "SIGCONT", "SIGTSTP", "SIGVTALRM", "SIGPROF", "SIGXCPU", "SIGXFSZ", "alarm", "setitimer",
               "getitimer", "ITIMER_REAL", "ITIMER_VIRTUAL", "ITIMER_PROF", "pause", "siginterrupt", "sigwait",
               "sigpending", "pthread_kill", "pthread_sigmask"),
    "socket": ("AF_UNIX", "send_fds", "recv_fds", "CMSG_LEN", "CMSG_SPACE", "SCM_RIGHTS", "SCM_CREDENTIALS",
               "SO_PEERCRED", "MSG_DONTWAIT", "AF_NETLINK", "AF_PACKET"),
    "select": ("poll", "epoll"),
}
UNIMPORTABLE = ("resource", "fcntl", "pwd", "grp", "termios")
MARKER = "WINDOWS_PYTHON_EMULATION"  # set in os.environ by apply(), so a probe can tell it ran


def _is_socket(item) -> bool:
    import os
    import stat

    fd = item if isinstance(item, int) else item.fileno()
    try:
        return stat.S_ISSOCK(os.fstat(fd).st_mode)
    except OSError:
        return False


def _winsock_select(real_select):
    def select(rlist, wlist, xlist, timeout=None):
        rlist, wlist, xlist = list(rlist), list(wlist), list(xlist)
        if not (rlist or wlist or xlist):
            raise OSError(WSAEINVAL, "An invalid argument was supplied")
        if not all(_is_socket(item) for item in rlist + wlist + xlist):
            raise OSError(WSAENOTSOCK, "An operation was attempted on something that is not a socket")
        return real_select(rlist, wlist, xlist, timeout)

    select.__doc__ = "select.select as Windows has it: sockets only, never three empty lists."
    return select


def _loopback_socketpair(family=None, type=None, proto=0):
    """socket.socketpair as Windows' CPython implements it: two TCP sockets over the loopback."""
    import socket

    family = socket.AF_INET if family is None else family
    type = socket.SOCK_STREAM if type is None else type
    host = "::1" if family == socket.AF_INET6 else "127.0.0.1"
    listener = socket.socket(family, type, proto)
    try:
        listener.bind((host, 0))
        listener.listen()
        client = socket.socket(family, type, proto)
        try:
            client.connect(listener.getsockname()[:2])
            server, _ = listener.accept()
        except BaseException:
            client.close()
            raise
    finally:
        listener.close()
    return server, client


def apply() -> None:
    """Take away from this process what Windows' CPython lacks (see the module's docstring)."""
    import builtins
    import io
    import locale
    import os
    import select
    import signal
    import socket

    kill_signal = int(signal.SIGKILL)
    real_select = select.select
    for name in UNIMPORTABLE:
        sys.modules[name] = None
    windows_select = _winsock_select(real_select)
    select.select = windows_select
    # Imported now, while poll and epoll still exist: selectors binds PollSelector to the real
    # poll and the POSIX subprocess picks it, both at import (see the docstring).
    import multiprocessing
    import selectors
    import subprocess

    modules = {"os": os, "signal": signal, "socket": socket, "select": select}
    for module, names in TAKEN_AWAY.items():
        for name in names:
            if hasattr(modules[module], name):
                delattr(modules[module], name)

    def windows_selector_select(self, r, w, _, timeout=None):
        r, w, x = select.select(r, w, w, timeout)  # looked up at each call, as on Windows
        return r, w + x, []

    selectors.SelectSelector._select = windows_selector_select
    selectors.DefaultSelector = selectors.SelectSelector
    socket.socketpair = _loopback_socketpair

    def kill(self):
        """Windows' Popen.kill is TerminateProcess, which cannot be caught: SIGKILL here."""
        if self.returncode is None:
            try:
                os.kill(self.pid, kill_signal)
            except ProcessLookupError:
                pass

    subprocess.Popen.kill = kill
    multiprocessing.set_start_method("spawn", force=True)  # Windows' only start method; fork is gone

    real_open = io.open

    def ansi_open(file, mode="r", buffering=-1, encoding=None, errors=None, newline=None, closefd=True,
                  opener=None):
        if "b" not in mode and encoding in (None, "locale"):
            encoding = ANSI_CODE_PAGE
        return real_open(file, mode, buffering, encoding, errors, newline, closefd, opener)

    ansi_open.__doc__ = real_open.__doc__
    builtins.open = io.open = ansi_open
    locale.getpreferredencoding = lambda do_setlocale=True: ANSI_CODE_PAGE
    if hasattr(locale, "getencoding"):
        locale.getencoding = lambda: ANSI_CODE_PAGE
    for stream, errors in ((sys.stdout, "strict"), (sys.stderr, "backslashreplace")):
        if stream is not None and hasattr(stream, "reconfigure") and not stream.isatty():
            stream.reconfigure(encoding=ANSI_CODE_PAGE, errors=errors)
    os.environ[MARKER] = "1"


# ------------------------------------------------------------------ building the interpreter

PTH_NAME = "00-host-site-packages.pth"


def host_site_packages() -> list[str]:
    """This interpreter's package folders (torch, pytest, the course's editable install)."""
    import sysconfig

    return list(dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib")))


def python_in(env_dir) -> str:
    from pathlib import Path

    return str(Path(env_dir) / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python"))


def build(env_dir) -> str:
    """Create the emulating interpreter in `env_dir` (a new folder); return its python's path.

    Raises RuntimeError saying why when it cannot be built here."""
    import shutil
    import subprocess
    import venv
    from pathlib import Path

    if sys.platform == "win32":
        raise RuntimeError("this is Windows already: run the tests with its own Python")
    env_dir = Path(env_dir)
    try:
        venv.EnvBuilder(with_pip=False, symlinks=True, clear=True).create(env_dir)
    except Exception as error:  # noqa: BLE001 -- venv missing (Debian's python3-venv) and the like
        raise RuntimeError(f"cannot create a virtual environment: {type(error).__name__}: {error}") from None
    python = python_in(env_dir)
    done = subprocess.run([python, "-I", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"the new interpreter does not start: {done.stderr.strip()[-300:]}")
    site_packages = Path(done.stdout.strip())
    site_packages.mkdir(parents=True, exist_ok=True)
    lines = [f"import site; site.addsitedir({path!r})" for path in host_site_packages()]
    (site_packages / PTH_NAME).write_text("\n".join(lines) + "\n", encoding="utf-8")
    shutil.copyfile(__file__, site_packages / "windows_surface.py")
    (site_packages / "sitecustomize.py").write_text(
        "# Windows' Python surface on this machine: see windows_surface.py (tests/windows_python.py)\n"
        "import windows_surface\n\nwindows_surface.apply()\n", encoding="utf-8")
    done = subprocess.run([python, "-I", "-c", f"import os, torch; print(os.environ.get({MARKER!r}))"],
                          capture_output=True, text=True, timeout=120)
    if done.returncode != 0 or done.stdout.strip() != "1":
        raise RuntimeError(f"the emulation does not load ({done.returncode}): "
                           f"{(done.stderr or done.stdout).strip()[-500:]}")
    return python


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tests/windows_python.py DIR")
    try:
        print(build(sys.argv[1]))
    except RuntimeError as error:
        sys.exit(f"windows_python: {error}")
