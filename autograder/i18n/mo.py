"""A gettext MO file from a mapping of msgid -> translation, with the standard library only.

Written here rather than by Babel so that the same messages always give the same bytes whichever
Babel is installed (Babel's MO header names its own version): the course build commits the MO files
and its `--check` compares them byte for byte. Layout: GNU gettext's, little-endian, no hash table.
"""
from __future__ import annotations

import struct

MAGIC = 0x950412DE
HEADER = "Content-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: 8bit\nLanguage: {locale}\n"


def mo_bytes(messages: dict[str, str], locale: str) -> bytes:
    """The MO file of `messages` (empty translations left out: gettext then falls back to the msgid)."""
    entries = {"": HEADER.format(locale=locale)}
    entries.update((msgid, text) for msgid, text in messages.items() if msgid and text)
    ids = sorted(entries)  # gettext finds messages by binary search over the sorted msgids
    keys = [msgid.encode("utf-8") for msgid in ids]
    values = [entries[msgid].encode("utf-8") for msgid in ids]
    count = len(ids)
    keys_start = 7 * 4 + 16 * count  # after the header and the two tables of (length, offset)
    offsets, blob = [], b""
    for data in keys + values:
        offsets.append((len(data), keys_start + len(blob)))
        blob += data + b"\0"
    header = struct.pack("<7I", MAGIC, 0, count, 7 * 4, 7 * 4 + 8 * count, 0, 0)
    tables = b"".join(struct.pack("<2I", length, offset) for length, offset in offsets)
    return header + tables + blob


def mo_messages(data: bytes) -> tuple[str, dict[str, str]]:
    """(locale, msgid -> translation) of a MO file written by `mo_bytes` (the header left out)."""
    magic, _revision, count, keys_at, values_at = struct.unpack_from("<5I", data)
    if magic != MAGIC:
        raise ValueError("not a little-endian gettext MO file")

    def string(table: int, index: int) -> str:
        length, offset = struct.unpack_from("<2I", data, table + 8 * index)
        return data[offset:offset + length].decode("utf-8")

    entries = {string(keys_at, index): string(values_at, index) for index in range(count)}
    header = entries.pop("", "")
    locale = next((line.split(":", 1)[1].strip() for line in header.splitlines() if line.startswith("Language:")), "")
    return locale, entries
