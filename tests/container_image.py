"""The image the container tests grade in: Debian with the grader's Python, built from Debian's
packages and PyPI's wheels only, and cached by Docker under a tag that hashes what went into it.

    ensure(log_folder) -> (tag, seconds spent building: 0 when the cached image served)

The image holds a minimal Debian (debootstrap's minbase with python3 and python3-venv) and a
virtual environment, /opt/course-venv, with torch and what grading imports (the list Gradescope's
setup.sh installs: autograder.instructor.gradescope). The course itself is not in it: the tests
mount the repository read-only at /course, as an instructor mounts a course into a grading image,
so a change to the grader needs no new image. torch comes from the wheel pip finds on this
machine (`pip download --no-index`, as ci/setup.sh does), otherwise from the PyTorch CPU index;
the other wheels are downloaded here (pip's own configuration and cache) and installed inside
the image's root with the image's own pip, without an index.

Every step has a time limit; a failed step raises BuildError with the step's last words, a
missing tool Unbuildable.
"""
from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.instructor.declared import torch_version
from autograder.instructor.gradescope import CPU_INDEX_URL, grading_requirements

TORCH_VERSION = torch_version()  # pyproject.toml's, as Gradescope's setup.sh installs it
RUNTIME_REQUIREMENTS = tuple(grading_requirements())

REPOSITORY = "attention-course-grader"
SUITE = "bookworm"  # its python3 is 3.11: torch's cp311 wheels, as ci/setup.sh installs
PACKAGES = ("python3", "python3-venv")
MIRROR = os.environ.get("DEBIAN_MIRROR", "http://deb.debian.org/debian")
VENV = "/opt/course-venv"
COURSE = "/course"
PYTHON = f"{VENV}/bin/python"
WORK_BYTES = 4 * 1024**3  # the root (about 1.3 GB) and the wheels, with room to spare
STEP_SECONDS = {"debootstrap": 600, "download": 600, "venv": 120, "install": 600, "import": 300}


class BuildError(RuntimeError):
    pass


class Unbuildable(BuildError):
    """What the build needs is not here (debootstrap, root): the tests skip, saying so."""


def tag() -> str:
    """REPOSITORY:hash of everything that decides the image's content (this file included)."""
    inputs = [Path(__file__).read_text(encoding="utf-8"), SUITE, *PACKAGES, TORCH_VERSION, *RUNTIME_REQUIREMENTS,
              platform.machine()]
    return f"{REPOSITORY}:{hashlib.sha256(chr(0).join(inputs).encode()).hexdigest()[:16]}"


def exists(name: str) -> bool:
    return subprocess.run(["docker", "image", "inspect", name], capture_output=True, timeout=60).returncode == 0


def step(name: str, argv: list, log: Path, **kwargs) -> None:
    """Run one step of the build, its output appended to `log`, within STEP_SECONDS[name]."""
    with open(log, "ab") as handle:
        handle.write(f"\n$ {' '.join(map(str, argv))}\n".encode())
        handle.flush()
        started = time.monotonic()
        try:
            done = subprocess.run(argv, stdout=handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                  timeout=STEP_SECONDS[name], **kwargs)
        except subprocess.TimeoutExpired:
            raise BuildError(f"image build: {name} took more than {STEP_SECONDS[name]} s (log: {log})") from None
        handle.write(f"# {name}: exit status {done.returncode} after {time.monotonic() - started:.1f} s\n".encode())
    if done.returncode != 0:
        tail = " | ".join(log.read_text(errors="replace").strip().splitlines()[-5:])
        raise BuildError(f"image build: {name} failed (exit status {done.returncode}): {tail} (log: {log})")


def wheel_tags() -> list:
    """pip download's options for the image's Python (CPython 3.11 on this machine's architecture),
    whatever Python runs the tests."""
    arch = platform.machine()
    platforms = [f"manylinux_2_{minor}_{arch}" for minor in range(36, 16, -1)] + [f"manylinux2014_{arch}"]
    return ["--only-binary=:all:", "--python-version", "3.11", "--implementation", "cp", "--abi", "cp311",
            *[option for name in platforms for option in ("--platform", name)]]


def download_wheels(folder: Path, log: Path) -> None:
    pip = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--quiet", "-d", str(folder),
           *wheel_tags()]
    try:  # the wheel pip finds on this machine (its find-links), as ci/setup.sh installs it
        step("download", [*pip, "--no-index", "--no-deps", f"torch=={TORCH_VERSION}"], log)
    except BuildError:
        step("download", [*pip, "--no-deps", f"torch=={TORCH_VERSION}", "--index-url", CPU_INDEX_URL], log)
    torch = [str(path) for path in folder.glob("torch-*.whl")]
    step("download", [*pip, *torch, *RUNTIME_REQUIREMENTS], log)  # torch's own dependencies come along


def mounts_below(folder: Path) -> list:
    prefix = str(folder.resolve()) + "/"
    with open("/proc/self/mounts", encoding="utf-8") as handle:
        return [line.split()[1] for line in handle if line.split()[1].startswith(prefix)]


def unmount_below(folder: Path) -> bool:
    """Unmount whatever a stopped debootstrap left mounted in the root (deepest first); whether
    nothing is left mounted there (only then may the folder be removed: /dev could be bound in)."""
    for point in sorted(mounts_below(folder), key=len, reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True, timeout=30)
    return not mounts_below(folder)


def import_root(root: Path, name: str, log: Path) -> None:
    changes = [f"ENV PATH={VENV}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
               "ENV LANG=C.UTF-8", f"WORKDIR {COURSE}"]
    argv = ["docker", "import", *[option for change in changes for option in ("--change", change)], "-", name]
    with open(log, "ab") as handle:
        handle.write(f"\n$ tar -C {root} -c . | {' '.join(argv)}\n".encode())
        handle.flush()
        started = time.monotonic()
        tar = subprocess.Popen(["tar", "--numeric-owner", "-C", str(root), "-c", "."], stdout=subprocess.PIPE,
                               stderr=handle)
        try:
            done = subprocess.run(argv, stdin=tar.stdout, stdout=handle, stderr=subprocess.STDOUT,
                                  timeout=STEP_SECONDS["import"])
        except subprocess.TimeoutExpired:
            raise BuildError(f"image build: import took more than {STEP_SECONDS['import']} s (log: {log})") from None
        finally:
            tar.stdout.close()
            if tar.poll() is None:
                tar.kill()
            tar.wait()
        handle.write(f"# import: {time.monotonic() - started:.1f} s\n".encode())
    if done.returncode != 0 or tar.returncode != 0:
        raise BuildError(f"image build: import failed (tar {tar.returncode}, docker {done.returncode}; log: {log})")


def build(name: str, log: Path) -> None:
    if shutil.which("debootstrap") is None and shutil.which("debootstrap", path="/usr/sbin") is None:
        raise Unbuildable("image build: debootstrap is not installed (bash ci/system_deps.sh installs it)")
    if os.geteuid() != 0:
        raise Unbuildable("image build: debootstrap and chroot need root")
    work = Path(tempfile.mkdtemp(prefix="attn-image-"))
    # in memory where it can: dpkg's and pip's many small writes, and the removal, cost nothing there
    in_memory = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={WORK_BYTES},mode=0755", "attn-image", str(work)],
                               capture_output=True, timeout=30).returncode == 0
    root = work / "root"
    try:
        debootstrap = shutil.which("debootstrap") or "/usr/sbin/debootstrap"
        step("debootstrap", [debootstrap, "--variant=minbase", f"--include={','.join(PACKAGES)}", SUITE, str(root),
                             MIRROR], log)
        wheels = root / "tmp" / "wheels"
        wheels.mkdir(parents=True)
        download_wheels(wheels, log)
        # inside the image's root, with its own Python and pip, and nothing of this machine's environment
        inside = ["chroot", str(root), "/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "HOME=/root", "LANG=C.UTF-8"]
        step("venv", [*inside, "/usr/bin/python3", "-m", "venv", VENV], log)
        files = sorted(f"/tmp/wheels/{path.name}" for path in wheels.glob("torch-*.whl"))
        step("install", [*inside, PYTHON, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                         "--no-index", "--no-cache-dir", "--find-links", "/tmp/wheels", *files,
                         *RUNTIME_REQUIREMENTS], log)
        shutil.rmtree(wheels)
        for leftover in (root / "var" / "cache" / "apt", root / "var" / "lib" / "apt" / "lists"):
            shutil.rmtree(leftover, ignore_errors=True)
        import_root(root, name, log)
    finally:
        started = time.monotonic()
        if unmount_below(root):
            if in_memory:
                subprocess.run(["umount", "-l", str(work)], capture_output=True, timeout=60)
            shutil.rmtree(work, ignore_errors=True)
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"# cleaning up: {time.monotonic() - started:.1f} s"
                         f"{'' if not work.exists() else f' ({work} left: something is still mounted in it)'}\n")


def remove_stale(keep: str) -> None:
    """Images of earlier inputs: each is as large as torch."""
    done = subprocess.run(["docker", "image", "ls", REPOSITORY, "--format", "{{.Repository}}:{{.Tag}}"],
                          capture_output=True, text=True, timeout=60)
    stale = [name for name in done.stdout.split() if name != keep]
    if stale:
        subprocess.run(["docker", "image", "rm", *stale], capture_output=True, timeout=120)


def ensure(log_folder: Path) -> tuple[str, float]:
    """The image's tag, built first when Docker has no image of these inputs."""
    name = tag()
    if exists(name):
        return name, 0.0
    started = time.monotonic()
    log = log_folder / "image-build.log"
    build(name, log)
    removing = time.monotonic()
    remove_stale(name)
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(f"# removing the images of earlier inputs: {time.monotonic() - removing:.1f} s\n")
    return name, time.monotonic() - started
