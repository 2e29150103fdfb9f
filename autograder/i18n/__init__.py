"""The grader's words in the reader's language: English (the default, the msgids themselves) or Chinese.

Every message a student or an instructor reads is written once, in English, through one of three
calls, and looked up in the current language's catalogue where it is shown:

    _(text)            a literal message, translated now ("en": the text itself)
    _f(text, **fields) a message with named fields: _(text).format(**fields); a field the template
                       names but the call does not give is a KeyError, never a silent "{name}"
    N_(text)           marks a literal for extraction only (a title or a table made at import time,
                       translated with _() where it is shown)

Why gettext: its catalogues (PO to translate, MO to load) are what translators' tools read, and the
standard library loads a MO without any dependency (the students' self-check wheel carries only
the MO files); Babel extracts and compiles them on the course's side (autograder/i18n/catalogues.py).

Why one process-wide language, set once by an entry point (`set_language`): the messages are made
deep inside the core, the checks and the renderers, and threading a language argument through
every one of them would change every signature for a value that never varies within a run (a
batch grades one class in one language). The worker, which runs beside student code, sends data,
not sentences, and stays below this layer.

Why the msgid is the English sentence itself: English output stays byte-identical without any
catalogue, and a translator reads what the student would have read.

Catalogues: one PO per area of the code under zh_CN/LC_MESSAGES/ (core.po, cli.po, feedback.po,
checks_01.po ...), so that several translators never edit the same file; every MO of the language
is loaded and chained as fallbacks, so a message is found whichever area it belongs to.

Where this differs from the plain gettext-and-Babel recipe, and why:
- the MO files are written by mo.py, not by Babel: Babel's header names its own version, and the
  course build compares the committed MO files byte for byte;
- the per-area templates stay in memory (catalogues.update): a POT file on disk would be one more
  generated file to keep current, and the PO files already carry every message and its places;
- the sections' titles (a literal dict the registry reads without importing the check file, so no
  N_ can mark them) are extracted into core.po, the area of the code that shows them;
- the students' self-check wheel carries the MO files cut down to the messages of the code it ships
  (instructor/selfcheck_export.py): a hidden check's title or message would say what it looks at;
- an `instructor` area is there for the class-level messages, next to the areas named for the code.
"""
from __future__ import annotations

import gettext
import os
import string
from pathlib import Path

# language code -> the catalogues' locale folder (None: the msgids themselves)
LANGUAGES = {"en": None, "zh": "zh_CN"}
DEFAULT = "en"
ENVIRONMENT = "ATTENTION_COURSE_LANG"
HERE = Path(__file__).resolve().parent

# Full-width punctuation: Chinese text sets no space beside it, so a template's space next to a
# field whose value begins or ends with one is dropped ("{what} 的权重" with what = "f（x）").
FULL_WIDTH = tuple("（）：，。；、！？")
# Latin text that opens or closes next to Chinese: code ("(6,)", "'journey'", "x.T"), numbers, names.
LATIN_OPENS, LATIN_CLOSES = "([{'\"`.-", ")]}'\"`"
_FORMATTER = string.Formatter()

_current = DEFAULT
_translations: gettext.NullTranslations = gettext.NullTranslations()


class LanguageError(ValueError):
    """A language code the grader has no catalogue for (the message names the choices)."""


def check_code(code: str, where: str) -> str:
    """`code` if the grader speaks it, else a one-line LanguageError saying where it came from."""
    cleaned = str(code).strip().lower()
    if cleaned not in LANGUAGES:
        raise LanguageError(f"unknown language {code!r} ({where}); choose one of: {', '.join(LANGUAGES)}")
    return cleaned


def load(code: str, folder: Path = HERE) -> gettext.NullTranslations:
    """Every MO of `code`'s locale chained into one (sorted, so a run is reproducible); none: identity."""
    locale = LANGUAGES[code]
    chain: gettext.NullTranslations = gettext.NullTranslations()
    if locale is None:
        return chain
    first = None
    for path in sorted((folder / locale / "LC_MESSAGES").glob("*.mo")):
        with path.open("rb") as stream:
            catalogue = gettext.GNUTranslations(stream)
        if first is None:
            first = catalogue
        else:
            first.add_fallback(catalogue)
    return first or chain


def set_language(code: str, folder: Path = HERE) -> None:
    """Make `code` the language of every message from now on ("en" or "zh"); `folder`: where the
    catalogues lie (the package's own, unless a test brings its own)."""
    global _current, _translations
    code = check_code(code, "set_language")
    _translations = load(code, folder)
    _current = code


def language() -> str:
    return _current


def resolve(explicit: str | None = None, notebook_language: str | None = None) -> str:
    """The language to speak: the --lang flag, else $ATTENTION_COURSE_LANG, else the notebook's
    metadata.course.language, else English. An unknown code, wherever it came from, is an error."""
    environment = os.environ.get(ENVIRONMENT, "").strip()
    for value, where in ((explicit, "--lang"), (environment, f"${ENVIRONMENT}"),
                         (notebook_language, "the notebook's metadata.course.language")):
        if value:
            return check_code(value, where)
    return DEFAULT


def _(text: str) -> str:
    """`text` in the current language (the text itself in English, or where no translation exists)."""
    if _current == DEFAULT or not text:  # gettext's answer for "" is the catalogue's header
        return text
    return _translations.gettext(text)


def _f(text: str, /, **fields) -> str:
    """`text` translated, then its named {fields} filled in (format specs stay in the template)."""
    if _current == DEFAULT:
        return text.format(**fields)
    return fill(_(text), fields)


def fill(template: str, fields: dict) -> str:
    """template.format(**fields), joined by one rule of spacing: no single space of the template beside a
    field's full-width punctuation or between two Chinese characters (a run of spaces is a column gap and
    stays), and one space where a Chinese character of the template meets a field's Latin text, or a
    field's Chinese text meets the template's Latin text ("是{mistake}" with mistake = "softmax 之前…" reads "是 softmax 之前…"); the
    fields' own text is never changed."""
    pieces: list[str] = []
    before = ""  # the field just filled in ("" at the start and after a literal-only part)
    for literal, name, spec, conversion in _FORMATTER.parse(template):
        if literal.startswith(" ") and not literal.startswith("  ") and (
                before.endswith(FULL_WIDTH) or _is_chinese(before[-1:]) and _is_chinese(literal[1:2])):
            literal = literal[1:]
        literal = _spaced(before, literal) + literal
        if name is None:
            pieces.append(literal)
            break
        value, _key = _FORMATTER.get_field(name, (), fields)
        value = _FORMATTER.convert_field(value, conversion)
        before = _FORMATTER.format_field(value, _FORMATTER.vformat(spec or "", (), fields))
        if literal.endswith(" ") and not literal.endswith("  ") and (
                before.startswith(FULL_WIDTH) or _is_chinese(before[:1]) and _is_chinese(literal[-2:-1])):
            literal = literal[:-1]
        pieces += [literal, _spaced(pieces[-1][-1:] if not literal and pieces else literal, before), before]
    return "".join(pieces)


def _spaced(left: str, right: str) -> str:
    """" " where `left` ends with a Chinese character and `right` begins with Latin text, or the other way
    round; else "" (Chinese sets one space between itself and Latin text, none beside punctuation)."""
    if not left or not right:
        return ""
    last, first = left[-1], right[0]
    chinese_then_latin = _is_chinese(last) and (first.isascii() and (first.isalnum() or first in LATIN_OPENS))
    latin_then_chinese = _is_chinese(first) and (last.isascii() and (last.isalnum() or last in LATIN_CLOSES))
    return " " if chinese_then_latin or latin_then_chinese else ""


def _is_chinese(char: str) -> bool:
    return bool(char) and ("\u4e00" <= char <= "\u9fff" or "\u3400" <= char <= "\u4dbf")


def N_(text: str) -> str:
    """`text` unchanged: marks it for extraction; translate it with _() where it is shown."""
    return text
