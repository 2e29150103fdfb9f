"""The lines of the grader's screen that the students' README quotes are the lines the grader prints,
in the README's language (course/builder/quoted.py fills them from the grader's catalogues)."""
from __future__ import annotations

import ast

import nbformat
import pytest

from autograder import i18n
from autograder.i18n import _f
from autograder.i18n import catalogues as grader_catalogues
from course.builder import layout
from course.builder.layout import BuildError
from course.builder.quoted import QUOTED, STAND_IN_EXAMPLE, said, stand_in_unit
from course.builder.specs import common_setup

ROOT = layout.ROOT
READMES = {"en": "student_template/README.md", "zh": "student_template/zh/README.md"}


def printed(message: tuple[str, dict]) -> str:
    """`message` as the grader's own runtime words it in the current language (its compiled catalogues)."""
    msgid, fields = message
    return _f(msgid, **{name: printed(value) if isinstance(value, tuple) else value for name, value in fields.items()})


def screen_lines(lang: str) -> dict[str, str]:
    i18n.set_language(lang)
    try:
        return {name: printed(message) for name, message in QUOTED.items()}
    finally:
        i18n.set_language("en")


def test_every_quoted_message_is_one_the_grader_s_code_has():
    code = {message.id for area in grader_catalogues.AREAS for message in grader_catalogues.template(area)}
    missing = [msgid for msgid, fields in QUOTED.values() if msgid not in code]
    nested = [value[0] for _, fields in QUOTED.values() for value in fields.values() if isinstance(value, tuple)]
    assert missing + [msgid for msgid in nested if msgid not in code] == []


@pytest.mark.parametrize("lang", sorted(READMES))
def test_the_readme_quotes_each_line_as_the_grader_prints_it_in_its_language(lang):
    readme = (ROOT / READMES[lang]).read_text(encoding="utf-8")
    lines = screen_lines(lang)
    assert [name for name, line in lines.items() if f"`{line}`" not in readme] == []


def test_the_chinese_readme_quotes_no_english_screen_line():
    readme = (ROOT / READMES["zh"]).read_text(encoding="utf-8")
    english, chinese = screen_lines("en"), screen_lines("zh")
    left = [line for name, line in english.items() if line != chinese[name] and line in readme]
    assert left == []
    for fragment in ("`ok  ", "`Hint:`", "not implemented yet", "`self-check: "):
        assert fragment not in readme


def test_a_quote_of_a_message_the_grader_does_not_have_stops_the_build():
    words = {"ok  {title}": "通过  {title}"}
    assert said(("ok  {title}", {"title": "..."}), words) == "通过  ..."
    with pytest.raises(BuildError, match="does not have"):
        said(("okay  {title}", {"title": "..."}), words)


def printed_templates(source: str) -> list[str]:
    """The one-line string each print() call of `source` shows first, in the order of the code (any language)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "print" and node.args:
            segment = ast.get_source_segment(source, node.args[0]) or ""
            found.append(segment.removeprefix("f")[1:-1])
    return found


@pytest.mark.parametrize("lang, notebook", [("en", "student_template/01_scores.ipynb"),
                                            ("zh", "student_template/zh/01_scores.ipynb")])
def test_the_readme_quotes_the_stand_in_check_line_as_the_notebook_prints_it(lang, notebook):
    """Without the self-check installed a check cell prints the setup cell's stand-in line: the README
    quotes that line in the notebooks' own words."""
    english = printed_templates(common_setup())
    setup = next(c for c in nbformat.read(ROOT / notebook, as_version=4).cells if c.id == "setup")
    label = printed_templates(setup.source)[english.index(stand_in_unit().text)]
    readme = (ROOT / READMES[lang]).read_text(encoding="utf-8")
    assert f"`{label.format(**STAND_IN_EXAMPLE)}`" in readme
