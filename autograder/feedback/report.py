"""The student's feedback report: DIR/report.html (self-contained, works offline) and DIR/report.md.

    python -m autograder grade SUBMISSION --report DIR
    python -m autograder check [PATH]            (writes ./feedback/ unless --report DIR)

Both show the score of every section and every check with its message. A
check that compared attention weights, scores, outputs, head splits or masks
on public inputs (the worked example, a documented call, a visible check's
inputs) comes with a heatmap of the expected matrix beside the student's and
their difference when it failed, and, where the picture helps, when it passed
too, labelled as passing (`CheckResult.figures`, rendered by `heatmaps`).
The header names the submission by its folder's (or file's) own name.

`check --section X` (and `grade --section X --report DIR`) updates only that
section of the report already in DIR: report-data.json, beside report.html,
keeps what the report shows (`report_store`), and the sections of the same
submission graded earlier stay; a report of another submission is replaced,
and the page says so. The HTML embeds its images as
base64 SVG in <img> elements (where a browser runs no script an SVG might
hold, and this one holds none) and loads nothing else (its
Content-Security-Policy forbids it); report.md, for CI job summaries, links
the same SVG files from DIR/heatmaps/ and repeats their numbers as text, since
job summaries do not show local images.

Rendering is deterministic: the same GradeResult gives the same bytes.
Grader errors (for the instructor) and check code never appear in a report.
"""
from __future__ import annotations

import base64
import hashlib
import html
import re
from pathlib import Path

from autograder.core.files import write_bytes_atomically
from autograder.core.submission import own_name
from autograder.feedback import heatmaps, svg
from autograder.feedback.formats import explained, fenced, markdown_notices, md_text, plain_text, scored, titled
from autograder.core.results import WEAK_WARNING, CheckResult, GradeResult
from autograder.i18n import _, _f, language

HTML_NAME, MARKDOWN_NAME, IMAGE_DIR, IMAGE_SUFFIX = "report.html", "report.md", "heatmaps", ".svg"

CSS = """
body { font-family: "DejaVu Sans", Verdana, sans-serif; margin: 24px auto; padding: 0 16px; max-width: 1240px;
       color: #1f2328; background: #ffffff; line-height: 1.45; }
h1 { font-size: 24px; margin-bottom: 4px; }
h2 { font-size: 19px; margin-top: 32px; border-bottom: 1px solid #d0d7de; padding-bottom: 4px; }
.total { font-size: 18px; }
.weak { background: #fdecea; border: 1px solid #c62828; padding: 6px 10px; }
.provenance { color: #555; font-size: 13px; }
table.scores { border-collapse: collapse; margin: 12px 0; }
table.scores td, table.scores th { border: 1px solid #d0d7de; padding: 4px 10px; text-align: left; }
.bar { display: inline-block; width: 120px; height: 10px; background: #eaeef2; vertical-align: middle; }
.bar span { display: block; height: 10px; background: #1a7f37; }
.check { margin: 8px 0; padding: 6px 10px; border-left: 4px solid #1a7f37; background: #f6f8fa; }
.check.fail { border-left-color: #cf222e; background: #fff5f5; }
.check .mark { font-weight: bold; margin-right: 6px; }
.check.pass .mark { color: #1a7f37; }
.check.fail .mark { color: #cf222e; }
.points { color: #57606a; margin-left: 6px; font-size: 13px; }
.message { margin: 4px 0 0 22px; white-space: pre-wrap; font-family: "DejaVu Sans Mono", monospace;
           font-size: 13px; }
.note { margin: 6px 0; padding: 6px 10px; background: #fff8c5; border-left: 4px solid #bf8700;
        font-family: "DejaVu Sans Mono", monospace; font-size: 13px; white-space: pre-wrap; }
.update { background: #ddf4ff; border: 1px solid #54aeff; padding: 6px 10px; }
figure { margin: 10px 0 4px 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #d0d7de; }
figure.passed img { border-color: #1a7f37; }
figcaption { font-size: 13px; color: #57606a; }
footer { margin-top: 32px; font-size: 12px; color: #57606a; }
"""

# Marks the page once every image has loaded (checked by the project's tests in a
# headless browser): data-images = "ok" or "broken", data-errors = script errors seen.
SCRIPT = """
(function () {
  var errors = 0;
  window.addEventListener("error", function () {
    errors += 1; document.body.setAttribute("data-errors", String(errors));
  }, true);
  window.addEventListener("load", function () {
    var images = Array.prototype.slice.call(document.images);
    var broken = images.filter(function (img) { return !img.complete || img.naturalWidth === 0; });
    document.body.setAttribute("data-images", broken.length ? "broken" : "ok");
    document.body.setAttribute("data-image-count", String(images.length));
    document.body.setAttribute("data-broken-images", String(broken.length));
    document.body.setAttribute("data-errors", String(errors));
  });
})();
"""

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'"


def _points(value: float) -> str:
    return f"{value:g}"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "-", text).strip("-").lower()[:60]


def figure_digest(figure: dict) -> str:
    """A short digest of what a figure shows: its picture's name changes with it (a cached one is reused)."""
    digest = hashlib.sha256()
    for key in ("expected", "actual"):
        # rounded first: the last bits of a float differ between CPUs (SIMD paths), the picture does not
        matrix = heatmaps.as_array(figure[key])
        digest.update(repr(matrix.shape).encode() + " ".join(f"{value:.6g}" for value in matrix.flat).encode())
    digest.update(repr((figure.get("labels"), figure.get("what", ""), bool(figure.get("passed")))).encode())
    return digest.hexdigest()[:10]


def figures(result: GradeResult) -> list[tuple[CheckResult, dict, str]]:
    """(check, figure, file name) of every heatmap of the report, passing ones included, in report order."""
    found = []
    for section in result.sections:
        for index, check in enumerate(section.checks, start=1):
            for number, figure in enumerate(check.figures, start=1):
                name = f"{section.id}-{index:02d}-{_slug(check.name)}-{number}-{figure_digest(figure)}{IMAGE_SUFFIX}"
                found.append((check, figure, name))
    return found


def figures_by_check(result: GradeResult) -> dict[int, list[tuple[dict, str]]]:
    """id(check) -> its (figure, file name) pairs."""
    by_check: dict[int, list] = {}
    for check, figure, name in figures(result):
        by_check.setdefault(id(check), []).append((figure, name))
    return by_check


def shared_failure(section) -> str:
    """The one message of a section whose checks all failed the same way (a missing notebook, ...), else ""."""
    messages = {c.message for c in section.checks}
    if len(section.checks) > 1 and len(messages) == 1 and not any(c.passed or c.figures for c in section.checks):
        return messages.pop()
    return ""


def render_images(result: GradeResult, cached: Path | None = None) -> dict[str, bytes]:
    """file name -> SVG bytes of every heatmap of the report. cached: a folder of pictures written
    earlier: one of the same name (the name holds the digest of what it shows) is reused, so that
    re-running the self-check does not draw the unchanged pictures again."""
    images = {}
    for _check, figure, name in figures(result):
        old = cached / name if cached is not None else None
        data = old.read_bytes() if old is not None and old.is_file() and not old.is_symlink() else b""
        images[name] = data if data.startswith(svg.START) and data.endswith(svg.END) else heatmaps.render_figure(figure)
    return images


# --------------------------------------------------------------------------- HTML


PRINTED_CAP = 2000  # characters of what a section's code printed, shown in the report


def printed_excerpt(section) -> str:
    """What the section's code printed, capped, with what HTML and text cannot carry removed."""
    text = "\n".join(plain_text(line) for line in section.printed.splitlines())
    if len(text) > PRINTED_CAP:
        text = text[:PRINTED_CAP] + "\n" + _f("... ({count} more characters not shown)", count=len(text) - PRINTED_CAP)
    return text


def _html(text) -> str:
    """`text` as HTML text or an attribute value: escaped, and without what HTML cannot carry
    (control characters, lone surrogates), since messages quote student code."""
    return html.escape(plain_text(text))


def figure_html(figure: dict, picture: bytes) -> str:
    """One heatmap as an HTML figure: the picture, and a caption that says whether it passed."""
    what, esc = figure.get("what", ""), _html
    data = base64.b64encode(picture).decode("ascii")
    if figure.get("passed"):
        alt = _f("passed: heatmaps of the expected values, yours, and the difference: {what}", what=what)
        caption = _f("Passed: your values of {what} (middle) match the expected ones (left); "
                     "the difference (right) is zero within the check's tolerance.", what=esc(what))
    else:
        alt = _f("heatmaps of the expected values, yours, and the difference: {what}", what=what)
        caption = _f("Left: the expected values of {what}. Middle: yours (differing cells outlined). "
                     "Right: yours minus expected.", what=esc(what))
    state = "passed" if figure.get("passed") else "failed"
    return (f'<figure class="{state}"><img src="data:image/svg+xml;base64,{data}" width="{heatmaps.WIDTH}" '
            f'height="{heatmaps.HEIGHT}" alt="{esc(alt)}"><figcaption>{caption}</figcaption></figure>')


def _html_top(result: GradeResult, notices) -> list[str]:
    """The page's head, heading, notices, total and the scores table's head."""
    esc = _html
    total = result.total_text(_points)
    return ["<!DOCTYPE html>", f'<html lang="{language()}">', "<head>", '<meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            "<title>" + _f("Attention course feedback: {total}", total=esc(total)) + "</title>",
            f"<style>{CSS}</style>", f"<script>{SCRIPT}</script>", "</head>", "<body>",
            "<h1>" + _("Attention course: your feedback") + "</h1>",
            *(['<p class="weak">' + _f("<strong>Warning:</strong> {warning}", warning=esc(_(WEAK_WARNING))) + "</p>"]
              if result.weak else []),
            *([f'<p class="provenance">{esc(result.plain_provenance)}</p>'] if result.plain_provenance else []),
            *[f'<p class="update">{esc(notice)}</p>' for notice in notices],
            '<p class="total">' + _f('Total: <strong id="total">{total}</strong>', total=esc(total))
            + (_f(" for <code>{submission}</code>", submission=esc(result.submission)) if result.submission else "")
            + "</p>",
            '<table class="scores"><thead><tr>' + _("<th>section</th><th>title</th><th>score</th><th></th>"
                                                   "<th>checks passed</th>") + "</tr></thead><tbody>"]


def render_html(result: GradeResult, images: dict[str, bytes] | None = None, notices: list[str] = ()) -> str:
    """The report page; notices: lines about this report itself (sections kept from earlier runs)."""
    images = render_images(result) if images is None else images
    by_check = figures_by_check(result)
    esc = _html
    out = _html_top(result, notices)
    for section in result.sections:
        share = section.score / section.max_score if section.max_score else 0.0
        passed = sum(1 for c in section.checks if c.passed)
        out.append(f'<tr><td><a href="#{esc(section.id)}">{esc(section.id)}</a></td><td>{esc(section.heading)}</td>'
                   f"<td>{_points(section.score)} / {_points(section.max_score)}</td>"
                   f'<td><span class="bar"><span style="width:{round(100 * share)}%"></span></span></td>'
                   f"<td>{passed_of(passed, len(section.checks))}</td></tr>")
    out.append("</tbody></table>")
    for section in result.sections:
        out.append(f'<section id="{esc(section.id)}">')
        out.append(f"<h2>{titled(esc(section.id), esc(section.heading))} "
                   f'<span class="points">{_points(section.score)} / {_points(section.max_score)}</span></h2>')
        out += [f'<div class="note">{esc(note)}</div>' for note in section.notes]
        if section.printed.strip():
            out.append("<details><summary>" + _("What your code printed while it was graded") + "</summary>"
                       f"<pre>{html.escape(printed_excerpt(section))}</pre></details>")
        if not section.checks:
            out.append("<p>" + _("No checks ran for this section.") + "</p>")
        shared = shared_failure(section)
        if shared:  # one message, not the same one under every check
            out.append(f'<div class="check fail" data-check="all">'
                       f'<span class="mark">&#10007;</span><strong>{all_checks(len(section.checks))}</strong>'
                       f'<span class="points">0 / {_points(section.max_score)}</span>'
                       f'<div class="message">{esc(shared)}</div><details><summary>{the_checks()}</summary><ul>'
                       + "".join(f"<li>{scored(esc(c.name), _points(c.max_points))}</li>" for c in section.checks)
                       + "</ul></details></div>")
        for check in [] if shared else section.checks:
            state = "pass" if check.passed else "fail"
            out.append(f'<div class="check {state}" data-check="{esc(check.name)}">'
                       f'<span class="mark">{"&#10003;" if check.passed else "&#10007;"}</span>'
                       f"<strong>{esc(check.name)}</strong>"
                       f'<span class="points">{_points(check.points)} / {_points(check.max_points)}</span>')
            if check.message:
                out.append(f'<div class="message">{esc(check.message)}</div>')
            out += [figure_html(figure, images[name]) for figure, name in by_check.get(id(check), [])
                    if name in images]
            out.append("</div>")
        out.append("</section>")
    footer = _("Made by the course's grader. Your checks and their messages are also in report.md.")
    out += [f"<footer>{footer}</footer>", "</body>", "</html>"]
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- Markdown


_md = md_text  # every piece of text in report.md: one line, no markup, links, images or HTML from it


def _grid(matrix, labels) -> list[str]:
    import numpy as np

    from autograder.feedback.heatmaps import as_array, cell_text

    values = as_array(matrix)
    rows, cols = labels if labels else (None, None)
    rows = rows or [str(i) for i in range(values.shape[0])]
    cols = cols or [str(i) for i in range(values.shape[1])]
    width = max(6, *(len(c) for c in cols))
    head = max(len(r) for r in rows)
    lines = [" " * head + " " + " ".join(c[:width].rjust(width) for c in cols)]
    for label, row in zip(rows, values):
        cells = (cell_text(float(v)).replace("\u2212", "-") for v in np.asarray(row))
        lines.append(label.rjust(head) + " " + " ".join(cell.rjust(width) for cell in cells))
    return lines


def figure_markdown(figure: dict, name: str, image_dir: str) -> list[str]:
    """One heatmap in report.md: the picture's link and, for a small failing one, its numbers."""
    if figure.get("passed"):
        return ["  ![" + _("passed: yours matches the expected values") + f"]({image_dir}/{name})"]
    lines = ["  ![" + _("expected, yours and the difference") + f"]({image_dir}/{name})"]
    if max(_grid_shape(figure)) <= 8:
        expected, yours, _difference = heatmaps.panel_titles()  # the numbers under the pictures' own titles
        lines += ["", "  <details><summary>" + _("the numbers") + "</summary>", "", "  ```text", "  " + expected]
        lines += ["  " + row for row in _grid(figure["expected"], figure.get("labels"))]
        lines.append("  " + yours)
        lines += ["  " + row for row in _grid(figure["actual"], figure.get("labels"))]
        lines += ["  ```", "", "  </details>", ""]
    return lines


def render_markdown(result: GradeResult, image_dir: str = IMAGE_DIR, notices: list[str] = ()) -> str:
    by_check = figures_by_check(result)
    lines = [_f("## Attention course feedback: {total}", total=result.total_text(_points)), ""]
    if result.submission:
        lines += [_f("Submission: {submission}", submission=_md(result.submission)), ""]
    lines += markdown_notices(result, _md, student=True)  # a report is the student's: plain words
    lines += [line for notice in notices for line in (f"> {_md(notice)}", "")]
    lines += [_("| section | title | score | checks passed |"), "|---|---|---|---|"]
    for section in result.sections:
        passed = sum(1 for c in section.checks if c.passed)
        lines.append(f"| {_md(section.id)} | {_md(section.heading)} | {_points(section.score)} / "
                     f"{_points(section.max_score)} "
                     f"| {passed_of(passed, len(section.checks))} |")
    for section in result.sections:
        lines += ["", "### " + scored(titled(_md(section.id), _md(section.heading)),
                                      f"{_points(section.score)} / {_points(section.max_score)}"), ""]
        lines += [f"> {_md(note)}" for note in section.notes]
        if section.notes:
            lines.append("")
        if section.printed.strip():
            lines += [_("What your code printed while it was graded:"), "", *fenced(printed_excerpt(section)), ""]
        shared = shared_failure(section)
        if shared:
            lines.append("- \u274c " + explained(scored(all_checks(len(section.checks)), f"0 / {_points(section.max_score)}"),
                                                 _md(shared)))
        for check in [] if shared else section.checks:
            mark = "\u2705" if check.passed else "\u274c"
            line = scored(f"**{_md(check.name)}**", f"{_points(check.points)} / {_points(check.max_points)}")
            lines.append(f"- {mark} " + (explained(line, _md(check.message)) if check.message else line))
            for figure, name in by_check.get(id(check), []):
                lines += figure_markdown(figure, name, image_dir)
    return "\n".join(lines).rstrip("\n") + "\n"


def passed_of(passed: int, count: int) -> str:
    """How many of a section's checks passed, as the scores table says it."""
    return _f("{passed} of {count}", passed=passed, count=count)


def the_checks() -> str:
    # i18n: the summary that opens the list of a section's checks under their one shared failure
    return _("the checks")


def all_checks(count: int) -> str:
    """What a section's one shared failure stands for: every one of its checks."""
    return _f("all {count} checks", count=count)


def _grid_shape(figure) -> tuple:
    shape = tuple(figure["expected"].shape)
    return shape if len(shape) == 2 else (1, shape[-1])


# --------------------------------------------------------------------------- files


def write_report(result: GradeResult, folder, *, source=None, visible_only: bool = False,
                 update: bool = False) -> Path:
    """Write DIR/report.html, DIR/report.md, DIR/heatmaps/*.svg and, for a submission given by its
    path, DIR/report-data.json; returns the HTML's path.

    source: the submission's path as given (the report names it by its resolved name; None: keep
        result.submission, e.g. a batch's student id, and write no data to merge with).
    visible_only: a self-check's report.
    update: this run graded some sections only (--section): the other sections of the same
        submission already in DIR stay (report_store.merge).
    """
    from dataclasses import replace

    from autograder.feedback import report_store

    folder = Path(folder)
    if source is not None:
        result = replace(result, submission=own_name(source))  # the report names it by its own name
        key = report_store.identity(source, visible_only)
    else:
        key = {}
    result, notices = report_store.merge(result, folder, key, update and source is not None)
    image_dir = folder / IMAGE_DIR
    images = render_images(result, cached=image_dir if image_dir.is_dir() else None)
    if image_dir.is_dir():  # heatmaps of an earlier run that this one no longer has (PNGs of older graders too)
        for old in sorted([*image_dir.glob("*.png"), *image_dir.glob(f"*{IMAGE_SUFFIX}")]):
            if old.name not in images:
                old.unlink()
    for name, picture in images.items():
        write_bytes_atomically(image_dir / name, picture)
    data_file = folder / report_store.DATA_NAME
    if source is not None:  # a later run of some sections of this submission merges with it
        write_bytes_atomically(data_file, report_store.encode(report_store.to_data(result, key)))
    elif data_file.is_file() and not data_file.is_symlink():  # a report of no known submission: nothing to merge
        data_file.unlink()
    write_bytes_atomically(folder / MARKDOWN_NAME, render_markdown(result, notices=notices).encode("utf-8"))
    write_bytes_atomically(folder / HTML_NAME, render_html(result, images, notices).encode("utf-8"))
    return folder / HTML_NAME
