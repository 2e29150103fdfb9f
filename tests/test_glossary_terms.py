"""One term for one thing: no Chinese translation, of the grader or of the notebooks, uses a variant
that docs/glossary.md's table "One term for one thing" lists as not to be used."""
from __future__ import annotations

import re
from pathlib import Path

from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parents[1]
GLOSSARY = ROOT / "docs/glossary.md"
TABLE = "## One term for one thing"
CATALOGUES = sorted((ROOT / "autograder/i18n/zh_CN/LC_MESSAGES").glob("*.po")) + [
    ROOT / "locale/zh_CN/LC_MESSAGES/notebooks.po"]
CODE = re.compile(r"`[^`\n]*`|\{[^{}\n]*\}")  # code spans and {fields}: names, not words
SPAN = re.compile(r"`([^`]+)`")


def variants(glossary: str) -> dict[str, str]:
    """variant -> the term the glossary uses instead, read from the table's rows."""
    section = glossary.split(TABLE, 1)[1].split("\n## ", 1)[0]
    found = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 3 or cells[0] in ("English", "") or set(cells[0]) <= set("-"):
            continue
        for variant in SPAN.findall(cells[2]):
            found[variant] = cells[1]
    return found


def uses(text: str, variant: str) -> bool:
    prose = CODE.sub(" ", text)
    if variant.isascii():  # an English word: a whole word, not part of a name or a path
        return re.search(rf"(?<![\w./]){re.escape(variant)}(?![\w./])", prose, re.IGNORECASE) is not None
    return variant in prose


def findings(path: Path, banned: dict[str, str]) -> list[str]:
    with path.open("rb") as stream:
        catalog = read_po(stream)
    found = []
    for message in catalog:
        strings = message.string if isinstance(message.string, (tuple, list)) else (message.string,)
        for text in filter(None, strings):
            for variant, term in banned.items():
                if uses(text, variant):
                    place = f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name}:{message.lineno}"
                    found.append(f"{place}: {variant!r} (the glossary's term: {term}) in {text[:60]!r}")
    return found


def test_the_glossary_lists_variants_as_data():
    banned = variants(GLOSSARY.read_text(encoding="utf-8"))
    assert banned["章节"] == "节" and banned["worker 进程"] == "工作进程" and banned["notebook"] == "笔记本"


def test_no_translation_uses_a_variant_the_glossary_rules_out():
    banned = variants(GLOSSARY.read_text(encoding="utf-8"))
    found = [line for path in CATALOGUES for line in findings(path, banned)]
    assert found == [], "\n".join(found)


def test_a_variant_in_a_translation_is_found(tmp_path):
    po = tmp_path / "planted.po"
    po.write_text('msgid "unknown section {s}"\nmsgstr "未知的章节 {s}"\n\n'
                  'msgid "a {notebook} in `notebook.py`"\nmsgstr "`notebook.py` 中的 {notebook}"\n', encoding="utf-8")
    banned = {"章节": "节", "notebook": "笔记本"}
    assert [line.split(": ", 1)[1] for line in findings(po, banned)] == [
        "'章节' (the glossary's term: 节) in '未知的章节 {s}'"]
