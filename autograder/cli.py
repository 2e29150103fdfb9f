"""Command line: python -m autograder grade|check ...

Exit status: 0 when grading completed (whatever the score), 2 for a bad command
line (one line on stderr), 1 only when the grader itself failed.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from autograder.core.files import write_atomically
from autograder.feedback.formats import FORMATS, render
from autograder.core.submission import UsageError, locate
from autograder.worker.namespaces import not_dumpable
from autograder.sandbox.limits import Limits


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, not argparse's usage dump
        raise UsageError(message)


def build_parser() -> Parser:
    parser = Parser(prog="python -m autograder", description="Grade the attention course.")
    verbs = parser.add_subparsers(dest="verb", required=True, parser_class=Parser)

    def limits_only(p):
        p.add_argument("--call-timeout", type=float, default=Limits.call_seconds,
                       help="seconds one call of student code may take (default %(default)s)")
        p.add_argument("--cell-timeout", type=float, default=Limits.cell_seconds,
                       help="seconds one notebook cell may run; a cell past it is interrupted and the rest "
                            "of the notebook still runs, as nbgrader does (default %(default)s)")
        p.add_argument("--load-timeout", type=float, default=Limits.load_seconds,
                       help="seconds all of a notebook's cells may take to run (default %(default)s)")
        p.add_argument("--memory-limit", type=float, default=Limits.memory_bytes / 1024**3,
                       help="GiB of address space for student code (default %(default)s)")
        p.add_argument("--cpu-limit", type=float, default=Limits.cpu_seconds,
                       help="CPU seconds per section's worker (default %(default)s)")
        p.add_argument("--file-limit", type=float, default=Limits.file_bytes / 1024**2,
                       help="MiB: largest file student code may write (default %(default)s)")
        p.add_argument("--process-limit", type=int, default=Limits.processes,
                       help="processes student code may run (default %(default)s)")
        p.add_argument("--section-budget", type=float, default=Limits.section_seconds,
                       help="seconds all of one section's loading and calls may take together "
                            "(default %(default)s)")
        p.add_argument("--submission-budget", type=float, default=Limits.submission_seconds,
                       help="seconds all sections of a submission may take together (default %(default)s)")
        p.add_argument("--sandbox", default="on", choices=("on", "weak", "off"),
                       help="'on': hidden grading refuses to run where no sandbox tier holds; 'weak': "
                            "grade anyway, every output marked; 'off': no confinement, for debugging only")

    def common(p):
        p.add_argument("--section", help="grade only this section (e.g. 02_softmax)")
        p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
        p.add_argument("--format", default="table", choices=FORMATS)
        p.add_argument("--output", help="write the report to this file instead of stdout")
        p.add_argument("--report", type=Path, metavar="DIR",
                       help="also write a feedback report with heatmaps to DIR/report.html and DIR/report.md "
                            "(check writes ./feedback/ by default)")
        limits_only(p)

    grade = verbs.add_parser("grade", help="grade a submission with the hidden checks")
    grade.add_argument("submission", type=Path)
    common(grade)
    check = verbs.add_parser("check", help="self-check: run the visible checks on your notebooks")
    check.add_argument("submission", type=Path, nargs="?", default=Path("."))
    common(check)

    from autograder.instructor import batch, gradescope, selfcheck_export

    batch.add_verbs(verbs, limits_only)
    gradescope.add_verb(verbs)
    selfcheck_export.add_verb(verbs)
    report = verbs.add_parser("report", help="class report from a batch's grades.csv and students/*.json")
    report.add_argument("grades", type=Path, metavar="GRADES_DIR")
    report.add_argument("--out", type=Path, metavar="DIR", help="where to write class_report.html "
                        "and its CSV files (default: GRADES_DIR)")
    return parser


GPU_DRIVER_FILES = ("/dev/nvidiactl", "/proc/driver/nvidia/version", "/dev/kfd", "/dev/dxg")


def resolve_device(choice: str) -> str:
    if choice == "cpu":
        return "cpu"
    if choice == "auto" and not any(os.path.exists(path) for path in GPU_DRIVER_FILES):
        return "cpu"  # no GPU driver: no need to import torch (seconds) to learn that
    import torch

    available = torch.cuda.is_available()
    if choice == "cuda" and not available:
        raise UsageError("--device cuda: no CUDA GPU is available on this machine")
    return "cuda" if available else "cpu"


def write_feedback(result, folder: Path | None) -> None:
    """The student's report.html / report.md; a failure to write it is said on stderr, not fatal."""
    if folder is None:
        return
    from autograder.feedback.report import write_report

    try:
        path = write_report(result, folder)
    except Exception as error:  # the report is extra: the grade above stands without it
        print(f"autograder: could not write the feedback report to {folder}: {type(error).__name__}: {error}",
              file=sys.stderr)
        if os.environ.get("AUTOGRADER_DEBUG"):
            raise
    else:
        print(f"autograder: feedback report: {path}", file=sys.stderr)


def limits_from(args) -> Limits:
    """The Limits the limit flags ask for (grade, check, batch); UsageError for a bad value."""
    for name, value in (("--call-timeout", args.call_timeout), ("--cell-timeout", args.cell_timeout),
                        ("--load-timeout", args.load_timeout),
                        ("--memory-limit", args.memory_limit), ("--cpu-limit", args.cpu_limit),
                        ("--file-limit", args.file_limit), ("--process-limit", args.process_limit),
                        ("--section-budget", args.section_budget),
                        ("--submission-budget", args.submission_budget)):
        if not value > 0:
            raise UsageError(f"{name} must be a positive number, got {value:g}")
    return Limits(call_seconds=args.call_timeout, cell_seconds=args.cell_timeout, load_seconds=args.load_timeout,
                  memory_bytes=int(args.memory_limit * 1024**3),
                  cpu_seconds=max(1, round(args.cpu_limit)), file_bytes=int(args.file_limit * 1024**2),
                  processes=args.process_limit, section_seconds=args.section_budget,
                  submission_seconds=args.submission_budget, sandbox=args.sandbox)


def preload_trusted(report: bool) -> None:
    """Import what the trusted side runs after grading before any student code runs: no module
    of the grader is first read from disk once student code has had its chance at the disk."""
    import autograder.feedback.formats  # noqa: F401

    if report:
        import autograder.feedback.heatmaps  # noqa: F401
        import autograder.feedback.report  # noqa: F401


def run_instructor_verb(args) -> int:
    """batch, merge, export-gradescope: the instructor's side (UsageError is handled by main)."""
    from autograder.instructor import batch, gradescope

    if args.verb == "export-gradescope":
        return gradescope.run_verb(args)
    return batch.run_verb(args, resolve_device, limits_from)


def main(argv=None) -> int:
    not_dumpable()  # before anything secret is read: the hidden checks, a token in the environment
    try:
        args = build_parser().parse_args(argv)
        if args.verb in ("batch", "merge", "export-gradescope"):
            return run_instructor_verb(args)
        if args.verb == "report":
            from autograder.instructor import class_report

            return class_report.run_verb(args)
        if args.verb == "export-selfcheck":
            from autograder.instructor import selfcheck_export

            return selfcheck_export.run_verb(args)
        sources = locate(args.submission, args.section)
        limits = limits_from(args)
    except UsageError as error:
        print(f"autograder: error: {error}", file=sys.stderr)
        return 2
    from autograder.sandbox.launch import start_launcher

    launcher = start_launcher(limits)  # started before our own `import torch`, so the two imports overlap
    try:
        device = resolve_device(args.device)
    except UsageError as error:
        launcher.close()
        print(f"autograder: error: {error}", file=sys.stderr)
        return 2
    visible_only = args.verb == "check"
    from autograder.core.grade import HiddenChecksMissing, SandboxRefused, preload_checks, run_checks

    preload_trusted(report=visible_only or args.report is not None)
    if not visible_only:
        preload_checks()
    try:
        try:
            result = run_checks(sources, device, limits, visible_only=visible_only, zygote=launcher)
        finally:
            launcher.close()
        if launcher.sandbox is not None:
            print(launcher.sandbox_line(limits), file=sys.stderr)
            if visible_only:
                from autograder.sandbox.tiers import protection_line

                print(protection_line(launcher.sandbox), file=sys.stderr)
    except (HiddenChecksMissing, SandboxRefused) as error:  # the self-check copy of the grader; no sandbox
        print(f"autograder: error: {error}", file=sys.stderr)
        return 2 if isinstance(error, HiddenChecksMissing) else 1
    except Exception as error:  # the grader's own failure: say so, exit 1
        print(f"autograder: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        if os.environ.get("AUTOGRADER_DEBUG"):
            raise
        return 1
    result.submission = str(args.submission)
    text = render(result, args.format)
    if args.output:
        write_atomically(Path(args.output), text)
    else:
        sys.stdout.write(text)
    write_feedback(result, args.report or (Path("feedback") if args.verb == "check" else None))
    for error in result.grader_errors:
        print(f"autograder: grader error: {error.splitlines()[0] if error else ''}", file=sys.stderr)
    if result.grader_errors and os.environ.get("AUTOGRADER_DEBUG"):
        print("\n\n".join(result.grader_errors), file=sys.stderr)
    return 1 if result.grader_errors else 0
