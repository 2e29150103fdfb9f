"""The fork path (Linux): the trusted side's handle on worker processes.

`Zygote` starts `worker/boot.py` (the worker package's main) in a fresh interpreter
  (isolated mode, a fixed minimal environment) before the trusted process has
  computed any answer, so nothing secret can leak into it by fork, and asks it
  for a child per section. Each child confines itself in the strongest sandbox
  tier the machine allows (worker/confine.py) and reports the layers in force.
  A child that dies or runs past its time is killed with everything it
  started (its PID namespace's init, or its subreaper, which kills all below
  it); the next request starts a new one.
The portable path (portable.py) serves Windows, macOS and wherever fork is
unavailable or unsafe; launch.py picks one (`AUTOGRADER_WORKER=fork|spawn`
forces it). Both give `spawn(limits, config) -> child` and `warm(device)` (load a device's
kernels once, for every section after), where a child answers `request`,
`signal`, `finish`, `kill` and `printed`; `SectionWorker` (student.py) needs
nothing more. `tiers.py` turns their reports into the sandbox tier.
"""
from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

from autograder.sandbox.limits import MAX_REPLY_BYTES, OUTPUT_CAP, WORKER_BOOT, Limits, minimal_env
from autograder.sandbox.workdir import make_workdir, remove_tree
from autograder.worker import procfs, wire

MAX_SPAWNS = 3
# the name of a child's output drain thread: it only reads a pipe into its own buffer, taking no lock that
# another thread could hold, so a process forked while one runs is safe (core/two_processes.py)
DRAIN_THREAD = "worker-output"


def sandbox_wanted() -> bool:
    """AUTOGRADER_SANDBOX=off turns the namespaces off (debugging and measurement only)."""
    return os.environ.get("AUTOGRADER_SANDBOX", "on").lower() not in ("off", "0", "no", "false")


def session_members(sid: int) -> list[int]:
    """PIDs of the processes in session `sid` (empty where there is no /proc)."""
    return procfs.processes_where(procfs.SESSION, sid)


def kill_session(sid: int) -> None:
    for pid in session_members(sid):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


class Zygote:
    """One pre-started interpreter with torch imported, forking a child per section.

    `Zygote()` starts the interpreter. A batch starts one with `warm_meta=True`
    and the modules its notebooks import (`preload`), its memory in huge pages
    (`huge_pages`: cheaper forks, worker/huge_pages.py), and gives each job process
    a copy (`copy_for_job`, then `Zygote.attach` in the job), so that torch and
    those modules are imported and warmed once for all its jobs.
    """

    kind = "fork"

    def __init__(self, warm_meta: bool = False, preload: tuple[str, ...] = (), huge_pages: bool = False):
        self.control, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        options = (["meta"] if warm_meta else []) + ([f"preload={','.join(preload)}"] if preload else []) \
            + (["huge"] if huge_pages else [])
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-B", str(WORKER_BOOT), str(child_end.fileno())] + options,
            pass_fds=(child_end.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=minimal_env(),
            cwd=tempfile.gettempdir(),
            start_new_session=True,
        )
        child_end.close()
        self._talk_over(self.control)

    def _talk_over(self, control: socket.socket) -> None:
        """The state of a handle that sends requests on `control` (a started zygote's or a copy's)."""
        self.control = control
        self.lock = threading.Lock()
        self.reader = control.makefile("rb")
        self.sandbox: dict | None = None  # what the first child reported about its confinement
        self.warmed: set[str] = set()  # devices asked for: the zygote keeps them warm for every child after
        self.warm_pending = False  # a `warm` answer to read before the next request is sent

    @classmethod
    def attach(cls, control: socket.socket) -> "Zygote":
        """A handle on a copy made by `copy_for_job`: spawns alike; it ends when `control` closes."""
        zygote = cls.__new__(cls)
        zygote.process = None
        zygote._talk_over(control)
        return zygote

    def warm(self, device: str = "meta") -> None:
        """Have the zygote load `device`'s kernels (only "meta" is honoured) before it forks another
        child. Returns at once: the zygote warms while this process goes on, and the next request
        waits for it. A grading whose checks use the meta device asks once; no child then loads
        those kernels (and sympy with them) again, and a grading that never uses it never pays."""
        with self.lock:
            if device in self.warmed:  # a batch job's later students: asked already
                return
            self._settle()
            try:
                self.control.sendall(wire.dumps({"op": "warm", "device": device}))
            except OSError:
                return  # the zygote is gone: the next spawn says so
            self.warmed.add(device)
            self.warm_pending = True

    def _settle(self) -> None:
        """Read the answer of the `warm` request sent: a request is sent only once the zygote has
        answered the one before (a stream socket could otherwise hand it two requests in one read)."""
        if self.warm_pending:
            self.warm_pending = False
            self.reader.readline()  # b"" where the zygote died: the request after it then fails

    def copy_for_job(self) -> socket.socket:
        """Ask for a forked copy of this zygote; returns the socket a job attaches to.

        Returns at once: the copy is made when the zygote is ready (its imports and
        warm-ups done), and the job's first spawn request waits for it.
        """
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with self.lock:
                self._settle()
                socket.send_fds(self.control, [wire.dumps({"op": "zygote"})], [theirs.fileno()])
        finally:
            theirs.close()
        return mine

    def alive(self) -> bool:
        if self.process is not None:
            return self.process.poll() is None
        try:  # a copy: gone when its end of the socket is closed
            readable = select.select([self.control], [], [], 0)[0]
            return not readable or self.control.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
        except OSError:
            return False

    def spawn(self, limits: Limits, config: dict) -> "Child":
        conn, conn_child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        out_read, out_write = os.pipe()
        workdir = make_workdir()
        request = {
            "op": "spawn",
            "config": config,
            "limits": {
                "workdir": workdir,
                # the CUDA driver reserves virtual address space far beyond any sensible
                # RLIMIT_AS, so on a GPU the address-space limit would stop CUDA itself
                "memory_bytes": 0 if config.get("device") == "cuda" else limits.memory_bytes,
                "cpu_seconds": limits.cpu_seconds,
                "file_bytes": limits.file_bytes,
                "processes": limits.processes,
                "sandbox": limits.sandbox if sandbox_wanted() else "off",
            },
        }
        with self.lock:
            try:
                self._settle()
                socket.send_fds(self.control, [wire.dumps(request)], [conn_child.fileno(), out_write])
                line = self.reader.readline()
            finally:
                conn_child.close()
                os.close(out_write)
        if not line:
            os.close(out_read)
            conn.close()
            remove_tree(workdir)
            detail = ""
            if self.process is not None and self.process.poll() is not None:
                detail = self.process.stderr.read(2000).decode(errors="replace")
            raise RuntimeError(f"the grading worker could not start: {detail.strip()[-500:]}")
        reply = wire.loads(line)
        init, reaper = reply.get("init"), reply.get("reaper")
        self.sandbox = {"layers": list(reply.get("layers") or []),  # the latest child's: what grading got
                        "missing": list(reply.get("missing") or []),
                        # the folder of Python other users cannot read, when it kept the child root
                        "unreadable": str(reply.get("unreadable") or ""),
                        "asked": limits.sandbox}
        return Child(int(reply["pid"]), conn, out_read, workdir,
                     init_pid=int(init) if isinstance(init, int) and init > 1 else None,
                     reaper_pid=int(reaper) if isinstance(reaper, int) and reaper > 1 else None)

    def probe(self, limits: Limits | None = None) -> dict:
        """Start one child without student code under `limits`, and return what it reported."""
        self.sandbox = None
        child = self.spawn(limits or Limits(), {"names": []})
        child.kill()
        return self.sandbox

    def sandbox_line(self, limits: Limits | None = None) -> str:
        """One line for the grader's log: the tier, the layers in force and the ones missing."""
        from autograder.sandbox.tiers import describe

        return describe(self.sandbox, limits or Limits())

    def close(self):
        for closing in (self.reader.close, self.control.close):
            try:
                closing()
            except OSError:
                pass
        if self.process is None:  # a copy ends by itself once its socket is closed
            return
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.process.wait()
        if self.process.stderr:
            self.process.stderr.close()


@dataclass
class Child:
    pid: int
    conn: socket.socket
    out_fd: int
    workdir: str
    output: bytearray = field(default_factory=bytearray)
    dropped: int = 0
    buffer: bytearray = field(default_factory=bytearray)
    init_pid: int | None = None  # PID 1 of the child's PID namespace, when it has one
    reaper_pid: int | None = None  # its subreaper, when it has no PID namespace (the landlock tier)
    signalled: bool = False  # killed once: never signal its (possibly reused) PIDs again

    def __post_init__(self):
        self.drain = threading.Thread(target=self._drain, name=DRAIN_THREAD, daemon=True)
        self.drain.start()

    def _drain(self):
        """Keep the first OUTPUT_CAP bytes of what the child prints; count the rest."""
        while True:
            try:
                chunk = os.read(self.out_fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            room = OUTPUT_CAP - len(self.output)
            if room > 0:
                self.output += chunk[:room]
            self.dropped += max(0, len(chunk) - max(room, 0))
        os.close(self.out_fd)

    def request(self, message: dict, timeout: float):
        """Send one request; return the decoded reply, or None if the child died or timed out."""
        deadline = time.monotonic() + timeout
        if not self.send(message):
            return None, "died"
        return self.receive(deadline)

    def send(self, message: dict) -> bool:
        """Send one request without waiting for its answer (`receive` reads it); False: the child is gone."""
        try:
            self.conn.sendall(wire.dumps(message))
        except OSError:
            return False
        return True

    def receive(self, deadline: float):
        """The reply to the request sent last, by `deadline` (time.monotonic()): (reply, "ok"), or None and
        why not. What is already waiting when it is read is read, even after the deadline (a reply sent
        ahead, `SectionWorker.prepare`, may be read long after it came)."""
        searched = 0  # the buffer before this offset holds no newline: each byte is searched once
        while (end := self.buffer.find(b"\n", searched)) < 0:
            searched = len(self.buffer)
            ready, _, _ = select.select([self.conn], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                return None, "timeout"
            try:
                chunk = self.conn.recv(1 << 20)
            except OSError:
                return None, "died"
            if not chunk:
                return None, "died"
            self.buffer += chunk  # a bytearray grows in place: receiving is linear in the reply
            if len(self.buffer) > MAX_REPLY_BYTES:
                return None, "oversized"
        line = bytes(self.buffer[:end])
        del self.buffer[:end + 1]
        try:
            return wire.loads_reply(line), "ok"
        except wire.WireError:
            return None, "garbled"

    def bye(self):
        """Ask the child to leave on its own (it is signalled right after anyway)."""
        try:
            self.conn.sendall(wire.dumps({"op": "bye"}))
        except OSError:
            pass

    def kill(self):
        """Stop the child and everything it started, then collect its output and clean up."""
        self.signal()
        self.finish()

    def signal(self):
        """SIGKILL the child and what it started; returns at once (the kernel tears them down).

        A grading that ends kills all its children first and waits for them after
        (`finish`), so their teardowns overlap instead of queueing one behind another.
        """
        if self.signalled:
            return
        self.signalled = True
        # The namespace's init first: the kernel then kills every process inside it.
        # The supervisor keeps init's PID from being reused until it is killed here.
        if self.init_pid is not None:
            try:
                os.kill(self.init_pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if self.reaper_pid is not None:  # it kills everything below it, then closes the output pipe
            try:
                os.kill(self.reaper_pid, signal.SIGTERM)
                return
            except (ProcessLookupError, PermissionError):
                pass
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.init_pid is None:  # no PID namespace: what double-forked but kept the session
            kill_session(self.pid)  # (inside one, killing init already took everything)

    def finish(self):
        """After `signal`: wait for the output pipe to close (every process holding it is gone)."""
        self.conn.close()
        self.drain.join(timeout=6 if self.reaper_pid else 2)  # the subreaper may take up to 5 s
        remove_tree(self.workdir)

    def printed(self) -> str:
        text = self.output.decode(errors="replace")
        if self.dropped:
            text += f"\n[... {self.dropped} more bytes of output were dropped]"
        return text
