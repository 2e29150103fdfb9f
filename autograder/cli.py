"""Command line: python -m autograder grade|check ...

Exit status: 0 when grading completed (whatever the score), 2 for a bad command
line (one line on stderr), 1 only when the grader itself failed.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from autograder.formats import FORMATS, render
from autograder.submission import UsageError, locate
from autograder.workers import Limits


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, not argparse's usage dump
        raise UsageError(message)


def build_parser() -> Parser:
    parser = Parser(prog="python -m autograder", description="Grade the attention course.")
    verbs = parser.add_subparsers(dest="verb", required=True, parser_class=Parser)

    def common(p):
        p.add_argument("--section", help="grade only this section (e.g. 02_softmax)")
        p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
        p.add_argument("--format", default="table", choices=FORMATS)
        p.add_argument("--output", help="write the report to this file instead of stdout")
        p.add_argument("--call-timeout", type=float, default=Limits.call_seconds,
                       help="seconds one call of student code may take (default %(default)s)")
        p.add_argument("--load-timeout", type=float, default=Limits.load_seconds,
                       help="seconds a notebook may take to load (default %(default)s)")
        p.add_argument("--memory-limit", type=float, default=Limits.memory_bytes / 1024**3,
                       help="GiB of address space for student code (default %(default)s)")

    grade = verbs.add_parser("grade", help="grade a submission with the hidden checks")
    grade.add_argument("submission", type=Path)
    common(grade)
    check = verbs.add_parser("check", help="self-check: run the visible checks on your notebooks")
    check.add_argument("submission", type=Path, nargs="?", default=Path("."))
    common(check)
    return parser


def resolve_device(choice: str) -> str:
    import torch

    if choice == "cpu":
        return "cpu"
    available = torch.cuda.is_available()
    if choice == "cuda" and not available:
        raise UsageError("--device cuda: no CUDA GPU is available on this machine")
    return "cuda" if available else "cpu"


def write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)


def main(argv=None) -> int:
    try:
        args = build_parser().parse_args(argv)
        sources = locate(args.submission, args.section)
        for name, value in (("--call-timeout", args.call_timeout), ("--load-timeout", args.load_timeout),
                            ("--memory-limit", args.memory_limit)):
            if not value > 0:
                raise UsageError(f"{name} must be a positive number, got {value:g}")
        device = resolve_device(args.device)
    except UsageError as error:
        print(f"autograder: error: {error}", file=sys.stderr)
        return 2
    limits = Limits(call_seconds=args.call_timeout, load_seconds=args.load_timeout,
                    memory_bytes=int(args.memory_limit * 1024**3))
    from autograder.grade import run_checks

    try:
        result = run_checks(sources, device, limits, visible_only=args.verb == "check")
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
    for error in result.grader_errors:
        print(f"autograder: grader error: {error.splitlines()[0] if error else ''}", file=sys.stderr)
    if result.grader_errors and os.environ.get("AUTOGRADER_DEBUG"):
        print("\n\n".join(result.grader_errors), file=sys.stderr)
    return 1 if result.grader_errors else 0
