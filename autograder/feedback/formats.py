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
import xml.etree.ElementTree as ET

from autograder.core.results import WEAK_WARNING, GradeResult, encodable
from autograder.core.shortening import breakable, display_width, shorten
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


def render(result: GradeResult, fmt: str, student: bool = False) -> str:
    """`result` in the format `fmt`; student: for a student's own screen (the table's and Markdown's
    line on where the code ran in plain words; JSON and JUnit keep the tier: machines read it)."""
    if fmt in ("table", "markdown"):
        return {"table": table, "markdown": markdown}[fmt](result, student)
    return {"json": as_json, "junit": junit}[fmt](result)


def as_json(result: GradeResult) -> str:
    return gradescope_json(result.to_gradescope())


def gradescope_json(data: dict) -> str:
    """A results.json as the grader writes every one (a grade's, or a not-graded one's: core/not_graded)."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


# Chinese line breaking (kinsoku, as in CLDR's and UAX #14's rules): no line starts with a closing
# bracket, a closing quote or a stop, comma or colon, and none ends with an opening bracket or quote
NO_LINE_START = frozenset("\uff09\u3011\u300d\u300f\u300b\u3009\u201d\u2019\uff3d\uff5d"
                          "\u3002\uff0c\u3001\uff1b\uff1a\uff01\uff1f\u2026\u00b7\u30fb)]},.;:!?")
NO_LINE_END = frozenset("\uff08\u3010\u300c\u300e\u300a\u3008\u201c\u2018\uff3b\uff5b([{")


# a short bracketed group of tokens (a shape "(2, 6, 6)", an index "[4, 3]") reads as one word: no line
# ends inside it; its spaces are held by a word joiner (not whitespace, one column) while lines are made
TOKEN_GROUP = re.compile(r"[\[(][^\s()\[\],]+(?:, [^\s()\[\],]+)+[\])]")
JOINER = "\u2060"


def wrap(text: str, columns: int) -> list[str]:
    """`text` in lines of at most `columns` display columns: textwrap's lines where every character
    is narrow (English), else lines broken at spaces or between wide characters, which Chinese
    writes without spaces, each wide character counted as two columns, never before a closing mark
    or after an opening one (such a mark goes to the next line with its neighbour); in both, never
    inside a short bracketed group of tokens (TOKEN_GROUP)."""
    held = TOKEN_GROUP.sub(lambda group: group.group().replace(" ", JOINER), " ".join(text.split()))
    return [line.replace(JOINER, " ") for line in _wrapped(held, columns)]


def _wrapped(text: str, columns: int) -> list[str]:
    if display_width(text) == len(text):
        return textwrap.wrap(text, columns)
    lines, rest = [], text
    while display_width(rest) > columns:
        end, width = 0, 0
        while width + display_width(rest[end]) <= columns:
            width, end = width + display_width(rest[end]), end + 1
        # the last break the rules allow that fits; else the first past it, else none (a line a little
        # long beats a word cut in two or a line that starts with a stop)
        cut = next((i for i in range(end, 0, -1) if line_may_break(rest, i)), None) or next(
            (i for i in range(end + 1, len(rest)) if line_may_break(rest, i)), len(rest))
        lines.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    return [*lines, rest] if rest else lines


def line_may_break(text: str, index: int) -> bool:
    """Whether a line may end before text[index]: at a space or beside a wide character, and neither
    a closing mark starting the next line nor an opening one ending this line."""
    before, after = text[:index].rstrip(), text[index:].lstrip()
    if not before or not after or not breakable(text, index):
        return False
    return after[0] not in NO_LINE_START and before[-1] not in NO_LINE_END


def status_marks() -> tuple[str, str]:
    """The table's (passed, failed) words in the reader's language, padded to one display width,
    so that the points after them line up whichever word a line has."""
    # i18n: the table's status of a passing check (a word or two; the other is its failing twin)
    passed = _("ok")
    # i18n: the table's status of a failing check
    failed = _("FAIL")
    width = max(4, display_width(passed), display_width(failed))
    return tuple(mark + " " * (width - display_width(mark)) for mark in (passed, failed))


def provenance(result: GradeResult, student: bool) -> str:
    """Where the code ran: in plain words for a student, with the sandbox's tier for instructors."""
    return result.plain_provenance if student else result.provenance


def table(result: GradeResult, student: bool = False) -> str:
    names = {"submission": terminal_text(result.submission), "device": result.device}
    ran = provenance(result, student)
    lines = [_f("Grading {submission} on {device} ({provenance})", provenance=ran, **names)
             if ran else _f("Grading {submission} on {device}", **names)]
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


def titled(section_id: str, heading: str) -> str:
    """A section's heading line: "01_scores: title" (Chinese joins them with a full-width colon)."""
    return _f("{section}: {title}", section=section_id, title=heading)


def scored(what: str, points: str) -> str:
    """A check or a section with its points: "name (1 / 2)" (full-width brackets in Chinese)."""
    return _f("{what} ({points})", what=what, points=points)


def explained(what: str, message: str) -> str:
    """A failing check's line with its message: "name (0 / 1): message"."""
    return _f("{what}: {message}", what=what, message=message)


def markdown_notices(result: GradeResult, escape=md_text, student: bool = False) -> list[str]:
    """The lines under a Markdown report's heading: the weak-sandbox warning, where the code ran, torch."""
    lines = [_f("> **Warning:** {warning}", warning=escape(_(WEAK_WARNING))), ""] if result.weak else []
    ran = provenance(result, student)
    return lines + ([f"_{escape(ran)}_", ""] if ran else [])


def markdown(result: GradeResult, student: bool = False) -> str:
    lines = [_f("## Attention course: {total}", total=result.total_text()), ""]
    lines += markdown_notices(result, student=student)
    lines += [_("| section | score |"), "|---|---|"]
    # section ids, titles and check names are the grader's own (ids stay greppable, 01_scores);
    # notes and messages quote student code: escaped
    for section in result.sections:
        lines.append(f"| {section.id} | {section.score:g} / {section.max_score:g} |")
    for section in result.sections:
        failing = [c for c in section.checks if not c.passed]
        if not failing and not section.notes:
            continue
        lines += ["", f"### {titled(section.id, section.heading)}", ""]
        lines += [f"> {md_text(note)}" for note in section.notes]
        for c in failing:
            lines.append("- " + explained(scored(f"**{c.name}**", f"0 / {c.max_points:g}"), md_text(c.message)))
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
                failure = _element(case, "failure", message=shorten(message, 500), type=c.kind or "check")
                failure.text = message
    return ET.tostring(suites, encoding="unicode") + "\n"
