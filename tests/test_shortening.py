"""Messages shortened and wrapped for a student's screen stay right: no word, quote or bracket cut
open, the student's line kept, and Chinese lines broken by its rules (no line starts with a closing
mark or ends with an opening one).

The texts: every message of the grader's catalogues (checks, hints, failures), in English and in
Chinese, and hostile texts a student's exception could carry.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from autograder import i18n
from autograder.core.failures import describe_failure
from autograder.core.shortening import DANGLING, ELLIPSIS, breakable, shorten, unclosed
from autograder.feedback.formats import NO_LINE_END, NO_LINE_START, display_width, wrap
from autograder.i18n.catalogues import translations

FOLDER = Path(i18n.__file__).parent / "zh_CN" / "LC_MESSAGES"
AREAS = [path for path in sorted(FOLDER.glob("*.po")) if path.stem.startswith(("checks", "core"))]


def catalogue_texts() -> list[str]:
    """Each message of the checks' and core's catalogues, in English and in Chinese."""
    texts = []
    for path in AREAS:
        for english, chinese in translations(path, "zh_CN").items():
            texts += [english, chinese]
    return texts


HOSTILE = [
    "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! "
    "(when checking argument for argument mat2 in method wrapper_CUDA_mm) and registering it again",
    "((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((",
    "))))]]]}}} closers first (then an opener that is never closed [and a quote \"that runs on " * 4,
    "a_single_identifier_far_longer_than_any_limit_" * 12,
    "\u4f60\u7684\u4ee3\u7801\uff08\u5728\u3010\u8bbe\u5907\u300c\u4e0a\u300d\u7684\u3011\u5f20\u91cf\uff09"
    "\u6ca1\u6709\u300a\u5173\u95ed\u7684\u62ec\u53f7\u300b\uff0c\u201c\u5f15\u53f7\u201d\u4e5f\u662f\u3002" * 9,
    "\u5f20\u91cf\uff08\u5f62\u72b6 (2, 3, 4)\uff0c\u8bbe\u5907 cuda:0\uff09" * 20,
    "mixed \u4e2d\u6587 and English, \u201cquoted\u201d words (\u62ec\u53f7 [nested {deep \"quote\"}]) " * 8,
    "\x1b[31mred\x1b[0m \u202eevil\u202c " * 30,
    "\U0001f600 emoji (" * 60,
]
LIMITS = (24, 60, 200, 300, 500)


def texts() -> list[str]:
    return catalogue_texts() + HOSTILE


def test_the_catalogues_were_read():
    assert len(AREAS) >= 8 and len(catalogue_texts()) > 400


def ends_between_words(text: str, start: str) -> bool:
    """Whether `start` ends where a word of `text` ends, separators and openings after it dropped."""
    end = len(start)
    while end < len(text) and text[end] in DANGLING + '"':
        end += 1
    return any(breakable(text, index) for index in range(len(start), end + 1))


@pytest.mark.parametrize("limit", LIMITS)
def test_shortened_text_fits_is_cut_between_words_and_closes_what_it_opened(limit):
    for text in texts():
        short = shorten(text, limit)
        assert len(short) <= limit, (text, short)
        if len(text) <= limit:
            assert short == text
            continue
        start, _, closers = short.rpartition(ELLIPSIS)
        assert text.startswith(start), (text, short)
        # between words, or inside a word longer than half the room (a path, an identifier)
        assert ends_between_words(text, start) or len(start.split()[-1]) > limit // 4, (text, short)
        assert unclosed(start) == closers, (text, short)
        assert unclosed(short) == "", (text, short)


def long_failure(device: bool) -> dict:
    said = ("Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! "
            if device else "mat1 and mat2 shapes cannot be multiplied (5x4 and 3x2) ")
    return {"kind": "raised", "type": "RuntimeError", "message": said * 20, "cell": 'the cell "def f(x):"',
            "lineno": 7, "line": "return torch.ones(3) @ x.T  # (the student's own line)"}


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("device", [True, False])
def test_a_shortened_failure_keeps_the_students_line(language, device):
    previous = i18n.language()
    i18n.set_language(language)
    try:
        failure = describe_failure("dot_scores", long_failure(device))
        for limit in (300, 500, 600):
            short = failure.shortened(limit)
            assert len(short) <= limit
            assert "return torch.ones(3) @ x.T  # (the student's own line)" in short, short
            assert unclosed(short) == "", short
    finally:
        i18n.set_language(previous)


@pytest.mark.parametrize("columns", (10, 17, 40, 96))
def test_chinese_lines_follow_the_line_breaking_rules(columns):
    for text in texts():
        if display_width(text) == len(text):
            continue  # English: textwrap's lines
        lines = wrap(text, columns)
        assert "".join(lines).replace(" ", "") == "".join(text.split()), text
        # a line the text itself starts or ends is the text's own doing
        assert not any(line[0] in NO_LINE_START for line in lines[1:]), lines
        assert not any(line[-1] in NO_LINE_END for line in lines[:-1]), lines
