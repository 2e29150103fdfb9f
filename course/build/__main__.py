"""`python -m course.build [--check]`: build every generated file, or report the stale ones."""
from __future__ import annotations

import argparse
import sys

import course.build
from course.build.layout import BuildError
from course.build.outputs import drift, write
from course.build.steps import build


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.build", description=course.build.__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if any generated file is out of date")
    args = parser.parse_args(argv)
    try:
        result = build()
    except BuildError as error:
        print(f"course.build: error: {error}", file=sys.stderr)
        return 2
    if result.sections_without_spec:
        print("no notebook spec yet (only examples/correct_py built): " + ", ".join(result.sections_without_spec))
    if args.check:
        problems = drift(result)
        for line in problems:
            print(line)
        if problems:
            print(f"{len(problems)} generated file(s) out of date: run `python -m course.build`", file=sys.stderr)
            return 1
        print(f"all {len(result.paths())} generated files are up to date")
        return 0
    for line in write(result):
        print(line)
    print(f"{len(result.paths())} generated files up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
