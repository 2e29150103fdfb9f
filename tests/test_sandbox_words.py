"""The sandbox line's words: the worker reports each layer by id and fields, the trusted side words them.

In English every layer reads as it always read (the sentences below are the line's words from before the
worker reported ids); in Chinese the line holds no English word but identifiers, paths, units and the
kernel's own names, and its prefix `sandbox: tier <tier>:` that scripts look for.
"""
from __future__ import annotations

import errno
import os
import re

import pytest
from support import sandbox_latin_words

from autograder.sandbox import tiers
from autograder.sandbox.layer_words import in_force, refused
from autograder.sandbox.limits import Limits

EPERM, NOT_PERMITTED = errno.EPERM, os.strerror(errno.EPERM).lower()
GPU = {"id": "gpu", "name": "H100-80GB", "seconds": 0.123, "cap": {"gib": 4.0, "total_gib": 79.6}}

IN_FORCE = [
    ({"id": "process_group"}, "process group"),
    ({"id": "user_namespace"}, "user namespace"),
    ({"id": "network_namespace"}, "network namespace"),
    ({"id": "mount_namespace"}, "mount namespace"),
    ({"id": "allowed_root", "paths": 27}, "filesystem: only what the interpreter needs (27 paths, read-only)"),
    ({"id": "private_tmpfs", "mib": 256}, "private directory on tmpfs (256 MiB)"),
    ({"id": "read_only_filesystem"}, "read-only filesystem"),
    ({"id": "pid_namespace"}, "PID namespace"),
    ({"id": "private_proc"}, "private /proc"),
    ({"id": "unprivileged_user", "uid": 200001}, "unprivileged user (uid 200001)"),
    ({"id": "no_new_privs"}, "no_new_privs"),
    ({"id": "subreaper"}, "subreaper"),
    ({"id": "private_directory"}, "private directory"),
    ({"id": "landlock_filesystem", "abi": 6},
     "landlock filesystem (ABI 6: only what the interpreter needs read-only, its directory read-write, nothing else)"),
    ({"id": "landlock_network"}, "landlock network (no TCP bind or connect)"),
    ({"id": "landlock_scope"}, "landlock scope (no signal or abstract socket outside)"),
    ({"id": "seccomp"}, "seccomp (no sockets, no ptrace, no namespaces)"),
    (GPU, "GPU H100-80GB (context started in 0.12 s before any call, TF32 off, GPU memory cap 4 GiB of 80)"),
    ({**GPU, "cap": None}, "GPU H100-80GB (context started in 0.12 s before any call, TF32 off, no GPU memory cap)"),
]
MISSING = [
    ({"id": "namespaces", "why": "not_linux"}, "namespaces (not Linux)"),
    ({"id": "namespaces", "error": "OSError: no libc"}, "namespaces (OSError: no libc)"),
    ({"id": "user_namespace", "errno": EPERM},
     f"user namespace ({NOT_PERMITTED}): not root, so no other namespace either"),
    ({"id": "network_namespace"}, "network namespace"),
    ({"id": "network_namespace", "errno": EPERM}, f"network namespace ({NOT_PERMITTED})"),
    ({"id": "mount_namespace", "errno": EPERM}, f"mount namespace ({NOT_PERMITTED})"),
    ({"id": "pid_namespace", "errno": EPERM}, f"PID namespace ({NOT_PERMITTED})"),
    ({"id": "allowed_root", "errno": EPERM}, f"allow-listed filesystem ({NOT_PERMITTED})"),
    ({"id": "read_only_filesystem", "errno": EPERM}, f"read-only filesystem ({NOT_PERMITTED})"),
    ({"id": "private_dev_shm", "errno": EPERM}, f"private /dev/shm ({NOT_PERMITTED})"),
    ({"id": "private_proc", "errno": EPERM}, f"private /proc ({NOT_PERMITTED})"),
    ({"id": "sandbox", "why": "turned_off"}, "sandbox (turned off: --sandbox off, for debugging only)"),
    ({"id": "sandbox", "why": "portable", "platform": "win32"},
     "sandbox (no namespaces, Landlock or seccomp on win32: the code runs as the user who started it)"),
    ({"id": "rlimits", "why": "not_on_this_platform"}, "rlimits (not on this platform)"),
    ({"id": "no_new_privs"}, "no_new_privs"),
    ({"id": "landlock_filesystem", "errno": errno.ENOSYS},
     f"landlock filesystem ({os.strerror(errno.ENOSYS).lower()})"),
    ({"id": "unprivileged_user", "why": "unreadable", "folder": "/root/.pyenv"},
     "unprivileged user (/root/.pyenv is not readable by other users)"),
    ({"id": "unprivileged_user", "errno": EPERM}, f"unprivileged user ({NOT_PERMITTED})"),
    ({"id": "landlock_scope", "why": "landlock_abi", "abi": 4}, "landlock scope (ABI 4 < 6)"),
    ({"id": "seccomp", "errno": errno.EINVAL}, f"seccomp ({os.strerror(errno.EINVAL).lower()})"),
    ({"id": "gpu", "error": "RuntimeError: Found no NVIDIA driver on your system"},
     "GPU (RuntimeError: Found no NVIDIA driver on your system)"),
]
LIMITS = [{"id": "rlimit", "name": name} for name in ("memory_bytes", "cpu_seconds", "file_bytes", "processes")]

@pytest.mark.parametrize("entry, words", IN_FORCE)
def test_a_layer_in_force_reads_in_english_as_it_always_read(entry, words):
    assert in_force(entry) == words


@pytest.mark.parametrize("entry, words", MISSING)
def test_a_missing_layer_reads_in_english_as_it_always_read(entry, words):
    assert refused(entry) == words


def every_report() -> list[dict]:
    """Reports of each tier, and one with every kind of missing layer (an errno without words of its own too)."""
    namespaces = [entry for entry, _ in IN_FORCE if entry["id"] not in ("subreaper", "gpu")]
    return [{"layers": namespaces + LIMITS, "missing": []},
            {"layers": [entry for entry, _ in IN_FORCE] + LIMITS[:2],
             "missing": [entry for entry, _ in MISSING] + [{"id": "seccomp", "errno": errno.ELOOP}]},
            {"layers": [{"id": "private_directory"}], "missing": [{"id": "sandbox", "why": "portable",
                                                                   "platform": "win32"},
                                                                  {"id": "rlimits", "why": "not_on_this_platform"}]}]


def test_the_chinese_sandbox_line_holds_no_english_word(chinese, monkeypatch):
    monkeypatch.setattr(tiers.sys, "platform", "linux")
    for variable in ("GITHUB_ACTIONS", "GITLAB_CI", "KUBERNETES_SERVICE_HOST", "AUTOGRADER_WORKER"):
        monkeypatch.delenv(variable, raising=False)
    lines = [tiers.describe(report, Limits()) for report in every_report()]
    lines += [tiers.refusal(report) for report in every_report()]
    lines += [refused(entry) for entry, _ in MISSING] + [in_force(entry) for entry, _ in IN_FORCE]
    assert lines[0].startswith("sandbox: tier namespaces: 进程组，用户命名空间，网络命名空间") and "资源限制（内存 4 GiB" in lines[0]
    assert "；缺少：" in lines[1] and "非特权用户（其他用户无法读取 /root/.pyenv）" in lines[1]
    assert "?" not in " ".join(lines), "every id and its fields have their words"
    assert not [line for line in lines if ", " in line or "; " in line], "Chinese punctuation between the items"
    assert [(line, sandbox_latin_words(line)) for line in lines if sandbox_latin_words(line)] == []


def test_the_english_line_is_found_english():
    """The check above can fail: the same reports' English lines have words it does not keep."""
    line = tiers.describe(every_report()[1], Limits())
    assert {"process", "group", "interpreter", "namespace", "missing"} <= set(sandbox_latin_words(line))


def test_a_report_of_words_or_odd_fields_is_shown_never_formatted():
    """A report is data from a process beside student code: an entry that is not a layer, or fields its
    words cannot take, show as the id (or "?"), and give no tier."""
    report = {"layers": ["network namespace", {"id": "unprivileged_user", "uid": "{0.__class__}"},
                         {"id": "landlock_filesystem"}, {"id": "made_up"}, 7],
              "missing": [{"id": "gpu", "errno": "EPERM"}, {"id": "seccomp", "why": "nonsense"}]}
    line = tiers.describe(report, Limits())
    assert line.startswith("sandbox: tier none: ?, unprivileged user (uid {0.__class__}), landlock_filesystem, "
                           "made_up, ?, timeouts"), line
    assert "missing: GPU, seccomp, rlimit memory_bytes" in line


@pytest.mark.parametrize("report", every_report(), ids=["namespaces", "landlock-or-none", "portable"])
def test_the_probe_explains_in_chinese(report, chinese, monkeypatch):
    """`python -m autograder.sandbox --lang zh`: its lines, like the sandbox line, hold no English word."""
    from autograder.sandbox.probe import explain

    monkeypatch.setattr(tiers.sys, "platform", "linux")
    lines = explain(report)
    assert re.fullmatch("沙箱层级：(namespaces|landlock|none)", lines[0]) and lines[1].startswith("  原因：")
    lines = lines[1:]  # the first names the tier by its id, as the sandbox line's prefix does
    assert [(line, sandbox_latin_words(line)) for line in lines if sandbox_latin_words(line)] == []


def test_the_probe_takes_lang_and_refuses_an_unknown_one(capsys):
    from autograder.sandbox.probe import main

    with pytest.raises(SystemExit) as stopped:
        main(["--lang", "fr"])
    assert stopped.value.code == 2 and "--lang" in capsys.readouterr().err
