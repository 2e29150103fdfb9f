"""The similarity tests' class of known ground truth, as notebooks a student would hand in.

Six independent hands solve every section: the reference solutions (family a),
and families b, c, d (similarity_corpus.py), e and f (similarity_more_hands.py),
each with its part 2 (sections 08 to 13) from similarity_part_two.py.
Every hand's solution is also handed in under each disguise of
similarity_disguises.py alone and all of them combined, as another student, in
a class of its own per disguise (disguise_classes). Students are named
<family>_<how>: two students of one family are a planted copy, two of different
families independent. Used by tests/test_similarity.py and by
benchmarks/similarity_vs_dolos.py, so both measure the same class.
"""
from __future__ import annotations

import functools
import json
import re
from itertools import combinations
from pathlib import Path

from similarity_corpus import FAMILY_B, FAMILY_C, FAMILY_D
from similarity_disguises import DISGUISES, combined
from similarity_more_hands import FAMILY_E, FAMILY_F
import similarity_part_two as part_two
from similarity_rewrites import REWRITES

from autograder.core.sections import SECTIONS as COURSE_SECTIONS

ROOT = Path(__file__).resolve().parents[1]
PART_ONE = {"b": FAMILY_B, "c": FAMILY_C, "d": FAMILY_D, "e": FAMILY_E, "f": FAMILY_F}
# family -> section id -> its source, both parts (besides the reference, "a")
HANDS = {family: {**hand, **getattr(part_two, f"FAMILY_{family.upper()}")} for family, hand in PART_ONE.items()}
# the sections every hand was written for
SECTIONS = tuple(s for s in COURSE_SECTIONS if all(s.id in hand for hand in HANDS.values()))
HOWS = [*DISGUISES, "combined"]  # the text's disguises
REWRITTEN = [*REWRITES]  # rewrites that keep the computation (similarity_rewrites.py)


def blocks_of(source: str) -> list[tuple[str, str]]:
    """`# %% name` blocks of a corpus source, in order."""
    parts = re.split(r"(?m)^# %% (\w+)\n", source)
    return [(parts[i], parts[i + 1].strip() + "\n") for i in range(1, len(parts), 2)]


def reference_blocks(section) -> list[tuple[str, str]]:
    from course.builder.examples import correct_answers

    return list(correct_answers(section).items())


def originals(section) -> dict[str, list[tuple[str, str]]]:
    """family -> its blocks of `section`."""
    return {"a": reference_blocks(section), **{family: blocks_of(hand[section.id]) for family, hand in HANDS.items()}}


TEMPLATES = {"en": ROOT / "student_template", "zh": ROOT / "student_template" / "zh"}  # the releases, by language


@functools.cache
def released_text(notebook: str, language: str = "en") -> str:
    return (TEMPLATES[language] / notebook).read_text(encoding="utf-8")


def write_notebook(folder: Path, section, blocks, language: str = "en") -> None:
    """The released notebook (of `language`) with each solution cell holding the student's block for that
    name (its JSON edited as data: reading and validating it with nbformat for each of the classes' 700
    notebooks took most of the tests' time)."""
    notebook = json.loads(released_text(section.notebook, language))
    answers = dict(blocks)
    for cell in notebook["cells"]:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if cell.get("metadata", {}).get("nbgrader", {}).get("solution") and grade_id in answers:
            cell["source"] = answers[grade_id]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / section.notebook).write_text(json.dumps(notebook, indent=1), encoding="utf-8")


def class_plan(hows=None) -> dict[str, dict[str, list]]:
    """student -> section id -> their blocks: every family's original, and its copy under each disguise in
    `hows` (default: each alone and all combined)."""
    hows = HOWS if hows is None else hows
    plan: dict[str, dict[str, list]] = {}
    for section in SECTIONS:
        graded = set(section.names)
        for family, blocks in originals(section).items():
            plan.setdefault(f"{family}_original", {})[section.id] = blocks
            for how in hows:
                disguise = {**DISGUISES, **REWRITES}.get(how, combined)
                plan.setdefault(f"{family}_{how.replace(' ', '-')}", {})[section.id] = disguise(blocks, graded)
    return plan


def disguise_classes(hows=None) -> dict[str, dict[str, dict[str, list]]]:
    """One class per disguise of `hows` (default: the text's, and all combined): the six originals and a copy
    of each under it. Copies stay a minority, as in a real class: in one class of every copy, the nine
    students of a family would share each fragment the family has, and the idiom filter would see a
    different class."""
    hows = HOWS if hows is None else hows
    plan = class_plan(hows)
    return {how: {student: sections for student, sections in plan.items()
                  if student.endswith(("_original", f"_{how.replace(' ', '-')}"))} for how in hows}


def write_class(folder: Path, plan: dict[str, dict[str, list]]) -> Path:
    for student, sections in plan.items():
        for section in SECTIONS:
            write_notebook(folder / student, section, sections[section.id])
    return folder


def planted(a: str, b: str, *where) -> bool:
    """Whether students `a` and `b` (of the class `where` names, if any) are a planted copy: the same family."""
    return a.split("_")[0] == b.split("_")[0]


def every_pair(students, scores: dict[tuple[str, str], float]) -> dict[tuple[str, str], float]:
    """Every pair of `students` (sorted ids), 0 for a pair `scores` does not list."""
    return {pair: scores.get(pair, 0.0) for pair in combinations(sorted(students), 2)}


def auc(scores: dict[tuple[str, str], float]) -> float:
    """The chance that a planted pair outscores an independent one (ties count half)."""
    copies = sorted(s for pair, s in scores.items() if planted(*pair))
    others = sorted(s for pair, s in scores.items() if not planted(*pair))
    import bisect

    wins = sum(bisect.bisect_left(others, c) + 0.5 * (bisect.bisect_right(others, c) - bisect.bisect_left(others, c))
               for c in copies)
    return wins / (len(copies) * len(others))


def separation(scores: dict[tuple[str, str], float]) -> tuple[float, float]:
    """(the lowest planted pair's score, the highest independent pair's score)."""
    return (min(s for pair, s in scores.items() if planted(*pair)),
            max(s for pair, s in scores.items() if not planted(*pair)))
