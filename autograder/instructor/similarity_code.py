"""A section's code as the similarity report compares it: what students do to hide a copy, undone.

Each top-level statement of the extracted code cells becomes a `Unit` with two
texts of the same lines: `shown` (the student's names kept: what the report
prints) and `compared` (the student's own names replaced by the part they play:
`p` a parameter, `f` a function or class of theirs, `self`, `v` any other name,
`a` an attribute of `self`: what is fingerprinted). Both come from the same
syntax tree after:

- comments, docstrings, type annotations, imports, asserts, `print` calls and
  bare expressions (a notebook's display lines) left out;
- dead code left out, across all the section's cells (similarity_dead.py):
  branches whose test is known before the code runs (`if False:`, or a flag set
  once to a literal: `DEBUG = None` ... `if DEBUG:`), statements without effect,
  statements after a `return`/`raise`, functions, classes and names nothing
  reads, containers only ever filled;
- `reshape` read as `view`, `.contiguous()` dropped, an import alias read as the
  module it names (`F.softmax` is `torch.nn.functional.softmax`);
- a small helper (a non-graded function that only returns an expression)
  inlined where it is called, so a copy that inlines it reads the same;
- formatting made canonical (`ast.unparse`), and the units put in a canonical
  order (graded names in the section's order, then the rest by their text), so
  reordering functions changes nothing.

Names stand for their part, not their order of appearance: a name added to a
function (dead or live) changes no other line, where numbering names in order
would renumber every name after it. A cell that does not parse is kept as it is
(its comments still ignored by the fingerprints' tokens).
"""
from __future__ import annotations

import ast
import builtins
import copy
import re
from dataclasses import dataclass

from autograder.instructor.similarity_dead import drop_unread, module_constants, no_effect, truth

PRINTS = {"print", "display", "pprint"}
BUILTIN_NAMES = frozenset(dir(builtins))
MODULES = frozenset({"torch", "math", "numpy", "np", "nn", "F"})  # as the notebooks import them


@dataclass(frozen=True)
class Unit:
    label: str  # where it came from: "code cell 4"
    order: tuple  # canonical position in the document
    shown: str
    compared: str


# --------------------------------------------------------------------------- cleaning


def import_aliases(trees: list[ast.Module]) -> dict[str, str]:
    """Every name an import binds -> the dotted name it stands for (`F` -> `torch.nn.functional`)."""
    aliases = {}
    for tree in trees:
        for node in tree.body:  # imports at a cell's top level, as notebooks write them
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        aliases[alias.asname] = alias.name
            elif isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def _is_docstring(statement) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) \
        and isinstance(statement.value.value, str)


def _is_noise(statement) -> bool:
    """A statement that computes nothing graded: a print, a bare value, an assert, an import, or one without
    effect (similarity_dead.no_effect)."""
    if isinstance(statement, (ast.Assert, ast.Import, ast.ImportFrom)) or no_effect(statement):
        return True
    if isinstance(statement, ast.Expr):
        call = statement.value
        if not isinstance(call, ast.Call):
            return True
        return isinstance(call.func, ast.Name) and call.func.id in PRINTS
    return False


def _live_body(body: list, constants: dict[str, object]) -> list:
    """The statements of a block that matter: noise left out, a branch whose test is known replaced by the
    branch taken, nothing after a return or raise."""
    kept = []
    for statement in body:
        if isinstance(statement, (ast.If, ast.While)):
            known = truth(statement.test, constants)
            if known is not None and (isinstance(statement, ast.If) or not known):
                kept.extend(_live_body(statement.body if known else statement.orelse, constants))
                continue
        if _is_noise(statement):
            continue
        kept.append(statement)
        if isinstance(statement, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
            break
    return kept


class Cleaner(ast.NodeTransformer):
    """Docstrings, annotations, noise and dead branches out; `reshape` as `view`; aliases resolved."""

    def __init__(self, aliases: dict[str, str], constants: dict[str, object]):
        self.aliases, self.constants = aliases, constants

    def generic_visit(self, node):
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                if field == "body" and _is_docstring(block[0]) and not isinstance(node, ast.Module):
                    block = block[1:]
                block = _live_body(block, self.constants)
                setattr(node, field, block or ([ast.Pass()] if field == "body" else []))
        return node

    def visit_arg(self, node):
        node.annotation = None
        return node

    def visit_FunctionDef(self, node):
        node.returns = None
        node.decorator_list = [d for d in node.decorator_list if not _decorator_is_noise(d)]
        return self.generic_visit(node)

    def visit_AnnAssign(self, node):
        if node.value is None:
            return None
        return self.visit(ast.Assign(targets=[node.target], value=node.value, lineno=node.lineno))

    def visit_IfExp(self, node):
        self.generic_visit(node)
        known = truth(node.test, self.constants)
        return node if known is None else (node.body if known else node.orelse)

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if node.attr == "reshape":
            node.attr = "view"
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "contiguous" and not node.args:
            return func.value  # x.contiguous().view(...) reads as x.view(...)
        return node

    def visit_Name(self, node):
        if node.id in self.aliases and isinstance(node.ctx, ast.Load):
            return _dotted(self.aliases[node.id])
        return node


def _dotted(name: str) -> ast.expr:
    """`torch.nn.functional` as the expression that reads it."""
    first, *rest = name.split(".")
    node: ast.expr = ast.Name(first, ast.Load())
    for part in rest:
        node = ast.Attribute(node, part, ast.Load())
    return node


def _decorator_is_noise(decorator) -> bool:
    name = decorator.func if isinstance(decorator, ast.Call) else decorator
    return isinstance(name, (ast.Name, ast.Attribute)) and ast.unparse(name).endswith("no_grad")


# --------------------------------------------------------------------------- helpers inlined


def small_helpers(statements: list, graded: frozenset[str]) -> dict[str, ast.FunctionDef]:
    """Non-graded top-level functions whose body is one `return EXPR` with plain parameters."""
    helpers = {}
    for node in statements:
        if isinstance(node, ast.FunctionDef) and node.name not in graded and len(node.body) == 1 \
                and isinstance(node.body[0], ast.Return) and node.body[0].value is not None \
                and not (node.args.vararg or node.args.kwarg or node.args.kwonlyargs or node.args.defaults):
            helpers[node.name] = node
    return helpers


class Inliner(ast.NodeTransformer):
    """`helper(a, b)` replaced by the helper's returned expression with its parameters bound to a, b."""

    def __init__(self, helpers: dict[str, ast.FunctionDef]):
        self.helpers = helpers

    def visit_Call(self, node):
        self.generic_visit(node)
        helper = self.helpers.get(node.func.id) if isinstance(node.func, ast.Name) else None
        if helper is None or node.keywords or len(node.args) != len(helper.args.args):
            return node
        bound = {a.arg: value for a, value in zip(helper.args.args, node.args)}
        return _Substitute(bound).visit(copy.deepcopy(helper.body[0].value))


class _Substitute(ast.NodeTransformer):
    def __init__(self, bound: dict):
        self.bound = bound

    def visit_Name(self, node):
        return copy.deepcopy(self.bound[node.id]) if node.id in self.bound else node


# --------------------------------------------------------------------------- names anonymised


class Anonymiser(ast.NodeTransformer):
    """The student's own names by the part they play, never by when they first appear: a parameter is `p`,
    a function or class of their own `f`, the first parameter of a method `self`, any other name `v`, an
    attribute of `self` `a`. A name inserted anywhere changes no other name's token (numbering names by
    their order would renumber every name after it).

    Kept: the built-ins, the section's graded names, the names the released
    notebook defines (`kept`), and the attributes of anything but `self`; a
    function's own parameters and variables (`local`) are replaced even where a
    global of the notebook has the same name."""

    def __init__(self, kept: frozenset[str], local: frozenset[str] = frozenset()):
        self.kept, self.local, self.roles = kept, local, {}

    def learn(self, unit: ast.AST) -> Anonymiser:
        """The part each name plays in `unit` (the strongest where it plays several)."""
        for node in ast.walk(unit):
            if isinstance(node, ast.arg):
                self.roles.setdefault(node.arg, "p")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.roles[node.name] = "f"
        for node in ast.walk(unit):
            if isinstance(node, ast.ClassDef):
                for method in node.body:
                    if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and method.args.args:
                        self.roles[method.args.args[0].arg] = "self"
        return self

    def rename(self, name: str) -> str:
        if name.startswith("__") or "." in name:
            return name
        if name not in self.local and (name in self.kept or name in BUILTIN_NAMES):
            return name
        return self.roles.get(name, "v")

    def visit_Name(self, node):
        node.id = self.rename(node.id)
        return node

    def visit_arg(self, node):
        node.arg = self.rename(node.arg)
        return node

    def visit_FunctionDef(self, node):
        node.name = self.rename(node.name)
        return self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        node.name = self.rename(node.name)
        return self.generic_visit(node)

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if isinstance(node.value, ast.Name) and node.value.id == "self" \
                and node.attr not in self.kept and not node.attr.startswith("__"):
            node.attr = "a"  # a namespace of their own: `self.<a parameter's name>` kept would undo the renaming
        return node


def local_names(node: ast.AST) -> frozenset[str]:
    """The parameters and assigned names inside `node`: the student's own, whatever globals exist."""
    found = set()
    for inner in ast.walk(node):
        if isinstance(inner, ast.arg):
            found.add(inner.arg)
        elif isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store):
            found.add(inner.id)
    return frozenset(found)


def _indent_as_tabs(text: str) -> str:
    """Canonical 4-space indentation as tabs: denser fingerprints, the same lines."""
    return re.sub(r"(?m)^((?:    )+)", lambda m: "\t" * (len(m.group(1)) // 4), text)


# --------------------------------------------------------------------------- a section's units


def _parse(cells: list) -> list[tuple[str, ast.Module | None, str]]:
    parsed = []
    for cell in cells:
        source = cell.get("source", "")
        try:
            parsed.append((cell.get("label", "code"), ast.parse(source), source))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            parsed.append((cell.get("label", "code"), None, source))
    return parsed


def _order(node, graded: tuple[str, ...], compared: str) -> tuple:
    name = getattr(node, "name", None)
    if name in graded:
        return (0, graded.index(name), "")
    return (1, 0, compared)


def _cleaned(parsed: list, aliases: dict[str, str], kept: frozenset[str]) -> list[tuple]:
    """(label, top-level statement or None, cell source) of every cell, cleaned, the dead code of the whole
    section removed; a cell that does not parse, or nests deeper than the walks go, as (label, None, source)."""
    try:
        constants = module_constants([tree for _, tree, _ in parsed if tree is not None])
    except RecursionError:  # a flag's value nested deeper than the evaluation goes: no flags
        constants = {}
    trees, statements = [], []
    for label, tree, source in parsed:
        try:
            tree = Cleaner(aliases, constants).visit(tree) if tree is not None else None
        except RecursionError:
            tree = None
        if tree is not None:
            trees.append(tree)
        statements.append((label, tree, source))
    try:
        drop_unread(trees, kept)
    except RecursionError:
        pass  # the walks are not recursive; a tree this deep was left out above
    return [(label, node, source) for label, tree, source in statements
            for node in (_live_body(tree.body, constants) if tree is not None else [None])]


def section_units(cells: list, graded: tuple[str, ...], kept: frozenset[str] = frozenset()) -> list[Unit]:
    """The units of a section's extracted code cells (core.extract), in canonical order."""
    return units_of(*cleaned(cells, graded, kept), graded)


def cleaned(cells: list, graded: tuple[str, ...], kept: frozenset[str] = frozenset()) -> tuple[list, frozenset[str]]:
    """((label, top-level statement or None, source) of the section's code cleaned, the names kept as they are):
    what both the text view (units_of) and the computation's view (similarity_graph.py) read."""
    parsed = _parse(cells)
    aliases = import_aliases([tree for _, tree, _ in parsed if tree is not None])
    kept = kept | frozenset(graded) | {name.split(".")[0] for name in aliases.values()} | MODULES
    return _cleaned(parsed, aliases, kept), kept


def units_of(statements: list, kept: frozenset[str], graded: tuple[str, ...]) -> list[Unit]:
    """The units of cleaned statements, in canonical order (their trees are changed: read them before)."""
    helpers = small_helpers([node for _, node, _ in statements if node is not None], frozenset(graded))
    units = []
    for label, node, source in statements:
        if node is None:
            units.append(Unit(label, (2, 0, source), source, source))
            continue
        if isinstance(node, ast.FunctionDef) and node.name in helpers:
            continue  # inlined where it is called
        try:
            if helpers:
                node = ast.fix_missing_locations(Inliner(helpers).visit(node))
            shown = ast.unparse(node)
            compared = ast.unparse(Anonymiser(kept, local_names(node)).learn(node).visit(node))  # in place: shown is written
        except (ValueError, RecursionError):  # a tree unparse cannot write back: compare it as written
            shown = compared = ast.get_source_segment(source, node) or source
        units.append(Unit(label, _order(node, graded, compared), shown, _indent_as_tabs(compared)))
    return sorted(units, key=lambda unit: unit.order)


def names_given(cells: list) -> frozenset[str]:
    """The names the released notebook defines at its top level (its functions, classes, globals,
    imports): a student uses them but did not choose them."""
    found = set()
    for _, tree, _ in _parse(cells):
        for node in tree.body if tree is not None else ():
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                found.add(node.name)
                found.update(n.name for n in ast.walk(node) if isinstance(n, ast.FunctionDef))  # forward
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                found.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                found.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return frozenset(found)
