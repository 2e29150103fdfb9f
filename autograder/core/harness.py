"""What the check files (hidden and visible) use: the `check` decorator and the comparisons.

A check is a pytest test function taking the `student` fixture:

    @check(2, "softmax sums to 1 along the last dim")
    def test_rows_sum_to_one(student):
        weights = student.call("softmax", x)
        expect_close(weights.sum(-1), torch.ones(4), "the row sums of softmax(x)")

It earns its points when it returns, and none when it raises. `CheckFailed`
and `StudentFailure` carry a message for the student; anything else is the
grader's own fault and is reported as such (never with a traceback).
"""
from __future__ import annotations

import math

import torch

from autograder.core.answers import answer_of
from autograder.core.shortening import shorten
from autograder.i18n import N_, _, _f


__all__ = ["check", "VISIBILITIES", "CheckFailed", "StudentFailure", "expect", "expect_close", "expect_shape",
           "tolerance", "DEVICE_TOLERANCES", "close", "differs_from_mistakes", "take_passing_figures", "Mistake", "describe"]

# (rtol, atol) per device; atol is scaled by the magnitude of the values compared
# the fewest characters of the student's exception a shortened message keeps (else the whole message is cut)
QUOTED_AT_LEAST = 40
DEVICE_TOLERANCES = {"cpu": (1e-5, 1e-6), "cuda": (1e-4, 1e-5), "meta": (0.0, 0.0)}
# The device the current grading runs the student's code on (set by grade.run_checks): the
# tolerance of a comparison that names no device. A check's reference is computed on the CPU, and
# the student's values come from this device, so the comparison must allow for its arithmetic.
_grading = {"device": "cpu"}


def grading_device(device: str) -> str:
    """Make `device` the one comparisons default to; returns the previous one (to restore)."""
    previous, _grading["device"] = _grading["device"], device
    return previous


class StudentFailure(Exception):
    """The student's code could not give an answer: the message says why, in their terms.

    Raised by core/student.py when a call into the worker fails (the student's exception, a
    timeout, a worker that died), and by checks; a check that raises it earns no points."""

    def __init__(self, message: str, kind: str = "raised", error: dict | None = None, quoted: str = "",
                 advice: str = "", words=None):
        super().__init__(message)
        self.message = message
        self.kind = kind
        # what the student's code raised, as the worker described it (type, message, where, line):
        # checks read these fields, never the message's wording
        self.error = error or {}
        # the exception's own text and the advice the message holds, and the message made from others
        # (words(quoted, advice)): a shortened message shortens these and keeps the student's cell and line
        self.quoted, self.advice, self.words = quoted, advice, words

    def shortened(self, limit: int) -> str:
        """The message in at most `limit` characters: the exception's text shortened first, then the
        advice; the student's cell and line kept whole."""
        over = len(self.message) - limit
        if over <= 0 or self.words is None:
            return shorten(self.message, limit)
        quoted = shorten(self.quoted, max(len(self.quoted) - over, min(len(self.quoted), QUOTED_AT_LEAST)))
        text = self.words(quoted, self.advice)
        over = len(text) - limit
        if over > 0 and self.advice:
            text = self.words(quoted, shorten(self.advice, max(len(self.advice) - over, QUOTED_AT_LEAST)))
        return shorten(text, limit)


class CheckFailed(AssertionError):
    """A check's verdict with a message for the student.

    figure: set by expect_close(..., heatmap_labels=...) on public inputs only:
        {"expected", "actual": 2-D CPU float tensors, "labels": (rows, cols), "what": str,
         "passed": False} for the student's feedback report (never serialised into results.json).
    mistake: the name of the common mistake the check recognised, taken from the
        check's own catalogue (a `mistakes` key), never from student text; the
        class report counts only these (a message may quote the student's words).
    answer: set by expect_close: the fingerprint of the wrong values (core/answers.py), which
        the instructor's similarity compares across the class; never shown to the student.
    """

    figure = None
    answer = None

    def __init__(self, message: str, mistake: str = ""):
        super().__init__(message)
        self.message = message
        self.mistake = mistake


# Who sees a check's result, and when (Gradescope's own words for a test's visibility):
#   "visible": the student, at once; the self-check, the notebooks and the per-push workflow run it too,
#       so it may use only public values (no `solutions`, no hidden seed's expected output);
#   "after_due_date": hidden until the assignment's due date (grading only; the default);
#   "after_published": hidden until the instructor publishes the grades (grading only).
VISIBILITIES = ("visible", "after_due_date", "after_published")
DEFAULT_VISIBILITY = "after_due_date"


def check(points: float, title: str, *, visibility: str | None = None, documented: bool = False,
          visible: bool = False, cell: str = ""):
    """Mark a test function as a graded check worth `points`.

    visibility: one of VISIBILITIES; left out, "visible" where `visible` or
        `documented` is set, else "after_due_date".
    documented: it compares with values printed in the notebook (these together
        carry at most 40% of a section, so copying printed numbers cannot pass);
        implies visibility "visible".
    visible: shorthand for visibility="visible".
    cell: the graded name whose notebook cell runs this check; required of a visible check (the
        notebook places checks by it, never by its title: autograder/notebook.py). Name the latest
        graded name the check calls, so that its cell runs once every name it needs is defined.

    The function's `grading` dict: points, title, documented, visible (whether the
    self-check runs it: visibility == "visible") and visibility.
    """
    if visibility is None:
        visibility = "visible" if (visible or documented) else DEFAULT_VISIBILITY
    if visibility not in VISIBILITIES:
        raise ValueError(f"check {title!r}: visibility {visibility!r} is not one of {', '.join(VISIBILITIES)}")
    if (visible or documented) and visibility != "visible":
        raise ValueError(f"check {title!r}: a visible or documented check cannot have visibility {visibility!r}")
    if visibility == "visible" and not cell:
        raise ValueError(f"check {title!r}: a visible check names the graded name whose notebook cell runs it (cell=)")

    def mark(function):
        function.grading = {"points": float(points), "title": title, "documented": documented,
                            "visible": visibility == "visible", "visibility": visibility, "cell": cell}
        return function

    return mark


def translated_title(grading: dict) -> str:
    """A check's title in the reader's language (a title is a msgid: i18n.catalogues extracts it)."""
    title = grading["title"]  # through a name: the catalogues' extractor would take "title" for a message
    return _(title)


def verdict(error: BaseException | None) -> tuple[str, str] | None:
    """(message, kind) of a failed check's verdict on the student's code, or None where the failure
    is not a verdict (any other exception: the check itself failed)."""
    if isinstance(error, CheckFailed):
        return error.message, "check"
    if isinstance(error, StudentFailure):
        return error.message, error.kind
    if isinstance(error, AssertionError) and str(error):
        return shorten(str(error).split("\nassert")[0], 500), "check"
    return None


def expect(condition: bool, message: str, mistake: str = "") -> None:
    """Fail with `message` unless `condition`; `mistake`: the catalogued mistake this failure is (if any)."""
    if not condition:
        raise CheckFailed(message, mistake)


def tolerance(device: str | None = None, scale: float = 1.0):
    """(rtol, atol) on `device` (None: the grading's device), atol scaled by `scale`."""
    rtol, atol = DEVICE_TOLERANCES.get(device or _grading["device"], DEVICE_TOLERANCES["cuda"])
    return rtol, atol * max(1.0, float(scale))


def _as_tensor(value, what):
    if value is None:  # what a function (or a forward) without a return gives
        raise CheckFailed(_f("{what}: expected a torch.Tensor, got None: does it end with a return?", what=what))
    if not isinstance(value, torch.Tensor):
        raise CheckFailed(_f("{what}: expected a torch.Tensor, got {got}", what=what, got=type(value).__name__
                             + ("" if value is None else " " + shorten(repr(value), 60))))
    return value


def expect_shape(actual, shape, what: str) -> None:
    actual = _as_tensor(actual, what)
    if tuple(actual.shape) != tuple(shape):
        raise CheckFailed(_f("{what}: expected shape {expected}, got {got}", what=what, expected=tuple(shape),
                             got=tuple(actual.shape)))


def close(actual, expected, device=None, scale=None, atol=None) -> bool:
    if not isinstance(actual, torch.Tensor) or tuple(actual.shape) != tuple(expected.shape):
        return False
    if expected.dtype == torch.bool or actual.dtype == torch.bool:
        return actual.dtype == expected.dtype and bool(torch.equal(actual, expected))
    a, e = actual.double(), expected.double()
    finite = torch.isfinite(e)
    if bool(finite.all()):  # the usual case: no masked copies (a grading makes hundreds of comparisons)
        if not bool(torch.isfinite(a).all()):
            return False
    else:  # nan and inf must sit where expected, and match there; the finite entries are compared below
        if not torch.equal(torch.isfinite(a), finite):
            return False
        if not torch.equal(a[~finite].nan_to_num(0.0), e[~finite].nan_to_num(0.0)):
            return False
        a, e = a[finite], e[finite]
    if scale is None:
        scale = e.abs().max().item() if e.numel() else 1.0
    rtol, default_atol = tolerance(device, scale)
    return bool(torch.allclose(a, e, rtol=rtol, atol=default_atol if atol is None else atol))


class Mistake(str):
    """A mistake's description with numbers in it: the English text itself (what the failure's
    `mistake` field records and the class report counts), plus the template and fields it was made
    from, so that a reader's language can be shown the same sentence with the same numbers."""

    def __new__(cls, template: str, **fields):
        made = super().__new__(cls, template.format(**fields))
        made.template, made.fields = template, fields
        return made


def describe(mistake: str) -> str:
    """A mistake's description in the reader's language: a literal marked N_ where it is written,
    or a Mistake, its template translated and filled in."""
    if isinstance(mistake, Mistake):
        return _f(mistake.template, **mistake.fields)
    return _(mistake)


def differs_from_mistakes(actual, mistakes: dict | None, device=None, scale=None):
    """The description of the first common mistake whose output `actual` matches."""
    for description, wrong in (mistakes or {}).items():
        try:
            if close(actual, wrong, device, scale):
                return description
        except (RuntimeError, TypeError):
            continue
    return None


def _first_difference(actual, expected, nan_note: str = "") -> str:
    a, e = actual.double(), expected.double()
    same = (a == e) | (a.isnan() & e.isnan())  # equal infinities and paired NaNs are no difference
    diff = (a - e).abs().nan_to_num(nan=math.inf, posinf=math.inf).masked_fill(same, 0.0)
    index = int(diff.argmax())
    position = list(torch.unravel_index(torch.tensor(index), diff.shape)) if diff.dim() else []
    got = a.flatten()[index].item()
    note = (nan_note or NAN_NOTE) if math.isnan(got) else INF_NOTE if math.isinf(got) else ""
    numbers = {"difference": diff.flatten()[index].item(), "expected": e.flatten()[index].item(), "got": got}
    if position:
        text = _f("largest difference {difference:.4g} at {position} (expected {expected:.4f}, got {got:.4f})",
                  position=[int(i) for i in position], **numbers)
    else:
        text = _f("largest difference {difference:.4g} (expected {expected:.4f}, got {got:.4f})", **numbers)
    # i18n: a difference, then what a nan or an inf there usually means (Chinese: a new sentence, after 。)
    return _f("{difference}: {note}", difference=text, note=_(note)) if note else text


# what a nan or an inf where a number belongs usually means, said where it appears
NAN_NOTE = N_("nan appears where every entry of a softmax row is -inf (a row whose keys are all hidden: is True "
              "hiding or keeping in your mask?), or from inf - inf and 0 / 0")
INF_NOTE = N_("inf appears where exp overflows (subtract the row's max first) or where you divide by 0")


HEATMAP_MAX_SIDE = 32  # larger matrices get no heatmap: unreadable, and a large report


def _heatmap_matrix(tensor: torch.Tensor) -> torch.Tensor:
    """The last two dims of the first batch item (a 1-D tensor as one row), as a CPU float64 tensor."""
    matrix = tensor.detach().cpu()
    while matrix.dim() > 2:
        matrix = matrix[0]
    if matrix.dim() < 2:
        matrix = matrix.reshape(1, -1)
    return matrix.to(torch.float64)


def _heatmap_labels(labels, shape) -> tuple:
    """(row labels, column labels): `labels` is one list for both axes, or a (rows, columns) pair.

    A list is used for an axis only where its length matches; otherwise that axis is numbered.
    """
    if labels is True or labels is None:
        rows = cols = None
    elif isinstance(labels, tuple) and len(labels) == 2 and not isinstance(labels[0], str):
        rows, cols = labels
    else:
        rows = cols = labels

    def fit(names, size):
        return [str(n) for n in names] if names is not None and len(names) == size else None

    return fit(rows, shape[0]), fit(cols, shape[1])


def _figure(actual, expected, what: str, labels, view=None, passed: bool = False) -> dict | None:
    """The heatmap data of one comparison (see CheckFailed.figure), or None where it cannot be drawn.

    view: (function, note): the 2-D matrix to draw from a tensor (default: the last two dims of
    the first batch item) and what that matrix is, added to the picture's title.
    """
    function, note = view if view else (_heatmap_matrix, "")
    try:
        exp, act = (function(t.detach().cpu()).to(torch.float64) for t in (expected, actual))
    except Exception:  # the heatmap is extra: never turn a student's failure into the grader's
        return None
    if exp.dim() != 2 or exp.shape != act.shape or exp.numel() == 0 or max(exp.shape) > HEATMAP_MAX_SIDE:
        return None
    return {"expected": exp, "actual": act, "labels": _heatmap_labels(labels, tuple(exp.shape)),
            "what": _f("{what}: {note}", what=what, note=_(note)) if note else what, "passed": passed}


def _with_figure(error: CheckFailed, actual, expected, what: str, labels, view=None) -> CheckFailed:
    """Attach the expected and actual matrices to `error` (see CheckFailed.figure)."""
    error.figure = _figure(actual, expected, what, labels, view)
    return error


# Pictures of comparisons that passed, asked for with expect_close(..., show_passing=True), for the
# check running now: the plugin takes them when the check ends (checks run one at a time).
_PASSING: list[dict] = []


def take_passing_figures() -> list[dict]:
    """The passing comparisons' heatmap data recorded since the last call (and forget them)."""
    taken = list(_PASSING)
    _PASSING.clear()
    return taken


def _answered(failure: CheckFailed, actual) -> CheckFailed:
    """`failure` with the fingerprint of the wrong values it received (CheckFailed.answer)."""
    failure.answer = answer_of(actual)
    return failure


def _asked(labels) -> bool:
    return labels is not None and labels is not False


def expect_close(actual, expected, what: str, *, mistakes: dict | None = None, device: str | None = None,
                 scale: float | None = None, atol: float | None = None, hint: str = "",
                 heatmap_labels=None, heatmap_view=None, show_passing: bool = False, nan_note: str = "") -> None:
    """Fail unless `actual` matches `expected` in type, shape, dtype and values.

    device: whose tolerance applies (default: the grading's device, see `grading_device`).
    mistakes: description -> what that mistake would output; when `actual`
        matches one, the message names it ("looks like softmax over dim 0") and
        so does the failure's `mistake` (what the class report counts).
    scale: the magnitude the tolerance is scaled by (default: of `expected`).
    atol: an absolute tolerance to use instead (documented 4-decimal values use 1e-4).
    heatmap_labels: ONLY where the inputs are public (the worked example, a mask
        of a given size): on a failure with the right shape, the expected and
        actual matrices (last two dims of the first batch item) go with the
        failure, for the heatmaps of the feedback report. Token names for the
        axes (e.g. TOKENS, or a (rows, columns) pair), or True for numbered axes.
    heatmap_view: (function, note): the 2-D matrix to draw instead of the first batch
        item's last two dims (e.g. one head per block of rows), and what it shows.
    nan_note: where the check has seen where a nan comes from (a forward that gives numbers in eval mode and
        nan in train mode: the dropout), what to say of a nan instead of NAN_NOTE's guess about the mask (N_).
    show_passing: on public inputs only, and where the picture helps a student who got it
        right (the worked example's weights): when the values match, the two matrices are
        kept as a passing figure of the check (take_passing_figures). Never changes a verdict.
    """
    actual = _as_tensor(actual, what)
    expected = expected.detach().cpu()
    if tuple(actual.shape) != tuple(expected.shape):
        named = differs_from_mistakes(actual, mistakes, device, scale)
        message = _f("{what}: expected shape {expected}, got {got}", what=what, expected=tuple(expected.shape),
                     got=tuple(actual.shape))
        suffix = _f(": this looks like {mistake}", mistake=describe(named)) if named else ""
        raise _answered(CheckFailed(message + suffix, named or ""), actual)
    if actual.dtype != expected.dtype:
        failure = CheckFailed(_f("{what}: expected dtype {expected}, got {got}", what=what,
                                 expected=str(expected.dtype).replace("torch.", ""),
                                 got=str(actual.dtype).replace("torch.", "")))
        if _asked(heatmap_labels):
            _with_figure(failure, actual, expected, what, heatmap_labels, heatmap_view)
        raise failure
    if close(actual, expected, device, scale, atol):
        if show_passing and _asked(heatmap_labels):
            figure = _figure(actual, expected, what, heatmap_labels, heatmap_view, passed=True)
            _PASSING.extend([figure] if figure else [])
        return
    named = differs_from_mistakes(actual, mistakes, device, scale)
    if expected.dtype == torch.bool:
        wrong = int((actual != expected).sum())
        detail = _f("{wrong} of {count} entries differ", wrong=wrong, count=expected.numel())
    else:
        detail = _first_difference(actual, expected, nan_note)
    message = _f("{what}: wrong values, {detail}", what=what, detail=detail)
    if named:  # a mistake's description: marked for the catalogues where the check names it
        message += _f(". This looks like {mistake}", mistake=describe(named))
    elif hint:  # the checks' hints, some of them marked N_ in a table (core/hints.py)
        # i18n: a failure's message, then a hint of what to look at (Chinese ends the first with 。)
        message = _f("{message}. {hint}", message=message, hint=_(hint))
    failure = _answered(CheckFailed(message, named or ""), actual)
    if _asked(heatmap_labels):
        _with_figure(failure, actual, expected, what, heatmap_labels, heatmap_view)
    raise failure
