"""Sandbox tiers: what a worker's report adds up to, and what to do where none holds.

A worker child reports the layers in force and the ones the machine refused
(worker/confine.py; the portable path reports none). This module reads that
report as one of three tiers:

- ``namespaces``: network, mount and PID namespaces, a new root holding only
  what the interpreter needs (the allow-list), read-only, a private /proc;
- ``landlock``: no privilege needed: a Landlock allow-list, a seccomp filter
  without sockets, a subreaper (or PID namespace), and signals scoped to the
  student's processes (Landlock ABI 6) or a uid of their own;
- ``none``: any other case: student code could read the answers or the
  grader's secrets, reach the network, or outlive the grading.

Hidden grading refuses ``none`` unless told ``--sandbox weak``; `refusal`
writes the one line that says why and how to get a tier on this platform.
"""
from __future__ import annotations

import os
import sys

from autograder.i18n import _, _f
from autograder.sandbox.layer_words import RLIMIT, RLIMITS, entry_id, in_force, listing, refused

GIB, MIB = 1024**3, 1024**2

NAMESPACES, LANDLOCK, NONE = "namespaces", "landlock", "none"
# the worker reports its layers by id (layer_words.py turns them into words)
NAMESPACES_NEEDS = ("network_namespace", "allowed_root", "read_only_filesystem", "pid_namespace", "private_proc")
# each entry: any one of these layers will do
LANDLOCK_NEEDS = (("landlock_filesystem",), ("seccomp",), ("subreaper", "pid_namespace"),
                  ("landlock_scope", "unprivileged_user"))  # signals: a user namespace is no help (same kuid)

# a guarantee a test may need -> layers that each give it (either tier)
GUARANTEES = {
    "network": ("network_namespace", "seccomp"),
    "hidden": ("allowed_root", "landlock_filesystem"),
    "readonly": ("read_only_filesystem", "landlock_filesystem"),
    "pid": ("pid_namespace", "subreaper"),
    "proc": ("private_proc", "landlock_filesystem"),
    "signals": ("pid_namespace", "landlock_scope"),
    "unprivileged": ("unprivileged_user",),
    "quota": ("private_tmpfs",),
}
RLIMIT_KEYS = ("memory_bytes", "cpu_seconds", "file_bytes", "processes")


def _ids(report: dict | None, which: str) -> list[str]:
    return [entry_id(entry) for entry in (report or {}).get(which, [])]


def tier(report: dict | None) -> str:
    if not report:
        return NONE
    if "unprivileged_user" in _ids(report, "missing"):
        return NONE  # student code would run as root
    layers = set(_ids(report, "layers"))  # read once, for every layer asked about below
    if layers.issuperset(NAMESPACES_NEEDS):
        return NAMESPACES
    if all(layers.intersection(choice) for choice in LANDLOCK_NEEDS):
        return LANDLOCK
    return NONE


STRENGTH = (NONE, LANDLOCK, NAMESPACES)  # weakest first


def weakest(*names: str) -> str:
    """The weakest of these tiers (a name that is no tier counts as weaker than none): what student code
    ran under, at worst, in a grading whose sections ran under several children."""
    return min(names, key=lambda name: STRENGTH.index(name) if name in STRENGTH else -1)


def holds(report: dict | None, guarantee: str) -> bool:
    """Whether `guarantee` (a key of GUARANTEES) held in the reporting child, by either tier."""
    return not set(_ids(report, "layers")).isdisjoint(GUARANTEES[guarantee])


def _size(value: int) -> str:
    if value >= GIB and value % GIB == 0:
        return f"{value // GIB} GiB"
    if value >= MIB:
        return f"{value / MIB:g} MiB"
    return f"{value} bytes"


def describe(report: dict | None, limits) -> str:
    """E.g. "sandbox: tier landlock: process group, ..., rlimits (memory 4 GiB, ...); missing: ..."."""
    if not report:  # "sandbox: tier <tier>:" stays as it is in every language: scripts look for it
        return "sandbox: tier none: " + _("no worker was started")
    entries = report.get("layers", [])
    layers = [in_force(entry) for entry in entries if entry_id(entry) != "rlimit"]
    set_limits = {entry.get("name") for entry in entries if entry_id(entry) == "rlimit"}
    parts = []
    for key, text in (("memory_bytes", _f("memory {size}", size=_size(limits.memory_bytes))),
                      ("cpu_seconds", _f("cpu {seconds:g} s", seconds=limits.cpu_seconds)),
                      ("file_bytes", _f("files {size}", size=_size(limits.file_bytes))),
                      ("processes", _f("processes {count}", count=limits.processes))):
        if key in set_limits:
            parts.append(text)
    timeouts = _f("timeouts ({call:g} s per call, {cell:g} s per cell, {load:g} s per load)",
                  call=limits.call_seconds, cell=limits.cell_seconds, load=limits.load_seconds)
    limits_part = [_f(RLIMITS, limits=listing(parts))] if parts else []
    line = f"sandbox: tier {tier(report)}: " + listing(layers + limits_part + [timeouts])
    missing = [refused(entry) for entry in report.get("missing", [])]
    if "rlimits" not in _ids(report, "missing"):  # "rlimits (not on this platform)" says it all
        missing += [_f(RLIMIT, name=key) for key in RLIMIT_KEYS if key not in set_limits]
    if missing:
        line += _f("; missing: {layers}", layers=listing(missing))
    return line


def missing_words(report: dict | None) -> list[str]:
    """What the machine refused, in words, the resource limits left out (refusal's and probe's list)."""
    return [refused(entry) for entry in (report or {}).get("missing", []) if entry_id(entry) != "rlimits"]


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(4096)
    except OSError:
        return ""


def in_container() -> bool:
    cgroup = _read("/proc/1/cgroup")
    return (os.path.exists("/.dockerenv") or os.path.exists("/run/.containerenv")
            or any(word in cgroup for word in ("docker", "kubepods", "containerd", "libpod")))


def platform_advice() -> tuple[str, str]:
    """(where this runs, how to get a sandbox tier there), for the refusal's one line."""
    if sys.platform == "win32" or sys.platform == "darwin":
        name = "Windows" if sys.platform == "win32" else "macOS"
        return name, _("hidden grading needs Linux: grade on a Linux machine, a Linux CI runner "
                       "or Gradescope; students use `python -m autograder check`")
    if os.environ.get("AUTOGRADER_WORKER", "").lower() == "spawn":
        return _("the portable worker path"), _("unset AUTOGRADER_WORKER: hidden grading needs Linux's fork path")
    landlock = _("a kernel with Landlock (Linux 5.13 or later, 'landlock' in /sys/kernel/security/lsm)")
    if os.environ.get("GITHUB_ACTIONS") == "true":
        if os.environ.get("RUNNER_ENVIRONMENT") == "github-hosted" or _read(
                "/proc/sys/kernel/apparmor_restrict_unprivileged_userns").strip() == "1":
            return _("GitHub-hosted runner"), _(
                "run this step with sudo, or run `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` first")
        return _("GitHub self-hosted runner"), _f("run the grading as root (sudo), or give the runner {landlock}",
                                                  landlock=landlock)
    if os.path.isdir("/autograder/source"):
        return "Gradescope", _f("the landlock tier needs {landlock}; ask Gradescope support which kernel runs",
                                landlock=landlock)
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        return _("Kubernetes pod"), _f("schedule the pod on nodes with {landlock}, or allow namespaces "
                                       "(CAP_SYS_ADMIN with an unconfined seccomp profile)", landlock=landlock)
    if os.environ.get("GITLAB_CI") == "true":
        return _("GitLab job"), _f("use runners whose host has {landlock}, or a shell executor where the grading "
                                   "runs as root", landlock=landlock)
    if in_container():
        return _("container"), _f("run it on a host with {landlock}, or with CAP_SYS_ADMIN and seccomp unconfined",
                                  landlock=landlock)
    if _read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").strip() == "1":
        return _("Ubuntu with restricted user namespaces"), _(
            "run as root (sudo), or `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`")
    return "Linux", _f("run as root, allow unprivileged user namespaces, or use {landlock}", landlock=landlock)


def unreadable_python(report: dict | None) -> str | None:
    """The folder of Python or the grader that other users cannot read, when that is what kept
    student code running as root (a Python built in a 0700 home, as pyenv does), else None: the
    worker reports it as data (worker/confine.py, the report's "unreadable")."""
    folder = (report or {}).get("unreadable")
    return folder if isinstance(folder, str) and folder else None


def advice(report: dict | None) -> tuple[str, str]:
    """(where this runs, how to get a sandbox tier there), given what the worker reported: an
    unreadable Python is fixed where Python lives, whatever the platform."""
    where, fix = platform_advice()
    folder = unreadable_python(report)
    if folder:
        fix = _f("{folder} is not readable by other users, so student code cannot run as a user of its own: "
                 "install Python where every user can read it (e.g. under /usr/local or /opt), run the grader "
                 "as an ordinary user instead of root, or `chmod o+x` the folders above {folder} and "
                 "`chmod -R o+rX` {folder}", folder=folder)
    return where, fix


def refusal(report: dict | None) -> str:
    """The one line of a refused hidden grading."""
    missing = missing_words(report)
    where, fix = advice(report)
    summary = _("; ").join(missing[:4]) or _("no sandbox layer")  # its items hold commas of their own
    return _f("hidden grading refused: no sandbox tier holds here, so student code could read the answers "
              "or reach the network (missing: {missing}). {where}: {fix}. "
              "To grade anyway, unconfined and marked so, pass --sandbox weak.", missing=summary, where=where, fix=fix)


def protection_line(report: dict | None) -> str:
    """The self-check's one line about the protection its student runs under."""
    level = tier(report)
    if level != NONE:
        return _("self-check: your code runs in a sandbox, away from the network and from your other files")
    where = {"win32": "Windows", "darwin": "macOS"}.get(sys.platform, _("this machine"))
    return _f("self-check: no sandbox on {where}: the visible checks run your code as you", where=where)
