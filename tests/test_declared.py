"""The course's requirements and its torch release are declared once, in pyproject.toml, and every
other place reads them from there (autograder/instructor/declared.py) or is held to them here."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest
import yaml
from support import ROOT

from autograder.instructor import declared, gradescope, selfcheck_export

PIN = declared.torch_version()
VERSION = re.compile(r"\b2\.\d+\.\d+\b")  # a torch release written out


def other_pyproject(tmp_path, torch: str = "torch==2.99.1") -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\nversion = "1.0"\nrequires-python = ">=3.12"\n'
        f'dependencies = ["{torch}", "numpy>=2.0,<3", "ipython>=9.0,<10"]\n'
        f'[project.optional-dependencies]\ninstructor = ["pandas>=3.0,<4"]\n', encoding="utf-8")


def test_the_pin_is_pyprojects_one_torch_requirement():
    torch_lines = [line for line in declared.runtime_requirements() if declared.name_of(line) == "torch"]
    assert torch_lines == [f"torch=={PIN}"]


def test_everything_made_from_pyproject_follows_it(tmp_path):
    """Another pyproject.toml, another release: the self-check's range and requirements and
    Gradescope's setup.sh follow it, naming nothing of their own."""
    other_pyproject(tmp_path)
    assert declared.torch_version(tmp_path) == "2.99.1"
    assert selfcheck_export.torch_tested(tmp_path) == ("2.99.1", selfcheck_export.TORCH_NEWEST_TESTED)
    assert selfcheck_export.torch_range(tmp_path).startswith(">=2.99,<")
    assert selfcheck_export.requires(tmp_path)[1:] == ["numpy>=2.0,<3", "ipython>=9.0,<10"]
    setup = gradescope.setup_sh(tmp_path)
    assert '"torch==2.99.1" --index-url' in setup and PIN not in setup
    # and what the notebooks import beyond it (07's pandas), from the same file
    assert "pip install 'numpy>=2.0,<3' 'ipython>=9.0,<10' 'pandas>=3.0,<4'\n" in setup
    assert declared.requirement("pandas", tmp_path) == "pandas>=3.0,<4"
    assert declared.requires_python(tmp_path) == ">=3.12"


def test_the_scripts_and_the_course_workflows_read_the_pin_and_write_no_release():
    for rel in ("ci/setup.sh", "ci/github/instructor-grading.yml", "ci/gitlab/instructor.gitlab-ci.yml"):
        text = (ROOT / rel).read_text(encoding="utf-8")
        assert "-m autograder.instructor.declared torch-version" in text, rel
        assert not VERSION.findall(text), (rel, VERSION.findall(text))


def test_the_places_that_cannot_read_pyproject_agree_with_it():
    """A student's repository has no pyproject.toml: its workflows write the release, held to the pin;
    the README says it to people; the matrix tries both ends of the self-check's range."""
    student = {"ci/github/student-template.yml": "env", "ci/gitlab/student.gitlab-ci.yml": "variables"}
    for rel, key in student.items():
        assert yaml.safe_load((ROOT / rel).read_text(encoding="utf-8"))[key]["TORCH_VERSION"] == PIN, rel
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert set(re.findall(r"torch (2\.\d+\.\d+) ", readme)) <= {PIN, selfcheck_export.TORCH_NEWEST_TESTED}
    assert f"installs torch {PIN}" in readme.replace("\n", " ")
    matrix = yaml.safe_load((ROOT / "ci/github/selfcheck-os-matrix.yml").read_text(encoding="utf-8"))
    (job,) = matrix["jobs"].values()
    assert job["strategy"]["matrix"]["torch"] == list(selfcheck_export.torch_tested())


def test_the_grader_needs_no_notebook_server_and_no_instructor_tool():
    """What `grade` and `check` need is the dependencies; the notebook stack and the instructor's
    tools are extras (the tests of a fresh install are in the report of the change: this holds
    the declaration to it)."""
    runtime = {declared.name_of(line) for line in declared.runtime_requirements()}
    assert runtime == {"torch", "numpy", "pytest", "ipython", "matplotlib"}
    instructor = {declared.name_of(line) for line in declared.project()["optional-dependencies"]["instructor"]}
    assert {"nbgrader", "pandas", "tqdm", "copydetect", "nbformat", "babel"} <= instructor
    assert "jupyter" not in runtime | instructor  # the metapackage: nothing imports it
    for line in declared.runtime_requirements() + declared.project()["optional-dependencies"]["instructor"]:
        assert re.search(r"==|>=[^,]+,<", line), f"{line}: neither pinned nor bounded"


def test_grade_and_check_import_without_the_instructors_tools(tmp_path):
    """The grader's entry points with every extra's package made unimportable."""
    blocked = ["nbgrader", "notebook", "jupyter_server", "jupyterlab", "pandas", "tqdm", "copydetect", "nbformat",
               "nbclient", "babel", "sqlalchemy", "yaml", "ipykernel", "jupyter_client"]
    script = (
        "import sys\n"
        "class Blocked:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name.split('.')[0] in {blocked!r}:\n"
        "            raise ImportError(f'{name} is not installed')\n"
        "sys.meta_path.insert(0, Blocked())\n"
        "import autograder.cli, autograder.core.grade, autograder.notebook\n"
        "from autograder.cli import build_parser\n"
        "build_parser().parse_args(['check', '.'])\n"
        "import autograder.feedback.report, autograder.core.plugin\n"
        "print('imported', sorted(m for m in sys.modules if m.split('.')[0] in "
        f"{blocked!r}))\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "imported []"


def test_the_declared_command_reads_and_refuses_in_one_line(tmp_path):
    def run(*args, cwd=ROOT):
        return subprocess.run([sys.executable, "-m", "autograder.instructor.declared", *args], cwd=cwd,
                              capture_output=True, text=True, timeout=60, env={"PYTHONPATH": str(ROOT)})

    assert run("torch-version").stdout == f"{PIN}\n"
    assert run("requirement", "IPython").stdout == f"{declared.requirement('ipython')}\n"
    missing = run("requirement", "left-pad")
    assert missing.returncode == 1 and missing.stderr == "declared: pyproject.toml declares no requirement on left-pad\n"
    assert run("requirement").returncode == 2 and run("torch-version", "x").returncode == 2
    assert "Traceback" not in run("requirement").stderr


@pytest.mark.parametrize("torch, why", [("torch>=2.13", "not one torch release"), ("numpy", "no requirement on torch")])
def test_a_pyproject_without_a_torch_pin_is_refused(tmp_path, torch, why):
    other_pyproject(tmp_path, torch=torch)
    with pytest.raises(declared.DeclaredError, match=why):
        declared.torch_version(tmp_path)


def test_no_pyproject_is_one_clear_error(tmp_path):
    with pytest.raises(declared.DeclaredError, match="no \\[project\\] table"):
        declared.project(tmp_path)
