"""The computation of a student's graded functions as a graph: what a rewrite that does the same cannot change.

The text view (similarity_code.py) compares statements; a copy rewritten to look
different but do the same (`@` for `torch.matmul`, temporaries split or merged,
statements reordered, a helper inlined, live-looking padding) defeats it. Here
each graded function (each method of a graded class) is run symbolically from
its parameters to its outputs (what it returns, what it stores on `self`, a
buffer it registers, an argument it changes in place):

- a name stands for the expression it holds (temporaries inlined), so the order
  of independent statements and how the work is split into names are gone;
- a call of the student's own function or method is its body, run with the
  call's arguments bound (helpers inlined, or extracted: alike);
- only what reaches an output is kept (pruned per function, by data flow: an
  unused assignment is dead whatever other functions read, a recomputation
  overwritten later never reaches anything);
- equivalent spellings are one node (similarity_spellings.py);
- parameters are numbered by position (the curriculum fixes the signatures), the
  student's other names are gone, attributes of `self` are one anonymous name.

A node is identified by a hash of its operation and its children's hashes
(hash-consing), so equal computations are equal nodes. The fingerprints are the
hashes of every kept node's subtree cut at depths 1 to 4 (fingerprints()): a copy shares its
source's rare subcomputations whatever it was rewritten into. As in the text
view, similarity.py weighs each fingerprint by how rare it is in the class.
"""
from __future__ import annotations

import ast
import builtins
import math

from autograder.instructor.similarity_spellings import (INF, SPELLINGS, Budget, Graph, Spellings, dotted_name,
                                                        fingerprints, literal_items)

INLINE_DEPTH = 4  # calls of the student's own functions followed this deep
STEP_BUDGET = 5000  # statements run per student and section (the course's code runs a few hundred)
BUILTIN_NAMES = frozenset(dir(builtins))

class Function:
    """A function of the student's: its definition, and the class it is a method of (or None)."""

    def __init__(self, node: ast.FunctionDef, owner: str | None):
        self.node, self.owner = node, owner



class Runner(Spellings):
    """Runs one function symbolically: `outputs` are the nodes of what it returns, stores or changes."""

    def __init__(self, graph: Graph, functions: dict[str, Function], methods: dict[tuple[str, str], Function],
                 kept: frozenset[str]):
        self.graph, self.functions, self.methods, self.kept = graph, functions, methods, kept
        self.depth = 0
        self.current_owner: str | None = None  # the class whose method runs: self.helper() is its method
        self.steps = 0  # statements run so far, for all the section's functions together
        self.lambdas: dict[int, tuple] = {}  # a lambda's node -> (its tree, the names it closes over)
        self.effects: list[int] = []  # the running function's outputs, for those made inside an expression

    # ----------------------------------------------------------------------- a function

    def run(self, function: Function, arguments: list[int] | None = None, keywords: dict[str, int] | None = None,
            self_state: dict | None = None) -> tuple[list[int], dict]:
        """(its outputs, the state of `self` after it). Without arguments its parameters are themselves."""
        g = self.graph
        args = function.node.args
        params = [a.arg for a in args.posonlyargs + args.args]
        env: dict[str, int] = {}
        if function.owner is not None and params:
            env[params[0]] = g.node("self")
            params = params[1:]
        defaults = dict(zip([a.arg for a in args.posonlyargs + args.args][-len(args.defaults):] if args.defaults
                            else [], args.defaults))
        for index, name in enumerate(params):
            if arguments is None:
                env[name] = g.node(f"p{index}")
            elif index < len(arguments):
                env[name] = arguments[index]
            elif keywords and name in keywords:
                env[name] = keywords[name]
            elif name in defaults:
                env[name] = self.expr(defaults[name], {})
            else:
                env[name] = g.node(f"p{index}")
        for extra in (args.vararg, args.kwarg, *args.kwonlyargs):
            if extra is not None:
                env[extra.arg] = g.node(f"p:{extra.arg if extra in args.kwonlyargs else '*'}")
        state = dict(self_state or {})
        outputs: list[int] = []
        saved, self.effects = self.effects, outputs  # setattr(...) inside an expression adds to this run's
        try:
            self.block(function.node.body, env, outputs, state, function.owner)
        finally:
            self.effects = saved
        return outputs, state

    def call_own(self, function: Function, arguments: list[int], keywords: dict[str, int], state: dict) -> int:
        if self.depth >= INLINE_DEPTH:
            return self.graph.node(f"call:{'method' if function.owner else 'function'}", *arguments)
        self.depth += 1
        try:
            outputs, after = self.run(function, arguments, keywords, state)
        finally:
            self.depth -= 1
        state.update(after)
        returned = [o for o in outputs if not self.graph.nodes[o][0].startswith("out:")]
        if not returned:
            return self.graph.node("none")
        return returned[0] if len(returned) == 1 else self.graph.node("phi", *returned)

    # ----------------------------------------------------------------------- statements

    def step(self) -> None:
        """One more statement run: loops written out inside loops stop at STEP_BUDGET, not in hours."""
        self.steps += 1
        if self.steps > STEP_BUDGET:
            raise Budget

    def block(self, body: list, env: dict, outputs: list, state: dict, owner) -> bool:
        """Run the statements; True when the block ends (return or raise)."""
        for statement in body:
            if self.statement(statement, env, outputs, state, owner):
                return True
        return False

    def statement(self, node, env, outputs, state, owner) -> bool:
        g = self.graph
        self.step()
        if isinstance(node, ast.Return):
            outputs.append(self.expr(node.value, env, state) if node.value is not None else g.node("none"))
            return True
        if isinstance(node, ast.Raise):
            return True
        if isinstance(node, ast.Assign):
            value = self.expr(node.value, env, state)
            for target in node.targets:
                self.assign(target, value, node.value, env, outputs, state)
        elif isinstance(node, ast.AugAssign):
            current = self.expr(node.target, env, state)
            value = self.binary(node.op, current, self.expr(node.value, env, state))
            self.assign(node.target, value, None, env, outputs, state)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            self.effect(node.value, env, outputs, state)
        elif isinstance(node, ast.If):
            self.branch(node, env, outputs, state, owner)
        elif isinstance(node, ast.For) and literal_items(node.iter) is not None:  # unrolled: a loop over names
            for element in literal_items(node.iter):
                self.assign(node.target, self.expr(element, env, state), element, env, outputs, state)
                if self.block(node.body, env, outputs, state, owner):
                    return True
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            before = dict(env)
            self.assign(node.target, g.node("each", self.expr(node.iter, env, state)), None, env, outputs, state)
            self.block(node.body, env, outputs, state, owner)
            self.merge(env, before, env, g.node("loop"))
        elif isinstance(node, ast.While):
            before = dict(env)
            self.block(node.body, env, outputs, state, owner)
            self.merge(env, before, env, g.node("loop", self.expr(node.test, env, state)))
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            return self.block(node.body, env, outputs, state, owner)
        elif isinstance(node, ast.Try):
            return self.block(node.body + node.orelse + node.finalbody, env, outputs, state, owner)
        elif isinstance(node, ast.FunctionDef):
            self.functions = {**self.functions, node.name: Function(node, None)}
        return False

    def branch(self, node: ast.If, env, outputs, state, owner) -> None:
        test = self.expr(node.test, env, state)
        taken, other = dict(env), dict(env)
        ends_taken = self.block(node.body, taken, outputs, state, owner)
        ends_other = self.block(node.orelse, other, outputs, state, owner)
        if ends_taken and ends_other:
            env.update(taken)
        elif ends_taken:  # a guard: the code after it runs on the other branch's names
            env.clear(), env.update(other)
        elif ends_other:
            env.clear(), env.update(taken)
        else:
            self.merge(env, taken, other, test)

    def merge(self, env: dict, first: dict, second: dict, test: int) -> None:
        g = self.graph
        for name in set(first) | set(second):
            a, b = first.get(name), second.get(name)
            if a != b:
                env[name] = self.phi(test, a if a is not None else g.node("none"), b if b is not None else g.node("none"))
            elif a is not None:
                env[name] = a

    def phi(self, test: int, first: int, second: int) -> int:
        """One value or the other, by the test; the value itself when both are the same
        (`y.to(x.device) if hasattr(x, "device") else y` is y)."""
        return first if first == second else self.graph.node("phi", test, first, second)

    def assign(self, target, value: int, source, env, outputs, state) -> None:
        g = self.graph
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            parts = source.elts if isinstance(source, (ast.Tuple, ast.List)) and len(source.elts) == len(target.elts) \
                else None
            for index, inner in enumerate(target.elts):
                if isinstance(inner, ast.Starred):
                    inner = inner.value
                part = self.expr(parts[index], env, state) if parts else self.item(value, g.const(index))
                self.assign(inner, part, None, env, outputs, state)
        elif isinstance(target, ast.Attribute) and self.is_self(target.value, env):
            state[target.attr] = value
            outputs.append(g.node("out:store", value))
        elif isinstance(target, ast.Attribute):  # v1.W_query.weight.data = ...: a change to what it was given
            base = self.expr(target.value, env, state)
            outputs.append(g.node("out:setattr", g.node(f".{target.attr}", base), value))
        elif isinstance(target, ast.Subscript):
            base = self.expr(target.value, env, state)
            changed = g.node("setitem", base, self.expr(target.slice, env, state), value)
            self.assign(target.value, changed, None, env, outputs, state)
            if isinstance(target.value, ast.Name) and self.is_parameter(base):
                outputs.append(g.node("out:changed", changed))
        elif isinstance(target, ast.Starred):
            self.assign(target.value, value, None, env, outputs, state)

    def is_parameter(self, key: int) -> bool:
        return self.graph.nodes.get(key, ("",))[0].startswith("p")

    def is_self(self, node, env) -> bool:
        return isinstance(node, ast.Name) and env.get(node.id) == self.graph.node("self")

    def effect(self, call: ast.Call, env, outputs, state) -> None:
        """A call alone on its line: what it changes is what it does."""
        g = self.graph
        func = call.func
        if isinstance(func, ast.Attribute):
            name = func.attr
            if name == "register_buffer" and self.is_self(func.value, env) and len(call.args) >= 2:
                value = self.expr(call.args[1], env, state)
                if isinstance(call.args[0], ast.Constant):
                    state[str(call.args[0].value)] = value
                outputs.append(g.node("out:buffer", value))
                return
            if isinstance(func.value, ast.Name) and func.value.id in env and name.endswith("_") \
                    and not name.startswith("_"):  # x.masked_fill_(...): x changes
                changed = self.expr(ast.Call(ast.Attribute(func.value, name[:-1], ast.Load()), call.args,
                                             call.keywords), env, state)
                base = env[func.value.id]
                env[func.value.id] = changed
                if self.is_parameter(base):
                    outputs.append(g.node("out:changed", changed))
                return
            if isinstance(func.value, ast.Name) and func.value.id in env and not self.is_self(func.value, env):
                # a local container filled (steps.append(x)): part of it, alive only if it is read
                env[func.value.id] = g.node(f"fill:{SPELLINGS.get(name, name)}", env[func.value.id],
                                            *[self.expr(a, env, state) for a in call.args])
                return
        value = self.expr(call, env, state)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) or value == g.node("none"):
            return  # super().__init__(), or a call whose effect is already an output (setattr)
        outputs.append(g.node("out:call", value))

    # ----------------------------------------------------------------------- expressions

    def expr(self, node, env: dict, state: dict | None = None) -> int:
        g, state = self.graph, state if state is not None else {}
        if node is None:
            return g.node("none")
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            if node.id in self.functions:
                return g.node("own-function")
            return g.node(f"g:{node.id}" if node.id in self.kept else "g:other")
        if isinstance(node, ast.Constant):
            return g.const(node.value)
        if isinstance(node, ast.Attribute):
            return self.attribute(node, env, state)
        if isinstance(node, ast.Subscript):
            return self.item(self.expr(node.value, env, state), self.expr(node.slice, env, state))
        if isinstance(node, ast.Slice):
            return g.node("slice", self.expr(node.lower, env, state), self.expr(node.upper, env, state),
                          self.expr(node.step, env, state))
        if isinstance(node, (ast.Tuple, ast.List)):
            return g.node("tuple", *[self.expr(e, env, state) for e in node.elts])
        if isinstance(node, ast.BinOp):
            return self.binary(node.op, self.expr(node.left, env, state), self.expr(node.right, env, state))
        if isinstance(node, ast.UnaryOp):
            operand = self.expr(node.operand, env, state)
            if isinstance(node.op, ast.USub):
                value = g.value_of(operand)
                if isinstance(value, float):
                    return g.const(-value)
                return g.node("neg", operand)
            if isinstance(node.op, (ast.Not, ast.Invert)):
                return g.node("invert", operand)
            return operand
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            return self.compare(node.ops[0], self.expr(node.left, env, state),
                                self.expr(node.comparators[0], env, state))
        if isinstance(node, ast.BoolOp):
            return g.node("and" if isinstance(node.op, ast.And) else "or",
                          *[self.expr(v, env, state) for v in node.values])
        if isinstance(node, ast.IfExp):
            return self.phi(self.expr(node.test, env, state), self.expr(node.body, env, state),
                            self.expr(node.orelse, env, state))
        if isinstance(node, ast.Call):
            return self.call(node, env, state)
        if isinstance(node, ast.Starred):
            return self.expr(node.value, env, state)
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            return self.comprehension(node, env, state)
        if isinstance(node, ast.Lambda):  # kept to be called: make = lambda: nn.Linear(...) ... make()
            key = g.node("lambda", g.const(len(self.lambdas)))
            self.lambdas[key] = (node, dict(env))
            return key
        return g.node(f"ast:{type(node).__name__}")

    def comprehension(self, node, env, state) -> int:
        g = self.graph
        unrolled = literal_items(node.generators[0].iter) if len(node.generators) == 1 \
            and not node.generators[0].ifs else None
        if unrolled is not None:  # (x @ W for W in (W_q, W_k)) is (x @ W_q, x @ W_k)
            found = []
            for element in unrolled:
                self.step()
                inner = dict(env)
                self.assign(node.generators[0].target, self.expr(element, env, state), element, inner, [], state)
                found.append(self.expr(node.elt, inner, state))
            return g.node("tuple", *found)
        inner = dict(env)
        for generator in node.generators:
            self.assign(generator.target, g.node("each", self.expr(generator.iter, inner, state)), None,
                        inner, [], state)
        return g.node("each-of", self.expr(node.elt, inner, state))

    def attribute(self, node: ast.Attribute, env, state) -> int:
        g = self.graph
        dotted = dotted_name(node)
        if dotted and dotted.split(".")[0] not in env:  # torch.float, math.pi, torch.inf
            last = dotted.rsplit(".", 1)[-1]
            if last == "inf":
                return g.const(INF)
            if last in ("pi", "e") and dotted.split(".")[0] in ("math", "torch", "numpy", "np"):
                return g.const(math.pi if last == "pi" else math.e)
            return g.node(f"g:{last}")
        if self.is_self(node.value, env):
            return state.get(node.attr) or g.node("self.a")
        base = self.expr(node.value, env, state)
        if node.attr in ("T", "mT", "mH", "H"):
            return g.node("T", base)
        if node.attr == "shape":
            return g.node("shape", base)
        if node.attr in ("device",):
            return g.node("device")
        return g.node(f".{node.attr}", base)

    def call(self, node: ast.Call, env, state) -> int:
        g = self.graph
        func = node.func
        positional = [self.expr(a, env, state) for a in node.args]
        keywords = {k.arg: self.expr(k.value, env, state) for k in node.keywords if k.arg is not None}
        if isinstance(func, ast.Name) and env.get(func.id) in self.lambdas:
            lambda_node, closure = self.lambdas[env[func.id]]
            inner = {**closure, **{a.arg: value for a, value in zip(lambda_node.args.args, positional)}}
            return self.expr(lambda_node.body, inner, state)
        if isinstance(func, ast.Name) and func.id in ("getattr", "setattr") and len(node.args) >= 2:
            name = g.value_of(positional[1])
            if isinstance(name, str) and name.isidentifier():  # getattr(v1, "W_query") is v1.W_query
                target = ast.Attribute(node.args[0], name, ast.Load())
                if func.id == "getattr":
                    return self.attribute(target, env, state)
                target.ctx = ast.Store()
                self.assign(target, positional[2], None, env, self.effects, state)
                return g.node("none")
        if isinstance(func, ast.Name):
            own = self.functions.get(func.id)
            if own is not None:
                return self.call_own(own, positional, keywords, state)
            if func.id == "float" and len(positional) == 1:
                text = g.value_of(positional[0])
                if isinstance(text, str) and text.strip().lower().lstrip("+-") in ("inf", "infinity"):
                    return g.const(-INF if text.strip().startswith("-") else INF)
            known = func.id in self.kept or func.id in BUILTIN_NAMES
            return self.canonical_call(func.id if known else "own", positional, keywords)
        if isinstance(func, ast.Attribute):
            if self.is_self(func.value, env):
                method = self.methods.get((self.current_owner, func.attr))
                if method is not None:  # self.helper(x): the method's body
                    return self.call_own(method, positional, keywords, state)
                return g.node("call:self.a", state.get(func.attr) or g.node("self.a"), *positional,
                              *[g.node(f"kw:{k}", v) for k, v in sorted(keywords.items())])
            dotted = dotted_name(func)
            if dotted and dotted.split(".")[0] not in env:  # torch.softmax, F.softmax, math.sqrt
                return self.canonical_call(dotted.rsplit(".", 1)[-1], positional, keywords)
            receiver = self.expr(func.value, env, state)
            return self.canonical_call(func.attr, [receiver, *positional], keywords, receiver=True)
        callee = self.expr(func, env, state)
        return g.node("call", callee, *positional)

def own_functions(statements: list) -> tuple[dict[str, Function], dict[tuple[str, str], Function]]:
    """The student's top-level functions, and the methods of their classes by (class, method)."""
    functions, methods = {}, {}
    for node in statements:
        if isinstance(node, ast.FunctionDef):
            functions[node.name] = Function(node, None)
        elif isinstance(node, ast.ClassDef):
            for inner in node.body:
                if isinstance(inner, ast.FunctionDef):
                    methods[(node.name, inner.name)] = Function(inner, node.name)
    return functions, methods


def outputs_of(statements: list, graded: tuple[str, ...], kept: frozenset[str]) -> tuple[Graph, dict[str, list[int]]]:
    """The graph of a section's graded code: graded function (or `Class.method`) -> the nodes of its outputs."""
    graph = Graph()
    functions, methods = own_functions([s for s in statements if s is not None])
    runner = Runner(graph, functions, methods, kept | frozenset(graded))
    found: dict[str, list[int]] = {}
    targets = [(name, functions[name]) for name in graded if name in functions]
    targets += [(f"{owner}.{method}", function) for (owner, method), function in methods.items() if owner in graded]
    for label, function in targets:
        runner.current_owner = function.owner
        try:
            outputs, _ = runner.run(function)
        except (Budget, RecursionError, KeyError, IndexError, TypeError, ValueError, AttributeError):
            continue  # what code this odd cannot be read as a computation; the text view still compares it
        found[label] = outputs
    return graph, found


def computation_fingerprints(statements: list, graded: tuple[str, ...], kept: frozenset[str]) -> set[int]:
    """The fingerprints of a section's cleaned statements (similarity_code.cleaned), read without changing them."""
    graph, outputs = outputs_of([node for _, node, _ in statements if node is not None], graded, kept)
    return fingerprints(graph, outputs)
