"""`python -m autograder export-selfcheck`: the wheel students install to run `check`.

It must hold no answers (no solutions/, no hidden checks' module, no file that imports
one), be byte-for-byte reproducible, be a valid wheel (RECORD hashes), and be
enough on its own: `check` run from the unzipped wheel, with neither the course
repository nor the course's installed copy importable, gives the same visible-check
results as the repository's own `check`.
"""
from __future__ import annotations

import ast
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from support import EXAMPLES, ROOT, check_max_points, zygote

from autograder.core.sections import CHECK_GLOB, HIDDEN_GLOB, SECTIONS as REGISTRY
from autograder.instructor import declared

SECTIONS = tuple(section.id for section in REGISTRY)  # every section, the bonus ones included
ANSWER_PACKAGES = ("solutions", "course")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel written by the command line, as an instructor runs it."""
    out = tmp_path_factory.mktemp("selfcheck")
    done = subprocess.run([sys.executable, "-m", "autograder", "export-selfcheck", "--out", str(out)],
                          cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    (path,) = out.glob("*.whl")
    return path


def members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def imported_modules(source: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def test_wheel_is_named_for_the_course_version(wheel):
    import tomllib

    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert wheel.name == f"attention_course_selfcheck-{version}-py3-none-any.whl"


def test_wheel_holds_the_visible_grader_and_no_answers(wheel):
    names = set(members(wheel))
    for needed in ("autograder/__main__.py", "autograder/cli.py", "autograder/core/grade.py", "autograder/core/plugin.py",
                   "autograder/checks/common.py", "autograder/checks/pytest.ini", "autograder/worker/main.py",
                   "autograder/worker/boot.py", *(f"autograder/checks/section_{section}.py" for section in SECTIONS)):
        assert needed in names, needed
    dist_info = "-".join(wheel.name.split("-")[:2]) + ".dist-info"
    for name in names:
        assert name.split("/")[0] in ("autograder", dist_info), name  # so no solutions/, course/, tests/
        assert "__pycache__" not in name and not name.endswith(".pyc"), name
        assert not name.startswith("autograder/checks/hidden/"), name  # no hidden check, not even the folder
    # each section's visible checks are shipped as they are (its SECTION entry with them: the registry
    # reads it), and its hidden checks' module is not; the loops are not vacuous
    shipped = members(wheel)
    check_files = sorted((ROOT / "autograder" / "checks").glob(CHECK_GLOB))
    hidden_files = sorted((ROOT / "autograder" / "checks" / "hidden").glob(HIDDEN_GLOB))
    assert len(check_files) == len(hidden_files) == len(SECTIONS)
    for path in check_files:
        rel = path.relative_to(ROOT).as_posix()
        assert shipped[rel] == path.read_bytes(), f"{rel} is not shipped as it is"
        assert "SECTION = {" in shipped[rel].decode()
    hidden_names = {name for path in hidden_files for name in checks_declared(path.read_text())}
    assert hidden_names and not any(f"def {name}(" in data.decode("utf-8", "replace")
                                    for rel, data in shipped.items() if rel.endswith(".py") for name in hidden_names)


def checks_declared(source: str) -> list[str]:
    """The names of the functions decorated with @check(...) in a checks' module."""
    return [node.name for node in ast.parse(source).body
            if any(isinstance(d, ast.Call) and getattr(d.func, "id", None) == "check"
                   for d in getattr(node, "decorator_list", []))]


def test_no_shipped_file_imports_the_answers(wheel):
    sources = {name: data.decode() for name, data in members(wheel).items() if name.endswith(".py")}
    assert len(sources) > 30
    for name, source in sources.items():
        leaked = {m for m in imported_modules(source)
                  if m.split(".")[0] in ANSWER_PACKAGES or m.startswith("autograder.checks.hidden")}
        assert not leaked, f"{name} imports {leaked}"


def test_building_twice_gives_identical_bytes(wheel, tmp_path):
    from autograder.instructor import selfcheck_export

    done = subprocess.run([sys.executable, "-m", "autograder", "export-selfcheck", "--out", str(tmp_path)],
                          cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / wheel.name).read_bytes() == wheel.read_bytes()
    name, data = selfcheck_export.build_wheel()
    assert name == wheel.name and data == wheel.read_bytes()
    with zipfile.ZipFile(wheel) as archive:
        infos = archive.infolist()
    assert {info.date_time for info in infos} == {selfcheck_export.ZIP_TIME}
    package = [info.filename for info in infos if info.filename.startswith("autograder/")]
    assert package == sorted(package)
    assert infos[-1].filename.endswith(".dist-info/RECORD")


def test_record_lists_every_file_with_its_sha256_and_size(wheel):
    files = members(wheel)
    (record_name,) = [name for name in files if name.endswith(".dist-info/RECORD")]
    rows = [line.split(",") for line in files[record_name].decode().splitlines()]
    assert sorted(row[0] for row in rows) == sorted(files)  # every member once, nothing else
    for name, digest, size in rows:
        if name == record_name:
            assert digest == size == ""
            continue
        expected = base64.urlsafe_b64encode(hashlib.sha256(files[name]).digest()).rstrip(b"=").decode()
        assert digest == f"sha256={expected}", name
        assert int(size) == len(files[name]), name


def test_metadata_declares_what_check_needs(wheel):
    files = members(wheel)
    dist_info = next(name for name in files if name.endswith(".dist-info/METADATA")).rsplit("/", 1)[0]
    metadata = files[f"{dist_info}/METADATA"].decode()
    requires = [line.split(": ", 1)[1] for line in metadata.splitlines() if line.startswith("Requires-Dist: ")]
    # pyproject.toml's dependencies, as declared there, with torch as the range a student's torch may be in
    assert requires == ["torch>=2.13,<2.15", "numpy>=2.0,<3", "pytest>=9.0,<10", "ipython>=9.0,<10",
                        "matplotlib>=3.9,<4"]
    assert requires[1:] == declared.runtime_requirements()[1:]
    assert "Requires-Python: >=3.11" in metadata.splitlines()
    assert "Name: attention-course-selfcheck" in metadata.splitlines()
    info = files[f"{dist_info}/WHEEL"].decode().splitlines()
    assert "Tag: py3-none-any" in info and "Root-Is-Purelib: true" in info and "Wheel-Version: 1.0" in info


def test_the_torch_range_admits_the_tested_releases_and_starts_at_the_course_pin():
    """A student's torch anywhere in the range is kept; the instructor's grading stays pinned."""
    import tomllib

    from packaging.requirements import Requirement
    from packaging.specifiers import SpecifierSet

    from autograder.instructor import selfcheck_export

    accepted = SpecifierSet(selfcheck_export.torch_range())
    for version in (*selfcheck_export.torch_tested(), "2.13.0+cpu", "2.14.1+cu128", "2.14.0"):
        assert accepted.contains(version), version
    for version in ("2.12.1", "2.15.0", "2.15.0rc1", "3.0.0"):
        assert not accepted.contains(version, prereleases=True), version
    pins = [Requirement(dep) for dep in tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"]["dependencies"] if Requirement(dep).name == "torch"]
    assert [str(pin.specifier) for pin in pins] == [f"=={selfcheck_export.torch_tested()[0]}"]
    # the students' README states the same range, through course/builder/readme.py
    readme = (ROOT / "student_template" / "README.md").read_text(encoding="utf-8")
    assert f"torch{selfcheck_export.torch_range()}" in readme.replace(" ", "")


def test_the_readme_source_fills_in_the_range_and_rejects_an_unknown_placeholder(tmp_path):
    from autograder.instructor import selfcheck_export
    from course.builder import layout, readme

    source = tmp_path / layout.README_SOURCE
    source.parent.mkdir(parents=True)
    source.write_text("pip install torch=={{torch_pin}}; accepts torch{{torch_range}} ({{torch_tested}})\n",
                      encoding="utf-8")
    assert readme.student_readme(tmp_path) == (
        f"pip install torch=={selfcheck_export.torch_tested()[0]}; accepts torch{selfcheck_export.torch_range()} "
        f"({' and '.join(selfcheck_export.torch_tested())})\n")
    source.write_text("torch {{torch_version}}\n", encoding="utf-8")
    with pytest.raises(layout.BuildError, match="unknown placeholder.*torch_version"):
        readme.student_readme(tmp_path)


def test_a_shipped_file_that_imports_solutions_stops_the_export(tmp_path):
    from autograder.instructor import selfcheck_export

    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "1.2.3"\nrequires-python = ">=3.11"\n'
                                             'dependencies = ["torch==2.13.0", "numpy>=2.0,<3"]\n')
    package = tmp_path / "autograder"
    (package / "checks").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "checks" / "hidden").mkdir()
    (package / "checks" / "hidden" / "hidden_01_scores.py").write_text("from solutions import scores\n")  # left out
    assert selfcheck_export.build_wheel(tmp_path)[0] == "attention_course_selfcheck-1.2.3-py3-none-any.whl"
    (package / "checks" / "section_01_scores.py").write_text("from autograder.checks.hidden import hidden_01_scores\n")
    with pytest.raises(selfcheck_export.ExportError, match="section_01_scores.py imports autograder.checks.hidden"):
        selfcheck_export.build_wheel(tmp_path)
    (package / "checks" / "section_01_scores.py").write_text("")
    (package / "feedback").mkdir()
    (package / "feedback" / "report.py").write_text("def f():\n    from solutions.scores import dot_scores\n")
    with pytest.raises(selfcheck_export.ExportError, match="autograder/feedback/report.py imports solutions.scores"):
        selfcheck_export.build_wheel(tmp_path)


def test_a_check_not_declared_visible_in_a_shipped_module_stops_the_export(tmp_path):
    """A hidden check put in a section's visible module by mistake would reach the students: no wheel."""
    from autograder.instructor import selfcheck_export

    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "1.2.3"\n')
    checks = tmp_path / "autograder" / "checks"
    checks.mkdir(parents=True)
    (checks / "section_01_scores.py").write_text(
        '@check(1, "shown", visibility="visible")\ndef test_a(student):\n    pass\n\n\n'
        '@check(1, "after the due date")\ndef test_b(student):\n    pass\n')
    with pytest.raises(selfcheck_export.ExportError, match=r"section_01_scores.py holds checks not declared "
                                                           r"visible \(test_b\)"):
        selfcheck_export.build_wheel(tmp_path)


@pytest.mark.parametrize("out, says", [("file", "is a file"), (None, "required: --out")])
def test_bad_out_is_a_one_line_usage_error(tmp_path, out, says):
    args = []
    if out:
        (tmp_path / out).write_text("")
        args = ["--out", str(tmp_path / out)]
    done = subprocess.run([sys.executable, "-m", "autograder", "export-selfcheck", *args],
                          cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and says in done.stderr, done.stderr


# ------------------------------------------------------------------ `check` from the wheel alone


def without_the_course(wheel_dir: Path) -> tuple[list[str], dict]:
    """Interpreter flags and environment under which only the unzipped wheel provides the grader.

    The venv holds an editable install of the course (a .pth file that makes solutions/ importable),
    so site processing is off (-S) and the venv's package folders are given as plain paths: torch,
    pytest and matplotlib are found, .pth files are not run.
    """
    site_dirs = dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib"))
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    env["PYTHONPATH"] = os.pathsep.join([str(wheel_dir), *site_dirs])
    return [sys.executable, "-S", "-P"], env


def comparable(report: dict) -> list:
    return [(t["name"], t["score"], t["max_score"], t["status"], t["output"]) for t in report["tests"]]


def test_check_runs_from_the_wheel_alone_with_the_same_results(wheel, tmp_path):
    from autograder.feedback.formats import render
    from autograder.core.grade import run_checks
    from autograder.core.submission import locate

    wheel_dir = tmp_path / "wheel"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(wheel_dir)
    python, env = without_the_course(wheel_dir)
    work = tmp_path / "work"  # cwd of the check: not the repository, and where ./feedback/ goes
    work.mkdir()
    probe = ("import importlib.util as u, autograder\n"
             "print(autograder.__file__)\n"
             "answers = ('solutions', 'course', 'tests')\n"
             "print([m for m in answers if u.find_spec(m)])")
    done = subprocess.run([*python, "-c", probe], cwd=work, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    where, importable = done.stdout.splitlines()
    assert where == str(wheel_dir / "autograder" / "__init__.py") and importable == "[]"

    submissions = {}
    for name in ("partial", "correct"):
        submissions[name] = tmp_path / name
        shutil.copytree(EXAMPLES / name, submissions[name], symlinks=True)
    runs = {name: subprocess.Popen([*python, "-m", "autograder", "check", str(folder), "--format", "json",
                                    "--output", str(work / f"{name}.json")],
                                   cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for name, folder in submissions.items()}  # both at once: each waits on its own workers
    refused = subprocess.run([*python, "-m", "autograder", "grade", str(submissions["partial"])],
                             cwd=work, env=env, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and refused.stdout == ""
    assert len(refused.stderr.splitlines()) == 1 and "only the visible checks" in refused.stderr
    in_repo = run_checks(locate(submissions["partial"]), "cpu", visible_only=True, launcher=zygote())
    for name, process in runs.items():
        _, stderr = process.communicate(timeout=300)
        assert process.returncode == 0, f"{name}: {stderr}"
    from_wheel = {name: json.loads((work / f"{name}.json").read_text()) for name in runs}
    assert (work / "feedback" / "report.html").is_file()

    expected = json.loads(render(in_repo, "json"))
    assert comparable(from_wheel["partial"]) == comparable(expected)
    assert 0 < from_wheel["partial"]["score"] < from_wheel["partial"]["max_score"]
    assert all(t["visibility"] == "visible" for t in from_wheel["partial"]["tests"])  # the visible checks only
    correct = from_wheel["correct"]
    # full marks: every visible check's points, the bonus ones included (their max_score is 0: extra credit)
    full = sum(check_max_points(t) for t in expected["tests"])
    assert correct["score"] == full >= correct["max_score"] == expected["max_score"] > 0
    assert {t["tags"][0] for t in correct["tests"]} == set(SECTIONS)


# ------------------------------------------------------------------ the other end of the torch range


def _cached_torch_venv(version: str) -> Path:
    """A venv with torch `version`, kept between runs (a CUDA build of several GB), and the
    self-check's other requirements; skips, saying why, where torch cannot be installed."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "attention-course"
    venv = cache / f"torch-{version}"
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    if not python.exists():
        done = subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"cannot create a venv for torch {version}: {done.stderr.strip()[-300:]}")
    have = subprocess.run([str(python), "-c", "import torch; print(torch.__version__)"],
                          capture_output=True, text=True).stdout.strip()
    from autograder.instructor import selfcheck_export

    others = [r for r in selfcheck_export.requires() if not r.startswith("torch")]
    complete = subprocess.run([str(python), "-c", "import IPython, pytest, matplotlib, numpy"],
                              capture_output=True).returncode == 0
    if have.split("+")[0] != version or not complete:
        done = subprocess.run([str(python), "-m", "pip", "install", "--quiet", f"torch=={version}", *others],
                              capture_output=True, text=True, timeout=3600)
        if done.returncode != 0:
            pytest.skip(f"torch {version} cannot be installed here: {done.stderr.strip()[-500:]}")
    return python


@pytest.mark.slow
def test_check_keeps_the_students_torch_at_the_other_end_of_the_range(wheel, tmp_path):
    """A student who already has torch 2.14.1 installs the wheel: pip keeps that torch, and
    `check` gives the same visible results as under the course's 2.13.0."""
    from autograder.instructor import selfcheck_export

    version = selfcheck_export.torch_tested()[-1]
    python = _cached_torch_venv(version)
    pip = [str(python), "-m", "pip", "--disable-pip-version-check"]
    subprocess.run([*pip, "uninstall", "--yes", "--quiet", "attention-course-selfcheck"], capture_output=True)
    # What `pip install grader/*.whl` would do, resolved against the installed torch: nothing but the wheel.
    plan = tmp_path / "plan.json"
    done = subprocess.run([*pip, "install", "--dry-run", "--no-index", "--quiet", "--report", str(plan), str(wheel)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    would_install = [item["metadata"]["name"] for item in json.loads(plan.read_text(encoding="utf-8"))["install"]]
    assert would_install == ["attention-course-selfcheck"], would_install
    done = subprocess.run([*pip, "install", "--no-deps", "--no-index", "--quiet", str(wheel)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    done = subprocess.run([*pip, "check"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr

    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "AUTOGRADER_"))}
    runs = {}
    for name in ("correct", "partial"):
        for label, interpreter in ((version, str(python)), ("course", sys.executable)):
            work = tmp_path / f"{label}-{name}"
            work.mkdir()
            runs[label, name] = (work, subprocess.Popen(
                [interpreter, "-m", "autograder", "check", str(EXAMPLES / name), "--format", "json",
                 "--output", "out.json"], cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                text=True))
    reports = {}
    for key, (work, process) in runs.items():
        _, stderr = process.communicate(timeout=600)
        assert process.returncode == 0, f"{key}: {stderr[-3000:]}"
        assert "Traceback" not in stderr, stderr[-3000:]
        reports[key] = json.loads((work / "out.json").read_text(encoding="utf-8"))
    assert reports[version, "correct"]["extra_data"]["torch"].split("+")[0] == version
    assert reports["course", "correct"]["extra_data"]["torch"].split("+")[0] == selfcheck_export.torch_tested()[0]
    for name in ("correct", "partial"):
        ours, theirs = reports["course", name], reports[version, name]
        assert (theirs["score"], theirs["max_score"]) == (ours["score"], ours["max_score"]), name
        assert comparable(theirs) == comparable(ours), name
    correct = reports[version, "correct"]
    full = sum(check_max_points(t) for t in correct["tests"])  # the bonus checks' points included
    assert correct["score"] == full >= correct["max_score"] > 0 and full > reports[version, "partial"]["score"] > 0
