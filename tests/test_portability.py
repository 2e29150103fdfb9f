"""The notebooks and the course's code run the same on Windows, macOS and Linux.

A static scan of the notebook specs, the course's own code and the notebooks
the build writes, for what works on one system only:

- text files opened without `encoding=` (open, io.open, os.fdopen, Path.open,
  read_text, write_text) and subprocess output decoded without it: the default
  is the locale's code page, cp1252 on most Windows machines, which garbles or
  rejects the notebooks' "·", "—" and "→";
- shell escapes: `!cmd`, `%%bash`, `%pip`, any IPython magic in a notebook's
  code, os.system, os.popen, subprocess with shell=True, subprocess.getoutput
  (Windows has no bash, and the grader leaves magics out anyway);
- a matplotlib backend forced to an interactive one (no display on a server,
  on CI, or in the self-check), or MPLBACKEND set;
- modules Windows' Python lacks (resource, fcntl, pwd, grp, termios, pty,
  tty), unless imported under `try: ... except ImportError`;
- absolute POSIX or drive-letter paths written into the code.

Each rule is also run on a planted bad example, so that the scan can fail.
"""
from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from support import ROOT

POSIX_ONLY_MODULES = {"resource", "fcntl", "pwd", "grp", "termios", "pty", "tty", "posix"}
NON_INTERACTIVE_BACKENDS = {"agg", "cairo", "pdf", "pgf", "ps", "svg", "template", "module://matplotlib_inline.backend_inline"}
SHELL_CALLS = {"os.system", "os.popen", "os.spawnl", "os.spawnlp", "os.spawnv", "os.spawnvp", "subprocess.getoutput",
               "subprocess.getstatusoutput", "commands.getoutput"}
SUBPROCESS_CALLS = {"run", "Popen", "call", "check_call", "check_output"}
# `.open(...)` receivers that open archives, URLs or file descriptors (os.open), not text files
NOT_TEXT_OPENERS = {"os", "zipfile", "tarfile", "gzip", "bz2", "lzma", "webbrowser", "archive", "Image", "wave"}
ABSOLUTE_PATH = re.compile(r"^(/(tmp|home|Users|usr|etc|var|opt|root|mnt|dev|proc)(/|$)|[A-Za-z]:[\\/]|\\\\\w)")  # /home/.., C:\.., \\server
MAGIC_LINE = re.compile(r"^\s*(!|%)")


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return _dotted(node.func) + "()"
    return "?"


def _keyword(call: ast.Call, name: str):
    return next((kw.value for kw in call.keywords if kw.arg == name), None)


def _literal(node):
    return node.value if isinstance(node, ast.Constant) else None


def _is_true(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _text_mode(call: ast.Call, position: int) -> bool:
    """Whether the call opens in text mode (mode given at `position` or as mode=)."""
    mode = _keyword(call, "mode")
    if mode is None and len(call.args) > position:
        mode = call.args[position]
    if mode is None:
        return True
    value = _literal(mode)
    return not (isinstance(value, str) and "b" in value)


def _guarded_imports(tree: ast.AST) -> set[int]:
    """ids of the import nodes inside a try whose handlers catch ImportError (or broader)."""
    guarded = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try):
            continue
        caught = set()
        for handler in node.handlers:
            types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
            caught |= {_dotted(t) if t is not None else "BaseException" for t in types}
        if caught & {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}:
            for inner in node.body:
                guarded |= {id(n) for n in ast.walk(inner) if isinstance(n, (ast.Import, ast.ImportFrom))}
    return guarded


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(_literal(first.value), str):
                found.add(id(first.value))
    return found


def python_problems(source: str, where: str) -> list[str]:
    """Everything in `source` (Python) that works on one system only, one line each."""
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        return [f"{where}:{error.lineno}: not Python ({error.msg}): a shell escape or an IPython magic?"]
    problems = []
    guarded, docstrings = _guarded_imports(tree), _docstrings(tree)

    def say(node, text):
        problems.append(f"{where}:{getattr(node, 'lineno', '?')}: {text}")

    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in guarded:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for name in names:
                if name.split(".")[0] in POSIX_ONLY_MODULES:
                    say(node, f"imports {name}, which Windows' Python lacks (guard it with try/except ImportError)")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            if ABSOLUTE_PATH.match(node.value):
                say(node, f"absolute path {node.value[:40]!r}: build paths with pathlib from a known folder")
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Subscript) and _dotted(target.value) == "os.environ" \
                        and _literal(target.slice) == "MPLBACKEND":
                    say(node, "sets MPLBACKEND: leave the backend to matplotlib (it falls back without a display)")
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        leaf = name.rsplit(".", 1)[-1]
        if name in ("open", "io.open", "os.fdopen", "codecs.open") or (
                isinstance(node.func, ast.Attribute) and leaf == "open"
                and _dotted(node.func.value).split(".")[0] not in NOT_TEXT_OPENERS):
            position = 1 if name in ("open", "io.open", "os.fdopen", "codecs.open") else 0
            if _text_mode(node, position) and _keyword(node, "encoding") is None:
                say(node, f"{name}() in text mode without encoding= (the locale's code page on Windows)")
        elif leaf in ("read_text", "write_text") and isinstance(node.func, ast.Attribute):
            if _keyword(node, "encoding") is None:
                say(node, f"{leaf}() without encoding= (the locale's code page on Windows)")
        elif name in SHELL_CALLS or name.endswith(".system") and "get_ipython" in name:
            say(node, f"{name}() runs a shell command (no bash on Windows; run Python instead)")
        elif leaf in SUBPROCESS_CALLS and name.startswith(("subprocess.", "sp.")) or name in SUBPROCESS_CALLS:
            if _is_true(_keyword(node, "shell")):
                say(node, f"{name}(shell=True) runs a shell command (no bash on Windows; pass an argument list)")
            if (_is_true(_keyword(node, "text")) or _is_true(_keyword(node, "universal_newlines"))) \
                    and _keyword(node, "encoding") is None:
                say(node, f"{name}(text=True) without encoding= decodes with the locale's code page on Windows")
        elif name in ("matplotlib.use", "mpl.use", "plt.switch_backend", "pyplot.switch_backend",
                      "matplotlib.pyplot.switch_backend"):
            backend = _literal(node.args[0]) if node.args else None
            if not isinstance(backend, str) or backend.lower() not in NON_INTERACTIVE_BACKENDS:
                say(node, f"{name}({backend!r}) forces a backend that needs a display")
    return problems


def magic_problems(lines: list[str], where: str, first_line: int = 1) -> list[str]:
    """IPython magics and shell escapes in notebook code (`!pip`, `%%bash`, `%matplotlib qt`)."""
    return [f"{where}:{first_line + index}: IPython magic or shell escape {line.strip()[:40]!r}: "
            "not Python, and Windows has no bash (the grader leaves magics out, too)"
            for index, line in enumerate(lines) if MAGIC_LINE.match(line)]


def _where(path: Path) -> str:
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name


def spec_problems(path: Path) -> list[str]:
    """The problems of a notebook spec: its code cells' magics, then the whole file as Python."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    problems, in_markdown = [], False
    for number, line in enumerate(lines, 1):
        if line.startswith("# %%"):
            in_markdown = "[markdown]" in line
            continue
        if not in_markdown:
            problems += magic_problems([line], _where(path), number)
    if problems:  # not Python until they are gone
        return problems
    return python_problems(text, _where(path))


def notebook_problems(path: Path) -> list[str]:
    """The problems of a generated notebook: every code cell, and the file itself."""
    where = _where(path)
    data = path.read_bytes()
    problems = []
    if b"\r" in data:
        problems.append(f"{where}: carriage returns in the file (write it with newline='\\n')")
    notebook = json.loads(data.decode("utf-8"))
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        cell_where = f"{where} cell {index}"
        found = magic_problems(source.splitlines(), cell_where)
        problems += found or python_problems(source, cell_where)
    return problems


SPECS = sorted((ROOT / "course" / "notebooks").glob("*.py"))
COURSE_CODE = sorted(p for p in (ROOT / "course").rglob("*.py") if "notebooks" not in p.relative_to(ROOT).parts)
NOTEBOOKS = sorted([*(ROOT / "student_template").glob("*.ipynb"), *(ROOT / "examples" / "correct").glob("*.ipynb"),
                    *(ROOT / "assignments" / "source").glob("*/*.ipynb")])


def test_there_is_something_to_scan():
    from autograder.core.sections import SECTIONS

    # one spec per section, and its notebook three times (released, solved, nbgrader source)
    assert len(SPECS) == len(SECTIONS) and len(NOTEBOOKS) == 3 * len(SECTIONS)
    assert {p.name for p in COURSE_CODE} >= {"steps.py", "execute.py", "attention_plots.py"}


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.name)
def test_notebook_spec_is_portable(path):
    assert spec_problems(path) == []


@pytest.mark.parametrize("path", COURSE_CODE, ids=lambda p: p.name)
def test_course_code_is_portable(path):
    assert python_problems(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT))) == []


def test_generated_notebooks_are_portable():
    problems = [problem for path in NOTEBOOKS for problem in notebook_problems(path)]
    assert problems == []


def test_generated_text_files_have_unix_line_ends():
    """The build writes "\\n" whatever the system, so a build on Windows changes no committed byte."""
    from course.builder import layout

    binary = (".whl", ".mo")  # the self-check wheels and the compiled message catalogues
    paths = sorted({path for pattern in layout.GENERATED_GLOBS if not pattern.endswith(binary)
                    for path in ROOT.glob(pattern)})
    assert len(paths) >= 30
    assert [p.relative_to(ROOT).as_posix() for p in paths if b"\r" in p.read_bytes()] == []


def test_the_plotting_helper_forces_no_backend():
    """attention_plots.py draws under whatever backend matplotlib picked (Agg without a display)."""
    for path in (ROOT / "course" / "attention_plots.py", ROOT / "student_template" / "attention_plots.py"):
        text = path.read_text(encoding="utf-8")
        assert "matplotlib.use(" not in text and "switch_backend" not in text and "MPLBACKEND" not in text


# ------------------------------------------------------------------ the scan can fail

PLANTED = [
    ("open('notes.txt')", "without encoding="),
    ("open(path, 'w')", "without encoding="),
    ("io.open(path, mode='a')", "without encoding="),
    ("Path('x.json').read_text()", "read_text() without encoding="),
    ("folder.joinpath('out.md').write_text(text)", "write_text() without encoding="),
    ("with path.open() as handle:\n    pass", "in text mode without encoding="),
    ("os.fdopen(fd, 'w')", "without encoding="),
    ("import os\nos.system('pip install torch')", "runs a shell command"),
    ("os.popen('ls').read()", "runs a shell command"),
    ("subprocess.run('ls -l', shell=True)", "shell=True"),
    ("subprocess.run(['git', 'log'], capture_output=True, text=True)", "text=True) without encoding="),
    ("subprocess.getoutput('uname')", "runs a shell command"),
    ("get_ipython().system('pip install torch')", "runs a shell command"),
    ("import matplotlib\nmatplotlib.use('TkAgg')", "needs a display"),
    ("plt.switch_backend('QtAgg')", "needs a display"),
    ("os.environ['MPLBACKEND'] = 'Agg'", "sets MPLBACKEND"),
    ("import resource", "imports resource"),
    ("from fcntl import flock", "imports fcntl"),
    ("DATA = '/home/student/data.pt'", "absolute path"),
    ("DATA = 'C:\\\\Users\\\\me\\\\data.pt'", "absolute path"),
    ("DATA = r'\\\\server\\share\\data.pt'", "absolute path"),
    ("!pip install torch", "not Python"),
]

FINE = """
import json
from pathlib import Path
try:
    import resource
except ImportError:
    resource = None
with open('notes.txt', encoding='utf-8') as handle:
    text = handle.read()
with open('weights.bin', 'rb') as handle:
    data = handle.read()
Path('out.md').write_text(text, encoding='utf-8')
Path('x.json').read_bytes()
subprocess.run([sys.executable, '-m', 'nbgrader'], capture_output=True, text=True, encoding='utf-8')
matplotlib.use('Agg')
zipfile.ZipFile('a.zip').open('member')
fd = os.open('log.txt', os.O_WRONLY | os.O_CREAT)
here = Path(__file__).parent / 'data'
"""


@pytest.mark.parametrize("source, says", PLANTED, ids=[p[0][:40] for p in PLANTED])
def test_a_planted_problem_is_found(source, says):
    problems = python_problems(source, "planted.py")
    assert len(problems) >= 1 and says in problems[0], problems


def test_portable_code_passes():
    assert python_problems(FINE, "fine.py") == []


@pytest.mark.parametrize("line", ["!pip install torch", "%%bash", "%pip install matplotlib", "%matplotlib qt",
                                  "  !ls"])
def test_a_planted_magic_in_a_spec_or_notebook_is_found(tmp_path, line):
    spec = tmp_path / "99_planted.py"
    spec.write_text("# %% [markdown]\n# !not code: markdown may say anything\n\n# %% [setup]\nimport torch\n"
                    + line + "\n", encoding="utf-8")
    problems = spec_problems(spec)
    assert len(problems) == 1 and "magic or shell escape" in problems[0] and "99_planted.py:6:" in problems[0], problems

    notebook = {"cells": [{"cell_type": "markdown", "source": "!fine"},
                          {"cell_type": "code", "source": ["import torch\n", line + "\n"]}]}
    path = tmp_path / "planted.ipynb"
    path.write_text(json.dumps(notebook), encoding="utf-8")
    found = notebook_problems(path)
    assert len(found) == 1 and "planted.ipynb cell 1:2:" in found[0], found
