"""The section's rules (autograder/core/rules.py) written where the student reads them: its forbidden APIs and
its other rules in brief at the end of the notebook's first cell, and at the end of the task cell (the
Markdown cell right above the solution cell) of each name a rule binds, what it may not call and the list of
the rules its checks hold it to.

The English source notebook carries them as the build writes it; another language's notebook is translated
without them (the catalogue of notebook prose never holds a rule: it is the grader's message, translated in
the grader's catalogue) and gets them back in its own words (course/localized.py), so a rule is said once,
as data, and reads the same in every language.
"""
from __future__ import annotations

import copy

import nbformat

from autograder.core.rules import english, name_rule, name_rules, section_rule, section_rules
from autograder.core.sections import Section
from course.builder.layout import BuildError


def task_cells(nb: nbformat.NotebookNode, section: Section) -> dict[str, int]:
    """graded name -> the index of its task cell: the Markdown cell nearest above its solution cell."""
    found = {}
    for index, cell in enumerate(nb.cells):
        meta = cell.metadata.get("nbgrader", {})
        name = meta.get("grade_id")
        if meta.get("solution") and name in section.names:
            above = [i for i in range(index) if nb.cells[i].cell_type == "markdown"]
            if not above:
                raise BuildError(f"{section.id}: no Markdown cell above the solution cell of {name}")
            found[name] = above[-1]
    return found


def paragraphs(nb: nbformat.NotebookNode, section: Section, say) -> dict[int, list[str]]:
    """cell index -> the rule paragraphs that cell ends with, in `say`'s language."""
    out: dict[int, list[str]] = {}
    first = [text for text in (section_rule(section, say), section_rules(section, say)) if text]
    if first:
        if not nb.cells or nb.cells[0].cell_type != "markdown":
            raise BuildError(f"{section.id}: the notebook's first cell is not Markdown; its rules have no place")
        out.setdefault(0, []).extend(first)
    for name, index in task_cells(nb, section).items():
        rules = [text for text in (name_rule(section, name, say), name_rules(section, name, say)) if text]
        if rules:
            out.setdefault(index, []).extend(rules)
    return out


def stated(nb: nbformat.NotebookNode, section: Section, say=english) -> nbformat.NotebookNode:
    """A copy of `nb` whose first cell and task cells end with the section's rules in `say`'s language."""
    nb = copy.deepcopy(nb)
    for index, rules in paragraphs(nb, section, say).items():
        cell = nb.cells[index]
        cell.source = "\n\n".join([cell.source.rstrip("\n"), *rules])
    return nb


def unstated(nb: nbformat.NotebookNode, section: Section) -> nbformat.NotebookNode:
    """A copy of the English `nb` without the rules `stated` wrote: the prose a translator translates."""
    nb = copy.deepcopy(nb)
    for index, rules in paragraphs(nb, section, english).items():
        cell = nb.cells[index]
        ending = "\n\n" + "\n\n".join(rules)
        if not cell.source.endswith(ending):
            raise BuildError(f"{section.id}: cell {cell.get('id', index)} does not end with its rules {rules}")
        cell.source = cell.source[:-len(ending)]
    return nb
