"""The worker as a package: what a worker process can import of the grader.

A worker process runs autograder/worker/boot.py, which loads the worker's folder alone as the
package `worker` by its location. So, in the process that runs student code (a zygote's child, or
the portable path's interpreter): no folder of the grader on sys.path (the worker's own neither),
no module of the trusted side loaded, and the worker's modules known only by their package names.
"""
from __future__ import annotations

import os

import pytest
from support import ROOT, zygote

from autograder.sandbox.limits import Limits
from autograder.sandbox.portable import Launcher

WORKER = os.path.realpath(ROOT / "autograder" / "worker")
GRADER = os.path.realpath(ROOT / "autograder")

# the student's function: what the worker process it runs in has imported, and from where
WHERE = '''
import os, sys

def where():
    package = sys.modules.get("worker")
    return {
        "package": [os.path.realpath(p) for p in getattr(package, "__path__", [])],
        "path": [os.path.realpath(p) for p in sys.path if p],
        "grader": sorted(m for m in sys.modules if m.split(".")[0] == "autograder"),
        # every folder an import has searched, this process's whole life (guards.install drops the grader's
        # modules from sys.modules before student code runs: their folders stay in this cache)
        "searched": sorted(os.path.realpath(p) for p in sys.path_importer_cache if isinstance(p, str)),
        "bare": sorted(m for m in ("wire", "serve", "guards", "main", "confine", "namespaces", "gpu") if m in sys.modules),
        "folders": sorted({os.path.dirname(os.path.realpath(m.__file__)) for name, m in list(sys.modules.items())
                           if name.split(".")[0] == "worker" and getattr(m, "__file__", None)}),
    }
'''


def ask_where(launcher) -> dict:
    session = launcher.spawn(Limits(), {"names": ["where"]})
    try:
        loaded, status = session.request({"op": "load", "cells": [{"label": "probe", "source": WHERE}]}, 120)
        assert status == "ok" and loaded["defined"] == ["where"], (status, loaded)
        reply, status = session.request({"op": "call", "target": {"name": "where"}, "args": [],
                                         "kwargs": {"__dict__": []}}, 60)
        assert status == "ok" and reply["ok"], (status, reply)
        return dict(reply["value"]["__dict__"])  # a dict crosses the wire as its items
    finally:
        session.kill()


def inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder + os.sep)


@pytest.fixture(scope="module")
def portable():
    made = Launcher()
    yield made
    made.close()


@pytest.mark.parametrize("path", ["zygote", "portable"])
def test_a_worker_process_holds_the_worker_package_and_nothing_else_of_the_grader(path, portable):
    seen = ask_where(zygote() if path == "zygote" else portable)
    assert seen["package"] == [WORKER]
    assert seen["folders"] == [WORKER]  # every module of the package comes from the worker's folder
    assert seen["grader"] == [], "the trusted side's modules are loaded in the worker"
    outside = [p for p in seen["searched"] if inside(p, GRADER) and not inside(p, WORKER)]
    assert outside == [], f"imports searched the trusted side: {outside}"
    assert seen["bare"] == [], "a worker module under its bare name"
    # no folder of the grader on the import path: neither the worker's own, nor one that holds the
    # trusted side (the repository itself, an editable install's folder, autograder/)
    on_path = [p for p in seen["path"] if inside(p, GRADER) or p == os.path.realpath(ROOT)]
    assert on_path == [], on_path
