"""Dead code in a section's code, found across all its cells: what a copy can add without changing what it does.

similarity_code.py compares what is left. Dead here means:

- a branch whose test is known before the code runs: a literal (`if False:`), or
  a flag set once at a cell's top level to a literal and never bound again
  (`DEBUG = None` ... `if DEBUG: print(...)`), through `not`, `and`, `or`, `is`,
  `==` and `!=`; the same for `while` and `x if FLAG else y`;
- a statement without effect: a bare value, a call of a pure built-in
  (`len(x)`), `x = x`, `x += 0`, `x *= 1`, `pass`, `global`, an `if` whose
  branches are left empty and whose test calls nothing;
- a top-level function, class or assignment whose name no code of the section
  reads (the graded names and the released notebook's names excepted), and an
  assignment inside a function to names nothing reads; a new container that is
  only ever filled (`steps = []`, `steps.append(...)`) and never read, with its
  filling; again until none is left, since removing one can leave another unread.
"""
from __future__ import annotations

import ast
import operator

PURE_BUILTINS = frozenset({"len", "abs", "int", "float", "str", "bool", "tuple", "list", "dict", "set", "range",
                           "isinstance", "type", "repr", "round", "min", "max", "sum", "id", "hash", "sorted"})
NO_CHANGE = {ast.Add: 0, ast.Sub: 0, ast.Mult: 1, ast.Div: 1, ast.FloorDiv: 1, ast.Pow: 1}  # x op= this: x
COMPARISONS = {ast.Is: operator.is_, ast.IsNot: operator.is_not, ast.Eq: operator.eq, ast.NotEq: operator.ne}
UNKNOWN = object()
BLOCKS = ("body", "orelse", "finalbody")
FILLS = frozenset({"append", "extend", "add", "insert", "update", "appendleft", "setdefault"})
CONTAINERS = frozenset({"list", "dict", "set"})
ROUNDS = 25  # removals of dead code, each of which may leave more unread
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


# --------------------------------------------------------------------------- tests known in advance


def _bound_names(trees: list[ast.Module]) -> dict[str, int]:
    """How many times each name is bound anywhere in the section (assigned, a parameter, a loop variable,
    declared global, imported, defined)."""
    counts: dict[str, int] = {}
    for tree in trees:
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                names = [node.id]
            elif isinstance(node, ast.arg):
                names = [node.arg]
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                names = node.names
            elif isinstance(node, (*FUNCTIONS, ast.ClassDef)):
                names = [node.name]
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [(alias.asname or alias.name).split(".")[0] for alias in node.names]
            for name in names:
                counts[name] = counts.get(name, 0) + 1
    return counts


def module_constants(trees: list[ast.Module]) -> dict[str, object]:
    """Flags: names set once, at a cell's top level, to a literal, and bound nowhere else in the section."""
    bound = _bound_names(trees)
    found = {}
    for tree in trees:
        for node in tree.body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                value = literal(node.value, {})
                if len(targets) == 1 and isinstance(targets[0], ast.Name) and value is not UNKNOWN \
                        and bound.get(targets[0].id) == 1:
                    found[targets[0].id] = value
    return found


def literal(node: ast.expr, constants: dict[str, object]) -> object:
    """The value of an expression known before the code runs, or UNKNOWN."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id, UNKNOWN)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
        value = literal(node.operand, constants)
        if value is UNKNOWN:
            return UNKNOWN
        return (not value) if isinstance(node.op, ast.Not) else _negated(value)
    if isinstance(node, ast.BoolOp):
        return _bool_op(node, constants)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in COMPARISONS:
        left, right = literal(node.left, constants), literal(node.comparators[0], constants)
        if left is UNKNOWN or right is UNKNOWN:
            return UNKNOWN
        return COMPARISONS[type(node.ops[0])](left, right)
    return UNKNOWN


def _negated(value: object) -> object:
    return -value if isinstance(value, (int, float)) and not isinstance(value, bool) else UNKNOWN


def _bool_op(node: ast.BoolOp, constants: dict[str, object]) -> object:
    """`a and b` / `a or b` when the values decide it: `FLAG and anything` with FLAG false is false."""
    deciding = isinstance(node.op, ast.Or)  # the truth value that ends the chain
    for value in node.values:
        known = literal(value, constants)
        if known is UNKNOWN:
            return UNKNOWN
        if bool(known) == deciding:
            return known
    return known


def truth(test: ast.expr, constants: dict[str, object]) -> bool | None:
    """Whether a test is true, false (known before the code runs), or None (only the run can tell)."""
    value = literal(test, constants)
    if value is UNKNOWN:
        return None
    try:
        return bool(value)
    except Exception:  # a literal whose truth cannot be taken (none of Python's own): left as written
        return None


# --------------------------------------------------------------------------- statements without effect


def _calls(node: ast.AST) -> bool:
    return any(isinstance(inner, ast.Call) for inner in ast.walk(node))


def _is_pass(block: list) -> bool:
    return all(isinstance(statement, ast.Pass) for statement in block)


def no_effect(statement: ast.stmt) -> bool:
    """A statement that changes nothing: `x = x`, `x += 0`, a pure built-in's call alone, `global`, an empty `if`."""
    if isinstance(statement, (ast.Pass, ast.Global, ast.Nonlocal)):
        return True
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        func = statement.value.func
        return isinstance(func, ast.Name) and func.id in PURE_BUILTINS and not any(
            _calls(argument) for argument in statement.value.args)
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target, value = statement.targets[0], statement.value
        return isinstance(target, ast.Name) and isinstance(value, ast.Name) and target.id == value.id
    if isinstance(statement, ast.AugAssign) and type(statement.op) in NO_CHANGE:
        value = statement.value
        return isinstance(value, ast.Constant) and not isinstance(value.value, bool) \
            and value.value == NO_CHANGE[type(statement.op)]
    if isinstance(statement, ast.If):
        return _is_pass(statement.body) and _is_pass(statement.orelse) and not _calls(statement.test)
    return False


# --------------------------------------------------------------------------- unread definitions


def _target_names(statement: ast.stmt) -> list[str] | None:
    """The plain names a top-level assignment binds, or None when it binds anything else (an item, an attribute)."""
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, ast.AugAssign):
        targets = [statement.target]
    else:
        return None
    names = []
    for target in targets:
        for inner in (target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]):
            if not isinstance(inner, ast.Name):
                return None
            names.append(inner.id)
    return names


def _unread(statement: ast.stmt, read: set[str], keep: frozenset[str]) -> bool:
    if isinstance(statement, (*FUNCTIONS, ast.ClassDef)):
        return statement.name not in read and statement.name not in keep
    names = _target_names(statement)
    return names is not None and not any(name in read or name in keep for name in names)


def _function_statements(function) -> list:
    """The statements of a function's blocks, nested blocks included, not those of inner functions."""
    found, blocks = [], [function.body]
    while blocks:
        for statement in blocks.pop():
            found.append(statement)
            if not isinstance(statement, (*FUNCTIONS, ast.ClassDef)):
                blocks += [getattr(statement, f) for f in BLOCKS if isinstance(getattr(statement, f, None), list)]
    return found


def _filled_only(statement: ast.stmt) -> str | None:
    """The name of `x` when `statement` is `x.append(...)` (or another way of filling a container), else None."""
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        func = statement.value.func
        if isinstance(func, ast.Attribute) and func.attr in FILLS and isinstance(func.value, ast.Name):
            return func.value.id
    return None


def _fresh_container(value: ast.expr) -> bool:
    """`[]`, `{}`, `set()`, `[x for ...]` and the like: a new container no one else holds."""
    if isinstance(value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)):
        return True
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in CONTAINERS \
        and not value.args and not value.keywords


def write_only(nodes: list[ast.AST], keep: frozenset[str]) -> set[str]:
    """Names of new containers that are only ever filled (`steps = []` ... `steps.append(x)`), never read:
    `nodes` is every node of the section's code."""
    statements = [s for s in nodes if isinstance(s, ast.stmt)]
    filled = {name for s in statements if (name := _filled_only(s))} - keep
    if not filled:
        return filled
    fillings = {id(s.value.func.value) for s in statements if _filled_only(s)}
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in fillings:
            filled.discard(node.id)  # read some other way
        elif isinstance(node, ast.arg):
            filled.discard(node.arg)  # the caller's container: filling it is an effect
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            filled.difference_update(node.names)
    for s in statements:
        if isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.With)) \
                and not (isinstance(s, ast.Assign) and _fresh_container(s.value)):
            filled.difference_update(n.id for n in ast.walk(s) if isinstance(n, ast.Name)
                                     and isinstance(n.ctx, ast.Store))
    return filled


def drop_unread(trees: list[ast.Module], keep: frozenset[str]) -> None:
    """Top-level definitions and assignments nothing reads, and assignments inside functions to names nothing
    reads, removed from `trees` in place, until none is left (or ROUNDS rounds: a hostile chain of a thousand
    names each read only by the next would take a thousand walks of the code)."""
    for _ in range(ROUNDS):
        nodes = [node for tree in trees for node in ast.walk(tree)]  # one walk a round
        read = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        dead = {id(s) for tree in trees for s in tree.body if _unread(s, read, keep)}
        dead |= {id(s) for f in nodes if isinstance(f, FUNCTIONS) for s in _function_statements(f)
                 if isinstance(s, (ast.Assign, ast.AugAssign)) and _unread(s, read, frozenset())}
        unseen = write_only(nodes, keep)
        if unseen:
            dead |= {id(s) for s in nodes if isinstance(s, ast.stmt) and _filled_only(s) in unseen}
        if not dead:
            return
        for parent in nodes:
            for field in BLOCKS:
                block = getattr(parent, field, None)
                if isinstance(block, list) and any(id(s) in dead for s in block):
                    kept = [s for s in block if id(s) not in dead]
                    top = isinstance(parent, ast.Module) or field != "body"
                    setattr(parent, field, kept or ([] if top else [ast.Pass()]))
