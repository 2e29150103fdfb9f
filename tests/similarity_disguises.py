"""What a student does to hide a copy, as functions from a section's code to its disguised code.

A section's code is a list of (graded name, source) blocks, one per solution cell
of the released notebook. Each disguise changes only what it says (renaming
keeps the formatting, reformatting keeps the names), so that the tests can apply
each alone and all together.
"""
from __future__ import annotations

import ast
import copy
import io
import re
import tokenize

Blocks = list[tuple[str, str]]


def _local_names(source: str, graded: set[str]) -> list[str]:
    """Names the student chose: parameters, assigned names, their own helpers (not the graded names)."""
    tree = ast.parse(source)
    found = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]  # helpers, not methods
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.arg != "self":
            found.append(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.append(node.id)
    return [name for name in dict.fromkeys(found) if name not in graded]


def _renamed(source: str, mapping: dict[str, str]) -> str:
    """`source` with each name of `mapping` replaced where it is a name (not an attribute or a keyword)."""
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    lines = source.splitlines(keepends=True)
    edits, brackets = [], []  # for each open bracket: whether it opens a `def`'s parameters
    for index, tok in enumerate(tokens):
        if tok.type == tokenize.OP and tok.string in "([{":
            brackets.append(index >= 2 and tokens[index - 2].string == "def")
        elif tok.type == tokenize.OP and tok.string in ")]}":
            brackets.pop()
        if tok.type == tokenize.STRING and tok.string[:1] in "fF":  # an f-string's fields name variables too
            edits.append((tok.start, tok.end, _renamed_fields(tok.string, mapping)))
        if tok.type != tokenize.NAME or tok.string not in mapping:
            continue
        before = tokens[index - 1].string if index else ""
        after = tokens[index + 1].string if index + 1 < len(tokens) else ""
        keyword = brackets and not brackets[-1] and after == "=" and before in ("(", ",")
        if before == "." or keyword:
            continue
        edits.append((tok.start, tok.end, mapping[tok.string]))
    for (row, col), (_, end), new in reversed(edits):
        line = lines[row - 1]
        lines[row - 1] = line[:col] + new + line[end:]
    return "".join(lines)


def _renamed_fields(text: str, mapping: dict[str, str]) -> str:
    def field(match):
        return re.sub(r"\b\w+\b", lambda word: mapping.get(word[0], word[0]), match[0])
    return re.sub(r"\{[^{}]*\}", field, text)


def rename(blocks: Blocks, graded: set[str]) -> Blocks:
    whole = "\n".join(source for _, source in blocks)
    mapping = {name: f"my_{index}_{name[::-1].strip('_')}" for index, name in enumerate(_local_names(whole, graded))}
    return [(name, _renamed(source, mapping)) for name, source in blocks]


def reformat(blocks: Blocks, graded: set[str]) -> Blocks:
    """Two-space indentation, no space after commas, blank lines doubled, a long line broken."""
    def one(source: str) -> str:
        source = re.sub(r"(?m)^((?:    )+)", lambda m: "  " * (len(m.group(1)) // 4), source)
        source = re.sub(r",\s", ",", source).replace("\n\n", "\n\n\n")
        return re.sub(r"(?m)^(\s*)return (.+)$", r"\1return (\n\1    \2\n\1)", source)
    return [(name, one(source)) for name, source in blocks]


def _strip_comments(source: str) -> str:
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type != tokenize.COMMENT]
    return tokenize.untokenize(tokens)


def recomment(blocks: Blocks, graded: set[str]) -> Blocks:
    """Comments and docstrings removed, other comments added."""
    def one(source: str) -> str:
        source = re.sub(r'(?s)"""(.*?)"""', '"""My own implementation, written for the course."""', source)
        source = _strip_comments(source)
        return re.sub(r"(?m)^(\s*)(return .*)$", r"\1# the result we want\n\1\2  # done", source)
    return [(name, one(source)) for name, source in blocks]


def reorder(blocks: Blocks, graded: set[str]) -> Blocks:
    """The definitions in the opposite order (the last cell holds the first definition)."""
    names = [name for name, _ in blocks]
    return list(zip(names, reversed([source for _, source in blocks])))


def _at_function_starts(source: str, lines: list[str]) -> str:
    """`source` with `lines` put first in the body of every function it defines, at the body's indentation."""
    starts = sorted({(node.body[0].lineno, node.body[0].col_offset) for node in ast.walk(ast.parse(source))
                     if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}, reverse=True)
    text = source.splitlines(keepends=True)
    for line, column in starts:
        text[line - 1:line - 1] = [" " * column + added + "\n" for added in lines]
    return "".join(text)


def pad(blocks: Blocks, graded: set[str]) -> Blocks:
    """Dead code of every kind: a module-level flag set to None guarding prints, first thing in every function
    (so it is the first name each function uses), and a list of the steps taken that nothing reads but that
    is live to a static reader (a call appends to it); before every return a print, an assignment nothing
    reads, an `if False:` branch and statements without effect; an unused module-level name and an unused
    helper per cell."""
    def one(index: int, source: str) -> str:
        source = _at_function_starts(source, ["if VERBOSE_CHECKS:", '    print("entering", VERBOSE_CHECKS)',
                                              "None", "pass", "trace = []"])
        source = re.sub(r"(?m)^(\s*)(return .*)$",
                        r'\1print("checking the shapes")\n\1unused_copy = 12345\n\1if False:\n\1    print("never")'
                        r'\n\1...\n\1trace.append("returning")\n\1\2', source)
        flag = "VERBOSE_CHECKS = None\n\n" if index == 0 else ""
        helper = (f"\n\nUNUSED_LIMIT_{index} = {index + 7}\n\n\ndef spare_helper_{index}(tensor, factor=2):\n"
                  f"    doubled = tensor * factor\n    return doubled.sum(dim=-1) + {index}\n")
        return flag + source + helper + '\nprint("cell finished")\n'
    return [(name, one(index, source)) for index, (name, source) in enumerate(blocks)]


def swap_reshape(blocks: Blocks, graded: set[str]) -> Blocks:
    """`reshape` for `view` and the other way round."""
    def one(source: str) -> str:
        return source.replace(".view(", ".\0(").replace(".reshape(", ".view(").replace(".\0(", ".reshape(")
    return [(name, one(source)) for name, source in blocks]


class _Inline(ast.NodeTransformer):
    def __init__(self, helpers):
        self.helpers = helpers

    def visit_Call(self, node):
        self.generic_visit(node)
        helper = self.helpers.get(getattr(node.func, "id", None))
        if helper is None:
            return node
        bound = {a.arg: value for a, value in zip(helper.args.args, node.args)}

        class Bind(ast.NodeTransformer):
            def visit_Name(self, name):
                return copy.deepcopy(bound.get(name.id, name))

        return Bind().visit(copy.deepcopy(helper.body[-1].value))


def inline(blocks: Blocks, graded: set[str]) -> Blocks:
    """Every helper that returns one expression written out where it is called, its definition gone."""
    trees = [(name, ast.parse(source)) for name, source in blocks]
    helpers = {node.name: node for _, tree in trees for node in tree.body
               if isinstance(node, ast.FunctionDef) and node.name not in graded
               and isinstance(node.body[-1], ast.Return) and len(node.body) == 1}
    if not helpers:
        return blocks
    out = []
    for name, tree in trees:
        tree.body = [node for node in tree.body if getattr(node, "name", None) not in helpers]
        out.append((name, ast.unparse(ast.fix_missing_locations(_Inline(helpers).visit(tree)))))
    return out


DISGUISES = {"rename": rename, "reformat": reformat, "comments": recomment, "reorder": reorder, "dead code": pad,
             "reshape": swap_reshape, "inline": inline}


def combined(blocks: Blocks, graded: set[str]) -> Blocks:
    for disguise in (inline, rename, swap_reshape, recomment, pad, reorder, reformat):
        blocks = disguise(blocks, graded)
    return blocks
