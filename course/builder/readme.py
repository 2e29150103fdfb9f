"""Write the students' README from its source (course/student_readme.md): the list of notebooks,
the torch releases the self-check accepts and the grader's lines it quotes (course/builder/quoted.py)
have one home each, and are filled in here."""
from __future__ import annotations

import re
import textwrap
from pathlib import Path

from autograder.core.sections import SECTIONS, Section
from autograder.instructor import selfcheck_export
from course.builder.layout import README_SOURCE, ROOT, BuildError
from course.builder.quoted import quoted_values, stand_in_line


# The words of the table, each a unit the translators see (course/localized.py's table_messages)
TABLE_WORDS = ("{core} notebooks, one per section, to work through in order{more}:", ", and {bonus} bonus",
               "| notebook | section | you implement |", " (bonus)", ", ")  # the last: between two names


# The note under the title of a README that comes with one section (course/localized.py translates it)
SECTION_NOTE = (
    "This folder holds one section of the course, `{notebook}` ({title}), released on its own: each "
    "section comes with this README and the self-check in `grader/`. Install once (below), then check "
    "this notebook alone, in this folder with the environment activated: "
    "`python -m autograder check --section {section}`."
)


def notebook_table(sections: tuple[Section, ...] = SECTIONS, words=lambda text: text, title=lambda s: s.title) -> str:
    """The students' list of notebooks, from the registry: a new section appears in it by itself.
    `words` and `title` give the table's words and a section's title in the README's language."""
    intro, bonus, header, bonus_mark, between = (words(text) for text in TABLE_WORDS)
    core = [s for s in sections if not s.bonus]
    more = bonus.format(bonus=len(sections) - len(core)) if len(core) < len(sections) else ""
    lines = [intro.format(core=len(core), more=more), "", header, "|---|---|---|"]
    for s in sections:
        names = between.join(f"`{name}`" for name in s.names)
        lines.append(f"| `{s.notebook}` | {title(s)}{bonus_mark if s.bonus else ''} | {names} |")
    return "\n".join(lines)


def student_readme(root: Path = ROOT) -> str:
    """The students' README: its source with the notebooks and the self-check's torch releases filled in."""
    path = root / README_SOURCE
    if not path.is_file():
        raise BuildError(f"{path}: missing students' README source")
    values = {
        "notebooks": notebook_table(),
        "torch_pin": selfcheck_export.torch_tested()[0],  # the course's own release, what students install
        "torch_range": selfcheck_export.torch_range(),
        "torch_tested": " and ".join(selfcheck_export.torch_tested()),
        **quoted_values(None),  # the lines of the grader's screen it quotes (the grader's own words)
        "stand_in": stand_in_line(),  # a check cell's line where the checks are not installed
    }
    text = path.read_text(encoding="utf-8")
    unknown = sorted(set(re.findall(r"\{\{(\w*)\}\}", text)) - set(values))
    if unknown:
        raise BuildError(f"{path}: unknown placeholder(s) {unknown}; known: {sorted(values)}")
    for name, value in values.items():
        text = text.replace("{{" + name + "}}", value)
    return text


def section_readme(section: Section, root: Path = ROOT) -> str:
    """The students' README as it comes with one section released through nbgrader's exchange:
    a note under its title says that this folder is one section and how to check it alone."""
    title, _, rest = student_readme(root).partition("\n")
    note = SECTION_NOTE.format(notebook=section.notebook, title=section.title, section=section.id)
    return f"{title}\n\n" + "\n".join(textwrap.wrap(note, 78)) + "\n" + rest
