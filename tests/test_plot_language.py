"""The Chinese notebooks' pictures are Chinese: the plotting helper's copy in the language, its font,
and the words the demo cells give it."""
from __future__ import annotations

import ast
import importlib.util
import re
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display: the helper must only draw

import nbformat
import pytest
import torch
from matplotlib import font_manager
from matplotlib.ft2font import FT2Font

from course import catalogue, localized
from course.builder import layout
from course.builder.helper_words import english_words, translated_helper
from course.builder.layout import BuildError

ROOT = Path(__file__).resolve().parents[1]
CJK = re.compile(r"[\u4e00-\u9fff]")
TITLE = "你的注意力权重"


def load_helper(tmp_path: Path, text: str):
    """A copy of the helper, as a module of its own (its font state fresh)."""
    path = tmp_path / "attention_plots.py"
    path.write_text(text, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"plots_{tmp_path.name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def chinese_helper(tmp_path):
    """The Chinese copy of the helper, made from the catalogue as the build makes it."""
    cat = catalogue.Catalogue(layout.LANGUAGES["zh"], ROOT)
    return load_helper(tmp_path, localized.language_helper(layout.helper_text(ROOT), "zh", cat))


def draw(helper, title: str = TITLE) -> list[str]:
    """Draw a 6 x 6 weight matrix with `title`; the warnings matplotlib gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        helper.show_weights(torch.softmax(torch.randn(6, 6), dim=-1), title=title)
    return [str(warning.message) for warning in caught]


def test_the_chinese_copy_has_every_word_of_the_helper_translated(chinese_helper):
    words = english_words(layout.helper_text(ROOT))
    assert chinese_helper.LANGUAGE == "zh"
    assert list(chinese_helper.WORDS) == words
    assert all(CJK.search(chinese_helper.WORDS[word]) for word in words)
    assert (ROOT / "student_template/zh/attention_plots.py").read_text(encoding="utf-8") == \
        localized.language_helper(layout.helper_text(ROOT), "zh", catalogue.Catalogue("zh_CN", ROOT))


def test_a_translation_that_loses_a_field_stops_the_build():
    with pytest.raises(BuildError, match=r"\{error\}"):
        translated_helper(layout.helper_text(ROOT), "zh", lambda word: word.replace("{error}", "错误"))


def test_a_word_not_written_out_stops_the_build():
    text = layout.helper_text(ROOT) + "\n\ndef later(word):\n    return _drawn(word)\n"
    with pytest.raises(BuildError, match="one string written out"):
        english_words(text)


def test_a_chinese_picture_is_drawn_in_a_font_with_its_characters(chinese_helper, drawn):
    font = chinese_helper.cjk_font()
    if font is None:
        pytest.skip("no CJK font is installed (bash ci/system_deps.sh installs fonts-noto-cjk)")
    caught = draw(chinese_helper)
    assert not [text for text in caught if "missing from font" in text]  # matplotlib drew every glyph
    axes = drawn[0].axes[0]
    texts = [axes.title, axes.xaxis.label, axes.yaxis.label]
    assert [text.get_text() for text in texts] == [TITLE, "键", "查询"]
    for text in texts:  # the font file each text is drawn with has each of its characters
        path = font_manager.findfont(text.get_fontproperties(), fallback_to_default=False)
        face = FT2Font(path)
        assert face.family_name in chinese_helper.CJK_FONTS or "CJK" in face.family_name, path
        assert all(ord(char) in face.get_charmap() for char in text.get_text() if not char.isspace())


def test_without_a_cjk_font_it_says_so_once_and_draws_no_boxes(chinese_helper, drawn, monkeypatch, capsys):
    monkeypatch.setattr(chinese_helper, "known_fonts", set)
    monkeypatch.setattr(chinese_helper, "_add_installed_cjk_fonts", lambda: None)
    caught = draw(chinese_helper) + draw(chinese_helper)
    assert not [text for text in caught if "missing from font" in text]
    said = capsys.readouterr().out
    assert said.count(chinese_helper.WORDS[english_words(layout.helper_text(ROOT))[0]].split("{")[0]) == 1
    assert said.count(TITLE) == 2  # the title is printed instead of drawn
    for figure in drawn:
        axes = figure.axes[0]
        assert (axes.get_title(), axes.get_xlabel(), axes.get_ylabel()) == ("", "keys", "queries")


def test_the_english_copy_never_looks_for_a_cjk_font(tmp_path, drawn, monkeypatch, capsys):
    helper = load_helper(tmp_path, layout.helper_text(ROOT))
    monkeypatch.setattr(helper, "known_fonts", set)
    assert draw(helper, "your attention weights") == [] and capsys.readouterr().out == ""
    assert drawn[0].axes[0].get_xlabel() == "keys" and drawn[0].axes[0].get_title() == "your attention weights"


def shown_words(nb: nbformat.NotebookNode) -> list[str]:
    """The title= and labels= strings of every show_weights(...) call in a notebook's code cells."""
    words = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "show_weights":
                for keyword in node.keywords:
                    if keyword.arg in ("title", "labels"):
                        values = keyword.value.elts if isinstance(keyword.value, ast.List) else [keyword.value]
                        words += [value.value for value in values if isinstance(value, ast.Constant)]
    return words


@pytest.mark.parametrize("rel", sorted(str(p.relative_to(ROOT)) for p in (ROOT / "student_template/zh").glob("*.ipynb")))
def test_the_chinese_demo_cells_give_chinese_titles(rel):
    words = shown_words(nbformat.read(ROOT / rel, as_version=4))
    english = [word for word in words if not CJK.search(word) and re.search(r"[A-Za-z]{3,}", word)
               and not word.startswith("token ")]  # "token" is a word of the glossary in both languages
    assert not english, english
