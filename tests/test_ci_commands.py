"""Every command the CI files run, run here, in order, on a class of three.

The shell text comes from the workflow files themselves (GitHub expressions
and GitLab variables filled in); what a hosted runner does around it is done
by hand: `uses:` steps that check out, set up Python or cache do nothing here,
upload and download of artifacts are copies, `$GITHUB_PATH` is read after each
step as the runner reads it, and a local folder of git repositories stands in
for the git host (`GIT_BASE_URL`). The `pip install` and `python -m venv`
lines are the one kind of command left out: this test runs in the course's
own venv, which has everything they install (test_ci_workflows.py checks
what they install and in which order); where a workflow creates a venv, a
`.venv/bin/python` that runs the course's venv stands in for it.

`sudo` is the one command replaced rather than left out: the instructor's
workflow grades as root on GitHub-hosted runners (`RUNNER_ENVIRONMENT` set
as there), and a stand-in `sudo` first on PATH records the command and runs it
as the test's own user (root on the machines that run this suite, where the
grading gets the namespaces tier without sudo). Nothing runs with the real
sudo and no sysctl is changed: the test must not alter the machine it runs on.

The class: alice hands in the correct notebooks, bob the partial ones, carol
the blank template; the grades must come out as `grade` gives them, and each
student's feedback report (`batch --report`) must reach the run's artifacts.
"""
from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

from tests.support import EXAMPLES, ROOT, venv_path  # noqa: E402

CI = ROOT / "ci"
CLASS = {"alice": EXAMPLES / "correct", "bob": EXAMPLES / "partial", "carol": ROOT / "student_template"}
EXPECTED_TOTALS = {"alice": 60.0, "bob": 21.0, "carol": 0.0}
INSTALL = re.compile(r"^\s*python -m (pip install|venv)\b")
SUDO = """#!/usr/bin/env bash
# stands in for sudo: records the command, then runs it as the test's own user
echo "$*" >> "$SUDO_LOG"
while [ "${1#-}" != "${1:-}" ]; do shift; done  # sudo's options (-E)
exec "$@"
"""


def without_installs(script: str) -> str:
    return "\n".join(line for line in script.splitlines() if not INSTALL.match(line))


def bash(script: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{script}\n--- exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def base_env(host: Path | None = None) -> dict:
    """The runner's environment: the venv's `python` first on PATH, the git host mirrored locally."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CI_", "GIT_"))}
    env["PATH"] = venv_path(env.get("PATH", "/usr/bin:/bin"))
    if host is not None:
        env["GIT_BASE_URL"] = (host / "host").as_uri()
    env.pop("PYTHONPATH", None)
    return env


def student_repository(repo: Path, student: str) -> Path:
    """The student template with `student`'s notebooks in it: what a student's repository holds."""
    shutil.copytree(ROOT / "student_template", repo)
    for notebook in CLASS[student].glob("*.ipynb"):
        shutil.copy(notebook, repo / notebook.name)
    return repo


@pytest.fixture(scope="module")
def host(tmp_path_factory) -> Path:
    """One git repository per student, as `<host>/course/<student>.git`, and a roster naming them."""
    root = tmp_path_factory.mktemp("host")
    for student in CLASS:
        repo = student_repository(root / "host" / "course" / f"{student}.git", student)
        git = ["git", "-C", str(repo), "-c", "user.name=Student", "-c", "user.email=student@example.org"]
        for command in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "hand in"]):
            subprocess.run(git + command, check=True, capture_output=True)
    (root / "roster.txt").write_text("# student  repository\n" + "".join(f"{s} course/{s}\n" for s in CLASS))
    return root


def checkout(folder: Path, host: Path) -> Path:
    """The course repository as a runner checks it out: what the commands touch of it."""
    folder.mkdir(parents=True)
    (folder / "ci").symlink_to(CI)
    shutil.copy(host / "roster.txt", folder / "roster.txt")
    return folder


def assert_feedback(folder: Path) -> None:
    """One report per student of the class, with their score; bob's says which check failed."""
    assert sorted(p.name for p in folder.iterdir()) == sorted(CLASS), folder
    for student, total in EXPECTED_TOTALS.items():
        markdown = (folder / student / "report.md").read_text(encoding="utf-8")
        assert markdown.startswith(f"## Attention course feedback: {total:g} / "), (student, markdown[:80])
        assert (folder / student / "report.html").is_file(), student
    assert "\u274c" in (folder / "bob" / "report.md").read_text(encoding="utf-8")


def read_grades(folder: Path) -> dict:
    with open(folder / "grades.csv", newline="") as handle:
        return {row["student"]: float(row["total"]) for row in csv.DictReader(handle)}


# ------------------------------------------------------------------ GitHub Actions

EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def fill(text: str, values: dict) -> str:
    """GitHub expressions replaced by `values`; an expression the test does not know fails it."""
    def one(match):
        assert match[1] in values, f"no value for the expression {match[1]!r}"
        return values[match[1]]
    return EXPRESSION.sub(one, text)


def github_steps(job: dict, values: dict, env: dict, cwd: Path, artifacts: Path) -> None:
    """Run one job's steps as a runner would: `if:`, `env:`, `run:`, `$GITHUB_PATH`; artifacts as
    folder copies."""
    github_path = cwd.parent / f"{cwd.name}.github_path"
    github_path.write_text("")
    env = {**env, "GITHUB_PATH": str(github_path),
           **{k: fill(str(v), values) for k, v in (job.get("env") or {}).items()}}
    for step in job["steps"]:
        added = [line for line in reversed(github_path.read_text().splitlines()) if line]
        env["PATH"] = os.pathsep.join(added + [env["PATH"]])  # later lines come first, as on a runner
        github_path.write_text("")
        condition = step.get("if")
        if condition is not None:
            assert condition in values, f"no value for the condition {condition!r}"
            if values[condition] != "true":
                continue
        uses = step.get("uses", "")
        if uses.startswith("actions/upload-artifact@"):
            name = fill(step["with"]["name"], values)
            shutil.copytree(cwd / fill(step["with"]["path"], values), artifacts / name)
        elif uses.startswith("actions/download-artifact@"):
            pattern, into = step["with"]["pattern"], cwd / step["with"]["path"]
            for artifact in sorted(artifacts.glob(pattern)):  # one folder per artifact, named after it
                shutil.copytree(artifact, into / artifact.name)
        elif uses:
            assert uses.split("@")[0] in ("actions/checkout", "actions/setup-python", "actions/cache"), uses
        else:
            step_env = {**env, **{k: fill(str(v), values) for k, v in (step.get("env") or {}).items()}}
            bash(fill(without_installs(step["run"]), values), cwd, step_env)


def plan(workflow: dict, tmp_path: Path, shards: int, gpu: bool) -> tuple[list, str]:
    job = workflow["jobs"]["plan"]
    (step,) = job["steps"]
    output = tmp_path / f"plan-{shards}-{gpu}.out"
    env = {**base_env(), "GITHUB_OUTPUT": str(output)}
    values = {"inputs.shards || 4": str(shards), "inputs.gpu || vars.GPU_RUNNER == 'true'": str(gpu).lower()}
    env.update({k: fill(str(v), values) for k, v in step["env"].items()})
    bash(step["run"], tmp_path, env)
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines())
    return json.loads(outputs["matrix"])["include"], outputs["total"]


def test_github_plan_gives_one_matrix_entry_per_shard_and_the_gpu_runner_when_asked(tmp_path):
    workflow = yaml.safe_load((CI / "github" / "instructor-grading.yml").read_text())
    include, total = plan(workflow, tmp_path, shards=3, gpu=False)
    assert total == "3" and [e["shard"] for e in include] == [1, 2, 3]
    assert all(e["device"] == "cpu" and e["runner"] == ["ubuntu-latest"] for e in include)
    include, _ = plan(workflow, tmp_path, shards=2, gpu=True)
    assert include[0] == {"shard": 1, "runner": ["self-hosted", "linux", "gpu"], "device": "cuda"}
    assert include[1]["device"] == "cpu"


def sudo_stand_in(folder: Path) -> tuple[Path, Path]:
    """A folder holding the stand-in `sudo`, and the file it records its commands in."""
    folder.mkdir()
    (folder / "sudo").write_text(SUDO)
    (folder / "sudo").chmod(0o755)
    return folder, folder / "sudo.log"


def test_github_instructor_workflow_grades_the_class(tmp_path, host):
    workflow = yaml.safe_load((CI / "github" / "instructor-grading.yml").read_text())
    include, total = plan(workflow, tmp_path, shards=2, gpu=False)
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    sudo_folder, sudo_log = sudo_stand_in(tmp_path / "sudo")
    env = base_env(host)
    # as on a GitHub-hosted runner, where the grading step runs the grader with sudo
    hosted = {**env, "RUNNER_ENVIRONMENT": "github-hosted", "SUDO_LOG": str(sudo_log),
              "PATH": os.pathsep.join([str(sudo_folder), env["PATH"]])}
    for entry in include:
        cwd = checkout(tmp_path / f"grade-{entry['shard']}", host)
        values = {
            "matrix.shard": str(entry["shard"]), "matrix.device": entry["device"],
            "needs.plan.outputs.total": total, "secrets.ROSTER_TOKEN": "not-a-real-token",
            "vars.TORCH_CUDA_INDEX_URL": "",
            "inputs.force && 'true' || ''": "", "github.run_id": "1",
            "matrix.device == 'cpu'": str(entry["device"] == "cpu").lower(),
            "matrix.device == 'cuda'": str(entry["device"] == "cuda").lower(), "always()": "true",
        }
        github_steps(workflow["jobs"]["grade"], values, hosted, cwd, artifacts)
    ran = sudo_log.read_text().splitlines()
    assert [line.split(" -m autograder ")[1].split()[0] for line in ran if " -m autograder " in line] == \
        ["batch"] * len(include)  # every shard graded as root
    assert sum(line.startswith("chown -R ") for line in ran) == len(include)  # and handed its results back
    cwd = checkout(tmp_path / "merge", host)
    summary = tmp_path / "summary.md"
    github_steps(workflow["jobs"]["merge"], {}, {**env, "GITHUB_STEP_SUMMARY": str(summary)}, cwd, artifacts)
    assert read_grades(cwd / "grades") == EXPECTED_TOTALS
    assert read_grades(artifacts / "grades") == EXPECTED_TOTALS  # the uploaded artifact
    assert_feedback(artifacts / "feedback")  # the students' reports, gathered from the shards
    text = summary.read_text()
    assert "## Class grades" in text and "| alice |" in text
    assert "\n|---|" in text  # a Markdown table renders only with its delimiter row


def test_github_student_workflow_writes_the_self_check_into_the_summary(tmp_path):
    workflow = yaml.safe_load((CI / "github" / "student-template.yml").read_text())
    repo = student_repository(tmp_path / "bob", "bob")
    summary = tmp_path / "summary.md"
    env = {**base_env(), "GITHUB_STEP_SUMMARY": str(summary),
           "TORCH_VERSION": workflow["env"]["TORCH_VERSION"]}
    (job,) = workflow["jobs"].values()
    values = {"github.ref": "refs/heads/main", "runner.os": "Linux", "env.TORCH_VERSION": "2.13.0",
              "hashFiles('grader/*.whl')": "0"}
    github_steps(job, values, env, repo, tmp_path / "artifacts")
    text = summary.read_text()
    score, best = map(float, re.search(r"^## Attention course: ([\d.]+) / ([\d.]+)$", text, re.M).groups())
    assert 0 < score < best  # bob's partial notebooks: some visible checks pass, not all
    assert "01_scores" in text and "06_multihead" in text


def test_github_os_matrix_asserts_the_examples_scores(tmp_path):
    """The course repository's matrix, on this machine's entry: Linux, the installed torch."""
    import importlib.metadata

    workflow = yaml.safe_load((CI / "github" / "selfcheck-os-matrix.yml").read_text())
    (job,) = workflow["jobs"].values()
    torch = importlib.metadata.version("torch").split("+")[0]
    assert torch in job["strategy"]["matrix"]["torch"], f"torch {torch} is not an end of the tested range"
    repo = tmp_path / "course"
    for example in ("correct", "partial"):  # the self-check writes feedback/ beside the notebooks
        shutil.copytree(EXAMPLES / example, repo / "examples" / example)
    venv_python = repo / ".venv" / "bin" / "python"  # the venv the workflow creates, standing in
    venv_python.parent.mkdir(parents=True)
    used = tmp_path / "venv-python.log"
    venv_python.write_text(f'#!/bin/sh\necho "$*" >> "{used}"\nexec "{sys.executable}" "$@"\n')
    venv_python.chmod(0o755)
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    env = {**base_env(), "RUNNER_TEMP": str(temp)}
    github_steps(job, {"matrix.torch": torch}, env, repo, tmp_path / "artifacts")
    # every step after the venv's creation ran its python: the GITHUB_PATH line activated it
    assert sum(line.startswith("-m autograder check . ") for line in used.read_text().splitlines()) == 2
    correct, partial = (json.loads((temp / f"{name}.json").read_text()) for name in ("correct", "partial"))
    assert correct["score"] == correct["max_score"] > partial["score"] > 0


@pytest.mark.parametrize("correct, partial, torch, says", [
    (13.5, 4.0, "2.13.0", ""),  # as it should be: passes
    (12.5, 4.0, "2.13.0", "not the full visible score"),  # the correct example lost a point
    (13.5, 13.5, "2.13.0", "not all"),  # the partial example got everything
    (13.5, 0.0, "2.13.0", "some of the visible points"),  # or nothing: nothing ran on that system
    (13.5, 4.0, "2.14.1", "not 2.13.0"),  # pip swapped torch under the matrix's version
])
def test_the_os_matrix_assertion_step(tmp_path, correct, partial, torch, says):
    """The step that judges the two self-checks' JSON passes on the expected scores only."""
    workflow = yaml.safe_load((CI / "github" / "selfcheck-os-matrix.yml").read_text())
    (job,) = workflow["jobs"].values()
    (step,) = [s for s in job["steps"] if "max_score" in s.get("run", "")]
    for name, score in (("correct", correct), ("partial", partial)):
        (tmp_path / f"{name}.json").write_text(json.dumps(
            {"score": score, "max_score": 13.5, "tests": [], "extra_data": {"torch": torch}}))
    done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=tmp_path, capture_output=True, text=True,
                          env={**base_env(), "RUNNER_TEMP": str(tmp_path), "TORCH_VERSION": "2.13.0"},
                          timeout=60)
    if says:
        assert done.returncode != 0 and says in done.stderr, done.stdout + done.stderr
    else:
        assert done.returncode == 0, done.stdout + done.stderr


# ------------------------------------------------------------------ GitLab CI


def gitlab_job(pipeline: dict, name: str) -> dict:
    """A job with `extends:` resolved (one level, as the course's files use it)."""
    job = dict(pipeline[name])
    parent = job.pop("extends", None)
    return {**pipeline[parent], **job} if parent else job


def gitlab_run(pipeline: dict, name: str, cwd: Path, env: dict) -> None:
    job = gitlab_job(pipeline, name)
    variables = {**{k: str(v) for k, v in pipeline.get("variables", {}).items()},
                 **{k: str(v) for k, v in (job.get("variables") or {}).items()}}
    script = "\n".join(job.get("before_script", []) + job["script"])
    # GitLab exports every CI/CD variable, secrets included, to every job's scripts
    secrets = {"ROSTER_TOKEN": "not-a-real-token", "CI_JOB_TOKEN": "not-a-real-job-token"}
    bash(without_installs(script), cwd, {**env, "CI_PROJECT_DIR": str(cwd), **secrets,
                                         **{k: os.path.expandvars(v) for k, v in variables.items()}})


def test_gitlab_instructor_pipeline_grades_the_class(tmp_path, host):
    pipeline = yaml.safe_load((CI / "gitlab" / "instructor.gitlab-ci.yml").read_text())
    env = base_env(host)
    merge_dir = checkout(tmp_path / "merge", host)
    shards = pipeline["grade-cpu"]["parallel"]
    for index in range(1, shards + 1):
        cwd = checkout(tmp_path / f"grade-cpu-{index}", host)
        gitlab_run(pipeline, "grade-cpu", cwd, {**env, "CI_NODE_INDEX": str(index), "CI_NODE_TOTAL": str(shards)})
        for artifact in cwd.glob("grades-shard-*/"):  # artifacts: paths, restored into the merge job
            shutil.copytree(artifact, merge_dir / artifact.name)
    gitlab_run(pipeline, "merge", merge_dir, env)
    assert read_grades(merge_dir / "grades") == EXPECTED_TOTALS
    assert "feedback/" in gitlab_job(pipeline, "merge")["artifacts"]["paths"]
    assert_feedback(merge_dir / "feedback")


def test_gitlab_student_pipeline_writes_junit_and_markdown(tmp_path):
    pipeline = yaml.safe_load((CI / "gitlab" / "student.gitlab-ci.yml").read_text())
    repo = student_repository(tmp_path / "bob", "bob")
    gitlab_run(pipeline, "self-check", repo, base_env())
    cases = list(ET.parse(repo / "report.xml").getroot().iter("testcase"))
    failed = [case for case in cases if case.find("failure") is not None]
    assert 0 < len(failed) < len(cases)  # bob's partial notebooks: some visible checks pass, not all
    assert "01_scores" in (repo / "self-check.md").read_text()
