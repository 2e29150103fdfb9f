"""The platforms of tests/platforms.py deny what they claim and allow what they should.

One probe script runs once under each platform and once on this machine
unconfined (the control), and reports what the kernel answered: identity and
capability sets, namespaces, mounts, clone and clone3, the calls Docker's
profile refuses, Landlock, and whether Python, threads, subprocesses and torch
work. Every denial asserted here is also asserted to differ from the
control's answer, so a platform built without its filter, its capability cut
or its uid switch fails these tests instead of passing on this machine's own
rules.

The probe calls the kernel by number from a table written out again here, on
purpose apart from the harness's (a wrong number there must not hide in the
test), and checked against the system headers where they are installed.

Where the platforms cannot be built (not root, not Linux, an unknown
architecture, ...), the tests that need them are skipped with the reason.
"""
from __future__ import annotations

import errno
import functools
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import platforms

TESTS = Path(__file__).resolve().parent
HARNESS = TESTS / "platforms.py"
PLATFORMS = list(platforms.PLATFORMS)
DOCKER = ["container-root", "container-user", "no-sandbox"]
DOCKER_CAPS = "00000000a80425fb"

# name -> (x86_64, aarch64): arch/x86/entry/syscalls/syscall_64.tbl, include/uapi/asm-generic/unistd.h
NUMBERS = {
    "mount": (165, 40), "umount2": (166, 39), "pivot_root": (155, 41), "setns": (308, 268),
    "open_tree": (428, 428), "move_mount": (429, 429), "fsopen": (430, 430), "fsconfig": (431, 431),
    "fsmount": (432, 432), "fspick": (433, 433), "mount_setattr": (442, 442), "chroot": (161, 51),
    "unshare": (272, 97), "clone": (56, 220), "clone3": (435, 435), "keyctl": (250, 219),
    "add_key": (248, 217), "request_key": (249, 218), "bpf": (321, 280), "perf_event_open": (298, 241),
    "userfaultfd": (323, 282), "personality": (135, 92), "get_mempolicy": (239, 236), "kcmp": (312, 272),
    "socket": (41, 198), "read": (0, 63), "landlock_create_ruleset": (444, 444),
    "landlock_add_rule": (445, 445), "landlock_restrict_self": (446, 446),
}
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
AUDIT_ARCH_I386, AUDIT_ARCH_ARM = 0x40000003, 0x40000028

CLONE_THREAD = 0x00010000
CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x02000000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWTIME = 0x10000000, 0x20000000, 0x40000000, 0x00000080

PROBE = r'''
import ctypes, errno, json, os, socket, subprocess, sys, tempfile, threading

NR = __NUMBERS__
WITH_TORCH = __TORCH__
MISSING = b"/nonexistent-platform-probe"
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def call(name, *args):
    """The kernel's answer: "ok" (or the number, for landlock's ABI), else the errno's name."""
    ctypes.set_errno(0)
    values = [ctypes.c_long(a) if isinstance(a, int) else a for a in args]
    result = libc.syscall(ctypes.c_long(NR[name]), *values)
    if result < 0:
        return errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
    if name == "open_tree":
        os.close(result)
    return result if name == "landlock_create_ruleset" else "ok"


def in_child(function):
    """function() in a forked child, for what changes a process for good; its JSON answer."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            out = function()
        except BaseException as error:
            out = {"error": repr(error)}
        os.write(write, json.dumps(out).encode())
        os._exit(0)
    os.close(write)
    data = b""
    while True:
        chunk = os.read(read, 65536)
        if not chunk:
            break
        data += chunk
    os.close(read)
    os.waitpid(pid, 0)
    return json.loads(data)


def write(path, text):
    try:
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)
        return "ok"
    except OSError as error:
        return errno.errorcode.get(error.errno, str(error.errno))


def user_namespace():
    uid, gid = os.getuid(), os.getgid()
    out = {"unshare_user": call("unshare", 0x10000000)}
    if out["unshare_user"] != "ok":
        return out
    out["setgroups"] = write("/proc/self/setgroups", "deny")
    out["uid_map"] = write("/proc/self/uid_map", "0 %d 1" % uid)
    out["gid_map"] = write("/proc/self/gid_map", "0 %d 1" % gid)
    out["uid_inside"] = os.getuid()
    for name, flag in (("net", 0x40000000), ("mnt", 0x00020000), ("pid", 0x20000000), ("ipc", 0x08000000),
                       ("uts", 0x04000000), ("cgroup", 0x02000000)):
        out["unshare_" + name] = call("unshare", flag)
    out["mount"] = call("mount", None, MISSING, b"tmpfs", 0, None)
    out["chroot"] = call("chroot", MISSING)
    return out


def status():
    fields = {}
    for line in open("/proc/self/status"):
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    keep = ("Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp")
    return {key: fields.get(key) for key in keep}


def socket_answer(family):
    try:
        socket.socket(family, socket.SOCK_STREAM).close()
        return "ok"
    except OSError as error:
        return errno.errorcode.get(error.errno, str(error.errno))


def files():
    out = {}
    home = os.environ.get("HOME", "")
    info = os.stat(home)
    out["home"] = home
    out["home_uid"] = info.st_uid
    out["home_entries"] = sorted(os.listdir(home))
    try:
        with open(os.path.join(home, "written"), "w") as handle:
            handle.write("x")
        out["home_writable"] = True
    except OSError:
        out["home_writable"] = False
    try:
        with tempfile.NamedTemporaryFile() as handle:
            out["tmpdir"] = os.path.dirname(handle.name)
    except OSError as error:
        out["tmpdir"] = "error: " + str(error)
    try:
        out["root_entries"] = sorted(os.listdir("/root"))
    except OSError as error:
        out["root_entries"] = errno.errorcode.get(error.errno)
    with open(__HARNESS__) as handle:
        out["repository_readable"] = "platforms" in handle.read(200)
    out["prefix"] = [os.path.realpath(p) for p in (sys.base_prefix, sys.prefix)]
    return out


out = {"status": status(), "files": files()}
calls = out["calls"] = {
    "mount": call("mount", None, MISSING, b"tmpfs", 0, None),
    "umount2": call("umount2", MISSING, 0),
    "pivot_root": call("pivot_root", MISSING, MISSING),
    "setns": call("setns", -1, 0),
    "open_tree": call("open_tree", -100, b"/", 0),
    "move_mount": call("move_mount", -1, b"", -1, b"", 0xFFFFFFFF),
    "mount_setattr": call("mount_setattr", -1, b"", 0xFFFFFFFF, None, 0),
    "fsopen": call("fsopen", b"no-such-filesystem", 0),
    "fsconfig": call("fsconfig", -1, 0, None, None, 0),
    "fsmount": call("fsmount", -1, 0, 0),
    "fspick": call("fspick", -100, MISSING, 0),
    "chroot": call("chroot", MISSING),
    "unshare_nothing": call("unshare", 0),
    # CLONE_THREAD without CLONE_SIGHAND: the kernel itself answers EINVAL, so nothing is ever created;
    # EPERM can only be the filter's
    "clone_newuser": call("clone", 0x10000000 | 0x00010000, 0, 0, 0, 0),
    "clone_newnet": call("clone", 0x40000000 | 0x00010000, 0, 0, 0, 0),
    "clone3": call("clone3", None, 0),
    "keyctl": call("keyctl", 0, -3, 0),
    "add_key": call("add_key", None, None, None, 0, 0),
    "request_key": call("request_key", None, None, None, 0),
    "bpf": call("bpf", 0xFFFF, None, 0),
    "perf_event_open": call("perf_event_open", None, 0, -1, -1, 0),
    "userfaultfd": call("userfaultfd", 0xFFFF),
    "get_mempolicy": call("get_mempolicy", None, None, 0, None, 0),
    "kcmp": call("kcmp", os.getpid(), os.getpid(), 0, 0, 0),
    "personality_query": call("personality", 0xFFFFFFFF),
    "personality_set": in_child(lambda: call("personality", 0x0040000)),
    "vsock": socket_answer(40),
    "inet": socket_answer(socket.AF_INET),
    "landlock_abi": call("landlock_create_ruleset", None, 0, 1),
    "landlock_add_rule": call("landlock_add_rule", -1, 1, None, 0),
    "landlock_restrict_self": call("landlock_restrict_self", -1, 0),
}
calls["unshare_user_and_net"] = in_child(lambda: call("unshare", 0x10000000 | 0x40000000))
out["userns"] = in_child(user_namespace)

box = []
thread = threading.Thread(target=box.append, args=(1,))
thread.start()
thread.join()
out["thread"] = box == [1]
out["subprocess"] = subprocess.run([sys.executable, "-S", "-c", "print(6 * 7)"], capture_output=True,
                                   text=True).stdout.strip() == "42"
if WITH_TORCH:
    import torch
    torch.set_num_threads(2)
    x = torch.ones(256, 256)
    out["torch"] = {"version": torch.__version__, "matmul": float((x @ x).sum()),
                    "threads": torch.get_num_threads()}
print("PROBE " + json.dumps(out))
'''


def column() -> int:
    return 0 if platforms.host_arch() == "x86_64" else 1


def probe_source(with_torch: bool) -> str:
    numbers = {name: pair[column()] for name, pair in NUMBERS.items()}
    return (PROBE.replace("__NUMBERS__", repr(numbers)).replace("__TORCH__", repr(with_torch))
            .replace("__HARNESS__", repr(str(HARNESS))))


def parse(done: subprocess.CompletedProcess) -> dict:
    lines = [line for line in done.stdout.splitlines() if line.startswith("PROBE ")]
    assert done.returncode == 0 and lines, f"exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return json.loads(lines[-1][len("PROBE "):])


@functools.lru_cache(maxsize=None)
def probe(platform: str) -> dict:
    done = platforms.run(platform, [sys.executable, "-c", probe_source(True)], cwd=str(TESTS.parent), timeout=120)
    result = parse(done)
    result["stderr"] = done.stderr
    return result


@functools.lru_cache(maxsize=None)
def control() -> dict:
    """The same probe on this machine, unconfined: what the kernel answers without the emulation."""
    with tempfile.TemporaryDirectory(prefix="platform-control-") as home:  # the probe writes in its HOME
        done = subprocess.run([sys.executable, "-c", probe_source(False)], capture_output=True, text=True,
                              timeout=120, cwd=str(TESTS.parent), env={**os.environ, "HOME": home, "TMPDIR": home})
    return parse(done)


@pytest.fixture(scope="module")
def emulation():
    reason = platforms.can_emulate()
    if reason:
        pytest.skip(f"the platforms cannot be emulated here: {reason}")


def denied(platform: str, where: str, expected: dict) -> None:
    """Each probe in `expected` answered so under the platform, and otherwise on this machine."""
    got, base = probe(platform)[where], control()[where]
    wrong = {k: got.get(k) for k, v in expected.items() if got.get(k) != v}
    assert not wrong, f"{platform}: expected {expected}, got {wrong}"
    same = {k: base.get(k) for k, v in expected.items() if base.get(k) == v}
    assert not same, f"this machine answers {same} without any emulation: these probes prove nothing here"


MOUNT_DENIALS = {name: "EPERM" for name in ("mount", "umount2", "pivot_root", "setns", "open_tree", "move_mount",
                                            "mount_setattr", "fsopen", "fsconfig", "fsmount", "fspick")}
DOCKER_DENIALS = {name: "EPERM" for name in ("keyctl", "add_key", "request_key", "bpf", "perf_event_open",
                                             "userfaultfd", "get_mempolicy", "kcmp", "personality_set", "vsock")}


# ---------------------------------------------------------------------------------------------
# identity and capabilities

def test_runner_is_an_ordinary_user_without_capabilities(emulation):
    status = probe("runner")["status"]
    assert status["Uid"].split() == ["1001"] * 4 and status["Gid"].split() == ["1001"] * 4
    assert status["Groups"] == ""
    for key in ("CapInh", "CapPrm", "CapEff", "CapAmb"):
        assert int(status[key], 16) == 0, status
    assert status["CapBnd"] == control()["status"]["CapBnd"]  # a runner's bounding set is not cut
    assert status["NoNewPrivs"] == "0" and status["Seccomp"] == "2", status


@pytest.mark.parametrize("platform", ["container-root", "no-sandbox"])
def test_container_root_is_root_with_dockers_capabilities(emulation, platform):
    status = probe(platform)["status"]
    assert status["Uid"].split() == ["0"] * 4 and status["Gid"].split() == ["0"] * 4
    for key in ("CapPrm", "CapEff", "CapBnd"):
        assert status[key] == DOCKER_CAPS, status
    assert int(status["CapInh"], 16) == 0 and int(status["CapAmb"], 16) == 0, status
    assert not int(status["CapEff"], 16) >> 21 & 1  # CAP_SYS_ADMIN
    assert status["NoNewPrivs"] == "0" and status["Seccomp"] == "2", status
    assert control()["status"]["CapEff"] != DOCKER_CAPS


def test_container_user_is_an_ordinary_user_in_dockers_bounding_set(emulation):
    status = probe("container-user")["status"]
    assert status["Uid"].split() == ["1000"] * 4 and status["Gid"].split() == ["1000"] * 4
    for key in ("CapInh", "CapPrm", "CapEff", "CapAmb"):
        assert int(status[key], 16) == 0, status
    assert status["CapBnd"] == DOCKER_CAPS
    assert status["NoNewPrivs"] == "0" and status["Seccomp"] == "2", status


# ---------------------------------------------------------------------------------------------
# namespaces, mounts, clone

def test_runner_gets_a_user_namespace_and_nothing_inside_it(emulation):
    userns = probe("runner")["userns"]
    assert {k: userns.get(k) for k in ("unshare_user", "setgroups", "uid_map", "gid_map")} == dict.fromkeys(
        ("unshare_user", "setgroups", "uid_map", "gid_map"), "ok"), userns
    assert userns["uid_inside"] == 0
    denied("runner", "userns", {"unshare_net": "EPERM", "unshare_mnt": "EPERM", "unshare_pid": "EPERM",
                                "unshare_ipc": "EPERM", "unshare_uts": "EPERM", "unshare_cgroup": "EPERM",
                                "mount": "EPERM", "chroot": "EPERM"})


def test_runner_namespace_flags_pass_the_filter_only_alone(emulation):
    calls = probe("runner")["calls"]
    # the bogus CLONE_THREAD makes the kernel answer EINVAL: the filter let CLONE_NEWUSER through
    assert calls["clone_newuser"] == "EINVAL" and calls["unshare_nothing"] == "ok", calls
    denied("runner", "calls", {"unshare_user_and_net": "EPERM", "clone_newnet": "EPERM", "chroot": "EPERM"})


@pytest.mark.parametrize("platform", DOCKER)
def test_containers_get_no_namespace_at_all(emulation, platform):
    denied(platform, "userns", {"unshare_user": "EPERM"})
    denied(platform, "calls", {"unshare_nothing": "EPERM", "unshare_user_and_net": "EPERM",
                               "clone_newuser": "EPERM", "clone_newnet": "EPERM"})
    assert probe(platform)["calls"]["chroot"] == "ENOENT"  # CAP_SYS_CHROOT is in Docker's set


@pytest.mark.parametrize("platform", PLATFORMS)
def test_mounts_are_refused(emulation, platform):
    denied(platform, "calls", MOUNT_DENIALS)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_clone3_answers_enosys_and_threads_still_start(emulation, platform):
    denied(platform, "calls", {"clone3": "ENOSYS"})
    result = probe(platform)
    assert result["thread"] and result["subprocess"], result


# ---------------------------------------------------------------------------------------------
# Docker's profile, Landlock

@pytest.mark.parametrize("platform", DOCKER)
def test_containers_refuse_what_dockers_profile_refuses(emulation, platform):
    denied(platform, "calls", DOCKER_DENIALS)
    calls = probe(platform)["calls"]
    assert calls["personality_query"] == "ok" and calls["inet"] == "ok", calls


def test_runner_keeps_what_docker_would_refuse(emulation):
    calls, base = probe("runner")["calls"], control()["calls"]
    for name in ("keyctl", "get_mempolicy", "kcmp", "personality_set", "vsock", "inet"):
        assert calls[name] == base[name], (name, calls[name], base[name])


def test_no_sandbox_has_no_landlock(emulation):
    denied("no-sandbox", "calls", {"landlock_abi": "ENOSYS", "landlock_add_rule": "ENOSYS",
                                   "landlock_restrict_self": "ENOSYS"})


@pytest.mark.parametrize("platform", ["runner", "container-root", "container-user"])
def test_landlock_is_left_as_this_machine_has_it(emulation, platform):
    calls, base = probe(platform)["calls"], control()["calls"]
    assert calls["landlock_abi"] == base["landlock_abi"] and calls["landlock_add_rule"] == base["landlock_add_rule"]
    assert calls["landlock_restrict_self"] != "ENOSYS"


# ---------------------------------------------------------------------------------------------
# what must keep working

@pytest.mark.parametrize("platform", PLATFORMS)
def test_python_and_torch_work(emulation, platform):
    torch = probe(platform)["torch"]
    assert torch["matmul"] == 256.0 ** 3 and torch["version"].startswith("2."), torch


@pytest.mark.parametrize("platform", PLATFORMS)
def test_files_look_like_the_platform(emulation, platform):
    result = probe(platform)
    files, uid = result["files"], int(result["status"]["Uid"].split()[0])
    expected_home = {"runner": "/home/runner", "container-user": "/home/user"}.get(platform, "/root")
    assert files["home"] == expected_home and files["home_uid"] == uid and files["home_writable"], files
    if uid:
        assert files["home_entries"] == [], files  # fresh: nothing of this machine's
    assert files["tmpdir"].startswith("/tmp/platform-"), files  # run()'s own, not /tmp itself
    assert not os.path.exists(files["tmpdir"]), "run() left its TMPDIR behind"
    assert files["repository_readable"]
    # /root shows only the way to the Python install, nothing else of this machine's root
    on_the_way = {Path(p).relative_to("/root").parts[0] for p in files["prefix"] if p.startswith("/root/")}
    assert isinstance(files["root_entries"], list) and set(files["root_entries"]) <= on_the_way | {"written"}, files


def test_the_machine_is_left_as_it_was(emulation):
    def mounts():
        return sorted(line.split()[4] for line in open("/proc/self/mountinfo"))
    before = mounts()
    done = platforms.run("container-user", ["/bin/sh", "-c", "exit 0"], timeout=60)
    assert done.returncode == 0, done.stderr
    assert mounts() == before


def test_uid_can_be_chosen(emulation):
    code = "import os; print(os.getuid(), os.getgid(), os.environ['HOME'], os.stat(os.environ['HOME']).st_uid)"
    done = platforms.run("container-user", [sys.executable, "-S", "-c", code], uid=4242, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["4242", "4242", "/home/user", "4242"]


def test_a_missing_command_exits_127_in_one_line(emulation):
    done = platforms.run("runner", ["/nonexistent-platform-command"], timeout=60)
    assert done.returncode == 127, done.stderr
    assert done.stderr.strip().splitlines() == ["platforms: /nonexistent-platform-command: command not found"]


# ---------------------------------------------------------------------------------------------
# the filter itself, both architectures, without running it

def evaluate(program, arch: int, nr: int, arg0: int = 0) -> int:
    """Classic BPF as the kernel runs it on struct seccomp_data (little-endian)."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, arg0, 0, 0, 0, 0, 0)
    pc, acc = 0, 0
    for _ in range(len(program) + 1):
        code, jt, jf, k = program[pc]
        if code == 0x20:  # ld [k]
            acc, pc = struct.unpack_from("<I", data, k)[0], pc + 1
        elif code in (0x15, 0x35, 0x45):  # jeq, jge, jset
            taken = acc == k if code == 0x15 else acc >= k if code == 0x35 else bool(acc & k)
            pc += 1 + (jt if taken else jf)
        elif code == 0x06:  # ret
            return k
        else:
            raise AssertionError(f"unexpected instruction {code:#x}")
    raise AssertionError("the program does not end")


ALLOW, EPERM, ENOSYS = 0x7FFF0000, 0x00050000 | errno.EPERM, 0x00050000 | errno.ENOSYS


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_the_filters_answer_on_both_architectures(arch):
    i = 0 if arch == "x86_64" else 1
    audit = AUDIT_ARCH[arch]

    def answer(platform, name, arg0=0, audit_arch=audit):
        return evaluate(platforms.filter_program(platform, arch), audit_arch, NUMBERS[name][i], arg0)

    for platform in PLATFORMS:
        assert answer(platform, "read") == ALLOW
        assert answer(platform, "mount") == EPERM and answer(platform, "move_mount") == EPERM
        assert answer(platform, "clone3") == ENOSYS
        assert answer(platform, "clone", CLONE_NEWNET) == EPERM
        assert answer(platform, "clone", 0x01200011) == ALLOW  # what fork() passes
        foreign = AUDIT_ARCH_I386 if arch == "x86_64" else AUDIT_ARCH_ARM
        assert answer(platform, "read", audit_arch=foreign) == ENOSYS
        assert answer(platform, "landlock_create_ruleset") == (ENOSYS if platform == "no-sandbox" else ALLOW)
    assert answer("runner", "unshare", CLONE_NEWUSER) == ALLOW
    assert answer("runner", "clone", CLONE_NEWUSER | 17) == ALLOW
    for flag in (CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWTIME):
        assert answer("runner", "unshare", CLONE_NEWUSER | flag) == EPERM, hex(flag)
    assert answer("runner", "chroot") == EPERM and answer("runner", "keyctl") == ALLOW
    for platform in DOCKER:
        assert answer(platform, "unshare", 0) == EPERM
        assert answer(platform, "clone", CLONE_NEWUSER) == EPERM
        assert answer(platform, "keyctl") == EPERM and answer(platform, "bpf") == EPERM
        assert answer(platform, "chroot") == ALLOW
        assert answer(platform, "personality", 0xFFFFFFFF) == ALLOW
        assert answer(platform, "personality", 0x0040000) == EPERM
        assert answer(platform, "personality", 1 << 32) == EPERM  # Docker compares all 64 bits
        assert answer(platform, "socket", 40) == EPERM and answer(platform, "socket", 2) == ALLOW
    if arch == "x86_64":
        assert answer("runner", "read", 0) == ALLOW
        assert evaluate(platforms.filter_program("runner", arch), audit, 0x40000000 | 165) == ENOSYS  # x32


def header_numbers(path: Path) -> dict[str, int]:
    text = path.read_text()
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"#define __NR(?:3264)?_(\w+)\s+(\d+)\b", text)}


@pytest.mark.parametrize("arch,header", [("x86_64", "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
                                         ("aarch64", "/usr/include/asm-generic/unistd.h")])
def test_the_call_numbers_match_the_kernel_headers(arch, header):
    path = Path(header)
    if not path.exists():
        pytest.skip(f"{header} is not installed here (linux-libc-dev)")
    known, i = header_numbers(path), 0 if arch == "x86_64" else 1
    for table in (platforms.SYSCALLS, NUMBERS):
        wrong = {name: (pair[i], known[name]) for name, pair in table.items()
                 if pair[i] is not None and name in known and known[name] != pair[i]}
        unchecked = [name for name, pair in table.items() if pair[i] is not None and name not in known]
        assert not wrong, f"{arch}: numbers differ from {header}: {wrong}"
        assert not unchecked or arch == "aarch64", unchecked  # the generic header lacks a few old x86 calls


# ---------------------------------------------------------------------------------------------
# the command line and the checks before it

@pytest.mark.parametrize("args,message", [
    ([], "missing the platform and the command"),
    (["runner"], "missing '--' before the command"),
    (["--", "true"], "missing the platform before '--'"),
    (["nowhere", "--", "true"], "unknown platform 'nowhere'"),
    (["runner", "--"], "missing the command after '--'"),
    (["runner", "--uid", "abc", "--", "true"], "--uid needs a whole number"),
    (["runner", "--uid", "0", "--", "true"], "--uid needs a whole number"),
    (["runner", "--uid", "--", "true"], "--uid needs a whole number"),
    (["container-root", "--uid", "1000", "--", "true"], "--uid applies to runner and container-user"),
    (["runner", "--uid", "5", "--uid", "6", "--", "true"], "--uid given twice"),
    (["runner", "--verbose", "--", "true"], "unexpected argument '--verbose'"),
])
def test_bad_arguments_get_one_line_and_exit_2(args, message):
    done = subprocess.run([sys.executable, str(HARNESS), *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == "", done
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("platforms: ") and message in lines[0], done.stderr


def test_run_rejects_a_bad_platform_or_uid():
    with pytest.raises(ValueError, match="unknown platform"):
        platforms.run("nowhere", ["true"])
    with pytest.raises(ValueError, match="runs as root"):
        platforms.run("container-root", ["true"], uid=1000)


def test_can_emulate_names_what_is_missing(monkeypatch):
    platforms.can_emulate.cache_clear()
    try:
        monkeypatch.setattr(platforms._host, "machine", lambda: "riscv64")
        reason = platforms.can_emulate()
        assert reason and "riscv64" in reason and "x86_64 and aarch64" in reason
        monkeypatch.undo()
        platforms.can_emulate.cache_clear()
        if platforms.can_emulate() is None:
            monkeypatch.setattr(platforms.os, "geteuid", lambda: 1000)
            platforms.can_emulate.cache_clear()
            assert platforms.can_emulate().startswith("not root")
    finally:
        monkeypatch.undo()
        platforms.can_emulate.cache_clear()
