"""`python -m course.builder [--check]`: build every generated file, or report the stale ones."""
from __future__ import annotations

import argparse
import sys

import course.builder
from course.builder.layout import BuildError
from course.builder.outputs import drift, write
from course.builder.steps import build


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.builder", description=course.builder.__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if any generated file is out of date")
    args = parser.parse_args(argv)
    try:
        result = build()
    except BuildError as error:
        print(f"course.builder: error: {error}", file=sys.stderr)
        return 2
    if result.sections_without_spec:
        print("no notebook spec yet (only examples/correct_py built): " + ", ".join(result.sections_without_spec))
    if args.check:
        problems = drift(result)
        for line in problems:
            print(line)
        if problems:
            print(f"{len(problems)} generated file(s) out of date: run `python -m course.builder`", file=sys.stderr)
            return 1
        print(f"all {len(result.paths())} generated files are up to date")
        return 0
    for line in write(result):
        print(line)
    print(f"{len(result.paths())} generated files up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
