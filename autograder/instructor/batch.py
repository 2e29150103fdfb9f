"""The `batch` and `merge` verbs: grade a whole class, resumably.

    python -m autograder batch SUBMITTED_DIR [--jobs N] [--device auto|cpu|cuda]
                               [--out DIR] [--force] [--shard K/N] [--gradebook URL_OR_PATH] [--report]
    python -m autograder merge DIR... --out DIR

Students are the sub-folders of SUBMITTED_DIR (or of SUBMITTED_DIR/submitted,
for an nbgrader course folder): nbgrader's `<student>/<assignment>/<assignment>.ipynb`
and a flat `<student>/<section>.ipynb` folder shaped like student_template/ are
both accepted (submission.locate reads either).

The batch starts one zygote (torch imported and warmed once), imports the
grader, then forks N job processes; each job grades students one at a time
with its own copy of the zygote, and a job started later (to replace one that
died) is a fresh interpreter (instructor/jobs.py). The parent
hands out students, writes every result as soon as it arrives, and never stops
for one student: a job that dies or hangs is replaced and that student gets a
zero with a grader error (and is graded again next run).

Output, every file written atomically (temp file + os.replace):
    DIR/students/<student>.json   Gradescope results.json, the same as `grade --format json`,
                                  plus `extra_data` (hashes of the student's files and of
                                  the grader) so an unchanged submission is skipped next run
    DIR/grades.csv                one row per student: a column per section, total (an id that a
                                  spreadsheet would take for a formula, e.g. "=1+1", is written "'=1+1")
    DIR/grades.md                 the same table in Markdown (for a CI job's summary page)
    DIR/feedback/<student>/       with --report: the student's report.html and report.md, the
                                  report `grade --report` writes, rendered from students/<student>.json
                                  after the batch (report.from_gradescope). So an unchanged student
                                  skipped by this run gets one too, and the jobs only grade. The JSON
                                  carries no matrices: the failing checks' heatmaps are left out (their
                                  messages are there; `grade --report` of one student draws them).
    DIR/similarity.csv, .html     with --similarity: which students' code is alike, per section, for the
                                  instructor only (instructor/similarity.py); no score depends on it
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import queue
import re
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

from autograder.core.files import Refused, read_inside, result_file_name, safe_filename, spreadsheet_safe, write_atomically
from autograder.core.grade import SandboxRefused
from autograder.core.options import add_device_flag, add_limit_flags, limits_from, resolve_device
from autograder.core.sections import SECTIONS
from autograder.core.submission import UsageError, section_file, section_named
from autograder.sandbox.launch import fork_path_available
from autograder.instructor.jobs import Jobs
from autograder.instructor.roster import discover

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "autograder"
STUDENTS = "students"
FEEDBACK = "feedback"  # --report: DIR/feedback/<student>/report.html|md
GRADES = "grades.csv"
GRADES_MARKDOWN = "grades.md"
RESULT_KEY = "extra_data"  # Gradescope's own field for data of ours


# --------------------------------------------------------------------------- files


def remove_stale_temporaries(folder: Path) -> None:
    """Temp files a killed run left behind (never read: results are only the *.json)."""
    if folder.is_dir():
        for leftover in folder.glob(".*.tmp"):
            try:
                leftover.unlink()
            except OSError:
                pass


def read_result(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


# --------------------------------------------------------------------------- students


def parse_shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not match:
        raise UsageError(f"--shard {text!r}: expected K/N, e.g. 1/4")
    k, n = int(match[1]), int(match[2])
    if not 1 <= k <= n:
        raise UsageError(f"--shard {text}: need 1 <= K <= N")
    return k, n


def in_shard(names: list[str], shard: tuple[int, int] | None) -> list[str]:
    """The students of shard K of N: every N-th name of the sorted list, starting at the K-th."""
    names = sorted(names)
    if shard is None:
        return names
    k, n = shard
    return names[k - 1::n]


def files_hash(folder: Path, section_ids: list[str] | None = None) -> str:
    """Hash of exactly the files the grader reads for this student."""
    digest = hashlib.sha256()
    for section in SECTIONS:
        if section_ids is not None and section.id not in section_ids:
            continue
        found = section_file(folder, section)
        digest.update(section.id.encode() + b"\0")
        if found is None:
            digest.update(b"missing\0")
            continue
        digest.update(found.encode() + b"\0")
        try:  # read as grading reads it: never through a link, never more than grading would
            digest.update(hashlib.sha256(read_inside(folder, found)).digest())
        except Refused as error:
            digest.update(f"refused {error}".encode())
    return digest.hexdigest()


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


def is_current(result: dict | None, files: str, grader: str, device: str, sections: list[str]) -> bool:
    if not result:
        return False
    extra = result.get(RESULT_KEY) or {}
    return (extra.get("files_sha256") == files and extra.get("grader_sha256") == grader
            and extra.get("device") == device and extra.get("sections") == sections
            and not extra.get("grader_errors"))


# --------------------------------------------------------------------------- the class table


def section_scores(result: dict) -> dict[str, float]:
    scores = {section.id: 0.0 for section in SECTIONS}
    for test in result.get("tests", []):
        tags = test.get("tags") or []
        if tags and tags[0] in scores:
            scores[tags[0]] += float(test.get("score", 0))
    return scores


def status_of(result: dict) -> str:
    """grades.csv's status: "graded", "grader error", or "graded, flagged: tampering" for the instructor."""
    if (result.get(RESULT_KEY) or {}).get("grader_errors"):
        return "grader error"
    if any("tampering" in (test.get("tags") or []) for test in result.get("tests", [])):
        return "graded, flagged: tampering"
    return "graded"


def class_table(results: dict[str, dict]):
    import pandas as pd

    graded = set()
    for result in results.values():
        graded.update((result.get(RESULT_KEY) or {}).get("sections") or [s.id for s in SECTIONS])
    section_ids = [s.id for s in SECTIONS if s.id in graded] or [s.id for s in SECTIONS]
    rows = []
    for student in sorted(results):
        result = results[student]
        extra = result.get(RESULT_KEY) or {}
        row = {"student": spreadsheet_safe(student)}  # an id "=cmd()" must not run in a spreadsheet
        scores = section_scores(result)
        row.update({k: round(scores[k], 4) for k in section_ids})
        row["total"] = round(float(result.get("score", 0)), 4)
        row["max_score"] = round(float(result.get("max_score", 0)), 4)
        row["status"] = status_of(result)
        row["sandbox"] = str(extra.get("sandbox") or "") + (" (weak)" if extra.get("sandbox_weak") else "")
        rows.append(row)
    columns = ["student"] + section_ids + ["total", "max_score", "status", "sandbox"]
    return pd.DataFrame(rows, columns=columns)


def markdown_table(table) -> str:
    """grades.csv as a Markdown table (a CI job's summary page): every cell plain text."""
    from autograder.feedback.formats import md_text

    def row(cells) -> str:
        return "| " + " | ".join(md_text(str(cell)) for cell in cells) + " |"

    lines = [row(table.columns), "|" + "---|" * len(table.columns)]
    lines += [row(values) for values in table.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def write_table(out: Path, results: dict[str, dict]) -> Path:
    """DIR/grades.csv, and the same table as DIR/grades.md for a summary page."""
    path = out / GRADES
    table = class_table(results)
    write_atomically(path, table.to_csv(index=False))
    write_atomically(out / GRADES_MARKDOWN, markdown_table(table))
    return path


# --------------------------------------------------------------------------- the batch


def failed_result() -> dict:
    return {"score": 0.0, "max_score": 0.0, "execution_time": 0.0,
            "output": "The grader could not grade this submission; the instructor has been told.",
            "visibility": "visible", "stdout_visibility": "hidden", "tests": []}


def plan_grading(everyone: dict, names: list[str], students_dir: Path, grader: str, device: str,
                 sections: list[str], force: bool, log) -> tuple[dict[str, dict], list[tuple[str, Path, str]]]:
    """({student: kept result} of the unchanged students, [(student, folder, files hash)] to grade)."""
    results: dict[str, dict] = {}
    todo: list[tuple[str, Path, str]] = []
    for name in names:
        files = files_hash(everyone[name], sections)
        previous = read_result(students_dir / result_file_name(name))
        if not force and is_current(previous, files, grader, device, sections):
            results[name] = previous
            log(f"unchanged {name}: skipped ({previous.get('score', 0):g} / {previous.get('max_score', 0):g})")
        else:
            todo.append((name, everyone[name], files))
    return results, todo


def record_reply(students_dir: Path, name: str, files: str, reply: dict, grader: str, device: str,
                 sections: list[str]) -> dict:
    """A job's reply for one student as their result file (written whole or not at all), with the
    provenance that decides whether the next run grades them again."""
    result = reply.get("result") or failed_result()
    result[RESULT_KEY] = {
        **(result.get(RESULT_KEY) or {}),  # the grading's own: sandbox tier, torch version
        "student": name,
        "files_sha256": files,
        "grader_sha256": grader,
        "device": device,
        "sections": sections,
        "graded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "seconds": reply.get("seconds"),
        "grader_errors": reply.get("grader_errors") or [],
    }
    write_atomically(students_dir / result_file_name(name), json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    return result


def run_batch(submitted: Path, out: Path, jobs: int, device: str, limits: dict, force: bool,
              shard: tuple[int, int] | None, student_timeout: float, section: str | None = None,
              log=None) -> int:
    from tqdm import tqdm

    log = log or (lambda text: tqdm.write(text, file=sys.stderr))
    everyone = discover(submitted)
    if not everyone:
        raise UsageError(f"{submitted}: no student submissions found (expected one folder per student)")
    names = in_shard(list(everyone), shard)
    students_dir = out / STUDENTS
    students_dir.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(students_dir)
    remove_stale_temporaries(out)
    grader = grader_hash()
    sections = [section] if section else [s.id for s in SECTIONS]

    results, todo = plan_grading(everyone, names, students_dir, grader, device, sections, force, log)
    skipped = len(results)

    tasks: queue.Queue = queue.Queue()
    for item in todo:
        tasks.put(item)
    done: queue.Queue = queue.Queue()
    stop = threading.Event()
    makers = Jobs(device, limits, out / "logs", sections) if todo else None
    first_jobs = makers.fork_all(min(jobs, len(todo))) if todo else []

    def runner(index: int):
        job = first_jobs[index]
        try:
            while not stop.is_set():
                try:
                    name, folder, files = tasks.get_nowait()
                except queue.Empty:
                    return
                started = time.monotonic()
                try:
                    if job is None:
                        job = makers.start(index)
                    reply = job.grade(name, folder, section, student_timeout)
                except Exception as error:  # the job hung, died or answered nonsense: replace it
                    if job is not None:
                        job.close(kill=True)
                        job = None
                    reply = {"student": name, "result": None,
                             "grader_errors": [f"{type(error).__name__}: {error}"],
                             "seconds": round(time.monotonic() - started, 3)}
                done.put((name, files, reply))
        finally:
            if job is not None:
                job.close(kill=stop.is_set())

    threads = [threading.Thread(target=runner, args=(i,), daemon=True) for i in range(len(first_jobs))]
    for thread in threads:
        thread.start()
    errors = 0
    bar = tqdm(total=len(todo), unit="student", desc="grading", file=sys.stderr, dynamic_ncols=True,
               disable=None)  # a bar with ETA on a terminal; the log lines alone in CI logs
    try:
        for _ in range(len(todo)):
            name, files, reply = done.get()
            result = record_reply(students_dir, name, files, reply, grader, device, sections)
            results[name] = result
            grader_errors = result[RESULT_KEY]["grader_errors"]
            if grader_errors:
                errors += 1
                first = grader_errors[0].strip().splitlines()[-1] if grader_errors[0].strip() else "?"
                log(f"error {name}: {first}")
            else:
                log(f"graded {name}: {result['score']:g} / {result['max_score']:g} ({reply.get('seconds', 0):.1f} s)")
            bar.update(1)
    except KeyboardInterrupt:
        bar.close()
        print(f"interrupted: {len(results) - skipped} graded in this run are saved; run the same command "
              "again to grade the rest", file=sys.stderr)
        stop.set()
        write_table(out, results)
        return 130
    finally:
        bar.close()
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
        if makers is not None:
            makers.close()
    table = write_table(out, results)
    print(f"{len(todo)} graded, {skipped} unchanged, {errors} with grader errors; "
          f"{len(results)} students in {table}")
    return 1 if errors else 0


def merge(folders: list[Path], out: Path) -> int:
    """One grades.csv from the output folders of several shards.

    A student normally appears in one folder. Where one appears in several (a
    roster changed between runs, a shard graded again), the choice never
    depends on which job finished last: a result without grader errors beats
    one with, then one from the current grader beats an older grader's, then
    the folder named later on the command line wins.
    """
    for folder in folders:
        if not (folder / STUDENTS).is_dir():
            raise UsageError(f"{folder}: not a batch output folder (no {STUDENTS}/ inside)")
    current = grader_hash()
    chosen: dict[str, tuple[tuple, Path, dict]] = {}
    for order, folder in enumerate(folders):
        for path in sorted((folder / STUDENTS).glob("*.json")):
            result = read_result(path)
            if result is None:
                print(f"autograder: warning: {path}: not a readable result, left out", file=sys.stderr)
                continue
            extra = result.get(RESULT_KEY) or {}
            name = extra.get("student") if isinstance(extra.get("student"), str) else path.stem
            rank = (not extra.get("grader_errors"), extra.get("grader_sha256") == current, order)
            if name in chosen:
                keep = path if rank > chosen[name][0] else chosen[name][1]
                print(f"autograder: warning: {name} is in several folders; keeping {keep}", file=sys.stderr)
                if keep != path:
                    continue
            chosen[name] = (rank, path, result)
    students_dir = out / STUDENTS
    students_dir.mkdir(parents=True, exist_ok=True)
    for name, (_, path, _result) in chosen.items():
        target = students_dir / result_file_name(name)
        if target.resolve() != path.resolve():
            write_atomically(target, path.read_text(encoding="utf-8"))
    table = write_table(out, {name: result for name, (_, _, result) in chosen.items()})
    print(f"{len(chosen)} students from {len(folders)} folders in {table}")
    return 0


# --------------------------------------------------------------------------- command line


def add_verbs(verbs) -> None:
    batch = verbs.add_parser("batch", help="grade every student in a folder of submissions")
    batch.add_argument("submitted", type=Path, help="nbgrader's submitted/ folder, or one folder per student")
    batch.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                       help="students graded at once (default %(default)s)")
    add_device_flag(batch)
    batch.add_argument("--out", type=Path, default=Path("grades"), help="output folder (default %(default)s)")
    batch.add_argument("--force", action="store_true", help="grade again even the unchanged submissions")
    batch.add_argument("--shard", help="grade only shard K of N (K/N) of the sorted students")
    batch.add_argument("--section", help="grade only this section (e.g. 02_softmax: one nbgrader assignment)")
    batch.add_argument("--student-timeout", type=float, default=900.0,
                       help="seconds one student's whole grading may take (default %(default)s)")
    batch.add_argument("--gradebook", metavar="URL_OR_PATH",
                       help="afterwards, record each student's section scores in this existing nbgrader "
                            "gradebook (sqlite:///.../gradebook.db or its path); see autograder/instructor/gradebook.py")
    batch.add_argument("--report", action="store_true",
                       help="also write each student's feedback report (report.html, report.md) to "
                            "OUT/feedback/<student>/, for handing back")
    batch.add_argument("--similarity", action="store_true",
                       help="also compare the students' code, section by section: OUT/similarity.csv and "
                            "OUT/similarity.html, for the instructor only (evidence; no score changes)")
    add_limit_flags(batch)
    batch.set_defaults(main=main)
    merged = verbs.add_parser("merge", help="merge the output folders of sharded batches")
    merged.add_argument("folders", type=Path, nargs="+")
    merged.add_argument("--out", type=Path, required=True)
    merged.set_defaults(main=lambda args: merge(args.folders, args.out))


def main(args) -> int:
    """`batch`: check the command line, grade, then the optional reports and gradebook."""
    if args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {args.jobs}")
    if not fork_path_available():
        from autograder.sandbox.tiers import platform_advice

        where, fix = platform_advice()
        print(f"autograder: error: batch grading needs Linux's fork path, not available here ({where}): {fix}",
              file=sys.stderr)
        return 1
    shard = parse_shard(args.shard)
    limits = dataclasses.asdict(limits_from(args))
    if not args.student_timeout > limits["submission_seconds"]:
        raise UsageError(f"--student-timeout ({args.student_timeout:g} s) must be longer than "
                         f"--submission-budget ({limits['submission_seconds']:g} s), so that a slow "
                         "student is graded within the budget rather than lost to the timeout")
    section = None if args.section is None else section_named(args.section).id
    if not args.submitted.is_dir():
        raise UsageError(f"{args.submitted}: no such folder")
    gradebook = getattr(args, "gradebook", None)
    section_ids = [section] if section else [s.id for s in SECTIONS]
    if gradebook is not None:  # refuse before grading anything: a missing file, a missing assignment
        from autograder.instructor.gradebook import check_sections

        check_sections(gradebook, section_ids)
    device = resolve_device(args.device)
    try:
        status = run_batch(args.submitted, args.out, args.jobs, device, limits, args.force, shard,
                           args.student_timeout, section)
    except SandboxRefused as error:
        print(f"autograder: error: {error}", file=sys.stderr)
        return 1
    report = getattr(args, "report", False)
    if status in (0, 1) and (report or gradebook is not None):  # this run's results, read once for both
        results, folders = shard_results(args.submitted, args.out, shard)
        if report:
            write_reports(args.out, results)
        if gradebook is not None:
            status = record_in_gradebook(gradebook, results, folders, args.out, section_ids, status)
    elif gradebook is not None:
        print(f"gradebook: nothing recorded (the batch stopped with status {status}); run it again",
              file=sys.stderr)
    if getattr(args, "similarity", False) and status in (0, 1):
        from autograder.instructor import similarity

        compared = [section_named(section_id) for section_id in section_ids]
        similarity.run(args.submitted, args.out, discover(args.submitted), compared)  # the whole class, any shard
    return status


def shard_results(submitted: Path, out: Path, shard) -> tuple[dict[str, dict], dict[str, Path]]:
    """(student -> their students/*.json, student -> their folder), for this run's students (its shard)."""
    everyone = discover(submitted)
    results, folders = {}, {}
    for name in in_shard(list(everyone), shard):
        result = read_result(out / STUDENTS / result_file_name(name))
        if result is not None:
            results[name], folders[name] = result, everyone[name]
    return results, folders


def write_reports(out: Path, results: dict[str, dict]) -> int:
    """`--report`: each student's report.html and report.md in OUT/feedback/<safe name>/; returns how many."""
    from autograder.feedback.formats import terminal_text
    from autograder.feedback.report import HTML_NAME, MARKDOWN_NAME, from_gradescope, write_report

    written = 0
    for name in sorted(results):
        folder = out / FEEDBACK / safe_filename(name)
        if (results[name].get(RESULT_KEY) or {}).get("grader_errors"):  # a placeholder zero: nothing to hand back
            for stale in (HTML_NAME, MARKDOWN_NAME):
                (folder / stale).unlink(missing_ok=True)
            print(f"autograder: no feedback report for {terminal_text(name)}: grader error (grade again)",
                  file=sys.stderr)
            continue
        try:
            write_report(from_gradescope(results[name]), folder)
            written += 1
        except Exception as error:  # the grades stand without it; the next run writes it again
            print(f"autograder: could not write the feedback report of {terminal_text(name)} to {folder}: "
                  f"{type(error).__name__}: {error}", file=sys.stderr)
    print(f"{written} feedback report(s) in {out / FEEDBACK}")
    return written


def record_in_gradebook(gradebook: str, results: dict[str, dict], folders: dict[str, Path], out: Path,
                        section_ids: list[str], status: int) -> int:
    """`--gradebook`: write the results of this batch's students (shard_results) into nbgrader's gradebook."""
    from autograder.instructor.gradebook import record_results

    try:
        record_results(gradebook, results, folders, section_ids)
    except UsageError:
        raise
    except Exception as error:  # the grades are safe in --out: recording can simply be run again
        print(f"autograder: error: gradebook not (fully) updated: {type(error).__name__}: "
              f"{str(error).splitlines()[0] if str(error) else ''}; the grades are in {out}, run the "
              "same command again", file=sys.stderr)
        return 1
    return status
