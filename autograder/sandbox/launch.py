"""Which launch path a grading uses: the fork path's Zygote where it can run, else the portable one."""
from __future__ import annotations

import os
import socket
import sys

from autograder.sandbox.limits import Limits

def fork_path_available() -> bool:
    """Linux with fork, AF_UNIX descriptor passing and `resource`: the fork path and its tiers.

    macOS has fork, but forking a process that has imported torch is unsafe
    there (Python's own multiprocessing spawns on macOS for that reason).
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        import resource  # noqa: F401
    except ImportError:
        return False
    return all(hasattr(os, name) for name in ("fork", "killpg", "setsid")) and all(
        hasattr(socket, name) for name in ("AF_UNIX", "send_fds", "recv_fds"))


_PRESTARTED = []  # the launcher `prestart` started, until start_launcher hands it over


def fork_path_chosen() -> bool:
    """Whether gradings here use the fork path (AUTOGRADER_WORKER=fork|spawn, else where it can run)."""
    choice = os.environ.get("AUTOGRADER_WORKER", "auto").lower()
    return choice == "fork" or (choice != "spawn" and fork_path_available())


def prestart() -> None:
    """Start the worker side now, before this process imports torch: its own `import torch` (the
    longest step of a grading) then runs beside the grader's instead of after it. The fork path's
    zygote, or the portable path's worker process, started with the default limits (the portable
    launcher starts another where a grading asks for other limits). The next start_launcher call
    takes it; `discard_prestarted` closes one that nothing took."""
    if _PRESTARTED:
        return
    if fork_path_chosen():
        from autograder.sandbox.zygote import Zygote

        _PRESTARTED.append(Zygote())
    else:
        from autograder.sandbox.portable import Launcher

        _PRESTARTED.append(Launcher())


def discard_prestarted() -> None:
    """Close the launcher `prestart` started where no grading took it (a bad command line, a
    submission not found): its process ends, and its working folder goes."""
    while _PRESTARTED:
        _PRESTARTED.pop().close()


def start_launcher(limits: "Limits | None" = None):
    """The fork path's Zygote where it can run, else the portable launcher (started with `limits`).
    (A batch starts its own Zygote, with the meta device warmed: instructor/jobs.py.)"""
    if _PRESTARTED:
        return _PRESTARTED.pop()
    if fork_path_chosen():
        from autograder.sandbox.zygote import Zygote

        return Zygote()
    from autograder.sandbox.portable import Launcher

    return Launcher(limits)


