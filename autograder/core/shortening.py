"""Messages made shorter for a student's screen, without making them wrong.

A failure message quotes what the student's code raised, which can be as long as that code likes;
the grader keeps a bounded part of it. Cutting at a fixed character count left words half written
("...and regist"), a quote or a bracket open, and, where the student's line came last, lost the
line. `shorten` is the one way the grader shortens a message: it cuts between words (anywhere
between Chinese characters, which Chinese writes without spaces, but never just after an opening
bracket), marks the cut with an ellipsis and closes every bracket and quote the kept part opened.
Where a message ends with the student's own line, the caller passes that ending as `keep`, and it
is kept whole after the ellipsis.
"""
from __future__ import annotations

import unicodedata

ELLIPSIS = "\u2026"
# each opening bracket or quote a message may hold, with the one that closes it
PAIRS = {"(": ")", "[": "]", "{": "}", "\uff08": "\uff09", "\u3010": "\u3011", "\u300c": "\u300d",
         "\u300e": "\u300f", "\u300a": "\u300b", "\u3008": "\u3009", "\u201c": "\u201d", "\u2018": "\u2019",
         "\uff3b": "\uff3d", "\uff5b": "\uff5d"}
CLOSING = {close: open_ for open_, close in PAIRS.items()}
QUOTE = '"'  # the one quote that opens and closes alike (an apostrophe is a letter of "inputs'")
# a cut that would end on one of these drops it too: a separator or an opening says nothing alone
DANGLING = " \t\n,;:\u3001\uff0c\uff1b\uff1a" + "".join(PAIRS)


def is_wide(character: str) -> bool:
    """Whether a terminal gives `character` two columns (Chinese, full-width punctuation)."""
    return unicodedata.east_asian_width(character) in "WF"


def breakable(text: str, index: int) -> bool:
    """Whether a cut between text[index - 1] and text[index] falls between words (or at either end)."""
    if index <= 0 or index >= len(text):
        return True
    before, after = text[index - 1], text[index]
    return before.isspace() or after.isspace() or is_wide(before) or is_wide(after)


def unclosed(text: str) -> str:
    """What closes, innermost first, the brackets and quotes `text` opened and left open."""
    opened: list[str] = []
    for character in text:
        if character == QUOTE:
            if opened and opened[-1] == QUOTE:
                opened.pop()
            else:
                opened.append(QUOTE)
        elif character in PAIRS and not (opened and opened[-1] == QUOTE):  # a bracket inside quotes is text
            opened.append(character)
        elif character in CLOSING and opened and opened[-1] == CLOSING[character]:
            opened.pop()
    return "".join(PAIRS.get(character, QUOTE) for character in reversed(opened))


def cut(text: str, room: int) -> str:
    """The longest start of `text`, at most `room` characters, that ends between words (a word longer
    than half the room is cut inside, or nothing of it would show), without a dangling separator."""
    end = min(room, len(text))
    while end > room // 2 and not breakable(text, end):
        end -= 1
    if not breakable(text, end):
        end = min(room, len(text))
    start = text[:end].rstrip(DANGLING)
    while start.endswith(QUOTE) and unclosed(start).startswith(QUOTE):  # a quote that opens nothing shown
        start = start[:-1].rstrip(DANGLING)
    return start


def shorten(text, limit: int, keep: str = "", measure=len) -> str:
    """`text` in at most `limit` characters (or columns, where `measure` is `display_width`): itself where
    it fits, else cut between words, an ellipsis and the closers of what the kept part opened; `keep`, an
    ending of `text` (the student's line), comes whole after them where it leaves room for the rest."""
    text = str(text)
    if measure(text) <= limit:
        return text
    if not (keep and text.endswith(keep) and measure(keep) <= limit // 2):
        keep = ""
    body = text[:len(text) - len(keep)]
    room = limit - measure(keep) - len(ELLIPSIS)
    while room > 0:
        start = cut(body, room)
        shortened = start + ELLIPSIS + unclosed(start) + keep
        over = measure(shortened) - limit
        if over <= 0:
            return shortened
        room = min(room - 1, len(start) - max(1, over // 2))  # a wide character takes two columns
    return ELLIPSIS if limit >= measure(ELLIPSIS) else ""


def display_width(text: str) -> int:
    """Columns `text` takes in a terminal: an East Asian wide or full-width character takes two."""
    return sum(2 if is_wide(character) else 1 for character in text)
