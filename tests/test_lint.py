"""The house's shape, checked: the linter passes, the grader's layers import one way, no circles.

The grader's packages, bottom to top (docs/architecture.md):
    worker      what runs inside a worker process, beside student code
    i18n        the grader's words in the reader's language (gettext); the worker sends data, not sentences
    sandbox     the trusted side's handle on workers: limits, launch paths, tiers
    core        the grading data path: submission -> cells -> worker -> checks -> results
    checks      the section's checks (run by the core's pytest plugin)
    feedback    rendering of the one result model
    instructor  batch, gradebook, Gradescope, class report, self-check wheel
    cli         the command line, dispatching to the above
Below them all, `solutions` (the reference code, which the hidden checks compare with) imports none
of them; above them all, `course` (the notebook specs, the builder, the translations) may import any.
A module may import its own package and the packages below it, never one above.
"""
from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from support import ROOT, venv_path

PACKAGE = ROOT / "autograder"
# the project's packages, each module of them a node of the import graph
PACKAGES = (PACKAGE, ROOT / "course", ROOT / "solutions")
LAYERS = ("solutions", "worker", "i18n", "sandbox", "core", "checks", "feedback", "instructor", "notebook", "cli",
          "course")


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(module: str) -> str:
    parts = module.split(".")
    if parts[0] in ("solutions", "course"):
        return parts[0]
    if len(parts) == 1 or parts[1] in ("__main__", "cli"):
        return "cli"
    return parts[1]


def imported_names(path: Path) -> set[str]:
    """Every absolute module name `path` imports, anywhere in it (`from m import n` gives m and m.n)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def import_graph(root: Path = ROOT, packages=PACKAGES) -> dict[str, set[str]]:
    """module -> the project's modules it imports, over every module of `packages` under `root`."""
    paths = sorted(p for package in packages for p in package.rglob("*.py"))
    modules = {module_name(p, root) for p in paths}
    return {module_name(p, root): imported_names(p) & modules for p in paths}


GRAPH = import_graph()


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_imports_flow_down_the_layers(module):
    mine = LAYERS.index(layer(module))
    upward = sorted(dep for dep in GRAPH[module] if LAYERS.index(layer(dep)) > mine)
    assert not upward, f"{module} ({layer(module)}) imports {upward} from a layer above it"


def test_the_layer_rule_covers_the_course_and_the_solutions():
    assert layer("course.builder.steps") == "course" and layer("solutions.softmax") == "solutions"
    assert "course.localized" in GRAPH["course.translators"]
    assert "solutions.scores" in GRAPH["autograder.checks.section_01_scores"]


def test_the_worker_imports_nothing_of_the_trusted_side():
    for module, deps in GRAPH.items():
        if layer(module) == "worker":
            assert all(layer(dep) == "worker" for dep in deps), (module, deps)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every circle of imports in `graph` (a depth-first search that reports back edges)."""
    found, state, stack = [], {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if dep == node or dep not in graph:
                continue
            if state.get(dep) == "open":
                found.append(stack[stack.index(dep):] + [dep])
            elif dep not in state:
                visit(dep)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


def module_edges(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    # a package's __init__ is "imported" by its submodules' absolute imports; only module edges count
    return {m: {d for d in deps if not (m.startswith(d + ".") or d == m)} for m, deps in graph.items()}


def test_no_import_circles():
    """In the grader, the course and the solutions alike (a lazy import inside a function counts too)."""
    assert cycles(module_edges(GRAPH)) == []


def test_the_circle_finder_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_circle_finder_finds_one_in_the_course(tmp_path):
    """Two course modules importing each other, one of them only inside a function."""
    course = tmp_path / "course"
    course.mkdir()
    (course / "__init__.py").write_text("")
    (course / "catalogue.py").write_text("def main():\n    from course import localized\n")
    (course / "localized.py").write_text("from course.catalogue import main\n")
    graph = import_graph(tmp_path, (course,))
    assert cycles(module_edges(graph)) == [["course.catalogue", "course.localized", "course.catalogue"]]


def test_no_two_modules_share_a_name():
    names = defaultdict(list)
    specs = ROOT / "course" / "notebooks"  # notebook specs: text named by section, not modules
    for path in (p for package in PACKAGES for p in package.rglob("*.py") if p.parent != specs):
        if path.stem not in ("__init__", "__main__"):
            names[path.stem].append(path.relative_to(ROOT).as_posix())
    assert {name: paths for name, paths in names.items() if len(paths) > 1} == {}


def test_tests_import_their_helpers_one_way():
    """`support` (and every other module of tests/) as a top-level module only: importing it also as
    tests.support would run two copies (two zygotes, two sets of fixtures, two catalogues)."""
    offenders = [p.name for p in [*(ROOT / "tests").glob("*.py"), *(ROOT / "tests" / "catalogues").glob("*.py")]
                 if any(m == "tests" or m.startswith("tests.") for m in _all_imports(p))]
    assert offenders == []


# gettext's conventional names: public despite their underscore (autograder/i18n/__init__.py)
MESSAGE_CALLS = {"autograder.i18n._", "autograder.i18n._f"}


def private_imports(path: Path) -> list[str]:
    """`module._name` for each private name `path` imports from another grader module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("autograder"):
            found += [f"{node.module}.{alias.name}" for alias in node.names
                      if alias.name.startswith("_") and not alias.name.startswith("__")
                      and f"{node.module}.{alias.name}" not in MESSAGE_CALLS]
    return found


def test_no_module_imports_another_s_private_names():
    """A name with a leading underscore is its module's own business; what others use is public."""
    offenders = {p.relative_to(ROOT).as_posix(): private_imports(p)
                 for p in sorted(PACKAGE.rglob("*.py")) + sorted((ROOT / "tests").glob("*.py")) if private_imports(p)}
    assert offenders == {}


def test_the_private_import_finder_finds_one(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("from autograder.core.submission import _in_folder, locate\n"
                    "from autograder.i18n import _, _f, N_\n")
    assert private_imports(path) == ["autograder.core.submission._in_folder"]


def _all_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def ruff() -> str:
    found = shutil.which("ruff", path=venv_path()) or shutil.which("ruff")
    if not found:
        pytest.skip("ruff is not installed (it comes with the course's [test] extras)")
    return found


def test_ruff_passes():
    done = subprocess.run([ruff(), "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_catches_an_unused_import(tmp_path):
    (tmp_path / "pyproject.toml").write_text((ROOT / "pyproject.toml").read_text())
    (tmp_path / "broken.py").write_text("import os\n")
    done = subprocess.run([ruff(), "check", "--no-cache", "."], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1 and "F401" in done.stdout, done.stdout + done.stderr


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))


# ---------------------------------------------------------------- size: small functions, small modules

MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 450
SIZED = ("autograder", "course")  # the course's code; the course's notebook specs are text, not code


def size_problems(path: Path, rel: str) -> list[str]:
    """`rel: ...` for the module if it is longer than MAX_MODULE_LINES and for each function (method,
    nested function) longer than MAX_FUNCTION_LINES, decorators and docstring included."""
    source = path.read_text(encoding="utf-8")
    problems = []
    if len(source.splitlines()) > MAX_MODULE_LINES:
        problems.append(f"{rel}: {len(source.splitlines())} lines (at most {MAX_MODULE_LINES})")
    for node in ast.walk(ast.parse(source, filename=rel)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            length = node.end_lineno - start + 1
            if length > MAX_FUNCTION_LINES:
                problems.append(f"{rel}:{start}: {node.name} has {length} lines (at most {MAX_FUNCTION_LINES})")
    return problems


def sized_files() -> list[tuple[Path, str]]:
    paths = sorted(p for folder in SIZED for p in (ROOT / folder).rglob("*.py")
                   if "notebooks" not in p.relative_to(ROOT).parts)
    return [(p, p.relative_to(ROOT).as_posix()) for p in paths]


def test_functions_and_modules_are_small():
    problems = [problem for path, rel in sized_files()
                for problem in size_problems(path, rel)]
    assert problems == []


def test_the_size_check_finds_a_long_function_and_a_long_module(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    long_function = tmp_path / "long_function.py"
    long_function.write_text(f"@staticmethod\ndef f():\n{body}\n", encoding="utf-8")
    assert size_problems(long_function, "long_function.py") == [
        f"long_function.py:1: f has {MAX_FUNCTION_LINES + 2} lines (at most {MAX_FUNCTION_LINES})"]
    long_module = tmp_path / "long_module.py"
    long_module.write_text("x = 1\n" * (MAX_MODULE_LINES + 1), encoding="utf-8")
    assert size_problems(long_module, "long_module.py") == [
        f"long_module.py: {MAX_MODULE_LINES + 1} lines (at most {MAX_MODULE_LINES})"]
    fitting = tmp_path / "fitting.py"
    fitting.write_text("def f():\n" + "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES - 1)) + "\n")
    assert size_problems(fitting, "fitting.py") == []
