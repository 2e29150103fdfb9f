"""The lines a student meets most, in English and Chinese side by side: a table for a translator's
second reading of what matters most.

    python benchmarks/most_met_lines.py [--top 30] [--out most-met-lines.md]

A student's run is stood for by each mistake of the catalogues of common mistakes
(tests/catalogues/mistakes_<id>.py, one section each, graded as `grade` grades it) and by the partial
example (examples/partial, every section, graded as `check` grades it). Each is graded twice, in
English and in Chinese, and the two results are read side by side, check by check. A line is
counted once for each run that shows it:
  - the title of a failing check (the table's "failed 0/1 <title>" line),
  - the first sentence of a failing check's message, and the rest of it (most often the mistake
    it looks like),
  - a hint (autograder/core/hints.py) that a failing check's message gives,
  - the first sentence of a section's note (a cell's error, "not started yet"),
  - and, in every run, the self-check's head line, the total line and the report's header.
Numbers do not tell lines apart (a line is counted by its English text with every number as N);
the table shows the line as one run met it. Grading everything twice takes a few minutes.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NUMBER = re.compile(r"\d+(?:\.\d+)?")
# a sentence ends at a full stop followed by a space (English) or at 。 (Chinese); not inside code (x.shape)
SENTENCE_END = re.compile(r"(?<=\.)\s|(?<=。)")


def first_sentence(text: str) -> str:
    return SENTENCE_END.split(text.strip(), 1)[0].strip()


def after_first_sentence(text: str) -> str:
    """What a message says after its first sentence: most often the mistake it looks like."""
    rest = SENTENCE_END.split(text.strip(), 1)[1:]
    return rest[0].strip() if rest else ""


def lines_met(result, head: str | None) -> list[tuple[str, str]]:
    """(kind, line) of everything `result` shows its student that this table counts, in order;
    head: the self-check's head line (None: a `grade` run, which has none)."""
    from autograder.core.hints import HINTS
    from autograder.feedback.formats import table
    from autograder.feedback.report import render_markdown

    found = [("head", head)] if head is not None else []
    for section in result.sections:
        found += [("note", first_sentence(note)) for note in section.notes]
        for check in section.checks:
            if check.passed:
                continue
            found.append(("check", check.name))
            if check.message:
                found.append(("message", first_sentence(check.message)))
                found.append(("diagnosis", after_first_sentence(check.message)))
            found += [("hint", hint.start) for hint in HINTS if hint.start in check.message]
    found.append(("total", table(result, student=True).rstrip("\n").splitlines()[-1]))
    found.append(("report", render_markdown(result).splitlines()[0]))
    return found


def grade_both(path: Path, visible_only: bool, launcher) -> list[tuple[str, str, str]]:
    """(kind, English line, Chinese line) of the run of the submission at `path`, graded in each language."""
    from autograder import i18n
    from autograder.core.grade import run_checks
    from autograder.core.submission import locate
    from autograder.sandbox.tiers import protection_line

    met = {}
    for language in ("en", "zh"):
        i18n.set_language(language)
        try:
            result = run_checks(locate(path), "cpu", visible_only=visible_only, launcher=launcher)
            met[language] = lines_met(result, protection_line(launcher.sandbox) if visible_only else None)
        finally:
            i18n.set_language("en")
    english, chinese = met["en"], met["zh"]
    if [kind for kind, _ in english] != [kind for kind, _ in chinese]:  # a hint met in one language only
        raise RuntimeError(f"the two languages showed different lines: {english} / {chinese}")
    return [(kind, line, other) for (kind, line), (_, other) in zip(english, chinese)]


def runs(launcher, say):
    """Every run's lines: the partial example's self-check, then each catalogued mistake's grading."""
    sys.path.insert(0, str(ROOT / "tests"))
    from catalogues import CATALOGUES

    yield grade_both(ROOT / "examples" / "partial", True, launcher)
    for section_id, catalogue in CATALOGUES.items():
        say(f"{section_id}: {len(catalogue.MISTAKES)} mistakes")
        for mistake in catalogue.MISTAKES:
            with tempfile.TemporaryDirectory() as folder:
                path = Path(folder) / f"{section_id}.py"
                path.write_text(mistake.source(section_id))
                yield grade_both(path, False, launcher)


EVERY_RUN = ("head", "total", "report")  # the lines each run shows once: always in the table


def most_met(all_runs, top: int) -> list[tuple[int, str, str, str]]:
    """(runs that met it, kind, English, Chinese) of the `top` lines met in most runs: every kind of
    EVERY_RUN, then the others, at most a third of them of one kind (else the checks' titles, met in
    many runs each, would fill the table)."""
    counts, example = Counter(), {}
    for lines in all_runs:
        keys = set()
        hints = {english for kind, english, _ in lines if kind == "hint"}
        for kind, english, chinese in lines:
            if not english or (kind == "diagnosis" and english in hints):  # a hint is counted as a hint
                continue
            key = (kind, NUMBER.sub("N", english))
            keys.add(key)
            example.setdefault(key, (english, chinese))
        counts.update(keys)
    taken, per_kind = [], Counter()
    ranked = sorted(counts.items(), key=lambda item: (item[0][0] not in EVERY_RUN, -item[1], item[0]))
    for (kind, text), count in ranked:
        if len(taken) < top and (kind in EVERY_RUN or per_kind[kind] < max(1, top // 3)):
            per_kind[kind] += 1
            taken.append((count, kind, *example[(kind, text)]))
    return taken


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(rows, run_count: int) -> str:
    lines = [f"The {len(rows)} lines met most in {run_count} graded runs (benchmarks/most_met_lines.py).", "",
             "| runs | kind | English | 中文 |", "|---:|---|---|---|"]
    lines += [f"| {count} | {kind} | {cell(english)} | {cell(chinese)} |" for count, kind, english, chinese in rows]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--out", type=Path, default=Path("most-met-lines.md"))
    parser.add_argument("--runs", type=Path, help="a JSON file of the graded runs' lines: read where it "
                        "exists (no grading), else written, to rank again without grading again")
    options = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from autograder.sandbox.zygote import Zygote

    started = time.monotonic()
    if options.runs and options.runs.exists():
        collected = json.loads(options.runs.read_text(encoding="utf-8"))
    else:
        launcher = Zygote()
        try:
            collected = list(runs(launcher, lambda text: print(text, file=sys.stderr)))
        finally:
            launcher.close()
        if options.runs:
            options.runs.write_text(json.dumps(collected, ensure_ascii=False), encoding="utf-8")
    options.out.write_text(markdown(most_met(collected, options.top), len(collected)), encoding="utf-8")
    print(f"{options.out}: the {options.top} lines met most in {len(collected)} runs "
          f"({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
