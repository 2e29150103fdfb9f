"""The `similarity` verb: which students' code is alike, section by section, as evidence for an instructor.

    python -m autograder similarity CLASS_DIR [--out DIR]
    python -m autograder batch CLASS_DIR --similarity ...     (the same, after grading)

CLASS_DIR is what `batch` grades (one folder per student, or an nbgrader course
folder). For each section, every student's graded code (the code cells batch
extracts) is normalised (similarity_code.py), the code of every release the class
may have been given (similarity_release.py) subtracted as boilerplate, and copydetect fingerprints what is left, once per
submission: every k-gram of the normalised text, hashed. An inverted index from
fingerprint to submissions finds the pairs that share any fragment at all; no
pair is compared in full. A fragment that many students of the section share
(more than COMMON_SHARE of them, and more than COMMON_FLOOR or a group that shares
little else: idioms()) is an idiom of the exercise, not evidence, and is left out;
the others weigh by how rare they are (log(1 + students / students sharing it)),
so a fragment two students share counts far more than one ten share.

That is the text view. The computation's view (similarity_graph.py) fingerprints
what each graded function computes, whatever it was rewritten into, and is scored
the same way (GRAPH_EVIDENCE); a pair's `similarity` is the text's, raised part of
the way towards the computation's where that is higher (combined()).

A view's similarity is the weighted share of the smaller side's fingerprints that
the other side has (0 to 1), scaled down in proportion when the two share fewer
than EVIDENCE fingerprints (one common line is not a copied section);
`share_a`/`share_b` are the plain share of each side's fingerprints found in the
other. Written to DIR (default ./similarity; `batch
--similarity`: its --out folder, beside grades.csv):

    similarity.csv    section, student_a, student_b, similarity, share_a, share_b, text, computation: one row
                      per pair and section at or above FLOOR, strongest first (ids spreadsheet-safe, as in
                      grades.csv); text and computation are each view's similarity
    similarity.json   the same pairs as data, every section compared into DIR so far (similarity_term.py)
    similarity.html   the pairs ranked, per section and across sections (similarity_report.py)

Evidence, never a verdict: nothing here changes a score, and nothing of it goes
into a student's feedback or Gradescope results.
"""
from __future__ import annotations

import io
import json
import logging
import math
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from autograder.core.extract import Extracted, extract
from autograder.core.files import Refused, read_inside, spreadsheet_safe, write_bytes_atomically
from autograder.core.sections import SECTIONS, Section
from autograder.core.submission import UsageError, section_file
from autograder.i18n import _, _f
from autograder.instructor.roster import discover
from autograder.instructor.student_files import STUDENTS
from autograder.instructor.similarity_code import Unit, cleaned, names_given, section_units, units_of
from autograder.instructor.similarity_graph import computation_fingerprints
from autograder.instructor.similarity_release import cell_text, course_releases, released

logger = logging.getLogger(__name__)

K = 24  # characters per fingerprinted k-gram of the normalised text (a short statement)
COMMON_SHARE, COMMON_FLOOR = 0.2, 10  # a fragment more students share than both is an idiom
GROUP_EVIDENCE = 100  # fragments a group of students shares only among them, past which it is not an idiom
EVIDENCE = 100  # shared fragments (about four statements) below which a pair's similarity is scaled down
GRAPH_EVIDENCE, GRAPH_GROUP_EVIDENCE = 80, 30  # the same for the computation's fingerprints (fewer, larger)
COMPUTATION = 0.5  # how far a computation alike raises a pair's similarity from its text's towards its own
FLOOR = 0.2  # pairs below this similarity are left out of the CSV and the report
CSV_NAME, HTML_NAME = "similarity.csv", "similarity.html"


@dataclass
class Submission:
    student: str
    units: list[Unit]
    hashes: object = None  # numpy int64 array: the compared text's fingerprints, sorted, without boilerplate
    graph: object = None  # numpy int64 array: the computation's fingerprints (similarity_graph.py), sorted

    @property
    def shown(self) -> str:
        return "\n\n".join(f"# {unit.label}\n{unit.shown}" for unit in self.units)

    @property
    def compared(self) -> str:
        return "\n\n".join(f"\n{unit.compared}" for unit in self.units)  # line for line with `shown`


@dataclass
class Pair:
    section: str
    student_a: str
    student_b: str
    similarity: float
    share_a: float
    share_b: float
    text: float | None = 0.0  # the text view's similarity; None: no evidence (a side holds no rare fragment)
    computation: float | None = 0.0  # the computation's view (similarity_graph.py); None: no evidence
    # the rare wrong answers both returned (similarity_answers.py; with a batch's records only), and their weight
    wrong_answers: list = field(default_factory=list)
    answer_weight: float = 0.0


@dataclass
class SectionResult:
    section: Section
    submissions: dict[str, Submission]
    boilerplate: object = None  # numpy array: the released code's fingerprints
    pairs: list[Pair] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # one line per student left out, and why
    earlier: str | None = None  # when an earlier run compared it (its pairs kept, no code: similarity_term.py)
    carrying: dict[str, int] = field(default_factory=dict)  # view -> submissions with evidence enough (evidence())
    counted: int = 0  # how many students that earlier run compared

    def fingerprint(self, student: str):
        """copydetect's full fingerprint of a student's code (with the positions of each fragment, for
        highlighting), made again when the report needs it: only the hashes are kept for everyone."""
        return fingerprint(self.submissions[student].compared, self.boilerplate)


# --------------------------------------------------------------------------- fingerprints


def fingerprint(text: str, boilerplate=None):
    """copydetect's fingerprint of already normalised text: every K-gram (window 1, so the same text
    always gives the same fingerprints), the boilerplate's left out."""
    from copydetect import CodeFingerprint

    return CodeFingerprint("code.py", K, 1, boilerplate=boilerplate, filter=False, fp=io.StringIO(text))


def without_released_cells(data: bytes, released: frozenset[str]) -> bytes:
    """A notebook's bytes without the code cells the student left exactly as released (the setup,
    the given code): boilerplate, and most of the cost of extracting. Anything unreadable is left
    as it is, for extract() to say what is wrong with it."""
    try:
        notebook = json.loads(data)
        notebook["cells"] = [cell for cell in notebook["cells"] if not (
            isinstance(cell, dict) and cell.get("cell_type") == "code" and cell_text(cell) in released)]
        return json.dumps(notebook).encode("utf-8")
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return data


def read_code(folder: Path, section: Section, released: frozenset[str] = frozenset()) -> Extracted | None:
    """A student's code cells of `section`, read and extracted as grading reads them, less the cells in
    `released`; None when not handed in."""
    found = section_file(folder, section)
    if found is None:
        return None
    try:
        data = read_inside(folder, found)
    except Refused as error:
        return Extracted([], str(error))
    if found.endswith(".ipynb"):
        data = without_released_cells(data, released)
    try:
        return extract(Path(found).name, data)
    except (ValueError, RecursionError) as error:  # text extraction cannot read: this student left out, not the report
        return Extracted([], _f("{file} could not be read as code ({error})", file=found,
                                error=f"{type(error).__name__}: {error}"))


def section_submissions(section: Section, students: dict[str, Path], code=None,
                        courses: tuple[Path, ...] = ()) -> SectionResult:
    """Every student's normalised code of `section`, fingerprinted once, the code of every release the class
    may have been given subtracted (similarity_release.py: English, Chinese, the course's own release/).

    `code(student, section)` gives their extracted cells (default: read_code on their folder)."""
    import numpy as np
    from copydetect.utils import get_document_fingerprints

    given_code = released(section, courses)
    given = frozenset().union(*(names_given(list(cells)) for cells in given_code.cells))
    given_graph: set[int] = set()
    for cells in given_code.cells:
        statements, kept = cleaned(list(cells), section.names, given)
        given_graph |= computation_fingerprints(statements, section.names, kept)
    per_release = [section_units(list(cells), section.names, given) for cells in given_code.cells]
    stub_texts = {unit.compared for units in per_release for unit in units}
    hashes = set()
    for units in per_release:  # each release on its own: no fragment made across two of them
        hashes.update(fingerprint("\n\n".join(unit.compared for unit in units)).hashes)
    boilerplate = np.array(sorted(hashes))
    result = SectionResult(section, {}, boilerplate)
    for student, folder in students.items():
        extracted = code(student, section) if code else read_code(folder, section, given_code.sources)
        if extracted is None:
            continue
        if extracted.problem:
            result.problems.append(f"{student}: {section.id}: {extracted.problem}")
            continue
        statements, kept = cleaned(extracted.cells, section.names, given)
        computation = computation_fingerprints(statements, section.names, kept) - given_graph  # before units_of
        units = [u for u in units_of(statements, kept, section.names) if u.compared not in stub_texts]
        submission = Submission(student, units)
        hashes, _ = get_document_fingerprints(submission.compared, K, 1, boilerplate)  # copydetect's, as fingerprint()
        submission.hashes = np.array(sorted(hashes), dtype=np.int64)
        submission.graph = np.array(sorted(computation), dtype=np.int64)
        if len(submission.hashes):
            result.submissions[student] = submission
    return result


# --------------------------------------------------------------------------- the index


def idioms(holders: dict[int, list[int]], count: int, group_evidence: int = GROUP_EVIDENCE) -> set[int]:
    """The fingerprints that are idioms of the exercise: shared by more than COMMON_SHARE of the `count`
    students, and either by more than COMMON_FLOOR of them, or by a group of students who share little else
    (fewer than `group_evidence` fingerprints held by exactly that group). In a class of ten an obvious line
    three students wrote is an idiom; three students who copied a whole section are not."""
    widely = {value: tuple(where) for value, where in holders.items() if len(where) > COMMON_SHARE * count}
    together: dict[tuple, int] = {}
    for group in widely.values():
        together[group] = together.get(group, 0) + 1
    return {value for value, group in widely.items()
            if len(group) > COMMON_FLOOR or together[group] < group_evidence}


def rare_fingerprints(hashes: list, group_evidence: int = GROUP_EVIDENCE) -> tuple[dict[int, list[int]], dict[int, float]]:
    """(fingerprint -> the submissions holding it, fingerprint -> its weight), idioms left out; `hashes`: each
    submission's fingerprints."""
    holders: dict[int, list[int]] = {}
    for index, held in enumerate(hashes):
        for value in held.tolist():
            holders.setdefault(value, []).append(index)
    count = len(hashes)
    common = idioms(holders, count, group_evidence)
    rare = {value: where for value, where in holders.items() if value not in common}
    weights = {value: math.log(1 + count / len(where)) for value, where in rare.items()}
    return rare, weights


def shared_weights(rare: dict[int, list[int]], weights: dict[int, float], count: int):
    """(pair keys a * count + b, their summed weights, their fingerprint counts), for every pair sharing a
    rare fingerprint: the fingerprints grouped by how many hold them, each group's pairs made at once."""
    import numpy as np

    by_size: dict[int, list[int]] = {}
    for value, where in rare.items():
        if len(where) > 1:
            by_size.setdefault(len(where), []).append(value)
    keys, values = [np.zeros(0, dtype=np.int64)], [np.zeros(0)]
    for size, group in by_size.items():
        holders = np.array([rare[value] for value in group], dtype=np.int64)  # (fingerprints, size)
        first, second = np.triu_indices(size, 1)
        keys.append((holders[:, first] * count + holders[:, second]).ravel())
        values.append(np.repeat(np.array([weights[value] for value in group]), len(first)))
    keys, values = np.concatenate(keys), np.concatenate(values)
    pairs, inverse = np.unique(keys, return_inverse=True)
    return pairs, np.bincount(inverse, weights=values), np.bincount(inverse)


@dataclass
class View:
    """One view's scores of a section's pairs: pair key a * count + b -> its similarity, and each side's
    rare fingerprints shared with the other (for the text view's shares)."""
    similarity: dict[int, float]
    shared: dict[int, int]
    sizes: list[int]


def view_scores(hashes: list, evidence: int, group_evidence: int) -> View:
    """Each pair's weighted share of the smaller side's rare fingerprints that the other holds, scaled down in
    proportion where the two share fewer than `evidence` of them (too little code to tell)."""
    count = len(hashes)
    rare, weights = rare_fingerprints(hashes, group_evidence)
    totals = [sum(weights.get(value, 0.0) for value in held.tolist()) for held in hashes]
    sizes = [sum(1 for value in held.tolist() if value in rare) for held in hashes]
    keys, shared, matched = shared_weights(rare, weights, count)
    scores, numbers = {}, {}
    for key, weight, number in zip(keys.tolist(), shared.tolist(), matched.tolist()):
        a, b = divmod(key, count)
        smaller = min(totals[a], totals[b])
        scores[key] = min(weight / smaller * min(1.0, number / evidence), 1.0) if smaller > 0 else 0.0
        numbers[key] = number
    return View(scores, numbers, sizes)


def combined(text: float, computation: float) -> float:
    """A pair's similarity: never below its text's; a computation alike raises it, in part only (COMPUTATION
    of the way), since independent hands often compute a short exercise alike and the text can still tell
    them apart."""
    return max(text, COMPUTATION * computation + (1 - COMPUTATION) * text)


def score_pairs(result: SectionResult, answers: dict | None = None) -> list[Pair]:
    """Every pair of the section at or above FLOOR in either view, or sharing a rare wrong answer (`answers`:
    similarity_answers.shared_answers), strongest first (ties: by the ids): its similarity is the text's,
    raised by the computation's (combined())."""
    import numpy as np

    answers = answers or {}
    submissions = [result.submissions[name] for name in sorted(result.submissions)]
    count = len(submissions)
    if count < 2:
        return with_answers([], answers, result.section.id)
    text = view_scores([s.hashes for s in submissions], EVIDENCE, GROUP_EVIDENCE)
    graph = view_scores([s.graph if s.graph is not None else np.zeros(0, dtype=np.int64) for s in submissions],
                        GRAPH_EVIDENCE, GRAPH_GROUP_EVIDENCE)
    result.carrying = {"text": sum(size >= EVIDENCE for size in text.sizes),
                       "computation": sum(size >= GRAPH_EVIDENCE for size in graph.sizes)}
    index = {s.student: position for position, s in enumerate(submissions)}
    asked = {index[a] * count + index[b] for a, b in answers if a in index and b in index}
    pairs = []
    for key in sorted(set(text.similarity) | set(graph.similarity) | asked):
        a, b = divmod(key, count)
        by_text, by_graph = text.similarity.get(key, 0.0), graph.similarity.get(key, 0.0)
        similarity = combined(by_text, by_graph)
        if similarity >= FLOOR or key in asked:
            number = text.shared.get(key, 0)
            pairs.append(Pair(result.section.id, submissions[a].student, submissions[b].student,
                              round(similarity, 4), round(number / max(text.sizes[a], 1), 4),
                              round(number / max(text.sizes[b], 1), 4), evidence(by_text, text, a, b),
                              evidence(by_graph, graph, a, b)))
    return with_answers(pairs, answers, result.section.id)


def with_answers(pairs: list[Pair], answers: dict, section: str) -> list[Pair]:
    """`pairs` with the wrong answers each shares, and a pair for each two students who share one but whose
    code was not compared (one side held no code left to compare: no evidence from it), strongest first."""
    from autograder.instructor.similarity_answers import weight

    known = {(p.student_a, p.student_b): p for p in pairs}
    for (a, b), shared in answers.items():
        pair = known.get((a, b))
        if pair is None:
            pair = known[(a, b)] = Pair(section, a, b, 0.0, 0.0, 0.0, None, None)
        pair.wrong_answers, pair.answer_weight = shared, weight(shared)
    return sorted(known.values(), key=lambda p: (-p.similarity, -p.answer_weight, p.student_a, p.student_b))


def evidence(value: float, view: View, a: int, b: int) -> float | None:
    """A view's figure for a pair, or None where it has no evidence: one side holds no fragment that is not an
    idiom of the class (a short correct function many hands write alike), so 0 would claim a difference."""
    return None if min(view.sizes[a], view.sizes[b]) == 0 else round(value, 4)


def compare_section(section: Section, students: dict[str, Path], code=None,
                    courses: tuple[Path, ...] = (), answers: dict | None = None) -> SectionResult:
    """One section compared; `answers`: student -> their wrong answers in it (similarity_answers.py)."""
    from autograder.instructor.similarity_answers import shared_answers

    result = section_submissions(section, students, code, courses)
    result.pairs = score_pairs(result, shared_answers(answers or {}))
    return result


def compare(students: dict[str, Path], sections=SECTIONS, code=None, jobs: int | None = None,
            courses: tuple[Path, ...] = (), answers: dict | None = None) -> list[SectionResult]:
    """Each section's submissions and pairs; the sections shared out between `jobs` processes (default:
    one per CPU) when the students' code is read from their folders. `courses`: the release/ folders of
    the class's nbgrader course (similarity_release.course_releases), whose code is given too. `answers`:
    section id -> student -> wrong answers (similarity_answers.class_answers), where a batch graded the class."""
    import threading

    answers = answers or {}
    each = [answers.get(section.id, {}) for section in sections]
    jobs = min(jobs or os.cpu_count() or 1, len(sections))
    if jobs < 2 or code is not None or threading.active_count() > 1:  # forking a threaded process is unsafe
        return [compare_section(section, students, code, courses, held) for section, held in zip(sections, each)]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # forked: the children start with the grader imported, and read only files (no student code runs)
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
        return list(pool.map(compare_section, sections, [students] * len(sections), [None] * len(sections),
                             [courses] * len(sections), each))


# --------------------------------------------------------------------------- output


def csv_text(results: list[SectionResult]) -> str:
    """similarity.csv: every pair above the floor, each section strongest first; ids as grades.csv writes them."""
    import pandas as pd

    rows = [{"section": p.section, "student_a": spreadsheet_safe(p.student_a),
             "student_b": spreadsheet_safe(p.student_b), "similarity": p.similarity,
             "share_a": p.share_a, "share_b": p.share_b, "text": p.text, "computation": p.computation,
             "same_wrong_answers": len(p.wrong_answers)}
            for r in results for p in r.pairs]
    columns = ["section", "student_a", "student_b", "similarity", "share_a", "share_b", "text", "computation",
               "same_wrong_answers"]
    return pd.DataFrame(rows, columns=columns).to_csv(index=False)


def write(results: list[SectionResult], out: Path, source: str) -> tuple[Path, Path]:
    """The report of `results` joined with the sections earlier runs compared into `out` (similarity_term.py)."""
    from autograder.instructor.similarity_report import render
    from autograder.instructor.similarity_term import joined, record

    out.mkdir(parents=True, exist_ok=True)
    results = joined(results, out, Pair, SectionResult)
    record(results, out)
    # "replace": a lone surrogate a notebook's JSON may hold is written as "?"
    write_bytes_atomically(out / CSV_NAME, csv_text(results).encode("utf-8", "replace"))
    write_bytes_atomically(out / HTML_NAME, render(results, source).encode("utf-8", "replace"))
    return out / CSV_NAME, out / HTML_NAME


def run(class_dir: Path, out: Path, students: dict[str, Path] | None = None, sections=SECTIONS,
        grades: Path | None = None) -> int:
    """Compare the class in `class_dir` (or the `students` batch already found) and write the report;
    `grades`: the folder a batch graded the class into, whose records give each student's wrong answers."""
    from autograder.instructor.similarity_answers import class_answers

    students = discover(class_dir) if students is None else students
    if not students:
        raise UsageError(_f("{folder}: no student submissions found (expected one folder per student)",
                            folder=class_dir))
    if grades is not None and not (Path(grades) / STUDENTS).is_dir():
        raise UsageError(_f("{folder}: not a batch's output folder (it has no students/ folder of grades)",
                            folder=grades))
    results = compare(students, sections, courses=course_releases(class_dir), answers=class_answers(grades))
    for result in results:
        for problem in result.problems:
            logger.warning(_f("autograder: similarity: left out {problem}", problem=problem.splitlines()[0]))
    try:
        csv_path, html_path = write(results, out, str(class_dir))
    except OSError as error:
        print(_f("autograder: error: cannot write the similarity report to {out}: {error}", out=out, error=error),
              file=sys.stderr)
        return 1
    pairs = sum(len(r.pairs) for r in results)
    print(_f("similarity: {students} students, {pairs} pair(s) at or above {floor:g} in {csv} and {html}",
             students=len(students), pairs=pairs, floor=FLOOR, csv=csv_path, html=html_path))
    return 0


def add_verbs(verbs) -> None:
    verb = verbs.add_parser("similarity", help=_("which students' code is alike, per section (evidence for the "
                                               "instructor; changes no score)"))
    verb.add_argument("submitted", type=Path, metavar="CLASS_DIR",
                      help=_("nbgrader's submitted/ folder, or one folder per student"))
    verb.add_argument("--out", type=Path, default=Path("similarity"), metavar="DIR",
                      help=_f("where to write {csv} and {html} (default %(default)s)", csv=CSV_NAME, html=HTML_NAME))
    verb.add_argument("--grades", type=Path, default=None, metavar="DIR",
                      help=_("the folder `batch` graded this class into: pairs returning the same rare wrong "
                             "answers are shown too"))
    verb.set_defaults(main=main)


def main(args) -> int:
    return run(args.submitted, args.out, grades=args.grades)
