"""What the course declares in pyproject.toml, read from there: the one place that names what the
grader needs at run time and the torch release the course pins.

    python3 -m autograder.instructor.declared torch-version        # 2.13.0
    python3 -m autograder.instructor.declared requirement ipython  # ipython>=9.0,<10

The self-check wheel's requirements (selfcheck_export) and Gradescope's setup.sh (gradescope) are
made from it; ci/setup.sh, ci/prepare_gpu_wheels.sh and the instructors' workflows run it from the
course's folder, before anything is installed: it needs only the standard library (and the
grader's words, autograder.i18n, which need nothing more).
"""
from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path

from autograder.i18n import _, _f

ROOT = Path(__file__).resolve().parents[2]
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


class DeclaredError(Exception):
    """pyproject.toml cannot be read, or does not declare what was asked (one line)."""


def project(root: Path = ROOT) -> dict:
    path = root / "pyproject.toml"
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))["project"]
    except (OSError, KeyError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise DeclaredError(_f("{path}: no [project] table to read ({error})", path=path,
                               error=type(error).__name__)) from None


def normalized(name: str) -> str:
    """A distribution's name as pip compares it (PEP 503): `Jupyter_Client` is `jupyter-client`."""
    return re.sub(r"[-_.]+", "-", name).lower()


def name_of(requirement: str) -> str:
    found = NAME.match(requirement.strip())
    return normalized(found[0]) if found else ""


def requires_python(root: Path = ROOT) -> str:
    """The Python releases the course runs on (requires-python): ">=3.11"."""
    found = project(root).get("requires-python")
    if not isinstance(found, str):
        raise DeclaredError(_("pyproject.toml declares no requires-python"))
    return found


# What the course's notebooks import beyond the dependencies: section 07 prints its table with pandas.
# Every place that runs the notebooks outside the students' own environment installs them
# (Gradescope's setup.sh: instructor/gradescope.py), and the batch's zygote imports them once
# (instructor/jobs.py); each is a requirement of an extra, in its declared range (`requirement`).
NOTEBOOK_IMPORTS = ("pandas",)


def notebook_requirements(root: Path = ROOT) -> list[str]:
    """The requirements of NOTEBOOK_IMPORTS, as pyproject.toml declares them."""
    return [requirement(name, root) for name in NOTEBOOK_IMPORTS]


def runtime_requirements(root: Path = ROOT) -> list[str]:
    """What grading (`grade`, `check`) needs at run time: the project's own dependencies."""
    return list(project(root).get("dependencies", []))


def requirement(name: str, root: Path = ROOT) -> str:
    """The requirement of `name` as declared: among the dependencies, else in an extra."""
    declared = project(root)
    for line in [*declared.get("dependencies", []), *(line for extra in declared.get("optional-dependencies", {})
                                                       .values() for line in extra)]:
        if name_of(line) == normalized(name):
            return line.split(";")[0].strip()
    raise DeclaredError(_f("pyproject.toml declares no requirement on {name}", name=name))


def torch_version(root: Path = ROOT) -> str:
    """The torch release the course pins (`torch==2.13.0` among the dependencies): `2.13.0`."""
    line = requirement("torch", root)
    pinned = re.fullmatch(r"torch\s*==\s*([0-9][0-9A-Za-z.]*)", line)
    if not pinned:
        raise DeclaredError(_f("pyproject.toml declares {line}, not one torch release (torch==X.Y.Z)", line=line))
    return pinned[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.instructor.declared",
                                     description=_("what pyproject.toml declares, for the course's scripts"))
    parser.add_argument("what", choices=["torch-version", "requirement"])
    parser.add_argument("name", nargs="?")
    args = parser.parse_args(argv)
    if (args.what == "requirement") != bool(args.name):
        parser.error(_("requirement takes one distribution's name; torch-version takes none"))
    try:
        print(torch_version() if args.what == "torch-version" else requirement(args.name))
    except DeclaredError as error:
        print(f"declared: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
