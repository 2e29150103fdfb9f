"""The CI files in ci/github and ci/gitlab: they parse, have the structure the
instructor's workflow relies on, and every `python -m autograder` command in
them is a valid command line for the grader."""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

from tests.support import ROOT, venv_path  # noqa: E402

CI = ROOT / "ci"
FILES = {
    "github-student": CI / "github" / "student-template.yml",
    "github-instructor": CI / "github" / "instructor-grading.yml",
    "gitlab-student": CI / "gitlab" / "student.gitlab-ci.yml",
    "gitlab-instructor": CI / "gitlab" / "instructor.gitlab-ci.yml",
}


def load(name: str) -> dict:
    data = yaml.safe_load(FILES[name].read_text())
    assert isinstance(data, dict)
    return data


def triggers(workflow: dict) -> dict:
    # YAML 1.1 reads the key `on` as True
    value = workflow.get("on", workflow.get(True))
    return value if isinstance(value, dict) else {key: None for key in value}


def github_runs(workflow: dict) -> list[str]:
    return [step["run"] for job in workflow["jobs"].values() for step in job.get("steps", []) if "run" in step]


def gitlab_scripts(pipeline: dict) -> list[str]:
    lines = []
    for name, job in pipeline.items():
        if isinstance(job, dict):
            for key in ("before_script", "script", "after_script"):
                lines.extend(job.get(key) or [])
    return lines


def grader_commands(scripts: list[str]) -> list[list[str]]:
    """Every `python -m autograder ...` command, with CI expressions and variables filled in."""
    commands = []
    for script in scripts:
        text = re.sub(r"\$\{\{[^}]*shard[^}]*\}\}", "1", script)
        text = re.sub(r"\$\{\{[^}]*total[^}]*\}\}", "4", text)
        text = re.sub(r"\$\{\{[^}]*device[^}]*\}\}", "cpu", text)
        text = re.sub(r"\$\{\{[^}]*\}\}", "x", text)
        text = text.replace("$CI_NODE_INDEX", "1").replace("$CI_NODE_TOTAL", "4").replace("$FORCE", "")
        text = text.replace("${FORCE:+--force}", "")
        text = text.replace('"$GITHUB_STEP_SUMMARY"', "summary.md")
        for line in text.replace("\\\n", " ").splitlines():
            if "-m autograder " not in line:
                continue
            words = shlex.split(line.split("|")[0].split(">>")[0].split("||")[0])
            commands.append(words[words.index("autograder") + 1:])
    return commands


def assert_installs_the_template_grader(name: str, scripts: list[str]) -> None:
    """CPU torch, pinned, then the self-check wheel committed in the student's repository; never the course."""
    lines = [line.strip() for script in scripts for line in script.splitlines() if "pip install" in line]
    torch_line = next(i for i, line in enumerate(lines) if "torch==" in line)
    wheel_line = lines.index("python -m pip install grader/*.whl")
    assert "--index-url https://download.pytorch.org/whl/cpu" in lines[torch_line]
    # torch first: the wheel requires torch==2.13.0, and pip would otherwise fetch the default CUDA build
    assert torch_line < wheel_line
    assert load(name)[{"github-student": "env", "gitlab-student": "variables"}[name]]["TORCH_VERSION"] == "2.13.0"
    text = FILES[name].read_text()
    for course_access in ("COURSE_REPO", "git+", "git clone"):
        assert course_access not in text, f"{FILES[name].name} still reaches the course repository"


def test_the_student_repository_holds_the_wheel_the_workflows_install():
    wheels = list((ROOT / "student_template" / "grader").glob("*.whl"))  # `grader/*.whl` in the student's copy
    assert len(wheels) == 1, wheels


def assert_valid_commands(scripts: list[str], expected_verbs: set) -> None:
    from autograder.cli import build_parser

    commands = grader_commands(scripts)
    assert {c[0] for c in commands} == expected_verbs, commands
    for command in commands:
        build_parser().parse_args(command)  # raises UsageError on a bad command line


@pytest.mark.parametrize("name", sorted(FILES))
def test_parses_as_yaml(name):
    assert load(name)


def test_github_student_template():
    workflow = load("github-student")
    assert "push" in triggers(workflow)
    (job,) = workflow["jobs"].values()
    uses = [step.get("uses", "") for step in job["steps"]]
    assert any(u.startswith("actions/checkout@") for u in uses)
    setup = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/setup-python@"))
    assert str(setup["with"]["python-version"]) == "3.11"
    cache = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/cache@"))
    assert "pip" in cache["with"]["path"]
    runs = "\n".join(github_runs(workflow))
    assert "--index-url https://download.pytorch.org/whl/cpu" in runs
    assert 'python -m autograder check . --format markdown >> "$GITHUB_STEP_SUMMARY"' in runs
    assert_installs_the_template_grader("github-student", github_runs(workflow))
    assert_valid_commands(github_runs(workflow), {"check"})


def test_github_instructor_grading():
    workflow = load("github-instructor")
    assert {"schedule", "repository_dispatch", "workflow_dispatch"} <= set(triggers(workflow))
    jobs = workflow["jobs"]
    grade = jobs["grade"]
    assert "matrix" in grade["strategy"] and grade["strategy"]["fail-fast"] is False
    assert grade["runs-on"] == "${{ matrix.runner }}"
    plan = "\n".join(github_runs({"jobs": {"plan": jobs["plan"]}}))
    assert '"self-hosted"' in plan and '"gpu"' in plan and '"cuda"' in plan
    steps = grade["steps"]
    clone = next(s for s in steps if "clone_roster.sh" in s.get("run", ""))
    assert "secrets." in clone["env"]["GIT_TOKEN"]
    grading = next(s for s in steps if "autograder batch" in s.get("run", ""))
    assert "secrets." not in str(grading)  # student code never runs with the token
    assert "--shard" in grading["run"] and "--device ${{ matrix.device }}" in grading["run"]
    assert any(s.get("uses", "").startswith("actions/upload-artifact@") for s in steps)
    merge = jobs["merge"]
    assert merge["needs"] == "grade"
    merge_uses = [s.get("uses", "") for s in merge["steps"]]
    assert any(u.startswith("actions/download-artifact@") for u in merge_uses)
    assert any(u.startswith("actions/upload-artifact@") for u in merge_uses)
    assert_valid_commands(github_runs(workflow), {"batch", "merge"})


def test_gitlab_student():
    pipeline = load("gitlab-student")
    job = pipeline["self-check"]
    assert job["image"].startswith("python:3.11")
    assert ".cache/pip" in job["cache"]["paths"]
    assert "report.xml" == job["artifacts"]["reports"]["junit"]
    scripts = gitlab_scripts(pipeline)
    assert any("--index-url https://download.pytorch.org/whl/cpu" in s for s in scripts)
    assert pipeline["variables"]["PIP_CACHE_DIR"] == "$CI_PROJECT_DIR/.cache/pip"  # the cached folder above
    assert_installs_the_template_grader("gitlab-student", scripts)
    assert_valid_commands(scripts, {"check"})


def test_gitlab_instructor():
    pipeline = load("gitlab-instructor")
    sources = {rule["if"] for rule in pipeline["workflow"]["rules"]}
    assert any("schedule" in s for s in sources) and any("api" in s or "trigger" in s for s in sources)
    assert pipeline["stages"] == ["grade", "merge"]
    assert pipeline["grade-cpu"]["parallel"] >= 2
    assert "gpu" in pipeline["grade-gpu"]["tags"]
    assert "--device cuda" in " ".join(pipeline["grade-gpu"]["script"])
    needs = {n["job"] for n in pipeline["merge"]["needs"]}
    assert needs == {"grade-cpu", "grade-gpu"}
    assert_valid_commands(gitlab_scripts(pipeline), {"batch", "merge"})


def test_clone_script_is_valid_bash(tmp_path):
    script = CI / "clone_roster.sh"
    subprocess.run(["bash", "-n", str(script)], check=True)
    roster = tmp_path / "roster.txt"
    roster.write_text("# comment\n\n../evil some/repo\n")
    done = subprocess.run(["bash", str(script), str(roster), str(tmp_path / "submitted")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "bad student name" in done.stderr
    assert not any((tmp_path / "submitted").iterdir())


def tool(name: str) -> str:
    """A checker installed with the course's test extras (in the venv's bin/) or on PATH; skips if absent."""
    found = shutil.which(name, path=venv_path())
    if found is None:
        print(f"{name} is not installed (pip install -e '.[test]'): this check was not run")
        pytest.skip(f"{name} is not installed (it comes with the course's [test] extras)")
    return found


def tools_env() -> dict:
    # actionlint runs shellcheck on every `run:` script when it finds it on PATH
    return dict(os.environ, PATH=venv_path())


def actionlint(*files: Path) -> subprocess.CompletedProcess:
    return subprocess.run([tool("actionlint"), "-no-color", *map(str, files)], capture_output=True, text=True,
                          env=tools_env(), timeout=120)


def test_actionlint_passes_both_github_workflows():
    done = actionlint(FILES["github-student"], FILES["github-instructor"])
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("before, after, says", [
    ("needs: grade\n", "needs: grades\n", "grades"),  # a job that does not exist
    ("--jobs 2", "--jobs 2 $UNQUOTED", "SC2086"),  # shellcheck, through actionlint
    ("actions/checkout@v5", "actions/checkout@v4", "node20"),  # an action on a retired runtime
])
def test_actionlint_catches_a_broken_workflow(tmp_path, before, after, says):
    broken = tmp_path / "instructor-grading.yml"
    text = FILES["github-instructor"].read_text()
    assert before in text
    broken.write_text(text.replace(before, after, 1))
    done = actionlint(broken)
    assert done.returncode != 0 and says in done.stdout, done.stdout + done.stderr


def check_schema(schema: str, *files: Path) -> subprocess.CompletedProcess:
    return subprocess.run([tool("check-jsonschema"), "--builtin-schema", schema, *map(str, files)],
                          capture_output=True, text=True, timeout=120)


def test_gitlab_pipelines_match_gitlabs_schema():
    done = check_schema("vendor.gitlab-ci", FILES["gitlab-student"], FILES["gitlab-instructor"])
    assert done.returncode == 0, done.stdout + done.stderr


def test_github_workflows_match_the_workflow_schema():
    done = check_schema("vendor.github-workflows", FILES["github-student"], FILES["github-instructor"])
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("before, after", [
    ("  when: always\n  script:", "  when: sometimes\n  script:"),  # the merge job: not one of GitLab's values
    ("parallel: 4", "parallel: four"),
])
def test_the_gitlab_schema_catches_a_broken_pipeline(tmp_path, before, after):
    broken = tmp_path / "instructor.gitlab-ci.yml"
    text = FILES["gitlab-instructor"].read_text()
    assert before in text
    broken.write_text(text.replace(before, after, 1))
    done = check_schema("vendor.gitlab-ci", broken)
    assert done.returncode != 0, done.stdout
