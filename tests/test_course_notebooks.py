"""The generated notebooks: they run, they stop at the first stub, they leak no solution,
and the example submissions hold what they should."""
from __future__ import annotations

import ast
import concurrent.futures
import importlib
import runpy
import sys
import types

import nbformat
import pytest

from autograder.core.sections import SECTIONS, Section
from course.builder import examples, layout, reference
from course.execute import run_notebook
from course.partial_submissions import SOLVED, STUB, plan_for
from documented_values import for_section, matches

ROOT = layout.ROOT
SOURCE_LIMIT_SECONDS = 20
FORBIDDEN_TEXT = ("BEGIN SOLUTION", "END SOLUTION", "HIDDEN TESTS")

ids = [s.id for s in SECTIONS]


def generated(pattern: str, section: Section) -> nbformat.NotebookNode:
    path = ROOT / pattern.format(id=section.id)
    if not path.is_file():
        if layout.spec_path(section).is_file():
            pytest.fail(f"{path.relative_to(ROOT)} is missing: run `python -m course.builder`")
        pytest.skip(f"no notebook spec for {section.id} yet")
    return nbformat.read(path, as_version=4)


def meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def code_names(source: str) -> set[str]:
    """Top-level functions and classes defined by a cell."""
    return {node.name for node in ast.parse(source).body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


@pytest.fixture(scope="module")
def timings(request):
    """Collects notebook run times and prints them at the end of the module (also under -q)."""
    times: list[tuple[str, float, str]] = []
    yield times
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is None or capture is None or not times:
        return
    with capture.global_and_fixture_disabled():
        reporter.write_line("")
        reporter.write_line("notebook execution times (wall):")
        for name, seconds, outcome in times:
            reporter.write_line(f"  {seconds:6.1f} s  {name}  ({outcome})")
        reporter.write_line(f"  {sum(t for _, t, _ in times):6.1f} s  total")


# --------------------------------------------------------------------------- execution


@pytest.fixture(scope="module")
def source_runs() -> dict:
    """Every section's source notebook run in a kernel of its own, two kernels at a time (the test process
    only waits for them): section id -> its run."""
    def run(section: Section):
        return section.id, run_notebook(generated(layout.SOURCE_NB, section), cwd=ROOT, measure_cpu=True)

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        return dict(pool.map(run, SECTIONS))


@pytest.mark.parametrize("section", SECTIONS, ids=ids)
def test_source_notebook_runs_top_to_bottom(section, timings, source_runs):
    run = source_runs[section.id]
    outcome = f"kernel CPU {run.cpu_seconds:.1f} s" if run.ok else run.ename
    timings.append((layout.SOURCE_NB.format(id=section.id), run.seconds, outcome))
    assert run.ok, f"cell {run.error_cell} raised {run.ename}: {run.evalue}"
    assert run.kernel_executable == sys.executable, "the notebook ran in another Python than the tests"
    # The limit is on wall time; on a machine busy with other work, the kernel's CPU time stands in for it.
    assert run.seconds < SOURCE_LIMIT_SECONDS or run.cpu_seconds < SOURCE_LIMIT_SECONDS, (
        f"took {run.seconds:.1f} s, {run.cpu_seconds:.1f} s of kernel CPU (limit {SOURCE_LIMIT_SECONDS} s)"
    )


# A kernel for each blank notebook: the first section's by default, every section's with `-m slow` (each
# section's check cells are run against its stubs without a kernel in test_notebook_agrees.py).
RELEASED = [section if index == 0 else pytest.param(section, marks=pytest.mark.slow)
            for index, section in enumerate(SECTIONS)]


@pytest.mark.parametrize("section", RELEASED, ids=ids)
def test_released_notebook_stops_at_the_first_stub(section, timings):
    nb = generated(layout.RELEASED_NB, section)
    run = run_notebook(nb, cwd=ROOT)
    timings.append((layout.RELEASED_NB.format(id=section.id), run.seconds, "ok" if run.ok else run.ename))
    assert not run.ok, "the blank notebook ran to the end: are the visible checks calling the stubs?"
    first_solution = next(i for i, c in enumerate(nb.cells) if meta(c).get("solution"))
    cell = nb.cells[run.error_cell]
    where = f"cell {run.error_cell} ({meta(cell).get('grade_id', 'demo')})"
    # a check cell says that the stub it checks is not implemented yet; a demo cell raises the stub's error
    stopped_at_a_stub = run.ename == "NotImplementedError" or (
        run.ename == "NotebookCheckFailed" and "is not implemented yet" in (run.evalue or ""))
    assert stopped_at_a_stub, f"{where} raised {run.ename}: {run.evalue} before any stub"
    assert run.error_cell >= first_solution, f"{where} failed before the first solution cell"
    assert not (meta(cell).get("locked") and not meta(cell).get("grade")), f"{where}: a setup/provided cell failed"


# --------------------------------------------------------------------------- static checks


ALL_GENERATED = [layout.SOURCE_NB, layout.RELEASED_NB, layout.CORRECT_NB, layout.PARTIAL_NB]


@pytest.mark.parametrize("pattern", ALL_GENERATED, ids=[p.split("/")[0] + "/" + p.split("/")[1] for p in ALL_GENERATED])
@pytest.mark.parametrize("section", SECTIONS, ids=ids)
def test_notebook_is_clean(section, pattern):
    nb = generated(pattern, section)
    nbformat.validate(nb)
    assert nb.metadata.kernelspec.name == "python3"
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, "outputs must not be committed"


def solution_lines(section: Section) -> set[str]:
    """Distinctive lines of the section's hidden solution bodies (short or shared lines left out)."""
    blocks = reference.read_solution_module(section.solution_module).blocks
    given = set()
    for item in section.provided:
        given.update(line.strip() for line in reference.provided_code(item).split("\n"))
    lines = set()
    for name in section.names:
        for line in reference.solution_body_lines(blocks[name]):
            text = line.strip()
            # skip comments, block openers (`with torch.no_grad():`) and short generic lines
            if len(text) >= 12 and not text.startswith("#") and not text.endswith(":") and text not in given:
                lines.add(text)
    return lines


@pytest.mark.parametrize("section", SECTIONS, ids=ids)
def test_released_notebook_has_no_solution_code(section):
    nb = generated(layout.RELEASED_NB, section)
    hidden = solution_lines(section)
    assert hidden, "no solution lines to look for"
    for index, cell in enumerate(nb.cells):
        for text in FORBIDDEN_TEXT:
            assert text not in cell.source, f"cell {index} contains {text!r}"
        leaked = hidden & {line.strip() for line in cell.source.split("\n")}
        assert not leaked, f"cell {index} ({meta(cell).get('grade_id', cell.cell_type)}) shows solution code: {leaked}"
    # each solution cell is exactly the reference block with every solution region stubbed out
    blocks = reference.read_solution_module(section.solution_module).blocks
    stubs = {meta(c)["grade_id"]: c.source for c in nb.cells if meta(c).get("solution")}
    assert list(stubs) == list(section.names)
    for name, source in stubs.items():
        assert source == reference.stubbed(blocks[name], name), f"{name}: not the reference with its solution stubbed"


@pytest.mark.parametrize("section", SECTIONS, ids=ids)
def test_source_notebook_keeps_the_solution_markers(section):
    nb = generated(layout.SOURCE_NB, section)
    blocks = reference.read_solution_module(section.solution_module).blocks
    solutions = {meta(c)["grade_id"]: c.source for c in nb.cells if meta(c).get("solution")}
    assert solutions == {name: blocks[name] for name in section.names}


@pytest.mark.parametrize("section", SECTIONS, ids=ids)
def test_correct_example_is_the_source_without_markers(section):
    """Same cells as the source notebook, solution markers removed: it runs exactly as the source does."""
    source = generated(layout.SOURCE_NB, section)
    correct = generated(layout.CORRECT_NB, section)
    assert [reference.strip_markers(c.source) for c in source.cells] == [c.source for c in correct.cells]
    defined = set()
    for cell in correct.cells:
        if meta(cell).get("solution"):
            defined |= code_names(cell.source)
    assert defined >= set(section.names)


@pytest.mark.parametrize("section", SECTIONS, ids=ids)
def test_partial_example_follows_its_plan(section):
    partial = generated(layout.PARTIAL_NB, section)
    released = generated(layout.RELEASED_NB, section)
    reference = examples.correct_answers(section)
    cells = {meta(c)["grade_id"]: c.source for c in partial.cells if meta(c).get("solution")}
    plan = plan_for(section.id)
    for name in section.names:
        entry = plan if isinstance(plan, str) else plan[name]
        if entry == SOLVED:
            assert cells[name] == reference[name], name
        elif entry == STUB:
            assert "raise NotImplementedError()" in cells[name], name
        else:
            assert cells[name] != reference[name] and "NotImplementedError" not in cells[name], name
        assert name in code_names(cells[name])
    # everything but the solution cells is the released notebook
    others = lambda nb: [c.source for c in nb.cells if not meta(c).get("solution")]  # noqa: E731
    assert others(partial) == others(released)


@pytest.mark.parametrize("section", SECTIONS, ids=ids)
def test_correct_py_defines_every_name_and_reproduces_the_documented_values(section):
    path = ROOT / layout.CORRECT_PY.format(id=section.id)
    source = path.read_text()
    assert "solutions" not in {n.split(".")[0] for n in _imported_modules(source)}, "must be self-contained"
    namespace = runpy.run_path(str(path))
    missing = [n for n in section.names if n not in namespace]
    assert not missing, f"{path.name} does not define {missing}"
    for item in section.provided:
        assert item.partition(":")[2] in namespace
    ns = types.SimpleNamespace(**namespace)
    for value in for_section(section.id):
        assert matches(value, value.compute(ns)), f"{path.name}: {value.expression}"


def _imported_modules(source: str) -> list[str]:
    modules = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules.append(node.module)
    return modules


def test_reference_modules_match_the_registry():
    for section in SECTIONS:
        module = importlib.import_module(section.solution_module)
        assert all(hasattr(module, name) for name in section.names), section.id


def test_student_readme():
    text = (ROOT / "student_template" / "README.md").read_text()
    for forbidden in FORBIDDEN_TEXT:
        assert forbidden not in text
    assert "python -m autograder check" in text
    assert "torch==2.13.0" in text
