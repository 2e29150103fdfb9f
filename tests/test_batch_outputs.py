"""What a batch leaves in its output folder for the instructor: no stale feedback, the command that
resumes after Ctrl-C, and an index from each student's id to the files named after it."""
from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from support import ROOT, store_grade

from autograder.core.results import CheckResult, GradeResult, SectionResult
from autograder.instructor.batch import write_reports
from autograder.instructor.forced import interrupted_hint
from autograder.instructor.leftovers import remove_feedback
from autograder.instructor.grades_table import write_table
from autograder.instructor.student_files import read_student

SECTION = "01_scores"
TEMPLATE = ROOT / "student_template" / f"{SECTION}.ipynb"


def run(*args, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})


def blank_class(root: Path, *students: str) -> Path:
    for student in students:
        (root / student).mkdir(parents=True)
        shutil.copy(TEMPLATE, root / student)
    return root


def test_a_batch_without_report_leaves_no_feedback_of_an_earlier_run(tmp_path):
    submitted, out = blank_class(tmp_path / "submitted", "carol"), tmp_path / "grades"
    first = run("batch", submitted, "--out", out, "--section", SECTION, "--device", "cpu", "--jobs", "1", "--report")
    assert first.returncode == 0, first.stderr
    assert (out / "feedback" / "carol" / "report.md").is_file()
    second = run("batch", submitted, "--out", out, "--section", SECTION, "--device", "cpu", "--jobs", "1")
    assert second.returncode == 0, second.stderr
    assert not (out / "feedback").exists()
    assert (out / "grades.csv").is_file() and (out / "students" / "carol.json").is_file()


def test_removing_the_feedback_never_follows_a_link(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "carol").mkdir(parents=True)
    (elsewhere / "carol" / "report.md").write_text("kept")
    out = tmp_path / "out"
    out.mkdir()
    (out / "feedback").symlink_to(elsewhere, target_is_directory=True)
    remove_feedback(out)
    assert not os.path.lexists(out / "feedback") and (elsewhere / "carol" / "report.md").read_text() == "kept"


def test_the_hint_after_ctrl_c_resumes_without_force():
    forced = ["batch", "submitted", "--out", "my grades", "--force", "--jobs", "2"]
    hint = interrupted_hint(3, forced)
    assert hint.endswith(": python -m autograder batch submitted --out 'my grades' --jobs 2"), hint
    assert "--force" in hint.split(":")[1]  # the words say why it is left out
    assert interrupted_hint(3, ["batch", "submitted", "--forc"]).endswith(": python -m autograder batch submitted")
    plain = interrupted_hint(3, ["batch", "submitted"])
    assert plain.endswith("run the same command again to grade the rest") and "python -m" not in plain
    assert interrupted_hint(3, None) == plain


SLOW_CELL = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
             "source": ["import time\n", "time.sleep(4)\n"]}


def test_ctrl_c_during_a_forced_batch_says_the_command_that_resumes_and_it_does(tmp_path):
    """alice is graded, then Ctrl-C while the slow student's notebook loads: the hint's command
    grades the rest and keeps alice's grade."""
    submitted, out = blank_class(tmp_path / "submitted", "alice"), tmp_path / "grades"
    command = ["batch", str(submitted), "--out", str(out), "--section", SECTION, "--device", "cpu", "--jobs", "1"]
    assert run(*command).returncode == 0  # alice graded once: the forced run grades her again
    blank_class(submitted, "bob")  # bob hands in later, with a notebook slow to load
    notebook = json.loads(TEMPLATE.read_text(encoding="utf-8"))
    notebook["cells"].append(SLOW_CELL)
    (submitted / "bob" / TEMPLATE.name).write_text(json.dumps(notebook), encoding="utf-8")
    # Ctrl-C as a terminal delivers it: the batch starts with SIGINT's default disposition, whatever this test
    # process inherited (a SIGINT ignored here would be ignored there too, and the batch would run to its end)
    process = subprocess.Popen([sys.executable, "-m", "autograder", *command, "--force"], cwd=ROOT,
                               env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    alice = out / "students" / "alice.json"
    before = alice.stat().st_mtime_ns
    deadline = time.monotonic() + 120
    while alice.stat().st_mtime_ns == before:
        assert process.poll() is None and time.monotonic() < deadline, "alice was not graded again"
        time.sleep(0.05)
    time.sleep(0.5)  # bob's notebook is loading (it sleeps 4 s)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    hint = stderr.strip().splitlines()[-1]
    resume = shlex.split(hint.split("): ", 1)[1])
    shutil.copy(TEMPLATE, submitted / "bob")  # bob, never graded, quick to load now: the run that resumes need not wait
    assert resume[:3] == ["python", "-m", "autograder"] and "--force" not in resume, hint
    again = run(*resume[3:])
    assert again.returncode == 0, again.stderr
    assert "unchanged alice" in again.stderr and "graded bob" in again.stderr, again.stderr
    assert alice.stat().st_mtime_ns > before


IDS = ["张三", "li lei", "a/b", "alice"]


def test_the_index_names_each_students_files_by_the_id_as_given(tmp_path):
    for student in IDS:
        grade = GradeResult(submission=student, device="cpu", sections=[SectionResult(
            SECTION, "scores", checks=[CheckResult(SECTION, "a check", 1.0, 1.0)])])
        store_grade(tmp_path, grade)
    results = {}
    for path in (tmp_path / "students").glob("*.json"):
        stored = read_student(path)
        results[stored.student] = stored
    write_table(tmp_path, results)
    write_reports(tmp_path, results)
    index = json.loads((tmp_path / "index.json").read_text(encoding="utf-8"))["students"]
    assert sorted(index) == sorted(IDS)
    assert index["alice"] == {"result": "students/alice.json", "feedback": "feedback/alice"}
    for student, paths in index.items():
        assert read_student(tmp_path / paths["result"]).student == student
        assert (tmp_path / paths["feedback"] / "report.md").is_file()
    assert len({paths["result"] for paths in index.values()}) == len(IDS)
