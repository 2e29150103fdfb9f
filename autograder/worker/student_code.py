"""Running a student's cells: each under its time limit, without a shell, and the description of
what it raised, located in the student's own cells (their label and line) for the trusted side.
"""
import contextlib
import re
import signal
import threading
import traceback

from .transposed import last_student_frame, transposed_dims

STUDENT_FILE_PREFIX = "<student "  # a cell's code is compiled under "<student LABEL>"


def is_out_of_memory(error: BaseException, message: str) -> bool:
    if isinstance(error, MemoryError):
        return True
    return isinstance(error, RuntimeError) and (
        "can't allocate memory" in message or "not enough memory" in message)


def memory_limit_bytes() -> int | None:
    """The address space this worker may take, in bytes, or None where no limit is set (or none can
    be: Windows has no `resource`): sent as a number, for the trusted side to word."""
    try:
        import resource  # not on Windows
    except ImportError:
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft == resource.RLIM_INFINITY else int(soft)


def student_cell(filename: str):
    """The label of the student's cell that `filename` names (Worker.load compiles each cell under
    one), or None for any other file: torch's, the standard library's, the worker's own."""
    if filename.startswith(STUDENT_FILE_PREFIX):
        return filename[len(STUDENT_FILE_PREFIX):-1]
    return None


MAX_WARNINGS = 10  # a call's warnings sent back, at most (a loop that warns each time sends ten)
# where in torch's C++ a warning was raised: nothing a student can act on
TORCH_SOURCE = re.compile(r"\s*\(Triggered internally at [^)]*\)\.?\s*$")


def describe_warnings(caught, locate=student_cell) -> list:
    """The warnings of `caught` (warnings.catch_warnings(record=True)) raised at a line of the
    student's cells, once each, as data: torch's own warning about the student's `x.T` is raised at
    the student's line and is one; those raised inside torch, the standard library or the grader (the
    checks' calls on the meta device, the grader's probes) are not the student's doing and are left out."""
    described = []
    for warning in caught:
        label = locate(str(warning.filename))
        if label is None:
            continue
        entry = {"category": warning.category.__name__[:100],
                 "message": TORCH_SOURCE.sub("", str(warning.message)).strip()[:500],
                 "cell": label, "lineno": int(warning.lineno or 0)}
        if entry not in described:
            described.append(entry)
        if len(described) == MAX_WARNINGS:
            break
    return described


def describe_error(error: BaseException, kind: str = "raised", locate=student_cell) -> dict:
    """A student-facing description: the exception, where in THEIR code it happened (the cell and
    line number), and that line's text, which the student recognises and hints are matched on.
    locate: filename -> the student's cell label, or None where the frame is not theirs."""
    where, line, cell, lineno = "", "", "", None
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        label = locate(frame.filename)
        if label is not None:
            where = f"{label}, line {frame.lineno}"
            # also as data: the trusted side words the place in the reader's language (autograder/i18n)
            cell, lineno = label, frame.lineno  # a number: never a figure inside a sentence
            line = (frame.line or "").strip()[:200]
            break
    if isinstance(error, NotImplementedError):
        kind = "stub"
    try:
        message = str(error)
    except Exception:
        message = "(message could not be shown)"
    described = {
        "kind": kind,
        "type": type(error).__name__[:100],
        "message": message[:2000],
        "where": where,
        "cell": cell,
        "lineno": lineno,
        "line": line,
    }
    dims = transposed_dims(line, last_student_frame(error.__traceback__, locate)) if line else []
    if dims:  # the evidence for the `.T` hint: numbers, which the trusted side checks (core/hints.py)
        described["transposed_dims"] = dims
    if getattr(error, "blocked_while_grading", False):  # a package closed to graded code: its name, as data
        described["blocked_module"] = str(getattr(error, "name", ""))[:200]
    if is_out_of_memory(error, message):  # the limit as a number: the trusted side says it (core/failures.py)
        described.update(kind="memory", limit_bytes=memory_limit_bytes())
    return described


class NoShell:
    """What `get_ipython()` gives a graded notebook: IPython's calls for the magics the grader leaves
    in place (%matplotlib, %pip, !cmd; see autograder/core/magics.py) run nothing and return nothing, and
    so does any other shell method a notebook calls (`set_custom_exc`, `register_magic_function`):
    grading has no display, so there is nothing for them to change."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _nothing

    @staticmethod
    def getoutput(*_args, **_kwargs):  # `files = !ls`: an empty list of lines, so the cell goes on
        return []


class CellInterrupted(BaseException):
    """A cell ran past its limit. A BaseException, so `except Exception` in the cell does not stop it."""


def _interrupt(_signum, _frame):
    raise CellInterrupted()


@contextlib.contextmanager
def cell_limit(seconds):
    """Interrupt the code run inside after `seconds` (None: no limit).

    POSIX: a real-time timer's SIGALRM, which also wakes a sleeping or blocked
    call. Elsewhere (the portable path on Windows): a timer thread that
    interrupts the main thread as Ctrl-C would.
    """
    if not seconds or seconds <= 0:
        yield
        return
    if hasattr(signal, "setitimer"):
        previous = signal.signal(signal.SIGALRM, _interrupt)
        signal.setitimer(signal.ITIMER_REAL, float(seconds))
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        return
    import _thread

    previous = signal.signal(signal.SIGINT, _interrupt)
    timer = threading.Timer(float(seconds), _thread.interrupt_main)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)


def _nothing(*_args, **_kwargs):
    return None


def no_shell() -> NoShell:
    return NoShell()
