"""similarity.html: the pairs of the similarity report, ranked, with both codes side by side.

One self-contained page (no file or network fetched: the feedback report's
Content-Security-Policy): the whole-course view first (pairs alike in several
sections, the strongest signal), then each section's pairs, strongest first,
the top DETAILED of them with both students' code as compared (normalised, the
released code left out) and the fragments both have highlighted (<mark>).
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field

from autograder.i18n import N_, _, _f, language

DETAILED = 30  # pairs per section shown with their code
COURSE_ROWS = 200

CSS = """
body { font-family: "DejaVu Sans", Verdana, sans-serif; margin: 24px auto; padding: 0 16px; max-width: 1400px;
       color: #1f2328; }
h2 { font-size: 19px; margin-top: 28px; border-bottom: 1px solid #d0d7de; padding-bottom: 4px; }
h3 { font-size: 15px; margin-top: 20px; }
table.data { border-collapse: collapse; font-size: 13px; }
table.data td, table.data th { border: 1px solid #d0d7de; padding: 3px 8px; text-align: left; }
.note { background: #fff8c5; border: 1px solid #d4a72c; padding: 8px 12px; font-size: 14px; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
.pair pre { font-size: 12px; border: 1px solid #d0d7de; padding: 6px; overflow-x: auto; margin: 0; }
mark { background: #ffd8b5; }
"""

# The page marks itself once loaded (the project's tests read it in a headless browser):
# data-marks = highlighted fragments on screen, data-errors = script errors seen.
SCRIPT = """
(function () {
  var errors = 0;
  window.addEventListener("error", function () { errors += 1; }, true);
  window.addEventListener("load", function () {
    var marks = Array.prototype.slice.call(document.querySelectorAll("pre mark"));
    var shown = marks.filter(function (m) { return m.getClientRects().length > 0; });
    document.body.setAttribute("data-marks", String(shown.length));
    document.body.setAttribute("data-errors", String(errors));
  });
})();
"""

MEANING = N_(
    "Evidence, never a verdict: no score depends on this page. A high similarity says that two students' "
    "code, once comments, formatting, names and the released code are set aside, shares rare fragments. "
    "It can come from copying, from working together, from a common outside source, or, for a short "
    "exercise, from two students writing the obvious answer. A low similarity does not prove independent "
    "work either. Read both codes before drawing any conclusion, and talk to the students."
)


@dataclass
class CoursePair:
    student_a: str
    student_b: str
    sections: dict[str, float] = field(default_factory=dict)

    @property
    def total(self) -> float:
        return round(sum(self.sections.values()), 4)


def course_pairs(results) -> list[CoursePair]:
    """Pairs alike in at least two sections, by the sum of their similarities (ties: the ids)."""
    found: dict[tuple[str, str], CoursePair] = {}
    for result in results:
        for pair in result.pairs:
            key = (pair.student_a, pair.student_b)
            found.setdefault(key, CoursePair(*key)).sections[pair.section] = pair.similarity
    ranked = [p for p in found.values() if len(p.sections) >= 2]
    return sorted(ranked, key=lambda p: (-p.total, p.student_a, p.student_b))


def matched_lines(result, pair) -> tuple[set[int], set[int]]:
    """The line numbers (from 0) of each side's compared text that hold a fragment both have."""
    from copydetect import compare_files

    first, second = result.fingerprint(pair.student_a), result.fingerprint(pair.student_b)
    _, _, (slices_a, slices_b) = compare_files(first, second)
    return _lines(first.raw_code, slices_a), _lines(second.raw_code, slices_b)


def _lines(text: str, slices) -> set[int]:
    starts = [0]
    for index, char in enumerate(text):
        if char == "\n":
            starts.append(index + 1)
    lines: set[int] = set()
    for start, stop in zip(*(slices if len(slices) == 2 else ([], []))):
        first = _line_of(starts, int(start))
        last = _line_of(starts, max(int(stop) - 1, int(start)))
        lines.update(range(first, last + 1))
    return lines


def _line_of(starts: list[int], position: int) -> int:
    import bisect

    return bisect.bisect_right(starts, position) - 1


def code_html(text: str, marked: set[int]) -> str:
    """The code escaped, the marked lines inside <mark>."""
    lines = text.split("\n")
    return "\n".join(f"<mark>{html.escape(line)}</mark>" if i in marked and _is_code(line) else html.escape(line)
                     for i, line in enumerate(lines))


def _is_code(line: str) -> bool:
    """Not a blank line, nor a label line (`# code cell 4`): the shown code has no other comments."""
    return bool(line.strip()) and not line.lstrip().startswith("#")


def anchor(section: str, a: str, b: str) -> str:
    import hashlib

    key = "\0".join((section, a, b)).encode("utf-8", "surrogateescape")
    return "p-" + hashlib.sha256(key).hexdigest()[:16]


def has_code(result, pair) -> bool:
    """Whether both students' code was compared (a pair may share wrong answers only)."""
    return pair.student_a in result.submissions and pair.student_b in result.submissions


def pair_detail(result, pair, index: int) -> str:
    first, second = result.submissions[pair.student_a], result.submissions[pair.student_b]
    marked_a, marked_b = matched_lines(result, pair)
    esc = html.escape
    heading = _f("{index}. {a} and {b}: similarity {similarity:.2f} (matched {share_a:.0%} of {a}'s code, "
                 "{share_b:.0%} of {b}'s)", index=index, a=esc(pair.student_a), b=esc(pair.student_b),
                 similarity=pair.similarity, share_a=pair.share_a, share_b=pair.share_b)
    return "\n".join([
        f'<h3 id="{anchor(pair.section, pair.student_a, pair.student_b)}">{heading}</h3>',
        '<div class="pair">',
        f"<pre>{code_html(first.shown, marked_a)}</pre>", f"<pre>{code_html(second.shown, marked_b)}</pre>",
        "</div>"])


# the tables' column headers, translated where the page is written
PAIR_COLUMNS = ("#", N_("student A"), N_("student B"), N_("similarity"), N_("share of A"), N_("share of B"),
                N_("text"), N_("computation"), N_("same wrong answers"))
ANSWER_COLUMNS = ("#", N_("student A"), N_("student B"), N_("check"), N_("the values both returned"),
                  N_("students who returned them"), N_("students who failed the check"))
ANSWER_ROWS = 100  # rows of a section's table of shared wrong answers
NO_EVIDENCE = N_("no evidence")  # a view where one side holds only what the class writes alike


def view_figure(value) -> str:
    return html.escape(_(NO_EVIDENCE)) if value is None else f"{value:.2f}"
COURSE_COLUMNS = ("#", N_("student A"), N_("student B"), N_("sections"), N_("sum of similarities"),
                  N_("each section"))


def header_row(columns) -> str:
    return "<tr>" + "".join(f"<th>{html.escape(_(name))}</th>" for name in columns) + "</tr>"


def pair_table(pairs, result=None) -> str:
    """The pairs, each numbered with a link to its code where `result` (compared by this run) shows it."""
    esc = html.escape
    rows = [header_row(PAIR_COLUMNS)]
    for index, pair in enumerate(pairs, 1):
        number = f'<a href="#{anchor(pair.section, pair.student_a, pair.student_b)}">{index}</a>' \
            if result is not None and index <= DETAILED and has_code(result, pair) else str(index)
        rows.append(f"<tr><td>{number}</td><td>{esc(pair.student_a)}</td><td>{esc(pair.student_b)}</td>"
                    f"<td>{pair.similarity:.2f}</td><td>{pair.share_a:.0%}</td><td>{pair.share_b:.0%}</td>"
                    f"<td>{view_figure(pair.text)}</td><td>{view_figure(pair.computation)}</td>"
                    f"<td>{len(pair.wrong_answers)}</td></tr>")
    return '<table class="data">' + "".join(rows) + "</table>" if pairs else "<p>" + _("No pair above the floor.") + "</p>"


def values_text(answer: dict) -> str:
    """'(2, 6) 0.1385, 0.2379, …': the shape and first values of a wrong answer, as the grade kept them."""
    shape = "(" + ", ".join(str(size) for size in answer["shape"]) + ")"
    count = 1
    for size in answer["shape"]:
        count *= size
    more = ", …" if count > len(answer["values"]) else ""
    return f"{shape} " + ", ".join(str(value) for value in answer["values"]) + more


def answers_table(pairs) -> str:
    """The pairs that returned the same rare wrong answers, the strongest evidence first: each answer's check
    and the values both students returned (the same values: that is the evidence)."""
    ranked = sorted((p for p in pairs if p.wrong_answers), key=lambda p: (-p.answer_weight, p.student_a, p.student_b))
    if not ranked:
        return ""
    esc = html.escape
    rows = [header_row(ANSWER_COLUMNS)]
    for index, pair in enumerate(ranked[:ANSWER_ROWS], 1):
        for answer in pair.wrong_answers:
            rows.append(f"<tr><td>{index}</td><td>{esc(pair.student_a)}</td><td>{esc(pair.student_b)}</td>"
                        f"<td>{esc(answer['title'])}</td><td><code>{esc(values_text(answer))}</code></td>"
                        f"<td>{answer['students']}</td><td>{answer['failing']}</td></tr>")
    return ("<h3>" + _("The same rare wrong answers") + "</h3><p>" + _(
        "Two students whose code returned the same wrong values on the same check, where the others who failed "
        "it returned other values (a mistake of the course's catalogue, which many make alike, is left out). "
        "A rewrite of the code does not change what it returns.") + "</p>"
        + '<table class="data">' + "".join(rows) + "</table>")


def course_table(pairs: list[CoursePair], detailed: set) -> str:
    """The pairs alike in several sections; each section's figure links to the pair's code where the
    page shows it (`detailed`: the (section, a, b) of the pairs shown with their code)."""
    if not pairs:
        return "<p>" + _("No pair is alike in more than one section.") + "</p>"
    esc = html.escape

    def figure(section: str, pair: CoursePair, value: float) -> str:
        if (section, pair.student_a, pair.student_b) not in detailed:
            return f"{esc(section)} {value:.2f}"
        return f'<a href="#{anchor(section, pair.student_a, pair.student_b)}">{esc(section)}</a> {value:.2f}'

    rows = [header_row(COURSE_COLUMNS)]
    for index, pair in enumerate(pairs[:COURSE_ROWS], 1):
        each = ", ".join(figure(s, pair, v) for s, v in sorted(pair.sections.items()))
        rows.append(f"<tr><td>{index}</td><td>{esc(pair.student_a)}</td><td>{esc(pair.student_b)}</td>"
                    f"<td>{len(pair.sections)}</td><td>{pair.total:.2f}</td><td>{each}</td></tr>")
    return '<table class="data">' + "".join(rows) + "</table>"


def separating(result) -> str:
    """Whether this section's code can tell a copy in this class: how many submissions hold enough code that
    the class does not write alike, in each view (SectionResult.carrying)."""
    count = len(result.submissions)
    text, computation = result.carrying.get("text", 0), result.carrying.get("computation", 0)
    if count and 2 * max(text, computation) < count:
        return '<p class="note">' + _f(
            "Little evidence in this section: only {text} of {count} submissions (text) and {computation} "
            "(computation) hold enough code that the class does not write alike. A copy here can look like "
            "independent work and the other way round; rely on the other sections.",
            text=text, computation=computation, count=count) + "</p>"
    return "<p>" + _f("{text} of {count} submissions (text) and {computation} (computation) hold enough code "
                      "that the class does not write alike to tell a copy.", text=text, computation=computation,
                      count=count) + "</p>"


def section_html(result) -> list[str]:
    section = result.section
    heading = f'<h2 id="s-{html.escape(section.id)}">{html.escape(section.id)}: {html.escape(_(section.title))}</h2>'
    if result.earlier:  # kept from an earlier run into this folder: its pairs, not its code
        return [heading, "<p>" + _f("Compared by an earlier run ({when}): {submissions} submissions, {pairs} "
                                    "pair(s) at or above the floor; run it again to see the code.",
                                    when=html.escape(result.earlier), submissions=result.counted,
                                    pairs=len(result.pairs)) + "</p>", pair_table(result.pairs),
                answers_table(result.pairs)]
    parts = [heading,
             "<p>" + _f("{submissions} submissions compared; {pairs} pair(s) at or above the floor.",
                        submissions=len(result.submissions), pairs=len(result.pairs)) + "</p>",
             separating(result), pair_table(result.pairs, result), answers_table(result.pairs)]
    if result.problems:
        parts.append("<p>" + _("Left out:") + "</p><ul>" + "".join(f"<li>{html.escape(p.splitlines()[0])}</li>"
                                                      for p in result.problems) + "</ul>")
    parts += [pair_detail(result, pair, index) for index, pair in enumerate(result.pairs[:DETAILED], 1)
              if has_code(result, pair)]
    return parts


def render(results, source: str) -> str:
    """The whole page."""
    from autograder.feedback.report import CSP

    contents = " · ".join(f'<a href="#s-{html.escape(r.section.id)}">{html.escape(r.section.id)}</a>'
                          for r in results)
    title = _("Attention course: code similarity")
    body = [
        "<!DOCTYPE html>", f'<html lang="{language()}">', "<head>", '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        "<title>" + title + "</title>", f"<style>{CSS}</style>", f"<script>{SCRIPT}</script>",
        "</head>", "<body>", "<h1>" + title + "</h1>",
        "<p>" + _f("Submissions in <code>{source}</code>. Sections: {contents}", source=html.escape(source),
                   contents=contents) + "</p>",
        f'<p class="note">{html.escape(_(MEANING))}</p>',
        '<h2 id="course">' + _("Across sections: pairs alike in several sections") + "</h2>",
        course_table(course_pairs(results), {(p.section, p.student_a, p.student_b)
                                             for r in results if not r.earlier for p in r.pairs[:DETAILED]
                                             if has_code(r, p)})]
    for result in results:
        body += section_html(result)
    body += ["</body>", "</html>"]
    return "\n".join(body) + "\n"
