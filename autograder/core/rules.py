"""The rules a section's checks enforce besides the values, in the words the notebooks state them.

A section declares what its graded names may not call (SECTION's "forbidden" and "forbidden_in",
core/sections.py): the worker refuses those calls and every check of the name that makes one fails. It
declares the other rules its checks hold a name to the same way (SECTION's "rules": a rule id of
sections.RULE_IDS -> the graded names it binds): arguments left unchanged, no Python loop, parameters in the
documented order, any device, the dtype, the mask convention. ENFORCED_BY says which check helpers and
which check titles enforce each rule, so that tests/test_rules_stated.py finds every check that enforces one
and fails where its name's section does not declare it. The course build writes each rule, from the same
data, into the section's first cell and into the task cell of each name it binds
(course/builder/stated_rules.py), in every language, so that no rule the grader enforces goes unsaid where
the student writes. The words are the grader's messages, translated in its
catalogues like every other line it shows (docs/translating-the-grader.md).
"""
from __future__ import annotations

from autograder.core.sections import Section
from autograder.i18n import N_

# i18n: a paragraph of a notebook's first cell (Markdown). {apis} and {names} are code in backquotes, with commas
SECTION_RULE = N_("**Not allowed in this notebook:** {apis} inside {names}. The point is to write that computation "
                  "yourself: a name that calls one of them fails its own checks (one line in its check cell), and the "
                  "other names' checks still run.")
# i18n: a paragraph of a task's Markdown cell, under "Your task: `name(...)`". {apis} is code in backquotes, with commas
NAME_RULE = N_("**Not allowed in `{name}`:** {apis}. Write the computation yourself: calling one of them fails "
               "every check of `{name}`.")


# i18n: the join of a list of code names in a rule's paragraph: the list so far, then one more name
LIST_JOIN = N_("{items}, {item}")


def code_list(items, say) -> str:
    """`a`, `b`, `c`: code names as Markdown code, in the order given, joined as the reader's language joins them."""
    quoted = [f"`{item}`" for item in items]
    joined = quoted[0]
    for item in quoted[1:]:
        joined = say(LIST_JOIN, items=joined, item=item)
    return joined


def section_rule(section: Section, say) -> str:
    """The paragraph of the section's first cell that states what it forbids, "" for a section that forbids
    nothing. say(template, **fields): the template in the reader's language, its fields filled."""
    if not (section.forbidden and section.forbidden_in):
        return ""
    return say(SECTION_RULE, apis=code_list(section.forbidden, say),
               names=code_list(section.forbidden_in, say))


def name_rule(section: Section, name: str, say) -> str:
    """The paragraph of `name`'s task cell that states what it may not call, "" where it may call anything."""
    if not section.forbidden or name not in section.forbidden_in:
        return ""
    return say(NAME_RULE, name=name, apis=code_list(section.forbidden, say))


# The checks that enforce each rule, as the checks' code shows them: a check that calls one of `helpers` (or a
# function of checks/ that does, or any call on the meta device for "device"), or whose title matches `title`
# (a regular expression), enforces the rule on its graded name (sections.home). tests/test_rules_stated.py reads it.
ENFORCED_BY = {
    "unchanged": {"helpers": ("expect_unchanged",),
                  "title": r"leaves? (its (arguments?|inputs?)|their inputs?|x) unchanged"},
    "no_loop": {"helpers": ("expect_no_loop",), "title": r"no Python loop"},
    "param_order": {"helpers": ("expect_same_params",), "title": r"in the documented order|created in order"},
    "device": {"helpers": ("run_where_made",), "title": r"any device|on (its|the) device|input's device"},
    "input_dtype": {"helpers": (), "title": r"input's dtype"},
    "float32": {"helpers": (), "title": r"float32"},
    "mask_true_hidden": {"helpers": (), "title": r"bool, True|where it is True|\bhides?\b"},
}

# i18n: one item of a list under "What the checks of `name` also hold it to" in a task's Markdown cell: a rule
# its checks enforce besides the values, said to the student (imperative)
RULE_WORDS = {
    "unchanged": N_("Leave the tensors you are given unchanged: no in-place operation on an argument "
                    "(`masked_fill`, not `masked_fill_`; `x = x * 2`, not `x *= 2`)."),
    "no_loop": N_("No Python loop over the tokens, positions or heads: compute them all at once with tensor "
                  "operations (the checks count the operations at two sizes)."),
    "param_order": N_("Create the parameters in the documented order and set no seed inside `__init__`: after the "
                      "caller's `torch.manual_seed(...)`, that order alone gives the notebook's weights."),
    "device": N_("Work on any device: make every new tensor on the input's device (`device=x.device`, or a "
                 "registered buffer), never on the CPU by default."),
    "input_dtype": N_("Answer in the input's dtype: float64 inputs give a float64 result (make no tensor of "
                      "another dtype)."),
    "float32": N_("Return `torch.float32` tensors, whatever the types of the arguments."),
    "mask_true_hidden": N_("A mask is a boolean tensor whose `True` means hidden (that key may not be looked at) "
                           "and `False` visible."),
}
# i18n: a rule in brief, in the list of a notebook's first cell: "…besides the values: {rule} ({names}); …"
RULE_BRIEF = {
    "unchanged": N_("arguments left unchanged"),
    "no_loop": N_("no Python loop"),
    "param_order": N_("parameters created in the documented order, no seed inside `__init__`"),
    "device": N_("new tensors on the input's device"),
    "input_dtype": N_("results in the input's dtype"),
    "float32": N_("`torch.float32` results"),
    "mask_true_hidden": N_("masks whose `True` means hidden"),
}
# i18n: the head of a list in a task's Markdown cell; the list's items follow, one per line, each after "- "
NAME_RULES = N_("**What the checks of `{name}` also hold it to,** besides its values:")
# i18n: a paragraph of a notebook's first cell (Markdown). {rules}: rules in brief, each with its names, joined by "; "
SECTION_RULES = N_("**What the checks hold this notebook's code to,** besides the values: {rules}.")
# i18n: a rule in brief, then the graded names it binds (code in backquotes, with commas)
RULE_AND_NAMES = N_("{rule} ({names})")
RULES_JOIN = N_("; ")


def name_rules(section: Section, name: str, say) -> str:
    """The list of `name`'s task cell that states the rules its checks enforce besides the values (SECTION's
    "rules"), "" where none binds it."""
    rules = section.rules_of(name)
    if not rules:
        return ""
    return "\n".join([say(NAME_RULES, name=name), *(f"- {say(RULE_WORDS[rule])}" for rule in rules)])


def section_rules(section: Section, say) -> str:
    """The paragraph of the section's first cell that says its rules in brief, each with the names it binds,
    "" for a section that declares none."""
    if not section.rules:
        return ""
    joined = say(RULES_JOIN).join(say(RULE_AND_NAMES, rule=say(RULE_BRIEF[rule]), names=code_list(names, say))
                                  for rule, names in section.rules)
    return say(SECTION_RULES, rules=joined)


def english(template: str, **fields) -> str:
    """`say` for English: the template itself, its fields filled."""
    return template.format(**fields)
