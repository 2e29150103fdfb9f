"""Command line: python -m autograder grade|check ...

Exit status: 0 when grading completed (whatever the score), 2 for a bad command
line (one line on stderr), 1 only when the grader itself failed.

Messages: what a verb is run for (its results, tables, the report's path, a one-line error) is
printed; its progress and diagnostics (a batch's line per student, the sandbox's tier, "wrote ..."
lines, warnings) go through the standard library's `logging`, each module's logger under
"autograder", shown on stderr as the bare translated line. `configure_logging` is the one place
that sets it up: the default level shows what people read today, `-q/--quiet` only warnings,
`-v/--verbose` the details too (a self-check's sandbox layers, a grader error's traceback).

Language: grade, check, batch, merge, report, similarity and the export verbs speak the language
`i18n.resolve` picks (--lang, then $ATTENTION_COURSE_LANG, then, for grade and check, the submission notebook's
metadata.course.language, then English), set once here before anything is said.
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
import traceback
from pathlib import Path

from autograder.core.files import write_atomically
from autograder import i18n
from autograder.core.options import add_device_flag, add_language_flag, add_limit_flags, limits_from, resolve_device
from autograder.core.not_graded import (COMMAND_LINE, GRADER_FAILED, NO_SANDBOX, SUBMISSION, VISIBLE_CHECKS_ONLY,
                                        NotGraded)
from autograder.core.submission import UsageError, folder_language, locate, own_name, sections_named, written_language
from autograder.feedback.formats import FORMATS, gradescope_json, render
from autograder.i18n import _, _f, argparse_words
from autograder.worker.namespaces import not_dumpable

logger = logging.getLogger(__name__)


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, not argparse's usage dump
        raise UsageError(message)

    def format_help(self):
        """argparse's help, each group's heading ended as its language ends one (argparse writes ':')."""
        return argparse_words.headed(super().format_help())


def build_parser() -> Parser:
    """Every verb's parser; each sets `main`, the function that runs it (no dispatch on names)."""
    parser = Parser(prog="python -m autograder", description=_("Grade the attention course."))
    verbs = parser.add_subparsers(dest="verb", required=True, parser_class=Parser)

    def grading_flags(p):
        p.add_argument("--section", action="append", metavar="ID[,ID...]",
                       help=_("grade only these sections (e.g. 02_softmax, or 01_scores,02_softmax; repeatable)"))
        add_device_flag(p)
        add_language_flag(p)
        p.add_argument("--format", default="table", choices=FORMATS)
        p.add_argument("--output", help=_("write the report to this file instead of stdout"))
        p.add_argument("--json", type=Path, metavar="FILE",
                       help=_("also write the result as JSON (--format json's: score, max_score, tests) to FILE, "
                            "for a CI job to read, whatever --format shows"))
        p.add_argument("--report", type=Path, metavar="DIR",
                       help=_("also write a feedback report with heatmaps to DIR/report.html and DIR/report.md "
                            "(check writes ./feedback/ by default)"))
        add_limit_flags(p)
        p.set_defaults(main=grade_main)

    grade = verbs.add_parser("grade", help=_("grade a submission with the hidden checks"))
    grade.add_argument("submission", type=Path)
    grading_flags(grade)
    check = verbs.add_parser("check", help=_("self-check: run the visible checks on your notebooks"))
    check.add_argument("submission", type=Path, nargs="?", default=Path("."))
    grading_flags(check)

    from autograder.instructor import batch, class_report, classroom, gradescope, selfcheck_export, similarity

    for module in (batch, gradescope, selfcheck_export, class_report, similarity, classroom):
        module.add_verbs(verbs)
    for name in SPOKEN_BY_INSTRUCTOR_VERBS:
        add_language_flag(verbs.choices[name])
    for verb in verbs.choices.values():
        add_verbosity_flags(verb)
    return parser


def add_verbosity_flags(parser) -> None:
    """-v / -q: how much of the progress and diagnostics is shown (never the results)."""
    loudness = parser.add_mutually_exclusive_group()
    loudness.add_argument("-v", "--verbose", action="store_true",
                          help=_("also show the details: the sandbox's layers and limits (a self-check's too), "
                               "a grader error's whole traceback"))
    loudness.add_argument("-q", "--quiet", action="store_true",
                          help=_("show only the results, warnings and errors: no progress lines"))


class CurrentStderr(logging.StreamHandler):
    """A handler that writes each line to sys.stderr as it is then (a redirect made later, a test's capture)."""

    def __init__(self):
        super().__init__()
        self.setFormatter(logging.Formatter("%(message)s"))  # the translated line as it is: no level, no name

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):  # StreamHandler sets it; sys.stderr is read at each line instead
        pass


def level_of(args) -> int:
    """The level -v / -q ask for: the default shows the progress lines people read today."""
    if getattr(args, "verbose", False):
        return logging.DEBUG
    return logging.WARNING if getattr(args, "quiet", False) else logging.INFO


def configure_logging(level: int):
    """Show the grader's log lines of `level` and above on stderr; returns what undoes it."""
    grader = logging.getLogger("autograder")  # every module's logger is below it
    handler, previous = CurrentStderr(), (grader.level, grader.propagate)
    grader.addHandler(handler)
    grader.setLevel(level)
    grader.propagate = False  # each line once, whatever a library does to the root logger

    def undo() -> None:  # a caller in the same process (a test, a notebook) gets its own logging back
        grader.removeHandler(handler)
        grader.setLevel(previous[0])  # setLevel: the loggers' cached levels are cleared
        grader.propagate = previous[1]

    return undo


# the instructor's verbs whose output people read, besides grade and check
SPOKEN_BY_INSTRUCTOR_VERBS = ("batch", "merge", "report", "similarity", "export-gradescope", "export-selfcheck",
                              "classroom-roster")


def spoken_early(typed: list[str]) -> None:
    """Before the command line is parsed (its --help, its errors): speak its --lang, else the environment's,
    else that of the notebooks in the current folder (a student's `check`); a code the grader does not know
    is left for choose_language to name, after the parse."""
    flag = next((typed[index + 1] for index in range(len(typed) - 1) if typed[index] == "--lang"), None)
    flag = flag or next((item.split("=", 1)[1] for item in typed if item.startswith("--lang=")), None)
    for explicit in dict.fromkeys((flag, None)):  # a flag naming no language: argparse says so, in the next one
        try:
            i18n.set_language(i18n.resolve(explicit, None if explicit else folder_language(Path.cwd())))
            return
        except i18n.LanguageError:
            continue


def choose_language(args, notebook_language: str | None = None) -> None:
    """Speak the language --lang, the environment or the notebook asks for (verbs without --lang:
    English); a code the grader does not know is a bad command line."""
    if not hasattr(args, "lang"):
        return
    try:
        i18n.set_language(i18n.resolve(args.lang, notebook_language))
    except i18n.LanguageError as error:
        raise UsageError(str(error)) from None


def write_feedback(result, folder: Path | None, args=None) -> None:
    """The student's report.html / report.md; a failure to write it is said on stderr, not fatal.
    args: the command line, when there is one: the report names its submission, and a run of one
    section or a few (--section) updates those sections only of the report already in `folder`."""
    if folder is None:
        return
    from autograder.feedback.report import write_report

    where = {} if args is None else {"source": args.submission, "visible_only": args.verb == "check",
                                     "update": args.section is not None}
    try:
        path = write_report(result, folder, **where)
    except Exception as error:  # the report is extra: the grade above stands without it
        print(report_not_written(folder, error), file=sys.stderr)
        if os.environ.get("AUTOGRADER_DEBUG"):
            raise
    else:
        print(_f("autograder: feedback report: {path}", path=path), file=sys.stderr)


def submission_name(path: Path) -> str:
    """How outputs name the submission: as given, or by its own name where it was given as `.`
    (a student's self-check in the folder of their notebooks)."""
    return own_name(path) if path == Path(".") else str(path)


def report_not_written(folder: Path, error: Exception) -> str:
    """One line: where the report could not go, why, and where to point --report instead."""
    import tempfile

    reason = error.strerror if isinstance(error, OSError) and error.strerror else f"{type(error).__name__}: {error}"
    elsewhere = Path(tempfile.gettempdir()) / "feedback"
    return _f("autograder: could not write the feedback report to {folder} ({reason}); the grade above stands: "
              "write the report to a folder you can write to with --report DIR, e.g. --report {elsewhere}",
              folder=folder.absolute(), reason=reason, elsewhere=elsewhere)


def preload_trusted(report: bool) -> None:
    """Import what the trusted side runs after grading before any student code runs: no module
    of the grader is first read from disk once student code has had its chance at the disk."""
    import autograder.feedback.formats  # noqa: F401

    if report:
        import autograder.feedback.heatmaps  # noqa: F401
        import autograder.feedback.report  # noqa: F401
        import autograder.feedback.report_store  # noqa: F401


def main(argv=None) -> int:
    previous = i18n.language()
    not_dumpable()  # before anything secret is read: the hidden checks, a token in the environment
    undo_logging = None
    try:
        typed = list(sys.argv[1:] if argv is None else argv)
        spoken_early(typed)  # the help and argparse's own errors in the language the command line asks for
        with argparse_words.speaking():
            args = build_parser().parse_args(typed)
        args.argv = typed  # as typed: `batch` tells how to resume
        undo_logging = configure_logging(level_of(args))
        choose_language(args)
        return args.main(args)
    except UsageError as error:
        print(_f("autograder: error: {error}", error=error), file=sys.stderr)
        return 2
    finally:  # a caller in the same process (a test, a notebook) is spoken to in its own language again
        i18n.set_language(previous)
        if undo_logging is not None:
            undo_logging()


def grade_main(args) -> int:
    """`grade` (every check) and `check` (a student's self-check: the visible checks only). Where
    nothing can be graded, why is written where the JSON result would have gone, too (write_not_graded)."""
    with not_graded_as(args, COMMAND_LINE):
        if args.section is not None:  # an unknown section is the command's mistake, not the submission's
            sections_named(args.section)
        limits = limits_from(args)
    with not_graded_as(args, SUBMISSION):
        sources = locate(args.submission, args.section)
        spoken = i18n.language()
        choose_language(args, written_language(sources))  # the notebook's metadata, unless --lang or the environment
        if i18n.language() != spoken:  # its notes and cells' labels, read again in the notebook's language
            sources = locate(args.submission, args.section)
    from autograder.sandbox.launch import start_launcher

    # the zygote `python -m autograder` prestarted, its `import torch` overlapping ours (else a new one)
    launcher = start_launcher(limits)
    try:
        with not_graded_as(args, COMMAND_LINE):
            device = resolve_device(args.device)
    except BaseException:
        launcher.close()
        raise
    visible_only = args.verb == "check"
    from autograder.core.grade import preload_checks

    report = visible_only or args.report is not None
    preload_trusted(report=report)
    if not visible_only:
        preload_checks()
    return grade_and_write(args, sources, device, limits, launcher)


def grade_and_write(args, sources, device, limits, launcher) -> int:
    """Grade, then write the output and the feedback report; the exit status."""
    from autograder.core.grade import HiddenChecksMissing, SandboxRefused, run_checks

    visible_only = args.verb == "check"
    try:
        try:
            result = run_checks(sources, device, limits, visible_only=visible_only, launcher=launcher)
        finally:
            launcher.close()
        if launcher.sandbox is not None:
            # instructors read the sandbox's layers; a student, one plain line (the layers with --verbose)
            logger.log(logging.DEBUG if visible_only else logging.INFO, launcher.sandbox_line(limits))
            if visible_only:
                from autograder.sandbox.tiers import protection_line

                logger.info(protection_line(launcher.sandbox))
    except (HiddenChecksMissing, SandboxRefused) as error:  # the self-check copy of the grader; no sandbox
        print(_f("autograder: error: {error}", error=error), file=sys.stderr)
        missing = isinstance(error, HiddenChecksMissing)
        write_not_graded(args, NotGraded(VISIBLE_CHECKS_ONLY if missing else NO_SANDBOX, str(error)))
        return 2 if missing else 1
    except Exception as error:  # the grader's own failure: say so, exit 1
        what = f"{type(error).__name__}: {error}"
        print(_f("autograder: internal error: {error}", error=what), file=sys.stderr)
        logger.debug(traceback.format_exc().rstrip())  # the traceback, with -v
        write_not_graded(args, NotGraded(GRADER_FAILED, _f("the grader failed: {error}", error=what)))
        if os.environ.get("AUTOGRADER_DEBUG"):
            raise
        return 1
    result.submission = submission_name(args.submission)
    text = render(result, args.format, student=visible_only and not args.verbose)  # a student: no tier names
    if args.output:
        write_atomically(Path(args.output), text)
    else:
        sys.stdout.write(text)
    if args.json is not None:  # the data a CI job judges by, beside the report people read
        write_atomically(args.json, render(result, "json"))
    write_feedback(result, args.report or (Path("feedback") if args.verb == "check" else None), args)
    for error in result.grader_errors:
        print(_f("autograder: grader error: {error}", error=error.splitlines()[0] if error else ""), file=sys.stderr)
    if result.grader_errors and os.environ.get("AUTOGRADER_DEBUG"):
        print("\n\n".join(result.grader_errors), file=sys.stderr)
    elif result.grader_errors:  # the whole tracebacks, with -v
        logger.debug("\n\n".join(result.grader_errors))
    return 1 if result.grader_errors else 0


@contextlib.contextmanager
def not_graded_as(args, kind: str):
    """A bad command line or submission met inside is also written as a result of `kind` (write_not_graded)."""
    try:
        yield
    except UsageError as error:
        write_not_graded(args, NotGraded(kind, str(error)))
        raise


def write_not_graded(args, not_graded: NotGraded) -> None:
    """Where `grade` would have written its JSON result (--output with --format json, --json FILE),
    the reason it has none, as data (core/not_graded): Gradescope's run_autograder reads it there."""
    text = gradescope_json(not_graded.to_gradescope())
    for target in ([Path(args.output)] if args.output and args.format == "json" else []) + [args.json]:
        if target is None:
            continue
        try:
            write_atomically(target, text)
        except OSError as error:  # the line on stderr says why all the same
            logger.warning(_f("autograder: could not write {path}: {error}", path=target, error=error))
