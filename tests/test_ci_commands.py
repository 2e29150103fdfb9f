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

The student workflows run on each student's own repository, as the runner
runs them (a failed step skips the later ones unless their `if:` asks for the
job's status; `after_script` runs with CI_JOB_STATUS): the job must fail for
bob and carol and pass for alice, with the score in the summary (GitHub) or
the log's last lines, the coverage and the JUnit report (GitLab), and the
feedback report where the artifact step takes it; a failed install, or a
self-check that cannot start, must fail it with one clear line.
"""
from __future__ import annotations

import csv
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml  # the [test] extras' pyyaml: a missing one is a broken install, not a reason to skip
from support import EXAMPLES, ROOT, venv_path, zygote

CI = ROOT / "ci"
CLASS = {"alice": EXAMPLES / "correct", "bob": EXAMPLES / "partial", "carol": ROOT / "student_template"}


@functools.cache
def expected_totals() -> dict:
    """Each student's total as `grade` gives it (the bonus section's points included), graded here."""
    from autograder.core.grade import run_checks
    from autograder.core.submission import locate

    totals = {student: run_checks(locate(folder), "cpu", launcher=zygote()).score for student, folder in CLASS.items()}
    assert totals["alice"] > totals["bob"] > totals["carol"] == 0.0, totals
    return totals


INSTALL = re.compile(r"^\s*python -m (pip install|venv)\b")
SUDO = """#!/usr/bin/env bash
# stands in for sudo: records the command, then runs it as the test's own user
echo "$*" >> "$SUDO_LOG"
while [ "${1#-}" != "${1:-}" ]; do shift; done  # sudo's options (-E)
exec "$@"
"""


def without_installs(script: str) -> str:
    return "\n".join(line for line in script.splitlines() if not INSTALL.match(line))


def bash(script: str, cwd: Path, env: dict, check: bool = True, merged: bool = False) -> subprocess.CompletedProcess:
    """Run `script` as runners do (bash -e -o pipefail); with `check`, it must succeed; `merged`:
    stderr into stdout, in the order written, as in a job's log."""
    done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT if merged else subprocess.PIPE, text=True, timeout=600)
    done.stderr = done.stderr or ""
    assert not check or done.returncode == 0, \
        f"{script}\n--- exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def base_env(host: Path | None = None) -> dict:
    """The runner's environment: the venv's `python` first on PATH, the git host mirrored locally."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "CI_", "GIT_"))}
    env["PATH"] = venv_path(env.get("PATH", "/usr/bin:/bin"))
    if host is not None:
        env["GIT_BASE_URL"] = (host / "host").as_uri()
    env.pop("PYTHONPATH", None)
    return env


def student_repository(repo: Path, student: str, lang: str = "en") -> Path:
    """The student template with `student`'s notebooks in it: what a student's repository holds.
    In Chinese (`lang` "zh"): the Chinese template, whose notebooks say so in their metadata, as a
    Chinese student's notebooks do (`check` then speaks Chinese)."""
    shutil.copytree(ROOT / "student_template" / ("" if lang == "en" else lang), repo)
    for notebook in CLASS[student].glob("*.ipynb"):
        data = json.loads(notebook.read_text(encoding="utf-8"))
        data["metadata"].setdefault("course", {})["language"] = lang
        (repo / notebook.name).write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return repo


# the self-check's Markdown heading in Chinese (feedback.po's "## Attention course: {total}")
CHINESE_SCORE_LINE = "## 注意力机制课程："


def json_score(repo: Path) -> tuple[float, float]:
    """(the core sections' visible points, their maximum) of the self-check's JSON beside the
    notebooks: every check's points but a bonus check's (its test's max_score is 0), and max_score."""
    result = json.loads((repo / "self-check.json").read_text(encoding="utf-8"))
    core = [test for test in result["tests"] if test["max_score"] > 0]
    return sum(test["score"] for test in core), result["max_score"]


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


# "S / M", its bonus apart, then each part's total where both parts were graded ("; part 1: ...")
FEEDBACK_LINE = re.compile(r"## Attention course feedback: ([\d.]+) / ([\d.]+)(?:, plus ([\d.]+) / ([\d.]+) bonus)?(?:; [^\n]*)?\n")


def assert_feedback(folder: Path) -> None:
    """One report per student of the class, with their score; bob's says which check failed."""
    assert sorted(p.name for p in folder.iterdir()) == sorted(CLASS), folder
    for student, total in expected_totals().items():
        markdown = (folder / student / "report.md").read_text(encoding="utf-8")
        # grades.csv's total counts the bonus; the report shows it apart, its core total never above the maximum
        core, most, bonus, _bonus_max = (float(v or 0) for v in FEEDBACK_LINE.match(markdown).groups())
        assert core + bonus == total and core <= most, (student, markdown[:80])
        assert (folder / student / "report.html").is_file(), student
    assert "\u274c" in (folder / "bob" / "report.md").read_text(encoding="utf-8")


def assert_similarity(folder: Path) -> None:
    """The similarity report of the whole class: alice and bob share the reference's code in the
    sections bob solved; carol handed in the released notebooks, which are subtracted."""
    with open(folder / "similarity.csv", newline="") as handle:
        pairs = {(row["student_a"], row["student_b"]) for row in csv.DictReader(handle)}
    assert pairs == {("alice", "bob")}, pairs
    assert "<mark>" in (folder / "similarity.html").read_text(encoding="utf-8")


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


# `if:` conditions that run a step after a failed one; any other condition implies success() first
STATUS_FUNCTIONS = ("always()", "cancelled()", "failure()")


def github_steps(job: dict, values: dict, env: dict, cwd: Path, artifacts: Path,
                 must_pass: bool = True) -> dict:
    """Run one job's steps as a runner would: `if:` (a failed step skips the later steps but those
    whose condition asks for the job's status), `env:`, `run:`, `$GITHUB_PATH`, `$GITHUB_ENV` (NAME=value
    lines), `steps.<id>.outcome`; artifacts as folder copies. Returns each step's outcome (by id, else
    name, else uses) and the job's log; with `must_pass`, every step that runs must succeed."""
    github_path, github_env = cwd.parent / f"{cwd.name}.github_path", cwd.parent / f"{cwd.name}.github_env"
    github_path.write_text("")
    github_env.write_text("")
    env = {**env, "GITHUB_PATH": str(github_path), "GITHUB_ENV": str(github_env),
           **{k: fill(str(v), values) for k, v in (job.get("env") or {}).items()}}
    outcomes, log, failed = {}, [], False
    for step in job["steps"]:
        key = step.get("id") or step.get("name") or step["uses"]
        values = {**values, **{f"steps.{k}.outcome": v for k, v in outcomes.items()}}
        added = [line for line in reversed(github_path.read_text().splitlines()) if line]
        env["PATH"] = os.pathsep.join(added + [env["PATH"]])  # later lines come first, as on a runner
        env.update(line.split("=", 1) for line in github_env.read_text().splitlines() if "=" in line)
        github_path.write_text("")
        github_env.write_text("")
        condition = step.get("if")
        if condition is None:
            runs = not failed
        else:
            assert condition in values, f"no value for the condition {condition!r}"
            runs = values[condition] == "true" and (not failed or any(f in condition for f in STATUS_FUNCTIONS))
        if not runs:
            outcomes[key] = "skipped"
            continue
        outcomes[key] = "success"
        uses = step.get("uses", "")
        if uses.startswith("actions/upload-artifact@"):
            name, path = fill(step["with"]["name"], values), cwd / fill(step["with"]["path"], values)
            if path.exists():  # if-no-files-found: warn (the default) or ignore: a missing path is no error
                shutil.copytree(path, artifacts / name)
            else:
                assert step["with"].get("if-no-files-found", "warn") in ("warn", "ignore"), step
        elif uses.startswith("actions/download-artifact@"):
            pattern, into = step["with"]["pattern"], cwd / step["with"]["path"]
            for artifact in sorted(artifacts.glob(pattern)):  # one folder per artifact, named after it
                shutil.copytree(artifact, into / artifact.name)
        elif uses:
            assert uses.split("@")[0] in ("actions/checkout", "actions/setup-python", "actions/cache"), uses
        else:
            step_env = {**env, **{k: fill(str(v), values) for k, v in (step.get("env") or {}).items()}}
            done = bash(fill(without_installs(step["run"]), values), cwd, step_env, check=must_pass)
            log.append(done.stdout + done.stderr)
            if done.returncode != 0:
                outcomes[key], failed = "failure", True
    return {"outcomes": outcomes, "failed": failed, "log": "".join(log)}


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
            "vars.TORCH_CUDA_INDEX_URL": "", "vars.ATTENTION_COURSE_LANG": "",
            "inputs.force && 'true' || ''": "", "github.run_id": "1",
            "matrix.device == 'cpu'": str(entry["device"] == "cpu").lower(),
            "matrix.device == 'cuda'": str(entry["device"] == "cuda").lower(), "always()": "true",
            "always() && matrix.shard == 1": str(entry["shard"] == 1).lower(),
        }
        github_steps(workflow["jobs"]["grade"], values, hosted, cwd, artifacts)
    ran = sudo_log.read_text().splitlines()
    assert [line.split(" -m autograder ")[1].split()[0] for line in ran if " -m autograder " in line] == \
        ["batch"] * len(include)  # every shard graded as root
    assert sum(line.startswith("chown -R ") for line in ran) == len(include)  # and handed its results back
    cwd = checkout(tmp_path / "merge", host)
    summary = tmp_path / "summary.md"
    github_steps(workflow["jobs"]["merge"], {}, {**env, "GITHUB_STEP_SUMMARY": str(summary)}, cwd, artifacts)
    assert read_grades(cwd / "grades") == expected_totals()
    assert read_grades(artifacts / "grades") == expected_totals()  # the uploaded artifact
    assert_feedback(artifacts / "feedback")  # the students' reports, gathered from the shards
    assert_similarity(artifacts / "similarity")  # once, by shard 1, for the whole class
    text = summary.read_text()
    assert "## Class grades" in text and "| alice |" in text
    assert "\n|---|" in text  # a Markdown table renders only with its delimiter row


# The sharded term: five students, each handing in the blank template but ben, whose first hand-in
# is the blank 01_scores and whose fix (a later commit) is the correct one. Between the two runs ann
# leaves the roster and ben hands in his fix. Dealt round-robin over the sorted names, ann's leaving
# would move ben to the other shard, whose cached folder still held his first grade, and `merge`
# would keep whichever folder it was given last.
TERM = ("ann", "ben", "cal", "dee", "eve")
FIRST, FIX = "2026-11-01T09:00:00+00:00", "2026-11-03T09:00:00+00:00"


def commit(repo: Path, when: str) -> None:
    dated = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when, "GIT_CONFIG_GLOBAL": os.devnull}
    git = ["git", "-C", str(repo), "-c", "user.name=Student", "-c", "user.email=student@example.org"]
    for command in (["add", "-A"], ["commit", "-q", "-m", "hand in"]):
        subprocess.run(git + command, check=True, capture_output=True, env=dated)


def term_host(root: Path) -> Path:
    """The term's git host: each student's repository, the blank template, committed at FIRST."""
    for student in TERM:
        repo = root / "host" / "course" / f"{student}.git"
        shutil.copytree(ROOT / "student_template", repo)
        subprocess.run(["git", "-C", str(repo), "init", "-q", "-b", "main"], check=True, capture_output=True)
        commit(repo, FIRST)
    (root / "roster.txt").write_text("".join(f"{s} course/{s}\n" for s in TERM))
    return root


def grading_run(workflow: dict, tmp_path: Path, host: Path, run: int, shards: int) -> Path:
    """One run of the instructor workflow with `shards` shards, as GitHub runs it: a fresh checkout
    per job, each shard's output folder restored from the previous run (actions/cache), the shards'
    artifacts merged. The similarity step is left out (no grade depends on it). Returns the merged folder."""
    include, total = plan(workflow, tmp_path, shards=shards, gpu=False)
    artifacts = tmp_path / f"artifacts-{shards}-{run}"
    artifacts.mkdir()
    env = base_env(host)
    for entry in include:
        cwd = checkout(tmp_path / f"run-{shards}-{run}" / f"grade-{entry['shard']}", host)
        cached = tmp_path / f"run-{shards}-{run - 1}" / f"grade-{entry['shard']}" / f"grades-shard-{entry['shard']}"
        if cached.is_dir():
            shutil.copytree(cached, cwd / cached.name)
        values = {
            "matrix.shard": str(entry["shard"]), "matrix.device": "cpu", "needs.plan.outputs.total": total,
            "secrets.ROSTER_TOKEN": "not-a-real-token", "vars.TORCH_CUDA_INDEX_URL": "",
            "vars.ATTENTION_COURSE_LANG": "", "inputs.force && 'true' || ''": "", "github.run_id": str(run),
            "matrix.device == 'cpu'": "true", "matrix.device == 'cuda'": "false", "always()": "true",
            "always() && matrix.shard == 1": "false",
        }
        github_steps(workflow["jobs"]["grade"], values, env, cwd, artifacts)
    cwd = checkout(tmp_path / f"run-{shards}-{run}" / "merge", host)
    github_steps(workflow["jobs"]["merge"], {}, {**env, "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")}, cwd,
                 artifacts)
    return cwd / "grades"


def term_grades(folder: Path) -> dict:
    """Each student's row of grades.csv and every check's result in their file (without timings)."""
    with open(folder / "grades.csv", newline="") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    files = {}
    for path in sorted((folder / "students").glob("*.json")):
        result = json.loads(path.read_text(encoding="utf-8"))
        files[path.stem] = [(t["name"], t["score"], t["output"]) for t in result["tests"]]
    return {"rows": rows, "files": files}


def test_github_sharded_term_with_a_roster_change_equals_one_unsharded_run(tmp_path):
    """Two runs of the workflow, sharded and not; between them ann leaves and ben hands in his fix.
    The merged grades equal the unsharded run's, ben's fix included."""
    workflow = yaml.safe_load((CI / "github" / "instructor-grading.yml").read_text())
    host = term_host(tmp_path)
    for shards in (2, 1):
        grading_run(workflow, tmp_path, host, 1, shards)
    (host / "roster.txt").write_text("".join(f"{s} course/{s}\n" for s in TERM if s != "ann"))
    ben = host / "host" / "course" / "ben.git"
    shutil.copy(EXAMPLES / "correct" / "01_scores.ipynb", ben / "01_scores.ipynb")
    commit(ben, FIX)
    sharded, single = (grading_run(workflow, tmp_path, host, 2, shards) for shards in (2, 1))
    expected = term_grades(single)
    assert float(expected["rows"]["ben"]["01_scores"]) > 0  # the fix counts
    assert "not handed in" in expected["rows"]["ann"]["status"]  # ann left: her sections are not handed in
    assert term_grades(sharded)["rows"]["ben"] == expected["rows"]["ben"]  # his fix, not his first grade
    assert term_grades(sharded) == expected


# "S / M", or with a bonus section "S / M, plus B / BM bonus": S never counts B, and never reads above M
SCORE_LINE = re.compile(r"^## Attention course: ([\d.]+) / ([\d.]+)(?:, plus ([\d.]+) / ([\d.]+) bonus)?(?:; .*)?$", re.M)


def core_score(text: str) -> tuple[float, float]:
    """(the core sections' visible points, their maximum) of a self-check's score line: the CI's
    red or green (a bonus section is optional: its points are read apart)."""
    total, best, bonus, bonus_max = (float(value or 0) for value in SCORE_LINE.search(text).groups())
    assert bonus <= bonus_max and total <= best
    return total, best


def total_of(text: str) -> str:
    """The total as the score line writes it ("S / M", with its bonus part if any): the report's too."""
    return SCORE_LINE.search(text).group(0).removeprefix("## Attention course: ")


def assert_visible_score(student: str, score: float, best: float) -> None:
    """alice gets every visible point, bob some (his partial notebooks), carol none (the blank template)."""
    assert best > 0
    assert {"alice": score == best, "bob": 0 < score < best, "carol": score == 0}[student], (student, score, best)


GRADER_THAT_CANNOT_START = """#!/usr/bin/env bash
# stands in for python: `-m autograder` stops at once with the grader's usage-error status, the rest runs
case " $* " in *" -m autograder "*) echo "autograder: error: cannot start" >&2; exit 2 ;; esac
exec "{python}" "$@"
"""


def grader_that_cannot_start(folder: Path) -> Path:
    """A folder holding a stand-in `python` whose self-check cannot run (exit status 2)."""
    folder.mkdir()
    (folder / "python").write_text(GRADER_THAT_CANNOT_START.format(python=sys.executable))
    (folder / "python").chmod(0o755)
    return folder


def github_student_run(tmp_path: Path, student: str, broken: str = "", lang: str = "en") -> tuple[dict, Path, Path]:
    """The student workflow's job on `student`'s repository (as on Ubuntu): its result, the summary
    file and the artifacts folder. `broken`: "install" makes the install step fail, "grader" makes
    `python -m autograder` stop with exit status 2 before it checks anything; `lang`: the
    repository's language (student_repository)."""
    workflow = yaml.safe_load((CI / "github" / "student-template.yml").read_text())
    repo = student_repository(tmp_path / student, student, lang)
    summary, artifacts = tmp_path / "summary.md", tmp_path / "artifacts"
    artifacts.mkdir()
    env = {**base_env(), "GITHUB_STEP_SUMMARY": str(summary), "TORCH_VERSION": workflow["env"]["TORCH_VERSION"]}
    (job,) = workflow["jobs"].values()
    if broken == "install":
        (install,) = [step for step in job["steps"] if step.get("id") == "install"]
        install["run"] = "echo 'ERROR: Could not find a version that satisfies the requirement torch' >&2\nexit 1"
    elif broken == "grader":
        env["PATH"] = os.pathsep.join([str(grader_that_cannot_start(tmp_path / "bin")), env["PATH"]])
    values = {"github.ref": "refs/heads/main", "runner.os": "Linux", "env.TORCH_VERSION": env["TORCH_VERSION"],
              "hashFiles('grader/*.whl')": "0", "matrix.os": "ubuntu-latest",
              "always()": "true", "${{ !cancelled() }}": "true"}
    result = github_steps(job, values, env, repo, artifacts, must_pass=False)
    return result, summary, artifacts


# Each student's run is a whole self-check (seconds); the slow marks keep the default suite to one run of each
# path through a job: green (alice), red (carol on GitHub, bob on GitLab, whose JUnit report has both kinds of case),
# and a Chinese push on each platform. `pytest -m slow` runs the rest.
SLOW = pytest.mark.slow


@pytest.mark.parametrize("student", [pytest.param(name, marks=SLOW) if name == "bob" else name for name in sorted(CLASS)])
def test_github_student_workflow_is_red_while_a_visible_check_fails(tmp_path, student):
    """The job fails for bob and carol and passes for alice; either way the summary holds the score
    and the failing checks, and the feedback report is uploaded before the last step decides."""
    result, summary, artifacts = github_student_run(tmp_path, student)
    outcomes = result["outcomes"]
    assert result["failed"] == (student != "alice"), (student, outcomes, result["log"][-2000:])
    steps = list(outcomes)
    # the self-check and the upload succeed; only the last step, after them, turns the job red
    assert outcomes["check"] == "success" and outcomes["Upload the feedback report"] == "success", outcomes
    assert steps[-1] == "Every visible check passes" and steps.index("Upload the feedback report") < len(steps) - 1
    assert outcomes[steps[-1]] == ("success" if student == "alice" else "failure")
    text = summary.read_text(encoding="utf-8")
    score, best = core_score(text)
    assert_visible_score(student, score, best)
    assert "| 01_scores |" in text and "| 06_multihead |" in text
    if student == "alice":
        assert "some visible checks fail" not in text and "could not run" not in text
        assert f"::notice title=Self-check::{score:g} / {best:g}: every visible check passes" in result["log"]
    else:
        assert "- **" in text  # the failing checks, by name, with their messages
        verdict = f"{score:g} / {best:g}: some visible checks fail, so this commit is red"
        assert f"::error title=Visible checks fail::{verdict}" in result["log"]
        assert text.rstrip().endswith(verdict + ". The summary of this run says which and why; the artifact "
                                      "feedback-ubuntu-latest holds the full report.**")
    # the artifact: what `check` wrote to ./feedback, the report with the same score
    uploaded = artifacts / "feedback-ubuntu-latest"
    assert (uploaded / "report.html").is_file()
    assert (uploaded / "report.md").read_text(encoding="utf-8").startswith(
        f"## Attention course feedback: {total_of(text)}")


@pytest.mark.parametrize("broken, says", [
    ("install", "The self-check could not run: installing Python, torch or the grader failed"),
    ("grader", "The self-check could not run (exit status 2; its log says why): nothing was checked."),
])
def test_github_student_workflow_is_red_when_the_self_check_cannot_run(tmp_path, broken, says):
    """A failed install, or a grader that stops before checking: red, with one clear line in the
    summary and as an annotation, even for alice's correct notebooks."""
    result, summary, artifacts = github_student_run(tmp_path, "alice", broken=broken)
    outcomes = result["outcomes"]
    assert result["failed"], outcomes
    assert outcomes["check"] == ("skipped" if broken == "install" else "failure"), outcomes
    assert outcomes["Upload the feedback report"] == "success"  # ran, found no report, warned
    assert outcomes["Every visible check passes"] == "failure"
    assert f"::error title=Self-check could not run::{says}" in result["log"]
    assert says in summary.read_text(encoding="utf-8") and "自检无法运行" in summary.read_text(encoding="utf-8")
    assert not SCORE_LINE.search(summary.read_text(encoding="utf-8"))
    assert not any(artifacts.iterdir())


@pytest.mark.parametrize("student", [pytest.param("alice", marks=SLOW), "carol"])
def test_github_student_workflow_judges_a_chinese_push_as_an_english_one(tmp_path, student):
    """A Chinese student's push: the summary in Chinese, and the verdict from the self-check's JSON:
    green for alice's correct notebooks, red with its own line for carol's blank ones."""
    result, summary, _ = github_student_run(tmp_path, student, lang="zh")
    outcomes = result["outcomes"]
    assert outcomes["check"] == "success", (outcomes, result["log"][-2000:])
    assert result["failed"] == (student != "alice"), (outcomes, result["log"][-2000:])
    text = summary.read_text(encoding="utf-8")
    assert CHINESE_SCORE_LINE in text and not SCORE_LINE.search(text) and "could not run" not in text
    score, best = json_score(tmp_path / student)
    assert_visible_score(student, score, best)
    # the verdict in Chinese too: the same sentences, from the grader's catalogue
    if student == "alice":
        assert f"::notice title=自检::{score:g} / {best:g}：所有公开检查都通过了" in result["log"]
    else:
        verdict = f"{score:g} / {best:g}：有公开检查未通过，所以这次提交标为红色"
        assert f"::error title=公开检查未通过::{verdict}" in result["log"]
        assert text.rstrip().endswith("完整的报告在工件 feedback-ubuntu-latest 中。**")
    assert "visible check" not in result["log"]


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
    from support import check_max_points

    full = sum(check_max_points(test) for test in correct["tests"])  # the bonus checks' points included
    assert correct["score"] == full >= correct["max_score"] > 0 and full > partial["score"] > 0


@pytest.mark.parametrize("correct, partial, torch, says", [
    (13.5, 4.0, "2.13.0", ""),  # as it should be: passes
    (12.5, 4.0, "2.13.0", "not the full visible score"),  # the correct example lost a point
    (13.5, 13.5, "2.13.0", "not all"),  # the partial example got everything
    (13.5, 0.0, "2.13.0", "some of the visible points"),  # or nothing: nothing ran on that system
    (13.5, 4.0, "2.14.1", "not 2.13.0"),  # pip swapped torch under the matrix's version
])
def test_the_os_matrix_assertion_step(tmp_path, correct, partial, torch, says):
    """The step that judges the two self-checks' JSON passes on the expected scores only."""
    assert_matrix_step_says(tmp_path, says, {
        name: {"score": score, "max_score": 13.5, "tests": [], "extra_data": {"torch": torch}}
        for name, score in (("correct", correct), ("partial", partial))})


def assert_matrix_step_says(tmp_path, says: str, results: dict):
    """Run the OS matrix's judging step on `results` (example name -> its self-check JSON): it fails
    saying `says`, or passes where `says` is empty."""
    workflow = yaml.safe_load((CI / "github" / "selfcheck-os-matrix.yml").read_text())
    (job,) = workflow["jobs"].values()
    (step,) = [s for s in job["steps"] if "max_score" in s.get("run", "")]
    for name, data in results.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(data))
    done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=tmp_path, capture_output=True, text=True,
                          env={**base_env(), "RUNNER_TEMP": str(tmp_path), "TORCH_VERSION": "2.13.0"},
                          timeout=60)
    if says:
        assert done.returncode != 0 and says in done.stderr, done.stdout + done.stderr
    else:
        assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("bonus_score, says", [(2.5, ""), (1.5, "not the full visible score")])
def test_the_os_matrix_assertion_step_counts_the_bonus_checks(tmp_path, bonus_score, says):
    """Full marks include a bonus check's points, which its test keeps in extra_data (its max_score is 0)."""
    bonus_test = {"name": "07: a bonus check", "score": bonus_score, "max_score": 0.0,
                  "extra_data": {"max_points": 2.5}}
    assert_matrix_step_says(tmp_path, says, {
        name: {"score": score + bonus, "max_score": 13.5, "tests": [{**bonus_test, "score": bonus}],
               "extra_data": {"torch": "2.13.0"}}
        for name, score, bonus in (("correct", 13.5, bonus_score), ("partial", 4.0, 0.0))})


# ------------------------------------------------------------------ GitLab CI


def gitlab_job(pipeline: dict, name: str) -> dict:
    """A job with `extends:` resolved (one level, as the course's files use it)."""
    job = dict(pipeline[name])
    parent = job.pop("extends", None)
    return {**pipeline[parent], **job} if parent else job


def gitlab_run(pipeline: dict, name: str, cwd: Path, env: dict, must_pass: bool = True) -> dict:
    """Run a job as a runner would: before_script and script in one shell, then after_script in
    another with CI_JOB_STATUS. Returns whether the job failed and its log (both scripts' output)."""
    job = gitlab_job(pipeline, name)
    variables = {**{k: str(v) for k, v in pipeline.get("variables", {}).items()},
                 **{k: str(v) for k, v in (job.get("variables") or {}).items()}}
    script = "\n".join(job.get("before_script", []) + job["script"])
    # GitLab exports every CI/CD variable, secrets included, to every job's scripts
    secrets = {"ROSTER_TOKEN": "not-a-real-token", "CI_JOB_TOKEN": "not-a-real-job-token"}
    env = {**env, "CI_PROJECT_DIR": str(cwd), **secrets, **{k: os.path.expandvars(v) for k, v in variables.items()}}
    done = bash(without_installs(script), cwd, env, check=must_pass, merged=True)
    log = done.stdout
    status = "success" if done.returncode == 0 else "failed"
    if job.get("after_script"):
        log += bash("\n".join(job["after_script"]), cwd, {**env, "CI_JOB_STATUS": status}, merged=True).stdout
    return {"failed": status == "failed", "log": log}


@pytest.mark.slow  # the class graded in shards and merged, as GitHub's workflow above does by default
def test_gitlab_instructor_pipeline_grades_the_class(tmp_path, host):
    pipeline = yaml.safe_load((CI / "gitlab" / "instructor.gitlab-ci.yml").read_text())
    env = base_env(host)
    merge_dir = checkout(tmp_path / "merge", host)
    shards = pipeline["grade-cpu"]["parallel"]
    for index in range(1, shards + 1):
        cwd = checkout(tmp_path / f"grade-cpu-{index}", host)
        gitlab_run(pipeline, "grade-cpu", cwd, {**env, "CI_NODE_INDEX": str(index), "CI_NODE_TOTAL": str(shards)})
        for artifact in [*cwd.glob("grades-shard-*/"), *cwd.glob("similarity/")]:  # artifacts: paths,
            shutil.copytree(artifact, merge_dir / artifact.name)  # restored into the merge job
    gitlab_run(pipeline, "merge", merge_dir, env)
    assert read_grades(merge_dir / "grades") == expected_totals()
    assert "feedback/" in gitlab_job(pipeline, "merge")["artifacts"]["paths"]
    assert_feedback(merge_dir / "feedback")
    assert "similarity/" in gitlab_job(pipeline, "merge")["artifacts"]["paths"]
    assert_similarity(merge_dir / "similarity")


def gitlab_student_run(tmp_path: Path, student: str, broken: str = "", lang: str = "en") -> tuple[dict, dict, Path]:
    """The student pipeline's job on `student`'s repository: its result, the job and the repository.
    `broken` and `lang` as in github_student_run."""
    pipeline = yaml.safe_load((CI / "gitlab" / "student.gitlab-ci.yml").read_text())
    repo = student_repository(tmp_path / student, student, lang)
    env = base_env()
    if broken == "install":
        pipeline["self-check"]["before_script"] = [
            "echo 'ERROR: Could not find a version that satisfies the requirement torch' >&2", "exit 1"]
    elif broken == "grader":
        env["PATH"] = os.pathsep.join([str(grader_that_cannot_start(tmp_path / "bin")), env["PATH"]])
    result = gitlab_run(pipeline, "self-check", repo, env, must_pass=False)
    return result, gitlab_job(pipeline, "self-check"), repo


def gitlab_coverage(pattern: str, log: str) -> str | None:
    """What GitLab takes from the log as the job's coverage: the last line the `coverage:` regex
    matches, its last group (or the whole match), the first number in that."""
    assert pattern.startswith("/") and pattern.endswith("/"), pattern
    regex = re.compile(pattern[1:-1])
    for line in reversed(log.splitlines()):
        found = regex.search(line)
        if found:
            number = re.search(r"\d+(\.\d+)?", found.group(found.lastindex or 0))
            if number:
                return number.group()
    return None


@pytest.mark.parametrize("student", [pytest.param(name, marks=SLOW) if name == "carol" else name for name in sorted(CLASS)])
def test_gitlab_student_pipeline_is_red_while_a_visible_check_fails(tmp_path, student):
    """The job fails for bob and carol and passes for alice; the score is in the log's last lines,
    in the job's coverage and in the JUnit report, and the reports are where the artifacts are."""
    result, job, repo = gitlab_student_run(tmp_path, student)
    assert result["failed"] == (student != "alice"), (student, result["log"][-3000:])
    log = result["log"]
    text = (repo / "self-check.md").read_text(encoding="utf-8")
    score, best = core_score(text)
    assert_visible_score(student, score, best)
    percent = 100 * score / best
    last = log.rstrip().splitlines()[-3:]
    assert f"Self-check score: {percent:.2f}% of the visible points ({score:g} / {best:g})" in last, last
    if student == "alice":
        assert last[-1] == "Every visible check passes."
    else:
        assert last[-1].startswith("Some visible checks fail, so this commit is red"), last
        assert "01_scores" in log and "- **" in log  # the failing checks, by name, in the log
    assert gitlab_coverage(job["coverage"], log) == f"{percent:.2f}"
    # the JUnit report: every visible check, and the score as one more case
    root = ET.parse(repo / "report.xml").getroot()
    cases = list(root.iter("testcase"))
    failed = [case for case in cases if case.find("failure") is not None]
    (score_case,) = [case for case in cases if case.get("classname") == "score"]
    assert score_case.get("name").startswith(f"score {score:g} / {best:g} (")
    assert (score_case in failed) == (student != "alice")
    checks = [case for case in cases if case is not score_case]
    assert {"alice": not failed, "bob": 0 < len(failed) - 1 < len(checks),
            "carol": len(failed) - 1 == len(checks)}[student], [case.get("name") for case in failed]
    # the artifacts: kept on a red job too, and the report files are where the paths point
    assert job["artifacts"]["when"] == "always" and job["artifacts"]["reports"]["junit"] == "report.xml"
    kept = [repo / path for path in job["artifacts"]["paths"]]
    assert repo / "feedback" in kept and repo / "self-check.md" in kept
    assert (repo / "feedback" / "report.html").is_file()
    assert (repo / "feedback" / "report.md").read_text(encoding="utf-8").startswith(
        f"## Attention course feedback: {total_of(text)}")


@pytest.mark.parametrize("student", ["alice", pytest.param("carol", marks=SLOW)])
def test_gitlab_student_pipeline_judges_a_chinese_push_as_an_english_one(tmp_path, student):
    """A Chinese student's push: the log's report in Chinese, the verdict, coverage and JUnit score
    case from the self-check's JSON: green for alice, red with its own last line for carol."""
    result, job, repo = gitlab_student_run(tmp_path, student, lang="zh")
    assert result["failed"] == (student != "alice"), result["log"][-3000:]
    log = result["log"]
    assert CHINESE_SCORE_LINE in log and "could not run" not in log
    score, best = json_score(repo)
    assert_visible_score(student, score, best)
    percent = 100 * score / best
    last = log.rstrip().splitlines()[-3:]
    # GitLab reads the English line's number (coverage); the student reads the same line in Chinese under it
    assert last[:2] == [f"Self-check score: {percent:.2f}% of the visible points ({score:g} / {best:g})",
                        f"自检得分：公开检查总分的 {percent:.2f}%（{score:g} / {best:g}）"], last
    assert last[-1] == "所有公开检查都通过了。" if student == "alice" else \
        last[-1].startswith("有公开检查未通过，所以这次提交标为红色。"), last
    assert gitlab_coverage(job["coverage"], log) == f"{percent:.2f}"


@pytest.mark.parametrize("broken, says", [
    ("install", "The self-check could not run: installing torch or the grader failed"),
    ("grader", "The self-check could not run (exit status 2; the lines above say why): nothing was checked."),
])
def test_gitlab_student_pipeline_is_red_when_the_self_check_cannot_run(tmp_path, broken, says):
    """A failed install, or a grader that stops before checking: red, with a clear line at the end
    of the log and no score, even for alice's correct notebooks."""
    result, job, repo = gitlab_student_run(tmp_path, "alice", broken=broken)
    assert result["failed"]
    tail = "\n".join(result["log"].rstrip().splitlines()[-3:])
    assert says in tail and "自检无法运行" in tail, result["log"][-2000:]  # the grader's words are not there: both
    assert gitlab_coverage(job["coverage"], result["log"]) is None
    assert not (repo / "feedback").exists()
