"""A batch's file for one student, DIR/students/<student>.json, written and read here only.

The file is Gradescope's results.json of the student's grade (what `grade --format json` writes),
whose `extra_data` also holds

- the batch's provenance: the student's id verbatim ("student"), the sections assigned to them so
  far ("sections"), and per section graded ("graded") the hashes of its file and of the grader,
  the device, the language of its messages and when, which decide whether a later run grades that
  section again (`current_sections`), and when that file was handed in ("handed_in",
  instructor/submission_time.py: what the gradebook, grades.csv and `merge` go by); the last run's
  grader hash, device, time and grader errors;
- the grade's own record under "record" (core/record: the GradeResult as data).

Every reader of a batch's output (its resume, `merge`, `--report`, the class report, the
gradebook) reads the record and the provenance, never the rendering around them: results.json
is for Gradescope and for people. The record sits inside the results file rather than in a file
beside it so that a student's grade stays one file, written atomically and copied whole by
`merge`: the rendering and the data it was rendered from can never disagree. A file without a
record (an older grader's) counts as no result: it is graded again, and reported as unreadable.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from autograder.core.files import Refused, read_inside, result_file_name, safe_filename, write_atomically
from autograder.core.record import RecordError, from_record, to_record
from autograder.core.results import GradeResult, encodable
from autograder.core.sections import SECTIONS
from autograder.i18n import DEFAULT as DEFAULT_LANGUAGE
from autograder.i18n import _
from autograder.core.matching import find_section

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "autograder"
STUDENTS = "students"
FEEDBACK = "feedback"  # batch --report: DIR/feedback/<safe name>/report.html|md
INDEX = "index.json"  # DIR/index.json: each student's id -> their files (write_index)
EXTRA = "extra_data"  # Gradescope's own field for data of ours
RECORD = "record"  # extra_data["record"]: the grade itself, as data
GRADED = "graded"  # extra_data["graded"]: {section id: its provenance}, what decides whether it is graded again
HANDED_IN = "handed_in"  # graded[section]["handed_in"]: when the file graded was handed in (ISO 8601, UTC)


@dataclass
class Stored:
    """One student's grade as a batch stored it: the result and the batch's provenance."""
    student: str
    grade: GradeResult
    provenance: dict

    @property
    def grader_errors(self) -> list[str]:
        errors = self.provenance.get("grader_errors")
        return [str(e) for e in errors] if isinstance(errors, list) else []

    @property
    def sections(self) -> list[str] | None:
        """The ids of the sections assigned to this student so far, by every run into this folder
        (None when the file does not say)."""
        sections = self.provenance.get("sections")
        return [str(s) for s in sections] if isinstance(sections, list) else None

    @property
    def graded(self) -> dict[str, dict]:
        """{section id: the provenance of its stored grade (made_by, and graded_at)}: the sections
        graded without errors, each from which file, by which grader, on which device, when."""
        graded = self.provenance.get(GRADED)
        if not isinstance(graded, dict):
            return {}
        return {str(k): dict(v) for k, v in graded.items() if isinstance(v, dict)}


def placeholder() -> dict:
    """The results.json of a student the grader could not grade (a job died or hung)."""
    return {"score": 0.0, "max_score": 0.0, "execution_time": 0.0,
            "output": _("The grader could not grade this submission; the instructor has been told."),
            "visibility": "visible", "stdout_visibility": "hidden", "tests": []}


def file_data(grade: GradeResult, provenance: dict, graded: bool = True) -> dict:
    """The student file's content: the grade rendered for Gradescope (the placeholder where it
    was not `graded`), with the provenance and the record in its extra_data."""
    data = grade.to_gradescope() if graded else placeholder()
    data[EXTRA] = {**(data.get(EXTRA) or {}), **provenance, RECORD: to_record(grade)}
    return data


def write_student(students_dir: Path, grade: GradeResult, provenance: dict, graded: bool = True) -> Stored:
    """Write students/<student>.json (whole or not at all); provenance["student"] names the student."""
    name = provenance["student"]
    # an error's text may quote the student's (a lone surrogate included): stored writable as UTF-8
    provenance = {**provenance, "grader_errors": [encodable(e) for e in provenance.get("grader_errors") or []]}
    text = json.dumps(file_data(grade, provenance, graded), indent=2, ensure_ascii=False) + "\n"
    write_atomically(Path(students_dir) / result_file_name(name), text)
    return Stored(name, grade, dict(provenance))


def read_student(path: Path) -> Stored | None:
    """The stored grade of a student file, or None when there is none: no file, not JSON, no
    record, or a record not shaped as this grader writes it."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        extra = data.get(EXTRA) if isinstance(data, dict) else None
        grade = from_record(extra.get(RECORD) if isinstance(extra, dict) else None)
    except (OSError, UnicodeDecodeError, ValueError, RecordError):
        return None
    provenance = {key: value for key, value in extra.items() if key != RECORD}
    student = provenance.get("student")
    return Stored(student if isinstance(student, str) else Path(path).stem, grade, provenance)


def student_named(path: Path) -> str:
    """The id a student file is for: the verbatim id kept inside it, else the file's stem."""
    stored = read_student(path)
    return stored.student if stored is not None else Path(path).stem


def student_paths(student: str) -> dict[str, str]:
    """Where a batch's output folder keeps `student`'s files, relative to it: the file names stand
    for the id (files.safe_filename), and an id that is not a plain name (Chinese, spaces, a slash)
    becomes a name people cannot read back."""
    return {"result": f"{STUDENTS}/{result_file_name(student)}", "feedback": f"{FEEDBACK}/{safe_filename(student)}"}


def write_index(out: Path, students) -> Path:
    """DIR/index.json: {"students": {id: {"result": path, "feedback": path}}}, the paths relative to
    DIR, so that people and scripts (handing the feedback back, say) find a student's files by the
    id as given. Kept beside students/, not in it (every *.json there is a student's grade) nor in
    feedback/ (handed back: no student sees the class's list)."""
    data = {"students": {student: student_paths(student) for student in sorted(students)}}
    path = Path(out) / INDEX
    write_atomically(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return path


def remove_stale_temporaries(folder: Path) -> None:
    """Temp files a killed run left behind (never read: results are only the *.json)."""
    if folder.is_dir():
        for leftover in folder.glob(".*.tmp"):
            try:
                leftover.unlink()
            except OSError:
                pass


# --------------------------------------------------------------------------- is a stored grade current?


def section_hash(folder: Path, section, located=None) -> str:
    """Hash of exactly the file the grader reads for one section of this student (or of its absence);
    `located`: find_section's answer for it, where the caller has it already."""
    digest = hashlib.sha256()
    located = located if located is not None else find_section(folder, section)
    found = located.relative
    digest.update(section.id.encode() + b"\0")
    if found is None:  # what was found instead is in the result's message and status: a change grades again
        listed = located.claimants or located.files
        digest.update(b"missing\0" + "\0".join(listed).encode("utf-8", "surrogateescape") + b"\0")
        return digest.hexdigest()
    digest.update(found.encode() + b"\0")
    try:  # read as grading reads it: never through a link, never more than grading would
        digest.update(hashlib.sha256(read_inside(folder, found)).digest())
    except Refused as error:
        digest.update(f"refused {error}".encode())
    return digest.hexdigest()


def section_hashes(folder: Path, section_ids: list[str]) -> dict[str, str]:
    """{section id: section_hash} of the sections named, in the course's order."""
    return {section.id: section_hash(folder, section) for section in SECTIONS if section.id in section_ids}


def grader_hash() -> str:
    """Hash of the grader's checks, section registry and reference solutions.

    A result graded by another version of these is graded again.
    """
    digest = hashlib.sha256()
    files = sorted((PACKAGE / "checks").rglob("*.py")) + sorted((ROOT / "solutions").rglob("*.py"))
    files += [PACKAGE / "core" / "sections.py", PACKAGE / "checks" / "pytest.ini"]
    for path in files:
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def current_sections(stored: Stored | None, hashes: dict[str, str], grader: str, device: str,
                     spoken: str = DEFAULT_LANGUAGE) -> set[str]:
    """The sections of `hashes` whose stored grade stands: graded without errors from the same file,
    by the same grader, on the same device, in the same language, and still in the stored grade. The
    language because the record's messages and titles were written in it: a class graded in English and
    then asked for in Chinese is graded again (the same scores, in the other words)."""
    if stored is None:
        return set()
    held = {section.id for section in stored.grade.sections}

    def stands(section_id: str, files: str) -> bool:
        kept = stored.graded.get(section_id, {})
        return all(kept.get(key) == value for key, value in made_by(files, grader, device, spoken).items())

    return {section_id for section_id, files in hashes.items() if section_id in held and stands(section_id, files)}


def made_by(files_sha256: str, grader_sha256: str, device: str, language: str = DEFAULT_LANGUAGE) -> dict:
    """A section's provenance, what decides whether it is graded again: its file, the grader, the device
    and the language of its messages."""
    return {"files_sha256": files_sha256, "grader_sha256": grader_sha256, "device": device, "language": language}
