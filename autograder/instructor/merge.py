"""The `merge` verb: one output folder from several (shards of a class, weeks of a term).

    python -m autograder merge DIR... --out DIR

Joined per student and per section: a student in one folder is copied as they are; a student in
several gets each section from the file graded from the newest handed-in file (the rule in
`section_rank`), whatever the order of the folders, and each result it replaced is said, a line each.
"""
from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

from autograder.core.files import result_file_name, write_atomically
from autograder.core.submission import UsageError
from autograder.feedback.formats import terminal_text
from autograder.i18n import _, _f
from autograder.instructor.grades_table import write_table
from autograder.instructor.student_files import (GRADED, HANDED_IN, STUDENTS, Stored, grader_hash, read_student,
                                                 write_student)
from autograder.instructor.submission_time import as_utc
from autograder.instructor.term import assigned_to, held, in_course_order

logger = logging.getLogger(__name__)

EARLIEST = datetime.min.replace(tzinfo=timezone.utc)  # ranks a time that is not known below every known one


def candidates(folders: list[Path]) -> dict[str, list[tuple[Path, Stored]]]:
    """student -> [(file, grade)] over every folder's students/*.json, in the command line's order
    (which decides nothing: see `section_rank`)."""
    found: dict[str, list[tuple[Path, Stored]]] = {}
    for folder in folders:
        for path in sorted((folder / STUDENTS).glob("*.json")):
            stored = read_student(path)
            if stored is None:
                logger.warning(_f("autograder: warning: {path}: not a readable result, left out", path=path))
                continue
            found.setdefault(stored.student, []).append((path, stored))
    return found


def handed_in_time(stored: Stored, section_id: str) -> datetime | None:
    """When the file a section was graded from was handed in, as its provenance says (None: unknown)."""
    stamp = stored.graded.get(section_id, {}).get(HANDED_IN)
    return as_utc(stamp) if stamp else None


def section_rank(stored: Stored, section_id: str, current: str) -> tuple:
    """How one file's result of a section ranks among the folders' (the highest is kept): one graded
    without grader errors, then the one graded from the newest handed-in file, then one from the
    current grader, then the latest graded. Never the order of the folders on the command line, nor
    which job finished last: shards and weeks may be given in any order."""
    entry = stored.graded.get(section_id, {})
    graded_at = as_utc(entry["graded_at"]) if entry.get("graded_at") else file_graded_at(stored)
    grader = entry.get("grader_sha256") or stored.provenance.get("grader_sha256")
    return (not stored.grader_errors, section_id in stored.graded, handed_in_time(stored, section_id) or EARLIEST,
            grader == current, graded_at or EARLIEST)


def file_graded_at(stored: Stored) -> datetime:
    return as_utc(stored.provenance.get("graded_at") or "") or EARLIEST


def said_when(stored: Stored, section_id: str) -> str:
    moment = handed_in_time(stored, section_id)
    return (_f("handed in {time}", time=moment.isoformat(timespec="seconds")) if moment
            else _("handed-in time unknown"))


def section_points(stored: Stored, section_id: str) -> float:
    return sum(section.score for section in stored.grade.sections if section.id == section_id)


def replaced_line(name: str, section_id: str, kept: tuple[Path, Stored], other: tuple[Path, Stored]) -> str:
    """The line that says which result of a section `merge` kept and which it replaced."""
    return _f("merge: {name} {section}: kept {kept} ({kept_when}, {kept_points:g} points), replaced {other} "
              "({other_when}, {other_points:g} points)", name=terminal_text(name), section=section_id,
              kept=kept[0], kept_when=said_when(kept[1], section_id), kept_points=section_points(kept[1], section_id),
              other=other[0], other_when=said_when(other[1], section_id),
              other_points=section_points(other[1], section_id))


def same_result(a: Stored, b: Stored, section_id: str) -> bool:
    """Whether two files hold the same result of a section: graded from the same file, the same points."""
    files = [stored.graded.get(section_id, {}).get("files_sha256") for stored in (a, b)]
    return files[0] is not None and files[0] == files[1] and section_points(a, section_id) == section_points(b, section_id)


def joined(name: str, files: list[tuple[Path, Stored]], say=print) -> Stored:
    """One student's grade from several folders' files, section by section: each section from the
    file that ranks highest for it (section_rank), each other result of it that differs said
    replaced (`say`). The sections assigned are those of every file."""
    current = grader_hash()
    chosen: dict[str, tuple[Path, Stored]] = {}
    for section_id in in_course_order(s for _path, stored in files for s in held(stored)):
        holding = [(path, stored) for path, stored in files if section_id in held(stored)]
        ranked = sorted(holding, key=lambda item: (section_rank(item[1], section_id, current), str(item[0])),
                        reverse=True)
        chosen[section_id] = ranked[0]
        for other in ranked[1:]:
            if not same_result(ranked[0][1], other[1], section_id):
                say(replaced_line(name, section_id, ranked[0], other))
    # the files the sections come from, the latest graded first: its device, tier and time head the grade
    used = sorted({id(kept): (path, kept) for path, kept in chosen.values()}.values() or files[:1],
                  key=lambda item: (not item[1].grader_errors, file_graded_at(item[1]), str(item[0])), reverse=True)
    used = [stored for _path, stored in used]
    sections = [next(s for s in chosen[k][1].grade.sections if s.id == k) for k in in_course_order(chosen)]
    grade = replace(used[0].grade, sections=sections, weak=any(stored.grade.weak for stored in used))
    graded = {k: stored.graded[k] for k, (_path, stored) in chosen.items() if k in stored.graded}
    errors = [error for stored in used for error in stored.grader_errors]
    provenance = {**used[0].provenance, "student": name, "grader_errors": errors, GRADED: graded,
                  "sections": in_course_order(s for _path, stored in files for s in assigned_to(stored))}
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
            path, merged[name] = files[0]
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
