"""The `merge` verb: one grades.csv from the output folders of several shards.

    python -m autograder merge DIR... --out DIR
"""
from __future__ import annotations

import sys
from pathlib import Path

from autograder.core.files import result_file_name, write_atomically
from autograder.core.submission import UsageError
from autograder.i18n import _f
from autograder.instructor.grades_table import write_table
from autograder.instructor.student_files import STUDENTS, Stored, grader_hash, read_student


def chosen_grades(folders: list[Path]) -> dict[str, tuple[Path, Stored]]:
    """student -> (the file kept, its grade), over every folder's students/*.json.

    A student normally appears in one folder. Where one appears in several (a roster changed
    between runs, a shard graded again), the choice never depends on which job finished last:
    a result without grader errors beats one with, then one from the current grader beats an
    older grader's, then the folder named later on the command line wins.
    """
    current = grader_hash()
    chosen: dict[str, tuple[tuple, Path, Stored]] = {}
    for order, folder in enumerate(folders):
        for path in sorted((folder / STUDENTS).glob("*.json")):
            stored = read_student(path)
            if stored is None:
                print(_f("autograder: warning: {path}: not a readable result, left out", path=path), file=sys.stderr)
                continue
            name = stored.student
            rank = (not stored.grader_errors, stored.provenance.get("grader_sha256") == current, order)
            if name in chosen:
                keep = path if rank > chosen[name][0] else chosen[name][1]
                print(_f("autograder: warning: {name} is in several folders; keeping {keep}", name=name, keep=keep),
                      file=sys.stderr)
                if keep != path:
                    continue
            chosen[name] = (rank, path, stored)
    return {name: (path, stored) for name, (_, path, stored) in chosen.items()}


def merge(folders: list[Path], out: Path) -> int:
    """Copy each student's chosen file (chosen_grades) into OUT/students/ and write OUT/grades.csv."""
    for folder in folders:
        if not (folder / STUDENTS).is_dir():
            raise UsageError(_f("{folder}: not a batch output folder (no {students}/ inside)", folder=folder,
                                students=STUDENTS))
    chosen = chosen_grades(folders)
    students_dir = out / STUDENTS
    students_dir.mkdir(parents=True, exist_ok=True)
    for name, (path, _) in chosen.items():
        target = students_dir / result_file_name(name)
        if target.resolve() != path.resolve():
            write_atomically(target, path.read_text(encoding="utf-8"))
    table = write_table(out, {name: stored for name, (_, stored) in chosen.items()})
    print(_f("{students} students from {folders} folders in {table}", students=len(chosen), folders=len(folders),
             table=table))
    return 0


def add_verb(verbs) -> None:
    merged = verbs.add_parser("merge", help="merge the output folders of sharded batches")
    merged.add_argument("folders", type=Path, nargs="+")
    merged.add_argument("--out", type=Path, required=True)
    merged.set_defaults(main=lambda args: merge(args.folders, args.out))
