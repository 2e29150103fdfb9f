"""One submission's sections graded in two processes at once, where the machine has two cores or more.

A grading's checks run one after another, and for about half their time the trusted side waits for
the student's worker: one core stays idle. Here the grading process forks once, after its imports
and before any section starts; the forked copy grades every other section with a copy of the same
zygote (the batch's jobs are made alike: instructor/jobs.py), and sends its GradeResult back as the
grade's record with the heatmaps (core/record.py: data, never objects). The two halves are put back
in the sections' order. Nothing is lost: if the copy dies, hangs past the submission's time or sends
anything that is not such a record, this process grades those sections itself, and says so in the
grader's log.

Only on the fork path (a zygote that can copy itself), outside a batch job's session (a batch already
keeps every core busy with students), for two sections or more, and in a process that runs no other
thread (safe_to_fork: the command line's, not a test runner's or a notebook server's). Each half has the
submission's time budget of its own: the grading's wall time stays within it. AUTOGRADER_GRADING_PROCESSES=1
grades in one process (measurement and debugging).
"""
from __future__ import annotations

import json
import logging
import os
import select
import signal
import sys
import threading
import time
import traceback

from autograder.core.record import RecordError, from_record, to_record
from autograder.core.results import GradeResult
from autograder.i18n import _, _f
from autograder.sandbox import tiers

logger = logging.getLogger(__name__)

SWITCH = "AUTOGRADER_GRADING_PROCESSES"  # "1": every section in this process
# the copy's result arrives within the submission's time; past it and this margin, it is graded here
MARGIN_SECONDS = 30.0


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no affinity on this platform
        return os.cpu_count() or 1


def safe_to_fork() -> bool:
    """Whether this process runs no thread but its own and the workers' output drains: a thread that holds
    a lock when the process forks (a test runner's, an IDE's) would leave the copy waiting on it forever."""
    from autograder.sandbox.zygote import DRAIN_THREAD

    main = threading.main_thread()
    return all(thread is main or thread.name == DRAIN_THREAD for thread in threading.enumerate())


def wanted(sources: list, launcher) -> bool:
    """Whether to grade `sources` in two processes: two sections or more, two cores, the fork path, and a
    process safe to fork."""
    return (len(sources) >= 2 and cores() >= 2 and os.environ.get(SWITCH, "").strip() != "1"
            and getattr(launcher, "kind", "") == "fork" and hasattr(launcher, "copy_for_job")
            and hasattr(os, "fork") and safe_to_fork())


def halves(sources: list) -> tuple[list, list]:
    """(this process's, the copy's): every other section, so that each half gets early and late sections
    alike (neighbouring sections cost about the same; part 2's cost more than part 1's)."""
    return sources[0::2], sources[1::2]


def grade(sources: list, run, launcher, limits) -> GradeResult:
    """Grade `sources` in two processes: `run(part, launcher)` grades a part (grade.run_checks' own work)
    and returns its GradeResult; the result holds every section, in the order of `sources`."""
    started = time.monotonic()
    mine, theirs = halves(sources)
    logger.debug("grading in two processes: %s here, %s in the second", " ".join(src.section.id for src in mine),
                 " ".join(src.section.id for src in theirs))
    copy_socket = launcher.copy_for_job()  # waits only for the meta warm-up asked before (the first spawn would)
    read_end, write_end = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the copy: grade `theirs`, send the record, leave without the interpreter's teardown
        os.close(read_end)
        _copy_main(theirs, run, launcher, copy_socket, write_end)
    os.close(write_end)
    copy_socket.close()
    try:
        result = run(mine, launcher)
        deadline = time.monotonic() + limits.submission_seconds + MARGIN_SECONDS
        other = _received(read_end, pid, deadline)
    except BaseException:  # interrupted, or this half failed: the copy must not outlive the grading
        _stop(pid)
        raise
    finally:
        os.close(read_end)
    if other is None:  # the copy's sections graded here after all (why: in the log)
        other = run(theirs, launcher)
    merged = _merged(sources, result, other)
    merged.execution_time = time.monotonic() - started
    return merged


def _copy_main(part: list, run, launcher, copy_socket, write_end: int) -> None:
    """In the forked copy: its sections graded with the zygote's copy; the record written; exit."""
    status = 1
    try:
        from autograder.sandbox.zygote import Zygote

        signal.signal(signal.SIGTERM, _interrupted)  # stopped by the grading process: tear down its workers
        for handle in (launcher.reader, launcher.control):  # the zygote is the grading process's to talk to
            handle.close()
        zygote = Zygote.attach(copy_socket)
        zygote.sandbox, zygote.warmed = launcher.sandbox, set(launcher.warmed)  # the copy was made after both
        try:
            data = to_record(run(part, zygote), figures=True)
        finally:
            zygote.close()
        payload = json.dumps(data).encode("utf-8")
        status = 0
    except BaseException:
        payload = json.dumps({"failed": traceback.format_exc()[-3000:]}).encode("utf-8")
    try:
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(payload)
    finally:
        os._exit(status)


def _interrupted(signum, frame):
    raise KeyboardInterrupt


def _received(read_end: int, pid: int, deadline: float) -> GradeResult | None:
    """The copy's GradeResult, or None (the reason logged) where it died, hung or sent something else."""
    chunks = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([read_end], [], [], left)[0]:
            _stop(pid)
            logger.warning(_("the second grading process did not answer in time: its sections are graded again here"))
            return None
        chunk = os.read(read_end, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    status = os.waitpid(pid, 0)[1]
    try:
        data = json.loads(b"".join(chunks).decode("utf-8"))
        if isinstance(data, dict) and "failed" in data:
            raise RecordError(str(data["failed"]))
        return from_record(data, figures=True)
    except (ValueError, UnicodeDecodeError) as error:  # RecordError is a ValueError
        logger.warning(_f("the second grading process failed (exit status {status}): its sections are graded "
                          "again here: {error}", status=os.waitstatus_to_exitcode(status), error=str(error)[-1000:]))
        return None


def _stop(pid: int) -> None:
    """Stop the copy: SIGTERM first (its workers torn down as after an interrupt), then SIGKILL."""
    try:
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            if os.waitpid(pid, os.WNOHANG)[0]:
                return
            time.sleep(0.02)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    except ProcessLookupError:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass


def _merged(sources: list, first: GradeResult, second: GradeResult) -> GradeResult:
    """One GradeResult of both halves: the sections in the order of `sources`, the errors of both, the
    weaker sandbox tier of the two (what the student's code ran under, at worst)."""
    by_id = {section.id: section for section in first.sections + second.sections}
    return GradeResult(submission=first.submission, device=first.device,
                       sections=[by_id[src.section.id] for src in sources if src.section.id in by_id],
                       grader_errors=first.grader_errors + second.grader_errors, sandbox=tiers.weakest(first.sandbox, second.sandbox),
                       weak=first.weak or second.weak, torch=first.torch or second.torch)
