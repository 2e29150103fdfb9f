"""One translation of every section's title: the grader's (core.po), shown by the reports and the check
lines, is the one the Chinese notebooks' headings, the README's table and the section READMEs show too."""
from __future__ import annotations

import nbformat
import pytest

from autograder.core.sections import SECTIONS
from autograder.i18n import _
from course import catalogue, localized
from course.builder import layout

ROOT = layout.ROOT
BUILT = [s for s in SECTIONS if (ROOT / layout.SOURCE_NB.format(id=s.id)).is_file()]


def chinese_titles() -> dict[str, str]:
    """section id -> its title as the grader shows it in Chinese."""
    from autograder import i18n
    i18n.set_language("zh")
    try:
        return {s.id: _(s.title) for s in BUILT}
    finally:
        i18n.set_language("en")


def first_line(rel: str) -> str:
    return nbformat.read(ROOT / rel, as_version=4).cells[0].source.split("\n")[0]


def test_the_notebooks_catalogue_has_no_title_of_its_own():
    cat = catalogue.Catalogue("zh_CN")
    contexts = {message.context for message in cat.catalog if message.id}
    assert "sections" not in contexts
    headings = [m.context for m in cat.catalog if isinstance(m.id, str)
                for s in BUILT if m.id.startswith(localized.title_heading(s, s.title))]
    assert headings == [], "a notebook's title heading is translated in notebooks.po"


@pytest.mark.parametrize("section", BUILT, ids=[s.id for s in BUILT])
def test_every_chinese_title_is_the_graders(section):
    title = chinese_titles()[section.id]
    assert title != section.title, "core.po translates the title"
    english_heading = first_line(layout.SOURCE_NB.format(id=section.id))
    for rel in (f"assignments/zh/source/{section.id}/{section.id}.ipynb", f"student_template/zh/{section.id}.ipynb"):
        if english_heading == localized.title_heading(section, section.title):
            assert first_line(rel) == localized.title_heading(section, title), rel
    readme = (ROOT / "student_template/zh/README.md").read_text(encoding="utf-8")
    assert f"| `{section.notebook}` | {title}" in readme
    note = (ROOT / f"assignments/zh/source/{section.id}/README.md").read_text(encoding="utf-8")
    assert f"`{section.notebook}`（{title}）" in note


def test_the_build_takes_the_title_from_the_grader(tmp_path):
    """A title translated anew in the grader's catalogue is the one the notebook and the README show."""
    section = BUILT[1]
    core = ROOT / localized.GRADER_CATALOGUES / "zh_CN/LC_MESSAGES/core.po"
    text = core.read_text(encoding="utf-8").replace(
        f'msgstr "{chinese_titles()[section.id]}"', 'msgstr "新的标题"', 1)
    folder = tmp_path / localized.GRADER_CATALOGUES / "zh_CN/LC_MESSAGES"
    folder.mkdir(parents=True)
    (folder / "core.po").write_text(text, encoding="utf-8")
    cat = catalogue.Catalogue("zh_CN")
    assert localized.section_title(section, cat, tmp_path) == "新的标题"
    assert f"| `{section.notebook}` | 新的标题" in localized.translated_table(cat, root=tmp_path)
    english = localized.english_sources()[section.id]
    translated = localized.translated_notebook(english, section.id, cat, "zh", tmp_path)
    assert translated.cells[0].source.split("\n")[0] == localized.title_heading(section, "新的标题")
