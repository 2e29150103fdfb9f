"""The lines of the grader's screen that the students' README quotes are the lines the grader prints,
in the README's language (course/builder/quoted.py fills them from the grader's catalogues)."""
from __future__ import annotations

import pytest

from autograder import i18n
from autograder.i18n import _f
from autograder.i18n import catalogues as grader_catalogues
from course.builder import layout
from course.builder.layout import BuildError
from course.builder.quoted import QUOTED, said

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
