"""The portable worker path: one spawned interpreter, pipes, timeouts by killing it.

Used where the fork path cannot run (Windows, macOS, or AUTOGRADER_WORKER=spawn):
no fork, no AF_UNIX, no `select` on pipes, no process groups are needed.
`Launcher` starts `worker/boot.py --spawn` with `subprocess` (isolated mode, the
same minimal environment as the fork path) and talks to it over its stdin and
stdout; a reader thread turns stdout into lines, so a request waits with a
plain queue timeout. Every section gets a session in that one process (one
torch import for all of them: a spawn costs seconds, a fork milliseconds); the
worker restores the interpreter's baseline between sessions. A call past its
time, a crash or a garbled reply kills the process, and the next spawn starts
a fresh one. No sandbox holds here: the tier is "none", and hidden grading
refuses it unless told `--sandbox weak`.
"""
from __future__ import annotations

import itertools
import json
import os
import queue
import subprocess
import sys
import threading

from autograder.worker import wire
from autograder.sandbox.limits import MAX_REPLY_BYTES, OUTPUT_CAP, WORKER_BOOT, Limits, minimal_env
from autograder.sandbox.workdir import make_workdir, remove_tree

START_SECONDS = 120.0  # importing torch on a slow laptop, first run after install included
_EOF = object()


def _settings(limits: Limits) -> tuple:
    """What a worker process is started with: a process serves only the limits it was started with."""
    return (limits.memory_bytes, limits.cpu_seconds, limits.file_bytes)


class Process:
    """One spawned worker interpreter and the threads that read its two pipes."""

    def __init__(self, limits: Limits, workdir: str):
        settings = {"workdir": workdir, "memory_bytes": limits.memory_bytes,
                    "cpu_seconds": limits.cpu_seconds, "file_bytes": limits.file_bytes}
        options = {}
        if os.name == "nt":
            options["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP
        else:
            options["start_new_session"] = True
        env = minimal_env()
        if os.name == "nt":  # Windows needs these to start a process and find its DLLs
            env.update({k: os.environ[k] for k in ("SYSTEMROOT", "PATH", "PATHEXT", "COMSPEC")
                        if k in os.environ})
        self.popen = subprocess.Popen(
            [sys.executable, "-I", "-B", str(WORKER_BOOT), "--spawn", json.dumps(settings)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=env, cwd=workdir, **options)
        self.replies: queue.Queue = queue.Queue()
        self.log = bytearray()
        self.warmed = False  # asked to warm the meta device (Launcher.warm)
        self.lock = threading.Lock()
        threading.Thread(target=self._read_replies, daemon=True).start()
        threading.Thread(target=self._read_log, daemon=True).start()

    def _read_replies(self):
        stream = self.popen.stdout
        try:
            while True:
                line = stream.readline(MAX_REPLY_BYTES + 1)
                if not line:
                    break
                if not line.endswith(b"\n"):  # longer than any reply may be
                    self.replies.put(b"")
                    break
                self.replies.put(line)
        except (OSError, ValueError):
            pass
        self.replies.put(_EOF)

    def _read_log(self):
        """Output below Python's sys.stdout (C libraries, a crash's last words): capped."""
        try:
            while chunk := self.popen.stderr.read1(65536):
                room = OUTPUT_CAP - len(self.log)
                if room > 0:
                    self.log += chunk[:room]
        except (OSError, ValueError):
            pass

    def alive(self) -> bool:
        return self.popen.poll() is None

    def send(self, message: dict) -> bool:
        try:
            self.popen.stdin.write(wire.dumps(message))
            self.popen.stdin.flush()
            return True
        except (OSError, ValueError):
            return False

    def receive(self, timeout: float, parse=wire.loads_reply):
        """(reply, status): status is ok, timeout, died, oversized or garbled. Replies are checked
        against the schema (wire.loads_reply); the greeting, sent before any student code, is not one."""
        try:
            line = self.replies.get(timeout=max(0.0, timeout))
        except queue.Empty:
            return None, "timeout"
        if line is _EOF:
            self.replies.put(_EOF)  # every later receive sees the end too
            return None, "died"
        if line == b"":
            return None, "oversized"
        try:
            return parse(line), "ok"
        except wire.WireError:
            return None, "garbled"

    def kill(self):
        """Kill the interpreter and, where the platform lets us, what it started."""
        if self.popen.poll() is None:
            if os.name == "nt":
                # the process tree: TerminateProcess alone would leave the student's own children
                subprocess.run(["taskkill", "/F", "/T", "/PID", str(self.popen.pid)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            elif hasattr(os, "killpg"):
                try:
                    os.killpg(self.popen.pid, 9)
                except OSError:
                    pass
            try:
                self.popen.kill()
            except (OSError, AttributeError):  # AttributeError: a Python without signal.SIGKILL
                try:
                    os.kill(self.popen.pid, 9)
                except OSError:
                    pass
        try:
            self.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            try:
                stream.close()
            except OSError:
                pass


class Launcher:
    """The portable counterpart of sandbox.zygote.Zygote: `spawn` gives a section its own session."""

    kind = "spawn"

    def __init__(self, limits: Limits | None = None):
        self.process: Process | None = None
        self.workdir: str | None = None
        self.sandbox: dict | None = None
        self.ids = itertools.count(1)
        self.lock = threading.Lock()
        self.pending: tuple | None = None
        self.settings: tuple | None = None
        self.meta_wanted = False  # a grading asked for the meta device: every process started is warmed
        self._start(limits or Limits())  # now: its torch import overlaps the trusted side's

    def _start(self, limits: Limits) -> None:
        self.workdir = make_workdir()
        self.pending = (Process(limits, self.workdir), _settings(limits))
        if self.meta_wanted:  # one started for other limits, or after a crash: warmed before its first section
            self._send_warm(self.pending[0])

    def _ready_process(self, limits: Limits) -> Process:
        if self.process is not None and self.process.alive() and self.settings == _settings(limits):
            return self.process
        if self.pending is not None and self.pending[1] != _settings(limits):
            self.pending[0].kill()
            self.pending = None
        if self.pending is None:
            self._stop_process()
            self._start(limits)
        process, self.settings = self.pending
        self.pending = None
        hello, status = process.receive(START_SECONDS, parse=wire.loads)
        if status != "ok" or not isinstance(hello, dict) or not hello.get("ready"):
            process.kill()
            detail = process.log.decode(errors="replace").strip()[-500:]
            raise RuntimeError(f"the grading worker could not start: {detail or status}")
        self.sandbox = {"layers": [x for x in hello.get("layers") or [] if isinstance(x, dict)],
                        "missing": [x for x in hello.get("missing") or [] if isinstance(x, dict)],
                        "asked": limits.sandbox}
        self.process = process
        return process

    def spawn(self, limits: Limits, config: dict) -> "Session":
        with self.lock:
            process = self._ready_process(limits)
            session = Session(self, process, f"s{next(self.ids)}")
        reply, status = session.request({"op": "open", "config": config}, START_SECONDS)
        if reply is None or not reply.get("ok"):
            raise RuntimeError(f"the grading worker did not open a session ({status})")
        return session

    def warm(self, device: str = "meta") -> None:
        """Have the worker process load the meta device's kernels (sympy with them, a quarter of a
        second) before the first section, while the trusted side imports pytest, instead of in the
        first check that uses them; so too every process started after. Never for "cuda" (see
        worker/serve.py warm_up)."""
        if device != "meta":
            return
        with self.lock:
            self.meta_wanted = True
            process = self.pending[0] if self.pending else self.process
            if process is not None:
                self._send_warm(process)

    @staticmethod
    def _send_warm(process: Process) -> None:
        """Once per process, no reply; the worker ignores it once it has served a section."""
        if not process.warmed:
            process.warmed = process.send({"op": "warm", "device": "meta"})

    def probe(self, limits: Limits | None = None) -> dict:
        self._ready_process(limits or Limits())
        return self.sandbox

    def sandbox_line(self, limits: Limits | None = None) -> str:
        from autograder.sandbox.tiers import describe

        return describe(self.sandbox, limits or Limits())

    def alive(self) -> bool:
        return True  # a dead process is replaced by the next spawn

    def _stop_process(self):
        for process in [self.process] + ([self.pending[0]] if self.pending else []):
            if process is not None:
                process.kill()
        self.process, self.pending = None, None
        if self.workdir is not None:
            remove_tree(self.workdir)
            self.workdir = None

    def close(self):
        with self.lock:
            self._stop_process()


class Session:
    """One section's worker on the portable path: the same interface as workers.Child."""

    def __init__(self, launcher: Launcher, process: Process, name: str):
        self.launcher, self.process, self.name = launcher, process, name
        self.pid = process.popen.pid
        self.output: list[str] = []
        self.broken = False

    def request(self, message: dict, timeout: float):
        with self.launcher.lock:
            if self.broken or not self.process.alive() and self.process.replies.empty():
                return None, "died"
            if not self.process.send({**message, "session": self.name}):
                return None, "died"
            reply, status = self.process.receive(timeout)
        if reply is None:
            self.broken = True
            self.launcher_kill()
            return None, status
        printed = reply.pop("printed", "") if isinstance(reply, dict) else ""
        if printed:
            self.output.append(str(printed)[:2 * OUTPUT_CAP])  # the worker capped it already
        return reply, status

    def launcher_kill(self):
        """A timeout, crash or garbled reply: the process is in an unknown state, so it goes."""
        with self.launcher.lock:
            if self.launcher.process is self.process:
                self.launcher._stop_process()
            else:
                self.process.kill()

    def signal(self):
        if not self.broken and self.process.alive():
            with self.launcher.lock:
                self.process.send({"op": "close", "session": self.name})
                self.process.receive(5.0)

    def bye(self):
        pass  # `signal` closes the session: the process serves the other sections

    def finish(self):
        pass

    def kill(self):
        self.signal()

    def printed(self) -> str:
        text = "".join(self.output)
        if len(text) > OUTPUT_CAP + 200:
            text = text[:OUTPUT_CAP] + "\n[... more output was dropped]"
        return text
