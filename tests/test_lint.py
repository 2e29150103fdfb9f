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
The checks are modules and the worker a package: nothing execs or cuts check source, and nothing
imports a worker module by a bare name.
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


def absolute_module(path: Path, node: ast.ImportFrom, root: Path = ROOT) -> str:
    """The dotted module a `from ... import` names, a relative one (from . import wire) resolved."""
    if node.level == 0:
        return node.module or ""
    package = module_name(path, root).split(".")
    if path.stem != "__init__":
        package = package[:-1]
    base = package[:len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imported_names(path: Path, root: Path = ROOT) -> set[str]:
    """Every module name `path` imports, anywhere in it (`from m import n` gives m and m.n), relative
    imports resolved."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and absolute_module(path, node, root):
            module = absolute_module(path, node, root)
            found.add(module)
            found |= {f"{module}.{alias.name}" for alias in node.names}
    return found


def import_graph(root: Path = ROOT, packages=PACKAGES) -> dict[str, set[str]]:
    """module -> the project's modules it imports, over every module of `packages` under `root`."""
    paths = sorted(p for package in packages for p in package.rglob("*.py"))
    modules = {module_name(p, root) for p in paths}
    return {module_name(p, root): imported_names(p, root) & modules for p in paths}


GRAPH = import_graph()


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_imports_flow_down_the_layers(module):
    mine = LAYERS.index(layer(module))
    upward = sorted(dep for dep in GRAPH[module] if LAYERS.index(layer(dep)) > mine)
    assert not upward, f"{module} ({layer(module)}) imports {upward} from a layer above it"


def test_the_layer_rule_covers_the_course_and_the_solutions():
    assert layer("course.builder.steps") == "course" and layer("solutions.softmax") == "solutions"
    assert "course.localized" in GRAPH["course.translators"]
    assert "solutions.scores" in GRAPH["autograder.checks.hidden.hidden_01_scores"]


def test_the_worker_imports_nothing_of_the_trusted_side():
    worker = [module for module in GRAPH if layer(module) == "worker"]
    assert any(GRAPH[module] for module in worker), "the worker's own imports (relative ones) are counted"
    for module in worker:
        assert all(layer(dep) == "worker" for dep in GRAPH[module]), (module, GRAPH[module])


def test_relative_imports_are_resolved_to_the_modules_they_name(tmp_path):
    assert {"autograder.worker.wire", "autograder.worker.guards"} <= GRAPH["autograder.worker.serve"]
    assert "autograder.worker.namespaces" in GRAPH["autograder.worker.confine"]


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


# ---------------------------------------------------------------- the checks are modules, the worker a package

WORKER_MODULES = {path.stem for path in (PACKAGE / "worker").glob("*.py")} - {"__init__"}
# what cuts a source into parts by its syntax tree, or makes code anew from one: a statement's extent, a
# segment of the source, a tree rewritten or unparsed
TREE_CUTTING = {"end_lineno", "end_col_offset", "get_source_segment", "unparse", "NodeTransformer"}
CUTS_STUDENT_CODE = {"autograder.core.extract", "autograder.instructor.similarity_code"}  # a student's cells
RUNS_STUDENT_CODE = {"autograder.worker.serve"}  # the only exec: the student's cells, in the worker


def exec_calls(source: str) -> list[int]:
    """The lines that call exec (the built-in, or builtins.exec)."""
    return [node.lineno for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call)
            and (getattr(node.func, "id", None) == "exec" or getattr(node.func, "attr", None) == "exec")]


def tree_cutting(source: str) -> list[str]:
    """`line: name` of each use of TREE_CUTTING in `source`."""
    return [f"{node.lineno}: {name}" for node in ast.walk(ast.parse(source))
            for name in [getattr(node, "attr", None) or getattr(node, "id", None)] if name in TREE_CUTTING]


def bare_worker_imports(source: str) -> list[str]:
    """Worker modules imported by their bare names (import wire, from serve import Worker,
    importlib.import_module("guards")), and modules planted in sys.modules."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name.split(".")[0] in WORKER_MODULES]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] in WORKER_MODULES:
            found.append(node.module)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "import_module" and node.args \
                and isinstance(node.args[0], ast.Constant) and str(node.args[0].value).split(".")[0] in WORKER_MODULES:
            found.append(node.args[0].value)
        elif isinstance(node, ast.Assign) and any(isinstance(target, ast.Subscript)
                                                   and ast.dump(target.value) == ast.dump(ast.parse("sys.modules").body[0].value)
                                                   for target in node.targets):
            found.append(f"sys.modules[...] = (line {node.lineno})")
    return found


SOURCES = {module_name(path): path.read_text(encoding="utf-8") for path in sorted(PACKAGE.rglob("*.py"))}


def test_no_check_source_is_executed_only_the_student_s_cells_are():
    offenders = {module: exec_calls(source) for module, source in SOURCES.items()
                 if module not in RUNS_STUDENT_CODE and exec_calls(source)}
    assert offenders == {}


def test_no_source_is_cut_by_its_syntax_tree_but_the_student_s_cells():
    """The checks are modules: shipped, imported and collected as they are, never cut into a visible part."""
    offenders = {module: tree_cutting(source) for module, source in SOURCES.items()
                 if module not in CUTS_STUDENT_CODE and tree_cutting(source)}
    assert offenders == {}


def test_no_worker_module_is_imported_by_a_bare_name():
    """The worker's modules import one another relatively, and the trusted side by autograder.worker.*:
    nothing depends on the worker's folder being on the path, nor on names planted in sys.modules
    (worker/boot.py alone registers the package itself)."""
    offenders = {module: bare_worker_imports(source) for module, source in SOURCES.items()
                 if module != "autograder.worker.boot" and bare_worker_imports(source)}
    assert offenders == {}
    assert bare_worker_imports(SOURCES["autograder.worker.boot"]) == ["sys.modules[...] = (line 25)"]


PLANTED = {
    "exec": 'def visible_checks(path):\n    exec(compile(path.read_text(), str(path), "exec"), {})\n',
    "builtins.exec": "import builtins\nbuiltins.exec(text, namespace)\n",
    "cut": "def part(source, node):\n    return source.splitlines()[node.lineno - 1:node.end_lineno]\n",
    "segment": "import ast\nkept = ast.get_source_segment(text, node)\n",
    "unparse": "import ast\ntext = ast.unparse(tree)\n",
    "bare": "import wire\n",
    "bare from": "from serve import Worker\n",
    "bare dynamic": 'import importlib\nimportlib.import_module("guards")\n',
    "planted": 'import sys\nsys.modules["wire"] = module\n',
}


def test_the_finders_find_each_planted_instance():
    assert exec_calls(PLANTED["exec"]) == [2] and exec_calls(PLANTED["builtins.exec"]) == [2]
    assert tree_cutting(PLANTED["cut"]) == ["2: end_lineno"]
    assert tree_cutting(PLANTED["segment"]) == ["2: get_source_segment"]
    assert tree_cutting(PLANTED["unparse"]) == ["2: unparse"]
    assert bare_worker_imports(PLANTED["bare"]) == ["wire"]
    assert bare_worker_imports(PLANTED["bare from"]) == ["serve"]
    assert bare_worker_imports(PLANTED["bare dynamic"]) == ["guards"]
    assert bare_worker_imports(PLANTED["planted"]) == ["sys.modules[...] = (line 2)"]
    assert bare_worker_imports("from . import wire\nfrom autograder.worker import serve\n") == []
    assert exec_calls("import re\nre.compile('x')\n") == [] and tree_cutting("x = node.lineno\n") == []


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
