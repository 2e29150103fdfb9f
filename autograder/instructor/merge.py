"""The `merge` verb: one output folder from several (shards of a class, weeks of a term).

    python -m autograder merge DIR... --out DIR

Joined per student and per section: a student in one folder is copied as they are; a student in
several gets each section from the best of the files that hold it (the rule in `candidates`).
"""
from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from autograder.core.files import result_file_name, write_atomically
from autograder.core.submission import UsageError
from autograder.i18n import _, _f
from autograder.instructor.grades_table import write_table
from autograder.instructor.student_files import GRADED, STUDENTS, Stored, grader_hash, read_student, write_student
from autograder.instructor.term import assigned_to, held, in_course_order

logger = logging.getLogger(__name__)


def candidates(folders: list[Path]) -> dict[str, list[tuple[tuple, Path, Stored]]]:
    """student -> [(rank, file, grade)] over every folder's students/*.json. The rank orders the
    files of one student: a result without grader errors beats one with, then one from the current
    grader beats an older grader's, then the folder named later on the command line wins; never
    which job finished last."""
    current = grader_hash()
    found: dict[str, list[tuple[tuple, Path, Stored]]] = {}
    for order, folder in enumerate(folders):
        for path in sorted((folder / STUDENTS).glob("*.json")):
            stored = read_student(path)
            if stored is None:
                logger.warning(_f("autograder: warning: {path}: not a readable result, left out", path=path))
                continue
            rank = (not stored.grader_errors, stored.provenance.get("grader_sha256") == current, order)
            found.setdefault(stored.student, []).append((rank, path, stored))
    return found


def joined(name: str, files: list[tuple[tuple, Path, Stored]]) -> Stored:
    """One student's grade from several folders' files, section by section: each section from the
    best-ranked file that holds it (candidates). The sections assigned are those of every file."""
    files = sorted(files, key=lambda item: item[0], reverse=True)
    chosen = {}
    for _time, path, stored in files:
        for section_id in held(stored):
            chosen.setdefault(section_id, (path, stored))
    used = [stored for _, _, stored in files if any(stored is kept for _, kept in chosen.values())] or [files[0][2]]
    sections = [next(s for s in chosen[k][1].grade.sections if s.id == k) for k in in_course_order(chosen)]
    grade = replace(used[0].grade, sections=sections, weak=any(stored.grade.weak for stored in used))
    graded = {k: stored.graded[k] for k, (_, stored) in chosen.items() if k in stored.graded}
    errors = [error for stored in used for error in stored.grader_errors]
    provenance = {**used[0].provenance, "student": name, "grader_errors": errors, GRADED: graded,
                  "sections": in_course_order(s for _, _, stored in files for s in assigned_to(stored))}
    picked = ", ".join(f"{k} ({path})" for k, (path, _) in chosen.items()) or str(files[0][1])
    logger.warning(_f("autograder: warning: {name} is in several folders; keeping each section from the best one: "
                      "{picked}", name=name, picked=picked))
    return Stored(name, grade, provenance)


def merge(folders: list[Path], out: Path) -> int:
    """Each student's grade, joined over the folders (one folder's file is copied as it is), into
    OUT/students/, and OUT/grades.csv of them all."""
    for folder in folders:
        if not (folder / STUDENTS).is_dir():
            raise UsageError(_f("{folder}: not a batch output folder (no {students}/ inside)", folder=folder,
                                students=STUDENTS))
    found = candidates(folders)
    students_dir = out / STUDENTS
    students_dir.mkdir(parents=True, exist_ok=True)
    merged: dict[str, Stored] = {}
    for name, files in found.items():
        target = students_dir / result_file_name(name)
        if len(files) == 1:
            _, path, merged[name] = files[0]
            if target.resolve() != path.resolve():
                write_atomically(target, path.read_text(encoding="utf-8"))
            continue
        one = joined(name, files)
        merged[name] = write_student(students_dir, one.grade, one.provenance, graded=bool(one.grade.sections))
    table = write_table(out, merged)
    print(_f("{students} students from {folders} folders in {table}", students=len(merged), folders=len(folders),
             table=table))
    return 0


def add_verb(verbs) -> None:
    merged = verbs.add_parser("merge", help=_("merge the output folders of sharded batches"))
    merged.add_argument("folders", type=Path, nargs="+")
    merged.add_argument("--out", type=Path, required=True)
    merged.set_defaults(main=lambda args: merge(args.folders, args.out))
