"""Render a GradeResult: table (terminal), json (Gradescope), junit (CI), markdown (job summary).

Failure messages and notes quote student code (its exceptions, its printed
output), so every format shows them as text and nothing more: Markdown with
its metacharacters escaped (no HTML, links or images from a message), JUnit
without the characters XML 1.0 forbids (the file always parses), the table
with control characters spelled out (no terminal escape sequences).
"""
from __future__ import annotations

import json
import re
import textwrap
import unicodedata
import xml.etree.ElementTree as ET

from autograder.core.results import WEAK_WARNING, GradeResult, encodable
from autograder.i18n import _, _f

FORMATS = ("table", "json", "junit", "markdown")

# What XML 1.0 does not allow in a document: C0 controls but tab, newline and carriage return,
# the surrogates (never valid alone in a Python str that is to be encoded) and U+FFFE/U+FFFF.
_NOT_XML = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Markdown: the characters that start emphasis, code, links and images, tables, headings,
# HTML tags and entities; each is shown as itself (a backslash escape, or an entity for & < >).
_MD_SPECIAL = str.maketrans({**{c: "\\" + c for c in "\\`*_[]!|#~"},
                             "<": "&lt;", ">": "&gt;", "&": "&amp;", "\n": " ", "\r": " "})


def xml_text(text) -> str:
    """`text` without the characters XML 1.0 forbids (dropped: they carry nothing a reader needs)."""
    return _NOT_XML.sub("", str(text))


def plain_text(text) -> str:
    """`text` safe to encode and to show: lone surrogates become U+FFFD, control characters other
    than tab, newline and carriage return are dropped (a NUL or an escape is never part of feedback)."""
    return _NOT_XML.sub("", encodable(text))


def md_text(text) -> str:
    """`text` shown as itself in Markdown: one line, no emphasis, code, links, images, table cells,
    headings or HTML from it."""
    return plain_text(text).translate(_MD_SPECIAL)


def fenced(text: str) -> list[str]:
    """`text` as the lines of a Markdown code block: shown as itself, whatever it holds, since its
    fence is longer than any run of backticks inside (text inside can never close it)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + "text", *text.splitlines(), fence]


def terminal_text(text) -> str:
    """`text` for a terminal: control characters spelled out (\\x1b), so none reaches the terminal."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", encodable(text))


def render(result: GradeResult, fmt: str) -> str:
    return {"table": table, "json": as_json, "junit": junit, "markdown": markdown}[fmt](result)


def as_json(result: GradeResult) -> str:
    return json.dumps(result.to_gradescope(), indent=2, ensure_ascii=False) + "\n"


def display_width(text: str) -> int:
    """Columns `text` takes in a terminal: an East Asian wide or full-width character takes two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def wrap(text: str, columns: int) -> list[str]:
    """`text` in lines of at most `columns` display columns: textwrap's lines where every character
    is narrow (English), else lines broken at spaces or between wide characters, which Chinese
    writes without spaces, each wide character counted as two columns."""
    if display_width(text) == len(text):
        return textwrap.wrap(text, columns)
    lines, line = [], ""
    for piece in re.findall(r"\s+|[\u2e80-\uffef]|[^\s\u2e80-\uffef]+", text):
        if line and display_width(line + piece.rstrip()) > columns:
            lines.append(line.rstrip())
            line = "" if piece.isspace() else piece
        else:
            line += piece
    return [*lines, line.rstrip()] if line.strip() else lines


def status_marks() -> tuple[str, str]:
    """The table's (passed, failed) words in the reader's language, padded to one display width,
    so that the points after them line up whichever word a line has."""
    # i18n: the table's status of a passing check (a word or two; the other is its failing twin)
    passed = _("ok")
    # i18n: the table's status of a failing check
    failed = _("FAIL")
    width = max(4, display_width(passed), display_width(failed))
    return tuple(mark + " " * (width - display_width(mark)) for mark in (passed, failed))


def table(result: GradeResult) -> str:
    names = {"submission": terminal_text(result.submission), "device": result.device}
    lines = [_f("Grading {submission} on {device} ({provenance})", provenance=result.provenance, **names)
             if result.provenance else _f("Grading {submission} on {device}", **names)]
    lines += [f"!! {_(WEAK_WARNING)}", ""] if result.weak else [""]
    passed, failed = status_marks()
    indent = " " * (10 + display_width(passed))  # under the check's points: "  " mark " " points
    for section in result.sections:
        lines.append(f"{section.id}  {section.heading}  {section.score:g} / {section.max_score:g}")
        for note in section.notes:
            lines.append(f"  ! {terminal_text(note)}")
        for c in section.checks:
            lines.append(f"  {passed if c.passed else failed} {c.points:>4g}/{c.max_points:<4g} {c.name}")
            if c.message and not section.not_started:  # a section not started: its note says why, once
                for piece in wrap(terminal_text(c.message), 96):
                    lines.append(indent + piece)
        lines.append("")
    lines.append(_f("Total: {total}   ({seconds:.1f} s)", total=result.total_text(), seconds=result.execution_time))
    return "\n".join(lines) + "\n"


def markdown_notices(result: GradeResult, escape=md_text) -> list[str]:
    """The lines under a Markdown report's heading: the weak-sandbox warning, the tier and torch."""
    lines = [_f("> **Warning:** {warning}", warning=escape(_(WEAK_WARNING))), ""] if result.weak else []
    return lines + ([f"_{escape(result.provenance)}_", ""] if result.provenance else [])


def markdown(result: GradeResult) -> str:
    lines = [_f("## Attention course: {total}", total=result.total_text()), ""]
    lines += markdown_notices(result)
    lines += [_("| section | score |"), "|---|---|"]
    # section ids, titles and check names are the grader's own (ids stay greppable, 01_scores);
    # notes and messages quote student code: escaped
    for section in result.sections:
        lines.append(f"| {section.id} | {section.score:g} / {section.max_score:g} |")
    for section in result.sections:
        failing = [c for c in section.checks if not c.passed]
        if not failing and not section.notes:
            continue
        lines += ["", f"### {section.id}: {section.heading}", ""]
        lines += [f"> {md_text(note)}" for note in section.notes]
        for c in failing:
            lines.append(f"- **{c.name}** (0 / {c.max_points:g}): {md_text(c.message)}")
    return "\n".join(lines) + "\n"


def _element(parent, tag: str, **attributes) -> ET.Element:
    """A JUnit element whose attribute values hold only characters XML allows."""
    return ET.SubElement(parent, tag, {name: xml_text(value) for name, value in attributes.items()})


def junit(result: GradeResult) -> str:
    suites = ET.Element("testsuites", name="attention-course", tests=str(sum(len(s.checks) for s in result.sections)))
    for section in result.sections:
        failures = sum(1 for c in section.checks if not c.passed)
        suite = _element(suites, "testsuite", name=section.id, tests=str(len(section.checks)),
                         failures=str(failures))
        if result.provenance:
            properties = _element(suite, "properties")
            for name, value in (("sandbox", result.sandbox), ("sandbox_weak", str(result.weak).lower()),
                                ("torch", result.torch)):
                _element(properties, "property", name=name, value=value)
        for c in section.checks:
            case = _element(suite, "testcase", classname=section.id, name=c.name)
            if not c.passed:
                message = xml_text(c.message)
                failure = _element(case, "failure", message=message[:500], type=c.kind or "check")
                failure.text = message
    return ET.tostring(suites, encoding="unicode") + "\n"
