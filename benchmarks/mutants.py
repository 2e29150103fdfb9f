"""Mutation testing of the checks: does every wrong version of the reference solutions lose points?

    .venv/bin/python benchmarks/mutants.py [SECTION ...] [--list] [--out FILE]

Each mutant is the reference solution of a section (`solutions/*.py`) with one
small change in its graded code (between `# BEGIN SOLUTION` and
`# END SOLUTION`, and the default values of the graded signatures): a constant
moved by one or set to 0, a boolean flipped, an operator or a
comparison swapped, an operand or a keyword argument dropped (dim=, keepdim=,
device=, dtype=, diagonal=, ...), triu/tril, sum/mean, amax/amin, sin/cos and
reshape/view exchanged, an argument passed to another parameter's place
(W_k(q) for W_k(k)), the queries, keys or values swapped, the elements of a
returned tuple or of an index swapped, a statement or an `if` dropped. The
mutant is written as a submission (the section's complete example in
`examples/correct_py/` with the mutated definition in place of the correct
one) and graded by the course's own grading path, `core.grade.run_checks`:
the worker sandbox, the visible and the hidden checks, against the unchanged
reference. A mutant is *killed* when it scores less than the section's
maximum. A mutant that keeps full marks is *equivalent* only where
`benchmarks/equivalent_mutants.toml` lists its id with a one-line reason (the
same function written another way); any other is a *survivor*, a wrong
implementation the checks let through. The run prints each survivor's diff
and exits 1 when there is one, or when the list names a mutant that is killed
or no longer made (the list must stay true).

Why our own small runner and not mutmut or cosmic-ray: both mutate the module
in place on disk and judge a mutant by running a test command against the
imported module. Here the mutated module is also the oracle: the hidden checks
import `solutions/` to compute the expected values, so a mutant written into
`solutions/` would be compared with itself and survive. And the code a check
judges is a submission's text, loaded in a sandboxed worker, not an import of
the repository: grading a mutant means writing a submission and grading it.
Those tools also start a test process per mutant (a torch import, seconds each),
where one worker launcher here grades a mutant in a fifth of a second. The
operators below are the classic ones, plus those of attention code (masks,
dims, q/k/v).
"""
from __future__ import annotations

import argparse
import ast
import copy
import difflib
import importlib
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENTS = ROOT / "benchmarks" / "equivalent_mutants.toml"
SUBMISSIONS = ROOT / "examples" / "correct_py"

# ---------------------------------------------------------------- the operators

BINARY_SWAPS = {ast.Add: [ast.Sub], ast.Sub: [ast.Add], ast.Mult: [ast.Div], ast.Div: [ast.Mult, ast.FloorDiv],
                ast.Pow: [ast.Mult], ast.MatMult: [ast.Mult], ast.BitOr: [ast.BitAnd], ast.BitAnd: [ast.BitOr],
                ast.FloorDiv: [ast.Div], ast.Mod: [ast.FloorDiv]}
COMPARE_SWAPS = {ast.Lt: [ast.LtE, ast.Gt], ast.LtE: [ast.Lt, ast.GtE], ast.Gt: [ast.GtE, ast.Lt],
                 ast.GtE: [ast.Gt, ast.LtE], ast.Eq: [ast.NotEq], ast.NotEq: [ast.Eq], ast.Is: [ast.IsNot],
                 ast.IsNot: [ast.Is]}
# names of functions and methods that a slip exchanges
NAME_SWAPS = {"triu": ["tril"], "tril": ["triu"], "amax": ["amin"], "max": ["min"], "sum": ["mean"],
              "mean": ["sum"], "sin": ["cos"], "cos": ["sin"], "reshape": ["view"], "exp": ["log"],
              "softmax": ["log_softmax"], "masked_fill": ["masked_fill_"], "copy_": ["set_"]}
# local names that play one role each, which a slip exchanges (queries for keys, ...)
ROLE_GROUPS = ({"queries", "keys", "values"},)
# calls whose two positional arguments may be exchanged without meaning anything else
SYMMETRIC_CALLS = {"transpose", "swapaxes"}


@dataclass
class Mutant:
    section: str
    name: str  # the graded name whose definition changes
    scope: str  # where in it: "causal_mask", "CausalAttention.forward"
    op: str
    before: str
    after: str
    source: str = ""  # the mutated definition
    original: str = ""  # the unchanged definition
    occurrence: int = 1

    @property
    def id(self) -> str:
        suffix = f" #{self.occurrence}" if self.occurrence > 1 else ""
        return f"{self.section}:{self.scope}:{self.op}: {self.before} -> {self.after}{suffix}"

    def diff(self) -> str:
        return "".join(difflib.unified_diff(self.original.splitlines(True), self.source.splitlines(True),
                                            f"{self.name} (reference)", f"{self.name} (mutant)", n=1))


def text(node: ast.AST, limit: int = 90) -> str:
    """One line of code for an id: the node unparsed, whitespace squeezed, cut at `limit`."""
    line = " ".join(ast.unparse(node).split())
    return line if len(line) <= limit else line[:limit - 3] + "..."


def is_docstring(node: ast.AST, parents: dict) -> bool:
    parent = parents.get(node)
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str) \
        and isinstance(parent, (ast.FunctionDef, ast.ClassDef)) and parent.body and parent.body[0] is node


def number_changes(value):
    """A numeric constant moved by one, or set to 0."""
    changes = [value + 1, value - 1, 0 if isinstance(value, int) else 0.0]
    return [c for i, c in enumerate(changes) if c != value and c not in changes[:i]]


def call_name(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def parameters(function: ast.FunctionDef) -> list[str]:
    return [a.arg for a in function.args.posonlyargs + function.args.args + function.args.kwonlyargs
            if a.arg != "self"]


def replacements(node: ast.AST, parents: dict, function: ast.FunctionDef | None):
    """(operator, replacement) pairs for `node`; a replacement of None drops the statement."""
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        for value in number_changes(node.value):
            yield "number", ast.Constant(value)
    elif isinstance(node, ast.Constant) and type(node.value) is bool:
        yield "boolean", ast.Constant(not node.value)
    elif isinstance(node, ast.Constant) and node.value in ("-inf", "inf"):
        yield "infinity", ast.Constant("inf" if node.value == "-inf" else "-inf")
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Invert, ast.Not)):
        yield "unary dropped", node.operand
    elif isinstance(node, ast.BinOp):
        for op in BINARY_SWAPS.get(type(node.op), []):
            yield "operator", ast.BinOp(node.left, op(), node.right)
        yield "operand dropped", node.left
        if not isinstance(node.op, (ast.Sub, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow)):
            yield "operand dropped", node.right
    elif isinstance(node, ast.Compare) and len(node.ops) == 1:
        for op in COMPARE_SWAPS.get(type(node.ops[0]), []):
            yield "comparison", ast.Compare(node.left, [op()], node.comparators)
    elif isinstance(node, ast.BoolOp):
        yield "boolean", ast.BoolOp(ast.Or() if isinstance(node.op, ast.And) else ast.And(), node.values)
    elif isinstance(node, ast.Call):
        yield from call_replacements(node)
    elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and function is not None:
        yield from name_replacements(node, function)
    elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple) and len(node.slice.elts) > 1:
        elts = node.slice.elts
        for i in range(len(elts) - 1):
            if ast.dump(elts[i]) != ast.dump(elts[i + 1]):
                swapped = elts[:i] + [elts[i + 1], elts[i]] + elts[i + 2:]
                yield "index order", ast.Subscript(node.value, ast.Tuple(swapped, ast.Load()), node.ctx)
    elif isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) and len(node.value.elts) == 2:
        yield "returned pair swapped", ast.Return(ast.Tuple(node.value.elts[::-1], ast.Load()))
    if isinstance(node, ast.stmt) and not isinstance(node, (ast.Return, ast.FunctionDef, ast.ClassDef)) \
            and not is_docstring(node, parents):
        yield "statement dropped", None


def call_replacements(node: ast.Call):
    for index in range(len(node.keywords)):
        keywords = node.keywords[:index] + node.keywords[index + 1:]
        yield "keyword dropped", ast.Call(node.func, node.args, keywords)
    name = call_name(node)
    for other in NAME_SWAPS.get(name, []):
        func = copy.copy(node.func)
        if isinstance(func, ast.Attribute):
            func.attr = other
        else:
            func.id = other
        yield "function", ast.Call(func, node.args, node.keywords)
    if len(node.args) == 2 and name not in SYMMETRIC_CALLS and not any(isinstance(a, ast.Starred) for a in node.args):
        yield "arguments swapped", ast.Call(node.func, node.args[::-1], node.keywords)


def name_replacements(node: ast.Name, function: ast.FunctionDef):
    """A parameter read in place of another parameter; queries, keys and values exchanged."""
    params = parameters(function)
    if node.id in params:
        for other in params:
            if other != node.id:
                yield "argument", ast.Name(other, ast.Load())
    for group in ROLE_GROUPS:
        if node.id in group:
            for other in sorted(group - {node.id}):
                yield "role", ast.Name(other, ast.Load())


# ---------------------------------------------------------------- making the mutants


def solution_regions(source: str) -> list[tuple[int, int]]:
    """(first, last) line numbers of each BEGIN SOLUTION ... END SOLUTION region: the graded code."""
    regions, start = [], None
    for number, line in enumerate(source.splitlines(), 1):
        if line.strip() == "# BEGIN SOLUTION":
            start = number
        elif line.strip() == "# END SOLUTION" and start is not None:
            regions.append((start, number))
            start = None
    return regions


def in_regions(node: ast.AST, regions) -> bool:
    first, last = getattr(node, "lineno", 0), getattr(node, "end_lineno", 0)
    return any(start < first and last < end for start, end in regions)


def default_values(definition: ast.AST) -> set:
    """The nodes of the graded signatures' default values (dim=-1, qkv_bias=False): given in the stub,
    yet part of the contract, and a student may change them."""
    inside = set()
    for function in ast.walk(definition):
        if isinstance(function, ast.FunctionDef):
            for default in function.args.defaults + [d for d in function.args.kw_defaults if d is not None]:
                inside.update(ast.walk(default))
    return inside


def parent_map(tree: ast.AST) -> dict:
    return {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}


def enclosing_function(node, parents):
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.FunctionDef):
            return node
    return None


def scope_of(node, parents, definition) -> str:
    function = enclosing_function(node, parents)
    if function is None or function is definition:
        return definition.name
    return f"{definition.name}.{function.name}"


def inside_fstring(node, parents) -> bool:
    """Error messages are not mutated: their checks name numbers, not formats."""
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.JoinedStr):
            return True
    return False


CONTEXTS = (ast.Call, ast.BinOp, ast.Compare, ast.Subscript, ast.BoolOp, ast.arguments, ast.stmt)


def context_index(node, parents, nodes) -> int:
    """The index (ast.walk order) of the node an id shows for a change of `node`: a constant or a
    name alone says little, so its nearest enclosing call, operation or statement is shown."""
    shown = node
    while not isinstance(shown, CONTEXTS) and shown in parents:
        shown = parents[shown]
    return next(i for i, n in enumerate(nodes) if n is shown)


def substitute(definition: ast.AST, index: int, replacement) -> ast.AST:
    """A copy of `definition` whose `index`-th node (ast.walk order) is `replacement` (None: dropped)."""
    tree = copy.deepcopy(definition)
    target = list(ast.walk(tree))[index]
    parents = parent_map(tree)
    parent = parents[target]
    for name, value in ast.iter_fields(parent):
        if value is target:
            setattr(parent, name, replacement)
            break
        if isinstance(value, list) and any(item is target for item in value):
            position = next(i for i, item in enumerate(value) if item is target)
            if replacement is None:
                del value[position]
                if not value:
                    value.append(ast.Pass())
            else:
                value[position] = replacement
            break
    return ast.fix_missing_locations(tree)


def section_mutants(section) -> list[Mutant]:
    """Every mutant of the graded code of `section` (a core.sections.Section), in a stable order."""
    module = importlib.import_module(section.solution_module)
    source = Path(module.__file__).read_text()
    regions = solution_regions(source)
    tree = ast.parse(source)
    mutants, seen, counts = [], set(), {}
    for definition in tree.body:
        if not isinstance(definition, (ast.FunctionDef, ast.ClassDef)) or definition.name not in section.names:
            continue
        original = ast.unparse(definition)
        parents = parent_map(definition)
        nodes = list(ast.walk(definition))
        defaults = default_values(definition)
        for index, node in enumerate(nodes):
            if not (in_regions(node, regions) or node in defaults) or inside_fstring(node, parents) \
                    or is_docstring(node, parents):
                continue
            function = enclosing_function(node, parents)
            for op, replacement in replacements(node, parents, function):
                mutated = substitute(definition, index, replacement)
                code = ast.unparse(mutated)
                if code == original or code in seen:
                    continue
                seen.add(code)
                # a parent comes before its children in ast.walk's order: the change leaves its index as it was
                shown = context_index(node, parents, nodes)
                after = "(dropped)" if replacement is None else text(list(ast.walk(mutated))[shown])
                mutant = Mutant(section.id, definition.name, scope_of(node, parents, definition), op,
                                text(nodes[shown]), after, code, original)
                counts[mutant.id] = counts.get(mutant.id, 0) + 1
                mutant.occurrence = counts[mutant.id]
                mutants.append(mutant)
    return mutants


def submission(mutant: Mutant) -> str:
    """The section's complete example with the mutated definition in place of the correct one."""
    sys.path.insert(0, str(ROOT / "tests"))
    from support import replace_def

    base = (SUBMISSIONS / f"{mutant.section}.py").read_text()
    return replace_def(base, mutant.name, mutant.source)


# ---------------------------------------------------------------- grading them


@dataclass
class Outcome:
    mutant: Mutant
    score: float
    max_score: float
    lost: list = field(default_factory=list)  # titles of the checks that lost points
    errors: list = field(default_factory=list)  # the grader's own failures (a check that crashed)

    @property
    def killed(self) -> bool:
        return self.score < self.max_score


class Grader:
    """Grades mutants through core.grade.run_checks with one worker launcher for the whole run."""

    def __init__(self, launcher=None):
        from autograder.sandbox.launch import start_launcher

        self.own = launcher is None  # a launcher given (the tests' shared one) is left running
        self.launcher = launcher or start_launcher()

    def grade(self, mutant: Mutant) -> Outcome:
        from autograder.core.grade import run_checks
        from autograder.core.submission import locate

        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / f"{mutant.section}.py"
            path.write_text(submission(mutant))
            result = run_checks(locate(path), "cpu", launcher=self.launcher)
        section = result.sections[0]
        return Outcome(mutant, section.score, section.max_score, [c.name for c in section.checks if not c.passed],
                       [error.strip().splitlines()[-1] for error in result.grader_errors])

    def close(self):
        if self.own:
            self.launcher.close()


def load_equivalents(path: Path = EQUIVALENTS) -> dict:
    """mutant id -> the reason it computes the same function as the reference."""
    if not path.exists():
        return {}
    entries = tomllib.loads(path.read_text()).get("equivalent", [])
    reasons = {}
    for entry in entries:
        if not entry.get("id") or not str(entry.get("reason", "")).strip():
            raise ValueError(f"{path.name}: every entry needs an id and a one-line reason: {entry}")
        reasons[entry["id"]] = entry["reason"]
    return reasons


@dataclass
class Report:
    outcomes: list
    equivalents: dict
    seconds: float
    sections: list

    @property
    def killed(self):
        return [o for o in self.outcomes if o.killed]

    @property
    def equivalent(self):
        return [o for o in self.outcomes if not o.killed and o.mutant.id in self.equivalents]

    @property
    def survivors(self):
        return [o for o in self.outcomes if not o.killed and o.mutant.id not in self.equivalents]

    @property
    def stale(self):
        """Listed as equivalent, yet killed or no longer made: the list must say only what holds."""
        made = {o.mutant.id: o for o in self.outcomes}
        listed = [i for i in self.equivalents if i.split(":")[0] in self.sections]
        return [i for i in listed if i not in made or made[i].killed]

    @property
    def crashed(self):
        """Mutants on which a check failed by the grader's fault: a bug of the checks, whatever the score."""
        return [o for o in self.outcomes if o.errors]

    @property
    def ok(self) -> bool:
        return not self.survivors and not self.stale and not self.crashed

    def score(self) -> float:
        judged = len(self.outcomes) - len(self.equivalent)
        return 100.0 * len(self.killed) / judged if judged else 100.0

    def summary(self) -> str:
        lines = [f"{'section':<24} {'mutants':>8} {'killed':>7} {'equivalent':>11} {'survived':>9}"]
        for section in self.sections:
            mine = [o for o in self.outcomes if o.mutant.section == section]
            lines.append(f"{section:<24} {len(mine):>8} {sum(o.killed for o in mine):>7} "
                         f"{sum(o in self.equivalent for o in mine):>11} {sum(o in self.survivors for o in mine):>9}")
        lines.append(f"{'all':<24} {len(self.outcomes):>8} {len(self.killed):>7} {len(self.equivalent):>11} "
                     f"{len(self.survivors):>9}")
        lines.append(f"mutation score {self.score():.2f}% (killed / non-equivalent mutants) in {self.seconds:.0f} s")
        for outcome in self.crashed:
            lines.append(f"GRADER ERROR on {outcome.mutant.id}: {outcome.errors[0][:300]}")
        for identifier in self.stale:
            lines.append(f"STALE equivalent entry (killed, or no longer made): {identifier}")
        for outcome in self.survivors:
            lines.append(f"\nSURVIVED {outcome.mutant.id}\n{outcome.mutant.diff()}")
        return "\n".join(lines)


def run(sections, mutants=None, equivalents=None, progress=None, launcher=None) -> Report:
    """Grade every mutant of `sections` (or the given `mutants`), judged against `equivalents`
    (default: the committed list); `launcher`: a worker launcher (a Zygote or a portable Launcher) to use instead of a new one."""
    started = time.monotonic()
    mutants = mutants if mutants is not None else [m for s in sections for m in section_mutants(s)]
    grader = Grader(launcher)
    outcomes = []
    try:
        for number, mutant in enumerate(mutants, 1):
            outcomes.append(grader.grade(mutant))
            if progress:
                progress(number, len(mutants), outcomes[-1])
    finally:
        grader.close()
    equivalents = load_equivalents() if equivalents is None else equivalents
    return Report(outcomes, equivalents, time.monotonic() - started, [s.id for s in sections])


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from autograder.core.sections import SECTIONS

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sections", nargs="*", help="section ids (default: all)")
    parser.add_argument("--list", action="store_true", help="list the mutants' ids without grading them")
    parser.add_argument("--out", type=Path, help="also write the summary to this file")
    args = parser.parse_args()
    unknown = set(args.sections) - {s.id for s in SECTIONS}
    if unknown:
        parser.error(f"unknown sections: {sorted(unknown)}")
    sections = [s for s in SECTIONS if not args.sections or s.id in args.sections]
    if args.list:
        for section in sections:
            for mutant in section_mutants(section):
                print(mutant.id)
        return 0

    def progress(number, total, outcome):
        if not outcome.killed:
            print(f"[{number}/{total}] kept full marks: {outcome.mutant.id}", file=sys.stderr)

    report = run(sections, progress=progress)
    summary = report.summary()
    print(summary)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        import os

        import torch

        command = " ".join(["python benchmarks/mutants.py", *args.sections, f"--out {args.out}"])
        where = f"# {time.strftime('%Y-%m-%d')}, torch {torch.__version__}, {os.cpu_count()} CPU cores"
        args.out.write_text(f"$ {command}\n{where}\n{summary}\n")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
