"""What a student's process may reach on disk: one allow-list, built from what the interpreter needs.

Both tiers take it from here. The namespaces tier builds a new root holding exactly these paths
(`new_root.py`); the Landlock tier (`landlock.py`) grants them and nothing else. Nothing is named to
be hidden: a copy of the answers, an nbgrader exchange or a gradebook anywhere else on the machine
is simply not there, wherever it lies.

- read: the Python install (the interpreter, its standard library, libpython), every folder of
  the import path (site-packages: torch, numpy, pandas, ...), the system's shared libraries and the
  folders of LD_LIBRARY_PATH (a GPU driver's), the few files of /etc that the C library reads, the
  kernel's views (/sys; /proc is the child's own), this worker's folder;
- holes in what is read: the course's answer packages wherever an import path folder holds them,
  the repository being graded from, and the folder of the workers' directories (other students'),
  should any allowed folder contain them;
- write: the child's private working directory only;
- devices: /dev/null and the like, and the GPU's device files where there are some.
"""
from __future__ import annotations

import glob
import os
import sys

ANSWER_PACKAGES = ("solutions", "autograder", "course", "tests")  # as guards.BLOCKED_PACKAGES
# where the dynamic loader finds the system's shared libraries (merged-/usr systems link the first to the second)
LIBRARIES = ("/lib", "/lib32", "/lib64", "/libx32", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libx32")
# what the C library and Python read of /etc (the loader's cache, time zone, names of users and groups)
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/passwd",
                "/etc/group", "/etc/nsswitch.conf", "/etc/os-release")
KERNEL_VIEWS = ("/sys",)  # no one places a file in sysfs; torch and CUDA read the CPU and PCI topology there
RANDOM = ("/dev/urandom", "/dev/random", "/dev/zero")  # read only
DEVICES = ("/dev/null", "/dev/full", "/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools",
           "/dev/nvidia-modeset", "/dev/kfd", "/dev/dri")  # read, write, ioctl
GPU_DEVICE_GLOBS = ("/dev/nvidia[0-9]*", "/dev/nvidia-caps")
INSTALLED = ("site-packages", "dist-packages")  # the grader's "repository" when the course is pip-installed


def inside(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or lies below it."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def python_install(prefixes: list[str]) -> list[str]:
    """The interpreter's own files: its executable (and the links to it), its standard library,
    libpython when it is shared, and a venv's pyvenv.cfg (read by a Python the student starts)."""
    paths = [sys.executable, os.path.realpath(sys.executable), os.path.dirname(os.__file__)]  # the standard library
    for prefix in prefixes:  # (no sysconfig: its data module is imported lazily, from the path)
        if prefix:
            paths += glob.glob(os.path.join(prefix, "lib", "libpython*")) + [os.path.join(prefix, "pyvenv.cfg")]
    return [p for p in paths if p and os.path.lexists(p)]


def library_folders(here: str) -> list[str]:
    """The absolute folders of LD_LIBRARY_PATH (a GPU image often finds the driver's libcuda there,
    in /usr/local/nvidia/lib64, say) that hold no answers and do not contain `here`."""
    here = os.path.realpath(here)
    found = []
    for entry in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep):
        if not entry or not os.path.isabs(entry) or not os.path.isdir(entry):
            continue
        folder = os.path.realpath(entry)
        if folder == "/" or inside(here, folder):
            continue
        if any(os.path.isdir(os.path.join(folder, name)) for name in ANSWER_PACKAGES):
            continue
        if folder not in found:
            found.append(folder)
    return found


def answer_folders(search_path: list[str]) -> list[str]:
    """Where a copy of the course's answer packages lies on the import path (a non-editable
    `pip install .` puts solutions/ and autograder/checks/ into site-packages)."""
    found = []
    for place in search_path:
        if place and os.path.isabs(place) and os.path.isdir(place):
            found += [os.path.join(os.path.realpath(place), name) for name in ANSWER_PACKAGES
                      if os.path.isdir(os.path.join(place, name))]
    return found


def plan(workdir: str, repo: str, search_path: list[str], prefixes: list[str], here: str) -> dict:
    """{"read", "holes", "keep", "write", "device"}: absolute paths, as found on this machine.

    `read` folders and files are granted whole but for the `holes` inside them; `keep` (this worker's
    folder) is granted even inside a hole. `read` keeps each path as named (the new root makes the
    symbolic links on the way again: /lib -> usr/lib, a venv's bin/python); the holes are real paths.
    A checked-out repository is a hole, never read: an editable install puts it on the import path,
    and a checkout holds the solutions, the hidden checks and the generated notebooks. A folder of
    the import path that is the repository, or contains it, is left out; one inside it (a .venv in
    the checkout) is read. The course installed into site-packages: only its answer packages are holes.
    """
    here = os.path.realpath(here)
    repo = os.path.realpath(repo) if repo else ""
    if os.path.basename(repo) in INSTALLED:  # the course installed, not checked out: its packages are the answers
        answers_in_repo, repo = [os.path.join(repo, name) for name in ANSWER_PACKAGES], ""
    else:
        answers_in_repo = [os.path.join(repo, name) for name in ANSWER_PACKAGES] if repo else []
    workers = os.path.dirname(os.path.realpath(workdir)) if workdir else ""
    answers = answer_folders(search_path) + answers_in_repo
    candidates = list(LIBRARIES) + list(SYSTEM_FILES) + list(KERNEL_VIEWS) + list(RANDOM)
    candidates += python_install(prefixes)
    candidates += [p for p in search_path if p and os.path.isabs(p) and os.path.isdir(p)]
    candidates += library_folders(here)
    read, seen = [], set()
    for path in candidates:
        path = os.path.normpath(path)
        real = os.path.realpath(path)
        if not os.path.exists(real) or real == "/" or path in seen:
            continue
        if repo and inside(repo, real):  # the repository itself, or a folder above it
            continue
        if any(inside(real, answer) for answer in answers):  # never read, even named directly
            continue
        seen.add(path)
        read.append(path)
    reals = [os.path.realpath(p) for p in read if os.path.isdir(p)]
    # a hole matters only where something read contains it
    holes = {h for h in [*answers, repo, workers] if h and any(inside(h, r) and h != r for r in reals)}
    devices = [d for d in DEVICES if os.path.exists(d)]
    devices += sorted(p for pattern in GPU_DEVICE_GLOBS for p in glob.glob(pattern))
    return {"read": sorted(read, key=lambda p: (len(p), p)), "holes": sorted(holes), "keep": [here],
            "write": [workdir] if workdir else [], "device": devices}
