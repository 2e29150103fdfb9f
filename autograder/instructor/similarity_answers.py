"""The same wrong answers: pairs of students whose failing checks returned the same rare wrong values.

The grader runs every student's functions on the same inputs, and each failed comparison keeps a
fingerprint of the values it received (core/answers.py, in the grade's record). A mistake many
students make independently returns the same values for all of them (no √d_k, the wrong softmax
dim), so a wrong answer is evidence only where it is rare: not a mistake of the course's catalogue
(no holder's checks of the section named one: the same mistake fails that section's other checks
with values no catalogue lists), and held by two students, or by at most RARE_SHARE of those who
failed its check. A value two students share while the rest of the class's failures of the check differ
survives any rewrite of the code. Each shared answer weighs log(1 + failing / holders), as the text
view weighs its fragments by rarity.

Read from a batch's output folder (its students/ records), never from the students' folders: no
student code runs here.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

RARE_SHARE = 0.5  # an answer more of a check's failures share is a common mistake of the class


@dataclass(frozen=True)
class Answer:
    """One student's wrong answer to one check: the check's id and title, the fingerprint, and whether a check
    of the same section named a catalogued mistake of that student's (then the answer is likely its)."""
    check: str
    title: str
    digest: str
    shape: tuple
    values: tuple
    explained: bool = False


def class_answers(grades: Path | None) -> dict[str, dict[str, list[Answer]]]:
    """section id -> student -> their wrong answers, from the records a batch wrote into `grades`
    (its --out folder); empty where there is none."""
    if grades is None:
        return {}
    from autograder.instructor.student_files import STUDENTS
    from autograder.instructor.term import stored_students

    found: dict[str, dict[str, list[Answer]]] = {}
    for student, stored in stored_students(Path(grades) / STUDENTS).items():
        for section in stored.grade.sections:
            explained = any(c.mistake for c in section.checks)
            answers = [Answer(c.id or c.name, c.name, c.answer["digest"], tuple(c.answer["shape"]),
                              tuple(c.answer["values"]), explained) for c in section.checks if c.answer is not None]
            if answers:
                found.setdefault(section.id, {})[student] = answers
    return found


def shared_answers(answers: dict[str, list[Answer]]) -> dict[tuple[str, str], list[dict]]:
    """(student a, student b) with a < b -> the rare wrong answers both returned, each as data for the report
    and similarity.json: the check, its values, how many returned them and how many failed the check."""
    failing: dict[str, set[str]] = {}
    holders: dict[tuple[str, str], list[str]] = {}
    shown: dict[tuple[str, str], Answer] = {}
    explained: set[tuple[str, str]] = set()
    for student, held in answers.items():
        for answer in held:
            failing.setdefault(answer.check, set()).add(student)
            key = (answer.check, answer.digest)
            holders.setdefault(key, []).append(student)
            shown.setdefault(key, answer)
            if answer.explained:
                explained.add(key)
    pairs: dict[tuple[str, str], list[dict]] = {}
    for key, students in sorted(holders.items()):
        size, failed = len(set(students)), len(failing[key[0]])
        if size < 2 or key in explained or (size > 2 and size > RARE_SHARE * failed):
            continue  # nobody shares it, a catalogued mistake gives it, or it is a common mistake of this class
        answer = shown[key]
        data = {"check": answer.check, "title": answer.title, "shape": list(answer.shape),
                "values": list(answer.values), "students": size, "failing": failed,
                "weight": round(math.log(1 + failed / size), 4)}
        for a, b in combinations(sorted(set(students)), 2):
            pairs.setdefault((a, b), []).append(data)
    return pairs


def weight(shared: list[dict]) -> float:
    """How strong a pair's shared wrong answers are together (the sum of their weights)."""
    return round(sum(item["weight"] for item in shared), 4)
