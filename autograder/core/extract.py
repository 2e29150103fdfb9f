"""From a submission file to the code cells the worker runs.

Notebook rules: code cells in order; nbgrader's test cells (grade: true,
solution: false) are left out, since their asserts are the visible checks and
the grader runs its own; IPython syntax becomes plain Python as IPython itself
reads it (magics.py: `%%time` keeps its body, `%pip` and `!cmd` are noted and
not run; line numbers stay right). Nothing here executes student code: a
notebook that is not valid JSON, or JSON that is not a notebook, becomes one
clear message.
"""
from __future__ import annotations

import ast
import functools
import json
from dataclasses import dataclass, field

from autograder.core import magics
from autograder.core.shortening import shorten
from autograder.i18n import N_, _, _f

MAX_CELLS = 5_000
# the kind of a section with no file at all, and of each of its checks (grades.csv's status names them)
NOT_HANDED_IN = "not_handed_in"
# the kinds of a section the grader refused to grade (its checks all fail so, and score 0): a file over
# the size limit, one that is no readable notebook, code that reaches into the grader
# (failures.tampering_failure); grades.csv's status and "who needs help" name each, never "graded"
TOO_BIG, UNREADABLE, TAMPERING = "too_big", "unreadable", "tampering"
REFUSALS = (TOO_BIG, UNREADABLE, TAMPERING)


@dataclass
class Extracted:
    cells: list  # [{"label": "cell 3", "source": "..."}]
    problem: str | None = None  # set when nothing could be extracted
    notes: list = field(default_factory=list)  # what grading leaves out (a %pip line, a %%bash cell)
    kind: str = UNREADABLE  # why there are no cells: UNREADABLE, TOO_BIG, or NOT_HANDED_IN (no file at all)
    language: str | None = None  # the notebook's metadata.course.language, as written (i18n.resolve checks it)


def _is_test_cell(cell: dict) -> bool:
    meta = cell.get("metadata")
    meta = meta.get("nbgrader") if isinstance(meta, dict) else None
    if not isinstance(meta, dict):
        return False
    return bool(meta.get("grade")) and not meta.get("solution")


def from_notebook(name: str, data: bytes) -> Extracted:
    """The code cells of a notebook's bytes (read, capped, by files.read_inside)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return Extracted([], _f("{name} is not a text file (not UTF-8): restore it from git, or download it again "
                                "from Jupyter (File > Download), and hand it in again", name=name))
    try:
        notebook = json.loads(text)
    except RecursionError:  # json's parser recurses once per level: bounded by the recursion limit
        return Extracted([], _f("{name} is nested too deeply to be a notebook; restore it from git", name=name))
    except ValueError as error:
        return Extracted([], _f("{name} is not valid JSON ({error}); re-download it or restore it from git",
                                name=name, error=error))
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        return Extracted([], _f("{name} is JSON but not a Jupyter notebook (no list of cells): hand in the .ipynb "
                                "file that Jupyter saved", name=name))
    if len(notebook["cells"]) > MAX_CELLS:
        return Extracted([], _f("{name} has {count} cells; notebooks over {limit} cells are not graded",
                                name=name, count=len(notebook["cells"]), limit=MAX_CELLS))
    cells, notes = [], []
    code_number = 0
    for cell in notebook["cells"]:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        code_number += 1
        if _is_test_cell(cell):
            continue
        source = cell.get("source", "")
        if isinstance(source, list):
            source = "".join(part for part in source if isinstance(part, str))
        if not isinstance(source, str):
            continue
        text = valid_text(source)
        label = cell_label(text, code_number)
        if text != source:
            notes.append(_f("{label}: characters that are not valid Unicode (lone surrogates) were replaced by '?'",
                            label=label))
        source = text
        cells.append({"label": label, "source": magics.to_python(source, label, notes)})
    return Extracted(cells, notes=notes, language=notebook_language(notebook))


def notebook_language(notebook: dict) -> str | None:
    """The language its metadata asks the grader to speak (metadata.course.language), or None."""
    metadata = notebook.get("metadata")
    course = metadata.get("course") if isinstance(metadata, dict) else None
    language = course.get("language") if isinstance(course, dict) else None
    return language if isinstance(language, str) and language.strip() else None


LABEL_WIDTH = 40


def valid_text(source: str) -> str:
    """`source` as text Python can compile: JSON may carry lone surrogates (\\ud800), which no UTF-8
    encoder accepts; they become '?' (and the caller notes it) instead of failing the grader."""
    try:
        source.encode("utf-8")
    except UnicodeEncodeError:
        return source.encode("utf-8", "replace").decode("utf-8")
    return source


def cell_label(source: str, number: int) -> str:
    """How messages name a code cell: by its first line, which the student sees in Jupyter (which
    shows no cell numbers); by its position among the code cells only when it is empty."""
    first = next((line.strip() for line in source.split("\n") if line.strip()), "")
    if not first:
        return _f("code cell {number}", number=number)
    return _f('the cell "{first}"', first=shorten(first, LABEL_WIDTH))


@functools.lru_cache(maxsize=256)
def parsed(source: str) -> ast.Module:
    """A cell's syntax tree, parsed once for all its readers (the scans for banned APIs and tampering,
    a hint's look at a definition), none of which changes it. A SyntaxError is raised each time."""
    return ast.parse(source)


@functools.lru_cache(maxsize=256)
def nodes_of(source: str) -> tuple:
    """Every node of a cell's tree (ast.walk's order), listed once for the scans that each read them all."""
    return tuple(ast.walk(parsed(source)))


def parsable(cells: list) -> list:
    """The cells whose code parses (one with a syntax error is the worker's to report, not the scans')."""
    readable = []
    for cell in cells:
        try:
            parsed(cell["source"])
        except SyntaxError:
            continue
        readable.append(cell)
    return readable


def definition_source(cells: list, name: str) -> str:
    """The code of the last top-level def or class `name` in the cells ("" where there is none):
    what a hint about the student's code reads (never run)."""
    found = ""
    for cell in cells:
        try:
            tree = parsed(cell["source"])
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
                found = ast.get_source_segment(cell["source"], node) or ""
    return found


def from_python(name: str, data: bytes) -> Extracted:
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return Extracted([], _f("{name} could not be read as UTF-8 text ({error})", name=name, error=error))
    return Extracted([{"label": name, "source": source}])


def extract(name: str, data: bytes) -> Extracted:
    """A submission file's bytes -> its code cells. `name` is how messages call the file."""
    if name.endswith(".py"):
        return from_python(name, data)
    return from_notebook(name, data)


def _spelled(spelling: str, candidates: list) -> str:
    """Which of the banned APIs sharing a name the code spelled ("F.softmax": torch.nn.functional.softmax)."""
    for short, full in (("F.", "torch.nn.functional."), ("nn.", "torch.nn.")):
        if spelling.startswith(short):
            spelling = full + spelling[len(short):]
    for api in candidates:
        if api == spelling or api.endswith("." + spelling):
            return api
    methods = [api for api in candidates if api.startswith("Tensor.")]
    return (methods or candidates)[0]  # x.softmax(...): a method call on some tensor


def banned_uses(cells: list, names, apis) -> dict:
    """Graded name -> banned APIs its own code refers to (found by reading, never running).

    Catches `torch.softmax(...)`, `x.softmax(...)`, `nn.Softmax()`, and aliases
    made with `from torch.nn.functional import softmax as sm`.
    """
    leaves: dict = {}  # "softmax" -> every banned API of that name (torch., F., Tensor., ...)
    for api in apis:
        leaves.setdefault(api.rsplit(".", 1)[-1], []).append(api)
    if not leaves:
        return {}
    found: dict = {}
    aliases = {}
    readable = parsable(cells)
    for cell in readable:
        for node in nodes_of(cell["source"]):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("torch"):
                for alias in node.names:
                    if alias.name in leaves:
                        aliases[alias.asname or alias.name] = _spelled(
                            f"{node.module}.{alias.name}", leaves[alias.name])
    for cell in readable:
        for node in parsed(cell["source"]).body:
            if not isinstance(node, (ast.FunctionDef, ast.ClassDef)) or node.name not in names:
                continue
            hits = []
            for inner in ast.walk(node):
                api = None
                if isinstance(inner, ast.Attribute) and inner.attr in leaves:
                    api = _spelled(ast.unparse(inner), leaves[inner.attr])
                elif isinstance(inner, ast.Name) and inner.id in aliases and inner.id != node.name:
                    api = aliases[inner.id]
                if api and api not in hits:
                    hits.append(api)
            if hits:
                found[node.name] = hits
    return found


# --------------------------------------------------------------------------- tampering

# What a notebook never needs for attention, and what would let code hide from the grader's
# watch (worker/watching.Watch, a TorchDispatchMode; worker/guards' wrappers), reach torch's
# unwatched C functions, rewrite the interpreter, or forge the worker's replies. What the
# sandbox contains (files, network, processes) is not listed: it holds without this scan.
_TAMPER_ATTRIBUTES = {
    "_python_dispatch": N_("torch's dispatch internals"), "_disable_current_modes": N_("torch's dispatch internals"),
    "TorchDispatchMode": N_("torch's dispatch modes"), "TorchFunctionMode": N_("torch's function modes"),
    "__torch_dispatch__": N_("torch's dispatch hooks"), "__torch_function__": N_("torch's function hooks"),
    "_C": N_("torch's C internals (unwatched)"), "_VariableFunctions": N_("torch's C internals (unwatched)"),
    "_dispatch": N_("torch's dispatch internals"), "_dynamo": N_("torch's compiler internals"),
    "settrace": N_("the interpreter's tracing"), "setprofile": N_("the interpreter's tracing"),
    "_getframe": N_("the interpreter's frames"), "_current_frames": N_("the interpreter's frames"),
    "f_back": N_("the interpreter's frames"), "f_globals": N_("the interpreter's frames"),
    "f_locals": N_("the interpreter's frames"), "f_builtins": N_("the interpreter's frames"),
    "tb_frame": N_("the interpreter's frames"), "gi_frame": N_("the interpreter's frames"),
    "__globals__": N_("another function's globals"), "__code__": N_("a function's code object"),
    "__closure__": N_("a function's closure"), "__builtins__": N_("the built-ins"),
    "__subclasses__": N_("the class hierarchy"), "get_referrers": N_("the garbage collector"),
    "get_referents": N_("the garbage collector"), "get_objects": N_("the garbage collector"),
    "meta_path": N_("the import system"), "path_hooks": N_("the import system"),
    "fileno": N_("raw file descriptors"), "fdopen": N_("raw file descriptors"),
    "set_per_process_memory_fraction": N_("the grader's GPU memory cap"),
}
_TAMPER_MODULES = {
    "ctypes": N_("raw memory access"), "gc": N_("the garbage collector"), "inspect": N_("the interpreter's frames"),
    "importlib": N_("the import system"), "builtins": N_("the built-ins"), "marshal": N_("code objects"),
    "autograder": N_("the grader"),
}
NOTEBOOK_CHECKS = "autograder.notebook"  # the checks a notebook's setup cell imports (autograder/notebook.py)
_TAMPER_CALLS = {"eval": N_("code built at run time"), "exec": N_("code built at run time"),
                 "compile": N_("code built at run time"), "__import__": N_("the import system")}
_OS_CALLS = {"write", "read", "open", "fdopen", "dup", "dup2"}  # the worker's channel is a descriptor
_SYS_ATTRIBUTES = {"modules", "settrace", "setprofile", "_getframe", "meta_path", "path_hooks",
                   "addaudithook", "_current_frames", "stdin"}
_ATTRIBUTE_FUNCTIONS = {"getattr", "setattr", "delattr", "hasattr"}


def _tamper_in_text(text: str) -> str | None:
    if text == "_C":
        return _TAMPER_ATTRIBUTES["_C"]  # translated by the caller
    for name, what in _TAMPER_ATTRIBUTES.items():
        if len(name) > 3 and name in text:
            return what
    return None


def _root_name(node) -> str | None:
    """`torch` for `torch.nn.functional`; None for anything not a plain dotted name."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _tamper_node(node, modules: dict) -> str | None:
    """What `node` reaches into, or None. `modules`: every name an import binds -> what it names."""
    if isinstance(node, ast.Attribute):
        base = node.value.id if isinstance(node.value, ast.Name) else None
        base = modules.get(base, base)
        if node.attr in _TAMPER_ATTRIBUTES:
            return f"{ast.unparse(node)} ({_(_TAMPER_ATTRIBUTES[node.attr])})"
        if base == "os" and node.attr in _OS_CALLS:
            return _f("os.{name} (raw file descriptors: the worker's channel)", name=node.attr)
        if base == "sys" and node.attr in _SYS_ATTRIBUTES:
            return _f("sys.{name} (the interpreter's internals)", name=node.attr)
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        modules = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        if modules == [NOTEBOOK_CHECKS]:  # every setup cell's line; the worker refuses it, and the cell
            return None  # goes on with its stand-ins (guards.BLOCKED_PACKAGES)
        for module in modules:
            parts = module.split(".")
            if parts[0] in _TAMPER_MODULES:
                return f"import {module} ({_(_TAMPER_MODULES[parts[0]])})"
            hidden = [p for p in parts if p in _TAMPER_ATTRIBUTES]
            if hidden:
                return f"import {module} ({_(_TAMPER_ATTRIBUTES[hidden[0]])})"
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name in _TAMPER_ATTRIBUTES or (node.module == "os" and alias.name in _OS_CALLS) \
                        or (node.module == "sys" and alias.name in _SYS_ATTRIBUTES):
                    return f"from {node.module} import {alias.name}"
    elif isinstance(node, ast.Name):
        if node.id in _TAMPER_CALLS:
            return f"{node.id} ({_(_TAMPER_CALLS[node.id])})"
        if node.id in ("__builtins__", "__subclasses__"):
            return f"{node.id} ({_(_TAMPER_ATTRIBUTES[node.id])})"
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _ATTRIBUTE_FUNCTIONS:
        # getattr(layer, name) over a model's own attributes is ordinary code; a computed name
        # looked up on a module (torch, F, os, ...) is how a banned function is fetched unseen
        if len(node.args) >= 2 and _root_name(node.args[0]) in modules:
            name = node.args[1]
            if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
                return _f("{call} with a computed attribute name",
                          call=f"{node.func.id}({ast.unparse(node.args[0])}, ...)")
    elif isinstance(node, ast.Constant) and isinstance(node.value, str):
        what = _tamper_in_text(node.value)
        if what:
            return _f("the text {text} ({what})", text=repr(node.value[:40]), what=_(what))
    return None


def tampering(cells: list) -> list[str]:
    """Where the code reaches into the grader's watch or torch's internals, one line per place.

    Read, never run, over the whole notebook (every cell, module level included),
    since what runs in the worker can lie about itself: a check that trusts the
    worker's own report (op counts, forbidden APIs, devices) must not be cheaper
    to fool than to satisfy. Docstrings are left out; what this cannot see (names
    assembled at run time from innocent pieces) is listed in docs/threat-model.md.
    """
    findings = []
    walked = [(cell, nodes_of(cell["source"])) for cell in parsable(cells)]
    modules = {"torch": "torch"}  # the notebooks' setup cell imports it; a .py file may not
    for _cell, nodes in walked:
        for node in nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:  # `import os.path` binds os; `import os.path as p`, os.path
                    root = alias.name.split(".")[0]
                    modules[alias.asname or root] = alias.name if alias.asname else root
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for cell, nodes in walked:
        docstrings = {id(node.body[0].value) for node in nodes
                      if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                      and node.body and isinstance(node.body[0], ast.Expr)
                      and isinstance(node.body[0].value, ast.Constant)}
        for node in nodes:
            if id(node) in docstrings:
                continue
            what = _tamper_node(node, modules)
            if what:
                line = _f("{cell}, line {line}: {what}", cell=cell["label"], line=getattr(node, "lineno", "?"),
                          what=what)
                if line not in findings:
                    findings.append(line)
    return findings
