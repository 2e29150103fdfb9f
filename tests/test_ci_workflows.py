"""The CI files in ci/github and ci/gitlab: they parse, have the structure the
instructor's workflow relies on, every `python -m autograder` command in
them is a valid command line for the grader, and no credential reaches the
code they grade (no checkout keeps the job token; the roster token reaches
the clone and nothing else)."""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml  # the [test] extras' pyyaml: a missing one is a broken install, not a reason to skip
from support import ROOT, venv_path

from autograder.instructor import declared, selfcheck_export

CI = ROOT / "ci"
FILES = {
    "github-student": CI / "github" / "student-template.yml",
    "github-instructor": CI / "github" / "instructor-grading.yml",
    "github-os-matrix": CI / "github" / "selfcheck-os-matrix.yml",
    "gitlab-student": CI / "gitlab" / "student.gitlab-ci.yml",
    "gitlab-instructor": CI / "gitlab" / "instructor.gitlab-ci.yml",
}
GITHUB = sorted(name for name in FILES if name.startswith("github-"))


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
    for job in pipeline.values():
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
            # the piece of a shell line that runs the grader (`if ...; then python -m autograder ...; fi`)
            piece = next(part for part in re.split(r"\||;|>>", line) if "-m autograder " in part)
            words = shlex.split(piece)
            commands.append(words[words.index("autograder") + 1:])
    return commands


def assert_installs_the_template_grader(name: str, scripts: list[str]) -> None:
    """CPU torch, pinned, then the self-check wheel committed in the student's repository; never the course."""
    lines = [line.strip() for script in scripts for line in script.splitlines() if "pip install" in line]
    torch_line = next(i for i, line in enumerate(lines) if "torch==" in line)
    wheel_line = lines.index("python -m pip install grader/*.whl")
    assert "--index-url https://download.pytorch.org/whl/cpu" in lines[torch_line]
    # torch first: the wheel accepts torch>=2.13,<2.15, and pip would otherwise fetch the default CUDA build
    assert torch_line < wheel_line
    # a student's repository has no pyproject.toml: the workflow names the release, held here to the course's pin
    assert load(name)[{"github-student": "env", "gitlab-student": "variables"}[name]]["TORCH_VERSION"] == (
        declared.torch_version())
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
    # the self-check's Markdown into the summary; its exit status read, so a red step can say why
    check = next(s for s in job["steps"] if s.get("id") == "check")
    assert ("python -m autograder check . --format markdown --output self-check.md --json self-check.json "
            "|| status=$?") in check["run"]
    assert 'cat self-check.md >> "$GITHUB_STEP_SUMMARY"' in check["run"]
    assert "--report" not in check["run"]  # `check` writes ./feedback/, the folder the artifact uploads
    # the feedback report as an artifact, uploaded on a red run too, before the verdict
    (upload,) = [s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert upload["uses"] == "actions/upload-artifact@v6" and upload["if"] == "always()"
    assert upload["with"]["path"] == "feedback" and "${{ matrix.os }}" in upload["with"]["name"]
    # the verdict last: after the summary and the artifact, not after a cancel, reads both outcomes
    verdict = job["steps"][-1]
    assert job["steps"].index(check) < job["steps"].index(upload) < len(job["steps"]) - 1
    assert verdict["if"] == "${{ !cancelled() }}"
    assert verdict["env"]["INSTALLED"] == "${{ steps.install.outcome }}"
    assert verdict["env"]["CHECKED"] == "${{ steps.check.outcome }}"
    assert any(s.get("id") == "install" and "pip install grader/*.whl" in s["run"] for s in job["steps"])
    assert_installs_the_template_grader("github-student", github_runs(workflow))
    assert_valid_commands(github_runs(workflow), {"check"})
    # Ubuntu alone unless asked (students' minutes); the three systems on request, one bash script for all
    assert "all_os" in triggers(workflow)["workflow_dispatch"]["inputs"]
    systems = job["strategy"]["matrix"]["os"]
    assert "|| '[\"ubuntu-latest\"]'" in systems, systems
    assert all(name in systems for name in ("windows-latest", "macos-latest"))
    assert job["runs-on"] == "${{ matrix.os }}" and workflow["defaults"]["run"]["shell"] == "bash"


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
    # as root on GitHub-hosted runners only (the namespaces tier there), the results handed back
    assert 'if [ "$RUNNER_ENVIRONMENT" = github-hosted ]; then' in grading["run"]
    assert 'as_root=(sudo -E env "PATH=$PATH")' in grading["run"]
    assert '"${as_root[@]}" python -m autograder batch' in grading["run"]
    assert 'sudo chown -R "$(id -u):$(id -g)" "$OUT"' in grading["run"]
    # the class's language (a repository variable) reaches the grading and the similarity report,
    # through sudo -E too; unset, the grader speaks English
    assert grading["env"]["ATTENTION_COURSE_LANG"] == "${{ vars.ATTENTION_COURSE_LANG }}"
    assert any(s.get("uses", "").startswith("actions/upload-artifact@") for s in steps)
    merge = jobs["merge"]
    assert merge["needs"] == "grade"
    merge_uses = [s.get("uses", "") for s in merge["steps"]]
    assert any(u.startswith("actions/download-artifact@") for u in merge_uses)
    assert any(u.startswith("actions/upload-artifact@") for u in merge_uses)
    # the students' feedback: every shard writes it, the merge job hands it to the instructor as an artifact
    assert "--report" in grader_commands([grading["run"]])[0]
    uploads = {s["with"]["name"]: s["with"]["path"] for s in merge["steps"]
               if s.get("uses", "").startswith("actions/upload-artifact@")}
    assert uploads.get("feedback") == "feedback", uploads
    gather = next(s for s in merge["steps"] if 'cp -R "${shard}feedback/." feedback/' in s.get("run", ""))
    assert merge["steps"].index(gather) < [s.get("with", {}).get("name") for s in merge["steps"]].index("feedback")
    # the similarity report: once (shard 1), for the instructor, an artifact of its own, not in "feedback"
    compare = next(s for s in steps if "autograder similarity" in s.get("run", ""))
    assert compare["if"] == "always() && matrix.shard == 1" and "secrets." not in str(compare)
    assert compare["env"]["ATTENTION_COURSE_LANG"] == "${{ vars.ATTENTION_COURSE_LANG }}"
    shard_uploads = {s["with"]["name"]: s["with"]["path"] for s in steps
                     if s.get("uses", "").startswith("actions/upload-artifact@")}
    (command,) = grader_commands([compare["run"]])
    assert shard_uploads["similarity"] == command[command.index("--out") + 1] != uploads["feedback"]
    assert_valid_commands(github_runs(workflow), {"batch", "merge", "similarity"})


def test_github_os_matrix():
    """The course repository's own check of the students' self-check on three systems and two torches."""
    workflow = load("github-os-matrix")
    assert {"push", "pull_request", "schedule", "workflow_dispatch"} <= set(triggers(workflow))
    (job,) = workflow["jobs"].values()
    matrix = job["strategy"]["matrix"]
    assert matrix["os"] == ["ubuntu-latest", "windows-latest", "macos-latest"]
    assert matrix["torch"] == list(selfcheck_export.torch_tested())  # the ends of the range the wheel accepts
    assert job["strategy"]["fail-fast"] is False and job["runs-on"] == "${{ matrix.os }}"
    assert job["env"]["TORCH_VERSION"] == "${{ matrix.torch }}"
    assert workflow["defaults"]["run"]["shell"] == "bash"  # the same script on Windows (Git Bash)
    runs = "\n".join(github_runs(workflow))
    assert "python -m venv .venv" in runs and '"Scripts" if os.name == "nt" else "bin"' in runs
    assert '>> "$GITHUB_PATH"' in runs and "sys.prefix != sys.base_prefix" in runs
    lines = [line.strip() for line in runs.splitlines() if "pip install" in line]
    torch_line = next(i for i, line in enumerate(lines) if "torch==" in line)
    assert "--index-url https://download.pytorch.org/whl/cpu" in lines[torch_line]
    # the wheel students install, pinned to the same torch: pip keeps it or stops, never swaps it
    wheel = 'python -m pip install student_template/grader/*.whl "torch==${TORCH_VERSION}"'
    assert lines.index(wheel) > torch_line
    assert "for example in correct partial" in runs
    assert '(cd "examples/$example" && python -m autograder check .' in runs
    assert '["score"] == best' in runs and '0 < partial["score"] < best' in runs
    assert 'get("max_points"' in runs  # full marks count the bonus checks' points (their max_score is 0)
    assert_valid_commands(github_runs(workflow), {"check"})


def test_gitlab_student():
    pipeline = load("gitlab-student")
    job = pipeline["self-check"]
    assert job["image"].startswith("python:3.11")
    assert ".cache/pip" in job["cache"]["paths"]
    assert "report.xml" == job["artifacts"]["reports"]["junit"]
    # the reports are kept on a red job too: `check` writes ./feedback/, and the Markdown is kept
    assert job["artifacts"]["when"] == "always"
    assert {"feedback/", "self-check.md"} <= set(job["artifacts"]["paths"])
    assert not any("--report" in line for line in job["script"])
    # the score line of the log, as GitLab's `coverage:` regex reads it (the last match, first number)
    regex = re.compile(job["coverage"].strip("/"))
    line = "Self-check score: 29.63% of the visible points (4 / 13.5)"
    found = regex.search(f"2026-01-01T00:00:00Z 01O {line}")  # a runner's timestamp prefix
    assert found and found.group(1) == "29.63"
    assert regex.search(line.replace("29.63", "100.00")).group(1) == "100.00"
    assert not regex.search("$ python -m autograder check . --format markdown --output self-check.md")
    # a failed install is told in after_script, which runs when before_script failed
    assert any('"$CI_JOB_STATUS" = failed' in s and "could not run" in s for s in job["after_script"])
    scripts = gitlab_scripts(pipeline)
    assert any("--index-url https://download.pytorch.org/whl/cpu" in s for s in scripts)
    assert pipeline["variables"]["PIP_CACHE_DIR"] == "$CI_PROJECT_DIR/.cache/pip"  # the cached folder above
    assert pipeline["variables"]["FF_GIT_URLS_WITHOUT_TOKENS"] == "true"  # no job token in .git/config
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
    assert pipeline["variables"]["FF_GIT_URLS_WITHOUT_TOKENS"] == "true"  # no job token in .git/config
    needs = {n["job"] for n in pipeline["merge"]["needs"]}
    assert needs == {"grade-cpu", "grade-gpu"}
    # the students' feedback: every grading job writes it, the merge job keeps it as an artifact
    for job in ("grade-cpu", "grade-gpu"):
        (command,) = [c for c in grader_commands(pipeline[job]["script"]) if c[0] == "batch"]
        assert "--report" in command, job
    assert "feedback/" in pipeline["merge"]["artifacts"]["paths"]
    assert any('cp -R "${shard}feedback/." feedback/' in line for line in pipeline["merge"]["script"])
    # the similarity report: the first grading job writes it, the merge job keeps it apart from feedback/
    (compare,) = [line for line in pipeline["grade-cpu"]["script"] if "autograder similarity" in line]
    assert compare.startswith('if [ "$CI_NODE_INDEX" = 1 ]; then')
    assert "similarity/" in pipeline[".grade"]["artifacts"]["paths"]
    assert "similarity/" in pipeline["merge"]["artifacts"]["paths"]
    assert_valid_commands(gitlab_scripts(pipeline), {"batch", "merge", "similarity"})


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


def test_actionlint_passes_every_github_workflow():
    done = actionlint(*(FILES[name] for name in GITHUB))
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("name, before, after, says", [
    ("github-instructor", "needs: grade\n", "needs: grades\n", "grades"),  # a job that does not exist
    ("github-instructor", "--jobs 2", "--jobs 2 $UNQUOTED", "SC2086"),  # shellcheck, through actionlint
    ("github-instructor", "actions/checkout@v5", "actions/checkout@v4", "node20"),  # a retired runtime
    ("github-os-matrix", "TORCH_VERSION: ${{ matrix.torch }}", "TORCH_VERSION: ${{ matrix.pytorch }}",
     "pytorch"),  # a matrix axis that does not exist
    ("github-student", "(inputs.all_os ||", "(inputs.all_systems ||", "all_systems"),  # an undeclared input
    ("github-student", "steps.install.outcome", "steps.installed.outcome", "installed"),  # no such step id
    ("github-student", "printf '\\n**%s**\\n\\n**%s**\\n' \"$line\" \"$zh\" >> \"$GITHUB_STEP_SUMMARY\"",
     "printf '\\n**%s**\\n\\n**%s**\\n' \"$line\" \"$zh\" >> $GITHUB_STEP_SUMMARY", "SC2086"),  # shellcheck, through actionlint
])
def test_actionlint_catches_a_broken_workflow(tmp_path, name, before, after, says):
    broken = tmp_path / FILES[name].name
    text = FILES[name].read_text()
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
    done = check_schema("vendor.github-workflows", *(FILES[name] for name in GITHUB))
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


# ------------------------------------------------------------------ credentials
#
# Student code must never see a credential: a checkout that keeps the job token in .git/config,
# the roster token anywhere but the clone, or a GitLab grading shell that still exports it
# would each hand one to a submission that escapes (or simply outlives) the sandbox.


def checkout_problems(workflow: dict) -> list[str]:
    """Every actions/checkout that would leave the job token in .git/config (the default)."""
    problems = []
    for job_name, job in workflow["jobs"].items():
        for step in job.get("steps", []):
            if step.get("uses", "").startswith("actions/checkout@") and \
                    (step.get("with") or {}).get("persist-credentials") is not False:
                problems.append(f"job {job_name}: a checkout without persist-credentials: false")
    return problems


def places(node, word: str, path: tuple = ()) -> list[tuple]:
    """The paths (keys and list indexes) of every key or value of the parsed file that contains `word`."""
    if isinstance(node, dict):
        found = []
        for key, value in node.items():
            if word in str(key):
                found.append(path + (key,))
            found += places(value, word, path + (key,))
        return found
    if isinstance(node, list):
        return [p for i, item in enumerate(node) for p in places(item, word, path + (i,))]
    return [path] if word in str(node) else []


def roster_token_problems(workflow: dict) -> list[str]:
    """ROSTER_TOKEN anywhere but in the `env:` of the step that clones the roster (and does nothing else)."""
    problems = []
    for place in places(workflow, "ROSTER_TOKEN"):
        if len(place) == 6 and place[0] == "jobs" and place[2] == "steps" and place[4] == "env":
            step = workflow["jobs"][place[1]]["steps"][place[3]]
            if "clone_roster.sh" in step.get("run", "") and "autograder" not in step.get("run", ""):
                continue
        problems.append("ROSTER_TOKEN in " + ".".join(map(str, place)))
    return problems


@pytest.mark.parametrize("name", GITHUB)
def test_no_checkout_keeps_the_job_token(name):
    workflow = load(name)
    assert any(s.get("uses", "").startswith("actions/checkout@")
               for job in workflow["jobs"].values() for s in job.get("steps", []))
    assert checkout_problems(workflow) == []


@pytest.mark.parametrize("name", GITHUB)
def test_a_checkout_that_keeps_the_job_token_is_caught(name):
    text = FILES[name].read_text()
    setting = "        with:\n          persist-credentials: false\n"
    assert setting in text
    for broken in (text.replace(setting, setting.replace("false", "true"), 1), text.replace(setting, "", 1)):
        assert broken != text
        assert checkout_problems(yaml.safe_load(broken)), broken


@pytest.mark.parametrize("name", GITHUB)
def test_the_roster_token_reaches_the_clone_step_only(name):
    workflow = load(name)
    assert roster_token_problems(workflow) == []
    if name == "github-instructor":
        (place,) = places(workflow, "ROSTER_TOKEN")  # the clone does get it
        assert place[:3] == ("jobs", "grade", "steps") and place[4:] == ("env", "GIT_TOKEN")


@pytest.mark.parametrize("before, after", [
    # the grading step's own env
    ("          FORCE: ${{ inputs.force && 'true' || '' }}\n",
     "          FORCE: ${{ inputs.force && 'true' || '' }}\n"
     "          GIT_TOKEN: ${{ secrets.ROSTER_TOKEN }}\n"),
    # the whole job's env, and so the grading step's
    ("    timeout-minutes: 180\n",
     "    timeout-minutes: 180\n    env:\n      GIT_TOKEN: ${{ secrets.ROSTER_TOKEN }}\n"),
    # the workflow's env
    ("permissions:\n  contents: read\n",
     "permissions:\n  contents: read\n\nenv:\n  ROSTER_TOKEN: ${{ secrets.ROSTER_TOKEN }}\n"),
    # written into a script, where it would also end up in the runner's script file
    ("run: bash ci/clone_roster.sh roster.txt submitted",
     "run: GIT_TOKEN=${{ secrets.ROSTER_TOKEN }} bash ci/clone_roster.sh roster.txt submitted"),
])
def test_the_roster_token_elsewhere_is_caught(before, after):
    text = FILES["github-instructor"].read_text()
    assert before in text
    assert roster_token_problems(yaml.safe_load(text.replace(before, after, 1)))


GITLAB_SECRETS = {"ROSTER_TOKEN": "roster-secret", "CI_JOB_TOKEN": "job-secret",
                  "CI_REPOSITORY_URL": "https://gitlab-ci-token:job-secret@gitlab.example/course/grading.git"}

RECORDER = """#!/usr/bin/env bash
# stands in for {what}: records the environment it was started with
{condition} env > "$RECORD/{name}.env"
exit 0
"""


def gitlab_grading_environments(pipeline: dict, job_name: str, tmp_path: Path) -> dict:
    """Run a grading job's before_script and script as GitLab does (one shell, every CI/CD variable
    exported, secrets included), with `python` and the clone script replaced by recorders: the
    environments the clone and the grader were started with, as {"clone": {...}, "grader": {...}}."""
    job = dict(pipeline[job_name])
    parent = job.pop("extends", None)
    job = {**pipeline[parent], **job} if parent else job
    work = tmp_path / job_name
    (work / "bin").mkdir(parents=True)
    (work / "ci").mkdir()
    (work / "record").mkdir()
    for path, what, condition, name in (
            (work / "bin" / "python", "python",
             'case " $* " in *" -m autograder "*) ;; *) exit 0 ;; esac;', "grader"),
            (work / "ci" / "clone_roster.sh", "ci/clone_roster.sh", "", "clone")):
        path.write_text(RECORDER.format(what=what, condition=condition, name=name))
        path.chmod(0o755)
    variables = {**pipeline.get("variables", {}), **(job.get("variables") or {})}
    env = {"PATH": f"{work / 'bin'}:/usr/bin:/bin", "RECORD": str(work / "record"), "CI_PROJECT_DIR": str(work),
           "CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "4", **GITLAB_SECRETS,
           **{k: os.path.expandvars(str(v)) for k, v in variables.items()}}
    script = "\n".join(job.get("before_script", []) + job["script"])
    done = subprocess.run(["bash", "-e", "-c", script], cwd=work, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    environments = {}
    for name in ("clone", "grader"):
        record = work / "record" / f"{name}.env"
        assert record.exists(), f"{job_name}: the {name} never ran"
        environments[name] = dict(line.split("=", 1) for line in record.read_text().splitlines() if "=" in line)
    return environments


def gitlab_token_leaks(pipeline: dict, job_name: str, tmp_path: Path) -> list[str]:
    """The secrets still in the grader's environment; fails if the clone did not get the roster token."""
    seen = gitlab_grading_environments(pipeline, job_name, tmp_path)
    assert seen["clone"].get("GIT_TOKEN") == GITLAB_SECRETS["ROSTER_TOKEN"], "the clone must get the roster token"
    secrets = {"roster-secret", "job-secret"}
    return sorted(name for name, value in seen["grader"].items() if any(s in value for s in secrets))


GITLAB_GRADING_JOBS = ("grade-cpu", "grade-gpu")


@pytest.mark.parametrize("job_name", GITLAB_GRADING_JOBS)
def test_gitlab_grading_runs_without_the_tokens(tmp_path, job_name):
    pipeline = load("gitlab-instructor")
    assert "autograder batch" in " ".join(pipeline[job_name]["script"])
    assert gitlab_token_leaks(pipeline, job_name, tmp_path) == []
    # and the file itself names the roster token only where the clone uses it and where it is unset
    assert {place[:2] for place in places(pipeline, "ROSTER_TOKEN")} == {(".grade", "before_script")}


@pytest.mark.parametrize("before, after, leaked", [
    ("unset ROSTER_TOKEN CI_JOB_TOKEN", "unset CI_JOB_TOKEN", ["ROSTER_TOKEN"]),
    ("unset ROSTER_TOKEN CI_JOB_TOKEN CI_BUILD_TOKEN CI_REPOSITORY_URL",
     "unset ROSTER_TOKEN CI_BUILD_TOKEN", ["CI_JOB_TOKEN", "CI_REPOSITORY_URL"]),
    # the whole line made a no-op
    ("    - >\n      unset ", "    - >\n      : ", ["ROSTER_TOKEN", "CI_JOB_TOKEN", "CI_REPOSITORY_URL"]),
])
def test_gitlab_grading_with_a_token_still_set_is_caught(tmp_path, before, after, leaked):
    text = FILES["gitlab-instructor"].read_text()
    assert before in text
    pipeline = yaml.safe_load(text.replace(before, after, 1))
    leaks = gitlab_token_leaks(pipeline, "grade-cpu", tmp_path)
    assert set(leaked) <= set(leaks), leaks


def workflow_decision(rules: list, variables: dict) -> str:
    """What GitLab's `workflow: rules` decide for a pipeline with these predefined variables:
    the first rule whose `if` holds gives `when` (default "always"); none holding, "never".
    Understands the forms the course's files use: `$VAR`, `$VAR == "text"`, `&&`, `||`."""
    for rule in rules:
        condition = rule.get("if")
        if condition is not None:
            python = re.sub(r"\$(\w+)", lambda m: repr(variables.get(m.group(1), "")), condition)
            python = python.replace("&&", " and ").replace("||", " or ")
            if not eval(python, {"__builtins__": {}}):  # noqa: S307 (our own file's rules)
                continue
        return rule.get("when", "always")
    return "never"


@pytest.mark.parametrize("variables, runs", [
    ({"CI_PIPELINE_SOURCE": "push", "CI_COMMIT_BRANCH": "main"}, True),
    ({"CI_PIPELINE_SOURCE": "push", "CI_COMMIT_BRANCH": "fix", "CI_OPEN_MERGE_REQUESTS": "me/repo!3"}, False),
    ({"CI_PIPELINE_SOURCE": "merge_request_event", "CI_OPEN_MERGE_REQUESTS": "me/repo!3"}, True),
    ({"CI_PIPELINE_SOURCE": "web", "CI_COMMIT_BRANCH": "main"}, True),
    ({"CI_PIPELINE_SOURCE": "schedule"}, False),
])
def test_gitlab_student_pipeline_runs_once_per_push(variables, runs):
    """A push to a branch with an open merge request starts one pipeline (the merge request's), not two."""
    rules = load("gitlab-student")["workflow"]["rules"]
    assert (workflow_decision(rules, variables) != "never") == runs
