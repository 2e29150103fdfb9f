"""The folders of LD_LIBRARY_PATH the worker may read: where a GPU machine keeps the driver's library.

A CUDA image often finds libcuda through LD_LIBRARY_PATH (/usr/local/nvidia/lib64, say) rather
than the system's library folders. Both sandbox tiers keep these folders readable, except one that
holds the course's answer packages or lies above the grader (a repository is never a library folder).
"""
import os

ANSWER_PACKAGES = ("solutions", "autograder", "course", "tests")  # as guards.BLOCKED_PACKAGES


def library_folders(here: str) -> list[str]:
    """The absolute folders of LD_LIBRARY_PATH that hold no answers and do not contain `here`."""
    here = os.path.realpath(here)
    found = []
    for entry in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep):
        if not entry or not os.path.isabs(entry) or not os.path.isdir(entry):
            continue
        folder = os.path.realpath(entry)
        if folder == "/" or here == folder or here.startswith(folder.rstrip("/") + "/"):
            continue
        if any(os.path.isdir(os.path.join(folder, name)) for name in ANSWER_PACKAGES):
            continue
        if folder not in found:
            found.append(folder)
    return found
