"""IPython syntax in a notebook cell -> the plain Python the worker runs, as Jupyter would run it.

IPython's own input transformer reads the cell (so `%%time`, `%matplotlib`,
`!ls`, `x = !ls`, `obj?` parse exactly as in Jupyter). Then:

- a cell magic that only times or captures its body (`%%time`, `%%timeit`,
  `%%capture`, ...) becomes its body: the names it defines are defined, at
  the same line numbers;
- `%time stmt` / `%timeit stmt` on a line of its own becomes `stmt`;
- any other magic stays the call IPython made of it (`get_ipython()....`),
  which the worker answers with nothing (worker/student_code.NoShell); the ones with
  effects outside the notebook (`%pip`, `%%bash`, `!cmd`, `%run`, ...) are
  also noted for the student, since grading never runs them.

Everything here reads text; nothing is executed. The tamper and banned-API
scans read the result, so code inside `%%time` is scanned like any other.
"""
from __future__ import annotations

import ast
import re

from autograder.i18n import _, _f

# cell magics whose body is ordinary Python, run once while grading
TRANSPARENT_CELL = {"time", "timeit", "capture", "prun", "memit", "debug"}
# line magics whose argument is a statement, run once while grading
TRANSPARENT_LINE = {"time", "timeit", "prun", "memit"}
# magics that only change how the notebook looks or load helpers: nothing to say
QUIET = {"matplotlib", "load_ext", "reload_ext", "autoreload", "aimport", "config", "precision", "xmode",
         "pinfo", "pinfo2", "psearch", "pdoc", "pdef", "psource", "pfile", "who", "whos", "who_ls",
         "lsmagic", "magic", "page", "pprint", "colors", "doctest_mode", "automagic", "autocall",
         "html", "HTML", "markdown", "latex", "javascript", "js", "svg"}

_LINE_CALL = re.compile(r"^(\s*)get_ipython\(\)\.run_line_magic\((.*)\)\s*$")
_NAME = re.compile(r"\s*['\"]([^'\"]*)['\"]")
_ANY_CALL = re.compile(r"get_ipython\(\)\.(run_line_magic|run_cell_magic|system|getoutput)\(")

_transformer = None


def _manager():
    global _transformer
    if _transformer is None:
        from IPython.core.inputtransformer2 import TransformerManager

        _transformer = TransformerManager()
    return _transformer


def _magic_args(text: str) -> tuple | None:
    """('time', 'x = f()') for the argument text of a get_ipython() call, or None."""
    try:
        node = ast.parse(f"f({text})", mode="eval").body
        values = tuple(ast.literal_eval(arg) for arg in node.args)
    except (SyntaxError, ValueError):
        return None
    return values if all(isinstance(v, str) for v in values) else None


def _note(notes: list, label: str, line: int, spelled: str, whole_cell: bool = False) -> None:
    fields = {"label": label, "line": line, "spelled": spelled}
    if whole_cell:
        notes.append(_f("{label}, line {line}: {spelled} is not run while grading (it acts outside the notebook); "
                        "nor is the rest of that cell", **fields))
    else:
        notes.append(_f("{label}, line {line}: {spelled} is not run while grading (it acts outside the notebook); "
                        "the rest of the cell is", **fields))


# what IPython rewrites in valid Python: a line it reads as a prompt to strip ("In [1]: ", "...: ", ">>> "),
# a line of blanks (emptied), a carriage return
_REWRITTEN = re.compile(r"^\s*(In \[\d+\]:|\.\.\.+:|>>>|\.\.\.)(\s|$)|^[ \t\f\v]+$|\r", re.MULTILINE)


def plain_python(source: str) -> bool:
    """Whether IPython would only end `source` with a newline: it is Python already, starts with
    code at its first column (IPython drops leading blank lines and indentation) and has nothing
    else IPython rewrites (_REWRITTEN). Every magic, shell escape or help request is a syntax error
    in Python, so none can hide in such a cell; IPython's transformer (whose import costs a tenth
    of a second) is then not needed."""
    if not source.strip() or not source.split("\n", 1)[0].strip() or source[0] in " \t\f\v" \
            or _REWRITTEN.search(source):
        return False
    try:
        ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    return True


def to_python(source: str, label: str, notes: list) -> str:
    """`source` as the plain Python the worker runs; a note per magic that grading leaves out."""
    if plain_python(source):
        return source if source.endswith("\n") else source + "\n"
    try:
        code = _manager().transform_cell(source)
    except Exception:  # IPython could not read it: the worker reports the SyntaxError, as Jupyter would
        return source
    whole = _whole_cell_magic(code)
    if whole is not None:
        name, line, body = whole
        if name in TRANSPARENT_CELL:
            return "\n" + to_python(body, label, notes)  # line 1 held the magic: the body keeps its lines
        if name not in QUIET:
            _note(notes, label, 1, f"%%{name}", whole_cell=True)
        return ""
    lines = code.split("\n")
    for number, text in enumerate(lines, start=1):
        if not _ANY_CALL.search(text):
            continue
        match = _LINE_CALL.match(text)
        args = _magic_args(match.group(2)) if match else None
        if args and len(args) == 2 and args[0] in TRANSPARENT_LINE and args[1].strip():
            lines[number - 1] = match.group(1) + args[1].strip()
            continue
        for call in _ANY_CALL.finditer(text):
            kind = call.group(1)
            if kind in ("system", "getoutput"):
                _note(notes, label, number, _("a shell command (!)"))
            else:
                quoted = _NAME.match(text, call.end())
                name = quoted.group(1) if quoted else "?"
                if name not in QUIET and name not in TRANSPARENT_LINE:
                    _note(notes, label, number, f"%{name}")
    return "\n".join(lines)


def _whole_cell_magic(code: str) -> tuple | None:
    """(name, line, body) when the whole transformed cell is one cell magic, else None."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        return None
    call = tree.body[0].value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr == "run_cell_magic" and len(call.args) == 3):
        return None
    try:
        values = [ast.literal_eval(arg) for arg in call.args]
    except ValueError:
        return None
    return tuple(values) if all(isinstance(v, str) for v in values) else None
