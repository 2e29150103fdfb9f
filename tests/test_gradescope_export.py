"""`python -m autograder export-gradescope`: the zip Gradescope's autograder takes."""
from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from support import EXAMPLES, ROOT


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gradescope")
    out = folder / "autograder.zip"
    done = subprocess.run([sys.executable, "-m", "autograder", "export-gradescope", "--out", str(out)],
                          cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    source = folder / "source"
    with zipfile.ZipFile(out) as archive:
        archive.extractall(source)
        modes = {info.filename: info.external_attr >> 16 for info in archive.infolist()}
    return out, source, modes


def grading_line(run_autograder: str) -> list[str]:
    (line,) = [text for text in run_autograder.splitlines()
                if " -m autograder " in text and not text.lstrip().startswith("#")]
    words = shlex.split(line)
    return words[words.index("autograder") + 1:]


def test_the_zip_has_gradescopes_entry_points_and_the_grader(exported):
    _, source, modes = exported
    for script in ("setup.sh", "run_autograder"):
        assert (source / script).is_file()
        assert modes[script] & stat.S_IXUSR, f"{script} must be executable"
        subprocess.run(["bash", "-n", str(source / script)], check=True)
    for needed in ("pyproject.toml", "autograder/__main__.py", "autograder/cli.py", "autograder/core/grade.py",
                   "autograder/worker/main.py", "autograder/worker/boot.py", "autograder/checks/pytest.ini",
                   "autograder/checks/section_01_scores.py", "autograder/checks/hidden/hidden_01_scores.py",
                   "autograder/checks/common.py",
                   "solutions/scores.py", "solutions/multihead.py"):
        assert (source / needed).is_file(), needed
    assert not [p for p in source.rglob("*") if "__pycache__" in p.parts or p.suffix == ".pyc"]
    setup = (source / "setup.sh").read_text()
    assert "--index-url https://download.pytorch.org/whl/cpu" in setup and "torch==" in setup


def test_run_autograder_command_line_is_valid(exported):
    from autograder.cli import build_parser

    _, source, _ = exported
    script = (source / "run_autograder").read_text()
    argv = grading_line(script)
    args = build_parser().parse_args(argv)
    assert args.verb == "grade" and str(args.submission) == "/autograder/submission"
    assert args.format == "json" and args.output == "/autograder/results/results.json"
    assert "cd /autograder/source" in script


def test_bad_out_is_a_usage_error(tmp_path):
    done = subprocess.run([sys.executable, "-m", "autograder", "export-gradescope", "--out", str(tmp_path)],
                          cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.count("\n") == 1


def test_same_sources_give_the_same_zip(exported, tmp_path):
    out, _, _ = exported
    again = tmp_path / "again.zip"
    subprocess.run([sys.executable, "-m", "autograder", "export-gradescope", "--out", str(again)],
                   cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), check=True, capture_output=True)
    assert again.read_bytes() == out.read_bytes()


@pytest.mark.slow
def test_the_unzipped_grader_grades_a_submission(exported, tmp_path):
    """run_autograder's command, run from the unzipped source with the paths moved under tmp_path."""
    _, source, _ = exported
    argv = grading_line((source / "run_autograder").read_text())
    results = tmp_path / "results" / "results.json"
    argv = [str(EXAMPLES / "correct") if a == "/autograder/submission" else
            str(results) if a == "/autograder/results/results.json" else a for a in argv]
    done = subprocess.run([sys.executable, "-m", "autograder", *argv, "--section", "01_scores"], cwd=source,
                          env=dict(os.environ, PYTHONPATH=str(source)), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    data = json.loads(results.read_text())
    assert data["score"] == data["max_score"] > 0 and data["tests"]


def run_here(source: Path, tmp_path: Path, change=lambda script: script) -> tuple[subprocess.CompletedProcess, dict]:
    """run_autograder with Gradescope's paths moved under tmp_path (the submission: examples/correct), its
    script first changed by `change`, where no sandbox tier holds (the portable worker path); what it
    did and the results.json it left."""
    tmp_path.mkdir(exist_ok=True)
    script = (source / "run_autograder").read_text()
    results = tmp_path / "results" / "results.json"
    venv = Path(sys.executable).parent.parent
    script = (script.replace("/autograder/results/results.json", str(results))
              .replace("/autograder/submission", str(EXAMPLES / "correct"))
              .replace("/autograder/source", str(source)).replace("/autograder/venv", str(venv)))
    (tmp_path / "run_autograder").write_text(change(script))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    done = subprocess.run(["bash", str(tmp_path / "run_autograder")],
                          env=dict(os.environ, AUTOGRADER_WORKER="spawn", TMPDIR=str(scratch)),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert not list(scratch.iterdir()), "run_autograder left a file behind"
    return done, json.loads(results.read_text())


def says_why(data: dict, kind: str) -> str:
    """The reason of a results.json of nothing graded, checked to be the data's: kind and reason."""
    assert data["score"] == 0 and data["tests"] == []
    why = data["extra_data"]["not_graded"]
    assert why["kind"] == kind, why
    assert "could not be graded" in data["output"] and data["output"].endswith(why["reason"]), data["output"]
    return why["reason"]


def test_run_autograder_says_why_when_nothing_was_graded(exported, tmp_path):
    """Where no sandbox tier holds, the grader writes results.json itself: the refusal, as data."""
    _, source, _ = exported
    done, data = run_here(source, tmp_path)
    reason = says_why(data, "no_sandbox")
    assert "hidden grading refused" in reason and "notified" not in reason
    assert f"autograder: error: {reason}" in done.stderr  # the same line, on the grader's output


def test_a_grader_that_fails_writes_why_and_one_that_dies_leaves_its_exit_status(exported, tmp_path):
    """The grader's own failure is its result too (kind grader_failed, the error named); a grader that
    stops before it writes anything leaves run_autograder its exit status alone."""
    _, source, _ = exported
    broken = tmp_path / "broken"
    shutil.copytree(source, broken)
    with open(broken / "autograder" / "core" / "grade.py", "a", encoding="utf-8") as grade:
        grade.write("\n\ndef run_checks(*args, **kwargs):  # planted by the test\n"
                    "    raise RuntimeError('a planted failure')\n")
    done, data = run_here(broken, tmp_path / "fails")
    assert "RuntimeError: a planted failure" in says_why(data, "grader_failed")
    assert "autograder: internal error: RuntimeError: a planted failure" in done.stderr
    _, data = run_here(source, tmp_path / "dies",
                       lambda script: script.replace(" -m autograder grade ", " -m no_such_grader grade "))
    assert says_why(data, "grader_failed") == "the grader stopped with exit status 1"


def test_hidden_checks_show_after_the_due_date_and_outputs_are_text():
    """Gradescope's own visibility model, as each check declares it (@check(..., visibility=...)):
    a visible check at once, a hidden one after the due date (or once grades are published)."""
    from support import zygote

    from autograder.core.grade import run_checks
    from autograder.core.submission import locate

    result = run_checks(locate(EXAMPLES / "partial"), "cpu", launcher=zygote())
    data = result.to_gradescope()
    checks = [c for s in result.sections for c in s.checks]
    assert len(checks) == len(data["tests"])
    seen = {test["visibility"] for test in data["tests"]}
    assert seen == {"visible", "after_due_date"}
    for check, test in zip(checks, data["tests"]):
        assert test["visibility"] == check.visibility == ("visible" if check.visible else "after_due_date"), test["name"]
    assert data["output_format"] == data["test_output_format"] == "text"
    assert data["stdout_visibility"] == "hidden"


def test_a_check_s_declared_visibility_reaches_gradescope():
    from autograder.core.results import CheckResult, GradeResult, SectionResult

    declared = [CheckResult("01_scores", "shown at once", 1, 1, visible=True, visibility="visible"),
                CheckResult("01_scores", "after the due date", 1, 0, "wrong", "check", visibility="after_due_date"),
                CheckResult("01_scores", "once published", 1, 1, visibility="after_published"),
                CheckResult("01_scores", "made without one", 1, 1)]  # by hand: the harness's default
    result = GradeResult("a student", "cpu", [SectionResult("01_scores", "Scores", declared)])
    assert [test["visibility"] for test in result.to_gradescope()["tests"]] == [
        "visible", "after_due_date", "after_published", "after_due_date"]


def notebook_imports() -> set[str]:
    """The top-level modules the released notebooks' code cells import (English and Chinese), read
    with ast, the standard library and the course's own helper left out."""
    import ast

    found = set()
    for notebook in sorted(ROOT.glob("student_template/**/*.ipynb")):
        for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"])
            try:
                tree = ast.parse("\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))))
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    found |= {alias.name.split(".")[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    found.add(node.module.split(".")[0])
    return {name for name in found if name not in sys.stdlib_module_names and name not in ("attention_plots",
                                                                                              "autograder")}


def test_gradescopes_setup_installs_what_every_notebook_imports(exported):
    """Every cell of a notebook runs when it is graded: a module a notebook imports that Gradescope's
    image lacks (07's pandas) would fail every student there with ModuleNotFoundError."""
    from autograder.instructor import declared

    _, source, _ = exported
    setup = (source / "setup.sh").read_text()
    imported = notebook_imports()
    assert "pandas" in imported and "torch" in imported  # the scan sees the notebooks' imports
    for name in imported:
        line = declared.requirement("ipython" if name == "IPython" else name)
        assert shlex.quote(line) in setup or line in setup, (name, line)
