"""The plotting helper's words, and its copy in another language of the course.

course/attention_plots.py writes every word it prints as `_said("...")` and every word it draws
as `_drawn("...")`; its module-level `LANGUAGE = "en"` and `WORDS: dict[str, str] = {}` say the
copy's language and its words. The English words are read from those calls (the file's syntax
tree, as gettext's extractors read source), translated like the notebooks' prose, and a
translated copy is the same file with those two assignments written for its language: its code
is the English copy's, line for line.
"""
from __future__ import annotations

import ast
import re

from course.builder.layout import HELPER, BuildError

WORD_FUNCTIONS = ("_said", "_drawn")
SETTINGS = ("LANGUAGE", "WORDS")  # the assignments a translated copy writes anew
FIELD = re.compile(r"\{\w*\}")


def _tree(text: str) -> ast.Module:
    try:
        return ast.parse(text)
    except SyntaxError as error:
        raise BuildError(f"{HELPER}:{error.lineno}: {error.msg}") from None


def english_words(text: str) -> list[str]:
    """The helper's words, in the order they are written, each once."""
    calls = sorted((node for node in ast.walk(_tree(text)) if isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name) and node.func.id in WORD_FUNCTIONS),
                   key=lambda node: (node.lineno, node.col_offset))
    words: list[str] = []
    for node in calls:
        if not (len(node.args) == 1 and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            raise BuildError(f"{HELPER}:{node.lineno}: {node.func.id}() takes one string written out, "
                             "so that it can be translated")
        if node.args[0].value not in words:
            words.append(node.args[0].value)
    return words


def _setting_lines(tree: ast.Module) -> dict[str, tuple[int, int]]:
    """Each of SETTINGS -> the lines (first, last; 1-based) of its module-level assignment."""
    found = {}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        for target in targets:
            if isinstance(target, ast.Name) and target.id in SETTINGS:
                if target.id in found:
                    raise BuildError(f"{HELPER}:{node.lineno}: {target.id} is assigned twice")
                found[target.id] = (node.lineno, node.end_lineno)
    missing = [name for name in SETTINGS if name not in found]
    if missing:
        raise BuildError(f"{HELPER}: no module-level assignment of {', '.join(missing)}")
    return found


def translated_helper(text: str, language: str, translate) -> str:
    """The helper in `language`: `translate(english)` gives each word's translation, which must keep
    the word's {fields}."""
    words = {}
    for english in english_words(text):
        local = translate(english)
        if sorted(FIELD.findall(local)) != sorted(FIELD.findall(english)):
            raise BuildError(f"{HELPER}: the translation of {english!r} must keep {FIELD.findall(english)}")
        words[english] = local
    lines = text.split("\n")
    written = {"LANGUAGE": [f"LANGUAGE = {language!r}"],
               "WORDS": ["WORDS: dict[str, str] = {"] + [f"    {k!r}: {v!r}," for k, v in words.items()] + ["}"]}
    spans = sorted(_setting_lines(_tree(text)).items(), key=lambda item: item[1], reverse=True)
    for name, (first, last) in spans:  # from the bottom, so that the lines above stay in place
        lines[first - 1:last] = written[name]
    return "\n".join(lines)
