"""From a submission file to the code cells the worker runs.

Notebook rules: code cells in order; nbgrader's test cells (grade: true,
solution: false) are left out, since their asserts are the visible checks and
the grader runs its own; IPython magics, shell escapes and help lines are
blanked (line numbers stay right). Nothing here executes student code: a
notebook that is not valid JSON, or JSON that is not a notebook, becomes one
clear message.
"""
from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path

MAX_NOTEBOOK_BYTES = 20 * 1024 * 1024


@dataclass
class Extracted:
    cells: list  # [{"label": "cell 3", "source": "..."}]
    problem: str | None = None  # set when nothing could be extracted


def _is_test_cell(cell: dict) -> bool:
    meta = (cell.get("metadata") or {}).get("nbgrader") or {}
    return bool(meta.get("grade")) and not meta.get("solution")


def _strip_magics(source: str) -> str:
    if source.lstrip().startswith("%%"):
        return ""  # a cell magic makes the whole cell non-Python
    lines = []
    for line in source.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith(("%", "!")) or (stripped.endswith("?") and not stripped.startswith("#")
                                               and stripped[:-1].replace(".", "").replace("_", "").isalnum()):
            indent = line[: len(line) - len(stripped)]
            lines.append(f"{indent}pass  # (IPython line dropped by the grader)" if indent else "")
        else:
            lines.append(line)
    return "\n".join(lines)


def from_notebook(path: Path) -> Extracted:
    name = path.name
    try:
        size = path.stat().st_size
        if size > MAX_NOTEBOOK_BYTES:
            return Extracted([], f"{name} is {size // 1024**2} MB; notebooks over 20 MB are not graded")
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return Extracted([], f"{name} is not a text file (not UTF-8)")
    except OSError as error:
        return Extracted([], f"{name} could not be read ({error.strerror})")
    try:
        notebook = json.loads(text)
    except ValueError as error:
        return Extracted([], f"{name} is not valid JSON ({error}); re-download it or restore it from git")
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        return Extracted([], f"{name} is JSON but not a Jupyter notebook (no list of cells)")
    cells = []
    code_number = 0
    for cell in notebook["cells"]:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        code_number += 1
        if _is_test_cell(cell):
            continue
        source = cell.get("source", "")
        if isinstance(source, list):
            source = "".join(str(part) for part in source)
        if not isinstance(source, str):
            continue
        cells.append({"label": f"code cell {code_number}", "source": _strip_magics(source)})
    return Extracted(cells)


def from_python(path: Path) -> Extracted:
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return Extracted([], f"{path.name} could not be read as UTF-8 text ({error})")
    return Extracted([{"label": path.name, "source": source}])


def extract(path: Path) -> Extracted:
    if path.suffix == ".py":
        return from_python(path)
    return from_notebook(path)


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
    trees = []
    for cell in cells:
        try:
            trees.append(ast.parse(cell["source"]))
        except SyntaxError:
            continue
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("torch"):
                for alias in node.names:
                    if alias.name in leaves:
                        aliases[alias.asname or alias.name] = _spelled(
                            f"{node.module}.{alias.name}", leaves[alias.name])
    for tree in trees:
        for node in tree.body:
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
