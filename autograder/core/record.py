"""The grade's own record: a GradeResult as plain data, written once and read back as data.

Everything that reads a grade again (a batch's resume and its feedback reports, `merge`, the class
report, the gradebook, the feedback report's data beside it) reads this record; Gradescope's
results.json, JUnit and Markdown are renderings of the result for others and are never read back.
The record holds every field of the result (sections, their notes and printed output, how their file
was found, each check
with its id, points, visibility, kind and mistake, the sandbox tier, torch, the timings) except the
heatmaps' matrices, which only the feedback report's own data file keeps (report_store adds them).

Its text is stored encodable (a lone surrogate from student text becomes U+FFFD), so that it can
always be written as UTF-8. `from_record` checks every field's type and raises RecordError on
anything not shaped as `to_record` writes it: a record that is not ours is never half-used.
"""
from __future__ import annotations

from autograder.core.answers import is_answer
from autograder.core.results import CheckResult, GradeResult, SectionResult, encodable

FORMAT = 1  # the record's layout; a record of another layout is not read

CHECK_TEXT = ("id", "name", "message", "kind", "visibility", "mistake")
CHECK_NUMBERS = ("max_points", "points")
CHECK_FLAGS = ("documented", "visible")


class RecordError(ValueError):
    """A record not shaped as to_record writes it."""


def check_data(check: CheckResult) -> dict:
    data = {**{name: encodable(getattr(check, name)) for name in CHECK_TEXT},
            **{name: float(getattr(check, name)) for name in CHECK_NUMBERS},
            **{name: bool(getattr(check, name)) for name in CHECK_FLAGS}}
    if check.answer is not None:  # only a failed comparison has one
        data["answer"] = check.answer
    return data


def section_data(section: SectionResult) -> dict:
    return {"id": section.id, "title": encodable(section.title), "notes": [encodable(n) for n in section.notes],
            "printed": encodable(section.printed), "checks": [check_data(c) for c in section.checks],
            "handed_in_as": encodable(section.handed_in_as), "files_found": [encodable(f) for f in section.files_found],
            "ambiguous": bool(section.ambiguous)}


def figure_data(figure: dict) -> dict:
    """One heatmap's matrices (CheckResult.figures) as plain data: what a report draws, nothing more."""
    rows, cols = figure.get("labels") or (None, None)
    return {"expected": figure["expected"].tolist(), "actual": figure["actual"].tolist(),
            "labels": [rows, cols], "what": str(figure.get("what", "")), "passed": bool(figure.get("passed"))}


def figure_from(data: dict) -> dict:
    """The heatmap `figure_data` wrote (raises KeyError, TypeError or ValueError on a malformed one)."""
    import torch  # only a heatmap read back needs it: reading records stays free of torch

    rows, cols = data["labels"]
    expected = torch.tensor(data["expected"], dtype=torch.float64)
    actual = torch.tensor(data["actual"], dtype=torch.float64)
    if expected.dim() != 2 or expected.shape != actual.shape:
        raise ValueError("a heatmap needs two matrices of one shape")
    labels = tuple(None if names is None else [str(n) for n in names] for names in (rows, cols))
    return {"expected": expected, "actual": actual, "labels": labels, "what": str(data["what"]),
            "passed": bool(data["passed"])}


def to_record(result: GradeResult, figures: bool = False) -> dict:
    """The result as plain data (JSON): everything but the heatmaps' matrices, which `figures=True` adds to
    each check (a grading's sections graded in another process come back so: core/two_processes.py)."""
    data = {"format": FORMAT, "submission": encodable(result.submission), "device": result.device,
            "execution_time": float(result.execution_time),
            "grader_errors": [encodable(e) for e in result.grader_errors],
            "sandbox": result.sandbox, "weak": bool(result.weak), "torch": result.torch,
            "sections": [section_data(s) for s in result.sections]}
    if figures:
        for section, stored in zip(result.sections, data["sections"]):
            for check, stored_check in zip(section.checks, stored["checks"]):
                stored_check["figures"] = [figure_data(f) for f in check.figures]
    return data


def _typed(data: dict, key: str, kind):
    value = data.get(key) if isinstance(data, dict) else None
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise RecordError(f"{key}: expected {kind.__name__}, got {type(value).__name__}")
    return value


def _texts(data: dict, key: str) -> list[str]:
    values = _typed(data, key, list)
    if not all(isinstance(v, str) for v in values):
        raise RecordError(f"{key}: expected a list of text")
    return list(values)


def check_from(section_id: str, data: dict, **extra) -> CheckResult:
    """The CheckResult of `check_data`'s dict (a report's data file passes its figures in `extra`)."""
    values = {name: _typed(data, name, str) for name in CHECK_TEXT}
    values.update({name: _typed(data, name, float) for name in CHECK_NUMBERS})
    values.update({name: _typed(data, name, bool) for name in CHECK_FLAGS})
    if "answer" in data:  # a record written before wrong answers were kept has none
        if not is_answer(data["answer"]):
            raise RecordError("answer: not a wrong answer's fingerprint")
        values["answer"] = data["answer"]
    return CheckResult(section=section_id, **values, **extra)


def section_from(data: dict, check=check_from) -> SectionResult:
    section = SectionResult(_typed(data, "id", str), _typed(data, "title", str), notes=_texts(data, "notes"),
                            printed=_typed(data, "printed", str))
    if "handed_in_as" in data:  # a record written before the grader took files by their cells has none
        section.handed_in_as = _typed(data, "handed_in_as", str)
        section.files_found = _texts(data, "files_found")
        section.ambiguous = _typed(data, "ambiguous", bool)
    section.checks = [check(section.id, item) for item in _typed(data, "checks", list)]
    return section


def check_with_figures(section_id: str, data: dict) -> CheckResult:
    """The CheckResult of a check written with its heatmaps' matrices (`to_record(..., figures=True)`)."""
    figures = data.get("figures") if isinstance(data, dict) else None
    if not isinstance(figures, list):
        raise RecordError("a check without its figures")
    try:
        return check_from(section_id, data, figures=[figure_from(f) for f in figures])
    except (KeyError, TypeError, ValueError) as error:
        raise RecordError(f"a check's figures: {error}") from None


def from_record(data, figures: bool = False) -> GradeResult:
    """The GradeResult `to_record` wrote (`figures`: with the heatmaps' matrices, as written with them);
    raises RecordError when `data` is not such a record."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise RecordError("not a grade record of this grader's layout")
    check = check_with_figures if figures else check_from
    return GradeResult(submission=_typed(data, "submission", str), device=_typed(data, "device", str),
                       sections=[section_from(item, check=check) for item in _typed(data, "sections", list)],
                       execution_time=_typed(data, "execution_time", float),
                       grader_errors=_texts(data, "grader_errors"), sandbox=_typed(data, "sandbox", str),
                       weak=_typed(data, "weak", bool), torch=_typed(data, "torch", str))
