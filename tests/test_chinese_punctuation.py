"""The punctuation of the Chinese lines a student reads about a mistake, over the whole mistake catalogue.

The lines: every failing visible check's message of the Chinese self-check of every catalogued mistake
(tests/catalogues, graded once per run and language by support.self_check, whichever test asks first). The
notebook's check cells show the same messages (a cell's line is its check's title, ——, and this message).

Colons. A full-width colon introduces one thing: "{call}：数值不对，…", "请严格按以下顺序创建参数：W_q, W_k".
A message is put together from pieces (a call, a verdict, a note on a nan, a named mistake, a hint), and a
join that adds another colon chains them: "f(x)：数值不对……：出现 nan 是因为……：m 仍为 -inf 时……", or
"…时出错：rope_attention：你的代码混用了……". A verdict followed by an explanation or a hint is a new
sentence (。) or a clause (，). The rule: at most one full-width colon in a sentence, not counting what
stands inside full-width parentheses (the student's own line, quoted: "（04_causal_mask.py，第 9 行：…）").
A sentence ends at 。！？, at a line break, or at ；, which joins two sentences that stand on their own. One
colon per message would be stricter than the messages can honestly be: a verdict "{call}：数值不对……。"
and then "这看起来像是 X：why" or "最可能的原因：…" are two sentences, each introducing one thing, and
writing either without its colon reads worse in Chinese, not better.

Full stops and spaces. No "。。" (a piece ending with 。 joined by a template that adds one), and no space
after a full-width mark (。，、：；？！): Chinese text sets none (a piece joined with " " after its 。).
"""
from __future__ import annotations

import re

import pytest
from catalogues import CATALOGUES
from support import self_check

from autograder import i18n

MISTAKES = [(section_id, mistake) for section_id, catalogue in CATALOGUES.items() for mistake in catalogue.MISTAKES]
SENTENCE_ENDS = "。！？；\n"
DOUBLED_STOP = re.compile(r"。。")
SPACE_AFTER_MARK = re.compile(r"[。，、：；？！][ \t\u3000]")


def sentences(text: str) -> list[str]:
    """The sentences of `text`, with what stands inside full-width parentheses left out."""
    found, current, depth = [], [], 0
    for char in text:
        if char == "（":
            depth += 1
        elif char == "）":
            depth = max(depth - 1, 0)
        elif depth == 0 and char in SENTENCE_ENDS:
            found.append("".join(current))
            current = []
        elif depth == 0:
            current.append(char)
    return found + ["".join(current)]


def chained_colons(text: str) -> list[str]:
    """The sentences of `text` that hold more than one full-width colon (outside （…））."""
    return [sentence for sentence in sentences(text) if sentence.count("：") > 1]


def wrong_marks(text: str) -> list[str]:
    """A doubled full stop, or a space after a full-width mark, each with the text around it."""
    return [text[max(match.start() - 20, 0):match.end() + 20]
            for pattern in (DOUBLED_STOP, SPACE_AFTER_MARK) for match in pattern.finditer(text)]


@pytest.fixture(scope="module")
def chinese_lines() -> list[tuple[str, str]]:
    """(section and mistake, message) of every failing visible check of the Chinese self-check of every
    catalogued mistake."""
    previous = i18n.language()
    i18n.set_language("zh")
    try:
        return [(f"{section_id} {mistake.id}", check.message) for section_id, mistake in MISTAKES
                for check in self_check(section_id, mistake.source(section_id)).checks
                if not check.passed and check.message]
    finally:
        i18n.set_language(previous)


def test_the_catalogue_gives_chinese_lines_to_judge(chinese_lines):
    assert len(chinese_lines) > len(MISTAKES)  # most mistakes fail a check or more, each with a message
    assert all(re.search("[\u4e00-\u9fff]", message) for _where, message in chinese_lines)


def test_a_colon_introduces_one_thing_in_each_sentence(chinese_lines):
    wrong = [(where, message, chained) for where, message in chinese_lines if (chained := chained_colons(message))]
    figures = f"{len(wrong)} of {len(chinese_lines)} lines chain colons"
    assert not wrong, figures + " (end the verdict with 。 or ， before an explanation):\n" + "\n".join(
        f"{where}: {message[:400]}\n  chained: {chained}" for where, message, chained in wrong[:20])


def test_no_doubled_full_stop_nor_space_after_a_full_width_mark(chinese_lines):
    wrong = [(where, hits) for where, message in chinese_lines if (hits := wrong_marks(message))]
    assert not wrong, f"{len(wrong)} of {len(chinese_lines)} lines:\n" + "\n".join(
        f"{where}: {hits}" for where, hits in wrong[:20])


@pytest.mark.parametrize("text, chained", [
    ("rope_attention 在 meta 设备上抛出了错误：rope_attention：你的代码混用了两个设备上的张量", 1),
    ("f(x)：数值不对，最大差值 inf（应为 1.0，实际为 nan）：出现 nan 是因为 0 / 0", 1),
    ("f(x)：数值不对，最大差值 inf（应为 1.0，实际为 nan）。出现 nan 是因为 0 / 0", 0),
    ("f(x)：形状应为 (6,)，实际为 (3,)。这看起来像是转置放错了一侧：请用 inputs @ inputs.T", 0),
    ("f 抛出了 RuntimeError（04_causal_mask.py，第 9 行：x = a：b）。最可能的原因：掩码在 CPU 上", 0),
    ("f：参数 W 没有得到梯度；它的梯度是 None：请去掉 .detach()", 0),
    ("f：参数 W 没有得到梯度\n最可能的原因：forward 中用了 .detach()：请去掉它", 1),
])
def test_the_colon_rule_counts_a_sentence_outside_its_parentheses(text, chained):
    assert len(chained_colons(text)) == chained


@pytest.mark.parametrize("text, hits", [
    ("这样 .to(device) 才会移动它们。。最可能的原因", 1), ("而它的输入位于 cpu。 不写 device= 创建的张量", 1),
    ("位于 cpu。不写 device= 创建的张量", 0), ("最大差值: 1e-07", 0), ("（应为 1.0，实际为 nan）\n最可能的原因", 0),
])
def test_the_marks_rule_finds_a_doubled_stop_and_a_space_after_a_mark(text, hits):
    assert len(wrong_marks(text)) == hits
