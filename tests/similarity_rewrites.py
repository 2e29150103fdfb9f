"""Copies rewritten the way copiers work today: "make this look different but do the same".

similarity_disguises.py changes the text (names, layout, comments, dead code a
static reader sees). These change the code while keeping what it computes, as a
chatbot asked for a rewrite does (issue 52), so that only a view of the
computation can still see the copy:

- `paraphrase`: `@` / `torch.matmul` / `torch.bmm` / a matmul-shaped `einsum`
  swapped for another; `transpose(-2, -1)` for `.mT` and back; `softmax` spelled
  another way (`F.softmax`, `torch.softmax`, the method); a positional `dim`
  given by keyword and back; `.size(i)` for `.shape[i]` and back; `x ** 0.5` for
  `math.sqrt(x)` and back; `a / (b * c)` as `a / b / c`; `reshape` for `view`;
  single-use temporaries merged into where they are used and a returned
  expression split into a temporary; independent neighbouring statements
  swapped; names with meaning (parameters keep theirs: callers pass some by
  keyword); a docstring of its own; the first computation of each graded
  function moved into a helper of its own; an import of `math` or of
  `torch.nn.functional as F` where a new spelling needs one.
- `live padding`: statements that a static reader takes as live: a name
  assigned a recomputation that is overwritten later, an extra `.clone()` whose
  result is used downstream, `.to(x.device)`, `view_as` itself, shape checks
  that raise, an unused assignment to a name another function reads; each
  guarded by `torch.is_tensor` where a value may be no tensor (a function may
  return a tuple, a number or the module, a parameter may be a list).
- `rewrite`: both.

Each rewrite keeps what the code does: a rewritten copy loses no check that its
source passes (test_similarity_rewrites.py grades both). Deterministic (no
randomness): the same hand always gives the same copy.
"""
from __future__ import annotations

import ast
import builtins
import copy

Blocks = list[tuple[str, str]]
MEANINGFUL = ["attention_input", "projected_values", "score_table", "normalised_rows", "running_total",
              "row_maxima", "exp_terms", "key_matrix", "query_matrix", "value_matrix", "head_count", "token_count",
              "feature_size", "blocked_positions", "weights_out", "context_out", "scale_factor", "batch_size",
              "width", "positions", "frequencies", "angles", "encoded", "padded_scores", "lengths_tensor"]


def _variant(blocks: Blocks) -> int:
    """Which of the rewriter's habits a copy gets: fixed per hand (its code), different between hands, so that
    two rewritten copies of different hands do not share the rewriter's own text."""
    import zlib

    return zlib.crc32("".join(source for _, source in blocks).encode())


def _pick(options: list, variant: int, salt: int = 0):
    return options[(variant // (salt * 7 + 1)) % len(options)]


def _parse(source: str) -> ast.Module:
    return ast.parse(source)


def _call(func: ast.expr, args: list, keywords: list | None = None) -> ast.Call:
    return ast.Call(func=func, args=args, keywords=keywords or [])


def _dotted(name: str) -> ast.expr:
    first, *rest = name.split(".")
    node: ast.expr = ast.Name(first, ast.Load())
    for part in rest:
        node = ast.Attribute(node, part, ast.Load())
    return node


def _const(node) -> object:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        return -node.operand.value
    return None


class Spellings(ast.NodeTransformer):
    """Each equivalent spelling swapped for another (see the module's docstring)."""

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.MatMult):
            return _call(_dotted("torch.matmul"), [node.left, node.right])
        if isinstance(node.op, ast.Pow) and _const(node.right) == 0.5:
            return _call(_dotted("math.sqrt"), [node.left]) if isinstance(node.left, (ast.Name, ast.Attribute)) \
                and not _tensorish(node.left) else node
        if isinstance(node.op, ast.Div) and isinstance(node.right, ast.BinOp) and isinstance(node.right.op, ast.Mult):
            return ast.BinOp(ast.BinOp(node.left, ast.Div(), node.right.left), ast.Div(), node.right.right)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        name = ast.unparse(func)
        if name in ("torch.matmul", "torch.bmm") and len(node.args) == 2:
            return ast.BinOp(node.args[0], ast.MatMult(), node.args[1])
        if isinstance(func, ast.Attribute) and func.attr in ("matmul", "bmm") and len(node.args) == 1 \
                and not name.startswith("torch."):
            return ast.BinOp(func.value, ast.MatMult(), node.args[0])
        if name == "math.sqrt" and len(node.args) == 1:
            return ast.BinOp(node.args[0], ast.Pow(), ast.Constant(0.5))
        if isinstance(func, ast.Attribute) and func.attr == "transpose" and len(node.args) == 2 \
                and sorted(_const(a) or 0 for a in node.args) == [-2, -1]:
            return ast.Attribute(func.value, "mT", ast.Load())
        if isinstance(func, ast.Attribute) and func.attr == "softmax":
            if name in ("torch.softmax", "F.softmax", "torch.nn.functional.softmax") and node.args:
                dims = node.args[1:] or [k.value for k in node.keywords if k.arg == "dim"]
                return _call(ast.Attribute(node.args[0], "softmax", ast.Load()), [],
                             [ast.keyword("dim", dims[0])] if dims else [])
            dims = node.args or [k.value for k in node.keywords if k.arg == "dim"]
            return _call(_dotted("F.softmax"), [func.value], [ast.keyword("dim", dims[0])] if dims else [])
        if isinstance(func, ast.Attribute) and func.attr in ("sum", "mean", "amax", "unsqueeze") and \
                len(node.args) == 1 and not name.startswith(("torch.", "math.")):
            return _call(func, [], [ast.keyword("dim", node.args[0]), *node.keywords])
        if isinstance(func, ast.Attribute) and func.attr == "size" and len(node.args) == 1:
            return ast.Subscript(ast.Attribute(func.value, "shape", ast.Load()), node.args[0], ast.Load())
        if isinstance(func, ast.Attribute) and func.attr == "view":  # not back: `view` fails on a transposed tensor
            func.attr = "reshape"
        return node

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if isinstance(node.value, ast.Attribute) and node.value.attr == "shape" and isinstance(node.ctx, ast.Load) \
                and not isinstance(node.slice, (ast.Slice, ast.Tuple)):
            return _call(ast.Attribute(node.value.value, "size", ast.Load()), [node.slice])
        return node

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if node.attr == "mT" and isinstance(node.ctx, ast.Load):
            return _call(ast.Attribute(node.value, "transpose", ast.Load()), [ast.Constant(-2), ast.Constant(-1)])
        return node


def _tensorish(node) -> bool:
    return isinstance(node, ast.Attribute) and node.attr not in ("head_dim", "d_k", "d_out")


def _names_read(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _names_written(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


class _Put(ast.NodeTransformer):
    """Every read of `name` replaced by a copy of `value`."""

    def __init__(self, name: str, value: ast.expr):
        self.name, self.value = name, value

    def visit_Name(self, node):
        return copy.deepcopy(self.value) if node.id == self.name and isinstance(node.ctx, ast.Load) else node


def _restructure(body: list, outcome: str) -> list:
    """Single-use temporaries merged into their one use; independent neighbours swapped; the returned
    expression split into a temporary of its own."""
    body = list(body)
    changed = True
    while changed:  # merge `t = e` into the next statement that is its only reader
        changed = False
        for index, statement in enumerate(body[:-1]):
            if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                    and isinstance(statement.targets[0], ast.Name)):
                continue
            name = statement.targets[0].id
            later = body[index + 1:]
            readers = [s for s in later if name in _names_read(s)]
            uses = sum(1 for s in later for n in ast.walk(s) if isinstance(n, ast.Name) and n.id == name)
            nxt = body[index + 1]
            if len(readers) == 1 and readers[0] is nxt and uses == 1 and name not in _names_written(nxt) \
                    and not isinstance(nxt, (ast.If, ast.For, ast.While, ast.With)):
                body[index + 1] = _Put(name, statement.value).visit(nxt)
                del body[index]
                changed = True
                break
    for index in range(len(body) - 1):  # swap independent assignments
        first, second = body[index], body[index + 1]
        if isinstance(first, ast.Assign) and isinstance(second, ast.Assign) \
                and not (_names_written(first) & (_names_read(second) | _names_written(second))) \
                and not (_names_written(second) & _names_read(first)) \
                and not any(isinstance(t, ast.Attribute) for s in (first, second) for t in s.targets):
            body[index], body[index + 1] = second, first
            break
    if body and isinstance(body[-1], ast.Return) and isinstance(body[-1].value, (ast.Call, ast.BinOp)):
        result = ast.Assign([ast.Name(outcome, ast.Store())], body[-1].value, lineno=0)
        body[-1:] = [result, ast.Return(ast.Name(outcome, ast.Load()))]
    return body


DOCSTRINGS = ["{name}: computed step by step.", "Compute {name} for the given tensors.",
              "Implementation of {name} (vectorised, no loops).", "Returns the result of {name}.",
              "Helper-based version of {name}.", "{name} — see the notebook for the shapes."]
OUTCOMES = ["outcome", "result_tensor", "answer", "output", "final", "ret"]


class Restructure(ast.NodeTransformer):
    def __init__(self, variant: int):
        self.variant = variant

    def visit_FunctionDef(self, node):
        self.generic_visit(node)
        doc = [node.body[0]] if node.body and isinstance(node.body[0], ast.Expr) \
            and isinstance(node.body[0].value, ast.Constant) else []
        body = _restructure(node.body[len(doc):], _pick(OUTCOMES, self.variant, 1))
        words = node.name.replace("_", " ").strip()
        own_doc = ast.Expr(ast.Constant(_pick(DOCSTRINGS, self.variant, 2).format(name=words)))
        node.body = [own_doc, *body]
        return node


HELPERS = ["_step_{index}_{name}", "_{name}_part", "compute_{name}_core", "_inner_{index}", "_do_{name}"]


def _extract_helper(tree: ast.Module, graded: set[str], index: int, variant: int) -> None:
    """The first call a graded top-level function makes in an assignment, moved into a helper of its own."""
    for position, node in enumerate(list(tree.body)):
        if not (isinstance(node, ast.FunctionDef) and node.name in graded):
            continue
        for statement in node.body:
            if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call):
                # the names the call reads from outside it: not those a comprehension or lambda in it binds, nor
                # builtins (a generator's `for W in ...` is no parameter of the helper)
                bound = _names_written(statement.value) | {a.arg for n in ast.walk(statement.value)
                                                           if isinstance(n, ast.Lambda) for a in n.args.args}
                used = sorted(_names_read(statement.value) - bound - set(dir(builtins))
                              - {"torch", "math", "F", "nn", "self"})
                if not used or any(n in graded for n in used):
                    continue
                name = _pick(HELPERS, variant, 3).format(index=index, name=node.name.strip("_"))
                helper = ast.FunctionDef(name, ast.arguments([], [ast.arg(n) for n in used], None, [], [], None, []),
                                         [ast.Return(statement.value)], [], None, None, lineno=0)
                statement.value = _call(ast.Name(name, ast.Load()), [ast.Name(n, ast.Load()) for n in used])
                tree.body.insert(position, helper)
                return


def _meaningful_names(blocks: Blocks, graded: set[str]) -> Blocks:
    from similarity_disguises import _local_names, _renamed

    whole = "\n".join(source for _, source in blocks)
    # parameters keep their names: the grader (and every caller) passes some by keyword (`dim=`, `qkv_bias=`),
    # and a rewrite asked to keep the behaviour keeps the signature
    parameters = {a.arg for node in ast.walk(ast.parse(whole)) if isinstance(node, ast.arguments)
                  for a in (*node.posonlyargs, *node.args, *node.kwonlyargs)}
    names = [n for n in _local_names(whole, graded) if not n.startswith("_") and n not in parameters]
    offset = _variant(blocks) % len(MEANINGFUL)
    words = MEANINGFUL[offset:] + MEANINGFUL[:offset]
    mapping = {name: f"{words[i % len(words)]}{'' if i < len(words) else i}" for i, name in enumerate(names)}
    return [(name, _renamed(source, mapping)) for name, source in blocks]


# the modules a spelling may bring in, and the line that imports each (not every notebook imports them)
IMPORTS = {"math": "import math", "F": "from torch.nn import functional as F"}


def _with_imports(tree: ast.Module) -> ast.Module:
    """`tree` with an import put first for each module of IMPORTS its code now uses, as a rewriter adds one."""
    used = {node.value.id for node in ast.walk(tree) if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name) and node.value.id in IMPORTS}
    tree.body[:0] = [statement for module in sorted(used) for statement in ast.parse(IMPORTS[module]).body]
    return tree


def paraphrase(blocks: Blocks, graded: set[str]) -> Blocks:
    out, variant = [], _variant(blocks)
    for index, (name, source) in enumerate(blocks):
        tree = Restructure(variant).visit(Spellings().visit(_parse(source)))
        _extract_helper(tree, graded, index, variant)
        out.append((name, ast.unparse(ast.fix_missing_locations(_with_imports(tree))) + "\n"))
    return _meaningful_names(out, graded)


# --------------------------------------------------------------------------- padding that looks live


def _params(function: ast.FunctionDef) -> list[str]:
    names = [a.arg for a in function.args.args]
    return names[1:] if names and names[0] == "self" else names


# shape checks that raise on what no caller passes (a parameter may be None, a device's name, a list or a module)
CHECKS = ["if isinstance({first}, (dict, set, bytes)):\n    raise TypeError('expected a tensor for {first}')",
          "if isinstance({first}, complex):\n    raise ValueError('{first} must be real')",
          "if isinstance({first}, type):\n    raise TypeError(f'bad input: {{{first}!r}}')"]
RESULTS = ["padded_result", "final_value", "out_tensor", "res", "computed"]
# a recomputation the real one overwrites: `first` itself, or arithmetic that leaves it as it is (where it is a
# number or a tensor: a parameter may be a list, a tuple or a module)
RECOMPUTE = ["{first} * 1.0 if torch.is_tensor({first}) else {first}",
             "{first} + 0 if torch.is_tensor({first}) else {first}", "{first}"]


def _pad_function(function: ast.FunctionDef, other_names: list[str], variant: int) -> None:
    params = _params(function)
    if not params:
        return
    first = params[0]
    doc = 1 if function.body and isinstance(function.body[0], ast.Expr) \
        and isinstance(function.body[0].value, ast.Constant) else 0
    added = [_pick(CHECKS, variant, 4).format(first=first)]
    result_name = _pick(RESULTS, variant, 5)
    decoy = next((n for n in other_names if n not in params), None)
    if decoy:  # an unused assignment to a name another function reads: dead by data flow, live by name
        added.append(f"{decoy} = {first}")
    body = function.body[doc:]
    assigned = [s for s in body if isinstance(s, ast.Assign) and len(s.targets) == 1
                and isinstance(s.targets[0], ast.Name)]
    new_body = list(function.body[:doc]) + [stmt for text in added for stmt in ast.parse(text).body]
    recomputed = False
    for statement in body:
        if assigned and statement is assigned[0] and not recomputed:
            target = statement.targets[0].id
            # a recomputation that the real one overwrites, then a clone used downstream
            new_body += ast.parse(f"{target} = " + _pick(RECOMPUTE, variant, 6).format(first=first)).body
            new_body.append(statement)
            if not any(word in ast.unparse(statement.value) for word in ("shape", "size", "len(")):  # a tensor
                new_body += ast.parse(f"{target} = {target}.clone() if torch.is_tensor({target}) else {target}").body
            recomputed = True
            continue
        if isinstance(statement, ast.Return) and statement.value is not None \
                and not (isinstance(statement.value, ast.Name) and statement.value.id == "self"):  # `return self`: kept
            value = ast.unparse(statement.value)
            r = result_name
            # guarded: a graded function may return a tuple (out and weights), a number or the module itself
            new_body += ast.parse(f"{r} = ({value})\n{r} = {r}.view_as({r}) if torch.is_tensor({r}) else {r}\n"
                                  f"return {r}.to({first}.device) if torch.is_tensor({r}) and hasattr({first}, 'device')"
                                  f" else {r}").body
            continue
        new_body.append(statement)
    function.body = new_body


def live_padding(blocks: Blocks, graded: set[str]) -> Blocks:
    variant = _variant(blocks)
    trees = [(name, _parse(source)) for name, source in blocks]
    functions = [n for _, tree in trees for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    out = []
    for name, tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name != "__init__":
                others = [p for f in functions if f is not node for p in _params(f)]
                _pad_function(node, others, variant)
        out.append((name, ast.unparse(ast.fix_missing_locations(tree)) + "\n"))
    return out


def rewrite(blocks: Blocks, graded: set[str]) -> Blocks:
    return live_padding(paraphrase(blocks, graded), graded)


REWRITES = {"paraphrase": paraphrase, "live padding": live_padding, "rewrite": rewrite}
