"""Equivalent spellings of one computation made one node: the vocabulary of similarity_graph.py.

A node is (operation, children), identified by a hash of both (hash-consing: equal
computations are equal nodes, whatever order they were built in). `Spellings` builds
the nodes of arithmetic and of calls so that what a rewrite changes without changing
the result gives the same node: `@`, `matmul`, `bmm`, `mm` and a matmul-shaped
`einsum`; `.T`, `.mT`, `transpose(-2, -1)` and the matching `permute`; `softmax`
spelled as a function or a method; `view`, `reshape`, `view_as`; `.size()` and
`.shape`; keyword or positional arguments; `x ** 0.5` and `sqrt`; a division by a
product or twice; `torch.where(m, full_like(x, v), x)` for `masked_fill`; `x + 0`,
`x * 1`; `clone`, `contiguous`, `to` and `detach` as what they are given; the
operands of `+`, `*` and `==` in any order.
"""
from __future__ import annotations

import ast

DEPTH = 4  # fingerprinted subtree depths: 1 .. DEPTH
FLAT_TERMS = 16  # operands of a sum or a product gathered into one node at most
NODE_BUDGET = 20000  # nodes per student and section: hostile code stops here

IDENTITY = frozenset({"clone", "contiguous", "to", "detach", "type_as", "cpu", "cuda", "requires_grad_"})
CONSTRUCTORS = frozenset({"ones", "zeros", "randn", "rand", "empty", "full"})  # torch.ones(2, 3): a shape
MATMUL = frozenset({"matmul", "bmm", "mm", "__matmul__"})
TRANSPOSE = frozenset({"transpose", "swapaxes", "swapdims"})
REDUCTIONS = frozenset({"sum", "mean", "amax", "amin", "max", "min", "prod", "std", "var", "logsumexp", "all", "any",
                        "argmax", "argmin", "norm", "count_nonzero"})
SPELLINGS = {"reshape": "view", "view_as": "view", "multiply": "mul", "divide": "div", "true_divide": "div",
             "subtract": "sub", "negative": "neg", "logical_not": "invert", "bitwise_not": "invert",
             "greater": "gt", "less": "lt", "concat": "cat", "concatenate": "cat", "rsqrt": "rsqrt",
             "masked_fill_": "masked_fill", "unsqueeze_": "unsqueeze", "swapaxes": "transpose", "swapdims": "transpose"}
# positional parameters of the operations, after the tensor itself, so that a keyword or a position read alike
PARAMETERS = {"softmax": ("dim",), "log_softmax": ("dim",), "masked_fill": ("mask", "value"),
              "transpose": ("dim0", "dim1"), "unsqueeze": ("dim",), "squeeze": ("dim",), "triu": ("diagonal",),
              "tril": ("diagonal",), "chunk": ("chunks", "dim"), "split": ("split_size", "dim"),
              "cat": ("dim",), "stack": ("dim",), "expand": (), "repeat": (), "flatten": ("start_dim", "end_dim"),
              "dropout": ("p", "training"), "where": ("input", "other"), "full_like": ("fill_value",),
              "linear": ("weight", "bias"), "Linear": ("in_features", "out_features", "bias"),
              "Dropout": ("p",), "pow": ("exponent",), "clamp": ("min", "max"), "clamp_min": ("min",),
              "arange": ("end",), "gather": ("dim", "index"), "index_select": ("dim", "index"),
              **{name: ("dim", "keepdim") for name in REDUCTIONS}}
NOISE_KEYWORDS = frozenset({"device", "out", "requires_grad", "layout", "pin_memory", "memory_format"})
COMMUTATIVE = frozenset({"add", "mul", "eq", "ne", "and", "or", "logical_and", "logical_or", "maximum", "minimum"})
INF = float("inf")


class Budget(Exception):
    """The student's code made more nodes than NODE_BUDGET."""


class Graph:
    """Hash-consed expression nodes: hash -> (operation, children's hashes)."""

    def __init__(self):
        self.nodes: dict[int, tuple[str, tuple[int, ...]]] = {}

    def node(self, op: str, *children: int) -> int:
        if op in COMMUTATIVE:
            children = tuple(sorted(children))
        key = hash((op, children))
        if key not in self.nodes:
            if len(self.nodes) >= NODE_BUDGET:
                raise Budget
            self.nodes[key] = (op, children)
        return key

    def const(self, value) -> int:
        if isinstance(value, bool) or value is None or isinstance(value, str):
            return self.node(f"c:{value!r}")
        if isinstance(value, (int, float)):
            return self.node(f"c:{float(value):.6g}")
        return self.node("c:other")

    def value_of(self, key: int):
        """The constant a node holds, or None."""
        op, _ = self.nodes.get(key, ("", ()))
        if op.startswith("c:") and op not in ("c:other", "c:None"):
            text = op[2:]
            try:
                return float(text)
            except ValueError:
                return text.strip("'\"") if text[:1] in "'\"" else text
        return None



def is_minus_inf(graph: Graph, key: int) -> bool:
    return graph.nodes.get(key, ("",))[0] == "c:-inf"


class Spellings:
    """Builds canonical nodes on `self.graph` (a Graph)."""
    graph: Graph

    def item(self, base: int, index: int) -> int:
        g = self.graph
        op, children = g.nodes[base]
        position = g.value_of(index)
        if op == "tuple" and isinstance(position, float) and position.is_integer() \
                and -len(children) <= position < len(children):
            return children[int(position)]  # (q, k, v)[1] is k
        if g.nodes[base][0] == "shape":  # x.shape[-1] is x.size(-1); b, t, d = x.shape too
            return g.node("dim", g.nodes[base][1][0], index)
        return g.node("item", base, index)

    def binary(self, op, left: int, right: int) -> int:
        g = self.graph
        if isinstance(op, ast.MatMult):
            return g.node("matmul", left, right)
        if isinstance(op, ast.Add):
            return self.total([left, right])
        if isinstance(op, ast.Sub):
            return left if g.value_of(right) == 0.0 else g.node("sub", left, right)
        if isinstance(op, ast.Mult):
            return self.product([left, right])
        if isinstance(op, ast.Div):
            return self.quotient(left, right)
        if isinstance(op, ast.Pow):
            exponent = g.value_of(right)
            if exponent == 0.5:
                return g.node("sqrt", left)
            if exponent == -0.5:
                return self.quotient(g.const(1), g.node("sqrt", left))
            return g.node("pow", left, right)
        return g.node(f"op:{type(op).__name__}", left, right)

    def total(self, terms: list[int]) -> int:
        """A sum, flattened, any term 0 left out: x + 0 is x."""
        g = self.graph
        kept = [t for term in terms for t in self.flat("add", term) if g.value_of(t) != 0.0]
        if not kept:
            return g.const(0)
        return kept[0] if len(kept) == 1 else g.node("add", *kept)

    def flat(self, op: str, key: int) -> tuple[int, ...]:
        """The operands of `key` where it is itself an `op` (a + (b + c) is a + b + c), up to FLAT_TERMS of them:
        a sum grown in a loop written out stays linear in time."""
        node = self.graph.nodes[key]
        return node[1] if node[0] == op and len(node[1]) < FLAT_TERMS else (key,)

    def product(self, factors: list[int]) -> int:
        """A product with any quotient among its factors made one quotient: a * (b / c) is (a * b) / c."""
        g = self.graph
        numerators, denominators = [], []
        for factor in factors:
            op, children = g.nodes[factor]
            if op == "div":
                numerators += self.flat("mul", children[0])
                denominators += children[1:]
            else:
                numerators += self.flat("mul", factor)
            if op == "rsqrt":
                numerators.pop()
                denominators.append(g.node("sqrt", children[0]))
        numerators = [n for n in numerators if g.value_of(n) != 1.0] or [g.const(1)]
        top = numerators[0] if len(numerators) == 1 else g.node("mul", *numerators)
        return g.node("div", top, *sorted(denominators)) if denominators else top

    def quotient(self, left: int, right: int) -> int:
        """a / b / c, a / (b * c) and (a / b) / c alike: one numerator over a sorted set of denominators."""
        g = self.graph
        op, children = g.nodes[left]
        numerator, denominators = (children[0], list(children[1:])) if op == "div" else (left, [])
        right_op, right_children = g.nodes[right]
        if right_op == "div":  # a / (b / c) = a * c / b
            return self.product([self.quotient(numerator, right_children[0]), *right_children[1:]]) \
                if not denominators else self.quotient(self.product([numerator, *right_children[1:]]),
                                                       self.product([*denominators, right_children[0]]))
        denominators += self.flat("mul", right)
        return g.node("div", numerator, *sorted(denominators))

    def compare(self, op, left: int, right: int) -> int:
        g = self.graph
        if isinstance(op, (ast.Lt, ast.LtE)):  # a < b is b > a
            left, right, op = right, left, ast.Gt() if isinstance(op, ast.Lt) else ast.GtE()
        if isinstance(op, (ast.Is, ast.Eq)):
            return g.node("eq", left, right)
        if isinstance(op, (ast.IsNot, ast.NotEq)):
            return g.node("ne", left, right)
        return g.node(f"cmp:{type(op).__name__}", left, right)

    def canonical_call(self, name: str, args: list[int], keywords: dict[str, int], receiver: bool = False) -> int:
        """The call as one node whatever its spelling (see the module's docstring)."""
        g = self.graph
        name = SPELLINGS.get(name, name)
        keywords = {k: v for k, v in keywords.items() if k not in NOISE_KEYWORDS}
        if name in IDENTITY and args:
            return args[0]
        if name in ("tuple", "list") and len(args) == 1 and g.nodes[args[0]][0] == "tuple":
            return args[0]  # tuple(x for x in (a, b)) is (a, b)
        if name == "einsum" and args:
            return self.einsum(args, keywords)
        if name in MATMUL and len(args) == 2:
            return g.node("matmul", *args)
        if name == "sqrt" and len(args) == 1:
            return g.node("sqrt", args[0])
        if name == "rsqrt" and len(args) == 1:
            return self.quotient(g.const(1), g.node("sqrt", args[0]))
        if name == "div" and len(args) == 2:
            return self.quotient(*args)
        if name == "mul" and len(args) == 2:
            return self.product(args)
        if name == "add" and len(args) == 2 and not keywords:
            return self.total(args)
        if name == "size":
            return g.node("shape", args[0]) if len(args) == 1 and "dim" not in keywords \
                else g.node("dim", args[0], args[1] if len(args) > 1 else keywords["dim"])
        if name == "dim" and len(args) == 1:
            return g.node("ndim", args[0])
        if name in CONSTRUCTORS and not receiver:
            shape = list(args)
            if len(shape) == 1 and g.nodes[shape[0]][0] == "tuple":
                shape = list(g.nodes[shape[0]][1])
            return g.node(f"call:{name}", g.node("tuple", *shape),
                          *[g.node(f"kw:{k}", v) for k, v in sorted(keywords.items())])
        if name == "view" and len(args) == 2 and args[1] == args[0]:
            return args[0]  # x.view_as(x)
        if name in ("view", "expand", "repeat", "permute", *CONSTRUCTORS) and len(args) > 1:
            shape = args[1:]
            if len(shape) == 1 and g.nodes[shape[0]][0] == "tuple":
                shape = list(g.nodes[shape[0]][1])
            if name == "view" and len(shape) == 1 and g.nodes[shape[0]][0] == "shape" \
                    and g.nodes[shape[0]][1][0] == args[0]:
                return args[0]  # x.view(x.shape)
            if name == "permute":
                return self.permute(args[0], shape)
            return g.node(name, args[0], g.node("tuple", *shape))
        if name == "transpose" and len(args) == 3 or (name == "transpose" and len(args) == 1 and keywords):
            dims = [g.value_of(d) for d in [*args[1:], keywords.get("dim0"), keywords.get("dim1")] if d is not None]
            if sorted(d for d in dims if isinstance(d, float)) == [-2.0, -1.0]:
                return g.node("T", args[0])
            return g.node("transpose", args[0], *sorted(args[1:]))
        if name == "where" and len(args) == 3:
            return self.where(*args)
        if name == "softmax" and len(args) == 1 and not keywords:  # nn.Softmax(dim) made elsewhere: as called
            return g.node("softmax", args[0])
        return self.named_call(name, args, keywords)

    def named_call(self, name: str, args: list[int], keywords: dict[str, int]) -> int:
        """The call with its positional parameters after the first as keywords: F.softmax(x, -1) is
        x.softmax(dim=-1)."""
        g = self.graph
        names = PARAMETERS.get(name)
        first = 0 if name[:1].isupper() else 1  # nn.Linear(d_in, d_out): no tensor first, every argument named
        if names is not None and args:
            for index, value in enumerate(args[first:]):
                if index < len(names):
                    keywords.setdefault(names[index], value)
            args = args[:first] if len(args) - first <= len(names) else args
        return g.node(f"call:{name}", *args, *[g.node(f"kw:{k}", v) for k, v in sorted(keywords.items())])

    def einsum(self, args: list[int], keywords) -> int:
        """A matmul-shaped einsum as the matmul (with the transposes it implies), else as written."""
        g = self.graph
        spec = g.value_of(args[0])
        operands = args[1:]
        if len(operands) == 1 and g.nodes[operands[0]][0] == "tuple":
            operands = list(g.nodes[operands[0]][1])
        if not isinstance(spec, str) or "->" not in spec:
            return g.node("call:einsum", *args)
        inputs, output = spec.replace(" ", "").split("->")
        inputs = inputs.split(",")
        if len(inputs) == 2 and len(operands) == 2:
            found = matmul_of(inputs[0], inputs[1], output)
            if found is not None:
                transpose_a, transpose_b, transpose_out = found
                a = g.node("T", operands[0]) if transpose_a else operands[0]
                b = g.node("T", operands[1]) if transpose_b else operands[1]
                product = g.node("matmul", a, b)
                return g.node("T", product) if transpose_out else product
        if len(inputs) == 1 and len(operands) == 1 and len(inputs[0]) == len(output) >= 2 \
                and inputs[0][:-2] == output[:-2] and inputs[0][-2:] == output[-1] + output[-2]:
            return g.node("T", operands[0])
        return g.node(f"einsum:{canonical_spec(spec)}", *operands)

    def permute(self, tensor: int, dims: list[int]) -> int:
        g = self.graph
        values = [g.value_of(d) for d in dims]
        if all(isinstance(v, float) for v in values):
            order = [int(v) for v in values]
            if len(order) >= 2 and order[:-2] == list(range(len(order) - 2)) and order[-2:] == [len(order) - 1,
                                                                                                  len(order) - 2]:
                return g.node("T", tensor)
            if len(order) >= 2 and sorted(order) == list(range(len(order))):
                swapped = [i for i, d in enumerate(order) if d != i]
                if len(swapped) == 2:
                    return g.node("transpose", tensor, *sorted(g.const(i) for i in swapped))
        return g.node("permute", tensor, g.node("tuple", *dims))

    def where(self, condition: int, chosen: int, other: int) -> int:
        """torch.where(m, full_like(x, v), x) and torch.where(m, v, x) are x.masked_fill(m, v)."""
        g = self.graph

        def filled(key: int, like: int) -> int | None:
            op, children = g.nodes[key]
            if op.startswith("c:"):
                return key
            if op.startswith("call:full_like") and children and children[0] == like:
                rest = [c for c in children[1:]]
                return g.nodes[rest[0]][1][0] if rest and g.nodes[rest[0]][0].startswith("kw:") else None
            return None

        value = filled(chosen, other)
        if value is not None:
            return g.node("call:masked_fill", other, g.node("kw:mask", condition), g.node("kw:value", value))
        value = filled(other, chosen)
        if value is not None:
            return g.node("call:masked_fill", chosen, g.node("kw:mask", g.node("invert", condition)),
                          g.node("kw:value", value))
        return g.node("call:where", condition, chosen, other)




def matmul_of(a: str, b: str, out: str) -> tuple[bool, bool, bool] | None:
    """(transpose a, transpose b, transpose the product) when `a,b->out` is a batched matrix product, else None."""
    if len(a) < 2 or len(b) < 2 or len(out) < 2 or len(set(a)) != len(a) or len(set(b)) != len(b):
        return None
    contracted = (set(a) & set(b)) - set(out)
    if len(contracted) != 1 or a[:-2] != b[:-2] or a[:-2] != out[:-2]:
        return None
    c = contracted.pop()
    rows_a, cols_b = a[-2:].replace(c, ""), b[-2:].replace(c, "")
    if len(rows_a) != 1 or len(cols_b) != 1 or set(out[-2:]) != {rows_a, cols_b}:
        return None
    return a[-1] != c, b[-2] != c, out[-2:] != rows_a + cols_b


def canonical_spec(spec: str) -> str:
    """An einsum spec with its letters renamed in order of appearance: `bqd,bkd->bqk` is `abc,adc->abd`."""
    letters: dict[str, str] = {}
    return "".join(letters.setdefault(ch, chr(97 + len(letters))) if ch.isalpha() else ch for ch in spec)


UNROLL = 8  # a loop or comprehension over a literal tuple of at most this many items is written out


def literal_items(node) -> list | None:
    """The items of a literal tuple or list short enough to unroll over, else None."""
    if isinstance(node, (ast.Tuple, ast.List)) and len(node.elts) <= UNROLL \
            and not any(isinstance(e, ast.Starred) for e in node.elts):
        return list(node.elts)
    return None


def dotted_name(node) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


# --------------------------------------------------------------------------- a section's fingerprints


def fingerprints(graph: Graph, outputs: dict[str, list[int]]) -> set[int]:
    """The hashes of every output-reaching node's subtree cut at depths 1..DEPTH (leaves alone are left out:
    a parameter or a constant is no evidence)."""
    reached: list[int] = []
    seen: set[int] = set()
    stack = [key for keys in outputs.values() for key in keys]
    while stack:
        key = stack.pop()
        if key in seen or key not in graph.nodes:
            continue
        seen.add(key)
        reached.append(key)
        stack.extend(graph.nodes[key][1])
    cut: dict[int, int] = {key: hash(graph.nodes[key][0]) for key in seen}  # depth 0: the operation alone
    found: set[int] = set()
    for depth in range(1, DEPTH + 1):
        deeper = {key: hash((graph.nodes[key][0], tuple(cut[c] for c in graph.nodes[key][1]), depth))
                  for key in seen}
        found.update(value for key, value in deeper.items() if graph.nodes[key][1])
        cut = deeper
    return found
