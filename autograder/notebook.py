"""The course's checks inside a student's own notebook, as sharp as the self-check.

    from autograder.notebook import check, check_close   # the setup cell of every notebook

`check("combine_heads")` runs, right there in the notebook's kernel, the self-check's visible checks
of `combine_heads`: the same check functions, the same `student` interface, the same worker code
answering their calls (autograder/worker/serve.py), over the definitions the notebook holds now. So
a notebook cell fails exactly where `python -m autograder check` fails for that function, with the
same message and the same named mistake. Nothing is sandboxed here: it is the student's own kernel
running the student's own code, as every other cell of the notebook does.

Which cell runs a check: the graded name its `cell` declares (harness.check), never a guess from its
title. The notebook's order defines the names one after the other, so a check that calls two functions
declares the later one, and runs once both exist.

`check_close` compares one value with a documented one and prints one line either way. Importing
this module in IPython also makes its failures show as one line each, without a traceback through
the grader's code, and gives an error the student's code raises a hint where the evidence fits
(core/hints.py).

Its language is chosen when the setup cell imports it (`choose_language`): $ATTENTION_COURSE_LANG,
else the notebook's metadata.course.language (where the kernel knows its notebook's file), else English;
a notebook in another language than English then says its language itself (`choose_language("zh")`, a line
the build writes into its setup cell), which holds in every front end, a headless run included.
"""
from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import io
import json
import linecache
import sys
import traceback
import warnings
from pathlib import Path

import torch

from autograder.core.extract import banned_uses, cell_label, definition_source, notebook_language, tampering
from autograder.core.harness import INF_NOTE, NAN_NOTE, StudentFailure, translated_title, verdict
from autograder.core.hints import hint_for
from autograder.core.sections import SECTIONS, Section, check_module, home
from autograder.core.failures import NOT_WRITTEN, heard, tampering_failure, warning_words
from autograder.core.student import Student
from autograder.i18n import LanguageError, _, _f, resolve, set_language
from autograder.worker import serve, wire
from autograder.worker.transposed import last_student_frame, transposed_dims

__all__ = ["check", "check_close", "choose_language", "NotebookCheckFailed"]

GRADER = Path(__file__).resolve().parent
# each as imported and as resolved: a frame names its file as imported, through any symlink (a .venv
# linked from elsewhere)
LIBRARIES = tuple({str(p) for module in (torch, contextlib)
                   for p in (Path(module.__file__).parent, Path(module.__file__).resolve().parent)})
NOT_THE_STUDENTS = (*LIBRARIES, str(GRADER), str(Path(__file__).parent), "<frozen")  # frames' file prefixes


class NotebookCheckFailed(AssertionError):
    """A check cell's verdict: its message is the whole story (shown without a traceback)."""

    def _render_traceback_(self) -> list[str]:
        """What IPython shows for this error (it asks an exception for its lines this way): the course's
        lines alone, without IPython's "An exception has occurred, use %tb ..." line or a traceback."""
        return str(self).splitlines()


# --------------------------------------------------------------------------- which checks, where


def section_of(name: str) -> Section:
    for section in SECTIONS:
        if name in section.names:
            return section
    known = ", ".join(n for s in SECTIONS for n in s.names)
    raise NotebookCheckFailed(_f("check({name}): no section grades {name} (graded names: {known})",
                                 name=repr(name), known=known))


@functools.cache
def visible_checks(section_id: str) -> tuple:
    """The section's visible check functions, in file order: its visible checks' module, imported as the
    self-check wheel ships it (the hidden checks are modules of their own, never imported here)."""
    module = importlib.import_module(check_module(section_id))
    return tuple(f for name, f in vars(module).items()
                 if name.startswith("test_") and callable(f) and getattr(f, "grading", {}).get("visible"))


def checks_of(name: str) -> tuple[Section, list]:
    section = section_of(name)
    return section, [f for f in visible_checks(section.id) if home(f.grading, section) == name]


# --------------------------------------------------------------------------- the student's code, here


def student_label(filename: str) -> str | None:
    """How a message names the notebook cell `filename` holds (its first line), or None when the
    frame is not the student's (torch, the standard library, the grader)."""
    if filename.startswith(NOT_THE_STUDENTS):
        return None
    lines = linecache.getlines(filename)
    return cell_label("".join(lines), 0) if lines else None


def defining_file(obj) -> str | None:
    """The file (a notebook cell, as Jupyter names it) that defined a function or a class: a class
    is found through its methods, since Python knows no cell for a class defined in a notebook."""
    if inspect.isfunction(obj):
        return obj.__code__.co_filename
    methods = vars(obj).values() if inspect.isclass(obj) else ()
    return next((m.__code__.co_filename for m in methods if inspect.isfunction(m)), None)


class KernelWorker:
    """What a check's `student` talks to (core/student.py's SectionWorker), answered in this kernel by
    the worker's own request handler over the notebook's live definitions."""

    def __init__(self, section: Section, namespace: dict):
        self.section, self.device, self.namespace = section, "cpu", namespace
        self.defined = [n for n in section.names if n in namespace]
        self.refused: dict[str, str] = {}
        self.cells = [{"label": student_label(f) or n, "source": "".join(linecache.getlines(f))}
                      for n in self.defined if (f := defining_file(namespace[n]))]
        self.banned_in_source = banned_uses(self.cells, section.forbidden_in, section.forbidden)
        self.tampering = tampering(self.cells)
        self.worker = serve.Worker({"names": list(section.names), "device": "cpu",
                                    "forbidden": list(section.forbidden), "forbidden_in": list(section.forbidden_in)})
        self.worker.namespace = namespace
        self.worker.locate = student_label
        self.warnings: list[dict] = []  # those the student's code raised, once each (failures.heard)

    def source_of(self, name: str) -> str:
        return definition_source(self.cells, name)

    def ensure(self) -> None:
        if self.tampering:  # as grading refuses such a notebook (core/student.py), so does its check here
            raise tampering_failure(self.tampering)

    def request(self, message: dict, label: str, timeout: float | None = None, culprit: str = "") -> dict:
        self.ensure()
        # through the wire's encoding both ways, as across the process boundary: the same values arrive
        reply = serve.answer(self.worker, wire.loads(wire.dumps(message)))
        return heard(self.warnings, wire.loads_reply(wire.dumps(reply).rstrip(b"\n")))


@contextlib.contextmanager
def kernel_state_kept():
    """The checks seed torch and reset its defaults for each call: the notebook's own state comes back."""
    rng, dtype, grad = torch.get_rng_state(), torch.get_default_dtype(), torch.is_grad_enabled()
    torch.set_default_dtype(torch.float32)  # the checks' own tensors as the grader makes them, whatever the notebook set
    try:
        # what the student's code prints or warns while checked stays out of the cell: nbgrader gives 0
        # to a test cell that writes to stderr, and a warning is a line on stderr
        # (the student's own warnings come back from each call as data, and the cell shows them: check)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
                warnings.catch_warnings(record=True):
            yield
    finally:
        torch.set_rng_state(rng)
        torch.set_default_dtype(dtype)
        torch.set_grad_enabled(grad)


# --------------------------------------------------------------------------- the verbs


def failure_message(error: BaseException) -> str:
    """A failed check's message, as grading words it (harness.verdict)."""
    said = verdict(error)
    return said[0] if said else _f("the check itself failed ({error}); tell your instructor",
                                   error=f"{type(error).__name__}: {error}")


def run_checks(name: str, namespace: dict, warned: list | None = None, figures: list | None = None,
               met: dict | None = None) -> list[tuple[str, str | None, str]]:
    """(title, None or the failure's message, the failure's kind or "") for each check `name`'s cell runs;
    the warnings the student's code raised meanwhile (the worker's data, once each) are added to `warned`, the
    heatmaps of the failing comparisons on public inputs (CheckFailed.figure) to `figures`, and, by title, the
    graded names whose right stand-in answered a call of the check in place of the student's own to `met`."""
    outcomes = []
    with kernel_state_kept():
        section, checks = checks_of(name)
        worker = KernelWorker(section, namespace)
        student = Student(worker)
        for function in checks:
            student.stood_in = set()
            try:
                function(student)
            except Exception as error:  # every failure is the check's verdict on the student's code
                kind = error.kind if isinstance(error, StudentFailure) else ""
                outcomes.append((translated_title(function.grading), failure_message(error), kind))
                if figures is not None and isinstance(getattr(error, "figure", None), dict):
                    figures.append(error.figure)
            else:
                outcomes.append((translated_title(function.grading), None, ""))
            if met is not None and student.stood_in:
                met[translated_title(function.grading)] = sorted(student.stood_in)
    if warned is not None:
        warned += worker.warnings
    return outcomes


# failures that every check of a cell shares, whatever it checks: said once, without a check's title
ONCE_PER_CELL = (*NOT_WRITTEN, "forbidden")


def cell_verdict(outcomes: list[tuple[str, str | None, str]]) -> str:
    """The lines of a failing cell ("" when every check passed): each unwritten name once (failures.NOT_WRITTEN:
    every check calling it fails for that one reason), a forbidden API once (the first call that met it: every
    check of the name that calls it fails for that one reason, core/rules.py), then each other failure under
    its check's title, an error the student's code raised in several checks once (under the first, the others'
    titles in one line after it)."""
    unwritten = list(dict.fromkeys(message for _title, message, kind in outcomes
                                   if message is not None and kind in NOT_WRITTEN))
    forbidden = [message for _title, message, kind in outcomes if message is not None and kind == "forbidden"][:1]
    # one error of the student's code that several checks met (a float head_dim fails every call of the class):
    # said, with its hint, under the first check that met it; the others it failed named once, after it
    others: dict[str, list[str]] = {}
    for title, message, kind in outcomes:
        if message is not None and kind == "raised":
            others.setdefault(message, []).append(title)
    failed = []
    for title, message, kind in outcomes:
        if message is None or kind in ONCE_PER_CELL or kind == "raised" and others[message][0] != title:
            continue
        # i18n: a failing check's title, then its message, in a notebook's failing check cell
        failed.append(_f("{what}: {message}", what=title, message=message))
        if kind == "raised" and len(others[message]) > 1:
            titles = others[message][1]
            for more in others[message][2:]:
                # i18n: the join of a list of check titles in a notebook's check cell: the list so far, then one more
                titles = _f("{titles}; {title}", titles=titles, title=more)
            # i18n: under a failing check's line in a notebook's check cell: the other checks of the cell that the
            # same error of the student's code failed ({titles}: their titles, joined)
            failed.append(_f("the same error also fails: {titles}", titles=titles))
    return "\n".join(unwritten + forbidden + failed)


def check(name: str, namespace: dict | None = None) -> None:
    """Run the self-check's checks of graded `name` on the notebook's code; one line per check, and
    one line for a name not written yet (however many checks call it)."""
    namespace = namespace if namespace is not None else inspect.currentframe().f_back.f_globals
    warned: list[dict] = []
    figures: list[dict] = []
    met: dict[str, list[str]] = {}
    outcomes = run_checks(name, namespace, warned, figures, met)
    for title, message, _kind in outcomes:
        if message is None:
            print(passed_line(title, [other for other in met.get(title, ()) if other in FAILED_CELLS]))
    for warning in warned:  # on stdout: nbgrader gives 0 to a test cell that writes to stderr
        print(warning_words(warning))
    verdict_lines = cell_verdict(outcomes)
    (FAILED_CELLS.add if verdict_lines else FAILED_CELLS.discard)(name)
    if verdict_lines:
        show_pictures(figures)
        raise NotebookCheckFailed(verdict_lines)


# the graded names whose check cell failed when last run in this kernel ("Run All" runs a collaborator's cell
# before the cell of the name that calls it)
FAILED_CELLS: set[str] = set()


def passed_line(title: str, failing_stand_ins: list[str]) -> str:
    """A passing check's line: where a right collaborator answered in place of the student's own, which fails its own
    checks (a failing cell above), the line says so: the check passed on that right answer, not on theirs."""
    if not failing_stand_ins:
        return _f("ok  {title}", title=title)
    # i18n: a passing check's line, where the grader's right {names} (graded functions, comma-separated) answered in
    # place of the student's own, whose check cell fails
    return _f("ok  {title}, with a correct {names} in place of yours, which fails its own checks", title=title,
              names=", ".join(failing_stand_ins))


def show_pictures(figures: list[dict]) -> None:
    """The heatmaps of the failing comparisons (expected, yours, their difference), drawn in the check cell itself:
    the cell then stops "Run All", so a picture cell after it would never draw the one that explains the failure.
    Outside a Jupyter kernel (a script, the self-check) nothing is drawn: the report has them."""
    shell = sys.modules.get("IPython")
    if not figures or shell is None or shell.get_ipython() is None:
        return
    from IPython.display import SVG, display

    from autograder.feedback.heatmaps import render_figure

    for figure in figures:
        display(SVG(render_figure(figure)))


def _largest_difference(actual: torch.Tensor, expected: torch.Tensor, what: str, atol: float) -> None:
    diff = torch.where(actual == expected, 0.0, (actual - expected).abs().nan_to_num(nan=float("inf")))
    if not diff.numel() or diff.max() <= atol:
        return
    index = tuple(int(i) for i in torch.unravel_index(diff.argmax(), diff.shape))
    got = actual[index]
    note = _(NAN_NOTE) if got.isnan() else _(INF_NOTE) if got.isinf() else ""
    raise NotebookCheckFailed(_f("{what}: at index {index} expected {expected:.4f}, got {got:.4f}", what=what,
                                 index=index, expected=expected[index], got=got) + (f". {note}" if note else ""))


def check_close(actual, expected, what: str, atol: float = 1e-4) -> None:
    """Fail, in one line, unless `actual` matches the documented `expected`; print what was checked if it does.

    what: the value, in the reader's terms; a hint after " — " shows only on failure."""
    claim, _dash, hint = what.partition(" — ")
    expected = torch.as_tensor(expected).detach().float().cpu()
    if not isinstance(actual, torch.Tensor):
        raise NotebookCheckFailed(_f("{what}: expected a torch.Tensor, got {got}", what=claim,
                                     got=type(actual).__name__))
    if tuple(actual.shape) != tuple(expected.shape):
        raise NotebookCheckFailed(_f("{what}: expected shape {expected}, got {got}", what=claim,
                                     expected=tuple(expected.shape), got=tuple(actual.shape))
                                  + (f" — {hint}" if hint else ""))
    try:
        _largest_difference(actual.detach().float().cpu(), expected, claim, atol)
    except NotebookCheckFailed as failure:
        raise NotebookCheckFailed(f"{failure}" + (f" — {hint}" if hint else "")) from None
    print(_f("ok  {title}", title=claim))


# --------------------------------------------------------------------------- how errors show in Jupyter


def raising_line(tb) -> str:
    """The text of the student's last line in a traceback (the grader's and torch's frames skipped)."""
    frames = [f for f in traceback.extract_tb(tb) if student_label(f.filename) is not None]
    return (frames[-1].line or "").strip() if frames else ""


def show_error(shell, kind, error, tb, tb_offset=None):
    """A check's verdict as its message alone; a hint under an error whose evidence fits one."""
    # always through showtraceback: Jupyter, and nbgrader's autograde, see the cell's error there
    if isinstance(error, NotebookCheckFailed):  # its own lines (_render_traceback_), nothing of IPython's
        shell.showtraceback((kind, error, tb), tb_offset=tb_offset)
        return
    shell.showtraceback((kind, error, tb), tb_offset=tb_offset)
    line = raising_line(tb)
    evidence = {"transposed_dims": transposed_dims(line, last_student_frame(tb, student_label))}
    hint = hint_for(kind.__name__, str(error), line, evidence)
    if hint:
        # i18n: the hint line under a traceback in Jupyter (one line: "Hint: " then the hint)
        print(_f("Hint: {hint}", hint=hint.say(line, evidence)), file=sys.stderr)


def _install_display() -> None:
    try:
        shell = get_ipython()  # noqa: F821  (defined inside IPython only)
    except NameError:  # a plain Python: errors show as usual
        return
    if shell is not None:
        shell.set_custom_exc((NotebookCheckFailed, RuntimeError), show_error)


def notebook_file_language() -> str | None:
    """metadata.course.language of the notebook this kernel runs, where the kernel knows its file
    (Jupyter sets __session__ to the notebook's path), else None."""
    try:
        path = Path(str(get_ipython().user_ns.get("__session__", "")))  # noqa: F821  (IPython only)
        if path.suffix != ".ipynb" or not path.is_file():
            return None
        notebook = json.loads(path.read_text(encoding="utf-8"))
        return notebook_language(notebook) if isinstance(notebook, dict) else None
    except (NameError, AttributeError, OSError, ValueError):  # no IPython, no such file, not a notebook
        return None


def choose_language(declared: str | None = None) -> None:
    """The language of the checks' lines in this notebook; an unknown code says so and keeps English.

    declared: the language the notebook says it is written in (the setup cell of a notebook in another
    language than English calls this with its code, so that every front end, a headless run included,
    hears it); without it, the notebook's file where the kernel knows it. $ATTENTION_COURSE_LANG wins."""
    try:
        set_language(resolve(notebook_language=declared or notebook_file_language()))
    except LanguageError as error:
        print(f"autograder: {error}", file=sys.stderr)


_install_display()
choose_language()
