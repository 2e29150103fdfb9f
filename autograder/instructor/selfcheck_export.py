"""The `export-selfcheck` verb: build the wheel students install to check their own work.

    python -m autograder export-selfcheck --out DIR

It writes DIR/attention_course_selfcheck-<version>-py3-none-any.whl: the
autograder package without anything that gives answers away, i.e. without the
hidden checks (the folder autograder/checks/hidden/, whose modules compare with the
reference solutions), without solutions/ and without course/. Every other file goes
in as it is: each section's visible checks are a module of their own
(autograder/checks/section_<id>.py), so nothing is cut out of a file. What is left runs
`python -m autograder check` (the visible checks, which compare with the values
the notebooks print); `grade` refuses to run from it.

The wheel is written here rather than by a build backend so that it is exactly
reproducible: sorted entries, fixed timestamps and permissions, and no
compression (deflate output differs between zlib builds, and git compresses the
committed copy anyway). `python -m course.builder` commits it to
student_template/grader/, and `--check` notices when it no longer matches the grader.
"""
from __future__ import annotations

import ast
import base64
import hashlib
import io
import logging
import re
import tomllib
import zipfile
from collections.abc import Mapping
from pathlib import Path

from autograder.core.files import write_bytes_atomically
from autograder.core.sections import CHECK_PREFIX, HIDDEN_PACKAGE
from autograder.core.submission import UsageError
from autograder.i18n import _, _f, catalogues
from autograder.i18n.mo import mo_bytes, mo_messages
from autograder.instructor import declared

logger = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]
DISTRIBUTION = "attention-course-selfcheck"
WHEEL_STEM = DISTRIBUTION.replace("-", "_")
TAG = "py3-none-any"
# The torch releases the self-check accepts: a range, not the course's pin (torch==X.Y.Z in
# pyproject.toml, declared.torch_version), so that a student's existing torch (Colab's, a lab
# machine's) is kept rather than replaced by a download of several GB. Its ends are the releases
# the self-check is tested on (torch_tested): the course's pin, and the newest below.
TORCH_NEWEST_TESTED = "2.14.1"
ZIP_TIME = (2020, 1, 1, 0, 0, 0)
# nothing else belongs to the grader: stray files stay out (.mo: its message catalogues, compiled)
SHIPPED_SUFFIXES = (".py", ".ini", ".mo")
# a section's visible checks, shipped: each must be declared visible (checked below, never cut)
CHECK_FILE = re.compile(r"autograder/checks/" + re.escape(CHECK_PREFIX) + r"[^/]*\.py")
HIDDEN_FOLDER = f"autograder/checks/{HIDDEN_PACKAGE}/"  # the hidden checks: never shipped
# Modules a shipped file may not import: they hold the answers, and are not in the wheel anyway.
ANSWER_MODULE = re.compile(r"(solutions|course)(\.|$)|autograder\.checks\." + re.escape(HIDDEN_PACKAGE) + r"(\.|$)")


class ExportError(Exception):
    """The grader cannot be packed for students as it is (a shipped file imports the answers, ...)."""


def torch_tested(root: Path = ROOT) -> tuple[str, str]:
    """The torch releases the self-check is tested on, the ends of its range: the course's pin, the newest."""
    return declared.torch_version(root), TORCH_NEWEST_TESTED


def torch_range(root: Path = ROOT) -> str:
    """">=2.13,<2.15": from the pin's minor release to the newest tested one's, both included (the
    wheel's metadata, the students' README through course/builder/readme.py)."""
    oldest, newest = (version.split(".") for version in torch_tested(root))
    return f">={oldest[0]}.{oldest[1]},<{newest[0]}.{int(newest[1]) + 1}"


def requires(root: Path = ROOT) -> list[str]:
    """What `check` needs at run time: the project's own dependencies (pyproject.toml), torch as the range."""
    return [f"torch{torch_range(root)}" if declared.name_of(line) == "torch" else line
            for line in declared.runtime_requirements(root)]


def project_version(root: Path = ROOT) -> str:
    pyproject = root / "pyproject.toml"
    try:
        return tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]
    except (OSError, KeyError, tomllib.TOMLDecodeError) as error:
        raise ExportError(_f("{pyproject}: no project version to name the wheel with ({error}); "
                             "export-selfcheck runs in the course repository", pyproject=pyproject,
                             error=type(error).__name__)) from None


def wheel_name(version: str) -> str:
    return f"{WHEEL_STEM}-{version}-{TAG}.whl"


def _decorated_check(node: ast.AST) -> dict | None:
    """The keywords of `@check(...)` on a top-level function, or None when it is not a check."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    for decorator in node.decorator_list:
        if isinstance(decorator, ast.Call) and getattr(decorator.func, "id", None) == "check":
            return {k.arg: k.value for k in decorator.keywords}
    return None


def _is_visible(keywords: dict) -> bool:
    """Whether a check's keywords make it visible: visibility="visible", visible=True or documented=True.

    Only literal values count: a visibility computed at run time is not shipped (the wheel
    would otherwise hold a check it cannot tell is public)."""
    if any(isinstance(keywords.get(name), ast.Constant) and keywords[name].value is True
           for name in ("visible", "documented")):
        return True
    visibility = keywords.get("visibility")
    return isinstance(visibility, ast.Constant) and visibility.value == "visible"


def hidden_checks(source: str) -> list[str]:
    """The names of the checks in a visible checks' module that are not declared visible: such a
    check belongs in checks/hidden/, and the wheel is not built while one is shipped."""
    return [node.name for node in ast.parse(source).body
            if _decorated_check(node) is not None and not _is_visible(_decorated_check(node))]


def is_shipped(rel: str) -> bool:
    """Whether the file at `rel` (a path under the repository, with '/') goes into the wheel."""
    parts = rel.split("/")
    return (parts[0] == "autograder" and rel.endswith(SHIPPED_SUFFIXES) and "__pycache__" not in parts
            and not rel.startswith(HIDDEN_FOLDER) and not any(part.startswith(".") for part in parts))


def answer_imports(source: str) -> list[str]:
    """The modules `source` imports that hold answers (solutions, course, a hidden checks' module)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        found += [name for name in names if ANSWER_MODULE.match(name)]
    return found


def package_files(root: Path = ROOT, replaced: Mapping[str, bytes] | None = None) -> list[tuple[str, bytes]]:
    """(name in the wheel, contents) of every shipped file, sorted by name; `replaced`: path -> the
    contents to ship instead of the file on disk (the course build's freshly compiled catalogues)."""
    replaced = dict(replaced or {})
    on_disk = {path.relative_to(root).as_posix(): path for path in (root / "autograder").rglob("*") if path.is_file()}
    files = []
    for rel in sorted(set(on_disk) | set(replaced)):
        if is_shipped(rel):
            data = replaced[rel] if rel in replaced else on_disk[rel].read_bytes()
            if CHECK_FILE.fullmatch(rel) and hidden_checks(data.decode("utf-8")):
                raise ExportError(_f("{file} holds checks not declared visible ({checks}): move them to the "
                                     "section's module in autograder/checks/hidden/", file=rel,
                                     checks=", ".join(hidden_checks(data.decode("utf-8")))))
            if rel.endswith(".py"):
                leaked = answer_imports(data.decode("utf-8"))
                if leaked:  # fail the build: a student's `check` would break or, worse, show the answers
                    raise ExportError(_f("{file} imports {modules}: it cannot be shipped to students", file=rel,
                                         modules=", ".join(leaked)))
            files.append((rel, data))
    return only_shipped_messages(files)


def only_shipped_messages(files: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """`files` with each message catalogue cut down to the messages of the shipped code: the
    translations of a hidden check's title and messages would tell what the hidden checks look at."""
    sources = [data.decode("utf-8") for rel, data in files if rel.endswith(".py")]
    shipped = {msgid for source in sources
               for _line, msgid, _comments in catalogues.extract_text(source) + catalogues.section_title(source)}
    kept = []
    for rel, data in files:
        if rel.endswith(".mo"):
            locale, messages = mo_messages(data)
            data = mo_bytes({msgid: text for msgid, text in messages.items() if msgid in shipped}, locale)
        kept.append((rel, data))
    return kept


def _metadata(version: str, root: Path) -> bytes:
    lines = ["Metadata-Version: 2.1", f"Name: {DISTRIBUTION}", f"Version: {version}",
             "Summary: The attention course's self-check: the visible checks, without the answers",
             f"Requires-Python: {declared.requires_python(root)}"]
    lines += [f"Requires-Dist: {requirement}" for requirement in requires(root)]
    body = ("Run `python -m autograder check` in the folder of your notebooks: it runs the visible "
            "checks and writes a feedback report to ./feedback/.")
    return ("\n".join(lines) + "\n\n" + body + "\n").encode()


def _wheel_info() -> bytes:
    return (f"Wheel-Version: 1.0\nGenerator: autograder.instructor.selfcheck_export\nRoot-Is-Purelib: true\n"
            f"Tag: {TAG}\n").encode()


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def wheel_entries(root: Path = ROOT, replaced: Mapping[str, bytes] | None = None
                  ) -> tuple[str, list[tuple[str, bytes]]]:
    """(wheel file name, its entries in order): the package, then .dist-info with RECORD last."""
    version = project_version(root)
    dist_info = f"{WHEEL_STEM}-{version}.dist-info"
    entries = package_files(root, replaced)
    try:
        metadata = _metadata(version, root)
    except declared.DeclaredError as error:
        raise ExportError(str(error)) from None
    entries += [(f"{dist_info}/METADATA", metadata), (f"{dist_info}/WHEEL", _wheel_info()),
                (f"{dist_info}/top_level.txt", b"autograder\n")]
    record = [record_line(name, data) for name, data in entries] + [f"{dist_info}/RECORD,,"]
    entries.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode()))
    return wheel_name(version), entries


def build_wheel(root: Path = ROOT, replaced: Mapping[str, bytes] | None = None) -> tuple[str, bytes]:
    """(file name, bytes) of the self-check wheel; the same files always give the same bytes."""
    name, entries = wheel_entries(root, replaced)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for entry, data in entries:
            info = zipfile.ZipInfo(entry, date_time=ZIP_TIME)
            info.create_system = 3  # Unix, wherever it is built: the permissions below are Unix ones
            info.external_attr = (0o644 | 0o100000) << 16
            archive.writestr(info, data)
    return name, buffer.getvalue()


def export(out_dir: Path, root: Path = ROOT) -> Path:
    name, data = build_wheel(root)
    target = Path(out_dir) / name
    write_bytes_atomically(target, data)
    return target


def add_verbs(verbs) -> None:
    verb = verbs.add_parser("export-selfcheck",
                            help=_("build the answer-free grader wheel students install for `check`"))
    verb.add_argument("--out", type=Path, required=True, metavar="DIR", help=_("folder to write the .whl into"))
    verb.set_defaults(main=main)


def main(args) -> int:
    if args.out.exists() and not args.out.is_dir():
        raise UsageError(_f("--out {out} is a file; give the folder to write the wheel into", out=args.out))
    try:
        target = export(args.out)
    except ExportError as error:
        raise UsageError(str(error)) from None
    logger.info(_f("wrote {wheel} ({kib} KiB): students install it with `pip install {name}`, then run "
                   "`python -m autograder check`", wheel=target, kib=target.stat().st_size // 1024, name=target.name))
    return 0
