"""A small writer of SVG pictures for the reports: rectangles, lines and text, nothing else.

Why our own and not matplotlib: a picture is a few hundred rectangles and labels, which this
writes in milliseconds where matplotlib costs its import (about a second) and a third of a second
per picture; and a browser draws an SVG's text with the reader's own fonts, so Chinese words show
as Chinese, where matplotlib's bundled font draws them as empty boxes.

What it writes is safe to embed: every text is escaped (and stripped of what XML cannot carry),
and a picture holds no script, no link and no reference outside itself. The reports embed it as
an <img> (data: URI), where a browser would not run a script anyway.

Deterministic: numbers are written with two decimals at most, attributes in the order given, so
the same picture is always the same bytes.
"""
from __future__ import annotations

import math
from xml.sax.saxutils import escape

from autograder.feedback.formats import plain_text
from autograder.i18n import DEFAULT, language

FONT = "DejaVu Sans, Verdana, sans-serif"  # the reader's own fonts draw what these lack (Chinese)
XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>'
# how every picture document() writes begins and ends (a cached picture is checked against them)
START, END = (XML_DECLARATION + "\n<svg ").encode("utf-8"), b"</svg>\n"
_ATTRIBUTE_ENTITIES = {'"': "&quot;", "'": "&apos;", "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"}


def number(value: float) -> str:
    """A coordinate as SVG text: at most two decimals, no trailing zeros, never "-0"."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def text_of(value) -> str:
    """`value` as the escaped content of an element or attribute (quotes included)."""
    return escape(plain_text(str(value)), _ATTRIBUTE_ENTITIES)


def element(tag: str, attributes: dict, content: str | None = None) -> str:
    """One element; `content`: already escaped markup (None: an empty element).
    A float attribute is written with number(); None leaves the attribute out."""
    head = _head(tag, attributes)
    return f"<{head}/>" if content is None else f"<{head}>{content}</{tag}>"


def _head(tag: str, attributes: dict) -> str:
    parts = [tag]
    for name, value in attributes.items():
        if value is None:
            continue
        shown = number(value) if isinstance(value, float) else text_of(value)
        parts.append(f'{name}="{shown}"')
    return " ".join(parts)


def rect(x: float, y: float, width: float, height: float, **attributes) -> str:
    return element("rect", {"x": float(x), "y": float(y), "width": float(width), "height": float(height),
                            **_named(attributes)})


def line(x1: float, y1: float, x2: float, y2: float, **attributes) -> str:
    return element("line", {"x1": float(x1), "y1": float(y1), "x2": float(x2), "y2": float(y2),
                            **_named(attributes)})


def text(x: float, y: float, words, size: float, anchor: str = "middle", **attributes) -> str:
    """Text centred vertically on y; anchor: start, middle or end (horizontally, at x)."""
    return element("text", {"x": float(x), "y": float(y), "font-size": float(size), "text-anchor": anchor,
                            "dominant-baseline": "central", **_named(attributes)}, text_of(words))


def group(children: list[str], **attributes) -> str:
    return element("g", _named(attributes), "".join(children))


def _named(attributes: dict) -> dict:
    """Python keyword names as SVG attribute names: stroke_width -> stroke-width, class_ -> class."""
    return {name.rstrip("_").replace("_", "-"): value for name, value in attributes.items()}


def vertical_gradient(identifier: str, colours: tuple[str, ...]) -> str:
    """A gradient from the first colour at the bottom to the last at the top, evenly spaced
    (linear in RGB between them, as a colour table is interpolated)."""
    stops = [element("stop", {"offset": number(k / (len(colours) - 1)), "stop-color": colour})
             for k, colour in enumerate(colours)]
    return element("linearGradient", {"id": identifier, "x1": "0", "y1": "1", "x2": "0", "y2": "0"},
                   "".join(stops))


def document(width: int, height: int, body: list[str], definitions: list[str] = ()) -> bytes:
    """The whole picture as UTF-8 bytes, on a white background."""
    # the words' language picks the fallback font's glyph forms: without it, a browser may draw
    # Chinese in a Japanese font's shapes (the reports' pages say it with <html lang>)
    head = _head("svg", {"xmlns": "http://www.w3.org/2000/svg", "width": str(width), "height": str(height),
                         "viewBox": f"0 0 {width} {height}", "font-family": FONT,
                         "xml:lang": None if language() == DEFAULT else language()})
    parts = [XML_DECLARATION, f"<{head}>"]
    if definitions:
        parts.append(element("defs", {}, "".join(definitions)))
    parts.append(rect(0, 0, width, height, fill="#ffffff"))
    parts += body
    parts.append("</svg>")
    return ("\n".join(parts) + "\n").encode("utf-8")


def nice_ticks(low: float, high: float, most: int = 9) -> list[float]:
    """Round values between low and high for an axis: steps of 1, 2, 2.5 or 5 times a power of ten,
    at most `most` of them."""
    span = high - low
    if not span > 0 or not math.isfinite(span):
        return [low]
    power = 10.0 ** math.floor(math.log10(span / most))
    step = next(m * power for m in (1, 2, 2.5, 5, 10, 20) if span / (m * power) <= most - 1)
    first = math.ceil(low / step - 1e-9)
    last = math.floor(high / step + 1e-9)
    return [k * step for k in range(first, last + 1)]


def tick_text(value: float, ticks: list[float]) -> str:
    """A tick's label with the decimals its axis's step needs (all alike), and a true minus sign."""
    step = abs(ticks[1] - ticks[0]) if len(ticks) > 1 else 1.0
    power = math.floor(math.log10(step) + 1e-9)
    quarter = round(step / 10.0 ** power, 6) == 2.5  # 0.25 needs one decimal more than 0.2
    shown = f"{value:.{max(0, quarter - power)}f}"
    if float(shown) == 0:
        shown = shown.lstrip("-")
    return shown.replace("-", "\u2212")
