"""Render a GradeResult: table (terminal), json (Gradescope), junit (CI), markdown (job summary)."""
from __future__ import annotations

import json
import textwrap
import xml.etree.ElementTree as ET

from autograder.results import WEAK_WARNING, GradeResult

FORMATS = ("table", "json", "junit", "markdown")


def render(result: GradeResult, fmt: str) -> str:
    return {"table": table, "json": as_json, "junit": junit, "markdown": markdown}[fmt](result)


def as_json(result: GradeResult) -> str:
    return json.dumps(result.to_gradescope(), indent=2, ensure_ascii=False) + "\n"


def table(result: GradeResult) -> str:
    lines = [f"Grading {result.submission} on {result.device}"
             + (f" ({result.provenance})" if result.provenance else "")]
    lines += [f"!! {WEAK_WARNING}", ""] if result.weak else [""]
    for section in result.sections:
        lines.append(f"{section.id}  {section.title}  {section.score:g} / {section.max_score:g}")
        for note in section.notes:
            lines.append(f"  ! {note}")
        for c in section.checks:
            mark = "ok  " if c.passed else "FAIL"
            lines.append(f"  {mark} {c.points:>4g}/{c.max_points:<4g} {c.name}")
            if c.message:
                for piece in textwrap.wrap(c.message, 96):
                    lines.append(f"              {piece}")
        lines.append("")
    lines.append(f"Total: {result.score:g} / {result.max_score:g}   ({result.execution_time:.1f} s)")
    return "\n".join(lines) + "\n"


def markdown_notices(result: GradeResult, escape=str) -> list[str]:
    """The lines under a Markdown report's heading: the weak-sandbox warning, the tier and torch."""
    lines = [f"> **Warning:** {escape(WEAK_WARNING)}", ""] if result.weak else []
    return lines + ([f"_{escape(result.provenance)}_", ""] if result.provenance else [])


def markdown(result: GradeResult) -> str:
    lines = [f"## Attention course: {result.score:g} / {result.max_score:g}", ""]
    lines += markdown_notices(result)
    lines += ["| section | score |", "|---|---|"]
    for section in result.sections:
        lines.append(f"| {section.id} | {section.score:g} / {section.max_score:g} |")
    for section in result.sections:
        failing = [c for c in section.checks if not c.passed]
        if not failing and not section.notes:
            continue
        lines += ["", f"### {section.id}: {section.title}", ""]
        lines += [f"> {note}" for note in section.notes]
        for c in failing:
            message = c.message.replace("|", "\\|").replace("\n", " ")
            lines.append(f"- **{c.name}** (0 / {c.max_points:g}): {message}")
    return "\n".join(lines) + "\n"


def junit(result: GradeResult) -> str:
    suites = ET.Element("testsuites", name="attention-course", tests=str(sum(len(s.checks) for s in result.sections)))
    for section in result.sections:
        failures = sum(1 for c in section.checks if not c.passed)
        suite = ET.SubElement(suites, "testsuite", name=section.id, tests=str(len(section.checks)),
                              failures=str(failures))
        if result.provenance:
            properties = ET.SubElement(suite, "properties")
            for name, value in (("sandbox", result.sandbox), ("sandbox_weak", str(result.weak).lower()),
                                ("torch", result.torch)):
                ET.SubElement(properties, "property", name=name, value=value)
        for c in section.checks:
            case = ET.SubElement(suite, "testcase", classname=section.id, name=c.name)
            if not c.passed:
                failure = ET.SubElement(case, "failure", message=c.message[:500], type=c.kind or "check")
                failure.text = c.message
    return ET.tostring(suites, encoding="unicode") + "\n"
