"""The run's last lines (tests/conftest.py): a module's "label: N/M contained" and the lines tests record
are printed alike in one process and on two (README's test command runs the suite with `-n 2`, where
pytest-xdist's controller collects nothing itself and knows the tests from their reports only)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TINY_MODULE = '''
import pytest

SUMMARY_LINE = "tiny corpus"


def test_one(record_property):
    record_property("summary", "tiny: measured 42")


def test_two():
    pass


def test_degraded():
    pytest.skip("degraded: the tier lacks a layer here")
'''


@pytest.mark.parametrize("processes", [[], ["-n", "2"]], ids=["one process", "two processes"])
def test_the_summary_lines_are_printed_however_many_processes_run_the_suite(tmp_path, processes):
    shutil.copy(Path(__file__).with_name("conftest.py"), tmp_path / "conftest.py")
    (tmp_path / "test_tiny.py").write_text(TINY_MODULE)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *processes,
                           "--rootdir", str(tmp_path), "-c", "/dev/null", str(tmp_path)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    lines = done.stdout.splitlines()
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "tiny: measured 42" in lines, done.stdout[-2000:]
    assert "tiny corpus: 2/3 contained (1 degraded)" in lines, done.stdout[-2000:]
