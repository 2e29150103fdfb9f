"""The command line contract: formats, output file, exit statuses, one-line errors."""
import json
import os
import subprocess
import sys

import pytest
from support import ROOT


def run(*args, timeout=300):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "autograder", *args], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=timeout)


@pytest.mark.parametrize("args, says", [
    (["grade", "examples/correct", "--section", "99_nothing"], "unknown section '99_nothing'"),
    (["grade", "no/such/folder"], "no/such/folder: no such file or folder"),
    (["grade", "README.md"], "expected a folder, a .ipynb notebook or a .py file"),
    (["grade", "examples/correct", "--format", "pdf"], "invalid choice: 'pdf'"),
    (["grade", "examples/correct", "--call-timeout", "0"], "--call-timeout must be a positive number"),
    (["grade"], "the following arguments are required: submission"),
    (["regrade", "x"], "invalid choice: 'regrade'"),
    (["grade", "no/such/folder", "-v"], "no/such/folder: no such file or folder"),  # -v: still one line
])
def test_bad_command_line_is_one_line_and_exit_2(args, says):
    done = run(*args)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], done.stderr


def test_python_file_needs_a_section_when_its_name_does_not_say(tmp_path):
    source = tmp_path / "my_work.py"
    source.write_text("x = 1\n")
    done = run("grade", str(source))
    assert done.returncode == 2 and "add --section ID" in done.stderr


def test_cuda_without_gpu_is_a_usage_error():
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU; the no-GPU error cannot be shown here")
    done = run("grade", "examples/correct_py/01_scores.py", "--device", "cuda")
    assert done.returncode == 2
    assert done.stderr.strip() == "autograder: error: --device cuda: no CUDA GPU is available on this machine"


def test_json_to_stdout_is_only_json_in_gradescope_schema():
    done = run("grade", "examples/correct_py/01_scores.py", "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)  # nothing else on stdout
    assert set(data) >= {"score", "max_score", "execution_time", "output", "tests"}
    assert data["score"] == data["max_score"] == 10
    for test in data["tests"]:
        assert set(test) >= {"name", "score", "max_score", "status", "output", "tags", "visibility"}
        assert test["tags"][0] == "01_scores" and test["status"] == "passed"


def test_output_file_and_unreadable_notebook_scores_zero_with_exit_0(tmp_path):
    notebook = tmp_path / "01_scores.ipynb"
    notebook.write_text("{ this is not json")
    out = tmp_path / "out" / "results.json"
    done = run("grade", str(notebook), "--format", "json", "--output", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    data = json.loads(out.read_text())
    assert data["score"] == 0 and data["max_score"] > 0
    assert all("01_scores.ipynb is not valid JSON" in t["output"] for t in data["tests"])


def test_blank_template_scores_zero_with_a_message_per_check_and_no_traceback():
    done = run("grade", "student_template", "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["score"] == 0 and data["max_score"] >= 60
    for test in data["tests"]:
        assert test["output"], test["name"]
        assert "Traceback" not in test["output"] and "autograder/" not in test["output"]
    assert any("not implemented yet" in t["output"] for t in data["tests"])


@pytest.mark.parametrize("fmt, marker", [("table", "Total:"), ("markdown", "## Attention course"),
                                         ("junit", "<testsuites")])
def test_other_formats(fmt, marker):
    done = run("grade", "examples/correct_py/01_scores.py", "--format", fmt)
    assert done.returncode == 0, done.stderr
    assert marker in done.stdout


def test_output_to_a_device_writes_into_it_and_leaves_it_a_device():
    import stat

    done = run("grade", "examples/correct_py/01_scores.py", "--format", "json", "--output", "/dev/null")
    assert done.returncode == 0, done.stderr
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_report_that_cannot_be_written_is_one_line_naming_the_folder_and_the_fix(tmp_path, monkeypatch, capsys):
    """A course folder mounted read-only: check's default ./feedback cannot be written."""
    import errno
    from pathlib import Path

    from autograder import cli
    from autograder.feedback import report

    def read_only(result, folder):
        raise OSError(errno.EROFS, "Read-only file system", str(folder))

    monkeypatch.setattr(report, "write_report", read_only)
    monkeypatch.chdir(tmp_path)
    cli.write_feedback(object(), Path("feedback"))
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    assert str(tmp_path / "feedback") in lines[0] and "Read-only file system" in lines[0]
    assert "--report" in lines[0] and "Traceback" not in lines[0] and "OSError" not in lines[0]


def test_check_in_a_folder_it_cannot_write_still_prints_the_grade_and_says_where_to_point_report(tmp_path):
    """End to end: ./feedback is taken by a file, so the report cannot be written there."""
    import shutil

    shutil.copy(ROOT / "examples" / "correct" / "02_softmax.ipynb", tmp_path)
    (tmp_path / "feedback").write_text("not a folder")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "autograder", "check", ".", "--sandbox", "off"],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "02_softmax" in done.stdout
    said = [line for line in done.stderr.splitlines() if "could not write the feedback report" in line]
    assert len(said) == 1 and "--report DIR" in said[0] and str(tmp_path / "feedback") in said[0], done.stderr


def test_the_self_check_s_screen_is_quiet_one_plain_line_about_protection(tmp_path):
    """A student reads one plain line about the sandbox; --verbose (and grading) print its layers."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "autograder", "check", ".", "--section", "02_softmax", "--report", str(tmp_path)]
    quiet = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT / "examples" / "partial", env=env,
                           timeout=300)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout.startswith("Grading partial on cpu"), "the folder is named, not '.'"
    assert sum(line.startswith("self-check: ") for line in quiet.stderr.splitlines()) == 1, quiet.stderr
    assert "sandbox: tier" not in quiet.stderr
    # no tier's name on the student's screen or in their report: where the code ran, in plain words
    report = (tmp_path / "report.md").read_text() + (tmp_path / "report.html").read_text()
    for said in (quiet.stdout, report):
        assert "sandbox:" not in said and "namespaces" not in said and "landlock" not in said, said[:400]
    assert "your code ran " in quiet.stdout.splitlines()[0] and "your code ran " in report
    verbose = subprocess.run(argv + ["--verbose"], capture_output=True, text=True, cwd=ROOT / "examples" / "partial",
                             env=env, timeout=300)
    assert "sandbox: tier" in verbose.stderr or "self-check: no sandbox" in verbose.stderr, verbose.stderr
    assert "(sandbox: " in verbose.stdout.splitlines()[0], verbose.stdout[:200]


def test_quiet_and_verbose_change_what_is_logged_not_the_result(tmp_path):
    """-q leaves out the progress lines (here the self-check's line about the sandbox), -v adds the
    details (the sandbox's layers); the result and the report's path are the same."""
    argv = ["check", "examples/correct_py/01_scores.py", "--format", "json", "--report", str(tmp_path)]
    said = {flag: run(*argv, flag) for flag in ("-q", "-v")}
    for flag, done in said.items():
        assert done.returncode == 0, (flag, done.stderr)
    results = {flag: {**json.loads(done.stdout), "execution_time": None} for flag, done in said.items()}
    assert results["-q"] == results["-v"] and results["-q"]["score"] == results["-q"]["max_score"] > 0
    report = f"autograder: feedback report: {tmp_path / 'report.html'}"
    logged = {flag: [line for line in done.stderr.splitlines() if line != report] for flag, done in said.items()}
    assert all(report in done.stderr for done in said.values())  # the report's path is output, not a log line
    assert logged["-q"] == []
    assert [line.split(":")[0] for line in logged["-v"]] in (["sandbox", "self-check"], ["self-check"]), logged


def test_quiet_keeps_the_warnings_and_drops_the_progress(tmp_path, capsys):
    """In one process, as a test or a notebook calls it: -q shows a warning, not an info line, and
    the grader's logging is as it was afterwards."""
    import logging

    from autograder.cli import main

    export = tmp_path / "grades.csv"
    export.write_text("github_username,student_repository_url\n"
                      "alice-gh,https://github.com/course/week2-alice-gh\ncarol-gh,\n", encoding="utf-8")
    grader = logging.getLogger("autograder")
    before = (grader.level, grader.propagate)
    for flags, info_shown in (([], True), (["-q"], False)):
        assert main(["classroom-roster", str(export), "--out", str(tmp_path / "roster.txt"), *flags]) == 0
        err = capsys.readouterr().err
        assert "carol-gh has no repository yet" in err, flags  # a warning
        assert (f"1 students in {tmp_path / 'roster.txt'}" in err) == info_shown, (flags, err)
    assert (grader.level, grader.propagate) == before and not grader.handlers
