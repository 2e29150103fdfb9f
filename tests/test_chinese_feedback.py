"""The feedback in Chinese: the table of `grade --lang zh` matches its golden file (timing and the
machine's sandbox tier left out; its sandbox line, on stderr, holds no English word), and the HTML
report's visible text holds no English sentence."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from support import QUOTED_ERROR, ROOT, VisibleText, sandbox_latin_words
from test_i18n import english_sentence

from autograder import i18n
from autograder.core.results import CheckResult, GradeResult, SectionResult
from autograder.feedback.formats import display_width, table, wrap

GOLDEN = ROOT / "tests" / "golden" / "grade-partial-zh.txt"
SVG = "{http://www.w3.org/2000/svg}"
# an ASCII colon, or points in ASCII brackets, beside Chinese text (not a shape: 批次 (B, T, d))
ENGLISH_JOIN = re.compile(r"[\u4e00-\u9fff]\**(?:: | \(\d[\d.]*(?: / [\d.]+)?\))|: (?=\**[\u4e00-\u9fff])")


def grade_partial(*flags: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop(i18n.ENVIRONMENT, None)
    return subprocess.run([sys.executable, "-m", "autograder", "grade", "examples/partial", "--lang", "zh", *flags],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)


def without_machine(text: str) -> str:
    """The table without what varies by machine and run: the sandbox tier, torch's version, the time."""
    text = re.sub(r"^(正在评分 \S+（设备：cpu)；.*）$", r"\1；<沙箱与 torch>）", text, count=1, flags=re.M)
    return re.sub(r"（\d+(?:\.\d+)? 秒）$", "（<秒数> 秒）", text, flags=re.M)


def test_the_chinese_table_of_the_partial_example_matches_its_golden_file():
    done = grade_partial()
    assert done.returncode == 0, done.stderr[-2000:]
    text = without_machine(done.stdout)
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8")
    # the sandbox line goes to stderr (it varies by machine, so the golden file leaves it out): this
    # machine's real worker report, worded in Chinese
    sandbox = [line for line in done.stderr.splitlines() if line.startswith("sandbox: tier ")]
    assert len(sandbox) == 1 and "超时（" in sandbox[0], done.stderr[-2000:]
    assert sandbox_latin_words(sandbox[0]) == [], sandbox[0]


def test_the_chinese_html_report_shows_no_english_sentence(chinese_partial_report):
    done, tmp_path = chinese_partial_report
    assert done.returncode == 0, done.stderr[-2000:]
    page = VisibleText()
    page.feed((tmp_path / "report.html").read_text(encoding="utf-8"))
    assert len(page.parts) > 100, "the page has its text"
    english = [(sentence, part[:200]) for part in page.parts
               if (sentence := english_sentence(QUOTED_ERROR.sub(" ", part)))]
    assert english == []
    markdown = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert markdown.startswith("## 注意力机制课程反馈：")
    # the joins around the Chinese words are Chinese too: "01_scores：标题（10 / 10）", "**检查**（0 / 1）：消息"
    prose = [re.sub(r"```.*?```", "", markdown, flags=re.S), *page.parts]
    joins = [hit for text in prose for hit in ENGLISH_JOIN.findall(text)]
    assert joins == [], joins
    pictures = sorted((tmp_path / "heatmaps").glob("*.svg"))
    assert pictures, "the partial example's report has heatmaps"
    for path in pictures:  # the pictures' own words (panel titles, footer) are Chinese too
        picture = ET.fromstring(path.read_bytes())
        words = {text.get("class"): "".join(text.itertext()) for text in picture.iter(f"{SVG}text")}
        assert words["panel-title"] == "你的值 \u2212 期望值" and "三个面板共用一个色标" in words["footer"], words
        assert set(re.findall(r"[A-Za-z]{2,}", words["footer"])) <= {"nan", "inf"}, words["footer"]


def test_the_english_finder_sees_an_english_report_line():
    """The check above can fail: the same page's words in English are found."""
    assert english_sentence("Left: the expected values of weights. Middle: yours (differing cells outlined).")


def test_the_chinese_table_lines_up_by_display_width():
    i18n.set_language("zh")
    try:
        result = GradeResult("s", "cpu", [SectionResult("01_scores", "标题", [
            CheckResult("01_scores", "一项检查", 1, 1, ""),
            CheckResult("01_scores", "另一项检查", 1, 0, "数值不对" * 40)])])
        lines = table(result).splitlines()
    finally:
        i18n.set_language("en")
    passing, failing = (line for line in lines if line.startswith("  ") and "检查" in line)
    column = [display_width(line[:line.index("/")]) for line in (passing, failing)]
    assert column[0] == column[1], lines
    assert all(display_width(line) <= 96 + 16 for line in lines), lines
    assert max(display_width(piece) for piece in wrap("数值不对" * 40, 96)) <= 96


@pytest.mark.parametrize("columns", range(28, 97, 4))  # the longest word fits
def test_english_text_is_wrapped_as_textwrap_does_but_never_inside_a_shape_or_an_index(columns):
    import textwrap

    text = ("causal_attention_weights on (5, 5) scores, d_k=4: wrong values, largest difference 0.2545 at [4, "
            "3] (expected 0.5066, got 0.7612) on a (b, T, d_out) output")
    lines = wrap(text, columns)
    assert " ".join(lines) == text and max(map(len, lines)) <= columns, lines
    for group in ("(5, 5)", "[4, 3]", "(b, T, d_out)"):
        assert any(group in line for line in lines), (group, lines)
    plain = "softmax(x): wrong values, largest difference 0.2 at index 4 of row 1 " * 4
    assert wrap(plain, columns) == textwrap.wrap(plain, columns)


def test_a_mistake_with_numbers_is_recorded_in_english_and_shown_in_chinese():
    import torch

    from autograder.core.harness import CheckFailed, Mistake, describe, expect_close

    template = ("scores divided by sqrt(d_v) = sqrt(values.shape[-1]) = sqrt({d_v}) instead of "
                "sqrt(d_k) = sqrt(keys.shape[-1]) = sqrt({d_k})")
    mistake = Mistake(template, d_v=4, d_k=2)
    assert mistake == template.format(d_v=4, d_k=2)
    wrong = torch.ones(2, 2)
    i18n.set_language("zh")
    try:
        assert describe(mistake).startswith("注意力分数除以的是 sqrt(d_v)") and "sqrt(4)" in describe(mistake)
        try:
            expect_close(wrong, torch.zeros(2, 2), "x", mistakes={mistake: wrong})
        except CheckFailed as failure:
            message, named = str(failure), failure.mistake
        try:
            expect_close(torch.full((2, 2), float("nan")), torch.zeros(2, 2), "x", hint="look at the mask")
        except CheckFailed as failure:
            nan_message = str(failure)
    finally:
        i18n.set_language("en")
    assert "。这看起来像是注意力分数除以的是 sqrt(d_v)" in message and "sqrt(4)" in message
    assert named == template.format(d_v=4, d_k=2), "the class report counts the English name"
    assert "）。当 softmax" in nan_message, "the nan note is a new sentence, after a full-width full stop"
    assert nan_message.endswith("。look at the mask"), "the hint follows a full-width full stop"


def test_a_template_may_name_a_field_text():
    """_f's own parameter is positional only: a field called `text` (the tamper flag's quoted text,
    --shard's value) is a field like any other."""
    from autograder.i18n import _f

    assert _f("the text {text} ({what})", text="'x'", what="y") == "the text 'x' (y)"


def test_no_space_is_set_beside_a_fields_full_width_bracket(chinese):
    """'{what} 的注意力权重' where `what` ends with （…）: Chinese sets no space beside full-width
    punctuation, so the template's space goes; the field's own text and English stay as they are."""
    from autograder.i18n import fill

    what = "scaled_dot_product_attention（查询 (5, 4)，键 (7, 4)）"
    assert fill("{what} 的注意力权重", {"what": what}) == what + "的注意力权重"
    assert fill("{a} 与 {b}", {"a": "x （y）", "b": "（z）"}) == "x （y）与（z）"  # the field's own space stays
    assert fill("{a} 与 {b:.2f}", {"a": "x", "b": 0.5}) == "x 与 0.50"
    i18n.set_language("en")
    assert i18n._f("{what} of ({x})", what="f（x）", x=1) == "f（x） of (1)"
    assert fill("总分：{total}   （{seconds} 秒）", {"total": "1 / 2（附加题 0 / 1）", "seconds": 3}) == \
        "总分：1 / 2（附加题 0 / 1）   （3 秒）", "a run of spaces is a column gap"
