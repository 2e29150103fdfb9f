"""What a stopped `batch --force` had still to grade again, so that running it again without --force
finishes it.

`--force` grades every student again, even those whose stored grade is current. Stopped half way
(Ctrl-C, a killed job), running the same command again would start everyone over, and running it
without --force would keep the old grades of those the forced run had not reached. So a forced run
first lists every student it is to grade again in OUT/force-pending.json, and each run crosses off
those it grades; a run without --force grades the listed ones again too. The file is gone once the
list is empty.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from autograder.core.files import write_atomically
from autograder.i18n import _f

PENDING = "force-pending.json"


def read_pending(out: Path) -> set[str]:
    """The students a forced run has still to grade again (none when the file is missing or not ours)."""
    try:
        data = json.loads((Path(out) / PENDING).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return set()
    students = data.get("students") if isinstance(data, dict) else None
    return {name for name in students if isinstance(name, str)} if isinstance(students, list) else set()


def write_pending(out: Path, students: set[str]) -> None:
    """Keep `students` as still to grade again; an empty list removes the file."""
    path = Path(out) / PENDING
    if students:
        write_atomically(path, json.dumps({"students": sorted(students)}, indent=2, ensure_ascii=False) + "\n")
    else:
        path.unlink(missing_ok=True)


@dataclass
class Forced:
    """What a run knows of the forced list: the command line it was given (for the hint after Ctrl-C),
    the students still to grade again (`pending`) and those this run grades (`regrading`)."""
    resume: list[str] | None
    pending: set[str]
    regrading: set[str]

    def left_after(self, graded: dict) -> set[str]:
        """The pending students once those of `graded` that this run graded are crossed off."""
        return self.pending - (self.regrading & set(graded))


def interrupted_hint(count: int, resume: list[str] | None) -> str:
    """What to do after Ctrl-C. `resume`: the command line's arguments, when known; a run with
    --force graded everyone again, so running it again would regrade the ones just saved: the
    command that resumes is the same without --force."""
    forced = [arg for arg in resume or [] if arg.startswith("--f") and "--force".startswith(arg)]
    if not forced:
        return _f("interrupted: {count} graded in this run are saved; run the same command again to grade the rest",
                  count=count)
    import shlex

    command = shlex.join(["python", "-m", "autograder", *(arg for arg in resume if arg not in forced)])
    return _f("interrupted: {count} graded in this run are saved; to grade the rest, run the command again "
              "without --force (with it, everyone is graded again): {command}", count=count, command=command)
