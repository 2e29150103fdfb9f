"""How a worker process starts: this folder loaded as the package `worker`, then main.run.

    python -I -B autograder/worker/boot.py CONTROL_FD [meta] [preload=NAME,...] [huge]   (zygote.py)
    python -I -B autograder/worker/boot.py --spawn LIMITS_JSON                          (portable.py)

No folder of the grader goes on the import path (-I leaves out this script's own folder too): the
package is loaded from this file's folder by its location (`load`), and its modules import one
another relatively (`from . import wire`). So the process can reach the worker's modules and nothing
else of the grader, and a student's module never shadows one of them. The trusted side imports the
same files as `autograder.worker` (the notebook's checks, the launchers' wire format).
"""
import importlib.util
import os
import sys

PACKAGE = "worker"  # the package's name inside a worker process
FOLDER = os.path.dirname(os.path.abspath(__file__))


def load(folder: str = FOLDER):
    """Import the worker's folder as the package `worker`, by its location alone; returns the package."""
    spec = importlib.util.spec_from_file_location(PACKAGE, os.path.join(folder, "__init__.py"),
                                                  submodule_search_locations=[folder])
    package = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = package
    spec.loader.exec_module(package)
    return package


if __name__ == "__main__":
    load()
    importlib.import_module(f"{PACKAGE}.main").run(sys.argv[1:])
