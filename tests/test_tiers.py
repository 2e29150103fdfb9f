"""Sandbox tiers: how a worker's report is read, what a refusal says, where the tier is recorded."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
from support import EXAMPLES, ROOT

from autograder.sandbox import tiers
from autograder.feedback.formats import render
from autograder.core.results import WEAK_WARNING, GradeResult, SectionResult


def ids(*names: str) -> list[dict]:
    """Layers as the worker reports them: by id (the fields a layer has do not decide the tier)."""
    return [{"id": name} for name in names]


NAMESPACE_LAYERS = ids("process_group", "network_namespace", "mount_namespace", "allowed_root",
                       "read_only_filesystem", "pid_namespace", "private_proc", "unprivileged_user", "no_new_privs",
                       "seccomp")
LANDLOCK_LAYERS = ids("process_group", "subreaper", "unprivileged_user", "no_new_privs", "landlock_filesystem",
                      "landlock_network", "landlock_scope", "seccomp")
EPERM = {"id": "network_namespace", "errno": 1}


def without(layers: list[dict], *names: str) -> list[dict]:
    return [layer for layer in layers if layer["id"] not in names]


@pytest.mark.parametrize("layers, missing, expected", [
    (NAMESPACE_LAYERS, [], tiers.NAMESPACES),
    (LANDLOCK_LAYERS, [EPERM], tiers.LANDLOCK),
    # the runner's case: a user namespace but nothing else, Landlock on top, same uid as the grader
    (ids("user_namespace", "subreaper", "no_new_privs", "landlock_filesystem", "seccomp", "landlock_scope"),
     [EPERM], tiers.LANDLOCK),
    # ... on a kernel before Landlock ABI 6: its code could signal the grader (the same uid outside)
    (ids("user_namespace", "subreaper", "no_new_privs", "landlock_filesystem", "seccomp"),
     [EPERM, {"id": "landlock_scope", "why": "landlock_abi", "abi": 4}], tiers.NONE),
    # each missing piece of the landlock tier alone brings it down to none
    (without(LANDLOCK_LAYERS, "landlock_filesystem"), [], tiers.NONE),
    (without(LANDLOCK_LAYERS, "seccomp"), [], tiers.NONE),
    (without(LANDLOCK_LAYERS, "subreaper"), [], tiers.NONE),
    (without(LANDLOCK_LAYERS, "landlock_scope", "unprivileged_user"), [], tiers.NONE),
    # a namespace tier without its PID namespace is not one
    (without(NAMESPACE_LAYERS, "pid_namespace"), [], tiers.NONE),
    # student code left running as root: none, whatever else holds
    (without(LANDLOCK_LAYERS, "unprivileged_user"),
     [{"id": "unprivileged_user", "why": "unreadable", "folder": "/root"}], tiers.NONE),
    ([], [{"id": "sandbox", "why": "turned_off"}], tiers.NONE),
    # words are never read as layers: a worker that reports sentences gets no tier
    (["network namespace", "filesystem: only what the interpreter needs (27 paths, read-only)", "read-only filesystem", "PID namespace", "private /proc"],
     [], tiers.NONE),
])
def test_tier_of_a_report(layers, missing, expected):
    assert tiers.tier({"layers": layers, "missing": missing}) == expected


@pytest.mark.parametrize("env, where, fix", [
    ({"GITHUB_ACTIONS": "true", "RUNNER_ENVIRONMENT": "github-hosted"}, "GitHub-hosted runner",
     "apparmor_restrict_unprivileged_userns=0"),
    ({"GITHUB_ACTIONS": "true", "RUNNER_ENVIRONMENT": "self-hosted"}, "GitHub self-hosted runner", "sudo"),
    ({"GITLAB_CI": "true"}, "GitLab job", "Landlock"),
    ({"KUBERNETES_SERVICE_HOST": "10.0.0.1"}, "Kubernetes pod", "Landlock"),
])
def test_refusal_names_the_platform_and_its_fix(monkeypatch, env, where, fix):
    for name in ("GITHUB_ACTIONS", "RUNNER_ENVIRONMENT", "GITLAB_CI", "KUBERNETES_SERVICE_HOST", "AUTOGRADER_WORKER"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    line = tiers.refusal({"layers": [], "missing": [EPERM]})
    assert "\n" not in line
    assert line.startswith("hidden grading refused")
    assert f"{where}:" in line and fix in line and "--sandbox weak" in line
    assert "network namespace (operation not permitted)" in line



UNREADABLE = "unprivileged user (/root/.pyenv/versions/3.11.7 is not readable by other users)"
UNREADABLE_ENTRY = {"id": "unprivileged_user", "why": "unreadable", "folder": "/root/.pyenv/versions/3.11.7"}


@pytest.mark.parametrize("env", [{}, {"GITLAB_CI": "true"}, {"KUBERNETES_SERVICE_HOST": "10.0.0.1"}])
def test_an_unreadable_python_is_fixed_where_python_lives(monkeypatch, env):
    """Landlock holds, but root could not give student code a uid of its own because other users
    cannot read the Python (a 0700 home): the advice is about Python, not about the kernel."""
    for name in ("GITHUB_ACTIONS", "RUNNER_ENVIRONMENT", "GITLAB_CI", "KUBERNETES_SERVICE_HOST", "AUTOGRADER_WORKER"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    report = {"layers": without(LANDLOCK_LAYERS, "unprivileged_user"), "missing": [EPERM, UNREADABLE_ENTRY],
              "unreadable": "/root/.pyenv/versions/3.11.7"}  # the worker's report says it as data
    assert tiers.tier(report) == tiers.NONE
    line = tiers.refusal(report)
    assert "\n" not in line and line.startswith("hidden grading refused")
    advice = line.split(f"{UNREADABLE}). ", 1)[1]  # what follows the list of what is missing
    assert "/root/.pyenv/versions/3.11.7" in advice and "/usr/local" in advice and "ordinary user" in advice, line
    assert "Landlock" not in advice and "CAP_SYS_ADMIN" not in advice, line
    from autograder.sandbox.probe import explain

    assert any("/usr/local" in said for said in explain(report))
    assert tiers.unreadable_python({"missing": [{"id": "unprivileged_user", "errno": 1}]}) is None
    assert tiers.unreadable_python({"missing": [UNREADABLE_ENTRY]}) is None  # the entry alone is never parsed

def weak_result() -> GradeResult:
    section = SectionResult("01_scores", "Scores")
    return GradeResult("ada", "cpu", [section], sandbox=tiers.NONE, weak=True, torch="2.13.0")


@pytest.mark.parametrize("fmt, marker", [
    ("table", f"!! {WEAK_WARNING}"),
    ("markdown", f"> **Warning:** {WEAK_WARNING}"),
    ("junit", '<property name="sandbox_weak" value="true" />'),
    ("json", '"sandbox_weak": true'),
])
def test_a_weak_grading_is_marked_in_every_format(fmt, marker):
    text = render(weak_result(), fmt)
    assert marker in text
    assert "torch" in text
    strong = weak_result()
    strong.weak, strong.sandbox = False, tiers.LANDLOCK
    assert marker not in render(strong, fmt)


def test_the_html_report_carries_the_banner():
    import html

    from autograder.feedback.report import render_html

    assert html.escape(WEAK_WARNING) in render_html(weak_result(), images={})
    strong = weak_result()
    strong.weak = False
    assert html.escape(WEAK_WARNING) not in render_html(strong, images={})


def test_grades_csv_has_the_tier():
    from autograder.instructor.grades_table import class_table
    from autograder.instructor.student_files import Stored

    strong = weak_result()
    strong.sandbox, strong.weak = "landlock", False
    table = class_table({"ada": Stored("ada", weak_result(), {"sections": ["01_scores"]}),
                         "bob": Stored("bob", strong, {"sections": ["01_scores"]})})
    assert list(table["sandbox"]) == ["none (weak)", "landlock"]


TRACE_IMPORTS = """
import json, sys
from autograder import cli
from autograder.core import student
first = {}
ensure = student.SectionWorker.ensure
def traced(self):
    first.setdefault("modules", sorted(m for m in sys.modules if m.split(".")[0] in ("autograder", "solutions")))
    return ensure(self)
student.SectionWorker.ensure = traced
status = cli.main(sys.argv[1:])
late = sorted(m for m in sys.modules if m.split(".")[0] in ("autograder", "solutions") and m not in first["modules"])
print(json.dumps({"status": status, "late": late}), file=sys.stderr)
"""


def test_the_grader_imports_nothing_of_its_own_after_student_code_ran(tmp_path):
    """Every module of the grader is read from disk before the first student cell runs."""
    done = subprocess.run([sys.executable, "-c", TRACE_IMPORTS, "grade", str(EXAMPLES / "partial"),
                           "--report", str(tmp_path / "feedback"), "--format", "json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    traced = json.loads(done.stderr.strip().splitlines()[-1])
    assert traced["status"] == 0, done.stderr[-2000:]
    assert traced["late"] == [], f"imported after student code ran: {traced['late']}"
    assert (tmp_path / "feedback" / "report.html").exists()
