"""The `export-gradescope` verb: build the zip Gradescope's "autograder" assignment type takes.

    python -m autograder export-gradescope --out autograder.zip
    python -m autograder export-gradescope --assignment week1 --out week1.zip   # one assignment's sections

Gradescope unpacks the zip into /autograder/source, runs setup.sh once to build
the image, then for each submission runs /autograder/run_autograder (copied
from the zip's root), which must write /autograder/results/results.json. The
zip holds:

    setup.sh          installs Python >= 3.11, CPU torch and the grader's few dependencies
    run_autograder    grades /autograder/submission with the hidden checks (of every section, or of
                      the sections --assignment / --section name: one assignment's archive)
    pyproject.toml, autograder/, solutions/   the grader, its checks and the reference solutions
"""
from __future__ import annotations

import io
import json
import logging
import shlex
import zipfile
from pathlib import Path

from autograder.core.files import write_bytes_atomically
from autograder.core.not_graded import GRADER_FAILED, NotGraded
from autograder.core.submission import UsageError
from autograder.i18n import N_, _, _f
from autograder.instructor import declared
from autograder.instructor.assignments import add_selection_flags, chosen_sections

logger = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]
CPU_INDEX_URL = "https://download.pytorch.org/whl/cpu"
SOURCE = "/autograder/source"
SUBMISSION = "/autograder/submission"
RESULTS = "/autograder/results/results.json"
VENV = "/autograder/venv"
PIP_REQUIREMENT = "pip>=23.2,<27"  # new enough for torch's wheels, and not a release the course never met
# the kernel Gradescope's machine needs: no user namespaces there, so the grader's tier is Landlock's
LANDLOCK_LINUX = "5.13"

# The grading command run_autograder runs, as a list (the test parses it back).
GRADE_ARGS = ["-m", "autograder", "grade", SUBMISSION, "--device", "cpu", "--format", "json",
              "--output", RESULTS]


def grade_args(section_ids: list[str] | None) -> list[str]:
    """run_autograder's grading command: every section, or only `section_ids` (one assignment's)."""
    return GRADE_ARGS + (["--section", ",".join(section_ids)] if section_ids else [])


def grading_requirements(root: Path = ROOT) -> list[str]:
    """What grading imports besides torch and the standard library, as pyproject.toml declares it, and
    what the notebooks import beyond that (declared.NOTEBOOK_IMPORTS: every cell of a notebook runs
    when it is graded) (tests/container_image.py installs the same)."""
    runtime = [line for line in declared.runtime_requirements(root) if declared.name_of(line) != "torch"]
    return runtime + declared.notebook_requirements(root)


def setup_sh(root: Path = ROOT) -> str:
    """Gradescope's setup.sh: pip, the course's torch release (CPU build), then what grading imports, in
    the ranges pyproject.toml declares."""
    torch, others = f"torch=={declared.torch_version(root)}", shlex.join(grading_requirements(root))
    return f"""#!/usr/bin/env bash
# Gradescope runs this once, as root, while building the autograder image.
set -euxo pipefail
export DEBIAN_FRONTEND=noninteractive

PY=""
for candidate in python3.13 python3.12 python3.11 python3; do
    if command -v "$candidate" >/dev/null &&
       "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
        PY=$(command -v "$candidate"); break
    fi
done
if [ -z "$PY" ]; then
    apt-get update
    apt-get install -y --no-install-recommends python3.11 python3.11-venv
    PY=$(command -v python3.11)
fi
"$PY" -m venv --clear {VENV} || {{
    apt-get update
    apt-get install -y --no-install-recommends "$(basename "$PY")-venv"
    "$PY" -m venv --clear {VENV}
}}
{VENV}/bin/python -m pip install {shlex.quote(PIP_REQUIREMENT)}
{VENV}/bin/python -m pip install "{torch}" --index-url {CPU_INDEX_URL}
{VENV}/bin/python -m pip install {others}
# Warm up: import the grader once so the first student does not pay for the .pyc files.
cd {SOURCE} && PYTHONPATH={SOURCE} {VENV}/bin/python -c "import torch, autograder.core.grade"
"""


RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission, as root in a container without
# CAP_SYS_ADMIN: the grader confines student code in its landlock tier there
# (Landlock, seccomp, a uid of its own; Linux >= {LANDLOCK_LINUX}), and refuses to grade where no tier holds.
# It must leave {RESULTS}. It grades {what}.
# The tier this machine gives: submit an empty file as a test student before the students do;
# the autograder output then shows the line "sandbox: tier landlock: ..." (results.json's extra_data.sandbox
# says the same), or results.json says why nothing could be graded (extra_data.not_graded).
set -uo pipefail
mkdir -p "$(dirname {RESULTS})"
rm -f {RESULTS}
cd {SOURCE}
# Where it cannot grade (no sandbox here, a submission it cannot read, its own failure), the grader
# writes results.json itself, saying why.
PYTHONPATH={SOURCE} {VENV}/bin/python {grade}
status=$?
if [ ! -s {RESULTS} ]; then
    # The grader stopped before it could write even that: its exit status is all there is.
    last_resort={last_resort}
    printf '%s\\n' "${{last_resort//{STATUS}/$status}}" > {RESULTS}
fi
exit 0  # whatever happened is in results.json (status $status); Gradescope must still read it
"""
# In run_autograder's last resort, where the grader's exit status goes.
STATUS = "@STATUS@"


def last_resort() -> str:
    """The results.json run_autograder writes when the grader wrote none, with STATUS for its exit status."""
    stopped = NotGraded(GRADER_FAILED, _f("the grader stopped with exit status {status}", status=STATUS))
    return json.dumps(stopped.to_gradescope(), ensure_ascii=False)


def run_autograder(section_ids: list[str] | None) -> str:
    """The run_autograder script of an archive that grades `section_ids` (None: every section)."""
    what = "the sections " + ", ".join(section_ids) if section_ids else "every section"
    return RUN_AUTOGRADER.format(LANDLOCK_LINUX=LANDLOCK_LINUX, RESULTS=RESULTS, SOURCE=SOURCE, VENV=VENV,
                                 what=what, grade=shlex.join(grade_args(section_ids)), STATUS=STATUS,
                                 last_resort=shlex.quote(last_resort()))


INCLUDE = ("pyproject.toml", "autograder", "solutions")


def members() -> list[tuple[str, Path]]:
    """(name in the zip, file on disk) for the grader's own files."""
    found = []
    for item in INCLUDE:
        path = ROOT / item
        if path.is_file():
            found.append((item, path))
            continue
        for file in sorted(path.rglob("*")):
            if file.is_file() and "__pycache__" not in file.parts and file.suffix not in (".pyc", ".tmp") \
                    and not file.name.startswith("."):
                found.append((file.relative_to(ROOT).as_posix(), file))
    return found


def _add(archive: zipfile.ZipFile, name: str, data: bytes, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))  # fixed: same files, same zip
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = ((0o755 if executable else 0o644) | 0o100000) << 16
    archive.writestr(info, data)


def export(out: Path, section_ids: list[str] | None = None) -> int:
    """Write the archive that grades `section_ids` (None: every section) to `out`."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        _add(archive, "setup.sh", setup_sh().encode(), executable=True)
        _add(archive, "run_autograder", run_autograder(section_ids).encode(), executable=True)
        for name, path in members():
            _add(archive, name, path.read_bytes())
    write_bytes_atomically(out, buffer.getvalue())
    logger.info(_f("wrote {out} ({kib} KiB): upload it as the Gradescope autograder", out=out,
                   kib=out.stat().st_size // 1024))
    logger.info(_f("it grades: {sections}", sections=", ".join(section_ids) if section_ids else _("every section")))
    logger.info(_f("Gradescope's machine must give the sandbox's Landlock tier (Linux >= {version}), or nothing is "
             "graded: before the students submit, submit an empty file as a test student and look for "
             "\"sandbox: tier landlock\" in the autograder output", version=LANDLOCK_LINUX))
    return 0


def add_verbs(verbs) -> None:
    verb = verbs.add_parser("export-gradescope", help=_("build the Gradescope autograder zip"))
    verb.add_argument("--out", type=Path, default=Path("autograder.zip"))
    # i18n: a verb, as in "grade only these sections"
    add_selection_flags(verb, N_("grade"))
    verb.set_defaults(main=main)


def main(args) -> int:
    if args.out.suffix != ".zip":
        raise UsageError(_f("--out {out}: expected a .zip file name", out=args.out))
    if args.out.is_dir():
        raise UsageError(_f("--out {out} is a folder; give a .zip file name", out=args.out))
    try:
        return export(args.out, chosen_sections(args.assignment, args.section, args.assignments))
    except declared.DeclaredError as error:  # export-gradescope runs in the course repository
        raise UsageError(str(error)) from None
