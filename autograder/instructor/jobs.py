"""A batch's job processes: each grades the students it is sent, one JSON line per student.

`Jobs` keeps `--jobs` of them busy. The first ones are forked from the batch,
which has already imported the grader, pytest and torch; a job that replaces
one that died is started afresh (`python -m autograder.instructor.jobs --job`).
Every job grades with a copy of the batch's one zygote (sandbox/zygote.py).
"""
from __future__ import annotations

import gc
import json
import logging
import os
import select
import signal
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

from autograder.i18n import _, _f, language, set_language
from autograder.core.sections import find
from autograder.instructor.declared import NOTEBOOK_IMPORTS
from autograder.sandbox.limits import Limits

logger = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]
# What the course's notebooks import beyond torch (declared.NOTEBOOK_IMPORTS): pandas is an import of
# about 0.2 s of CPU that every student's worker would pay again. The batch's zygote imports them
# once, before its first copy (worker/main.py, `preload=`).


class Forked:
    """The few Popen methods JobProcess uses, for a job forked from this process."""

    def __init__(self, pid: int):
        self.pid, self.returncode = pid, None

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(str(self.pid), timeout)
            time.sleep(0.01)
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


class JobProcess:
    """One job process: a student in (a JSON line on its stdin), a result line out.

    `JobProcess.fork` copies this process, which has already imported the grader,
    pytest and torch: the batch's first jobs start at once. A job that replaces
    one that died is started afresh (`JobProcess.start`), since by then this
    process runs threads, and forking a threaded process is not safe.
    Either way the job grades with a copy of the batch's one zygote.
    """

    def __init__(self, process, stdin, stdout_fd: int):
        self.process, self.stdin, self.stdout_fd = process, stdin, stdout_fd
        self.buffer = b""

    @classmethod
    def start(cls, device: str, limits: dict, log: Path, zygote_socket) -> "JobProcess":
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        log.parent.mkdir(parents=True, exist_ok=True)
        fd = zygote_socket.fileno()
        with open(log, "ab") as log_handle:
            process = subprocess.Popen(
                [sys.executable, "-m", "autograder.instructor.jobs", "--job", device, json.dumps(limits), str(fd),
                 language()],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log_handle, cwd=ROOT, env=env,
                pass_fds=(fd,))
        zygote_socket.close()
        return cls(process, process.stdin, process.stdout.fileno())

    @classmethod
    def fork(cls, device: str, limits: dict, log: Path, zygote_socket) -> "JobProcess":
        log.parent.mkdir(parents=True, exist_ok=True)
        request_read, request_write = os.pipe()
        reply_read, reply_write = os.pipe()
        log_fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the job: standard streams and the zygote at fixed numbers, nothing else open
            status = 1
            try:
                for fd, number in ((request_read, 0), (reply_write, 1), (log_fd, 2), (zygote_socket.fileno(), 3)):
                    os.dup2(fd, number)
                os.closerange(4, os.sysconf("SC_OPEN_MAX"))  # the parent's pipes to its other jobs, its zygote
                gc.freeze()  # objects of the parent that held those numbers are never finalized here
                status = job_main(device, limits, 3, language())
            except BaseException:
                traceback.print_exc()
            finally:
                os._exit(status)
        for fd in (request_read, reply_write, log_fd):
            os.close(fd)
        zygote_socket.close()
        return cls(Forked(pid), os.fdopen(request_write, "wb"), reply_read)

    def grade(self, student: str, folder: Path, sections: list[str] | None, timeout: float) -> dict:
        try:
            request = {"student": student, "path": str(folder), "section": sections}  # None: every section
            self.stdin.write((json.dumps(request) + "\n").encode())
            self.stdin.flush()
        except OSError:
            raise JobFailed(_("the job process had exited")) from None
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.stdout_fd], [], [], left)[0]:
                raise JobFailed(_f("grading took longer than {timeout:g} s", timeout=timeout))
            chunk = os.read(self.stdout_fd, 1 << 20)
            if not chunk:
                raise JobFailed(_f("the job process died (exit status {status})", status=self.process.wait()))
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def close(self, kill: bool = False):
        if self.process.poll() is None:
            if kill:
                self.process.kill()
            else:
                try:
                    self.stdin.close()
                except OSError:
                    pass
                try:
                    self.process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    self.process.kill()
        self.process.wait()
        try:
            self.stdin.close()
        except OSError:
            pass
        try:
            os.close(self.stdout_fd)
        except OSError:
            pass


class JobFailed(Exception):
    pass


class Jobs:
    """Makes the batch's job processes; owns the one zygote they all fork their workers from."""

    def __init__(self, device: str, limits: dict, logs: Path, sections: list[str]):
        self.device, self.limits, self.logs = device, limits, logs
        self.warm_meta = any(find(section).uses_meta for section in sections)
        self.lock = threading.Lock()
        self.zygote = self._new_zygote()  # first: its imports overlap ours

    def _new_zygote(self):
        from autograder.sandbox.zygote import Zygote

        # the zygote forks two processes per section of every student: cheaper forks pay for themselves
        return Zygote(warm_meta=self.warm_meta, preload=NOTEBOOK_IMPORTS, huge_pages=True)

    def _zygote_copy(self):
        with self.lock:
            if not self.zygote.alive():
                self.zygote.close()
                self.zygote = self._new_zygote()
            return self.zygote.copy_for_job()

    def fork_all(self, count: int) -> list[JobProcess]:
        """The first `count` jobs, forked once the grader's imports are done here (no threads yet)."""
        import autograder.core.grade  # what every job would otherwise import itself
        import autograder.core.plugin  # noqa: F401
        import autograder.core.student  # noqa: F401
        import pytest  # noqa: F401
        import torch

        autograder.core.grade.preload_checks()  # so the first student of each job is not the slow one
        limits = Limits(**self.limits)
        autograder.core.grade.contained_tier(self.zygote, limits, visible_only=False)
        logger.info(self.zygote.sandbox_line(limits))

        torch.set_num_threads(1)
        gc.collect()
        return [JobProcess.fork(self.device, self.limits, self.logs / f"job-{i}.log", self._zygote_copy())
                for i in range(count)]

    def start(self, index: int) -> JobProcess:
        return JobProcess.start(self.device, self.limits, self.logs / f"job-{index}.log", self._zygote_copy())

    def close(self):
        self.zygote.close()


def job_main(device: str, limits: dict, zygote_fd: int, spoken: str) -> int:
    """Inside a job process: grade each student named on stdin, one JSON line each on stdout, in
    the language `spoken` (the batch's: its --lang, its environment or the default).

    All in one pytest session (core/check_session.py): its start and the collection of the
    checks are paid once per job, not once per student. Where it cannot start, each student
    is graded with a pytest run of its own, as `grade` does."""
    import socket

    replies = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)  # whatever else gets printed goes to the job's log, not into the replies
    from autograder.core.check_session import serve_in_session
    from autograder.sandbox.zygote import Zygote

    # The batch's language as it was chosen (--lang included), never chosen again here: the
    # messages and titles of every record are made in this process, and a job that looked only at
    # the environment would write a `--lang zh` batch's results in English.
    set_language(spoken)
    limits = Limits(**limits)
    zygote = Zygote.attach(socket.socket(fileno=zygote_fd))
    requests = open(0, encoding="utf-8", closefd=False)
    status = []

    def serve(session) -> None:
        status.append(grade_requests(requests, replies, zygote, device, limits, session))

    try:
        try:
            served = serve_in_session(serve)
        except Exception:  # before the session began (pytest itself reports what fails inside it)
            traceback.print_exc()
            served = False
        if not served:
            serve(None)
    finally:
        zygote.close()
    return status[0] if status else 1


def grade_requests(requests, replies, zygote, device: str, limits: Limits, session) -> int:
    """Grade each student named on `requests` (a JSON line each), a reply line each on `replies`:
    0 when the requests end, 1 when the zygote has stopped (the batch starts a new job)."""
    from autograder.core.grade import run_checks
    from autograder.core.record import to_record
    from autograder.core.submission import locate

    for line in requests:
        if not line.strip():
            continue
        task = json.loads(line)
        started = time.monotonic()
        reply = {"student": task["student"], "result": None, "grader_errors": []}
        try:
            result = run_checks(locate(Path(task["path"]), task.get("section")), device, limits,
                                launcher=zygote, session=session)
            result.submission = task["student"]
            reply["result"] = to_record(result)  # the grade as data (core/record)
            reply["grader_errors"] = list(result.grader_errors)
        except Exception:
            reply["grader_errors"] = [traceback.format_exc()]
        reply["seconds"] = round(time.monotonic() - started, 3)
        replies.write(json.dumps(reply) + "\n")
        if not zygote.alive():  # its workers cannot be replaced from here: the batch starts a new job
            logger.warning(_("batch job: the zygote has stopped; this job ends"))
            return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--job":  # a job started afresh (JobProcess.start)
        status = job_main(sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
        sys.stderr.flush()
        os._exit(status)  # no slow interpreter teardown: the batch waits for this exit
    print("autograder.instructor.jobs: run `python -m autograder batch ...`", file=sys.stderr)
    sys.exit(2)
