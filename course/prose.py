"""The prose of a course notebook, as units a translator can work on, and put back in place.

A notebook holds prose in four places, and each becomes one or more units:
    a Markdown cell                     the whole cell is one unit
    a function's or class's docstring   its body (up to `Hints:`) is one unit, the `Hints:` line
        (in a solution or provided cell) another, and each numbered hint one more
    comment lines in a code cell        a run of full-line comments, or one trailing comment, that
                                        reads as words (two or more of them); comments inside the
                                        solution regions are not prose: students never see them
    the labels a code cell prints       the text of a `print("...", ...)` or `print(f"...")` call's
                                        first argument, a one-line string with words outside its
                                        {fields}: what a student reads on the screen (the setup
                                        cell's notes, a demo's labels); not inside the solution
                                        regions, where students write their own code; likewise the
                                        words a picture shows: a `show_weights(...)` call's `title=`
                                        and each string of its `labels=[...]`

Each unit knows the lines it spans and the text around it on those lines (the docstring's
indentation and quotes, a hint's number, a comment's `# `, the code around a printed label), so
that putting a unit back is a matter of lines: the same text put back gives the notebook back
byte for byte, and a translation changes nothing but the prose. Code, cell ids and metadata are
never touched. Two units may share a line (a printed label and a trailing comment): they are put
back from the right, so that each one's place is still where the English had it.
"""
from __future__ import annotations

import ast
import copy
import io
import re
import tokenize
from dataclasses import dataclass

import nbformat

BEGIN, END = "# BEGIN SOLUTION", "# END SOLUTION"
NOT_PROSE_COMMENTS = ("YOUR CODE HERE", "noqa")
WORD = re.compile(r"[A-Za-z]{2,}")
HINT = re.compile(r"(\s*)(\d+)\.\s")
LITERAL = re.compile(r'(?P<open>[fF]?(?P<quote>["\']))(?P<text>.*)(?P=quote)')  # a one-line string, no r/b
PLACEHOLDER = re.compile(r"\{[^{}]*\}")
ESCAPE = re.compile(r"\\.")


class ProseError(Exception):
    """A translation that cannot be put in place (it would change code, not prose)."""


@dataclass(frozen=True)
class Unit:
    """One piece of prose: `text` spans lines start..end (inclusive) of the cell's source, after
    `first` on its first line, after `rest` on the others, and before `last` on its last line."""

    cell_id: str
    kind: str  # markdown, docstring, hints, hint, comment, printed
    text: str
    start: int = 0
    end: int = 0
    first: str = ""
    rest: str = ""
    last: str = ""

    def render(self, text: str) -> list[str]:
        """The source lines that carry `text` in this unit's place."""
        lines = text.split("\n")
        out = [self.first + lines[0]] + [(self.rest + line) if line else self.rest.rstrip() for line in lines[1:]]
        out[-1] += self.last
        return out


def _block(lines: list[str], start: int, end: int, first: str, rest: str, last: str = "") -> str:
    """The text of lines start..end with `first`/`rest` cut from their starts and `last` from the end."""
    parts = [lines[start][len(first):]]
    for line in lines[start + 1 : end + 1]:
        parts.append(line[len(rest):] if line.startswith(rest) else line.strip())
    if last:
        parts[-1] = parts[-1][: len(parts[-1]) - len(last)]
    return "\n".join(parts)


def _unit(cell_id: str, kind: str, lines: list[str], start: int, end: int, first: str, rest: str,
          last: str = "") -> Unit:
    return Unit(cell_id, kind, _block(lines, start, end, first, rest, last), start, end, first, rest, last)


def solution_lines(lines: list[str]) -> set[int]:
    """Indices of the lines inside (and of) the solution regions."""
    inside, found = False, set()
    for index, line in enumerate(lines):
        if line.strip() == BEGIN:
            inside = True
        if inside:
            found.add(index)
        if line.strip() == END:
            inside = False
    return found


def docstring_units(cell_id: str, source: str) -> list[Unit]:
    """The units of every triple-quoted docstring of a function or class in `source`."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    lines = source.split("\n")
    units = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)) or not node.body:
            continue
        doc = node.body[0]
        if not (isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant) and isinstance(doc.value.value, str)):
            continue
        units += _split_docstring(cell_id, lines, doc.lineno - 1, doc.end_lineno - 1)
    return units


def _split_docstring(cell_id: str, lines: list[str], start: int, end: int) -> list[Unit]:
    opening = re.match(r'(\s*)"""', lines[start])
    if not opening or not lines[end].rstrip().endswith('"""'):
        return []  # only the course's own style: triple double quotes
    indent, first = opening.group(1), opening.group(0)
    if start == end:
        return [_unit(cell_id, "docstring", lines, start, end, first, indent, '"""')]
    body_end = end - 1 if lines[end].strip() == '"""' else end
    last = "" if body_end < end else '"""'
    hints = next((i for i in range(start + 1, body_end + 1) if lines[i].strip() == "Hints:"), None)
    stop = (hints - 1) if hints is not None else body_end
    while stop > start and not lines[stop].strip():
        stop -= 1
    units = [_unit(cell_id, "docstring", lines, start, stop, first, indent, last if stop == end else "")]
    if hints is None:
        return units
    units.append(_unit(cell_id, "hints", lines, hints, hints, indent, indent))
    index = hints + 1
    while index <= body_end:
        match = HINT.match(lines[index])
        if not match:
            index += 1
            continue
        stop = index
        while stop + 1 <= body_end and lines[stop + 1].strip() and not HINT.match(lines[stop + 1]):
            stop += 1
        rest = " " * len(match.group(0))
        units.append(_unit(cell_id, "hint", lines, index, stop, match.group(0), rest, last if stop == end else ""))
        index = stop + 1
    return units


def _is_prose_comment(text: str) -> bool:
    return len(WORD.findall(text)) >= 2 and not any(mark in text for mark in NOT_PROSE_COMMENTS)


def comment_units(cell_id: str, source: str) -> list[Unit]:
    """Prose comments outside the solution regions: runs of full-line comments, or trailing ones."""
    lines = source.split("\n")
    hidden = solution_lines(lines)
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(source + "\n").readline) if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError):
        return []
    units: list[Unit] = []
    run: list[tuple[int, int]] = []  # (line, column) of consecutive full-line comments with one indent

    def flush():
        if run:
            (row, col), last_row = run[0], run[-1][0]
            prefix = lines[row][:col] + "# "
            units.append(_unit(cell_id, "comment", lines, row, last_row, prefix, prefix))
            run.clear()

    for token in tokens:
        row, col = token.start[0] - 1, token.start[1]
        text = token.string[1:].strip()
        if row in hidden or not token.string.startswith("# ") or not _is_prose_comment(text):
            flush()
            continue
        full_line = not lines[row][:col].strip()
        if full_line and run and run[-1][0] == row - 1 and run[-1][1] == col:
            run.append((row, col))
            continue
        flush()
        if full_line:
            run.append((row, col))
        else:
            units.append(_unit(cell_id, "comment", lines, row, row, lines[row][: col + 2], ""))
    flush()
    return units


PICTURE_WORDS = ("title", "labels")  # the keywords of show_weights(...) that hold words


def _shown_strings(node: ast.Call) -> list[ast.expr]:
    """The strings a call shows: print's first argument, an exception's message (ValueError("...")), what a
    student reads when the provided code refuses an input; show_weights's title= and labels=[...]."""
    name = node.func.id if isinstance(node.func, ast.Name) else None
    if name == "print" or name and name.endswith(("Error", "Exception")):
        return node.args[:1]
    if name == "show_weights":
        values = [keyword.value for keyword in node.keywords if keyword.arg in PICTURE_WORDS]
        return [item for value in values for item in (value.elts if isinstance(value, ast.List) else [value])]
    return []


def _printed_literals(tree: ast.AST) -> list[ast.expr]:
    """The strings written on one line that a call prints or draws (_shown_strings)."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for shown in _shown_strings(node):
            is_text = isinstance(shown, ast.JoinedStr) or (isinstance(shown, ast.Constant) and isinstance(shown.value, str))
            if is_text and shown.lineno == shown.end_lineno:
                found.append(shown)
    return found


def _printed_unit(cell_id: str, line: str, row: int, literal: ast.expr) -> Unit | None:
    """The unit of one printed string, or None where it holds no words (only {fields}, spaces, marks)."""
    encoded = line.encode("utf-8")  # ast counts columns in bytes
    start, end = (len(encoded[:offset].decode("utf-8")) for offset in (literal.col_offset, literal.end_col_offset))
    match = LITERAL.fullmatch(line[start:end])
    if not match or match.group("quote") in match.group("text"):  # triple quotes, or "a" "b" joined
        return None
    text = match.group("text")
    if not WORD.search(PLACEHOLDER.sub(" ", ESCAPE.sub(" ", text))):
        return None
    head = line[: start + len(match.group("open"))]
    return Unit(cell_id, "printed", text, row, row, head, "", line[end - 1 :])


def printed_units(cell_id: str, source: str) -> list[Unit]:
    """The words each `print(...)` call shows first, outside the solution regions."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    lines = source.split("\n")
    hidden = solution_lines(lines)
    units = []
    for literal in _printed_literals(tree):
        row = literal.lineno - 1
        unit = None if row in hidden else _printed_unit(cell_id, lines[row], row, literal)
        if unit:
            units.append(unit)
    return units


def cell_units(cell) -> list[Unit]:
    """The prose units of one cell, in the order they appear."""
    if cell.cell_type == "markdown":
        return [Unit(cell.id, "markdown", cell.source)] if cell.source.strip() else []
    if cell.cell_type != "code":
        return []
    units = docstring_units(cell.id, cell.source) + comment_units(cell.id, cell.source)
    units += printed_units(cell.id, cell.source)
    return sorted(units, key=lambda unit: (unit.start, len(unit.first)))  # top to bottom, left to right


def notebook_units(nb) -> list[Unit]:
    return [unit for cell in nb.cells for unit in cell_units(cell)]


def _checked(unit: Unit, text: str) -> str:
    """`text` in `unit`'s place, refused where it would change code rather than prose."""
    if unit.kind == "printed":
        _check_printed(unit, text)
    if unit.kind in ("docstring", "hint", "hints") and '"""' in text:
        raise ProseError(f"cell {unit.cell_id}: a docstring's translation holds triple quotes")
    if "\n" in text and (unit.kind == "hints" or (unit.kind == "comment" and not unit.rest)):
        raise ProseError(f"cell {unit.cell_id}: a trailing comment or the `Hints:` line must stay one line")
    if unit.kind != "markdown" and "\\" in text and "\\" not in unit.text:
        raise ProseError(f"cell {unit.cell_id}: a backslash in code would start an escape; write none")
    return text


def _check_printed(unit: Unit, text: str) -> None:
    """A printed string's translation stays the same string: its quotes, escapes and {fields}."""
    if unit.first[-1] in text or "\n" in text:
        raise ProseError(f"cell {unit.cell_id}: a printed line's translation holds a quote or a line break")
    if sorted(PLACEHOLDER.findall(text)) != sorted(PLACEHOLDER.findall(unit.text)):
        raise ProseError(f"cell {unit.cell_id}: a printed line's translation must keep {PLACEHOLDER.findall(unit.text)}")
    if ESCAPE.findall(text) != ESCAPE.findall(unit.text):
        raise ProseError(f"cell {unit.cell_id}: a printed line's translation must keep {ESCAPE.findall(unit.text)}")
    quote = unit.first[-1]
    opening = unit.first[-2:] if unit.first[-2:-1] in ("f", "F") else quote
    try:
        ast.parse(opening + text + quote, mode="eval")
    except SyntaxError:
        raise ProseError(f"cell {unit.cell_id}: a printed line's translation is no longer one string") from None


def translated(nb, translate) -> nbformat.NotebookNode:
    """A copy of `nb` with each unit's text replaced by `translate(unit)`; nothing else changes."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        units = cell_units(cell)
        if not units:
            continue
        if cell.cell_type == "markdown":
            cell.source = _checked(units[0], translate(units[0]))
            continue
        english = cell.source.split("\n")
        lines = list(english)
        for unit in reversed(units):  # from the bottom and from the right: the places left to fill stay put
            new = unit.render(_checked(unit, translate(unit)))
            stop = len(english[unit.end]) - len(unit.last)  # where the English text ended on its last line
            new[-1] = new[-1][: len(new[-1]) - len(unit.last)] + lines[unit.end][stop:]  # the line's rest as it is now
            lines[unit.start : unit.end + 1] = new
        cell.source = "\n".join(lines)
    return nb
