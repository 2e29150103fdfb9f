"""Shared helpers of the project's own tests: grade a source string, edit one definition.

One zygote serves every grading in a test run (started on first use), so the
catalogue of mistakes costs one torch import, not one per case.
"""
from __future__ import annotations

import ast
import atexit
import errno
import functools
import os
import re
import sys
import tempfile
import textwrap
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def venv_path(path: str | None = None) -> str:
    """PATH with this interpreter's bin/ first: the venv's `python` and the tools the [test] extras install."""
    import os
    import sys

    rest = os.environ.get("PATH", "/usr/bin:/bin") if path is None else path
    return os.pathsep.join([str(Path(sys.executable).parent), rest])


def release_course(config: Path, source: Path, course_dir: Path):
    """Run an instructor's `nbgrader generate_assignment *` on a copy of a course directory (its
    nbgrader_config.py and source/) made in `course_dir`; fails the test if nbgrader does."""
    import os
    import shutil
    import subprocess
    import sys

    course_dir.mkdir()
    shutil.copy(config, course_dir)
    shutil.copytree(source, course_dir / "source")
    proc = subprocess.run(
        [sys.executable, "-m", "nbgrader", "generate_assignment", "*", "--force", "--log-level=WARN"],
        cwd=course_dir, capture_output=True, text=True, env=dict(os.environ, PATH=venv_path()), timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def released_text(course_dir: Path, section_id: str, proc) -> str:
    """The notebook nbgrader released for `section_id` in `course_dir`, cleaned and written as the build writes it."""
    import nbformat

    from course.builder import nbgrader_release, notebooks

    released = course_dir / "release" / section_id / f"{section_id}.ipynb"
    assert released.is_file(), f"nbgrader released no notebook for {section_id}:\n{proc.stderr}"
    return notebooks.notebook_text(nbgrader_release.clean_released(nbformat.read(released, as_version=4)))


def linked_venv(folder: Path) -> Path:
    """`folder`/linked-venv: a link to this interpreter's venv, as a .venv linked from elsewhere would be."""
    linked = folder / "linked-venv"
    linked.symlink_to(os.path.realpath(sys.prefix), target_is_directory=True)
    return linked


def cli_in_this_process(capsys, *args) -> tuple[int, str]:
    """(exit status, stderr) of `python -m autograder ARGS`, run by the CLI's main in the test process: for a
    command line the CLI refuses before grading anything, where starting a process would be most of the cost
    (a test keeps one such case as a process of its own: what a user's shell gets)."""
    from autograder.cli import main

    capsys.readouterr()
    try:
        code = main([str(arg) for arg in args])
    except SystemExit as stop:  # argparse's own exit, were it the one to refuse
        code = stop.code
    return code, capsys.readouterr().err


def check_max_points(test: dict) -> float:
    """A results.json test's own points, as Gradescope and a workflow read them: a bonus check's test
    has `max_score` 0 (Gradescope's extra credit) and keeps its points in extra_data["max_points"]."""
    extra = test.get("extra_data") if isinstance(test.get("extra_data"), dict) else {}
    return float(extra.get("max_points", test.get("max_score")) or 0)


def store_grade(folder: Path, result, **provenance) -> Path:
    """Write `result` (a GradeResult) as a batch stores a student's grade in folder/students/, with the
    provenance given (student defaults to result.submission, grader_errors to none); returns the file."""
    from autograder.core.files import result_file_name
    from autograder.instructor.student_files import STUDENTS, write_student

    provenance = {"student": result.submission, "grader_errors": [], **provenance}
    (Path(folder) / STUDENTS).mkdir(parents=True, exist_ok=True)
    write_student(Path(folder) / STUDENTS, result, provenance)
    return Path(folder) / STUDENTS / result_file_name(provenance["student"])


_zygote = None


def zygote():
    global _zygote
    if _zygote is None:
        from autograder.sandbox.zygote import Zygote

        _zygote = Zygote()
        atexit.register(_zygote.close)
    return _zygote


def correct_source(section_id: str) -> str:
    return (EXAMPLES / "correct_py" / f"{section_id}.py").read_text()


def replace_def(source: str, name: str, new_code: str) -> str:
    """`source` with the top-level def/class `name` replaced by `new_code` (dedented)."""
    tree = ast.parse(source)
    lines = source.split("\n")
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            start = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
            replacement = textwrap.dedent(new_code).strip("\n").split("\n")
            return "\n".join(lines[:start] + replacement + lines[node.end_lineno:])
    raise KeyError(f"{name} is not defined at the top level of the source")


def grade_source(section_id: str, source: str, *, device: str = "cpu", limits=None,
                 visible_only: bool = False, scan_source: bool = True):
    """Grade one section given as Python source; returns its SectionResult.
    scan_source=False: hostile code runs even where the tamper scan would refuse it (sandbox tests).
    A self-check (visible_only) with the default limits is graded once per run and language: several test
    modules ask for the same catalogue mistake's self-check, and its result is read, never changed."""
    if visible_only and limits is None and scan_source:
        from autograder import i18n

        return _self_check_once(section_id, source, device, i18n.language())
    return _grade_source(section_id, source, device=device, limits=limits, visible_only=visible_only,
                         scan_source=scan_source)


# (section, source, language) -> the fields of every sentence with fields that the self-check of `source` made
# in that language (recorded where a translation fills its template, so never for English, which has none)
FILLED: dict[tuple[str, str, str], list[dict]] = {}


@functools.cache
def _self_check_once(section_id: str, source: str, device: str, language: str):
    from autograder import i18n

    filled, fill = FILLED.setdefault((section_id, source, language), []), i18n.fill

    def recorded(template: str, fields: dict) -> str:
        text = fill(template, fields)
        filled.append({"text": text, "fields": dict(fields)})
        return text

    i18n.fill = recorded
    try:
        return _grade_source(section_id, source, device=device, visible_only=True)
    finally:
        i18n.fill = fill


def filled_fields(section_id: str, source: str) -> list[dict]:
    """Each sentence with fields of the self-check of `source` in the language spoken now: its text and the
    fields it was filled with (the data a sentence was given, as it was given)."""
    from autograder import i18n

    self_check(section_id, source)
    return FILLED[(section_id, source, i18n.language())]


def _grade_source(section_id: str, source: str, *, device: str = "cpu", limits=None,
                  visible_only: bool = False, scan_source: bool = True):
    from autograder.core.grade import run_checks
    from autograder.core.submission import locate

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"{section_id}.py"
        path.write_text(source)
        result = run_checks(locate(path), device, limits, visible_only=visible_only, launcher=zygote(),
                            scan_source=scan_source)
    assert not result.grader_errors, result.grader_errors
    return result.sections[0]


def graded(result) -> list:
    """Everything a grading says about a submission (a GradeResult), without its timings: what two
    ways of grading the same submission must agree on."""
    return [result.grader_errors, result.sandbox] + [
        (section.id, section.notes, [(c.id, c.points, c.max_points, c.message, c.kind, c.mistake, len(c.figures))
                                     for c in section.checks])
        for section in result.sections]


def self_check(section_id: str, source: str):
    """The self-check's SectionResult of `source` (the visible checks, as `check` runs them), in the language
    spoken now: graded once per test run for each source and language (grade_source keeps it), whichever test
    asks first."""
    return grade_source(section_id, source, visible_only=True)


def failing(section_result) -> dict:
    """title -> message of every check that lost points."""
    return {c.name: c.message for c in section_result.checks if not c.passed}


class Mistake:
    """A wrong implementation that is common in practice, and what grading must say about it.

    replacements: graded name -> the wrong code that replaces its definition.
    loses: substrings of the titles of the checks that must lose points, each matching
        exactly one check of the section; together EXACTLY the checks that lose points
        (one mistake, one deduction: no other check may fail because of it).
    says: a substring the feedback of the first check in `loses` must contain
        (the mistake named in the student's terms), or "" where no name applies.
    hint: the hint of autograder/core/hints.py (its `mistake`) that the errors this mistake raises
        fit, or "": grading must give that hint and no other (a hint only where the evidence fits).
    hard_coded: the replaced names return values written out instead of computed; the self-check must
        then cost about what grading costs (tests/test_catalogues.py measures it).
    also: other names of the mistake (substrings) that a check may name it by ("this looks like ...").
    asks: the kinds of the questions that guess a cause (tests/test_lines_students_read.py's QUESTIONS)
        that fit this mistake, besides those that hold its `says`.
    """

    def __init__(self, id: str, replacements: dict, loses: list, says: str = "", hint: str = "",
                 hard_coded: bool = False, also: tuple = (), asks: tuple = ()):
        self.id, self.replacements, self.loses, self.says, self.hint = id, replacements, loses, says, hint
        self.hard_coded, self.also, self.asks = hard_coded, tuple(also), tuple(asks)

    def __repr__(self):
        return self.id

    def source(self, section_id: str) -> str:
        source = correct_source(section_id)
        for name, code in self.replacements.items():
            source = replace_def(source, name, code)
        return source


def matched_titles(mistake: Mistake, titles) -> list[str]:
    """The check titles `mistake.loses` names, in its order; each entry must match exactly one title."""
    titles = list(titles)
    named = []
    for part in mistake.loses:
        matches = [title for title in titles if part in title]
        assert len(matches) == 1, (f"{mistake.id}: {part!r} should match exactly one check title; "
                                   f"it matches {matches or 'none'} of {titles}")
        named.append(matches[0])
    return named


def assert_mistake_caught(section_id: str, mistake: Mistake):
    """Grading `mistake` loses points in exactly the checks its `loses` names, and in no other."""
    result = grade_source(section_id, mistake.source(section_id))
    lost = failing(result)
    named = matched_titles(mistake, [c.name for c in result.checks])
    missed = [title for title in named if title not in lost]
    assert not missed, f"{mistake.id}: these checks should lose points but pass: {missed}; failing: {lost}"
    extra = {title: message for title, message in lost.items() if title not in named}
    assert not extra, (f"{mistake.id}: one mistake, one deduction: these checks also lose points, "
                       f"though `loses` does not name them: {extra}")
    if mistake.says:
        first = named[0]
        assert mistake.says.lower() in lost[first].lower(), (
            f"{mistake.id}: feedback of {first!r} should name the mistake ({mistake.says!r}); it says: {lost[first]}")
    assert result.score < result.max_score
    fired = hints_given(result)
    assert fired == ({mistake.hint} if mistake.hint else set()), (
        f"{mistake.id}: grading gave the hints {sorted(fired) or 'none'}; the catalogue expects "
        f"{mistake.hint or 'none'}")
    return result


def hints_given(section_result) -> set[str]:
    """The hints (core/hints.py, by the mistake each names) in the messages of the failing checks."""
    from autograder.core.hints import HINTS

    return {h.mistake for h in HINTS for c in section_result.checks if not c.passed and h.start in c.message}


def assert_full_marks(section_id: str, replacements: dict):
    source = correct_source(section_id)
    for name, code in replacements.items():
        source = replace_def(source, name, code)
    result = grade_source(section_id, source)
    assert result.score == result.max_score, failing(result)
    return result


def assert_every_check_catches(section_id: str, mistakes: list):
    """Each hidden check of the section is failed by at least one catalogued mistake."""
    titles = [c.name for c in grade_source(section_id, correct_source(section_id)).checks]
    covered = {t for t in titles for m in mistakes for part in m.loses if part in t}
    assert set(titles) == covered, f"checks no catalogued mistake fails: {sorted(set(titles) - covered)}"


def assert_every_visible_check_catches(section_id: str, mistakes: list):
    """Each visible check, run as a student's self-check runs it (the visible file alone),
    is failed by a catalogued mistake that names it."""
    titles = [c.name for c in grade_source(section_id, correct_source(section_id), visible_only=True).checks]
    assert titles, f"{section_id} has no visible check"
    untested = set(titles)
    for mistake in mistakes:
        targets = {t for t in untested if any(part in t for part in mistake.loses)}
        if not targets:
            continue
        lost = failing(grade_source(section_id, mistake.source(section_id), visible_only=True))
        missed = targets - set(lost)
        assert not missed, f"{mistake.id}: the self-check does not fail {sorted(missed)}; failing: {lost}"
        untested -= targets
    assert not untested, f"visible checks no catalogued mistake fails: {sorted(untested)}"


def assert_hard_coded_scores_at_most_40_percent(section_id: str, hard_coded: dict):
    """Copying the values the notebook prints earns at most 40% of the section."""
    result = grade_source(section_id, Mistake("hard-coded", hard_coded, []).source(section_id))
    passed = sorted(c.name for c in result.checks if c.passed)
    assert result.score <= 0.4 * result.max_score, (result.score, passed)
    documented = sum(c.max_points for c in result.checks if c.documented)
    assert documented <= 0.4 * result.max_score


# ------------------------------------------------------------------ what a Chinese reader sees

# an exception quoted from the student's code or from torch ("RuntimeError: Tensor on device ..."):
# their words, not the grader's
QUOTED_ERROR = re.compile(r"\b\w*(?:Error|Exception|Warning): [^（）：；。]*")

# what a Chinese sandbox line may keep in Latin letters: proper names, the kernel's and the units' names
SANDBOX_KEPT = {"Landlock", "seccomp", "ABI", "PID", "TCP", "uid", "tmpfs", "ptrace", "Python", "Linux", "root",
                "GiB", "MiB", "CPU", "GPU"} | set(errno.errorcode.values())
SANDBOX_PREFIX = re.compile(r"^sandbox: tier (namespaces|landlock|none): ")


def sandbox_latin_words(line: str) -> list[str]:
    """The words in Latin letters of a sandbox line that are not identifiers, paths, numbers, quoted
    exceptions, the line's prefix or a name of SANDBOX_KEPT."""
    text = QUOTED_ERROR.sub(" ", SANDBOX_PREFIX.sub("", line))
    text = re.sub(r"--sandbox (?:on|off|weak)|'[^']*'", " ", text)  # a flag with its value, a quoted name
    text = re.sub(r"`[^`]*`|\S*[_0-9()\[\]=.<>/\\]\S*", " ", text)
    return [word for word in re.findall(r"[A-Za-z][A-Za-z'-]*", text) if word not in SANDBOX_KEPT]


class VisibleText(HTMLParser):
    """The text a reader sees on a page: its text and its images' alt text, not its script, style or code."""

    HIDDEN = {"script", "style", "pre", "code"}

    def __init__(self):
        super().__init__()
        self.depth, self.parts = 0, []

    def handle_starttag(self, tag, attrs):
        self.depth += tag in self.HIDDEN
        self.parts += [value for name, value in attrs if name == "alt" and value]

    def handle_endtag(self, tag):
        self.depth -= tag in self.HIDDEN

    def handle_data(self, data):
        if not self.depth and data.strip():
            self.parts.append(data)
