"""Which shard of a class a student belongs to (`batch --shard K/N`), and what a shard's folder keeps.

A student belongs to one shard by a hash of their id, never by their place in the sorted class: a
student who joins or leaves moves nobody else, so each shard's output folder, kept between runs
(the CI's cache), goes on holding the same students, and an unchanged submission is skipped.

A shard's folder holds only the students it owns: a result of a student who now belongs to another
shard (the class was split another way, or by an older rule) is moved out of `students/` into
`other-shards/` at the start of the run, where `merge` does not read it. Otherwise that result,
never graded again in this folder, could stand beside the owning shard's newer one.
"""
from __future__ import annotations

import hashlib
import logging
import re
from pathlib import Path

from autograder.core.files import result_file_name
from autograder.core.submission import UsageError
from autograder.i18n import _f

logger = logging.getLogger(__name__)

OTHER_SHARDS = "other-shards"  # OUT/other-shards/<student>.json: results this shard no longer owns


def parse_shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not match:
        raise UsageError(_f("--shard {shard}: expected K/N, e.g. 1/4", shard=repr(text)))
    k, n = int(match[1]), int(match[2])
    if not 1 <= k <= n:
        raise UsageError(_f("--shard {shard}: need 1 <= K <= N", shard=text))
    return k, n


def shard_of(name: str, count: int) -> int:
    """The shard (1 .. count) that `name` belongs to: a hash of the id as given (its bytes in UTF-8,
    a lone surrogate kept), the same on every machine and in every run."""
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def in_shard(names, shard: tuple[int, int] | None) -> list[str]:
    """The students of `names` (sorted) that shard K of N owns; every one without a shard."""
    names = sorted(names)
    if shard is None:
        return names
    k, n = shard
    return [name for name in names if shard_of(name, n) == k]


def set_aside(out: Path, students_dir: Path, known: dict, shard: tuple[int, int] | None, log) -> dict:
    """Move the results of the students of the folder (`known`: {student: stored}) that another shard
    owns into OUT/other-shards/; returns the students left, those this shard owns."""
    if shard is None:
        return known
    owned = set(in_shard(known, shard))
    kept = {}
    for name, stored in known.items():
        if name in owned:
            kept[name] = stored
            continue
        aside = out / OTHER_SHARDS
        aside.mkdir(exist_ok=True)
        file = result_file_name(name)
        (students_dir / file).replace(aside / file)
        log(_f("{name} belongs to shard {owner}/{count}: result moved to {folder} (that shard grades them)",
               name=name, owner=shard_of(name, shard[1]), count=shard[1], folder=aside))
    return kept
