"""The rules a section's checks enforce besides the values, in the words the notebooks state them.

A section declares what its graded names may not call (SECTION's "forbidden" and "forbidden_in",
core/sections.py): the worker refuses those calls and every check of the name that makes one fails. The
course build writes the same rule, from the same data, into the section's first cell and into the task
cell of each name it binds (course/builder/stated_rules.py), in every language, so that no rule the grader
enforces goes unsaid where the student writes. The words are the grader's messages, translated in its
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


def english(template: str, **fields) -> str:
    """`say` for English: the template itself, its fields filled."""
    return template.format(**fields)
