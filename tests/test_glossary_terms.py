"""One term for one thing: no Chinese translation, of the grader or of the notebooks, uses a variant
that docs/glossary.md's table "One term for one thing" lists as not to be used."""
from __future__ import annotations

import base64
import html
import io
import json
import re
import subprocess
import sys
import tokenize
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


# ---------------------------------------------------------------- what a Chinese student reads, as shown
# The catalogues hold each message alone; a printed label in a notebook's code and a heatmap's caption are
# read as the build and the report put them together (a caption's {what} filled with a check's own words).

ZH_NOTEBOOKS = sorted((ROOT / "student_template/zh").glob("*.ipynb"))
SVG = re.compile(r'src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"')
SHOWN_IN_A_PICTURE = re.compile(r"<figcaption>(.*?)</figcaption>|alt=\"([^\"]*)\"|<text\b[^>]*>(.*?)</text>", re.S)


def code_words(source: str) -> list[str]:
    """The comments and strings of a code cell: its printed labels, its plots' titles, its comments."""
    try:
        return [token.string for token in tokenize.generate_tokens(io.StringIO(source).readline)
                if token.type in (tokenize.COMMENT, tokenize.STRING)]
    except (tokenize.TokenError, IndentationError):
        return [source]


def notebook_texts() -> list[tuple[str, str]]:
    texts = []
    for path in ZH_NOTEBOOKS:
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            source = "".join(cell["source"])
            pieces = [source] if cell["cell_type"] == "markdown" else code_words(source)
            texts += [(f"{path.name} {cell.get('id', '?')}", piece) for piece in pieces]
    return texts


def picture_texts(page: str) -> list[str]:
    """A report's captions and alt texts, and the words drawn in its heatmaps (SVG text)."""
    pictures = [base64.b64decode(data).decode("utf-8") for data in SVG.findall(page)]
    return [html.unescape(next(group for group in match.groups() if group is not None))
            for text in [page, *pictures] for match in SHOWN_IN_A_PICTURE.finditer(text)]


def text_findings(texts: list[tuple[str, str]], banned: dict[str, str]) -> list[str]:
    return [f"{where}: {variant!r} (the glossary's term: {term}) in {text[:80]!r}"
            for where, text in texts for variant, term in banned.items() if uses(text, variant)]


def test_no_chinese_notebook_prints_or_draws_a_variant():
    from autograder.core.sections import SECTIONS

    assert [path.name for path in ZH_NOTEBOOKS] == [section.notebook for section in SECTIONS]  # every one is read
    found = text_findings(notebook_texts(), variants(GLOSSARY.read_text(encoding="utf-8")))
    assert found == [], "\n".join(found)


def test_no_heatmap_caption_of_a_chinese_report_uses_a_variant(tmp_path):
    done = subprocess.run([sys.executable, "-m", "autograder", "check", str(ROOT / "examples/partial"), "--lang", "zh",
                           "--report", str(tmp_path)], capture_output=True, text=True, encoding="utf-8", timeout=600)
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    texts = picture_texts(page)
    assert any(text.startswith("图中是") for text in texts) and "期望值" in texts, done.stderr[-2000:]  # caption, panel
    found = text_findings([("report.html", text) for text in texts], variants(GLOSSARY.read_text(encoding="utf-8")))
    assert found == [], "\n".join(found)


def test_a_variant_in_a_caption_or_a_printed_label_is_found():
    planted = ('<figure><img src="data:image/svg+xml;base64,'
               + base64.b64encode('<svg><text x="1">批次中索引为 0 的项</text></svg>'.encode()).decode()
               + '" alt="热力图"><figcaption>图中是章节 2 的期望值。</figcaption></figure>')
    texts = [("report.html", text) for text in picture_texts(planted)]
    banned = {"章节": "节", "的项": "样本"}
    assert [line.split(": ", 1)[1][:4] for line in text_findings(texts, banned)] == ["'章节'", "'的项'"]
    label = code_words('print("split_heads，索引为 0 的项:\\n", x)  # 批次中的各项\n')
    assert len(text_findings([("cell", text) for text in label], {"的项": "样本", "中的各项": "样本"})) == 2
