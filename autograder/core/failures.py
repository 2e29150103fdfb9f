"""What a student reads when their code fails in the worker: the worker sends what happened as data
(the exception, the cell and line, the line's code), and the trusted side words it here, in the
reader's language, with a hint where the evidence fits one (core/hints.py)."""
from __future__ import annotations

from autograder.core.extract import TAMPERING
from autograder.core.hints import device_hint, hint_for
from autograder.core.shortening import shorten
from autograder.i18n import _, _f
from autograder.core.harness import StudentFailure

GIB, MIB = 1024**3, 1024**2
WARNINGS_SHOWN = 10  # a section's warnings shown to the student, at most


def tampering_failure(places: list[str]) -> StudentFailure:
    """Why no check of a notebook that reaches into the grader's watch runs (extract.tampering's places)."""
    return StudentFailure(_f("not run: your notebook reaches into the grader's watch or torch's internals "
                             "({place}); this section scores 0 and is flagged for your instructor: remove that "
                             "code and hand the notebook in again", place=places[0]),
                          kind=TAMPERING)


def place(error: dict) -> str:
    """'the cell "def f(x):", line 3': where in the student's code an error was raised, in the reader's
    language where the worker sent the cell and line as data (else the worker's own words)."""
    cell, lineno = error.get("cell"), error.get("lineno")
    if isinstance(cell, str) and cell and isinstance(lineno, int) and not isinstance(lineno, bool):
        return _f("{cell}, line {line}", cell=cell, line=lineno)
    return str(error.get("where") or "")


def where_raised(error: dict) -> str:
    """ ' (the cell "def f(x):", line 3: return x.T @ x)': the student's cell, line and its code."""
    where, line = place(error), str(error.get("line") or "")
    if not where:
        return ""
    if line:
        return _f(" ({where}: {line})", where=where, line=line)
    return _f(" ({where})", where=where)


def heard(warnings: list, reply: dict) -> dict:
    """`reply`, a worker's, after adding to `warnings` those of its warnings (the student's code raised
    them; wire checked their shape) that it does not hold yet: the checks call the code many times.
    At most WARNINGS_SHOWN in all: code that warns something new on every call adds no page of notes."""
    for warning in reply.get("warnings") or ():
        if warning not in warnings and len(warnings) < WARNINGS_SHOWN:
            warnings.append(warning)
    return reply


def warning_words(warning: dict) -> str:
    """'warning from your code (the cell "def f(x):", line 3): UserWarning: ...': one warning the
    student's code raised, as the worker sent it."""
    return _f("warning from your code ({where}): {category}: {message}", where=place(warning),
              category=warning["category"], message=shorten(warning["message"], 300))


def memory_size(size: int) -> str:
    """A memory limit in the unit people set it in: "4 GiB", "512 MiB"."""
    return f"{size / GIB:g} GiB" if size >= GIB else f"{size / MIB:g} MiB"


def worker_message(error: dict) -> str:
    """The message of an error the worker described, in the reader's language where the grader words it:
    an allocation over the memory limit is said from the limit the worker sent as a number."""
    if error.get("kind") == "memory":
        limit = error.get("limit_bytes")
        if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0:
            return _f("your code tried to allocate more than the {limit} limit", limit=memory_size(limit))
        return _("your code tried to allocate more memory than the machine has")
    if isinstance(error.get("blocked_module"), str):
        # i18n: a package of the course (the grader, the reference solutions) that graded code may not import
        return _f("{module} cannot be imported while grading", module=error["blocked_module"])
    return shorten(error.get("message", ""), 500)


def mixing_words(mixing: dict) -> str:
    """'aten::mm got tensors on cpu and meta': one operation the worker saw mixing devices (sent as data)."""
    op, devices = str(mixing["op"])[:100], [str(d)[:20] for d in mixing["devices"]]
    if len(devices) == 2:
        return _f("{op} got tensors on {first} and {second}", op=op, first=devices[0], second=devices[1])
    return _f("{op} got tensors on {devices}", op=op, devices=", ".join(devices))

# The failure kinds of a call whose function the student never wrote (describe_failure): a stub still raising
# NotImplementedError, or a name the notebook no longer defines.
NOT_WRITTEN = ("stub", "missing")


def describe_failure(label: str, error: dict) -> StudentFailure:
    """What the student reads when the call `label` of their code failed in the worker (`error`: the
    worker's description of it, data that the student's code may have forged: only shown, never run)."""
    kind = error.get("kind", "raised")
    where = where_raised(error)
    message = worker_message(error)
    if kind == "missing":
        return StudentFailure(
            _f("{label} is not defined in your notebook: keep its cell, with the name and signature of the stub",
               label=label), kind="missing")
    if kind == "stub":
        return StudentFailure(_f("{label} is not implemented yet: it still raises NotImplementedError{where}",
                                 label=label, where=where), kind="stub")
    if kind == "internal":
        return StudentFailure(_f("{label} could not be called: {message}", label=label, message=message),
                              kind="internal")
    error_type = str(error.get("type", "Exception"))
    device = device_hint(message)  # named first: it says plainly what the error says less plainly
    hint = None if device else hint_for(error_type, message, str(error.get("line") or ""), error)
    words = raised_words(label, error_type, where, bool(device))
    advice = device or (hint.say(str(error.get("line") or ""), error) if hint else "")
    return StudentFailure(words(message, advice), kind="raised", error={**error, "hint": hint.mistake if hint else ""},
                          quoted=message, advice=advice, words=words)


def raised_words(label: str, error_type: str, where: str, device: bool):
    """The message of a call that raised, as a function of the exception's text and the advice (a device
    hint, said first, or a hint said after): a check that quotes the failure in less room gives them
    shorter, and the student's cell and line stay whole."""
    def words(quoted: str, advice: str) -> str:
        detail = f"{error_type}: {quoted}" if quoted else error_type
        if device:
            # the hint, then who raised what: the label once (the check's own words name the call before it)
            return _f("{hint} ({label} raised {error}{where})", label=label, hint=advice, error=detail, where=where)
        text = _f("{label} raised {error}{where}", label=label, error=detail, where=where)
        return _f("{failure}. {hint}", failure=text, hint=advice) if advice else text

    return words
