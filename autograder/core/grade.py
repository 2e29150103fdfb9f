"""The `grade` verb: a submission in, a GradeResult out.

notebook -> extracted cells (extract) -> worker child per section (student's
SectionWorker, started through the sandbox's launcher) -> checks (checks/section_<id>.py, the visible checks, then
checks/hidden/hidden_<id>.py, which compare with solutions/; via plugin) -> GradeResult (results) -> report
(formats).
"""
from __future__ import annotations

import contextlib
import io
import os
import time

from autograder.sandbox import tiers
from autograder.core.failures import warning_words
from autograder.core.results import GradeResult, SectionResult
from autograder.core.sections import CHECK_GLOB, CHECKS_DIR, HIDDEN_GLOB, SECTIONS, check_file, hidden_file
from autograder.core.submission import SectionSource
from autograder.i18n import N_, _, _f
from autograder.sandbox.launch import start_launcher
from autograder.sandbox.layer_words import entry_id, refused
from autograder.sandbox.limits import Limits



class HiddenChecksMissing(RuntimeError):
    """A full grading asked of a grader that holds only the visible checks (the students' self-check wheel)."""


class SandboxRefused(RuntimeError):
    """Hidden grading where no sandbox tier holds, without --sandbox weak: nothing was graded."""


def contained_tier(launcher, limits: Limits, visible_only: bool) -> str:
    """The tier student code will run under; raises SandboxRefused where hidden grading must not run.

    The self-check runs at any tier (its student runs their own code); hidden
    grading needs one that holds, unless the instructor chose --sandbox weak.
    """
    report = launcher.sandbox
    if visible_only:  # any tier will do: the children this grading starts will report theirs
        return tiers.tier(report)
    if report is None or report.get("asked") != limits.sandbox:
        report = launcher.probe(limits)  # what a child gets under these limits, not another's
    level = tiers.tier(report)
    if not visible_only and level == tiers.NONE and limits.sandbox == "on":
        raise SandboxRefused(tiers.refusal(report))
    return level


def hidden_checks_present() -> bool:
    """Whether this copy of the grader can grade: the hidden checks compare with solutions/,
    which the students' self-check wheel does not hold."""
    import importlib.util

    return importlib.util.find_spec("solutions") is not None


def check_files(section_ids: list[str], visible_only: bool) -> list[str]:
    """The pytest files to run: each section's visible checks, then (unless `visible_only`: the
    self-check) its hidden checks, so that a report shows the documented values before the hidden
    checks, as the notebook does."""
    if visible_only:
        return [str(check_file(section_id)) for section_id in section_ids]
    if section_ids and not hidden_checks_present():
        raise HiddenChecksMissing(_("this copy of the grader holds only the visible checks: "
                                    "use `python -m autograder check` (grading needs the course repository)"))
    return [str(path) for section_id in section_ids for path in (check_file(section_id), hidden_file(section_id))]


def preload_checks() -> None:
    """Import what the check files import: each section's reference solution.

    pytest loads the check files afresh for every grading, but the modules they import
    stay in sys.modules: a batch imports them once, before forking its jobs.
    """
    import importlib

    with_solutions = hidden_checks_present()
    for section in SECTIONS:
        if with_solutions:
            importlib.import_module(section.solution_module)


def prepare(sources: list[SectionSource], launcher, limits: Limits, visible_only: bool) -> None:
    """What a grading needs before its first section: the sandbox's tier known (SandboxRefused where hidden
    grading must not run), the meta device warming in the zygote, pytest and the reference checks imported."""
    contained_tier(launcher, limits, visible_only)
    if any(src.section.uses_meta and not src.extracted.problem for src in sources):  # loaded once, in the
        launcher.warm("meta")  # zygote, for every child forked after, while pytest is imported
    import pytest  # noqa: F401  (imported here, where it overlaps that warm-up; run_pytest uses it)

    from autograder.worker.lazy_torch import quick_shape_checks

    quick_shape_checks()  # a reference check (nn.MultiheadAttention's padding mask) would import sympy


def run_checks(sources: list[SectionSource], device: str, limits: Limits | None = None,
               visible_only: bool = False, launcher=None, scan_source: bool = True, session=None,
               split: bool = True) -> GradeResult:
    """Grade the given sections. Starts a worker launcher unless one is given (a batch shares one:
    `launcher` is a sandbox.zygote.Zygote or a sandbox.portable.Launcher). Raises SandboxRefused before grading
    anything when hidden grading would run where no sandbox tier holds. `session`: the pytest session
    a batch job grades all its students in (core/check_session.py); without one, pytest runs afresh.

    scan_source=False runs even code that reaches into the grader's watch (extract.tampering):
    only the tests of the sandbox ask for it, to show that the sandbox holds without the scan.
    No command-line flag reaches it. `split`: where the machine has two cores, grade every other section in
    a second process at once (core/two_processes.py; never within a batch job's session)."""
    started = time.monotonic()
    files = check_files([src.section.id for src in sources], visible_only)  # before any process starts
    limits = limits or Limits()
    own_launcher = launcher is None
    launcher = launcher or start_launcher(limits)
    try:
        prepare(sources, launcher, limits, visible_only)
    except SandboxRefused:
        if own_launcher:
            launcher.close()
        raise
    from autograder.core import two_processes

    if split and session is None and two_processes.wanted(sources, launcher):
        def run_part(part: list[SectionSource], part_launcher) -> GradeResult:
            return run_checks(part, device, limits, visible_only, part_launcher, scan_source, split=False)

        try:
            return two_processes.grade(sources, run_part, launcher, limits)
        finally:
            if own_launcher:
                launcher.close()
    from autograder.core.harness import grading_device
    from autograder.core.plugin import Grading

    workers = section_workers(sources, launcher, limits, device, scan_source)
    grading = Grading(workers, visible_only=visible_only)
    previous = grading_device(device)  # the tolerance of every comparison that names no device
    try:
        if sources:  # the first section's worker loads while pytest starts (each starts the next: plugin)
            workers[sources[0].section.id].prepare()
        exit_code, printed = session.run(grading) if session is not None else run_pytest(files, grading)
    finally:
        grading_device(previous)
        for worker in workers.values():  # all children signalled first: their teardowns overlap
            worker.stop()
        for worker in workers.values():
            worker.close()
        if own_launcher:
            launcher.close()
    result = graded(launcher, device, visible_only, grading.grader_errors, exit_code, printed)
    result.sections = [section_result(src, workers[src.section.id], grading.results) for src in sources]
    result.execution_time = time.monotonic() - started
    return result


def graded(launcher, device: str, visible_only: bool, grader_errors: list, exit_code: int, printed: str) -> GradeResult:
    """The GradeResult of a grading that ran, before its sections: the tier, torch, the grader's errors."""
    import torch

    result = GradeResult(submission="", device=device, grader_errors=list(grader_errors),
                         sandbox=tiers.tier(launcher.sandbox),  # the latest child's: what this grading got
                         torch=torch.__version__.split("+")[0])
    result.weak = not visible_only and result.sandbox == tiers.NONE
    unreachable = gpu_unreachable(launcher.sandbox, device)
    if unreachable:
        result.grader_errors.append(unreachable)
    if exit_code not in (0, 1, 5):  # 1: some checks failed, 5: nothing selected
        result.grader_errors.append(_f("pytest stopped with exit code {code}:", code=exit_code) + f"\n{printed[-3000:]}")
    return result


def gpu_unreachable(report: dict | None, device: str) -> str:
    """The grader's error when grading on "cuda" ran in workers that could not use the GPU, or ""
    (their checks then fail for a reason that is not the student's: the grading must not count)."""
    if device != "cuda":
        return ""
    missing = [refused(m) for m in (report or {}).get("missing", []) if entry_id(m) == "gpu"]
    return _f("--device cuda: the sandboxed worker could not use the GPU: {why}", why=missing[0]) if missing else ""


def section_workers(sources: list[SectionSource], launcher, limits: Limits, device: str, scan_source: bool) -> dict:
    """A worker per section (not yet started: each starts on its first call), under one submission budget."""
    from autograder.core.budget import Budget
    from autograder.core.student import SectionWorker

    budget = Budget(limits.submission_seconds)  # shared: no section can take the others' time
    return {
        src.section.id: SectionWorker(launcher, src.section, src.extracted, limits, device, src.banned_in_source,
                                      Budget(limits.section_seconds, parent=budget),
                                      src.tampering if scan_source else [])
        for src in sources
    }


# python_files: only the sections' check modules are collected (their names have one home, sections.CHECK_FILE)
CHECKS_ARGS = ["-c", str(CHECKS_DIR / "pytest.ini"), "--rootdir", str(CHECKS_DIR),
               "-o", f"python_files={CHECK_GLOB} {HIDDEN_GLOB}", "--import-mode=importlib", "-p", "no:cacheprovider", "-p", "no:warnings",
               "-p", "no:stepwise", "-p", "no:unraisableexception", "-p", "no:logging",
               "--assert=plain"]  # the checks raise their own messages: no rewriting,
# no traceback formatting, no log capture (each costs pytest tens of ms per student)
# Nor the built-in plugins no check uses (their fixtures, reports and debuggers): pytest registers
# each one afresh for every grading and scans it for fixtures, a few ms a student in a batch.
CHECKS_ARGS += [arg for plugin in ("legacypath", "tmpdir", "monkeypatch", "recwarn", "pastebin", "junitxml",
                                   "doctest", "setuponly", "setupplan", "faulthandler", "subtests", "debugging",
                                   "unittest") for arg in ("-p", f"no:{plugin}")]
# a grading's own run: its terminal report kept short (a batch job's session has none: check_session.py)
PYTEST_ARGS = CHECKS_ARGS + ["-q", "--no-header", "--tb=no"]


@contextlib.contextmanager
def pytest_alone():
    """Around a pytest run of the checks: no plugin of the site's, no options from the environment,
    and one thread for torch (the checks' own reference computations are tiny: no idle OpenMP
    thread then spins on a core the student's worker needs)."""
    import torch

    saved_addopts = os.environ.pop("PYTEST_ADDOPTS", None)
    saved_autoload = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # only the grader's plugin: none of the site's
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
        if saved_addopts is not None:
            os.environ["PYTEST_ADDOPTS"] = saved_addopts
        if saved_autoload is None:
            os.environ.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
        else:
            os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = saved_autoload


def run_pytest(files: list[str], grading) -> tuple[int, str]:
    """Run the check files for one grading (plugin.Grading), quietly: (exit code, what pytest printed)."""
    import pytest

    from autograder.core.plugin import GradingPlugin

    if not files:
        return 0, ""
    sink = io.StringIO()
    with pytest_alone(), contextlib.redirect_stdout(sink):
        exit_code = pytest.main(files + PYTEST_ARGS, plugins=[GradingPlugin(grading)])
    return int(exit_code), sink.getvalue()


# i18n: the message of a passing check that met the grader's right {names} (graded functions, comma-separated) in
# place of the student's own, whose own checks fail: it passed on that right answer, not on theirs
STOOD_IN = N_("passed with a correct {names} in place of yours, which fails its own checks")


def say_stand_ins(checks: list) -> None:
    """A passing check whose calls met a right stand-in for a graded name that fails its own checks (here) says so,
    as its message: the check passed on the stand-in's answer, and the student's own would not have."""
    failing = {c.home for c in checks if not c.passed and c.home}
    for c in checks:
        met = [name for name in c.stood_in if name in failing and name != c.home]
        if c.passed and met and not c.message:
            c.message = _f(STOOD_IN, names=", ".join(met))


def section_result(src: SectionSource, worker, results: list) -> SectionResult:
    """One section's checks, with the notes that say why some of them could not pass."""
    section = SectionResult(src.section.id, _(src.section.title))
    section.checks = [c for c in results if c.section == src.section.id]
    say_stand_ins(section.checks)
    found = src.found
    if found is not None and found.by_content:
        section.handed_in_as = found.relative
    elif found is not None and found.relative is None:
        section.files_found, section.ambiguous = list(found.claimants or found.files), bool(found.claimants)
    if src.extracted.problem:
        section.notes.append(src.extracted.problem)
    section.notes.extend(src.extracted.notes)
    if section.not_started:  # said once, instead of a stub's NotImplementedError under every cell and check
        section.notes.append(_("not started: every function and class of this section is still its stub, which "
                               "raises NotImplementedError; write them in their cells, then run the checks again"))
    section.notes.extend(worker.failed_cells(unless=("NotImplementedError",) if section.not_started else ()))
    if worker.load_failure:
        section.notes.append(worker.load_failure)
    if worker.tampering:
        section.notes.append(_f("flagged for the instructor: the code reaches into the grader's watch or "
                                "torch's internals: {places}", places="; ".join(worker.tampering[:5])))
    if worker.budget_spent:
        section.notes.append(_f("your code used up {budget}; the checks it left unrun score 0 (see each one)",
                                budget=worker.budget.which()))
    section.notes.extend(warning_words(warning) for warning in worker.warnings)
    section.printed = "\n".join(worker.printed)[:4000]
    return section
