"""Every rule the grader enforces besides the values is stated where the student writes, in every language.

A section's forbidden APIs (SECTION's "forbidden" and "forbidden_in", the data the worker's watch is given:
core/student.py, worker/serve.py) fail every check of the name that calls one. The released notebooks, English
and Chinese, must name each such API in the task cell of each name it binds (the Markdown cell right above
the name's solution cell) and in the notebook's first cell; a Chinese notebook says it in Chinese. And a
check cell says a forbidden API once, not once per check (autograder/notebook.py's cell_verdict).

The other rules (SECTION's "rules": arguments left unchanged, no Python loop, parameter order, device, dtype,
the mask convention) likewise: every check that enforces one (found in the checks' code by
core/rules.ENFORCED_BY: the helper it calls, or its title) must be about a name its section declares the rule
for, every declared rule must have a check that enforces it, and the released notebooks state each declared
rule, in the reader's language, in the task cell of each name it binds and in brief in the first cell.
"""
from __future__ import annotations

import ast
import functools
import importlib
import json
import re
from pathlib import Path

import pytest
from support import ROOT

from autograder.core import rules
from autograder.core.sections import CHECKS_DIR, RULE_IDS, SECTIONS, BY_ID, home, section_of_module
from autograder.i18n import fill
from course.builder.layout import LANGUAGES
from course.builder.quoted import grader_translations

RELEASED = {"en": ROOT / "student_template", **{lang: ROOT / "student_template" / lang for lang in LANGUAGES}}
BINDING = [section for section in SECTIONS if section.forbidden and section.forbidden_in]
# how each language says "not allowed" (the rule's words, autograder/core/rules.py, as its catalogue has them)
NOT_ALLOWED = {"en": "Not allowed", "zh": "不允许"}


@functools.cache
def released(lang: str, section) -> list[dict]:
    return json.loads((RELEASED[lang] / section.notebook).read_text(encoding="utf-8"))["cells"]


def task_cell(cells: list[dict], name: str) -> str:
    """The Markdown right above `name`'s solution cell: where the student reads the task before writing it."""
    index = next(i for i, cell in enumerate(cells)
                 if cell.get("metadata", {}).get("nbgrader", {}).get("solution")
                 and cell["metadata"]["nbgrader"].get("grade_id") == name)
    markdown = [cell for cell in cells[:index] if cell["cell_type"] == "markdown"]
    return "".join(markdown[-1]["source"])


def test_some_section_binds_a_rule():
    assert BINDING, "no section forbids an API: the tests below would hold nothing"


@pytest.mark.parametrize("lang", list(RELEASED))
@pytest.mark.parametrize("section", BINDING, ids=lambda s: s.id)
def test_each_forbidden_api_is_stated_in_the_task_of_each_name_it_binds(section, lang):
    cells = released(lang, section)
    unstated = {name: [api for api in section.forbidden if f"`{api}`" not in task_cell(cells, name)]
                for name in section.forbidden_in}
    unstated = {name: apis for name, apis in unstated.items() if apis}
    assert not unstated, f"{lang} {section.id}: the checks forbid, and the task cells do not say: {unstated}"
    unsaid = [name for name in section.forbidden_in if NOT_ALLOWED[lang] not in task_cell(cells, name)]
    assert not unsaid, f"{lang} {section.id}: the task cells of {unsaid} do not say the rule in their language"


@pytest.mark.parametrize("lang", list(RELEASED))
@pytest.mark.parametrize("section", BINDING, ids=lambda s: s.id)
def test_the_first_cell_states_what_the_section_forbids_and_where(section, lang):
    first = "".join(released(lang, section)[0]["source"])
    missing = [item for item in (*section.forbidden, *section.forbidden_in) if f"`{item}`" not in first]
    assert not missing, f"{lang} {section.id}: the first cell does not name {missing}"
    assert NOT_ALLOWED[lang] in first


@pytest.mark.parametrize("lang", list(RELEASED))
@pytest.mark.parametrize("section", [s for s in SECTIONS if s not in BINDING], ids=lambda s: s.id)
def test_a_section_that_forbids_nothing_says_no_rule(section, lang):
    text = "".join("".join(cell["source"]) for cell in released(lang, section) if cell["cell_type"] == "markdown")
    assert f"**{NOT_ALLOWED[lang]}" not in text


def test_a_forbidden_api_is_one_line_of_its_cell():
    from autograder.notebook import cell_verdict

    line = "CausalAttention uses torch.nn.functional.scaled_dot_product_attention, which this section forbids"
    outcomes = [("causality", line, "forbidden"), ("batch items apart", line.replace("uses", "calls"), "forbidden"),
                ("dropout in eval mode", line, "forbidden"), ("the documented output", "wrong value", "check")]
    assert cell_verdict(outcomes).split("\n") == [line, "the documented output: wrong value"]


def test_an_error_raised_in_several_checks_of_a_cell_is_said_once():
    """One error of the student's code (a float head_dim fails every call of the class) under the first check
    that met it, with its hint; the other checks it failed named in one line after it, not the error again."""
    from autograder.notebook import cell_verdict

    error = ("MultiHeadAttention.forward raised TypeError: view(): ... but got float (the cell ..., line 9: ...). "
             "A size given as a float: compute head_dim = d_out // num_heads")
    outcomes = [("the documented output", error, "raised"), ("causality", error, "raised"),
                ("qkv_bias honoured", "MultiHeadAttention(...): wrong value", "check"),
                ("batch items apart", error, "raised"), ("no Python loop", error.replace("TypeError", "ValueError"),
                                                         "raised")]
    lines = cell_verdict(outcomes).split("\n")
    assert lines[0] == f"the documented output: {error}"
    assert sum(error in line for line in lines) == 1, lines
    assert "causality" in lines[1] and "batch items apart" in lines[1] and "same error" in lines[1], lines
    assert lines[2:] == ["qkv_bias honoured: MultiHeadAttention(...): wrong value",
                         f"no Python loop: {error.replace('TypeError', 'ValueError')}"]


# ---------------------------------------------------------------- the other rules (SECTION's "rules")

def calls_of(function: ast.FunctionDef) -> tuple[set[str], bool]:
    """The names `function` calls (a plain name or an attribute's last part), and whether it runs anything on
    the meta device (a call with device="meta": a check of where tensors are made)."""
    names, on_meta = set(), False
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            names.add(node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", ""))
            on_meta |= any(kw.arg == "device" and isinstance(kw.value, ast.Constant) and kw.value.value == "meta"
                           for kw in node.keywords)
    return names, on_meta


def is_check(function: ast.FunctionDef) -> bool:
    return any(isinstance(d, ast.Call) and getattr(d.func, "id", "") == "check" for d in function.decorator_list)


def enforcement_sites(checks_dir: Path = CHECKS_DIR) -> list[tuple[str, str, str, str]]:
    """(section id, check function, rule id, graded name) for every check, visible or hidden, that enforces a
    rule besides the values: it calls one of the rule's helpers (core/rules.ENFORCED_BY) or a function of
    checks/ that does, runs the student's code on the meta device ("device"), or its title says the rule."""
    checks, helpers, on_meta = [], {}, set()
    for path in sorted(checks_dir.rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef):
                names, meta = calls_of(node)
                if is_check(node):
                    checks.append((path, node.name, names, meta))
                else:
                    helpers.setdefault(node.name, set()).update(names)
                    on_meta |= {node.name} if meta else set()
    enforcers = {rule: set(words["helpers"]) | (on_meta if rule == "device" else set())
                 for rule, words in rules.ENFORCED_BY.items()}
    for found in enforcers.values():  # a helper that calls an enforcing helper enforces too
        while grown := {name for name, called in helpers.items() if name not in found and called & found}:
            found |= grown
    sites = []
    for path, function, names, meta in checks:
        module = ".".join(("autograder", *path.relative_to(checks_dir.parent).with_suffix("").parts))
        section = BY_ID[section_of_module(module)]
        grading = getattr(importlib.import_module(module), function).grading
        for rule, words in rules.ENFORCED_BY.items():
            if names & enforcers[rule] or (rule == "device" and meta) or re.search(words["title"], grading["title"]):
                sites.append((section.id, function, rule, home(grading, section)))
    return sites


SITES = enforcement_sites()


def test_the_rules_are_found_in_the_checks():
    """The finder finds each kind of rule somewhere: a finder that found nothing would pass every test below."""
    assert {rule for _, _, rule, _ in SITES} == set(RULE_IDS) == set(rules.ENFORCED_BY) == set(rules.RULE_WORDS)


def test_a_check_enforces_only_a_rule_its_section_declares_for_its_name():
    undeclared = [f"{sid}: {function} holds {name} to {rule!r}" for sid, function, rule, name in SITES
                  if rule not in BY_ID[sid].rules_of(name)]
    assert not undeclared, ("checks enforce rules that their section's SECTION['rules'] does not declare for the "
                            "name, so no notebook states them:\n" + "\n".join(undeclared))


def test_every_declared_rule_has_a_check_that_enforces_it():
    enforced = {(sid, rule, name) for sid, _, rule, name in SITES}
    unenforced = [f"{section.id}: {rule} {names}" for section in SECTIONS for rule, names in section.rules
                  if not any((section.id, rule, name) in enforced for name in names)]
    assert not unenforced, f"rules declared that no check enforces (a notebook would state them in vain): {unenforced}"


@functools.cache
def words_in(lang: str):
    """say(template, **fields) in `lang`, as the build says the rules (the grader's catalogues)."""
    if lang == "en":
        return rules.english
    words = grader_translations(LANGUAGES[lang])
    return lambda template, **fields: fill(words[template], fields)


@pytest.mark.parametrize("lang", list(RELEASED))
@pytest.mark.parametrize("site", SITES, ids=lambda site: "-".join(site))
def test_each_enforced_rule_is_stated_in_the_task_of_its_name(site, lang):
    sid, function, rule, name = site
    section, say = BY_ID[sid], words_in(lang)
    task = task_cell(released(lang, section), name)
    assert say(rules.NAME_RULES, name=name) in task, f"{lang} {sid}: the task cell of {name} has no list of its rules"
    assert f"- {say(rules.RULE_WORDS[rule])}" in task, \
        f"{lang} {sid}: {function} holds {name} to {rule!r}, which its task cell does not state"


@pytest.mark.parametrize("lang", list(RELEASED))
@pytest.mark.parametrize("section", [s for s in SECTIONS if s.rules], ids=lambda s: s.id)
def test_the_first_cell_states_the_rules_in_brief(section, lang):
    first = "".join(released(lang, section)[0]["source"])
    assert rules.section_rules(section, words_in(lang)) in first, \
        f"{lang} {section.id}: the first cell does not say its rules in brief"
