"""Every rule the grader enforces besides the values is stated where the student writes, in every language.

A section's forbidden APIs (SECTION's "forbidden" and "forbidden_in", the data the worker's watch is given:
core/student.py, worker/serve.py) fail every check of the name that calls one. The released notebooks, English
and Chinese, must name each such API in the task cell of each name it binds (the Markdown cell right above
the name's solution cell) and in the notebook's first cell; a Chinese notebook says it in Chinese. And a
check cell says a forbidden API once, not once per check (autograder/notebook.py's cell_verdict).
"""
from __future__ import annotations

import json

import pytest
from support import ROOT

from autograder.core.sections import SECTIONS
from course.builder.layout import LANGUAGES

RELEASED = {"en": ROOT / "student_template", **{lang: ROOT / "student_template" / lang for lang in LANGUAGES}}
BINDING = [section for section in SECTIONS if section.forbidden and section.forbidden_in]
# how each language says "not allowed" (the rule's words, autograder/core/rules.py, as its catalogue has them)
NOT_ALLOWED = {"en": "Not allowed", "zh": "不允许"}


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
