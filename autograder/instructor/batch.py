"""The `batch` verb (and the command line of `merge`, instructor/merge.py): grade a whole class, resumably.

    python -m autograder batch SUBMITTED_DIR [--jobs N] [--device auto|cpu|cuda]
                               [--assignment NAME[,NAME...]] [--section ID[,ID...]] [--assignments FILE]
                               [--out DIR] [--force] [--shard K/N] [--gradebook URL_OR_PATH] [--report]
    python -m autograder merge DIR... --out DIR

A run grades the sections of --assignment (instructor/assignments.py) and --section, or every
section, and adds them to what DIR already holds (instructor/term.py): weekly runs into one DIR
make up the term, and only the sections assigned so far count.

Students are the sub-folders of SUBMITTED_DIR (or of SUBMITTED_DIR/submitted,
for an nbgrader course folder): nbgrader's `<student>/<assignment>/<assignment>.ipynb`
and a flat `<student>/<section>.ipynb` folder shaped like student_template/ are
both accepted (submission.locate reads either). A student graded into DIR by an earlier run who
has no folder this time handed in nothing: the run's sections are "not handed in" for them.

The batch starts one zygote (torch imported and warmed once), imports the grader, then forks N
job processes; each job grades students one at a time with its own copy of the zygote, and a job
started later (to replace one that died) is a fresh interpreter (instructor/jobs.py). The parent
hands out students, writes every result as soon as it arrives, and never stops for one student: a
job that dies or hangs is replaced and that student gets a zero with a grader error (and is graded
again next run). Its log: a line per student; with -v, each replaced job and each whole grader error.

Output, every file written atomically (temp file + os.replace):
    DIR/students/<student>.json   Gradescope results.json of the sections graded so far, the same as
                                  `grade --section ... --format json`, plus, in `extra_data`, the
                                  grade's own record and per section the hashes of the student's
                                  file and of the grader, so that an unchanged section is skipped
                                  next run (instructor/student_files.py)
    DIR/grades.csv                one row per student: a column per section assigned so far, total (an
                                  id that a spreadsheet would take for a formula, e.g. "=1+1", is
                                  written "'=1+1")
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
import logging
import os
import queue
import sys
import tempfile
import threading
import time
from pathlib import Path

from autograder.core.files import result_file_name
from autograder.core.grade import SandboxRefused
from autograder.core.options import add_device_flag, add_limit_flags, limits_from, resolve_device
from autograder.core.record import RecordError, from_record
from autograder.core.results import GradeResult
from autograder.core.sections import SECTIONS
from autograder.core.submission import UsageError, section_named
from autograder.feedback.formats import terminal_text
from autograder.instructor.assignments import add_selection_flags, chosen_sections
from autograder.i18n import N_, _, _f, language
from autograder.sandbox.launch import fork_path_available
from autograder.instructor import merge as merge_verb
from autograder.instructor.grades_table import write_table
from autograder.instructor.forced import Forced, interrupted_hint, read_pending, write_pending
from autograder.instructor.leftovers import remove_leftovers
from autograder.instructor.jobs import Jobs
from autograder.instructor.roster import discover
from autograder.instructor.submission_time import handed_in
from autograder.instructor.shards import in_shard, parse_shard, set_aside
from autograder.instructor.handed_again import handed_in_again
from autograder.instructor.student_files import (FEEDBACK, STUDENTS, Stored, current_sections, grader_hash,
                                                 read_student, section_hashes, student_paths, write_student)
from autograder.instructor.unreached import nbgrader_course, say_unreached
from autograder.instructor.term import (assigned_sections, combined, in_course_order, provenance_after,
                                        stored_students, the_class, to_grade)

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------- students


def run_students(everyone: dict[str, Path], known, shard: tuple[int, int] | None) -> list[str]:
    """The students a run grades: its shard's share of SUBMITTED_DIR's students (`everyone`; the same
    whatever each shard's folder holds), and each student of its own folder (`known`, those it owns:
    shards.set_aside) without a folder there."""
    return sorted(in_shard(list(everyone), shard) + [name for name in known if name not in everyone])


# --------------------------------------------------------------------------- the batch


def plan_grading(folders: dict[str, Path], names: list[str], students_dir: Path, grader: str, device: str,
                 sections: list[str], assigned: list[str], force: bool, log,
                 again: frozenset = frozenset()) -> tuple[dict[str, Stored], list[Task]]:
    """({student: kept grade} of the students with nothing to grade, [Task] of the others).

    Each student is asked for the run's `sections` and for each section `assigned` earlier that they
    have no good grade for (term.to_grade); of those, a section already graded from the same file by
    the same grader on the same device in the same language is kept, not graded again (unless `force`,
    or the student is in `again`: those a stopped forced run had not reached)."""
    results: dict[str, Stored] = {}
    todo: list[Task] = []
    for name in names:
        previous = read_student(students_dir / result_file_name(name))
        hashes = section_hashes(folders[name], to_grade(previous, sections, assigned))
        fresh = force or name in again
        current = set() if fresh else current_sections(previous, hashes, grader, device, language())
        earlier = [s for s in assigned if s not in hashes]  # graded before, and not by this run
        for section_id in handed_in_again(previous, folders[name], earlier):
            logger.warning(_f("{name}: {section} was handed in again after it was graded; this run does not grade "
                              "it and its grade stays as it was: grade it again with --section {section}",
                              name=name, section=section_id))
        if not set(hashes) - current:
            results[name] = previous
            log(_f("unchanged {name}: skipped ({total})", name=name, total=previous.grade.total_text()))
            continue
        if current:
            log(_f("unchanged {name}: {sections} kept", name=name, sections=", ".join(in_course_order(current))))
        todo.append(Task(name, folders[name], {k: v for k, v in hashes.items() if k not in current}, previous))
    return results, todo


@dataclasses.dataclass
class Task:
    """One student to grade: who, their folder, {section id: file hash} of the sections to grade,
    and what the folder held for them before (kept for the sections not graded)."""
    name: str
    folder: Path
    hashes: dict[str, str]
    previous: Stored | None

    @property
    def sections(self) -> list[str]:
        return list(self.hashes)


def record_reply(students_dir: Path, task: Task, reply: dict, grader: str, device: str) -> Stored:
    """A job's reply for one student, joined to what the folder held for them, as their file (written
    whole or not at all), with the provenance that decides what the next run grades again."""
    errors = list(reply.get("grader_errors") or [])
    try:
        grade, graded = from_record(reply.get("result")), True
    except RecordError:  # no result: the job died, hung or answered nonsense
        grade, graded = GradeResult(submission=task.name, device=device, grader_errors=errors), False
        errors = errors or [_("the job's reply held no grade")]
    previous = task.previous
    run = {"student": task.name, "seconds": reply.get("seconds"), "grader_errors": errors}
    handed = {section_id: handed_in(task.folder, section_id) for section_id in task.hashes}
    provenance = provenance_after(previous, run, task.hashes, grader, device, ok=not errors, handed=handed)
    return write_student(students_dir, combined(previous.grade if previous else None, grade), provenance, graded)


def job_failure(name: str, error: Exception, started: float) -> dict:
    """The reply that stands for a job that hung, died or answered nonsense."""
    return {"student": name, "result": None, "grader_errors": [f"{type(error).__name__}: {error}"],
            "seconds": round(time.monotonic() - started, 3)}


def runner(makers: Jobs, job, index: int, tasks: queue.Queue, done: queue.Queue, stop: threading.Event,
           student_timeout: float) -> None:
    """One thread of the batch: hands students to one job, one at a time, replacing it if it fails."""
    try:
        while not stop.is_set():
            try:
                task = tasks.get_nowait()
            except queue.Empty:
                return
            started = time.monotonic()
            try:
                if job is None:
                    job = makers.start(index)
                reply = job.grade(task.name, task.folder, task.sections, student_timeout)
            except Exception as error:  # the job hung, died or answered nonsense: replace it
                logger.debug(_f("job {index} replaced: {error}", index=index, error=f"{type(error).__name__}: {error}"))
                if job is not None:
                    job.close(kill=True)
                    job = None
                reply = job_failure(task.name, error, started)
            done.put((task, reply))
    finally:
        if job is not None:
            job.close(kill=stop.is_set())


def log_reply(log, name: str, stored: Stored, reply: dict) -> bool:
    """One log line for a graded student; True when the grading had grader errors."""
    errors = stored.grader_errors
    if errors:
        first = errors[0].strip().splitlines()[-1] if errors[0].strip() else "?"
        log(_f("error {name}: {first}", name=name, first=first))
        logger.debug(terminal_text(errors[0].rstrip()))  # the whole error (a traceback), with -v
    else:
        # the total as every other screen writes it: never above its maximum, a bonus apart, each part's total
        log(_f("graded {name}: {total} ({seconds:.1f} s)", name=name, total=stored.grade.total_text(),
               seconds=reply.get("seconds", 0)))
    return bool(errors)


def collect(done: queue.Queue, count: int, record, results: dict[str, Stored], log) -> int:
    """Write each of `count` replies as it arrives (record: reply -> Stored); returns how many had errors."""
    from tqdm import tqdm
    from tqdm.contrib.logging import logging_redirect_tqdm

    errors = 0
    bar = tqdm(total=count, unit="student", desc="grading", file=sys.stderr, dynamic_ncols=True,  # on a terminal;
               disable=None if logger.isEnabledFor(logging.INFO) else True)  # not in CI logs, nor with -q
    try:
        with logging_redirect_tqdm([logging.getLogger("autograder")]):
            for _ in range(count):
                task, reply = done.get()
                results[task.name] = record(task, reply)
                errors += log_reply(log, task.name, results[task.name], reply)
                bar.update(1)
    finally:
        bar.close()
    return errors


def run_batch(submitted: Path, out: Path, jobs: int, device: str, limits: dict, force: bool,
              shard: tuple[int, int] | None, student_timeout: float, sections: list[str] | None = None,
              log=logger.info, resume: list[str] | None = None) -> int:
    """Grade the run's `sections` (None: every section) of each student of the class (term.the_class:
    SUBMITTED_DIR's and the folder's) into `out`, adding to what it holds. `resume`: the command line's
    arguments, for the hint after Ctrl-C."""
    everyone = discover(submitted)
    if not everyone:
        raise UsageError(_f("{folder}: no student submissions found (expected one folder per student)",
                            folder=submitted))
    students_dir = out / STUDENTS
    students_dir.mkdir(parents=True, exist_ok=True)
    remove_leftovers(out)
    grader = grader_hash()
    sections = sections or [s.id for s in SECTIONS]
    known = set_aside(out, students_dir, stored_students(students_dir), shard, log)
    assigned = in_course_order(assigned_sections(known.values()) + sections)
    pending = read_pending(out)
    with tempfile.TemporaryDirectory(prefix="nothing-handed-in-") as nothing:  # the folder of an absent student
        folders = the_class(everyone, known, Path(nothing))
        names = run_students(everyone, known, shard)
        results, todo = plan_grading(folders, names, students_dir, grader, device, sections, assigned, force, log,
                                     frozenset(pending))
        regrading = {task.name for task in todo}
        if force:  # listed before anything is graded again: a run stopped half way is finished without --force
            pending |= regrading
            write_pending(out, pending)
        for task in todo:
            if task.name not in everyone:
                log(_f("no folder for {name} in {folder}: graded as not handed in ({sections})", name=task.name,
                       folder=submitted, sections=", ".join(task.sections)))
        forced = Forced(resume, pending, regrading)
        return grade_planned(out, results, todo, jobs, device, limits, grader, student_timeout, log, forced)


def grade_planned(out: Path, results: dict[str, Stored], todo: list[Task], jobs: int, device: str, limits: dict,
                  grader: str, student_timeout: float, log, forced: Forced) -> int:
    """Grade the students of `todo` with `jobs` processes, writing each as it arrives, then the class
    table of the folder's whole term; `results` holds the students kept as they were, `forced` what
    the forced list says (instructor/forced.py)."""
    students_dir = out / STUDENTS
    skipped = len(results)
    tasks: queue.Queue = queue.Queue()
    for item in todo:
        tasks.put(item)
    done: queue.Queue = queue.Queue()
    stop = threading.Event()
    graded_sections = in_course_order(s for task in todo for s in task.sections)
    makers = Jobs(device, limits, out / "logs", graded_sections) if todo else None
    first_jobs = makers.fork_all(min(jobs, len(todo))) if todo else []
    threads = [threading.Thread(target=runner, args=(makers, job, i, tasks, done, stop, student_timeout),
                                daemon=True) for i, job in enumerate(first_jobs)]
    for thread in threads:
        thread.start()

    def record(task, reply):
        return record_reply(students_dir, task, reply, grader, device)

    try:
        errors = collect(done, len(todo), record, results, log)
    except KeyboardInterrupt:
        print(interrupted_hint(len(results) - skipped, forced.resume), file=sys.stderr)
        write_pending(out, forced.left_after(results))  # crossed off: those graded in this run
        stop.set()
        write_table(out, stored_students(students_dir))
        return 130
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
        if makers is not None:
            makers.close()
    write_pending(out, forced.left_after(results))
    term = stored_students(students_dir)  # the table holds every student of the folder, this run's and earlier ones
    table = write_table(out, term)
    print(_f("{graded} graded, {skipped} unchanged, {errors} with grader errors; {students} students in {table}",
             graded=len(todo), skipped=skipped, errors=errors, students=len(term), table=table))
    return 1 if errors else 0


# --------------------------------------------------------------------------- command line


def add_verbs(verbs) -> None:
    batch = verbs.add_parser("batch", help=_("grade every student in a folder of submissions"))
    batch.add_argument("submitted", type=Path, help=_("nbgrader's submitted/ folder, or one folder per student"))
    batch.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                       help=_("students graded at once (default %(default)s)"))
    add_device_flag(batch)
    batch.add_argument("--out", type=Path, default=Path("grades"), help=_("output folder (default %(default)s)"))
    batch.add_argument("--force", action="store_true",
                       help=_("grade again even the unchanged submissions; with --gradebook, also replace the scores "
                            "nbgrader's autograde wrote after this grader's"))
    batch.add_argument("--shard", help=_("grade only shard K of N (K/N) of the students (each belongs to one shard, "
                                         "by a hash of their id)"))
    add_selection_flags(batch, N_("grade"))
    batch.add_argument("--student-timeout", type=float, default=900.0,
                       help=_("seconds one student's whole grading may take (default %(default)s)"))
    batch.add_argument("--gradebook", metavar="URL_OR_PATH",
                       help=_("afterwards, record each student's section scores in this existing nbgrader "
                            "gradebook (sqlite:///.../gradebook.db or its path); see autograder/instructor/gradebook.py"))
    batch.add_argument("--report", action="store_true",
                       help=_("also write each student's feedback report (report.html, report.md) to "
                            "OUT/feedback/<student>/, for handing back"))
    batch.add_argument("--similarity", action="store_true",
                       help=_("also compare the students' code, section by section: OUT/similarity.csv and "
                            "OUT/similarity.html, for the instructor only (evidence; no score changes)"))
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
    chosen = chosen_sections(args.assignment, args.section, args.assignments)
    if not args.submitted.is_dir():
        raise UsageError(_f("{folder}: no such folder", folder=args.submitted))
    gradebook = getattr(args, "gradebook", None)
    section_ids = chosen or [s.id for s in SECTIONS]
    recorded = section_ids
    if gradebook is not None:  # refuse before grading anything: a missing file, no section of the run in it
        from autograder.instructor.gradebook import check_sections

        recorded = check_sections(gradebook, section_ids)
    device = resolve_device(args.device)
    try:
        status = run_batch(args.submitted, args.out, args.jobs, device, limits, args.force, shard,
                           args.student_timeout, chosen, resume=getattr(args, "argv", None))
    except SandboxRefused as error:
        print(_f("autograder: error: {error}", error=error), file=sys.stderr)
        return 1
    report = getattr(args, "report", False)
    reach = nbgrader_course(args.submitted, gradebook)  # nbgrader's feedback pages go back by the files' names
    if status in (0, 1) and (report or gradebook is not None or reach):  # this run's results, read once for all
        results, folders = shard_results(args.submitted, args.out, shard)
        if report:
            write_reports(args.out, results)
        if reach:
            say_unreached(results, args.out, report)
        if gradebook is not None:  # a student who handed in nothing this run has nothing to record
            handed_in = {name: result for name, result in results.items() if name in folders}
            status = record_in_gradebook(gradebook, handed_in, folders, args.out, recorded, status, args.force)
    elif gradebook is not None:
        logger.warning(_f("gradebook: nothing recorded (the batch stopped with status {status}); run it again",
                          status=status))
    if getattr(args, "similarity", False) and status in (0, 1):
        from autograder.instructor import similarity

        compared = [section_named(section_id) for section_id in section_ids]
        graded = args.out if (args.out / STUDENTS).is_dir() else None  # the records of wrong answers, if any
        similarity.run(args.submitted, args.out, discover(args.submitted), compared,  # the whole class, any shard
                       grades=graded)
    return status


def shard_results(submitted: Path, out: Path, shard) -> tuple[dict[str, Stored], dict[str, Path]]:
    """(student -> their stored grade, student -> their folder), for this run's students (run_students);
    a student of the output folder without a folder in SUBMITTED_DIR has a grade and no folder."""
    everyone = discover(submitted)
    known = stored_students(out / STUDENTS)
    results = {name: known[name] for name in run_students(everyone, known, shard) if name in known}
    return results, {name: everyone[name] for name in results if name in everyone}


def write_reports(out: Path, results: dict[str, Stored]) -> int:
    """`--report`: each student's report.html and report.md in OUT/feedback/<safe name>/; returns how many."""
    from autograder.feedback.report import HTML_NAME, MARKDOWN_NAME, write_report

    written = 0
    for name in sorted(results):
        folder = out / student_paths(name)["feedback"]
        if results[name].grader_errors:  # a placeholder zero: nothing to hand back
            for stale in (HTML_NAME, MARKDOWN_NAME):
                (folder / stale).unlink(missing_ok=True)
            said = terminal_text(name)
            logger.warning(_f("autograder: no feedback report for {name}: grader error (grade again)", name=said))
            continue
        try:
            write_report(results[name].grade, folder)
            written += 1
        except Exception as error:  # the grades stand without it; the next run writes it again
            logger.warning(_f("autograder: could not write the feedback report of {name} to {folder}: {error}",
                              name=terminal_text(name), folder=folder, error=f"{type(error).__name__}: {error}"))
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
