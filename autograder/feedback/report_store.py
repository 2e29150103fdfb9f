"""What a feedback report shows, kept beside it (DIR/report-data.json), so that a run of one section
updates that section only.

`check --section 03_trainable_qkv` grades one section; the report already in DIR holds the
others. The data file keeps every section the report shows (checks, messages, notes, printed
output and the heatmaps' matrices), with the submission it belongs to: the resolved path of the
submission folder (or notebook) and whether it came from `check` (visible checks) or `grade`
(every check). A run of one section of the same submission replaces that section and keeps the
rest; a report of another submission, or of the other verb, is replaced, and the new report says so.

The file is written atomically and read defensively: a file that is too large, not JSON, or not
shaped as written here counts as no earlier report (and the new report says that too).
"""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from autograder.core import record
from autograder.core.results import GradeResult, SectionResult
from autograder.i18n import N_, _, _f

DATA_NAME = "report-data.json"
FORMAT = 2  # the data file's layout (2: each check with its id); a file of another layout is not merged
MAX_BYTES = 32 * 1024 * 1024  # a report's data is far smaller: a larger file is not ours


def identity(source, visible_only: bool) -> dict:
    """What two reports must share to be merged: the same submission, graded by the same verb."""
    return {"path": str(Path(source).resolve()), "checks": "visible" if visible_only else "all"}


# ---------------------------------------------------------------- to JSON and back


def to_data(result: GradeResult, key: dict) -> dict:
    """The data file's content: the report's submission (`key`, see identity) and its sections, each
    as the grade's record writes it (core/record), every check with its heatmaps' matrices."""
    sections = []
    for section in result.sections:
        data = record.section_data(section)
        for check, stored in zip(section.checks, data["checks"]):
            stored["figures"] = [record.figure_data(f) for f in check.figures]
        sections.append(data)
    return {"format": FORMAT, "submission": key, "name": result.submission, "weak": result.weak,
            "sections": sections}


def sections_from(data: dict) -> list[SectionResult]:
    """The SectionResults of a data file (raises KeyError, TypeError or ValueError on a malformed one)."""
    return [record.section_from(item, check=record.check_with_figures) for item in data["sections"]]


def encode(data: dict) -> bytes:
    """The data file's bytes: the same data always gives the same bytes."""
    return (json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n").encode("utf-8")


def read(folder: Path):
    """(data, None) of DIR/report-data.json; (None, None) when there is none; (None, why) when it
    cannot be used."""
    path = Path(folder) / DATA_NAME
    try:
        if path.is_symlink() or not path.is_file():
            return None, None
        if path.stat().st_size > MAX_BYTES:
            return None, _("it is too large")
        data = json.loads(path.read_bytes().decode("utf-8"))
        if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("submission"), dict):
            return None, _("it is not in this grader's format")
        sections_from(data)  # the whole file is checked before any of it is used
        return data, None
    except (OSError, UnicodeDecodeError, ValueError, TypeError, KeyError, AttributeError, RuntimeError) as error:
        return None, _f("it could not be read ({error})", error=type(error).__name__)


# ---------------------------------------------------------------- merging

# the kind of run a report's data records ("visible" or "all"), as the notice words it: data, worded here
CHECK_KINDS = {
    # i18n: the kind of an earlier run, shown as "({path}, {checks} checks)": a grade's run (every check)
    "all": N_("all"),
    # i18n: the kind of an earlier run, shown as "({path}, {checks} checks)": a self-check's run
    "visible": N_("visible"),
}


def checks_kind(stored) -> str:
    """The kind of run an earlier report's data records, in the reader's language ("?" if unknown)."""
    return _(CHECK_KINDS[stored]) if stored in CHECK_KINDS else "?"



def merge(result: GradeResult, folder: Path, key: dict, update: bool) -> tuple[GradeResult, list[str]]:
    """The result the report shows, and the notices about it: with `update` (a run of some sections),
    the sections of the same submission already in DIR that this run did not grade are kept."""
    if not update:
        return result, []
    data, problem = read(folder)
    graded = _(", ").join(s.id for s in result.sections) or _("no section")
    if problem:
        return result, [_f("The earlier report's data in this folder ({file}) was not used: {problem}. "
                           "This report shows only the sections of this run ({graded}).",
                           file=DATA_NAME, problem=problem, graded=graded)]
    if data is None:
        return result, []
    if data["submission"] != key:
        earlier = data["submission"]
        what = (_("another submission") if earlier.get("path") != key["path"] else
                _("the other kind of run (`check` runs the visible checks, `grade` every check)"))
        return result, [_f("The report that was in this folder was for {what} ({path}, {checks} checks): it was "
                           "replaced, not merged. This report shows only the sections of this run ({graded}).",
                           what=what, path=earlier.get("path", "?"), checks=checks_kind(earlier.get("checks")),
                           graded=graded)]
    new = {s.id: s for s in result.sections}
    kept = [s for s in sections_from(data) if s.id not in new]
    if not kept:
        return result, []
    sections = sorted([*kept, *result.sections], key=lambda s: s.id)
    merged = replace(result, sections=sections, weak=result.weak or bool(data.get("weak")))
    return merged, [_f("This run graded {graded} only; the other sections ({kept}) are from earlier runs on the "
                       "same submission, as they were then. Run it without --section to grade every section again.",
                       graded=graded, kept=_(", ").join(s.id for s in kept))]
