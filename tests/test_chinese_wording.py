"""Two ways the Chinese catalogues (the grader's and the notebooks') could mislead a student.

Indices. Python counts from 0, Chinese ordinals (第 N 个, 第 N 项, 第 N 行) from 1: "第 2 项" reads as the
third item to one reader and as item [2] to another. The rule: after 第 comes either a Chinese
numeral (第二行: an ordinal, counted from 1) or one of the counts that do start at 1 (ONE_BASED: the
README's steps, a notebook's numbered sections, a source line, a code cell or an argument counted
from 1). A zero-based index is written 索引为 2 的样本, or as a label after its noun: 维度 0, 头 h,
查询 i. So 第 followed by an Arabic numeral, a minus sign, a {field}, $math$, a bracket or a Latin
letter is wrong anywhere else.

"Documented". The checks' titles say the values the notebook gives ("the documented output"): in
Chinese 笔记本中给出的 (or 示例中的 for the worked example), never 文档中的 (which document?).

Joins. A message is put together from pieces (a verb, then "the documented ..."), and a join can
say a word twice: "给出笔记本中给出的" (gives the documented ...: the verb 给出 twice in five
characters), or 的的. A two-character word said again within four characters and then followed by
的 is such a join, unless a conjunction stands between (错误和引发错误的, 写出来而不是算出来的: two things
compared). A colon or semicolon after a Chinese character is the full-width one (：；), but for the ASCII colon
that ends a label the notebook prints before a value (最大差值: 1.8e-07): print sets a space after it, which a
full-width colon would not want.

Shapes. "f on a (5, 4) input" is f 作用于形状为 (5, 4) 的输入, always with 为 and always with 形状
(not 作用于形状 (5, 4) 的, nor 作用于 (5, 4) 的): one phrasing, read the same way in every message.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parents[1]
CATALOGUES = sorted((ROOT / "autograder/i18n/zh_CN/LC_MESSAGES").glob("*.po")) + [
    ROOT / "locale/zh_CN/LC_MESSAGES/notebooks.po"]
INDEX_AFTER_DI = re.compile(r"第\s*(?:[-\d{$\[]|[A-Za-z])[^，。；：、）\s]*\s*\S{0,6}")
ONE_BASED = re.compile(r"第 (?:\d+ (?:步|节|部分)|\{line\} 行|\{part\} 部分|\{number\} 个(?:代码单元格|参数)|\{step\} 次)")
DOCUMENTED = ("笔记本中给出的", "示例中的")
HAN = "\u4e00-\u9fff"
DOUBLED = re.compile(rf"的的|([{HAN}]{{2}})(?:(?![和与或而])[{HAN}]){{0,4}}\1的")
ASCII_JOIN = re.compile(rf"[{HAN}（）][:;]")
LABEL_END = re.compile(r":(?:\\n)?$")  # a printed label's last colon (before its "\n", as the code writes it)


def translations(path: Path, labels: bool = True) -> list[tuple[str, str, str]]:
    """(where, English, Chinese) of every translated message of a catalogue (plural forms each); without
    `labels`, a printed label's colon at its end is left out (print puts a space after it: 最大差值: 1e-07)."""
    with path.open(encoding="utf-8") as stream:
        catalog = read_po(stream)
    found = []
    for message in catalog:
        if not message.id:
            continue
        english = message.id if isinstance(message.id, str) else message.id[0]
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        where = f"{path.relative_to(ROOT)}: {message.context or english[:50]!r}"
        if not labels and "printed" in message.auto_comments:
            strings = tuple(LABEL_END.sub("", chinese) for chinese in strings)
        found += [(where, english, chinese) for chinese in strings if chinese]
    return found


def ordinal_indices(chinese: str) -> list[str]:
    """The places where `chinese` writes 第 before a number or a name that is not a one-based count."""
    return [match.group(0) for match in INDEX_AFTER_DI.finditer(chinese)
            if not ONE_BASED.match(chinese, match.start())]


@pytest.mark.parametrize("path", CATALOGUES, ids=[path.stem for path in CATALOGUES])
def test_no_zero_based_index_is_written_as_an_ordinal(path):
    wrong = [f"{where}: {hits}" for where, _, chinese in translations(path) if (hits := ordinal_indices(chinese))]
    assert not wrong, "write 索引为 N 的… (or a label: 维度 0, 头 h) for a zero-based index:\n" + "\n".join(wrong)


@pytest.mark.parametrize("path", CATALOGUES, ids=[path.stem for path in CATALOGUES])
def test_documented_is_what_the_notebook_gives(path):
    wrong = [where for where, english, chinese in translations(path)
             if "文档中" in chinese or ("documented" in english and not any(term in chinese for term in DOCUMENTED))]
    assert not wrong, "'documented' is 笔记本中给出的 (or 示例中的), never 文档中的:\n" + "\n".join(wrong)


@pytest.mark.parametrize("text, hits", [
    ("第 2 项有 2 个真实 token", 1), ("批次中的第 {item} 个样本", 1), ("第 i 行是查询 i 的分数", 1),
    ("沿第 -2 维", 1), ("在第 $2i$ 列填入正弦", 1), ("第 [h*hd, (h+1)*hd) 个特征", 1),
    ("见 README.md 第 2 步", 0), ("第 2 节的公式", 0), ("{cell}，第 {line} 行", 0), ("第 {number} 个参数", 0),
    ("第二行（索引为 1）", 0), ("索引为 2 的样本", 0), ("维度 0", 0),
    ("第 {step} 次调用中", 0), ("第 {t + 1} 个 token 之后", 1),  # a call counted from 1 (step + 1); t from 0
])
def test_the_rule_tells_an_index_from_a_one_based_count(text, hits):
    assert len(ordinal_indices(text)) == hits


SHAPE_WITHOUT_WEI = re.compile(r"作用于(?:形状)? ?[({][^，。；：]*?[)}] ?的")


@pytest.mark.parametrize("path", CATALOGUES, ids=[path.stem for path in CATALOGUES])
def test_a_shape_is_said_one_way(path):
    wrong = [f"{where}: {hits}" for where, _, chinese in translations(path)
             if (hits := SHAPE_WITHOUT_WEI.findall(chinese))]
    assert not wrong, "'on a (5, 4) input' is 作用于形状为 (5, 4) 的输入:\n" + "\n".join(wrong)


@pytest.mark.parametrize("text, hits", [("f 作用于形状 (5, 5) 的注意力分数", 1), ("f 作用于 (3, 5, 4) 的批次", 1),
                                        ("f 作用于形状 {shape} 的输入", 1), ("f 作用于形状为 (5, 4) 的输入", 0),
                                        ("f 作用于形状为 {shape} 的批次中的单独一项", 0)])
def test_the_shape_rule_wants_wei(text, hits):
    assert len(SHAPE_WITHOUT_WEI.findall(text)) == hits


def awkward_joins(chinese: str) -> list[str]:
    """A word said twice across a join, or an ASCII colon or semicolon after Chinese text."""
    return [match.group(0) for pattern in (DOUBLED, ASCII_JOIN) for match in pattern.finditer(chinese)]


@pytest.mark.parametrize("path", CATALOGUES, ids=[path.stem for path in CATALOGUES])
def test_no_word_is_said_twice_across_a_join(path):
    wrong = [f"{where}: {hits}" for where, _, chinese in translations(path, labels=False)
             if (hits := awkward_joins(chinese))]
    assert not wrong, "a word said twice (给出笔记本中给出的, 的的) or an ASCII ':' in Chinese:\n" + "\n".join(wrong)


@pytest.mark.parametrize("text, hits", [
    ("dot_scores 给出笔记本中给出的注意力分数", 1), ("得到的的输出", 1), ("softmax 作用于形状为 (4, 6) 的输入: 数值不对", 1),
    ("dot_scores 得到笔记本中给出的注意力分数", 0), ("当错误和引发错误的那一行符合", 0), ("直接写出来而不是算出来的答案", 0),
    ("softmax(x, dim=-1)：数值不对", 0), ("总分：{total}", 0),
])
def test_the_join_rule_tells_a_doubled_word_from_a_comparison(text, hits):
    assert len(awkward_joins(text)) == hits
