"""The grader in a real Docker container, as instructors run it (GitLab's docker executor,
Gradescope's images): Docker's runtime, its default seccomp profile and capabilities, no network.

The image (tests/container_image.py: Debian's python3 and the grader's wheels, built once and
cached) gets the repository mounted read-only at /course; tests/in_container.py grades inside
and reports. With Docker's defaults, as root and as `--user 1000:1000`, the tier is `landlock`,
examples/correct gets full marks, and the hunting submission (tests/hunting.py) finds no answer
file, not the secret in the grader's environment (`-e`), no loopback listener, and leaves no
process; graded with the sandbox off in the same container the same hunt finds them (the
control). With CAP_SYS_ADMIN and seccomp unconfined the tier is `namespaces`. With the grader's
Python in a 0700 home the tier is `none` and hidden grading refuses, naming the fix.

Docker's daemon is the running one, or one started here without touching the host's network
(tests/docker_daemon.py) and stopped at the end. Where no daemon can run (no docker.io, not
root), every test here is skipped with the reason; `bash ci/system_deps.sh` installs what they
need. The tiers reached and the time taken are printed at the end of the run.
"""
from __future__ import annotations

import itertools
import json
import os
import subprocess
import time

import pytest
from hunting import SECRET
from support import ROOT

import container_image
import docker_daemon

CONTAINER_SECONDS = 600
_names = itertools.count()


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    """The image's tag, with the daemon that has it (started here if none ran, stopped after)."""
    daemon, why = docker_daemon.connect()
    if daemon is None:
        reason = f"no Docker daemon for the container tests: {why}"
        print(reason)
        pytest.skip(reason)
    try:
        started = time.monotonic()
        try:
            name, built = container_image.ensure(tmp_path_factory.mktemp("image"))
        except container_image.Unbuildable as error:
            print(error)
            pytest.skip(str(error))
        except container_image.BuildError as error:  # the tools are here: a failed build is a failure
            pytest.fail(str(error))
        how = f"built in {built:.0f} s" if built else f"cached (found in {time.monotonic() - started:.1f} s)"
        yield {"name": name, "how": how, "daemon": daemon.version, "started_here": daemon.started_here}
    finally:
        daemon.stop()


def apparmor_enabled() -> bool:
    try:
        with open("/sys/module/apparmor/parameters/enabled", encoding="utf-8") as handle:
            return handle.read().strip() == "Y"
    except OSError:
        return False


def in_container(image: dict, *steps: str, options: tuple = ()) -> dict:
    """Run tests/in_container.py's `steps` in a fresh container of the image; its JSON report."""
    name = f"attn-container-test-{os.getpid()}-{next(_names)}"
    argv = ["docker", "run", "--rm", "--name", name, "--network", "none", "-e", f"ROSTER_TOKEN={SECRET}",
            "-v", f"{ROOT}:{container_image.COURSE}:ro", *options, image["name"],
            container_image.PYTHON, "tests/in_container.py", *steps]
    started = time.monotonic()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=CONTAINER_SECONDS)
    except subprocess.TimeoutExpired:
        subprocess.run(["docker", "kill", name], capture_output=True, timeout=60)
        raise AssertionError(f"the container ran past {CONTAINER_SECONDS} s: {' '.join(argv)}") from None
    assert done.returncode == 0, f"{' '.join(argv)}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    report = json.loads(done.stdout.strip().splitlines()[-1])
    report["seconds"] = time.monotonic() - started
    assert report["secret_in_environment"], "the grader's environment must hold the secret the hunt looks for"
    return report


def assert_contained(report: dict) -> None:
    tier = report["tier"]
    assert tier["returncode"] == 0 and tier["tier"] == "landlock", tier["said"]
    correct = report["correct"]
    assert correct["returncode"] == 0 and correct.get("tests"), correct
    assert correct["failed"] == [] and correct["score"] >= correct["max_score"] > 0, correct
    assert correct["sandbox"] == "landlock" and not correct["weak"], correct
    probe = report["probe"]
    assert probe["returncode"] == 0 and probe["sandbox"] == "landlock", probe
    assert probe["dot_checks"] == 2 and probe["dot_passed"], f"the hunt found something: {probe}"
    assert probe["failed"] == [], probe
    assert probe["reached"] == [], f"student code reached a loopback listener: {probe}"
    assert probe["survivors"] == [], f"a process of the submission outlived its grading: {probe}"
    assert_walk_read_nothing(report["walk"], "landlock")


def assert_walk_read_nothing(walk: dict, tier: str) -> None:
    """The copies planted at random paths, and every file outside the interpreter's folders, were
    unreadable from the submission (tests/hunting.py's walking_source)."""
    assert walk["returncode"] == 0 and walk["sandbox"] == tier, walk
    assert walk["dot_checks"] == 1 and walk["dot_passed"], f"the walk read something: {walk}"


@pytest.fixture(scope="module")
def as_root(image):
    return in_container(image, "tier", "correct", "probe", "unconfined", "walk")


def test_default_container_as_root(image, as_root, record_property):
    assert as_root["uid"] == 0
    assert_contained(as_root)
    record_property("summary", f"container (Docker {image['daemon']}, image {image['how']}) as root: tier "
                               f"{as_root['tier']['tier']}, full marks, the hunt and the walk found nothing "
                               f"({as_root['seconds']:.0f} s)")


def test_the_hunt_finds_what_an_unconfined_grading_exposes(as_root):
    """The control: the same hunt, graded in the same container with the sandbox off, finds the
    answers (or the secret) and the listeners, and leaves its daemon behind."""
    control = as_root["unconfined"]
    assert control["returncode"] == 0 and control["sandbox"] == "none", control
    assert control["dot_checks"] == 2 and not control["dot_passed"], control
    assert set(control["reached"]) == {"tcp", "udp"} and control["survivors"], control


def test_default_container_as_a_user(image, record_property):
    report = in_container(image, "tier", "correct", "probe", "walk", options=("--user", "1000:1000"))
    assert report["uid"] == 1000
    assert_contained(report)
    record_property("summary", f"container as uid 1000: tier {report['tier']['tier']}, full marks, "
                               f"the hunt and the walk found nothing ({report['seconds']:.0f} s)")


def test_sys_admin_and_seccomp_unconfined_give_namespaces(image, record_property):
    options = ["--cap-add", "SYS_ADMIN", "--security-opt", "seccomp=unconfined"]
    if apparmor_enabled():  # Docker's AppArmor profile denies mount() whatever the capabilities
        options += ["--security-opt", "apparmor=unconfined"]
    report = in_container(image, "tier", "correct", "walk", options=tuple(options))
    assert report["tier"]["returncode"] == 0 and report["tier"]["tier"] == "namespaces", report["tier"]["said"]
    correct = report["correct"]
    assert correct["returncode"] == 0 and correct["failed"] == [] and correct["sandbox"] == "namespaces", correct
    assert_walk_read_nothing(report["walk"], "namespaces")
    record_property("summary", f"container with {' '.join(options[1::2])}: tier {report['tier']['tier']}, "
                               f"full marks, the walk found nothing ({report['seconds']:.0f} s)")


def test_a_python_other_users_cannot_read_is_refused_with_its_fix(image, record_property):
    report = in_container(image, "--unreadable-python", "tier", "refusal")
    home = "/root/.pyenv/versions/course"
    assert report["python"].startswith(home + "/")
    tier = report["tier"]
    assert tier["tier"] == "none" and f"unprivileged user ({home} is not readable by other users)" in tier["said"], \
        tier["said"]
    refusal = report["refusal"]
    assert refusal["returncode"] == 1 and refusal["stdout"] == "", refusal
    assert len(refusal["stderr"]) == 1, refusal["stderr"]
    line = refusal["stderr"][0]
    assert line.startswith("autograder: error: hidden grading refused") and "--sandbox weak" in line, line
    advice = line.split(f"{home} is not readable by other users)). ", 1)[-1]  # after the list of what is missing
    assert "/usr/local" in advice and "ordinary user" in advice and "Landlock" not in advice, line
    record_property("summary", f"container, Python in a 0700 home: tier {tier['tier']}, hidden grading refused "
                               f"with the fix ({report['seconds']:.0f} s)")
