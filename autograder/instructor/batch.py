"""The `batch` verb (and the command line of `merge`, instructor/merge.py): grade a whole class, resumably.

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
                                  plus, in `extra_data`, the grade's own record and the hashes
                                  of the student's files and of the grader, so that an unchanged
                                  submission is skipped next run (instructor/student_files.py)
    DIR/grades.csv                one row per student: a column per section, total (an id that a
                                  spreadsheet would take for a formula, e.g. "=1+1", is written "'=1+1")
    DIR/grades.md                 the same table in Markdown (for a CI job's summary page)
    DIR/feedback/<student>/       with --report: the student's report.html and report.md, the
                                  report `grade --report` writes, rendered from the record in
                                  students/<student>.json after the batch. So an unchanged student
                                  skipped by this run gets one too, and the jobs only grade. The JSON
                                  record carries no matrices: the failing checks' heatmaps are left out (their
                                  messages are there; `grade --report` of one student draws them).
                                  Every run removes the folder first (remove_feedback): without
                                  --report, no report of an earlier run is left to disagree.
    DIR/index.json                each student's id as given -> their files here (student_files.write_index)
    DIR/similarity.csv, .html     with --similarity: which students' code is alike, per section, for the
                                  instructor only (instructor/similarity.py); no score depends on it
"""
from __future__ import annotations

import dataclasses
import os
import queue
import re
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

from autograder.core.files import result_file_name
from autograder.core.grade import SandboxRefused
from autograder.core.options import add_device_flag, add_limit_flags, limits_from, resolve_device
from autograder.core.record import RecordError, from_record
from autograder.core.results import GradeResult
from autograder.core.sections import SECTIONS
from autograder.core.submission import UsageError, section_named
from autograder.i18n import _, _f, language
from autograder.sandbox.launch import fork_path_available
from autograder.instructor import merge as merge_verb
from autograder.instructor.grades_table import write_table
from autograder.instructor.forced import read_pending, write_pending
from autograder.instructor.jobs import Jobs
from autograder.instructor.roster import discover
from autograder.instructor.student_files import (FEEDBACK, STUDENTS, Stored, files_hash, grader_hash, is_current,
                                                 read_student, remove_stale_temporaries, student_paths, write_student)



# --------------------------------------------------------------------------- students


def parse_shard(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not match:
        raise UsageError(_f("--shard {shard}: expected K/N, e.g. 1/4", shard=repr(text)))
    k, n = int(match[1]), int(match[2])
    if not 1 <= k <= n:
        raise UsageError(_f("--shard {shard}: need 1 <= K <= N", shard=text))
    return k, n


def in_shard(names: list[str], shard: tuple[int, int] | None) -> list[str]:
    """The students of shard K of N: every N-th name of the sorted list, starting at the K-th."""
    names = sorted(names)
    if shard is None:
        return names
    k, n = shard
    return names[k - 1::n]


# --------------------------------------------------------------------------- the batch


def plan_grading(everyone: dict, names: list[str], students_dir: Path, grader: str, device: str,
                 sections: list[str], force: bool, log, again: frozenset = frozenset()
                 ) -> tuple[dict[str, Stored], list[tuple[str, Path, str]]]:
    """({student: kept grade} of the unchanged students, [(student, folder, files hash)] to grade);
    `again`: students graded again even if unchanged (those a stopped forced run had not reached)."""
    results: dict[str, Stored] = {}
    todo: list[tuple[str, Path, str]] = []
    for name in names:
        files = files_hash(everyone[name], sections)
        previous = read_student(students_dir / result_file_name(name))
        if not force and name not in again and is_current(previous, files, grader, device, sections, language()):
            results[name] = previous
            log(_f("unchanged {name}: skipped ({score:g} / {max_score:g})", name=name,
                   score=previous.grade.score, max_score=previous.grade.max_score))
        else:
            todo.append((name, everyone[name], files))
    return results, todo


def record_reply(students_dir: Path, name: str, files: str, reply: dict, grader: str, device: str,
                 sections: list[str]) -> Stored:
    """A job's reply for one student as their file (written whole or not at all), with the
    provenance that decides whether the next run grades them again."""
    errors = list(reply.get("grader_errors") or [])
    try:
        grade, graded = from_record(reply.get("result")), True
    except RecordError:  # no result: the job died, hung or answered nonsense
        grade, graded = GradeResult(submission=name, device=device, grader_errors=errors), False
        errors = errors or [_("the job's reply held no grade")]
    provenance = {"student": name, "files_sha256": files, "grader_sha256": grader, "device": device,
                  "sections": sections, "language": language(),
                  "graded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                  "seconds": reply.get("seconds"), "grader_errors": errors}
    return write_student(students_dir, grade, provenance, graded)


def job_failure(name: str, error: Exception, started: float) -> dict:
    """The reply that stands for a job that hung, died or answered nonsense."""
    return {"student": name, "result": None, "grader_errors": [f"{type(error).__name__}: {error}"],
            "seconds": round(time.monotonic() - started, 3)}


def runner(makers: Jobs, job, index: int, tasks: queue.Queue, done: queue.Queue, stop: threading.Event,
           section: str | None, student_timeout: float) -> None:
    """One thread of the batch: hands students to one job, one at a time, replacing it if it fails."""
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
                reply = job_failure(name, error, started)
            done.put((name, files, reply))
    finally:
        if job is not None:
            job.close(kill=stop.is_set())


def log_reply(log, name: str, stored: Stored, reply: dict) -> bool:
    """One log line for a graded student; True when the grading had grader errors."""
    errors = stored.grader_errors
    if errors:
        first = errors[0].strip().splitlines()[-1] if errors[0].strip() else "?"
        log(_f("error {name}: {first}", name=name, first=first))
    else:
        log(_f("graded {name}: {score:g} / {max_score:g} ({seconds:.1f} s)", name=name, score=stored.grade.score,
               max_score=stored.grade.max_score, seconds=reply.get("seconds", 0)))
    return bool(errors)


def collect(done: queue.Queue, count: int, record, results: dict[str, Stored], log) -> int:
    """Write each of `count` replies as it arrives (record: reply -> Stored); returns how many had errors."""
    from tqdm import tqdm

    errors = 0
    bar = tqdm(total=count, unit="student", desc="grading", file=sys.stderr, dynamic_ncols=True,
               disable=None)  # a bar with ETA on a terminal; the log lines alone in CI logs
    try:
        for _ in range(count):
            name, files, reply = done.get()
            results[name] = record(name, files, reply)
            errors += log_reply(log, name, results[name], reply)
            bar.update(1)
    finally:
        bar.close()
    return errors


def remove_feedback(out: Path) -> None:
    """Remove OUT/feedback/ (the reports of an earlier `--report`) before a run changes the grades.

    The reports are renderings of the students' records in OUT/students/, never read back: a run
    without --report that changed a grade would leave a report that disagrees with grades.csv, to
    be handed back by mistake. Removing them loses nothing (`--report` writes every one again from
    the records, for unchanged students too); marking them stale would still leave them to be
    handed back. A link is unlinked, never followed: where it points is not the batch's."""
    import shutil

    folder = out / FEEDBACK
    if folder.is_symlink() or folder.is_file():
        folder.unlink()
    elif folder.is_dir():
        shutil.rmtree(folder)


def remove_leftovers(out: Path) -> None:
    """What an earlier run left that this one must not keep: a killed run's temporary files, and
    the feedback reports (remove_feedback)."""
    remove_stale_temporaries(out / STUDENTS)
    remove_stale_temporaries(out)
    remove_feedback(out)


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


def run_batch(submitted: Path, out: Path, jobs: int, device: str, limits: dict, force: bool,
              shard: tuple[int, int] | None, student_timeout: float, section: str | None = None,
              log=None, resume: list[str] | None = None) -> int:
    from tqdm import tqdm

    log = log or (lambda text: tqdm.write(text, file=sys.stderr))
    everyone = discover(submitted)
    if not everyone:
        raise UsageError(_f("{folder}: no student submissions found (expected one folder per student)",
                            folder=submitted))
    students_dir = out / STUDENTS
    students_dir.mkdir(parents=True, exist_ok=True)
    remove_leftovers(out)
    grader = grader_hash()
    sections = [section] if section else [s.id for s in SECTIONS]
    names = in_shard(list(everyone), shard)
    pending = read_pending(out)
    results, todo = plan_grading(everyone, names, students_dir, grader, device, sections, force, log,
                                 frozenset(pending))
    skipped = len(results)
    to_grade = {item[0] for item in todo}
    if force:  # listed before anything is graded again: a run stopped half way is finished without --force
        pending |= to_grade
        write_pending(out, pending)

    tasks: queue.Queue = queue.Queue()
    for item in todo:
        tasks.put(item)
    done: queue.Queue = queue.Queue()
    stop = threading.Event()
    makers = Jobs(device, limits, out / "logs", sections) if todo else None
    first_jobs = makers.fork_all(min(jobs, len(todo))) if todo else []
    threads = [threading.Thread(target=runner, args=(makers, job, i, tasks, done, stop, section, student_timeout),
                                daemon=True) for i, job in enumerate(first_jobs)]
    for thread in threads:
        thread.start()

    def record(name, files, reply):
        return record_reply(students_dir, name, files, reply, grader, device, sections)

    try:
        errors = collect(done, len(todo), record, results, log)
    except KeyboardInterrupt:
        print(interrupted_hint(len(results) - skipped, resume), file=sys.stderr)
        write_pending(out, pending - (to_grade & set(results)))  # crossed off: those graded in this run
        stop.set()
        write_table(out, results)
        return 130
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
        if makers is not None:
            makers.close()
    write_pending(out, pending - (to_grade & set(results)))
    table = write_table(out, results)
    print(_f("{graded} graded, {skipped} unchanged, {errors} with grader errors; {students} students in {table}",
             graded=len(todo), skipped=skipped, errors=errors, students=len(results), table=table))
    return 1 if errors else 0


# --------------------------------------------------------------------------- command line


def add_verbs(verbs) -> None:
    batch = verbs.add_parser("batch", help="grade every student in a folder of submissions")
    batch.add_argument("submitted", type=Path, help="nbgrader's submitted/ folder, or one folder per student")
    batch.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                       help="students graded at once (default %(default)s)")
    add_device_flag(batch)
    batch.add_argument("--out", type=Path, default=Path("grades"), help="output folder (default %(default)s)")
    batch.add_argument("--force", action="store_true",
                       help="grade again even the unchanged submissions; with --gradebook, also replace the scores "
                            "nbgrader's autograde wrote after this grader's")
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
    merge_verb.add_verb(verbs)


def main(args) -> int:
    """`batch`: check the command line, grade, then the optional reports and gradebook."""
    if args.jobs < 1:
        raise UsageError(_f("--jobs must be at least 1, got {jobs}", jobs=args.jobs))
    if not fork_path_available():
        from autograder.sandbox.tiers import platform_advice

        where, fix = platform_advice()
        print(_f("autograder: error: batch grading needs Linux's fork path, not available here ({where}): {fix}",
                 where=where, fix=fix), file=sys.stderr)
        return 1
    shard = parse_shard(args.shard)
    limits = dataclasses.asdict(limits_from(args))
    if not args.student_timeout > limits["submission_seconds"]:
        raise UsageError(_f("--student-timeout ({timeout:g} s) must be longer than --submission-budget "
                            "({budget:g} s), so that a slow student is graded within the budget rather than "
                            "lost to the timeout", timeout=args.student_timeout, budget=limits["submission_seconds"]))
    section = None if args.section is None else section_named(args.section).id
    if not args.submitted.is_dir():
        raise UsageError(_f("{folder}: no such folder", folder=args.submitted))
    gradebook = getattr(args, "gradebook", None)
    section_ids = [section] if section else [s.id for s in SECTIONS]
    if gradebook is not None:  # refuse before grading anything: a missing file, a missing assignment
        from autograder.instructor.gradebook import check_sections

        check_sections(gradebook, section_ids)
    device = resolve_device(args.device)
    try:
        status = run_batch(args.submitted, args.out, args.jobs, device, limits, args.force, shard,
                           args.student_timeout, section, resume=getattr(args, "argv", None))
    except SandboxRefused as error:
        print(_f("autograder: error: {error}", error=error), file=sys.stderr)
        return 1
    report = getattr(args, "report", False)
    if status in (0, 1) and (report or gradebook is not None):  # this run's results, read once for both
        results, folders = shard_results(args.submitted, args.out, shard)
        if report:
            write_reports(args.out, results)
        if gradebook is not None:
            status = record_in_gradebook(gradebook, results, folders, args.out, section_ids, status, args.force)
    elif gradebook is not None:
        print(_f("gradebook: nothing recorded (the batch stopped with status {status}); run it again", status=status),
              file=sys.stderr)
    if getattr(args, "similarity", False) and status in (0, 1):
        from autograder.instructor import similarity

        compared = [section_named(section_id) for section_id in section_ids]
        similarity.run(args.submitted, args.out, discover(args.submitted), compared)  # the whole class, any shard
    return status


def shard_results(submitted: Path, out: Path, shard) -> tuple[dict[str, Stored], dict[str, Path]]:
    """(student -> their stored grade, student -> their folder), for this run's students (its shard)."""
    everyone = discover(submitted)
    results, folders = {}, {}
    for name in in_shard(list(everyone), shard):
        result = read_student(out / STUDENTS / result_file_name(name))
        if result is not None:
            results[name], folders[name] = result, everyone[name]
    return results, folders


def write_reports(out: Path, results: dict[str, Stored]) -> int:
    """`--report`: each student's report.html and report.md in OUT/feedback/<safe name>/; returns how many."""
    from autograder.feedback.formats import terminal_text
    from autograder.feedback.report import HTML_NAME, MARKDOWN_NAME, write_report

    written = 0
    for name in sorted(results):
        folder = out / student_paths(name)["feedback"]
        if results[name].grader_errors:  # a placeholder zero: nothing to hand back
            for stale in (HTML_NAME, MARKDOWN_NAME):
                (folder / stale).unlink(missing_ok=True)
            print(_f("autograder: no feedback report for {name}: grader error (grade again)", name=terminal_text(name)),
                  file=sys.stderr)
            continue
        try:
            write_report(results[name].grade, folder)
            written += 1
        except Exception as error:  # the grades stand without it; the next run writes it again
            print(_f("autograder: could not write the feedback report of {name} to {folder}: {error}",
                     name=terminal_text(name), folder=folder, error=f"{type(error).__name__}: {error}"),
                  file=sys.stderr)
    print(_f("{count} feedback report(s) in {folder}", count=written, folder=out / FEEDBACK))
    return written


def record_in_gradebook(gradebook: str, results: dict[str, Stored], folders: dict[str, Path], out: Path,
                        section_ids: list[str], status: int, force: bool = False) -> int:
    """`--gradebook`: write the results of this batch's students (shard_results) into nbgrader's gradebook
    (with `force`, over the scores nbgrader's autograde wrote after this grader's)."""
    from autograder.instructor.gradebook import record_results

    try:
        record_results(gradebook, results, folders, section_ids, force=force)
    except UsageError:
        raise
    except Exception as error:  # the grades are safe in --out: recording can simply be run again
        first = str(error).splitlines()[0] if str(error) else ""
        print(_f("autograder: error: gradebook not (fully) updated: {error}; the grades are in {out}, run the "
                 "same command again", error=f"{type(error).__name__}: {first}", out=out), file=sys.stderr)
        return 1
    return status
