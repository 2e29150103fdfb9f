"""The similarity of a term: each run's sections join those of the runs before it in one folder.

An instructor runs `batch --similarity` (or `similarity`) week after week into
one output folder, each time on that week's sections. Each run replaces the
pairs of the sections it compares and keeps those of every other section, as
the grades do (term.py): similarity.json holds every section's pairs as data
(never read back from the CSV or the page), with when they were compared and
how many students; similarity.csv and similarity.html are written from it.
A late rerun of week 1 replaces week 1's pairs, and week 2's stay.
"""
from __future__ import annotations

import json
import logging
import os
from dataclasses import MISSING, asdict, fields
from datetime import datetime, timezone
from pathlib import Path

from autograder.core.files import write_bytes_atomically
from autograder.core.sections import SECTIONS
from autograder.i18n import _f

logger = logging.getLogger(__name__)

TERM_NAME = "similarity.json"
FORMAT = 1


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def stored_sections(out: Path) -> dict[str, dict]:
    """section id -> {"compared": when, "students": how many, "pairs": [pair fields]} of the folder's earlier
    runs; an unreadable file is set aside (renamed, never lost) with one line saying so."""
    path = Path(out) / TERM_NAME
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        sections = data["sections"]
        if data.get("format") != FORMAT or not isinstance(sections, dict) \
                or not all(isinstance(s, dict) and isinstance(s.get("pairs"), list) for s in sections.values()):
            raise ValueError("not a similarity record of this grader")
        return sections
    except (OSError, ValueError, KeyError, TypeError) as error:
        aside = path.with_name(TERM_NAME + ".unreadable")
        os.replace(path, aside)
        logger.warning(_f("autograder: similarity: {file} could not be read ({error}); moved to {aside}, "
                          "the earlier sections' pairs are not joined", file=path, error=error, aside=aside))
        return {}


def earlier_results(stored: dict[str, dict], compared: set[str], pair_type, result_type) -> list:
    """The stored sections this run did not compare, as results holding their pairs only (no code)."""
    known = {f.name for f in fields(pair_type)}
    required = {f.name for f in fields(pair_type) if f.default is MISSING and f.default_factory is MISSING}
    required |= {"text", "computation"}  # older records have both; a pair without them is not one of ours
    found = []
    for section in SECTIONS:
        record = stored.get(section.id)
        if record is None or section.id in compared:
            continue
        pairs = [pair_type(**{k: v for k, v in pair.items() if k in known}) for pair in record["pairs"]
                 if isinstance(pair, dict) and required <= set(pair)]  # fields added since default
        found.append(result_type(section, {}, pairs=pairs, earlier=str(record.get("compared", "")),
                                 counted=int(record.get("students", 0))))
    return found


def joined(results: list, out: Path, pair_type, result_type) -> list:
    """This run's results and the earlier runs' other sections, in the course's order."""
    earlier = earlier_results(stored_sections(out), {r.section.id for r in results}, pair_type, result_type)
    order = {section.id: index for index, section in enumerate(SECTIONS)}
    return sorted([*results, *earlier], key=lambda r: order.get(r.section.id, len(order)))


def record(results: list, out: Path) -> None:
    """similarity.json: every section's pairs of `results` (this run's and the kept earlier ones)."""
    when = now()
    sections = {r.section.id: {"compared": r.earlier or when, "students": r.counted or len(r.submissions),
                               "pairs": [asdict(p) for p in r.pairs]} for r in results}
    text = json.dumps({"format": FORMAT, "sections": sections}, ensure_ascii=False, indent=1)
    write_bytes_atomically(Path(out) / TERM_NAME, text.encode("utf-8", "replace"))
