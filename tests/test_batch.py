"""`python -m autograder batch` and `merge`: a whole class, graded resumably.

The class: alice (correct, nbgrader's <student>/<assignment>/<assignment>.ipynb
layout), bob (partial, a flat folder like student_template/) and carol (a
notebook that is not JSON). One batch run is shared by the fast tests; the
interrupted run, the second run and the sharded runs are marked slow.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support import EXAMPLES, ROOT, cli_in_this_process, store_grade, zygote


SECTION = "01_scores"  # the class is graded on one section: the mechanics, not the checks, are tested here


def make_class(root: Path) -> Path:
    submitted = root / "submitted"
    for notebook in sorted((EXAMPLES / "correct").glob("*.ipynb")):
        folder = submitted / "alice" / notebook.stem
        folder.mkdir(parents=True)
        shutil.copy(notebook, folder / notebook.name)
    shutil.copytree(EXAMPLES / "partial", submitted / "bob")
    (submitted / "carol").mkdir()
    (submitted / "carol" / "01_scores.ipynb").write_text("this is not JSON {", encoding="utf-8")
    (submitted / ".ipynb_checkpoints").mkdir()  # not a student
    (submitted / "nobody").mkdir()  # no notebooks: not a student
    return submitted


def run_cli(*args, timeout=600):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def batch(submitted: Path, out: Path, *extra, timeout=600):
    done = run_cli("batch", submitted, "--out", out, "--device", "cpu", "--section", SECTION, *extra,
                   timeout=timeout)
    assert done.returncode == 0, done.stderr
    return done


def read_csv(out: Path):
    import pandas as pd

    return pd.read_csv(out / "grades.csv").set_index("student").sort_index()


def grades_of(out: Path) -> dict:
    """Student -> what was graded (without timings and timestamps)."""
    graded = {}
    for path in sorted((out / "students").glob("*.json")):
        result = json.loads(path.read_text())
        graded[path.stem] = (result["score"], result["max_score"], result["output"],
                             [(t["name"], t["score"], t["status"], t["output"]) for t in result["tests"]])
    return graded


def graded_names(stderr: str) -> list[str]:
    return sorted(line.split()[1].rstrip(":") for line in stderr.splitlines() if line.startswith("graded "))


def stored_grader_hashes(out: Path) -> set:
    return {json.loads(p.read_text())["extra_data"]["grader_sha256"] for p in (out / "students").glob("*.json")}


def skip_if_the_grader_changed(before: set):
    """Results are tied to the grader's checks: an edit of them mid-test means everything is regraded."""
    from autograder.instructor.student_files import grader_hash

    if before != {grader_hash()}:
        pytest.skip("the grader's checks were edited while this test ran")


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    root = tmp_path_factory.mktemp("class")
    submitted = make_class(root)
    out = root / "out"
    done = batch(submitted, out, "--jobs", "2")
    return submitted, out, done


# --------------------------------------------------------------------------- fast


def test_every_student_is_found_in_both_layouts(tmp_path):
    from autograder.instructor.batch import discover

    submitted = make_class(tmp_path)
    assert list(discover(submitted)) == ["alice", "bob", "carol"]
    assert list(discover(tmp_path)) == ["alice", "bob", "carol"]  # an nbgrader course folder


def test_shards_split_the_class_exactly_once():
    from autograder.instructor.batch import in_shard

    names = [f"s{i:02d}" for i in range(11)]
    parts = [in_shard(list(reversed(names)), (k, 3)) for k in (1, 2, 3)]
    assert sorted(sum(parts, [])) == names
    assert all(set(a).isdisjoint(b) for a in parts for b in parts if a is not b)
    assert in_shard(names, (2, 3)) == in_shard(names, (2, 3))


@pytest.mark.parametrize("args, message", [
    (["--shard", "3/2"], "--shard"),
    (["--shard", "0/2"], "--shard"),
    (["--shard", "half"], "--shard"),
    (["--jobs", "0"], "--jobs"),
])
def test_bad_arguments_are_one_line_and_exit_2(tmp_path, args, message):
    submitted = make_class(tmp_path)
    done = run_cli("batch", submitted, "--out", tmp_path / "out", "--device", "cpu", *args)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and message in done.stderr
    assert not (tmp_path / "out").exists()


def test_missing_or_empty_folders_exit_2(tmp_path, capsys):
    done = run_cli("batch", tmp_path / "nowhere")  # as a process: what a user's shell gets
    refusals = [(done.returncode, done.stderr)] + [  # the others in this one: no process start per refusal
        cli_in_this_process(capsys, *args) for args in (["batch", EXAMPLES / "correct", "--device", "cpu"],
                                                        ["merge", tmp_path / "nowhere", "--out", tmp_path / "merged"])]
    for code, stderr in refusals:
        assert code == 2, stderr
        assert stderr.startswith("autograder: error:") and stderr.count("\n") == 1, stderr


def one_check_grade(student: str, score: float):
    """A grade of one check of 01_scores worth 3 points, `score` of them earned."""
    from autograder.core.results import CheckResult, GradeResult, SectionResult

    check = CheckResult("01_scores", "a", 3.0, score, "" if score >= 3 else "wrong")
    return GradeResult(student, "cpu", [SectionResult("01_scores", "Scores", [check])])


def test_merge_keeps_every_student_and_writes_one_table(tmp_path):
    for shard, students in (("a", {"ann": 1.0, "dan": 2.0}), ("b", {"ben": 3.0, "dan": 0.5})):
        for name, score in students.items():
            stamp = "2026-01-02" if shard == "b" else "2026-01-01"
            store_grade(tmp_path / shard, one_check_grade(name, score), graded_at=stamp)
    done = run_cli("merge", tmp_path / "a", tmp_path / "b", "--out", tmp_path / "all")
    assert done.returncode == 0, done.stderr
    table = read_csv(tmp_path / "all")
    assert list(table.index) == ["ann", "ben", "dan"]
    assert list(table["total"]) == [1.0, 3.0, 0.5]  # dan: no handed-in times known, so the later graded wins
    assert list(table["01_scores"]) == [1.0, 3.0, 0.5]
    # only the sections graded are columns: one never assigned is absent, not a column of zeros
    assert list(table.columns) == ["01_scores", "total", "max_score", "status", "sandbox", "handed_in"]
    # the same folders in the other order: the same choice (never the command line's order)
    done = run_cli("merge", tmp_path / "b", tmp_path / "a", "--out", tmp_path / "reversed")
    assert done.returncode == 0, done.stderr
    assert list(read_csv(tmp_path / "reversed")["total"]) == [1.0, 3.0, 0.5]


def test_merge_prefers_a_result_without_grader_errors(tmp_path):
    for shard, score, errors in (("a", 2.0, []), ("b", 0.0, ["the job process died"])):
        store_grade(tmp_path / shard, one_check_grade("dan", score), grader_errors=errors,
                    graded_at="2026-01-0" + ("2" if shard == "b" else "1"))
    done = run_cli("merge", tmp_path / "a", tmp_path / "b", "--out", tmp_path / "all")
    assert done.returncode == 0, done.stderr
    assert list(read_csv(tmp_path / "all")["total"]) == [2.0]


def test_merge_leaves_out_a_file_without_a_grade_record(tmp_path):
    """A results.json alone (no record in it) is no grade: merge never reads the rendering back."""
    store_grade(tmp_path / "a", one_check_grade("ann", 3.0))
    rendering = one_check_grade("dan", 3.0).to_gradescope()
    (tmp_path / "a" / "students" / "dan.json").write_text(json.dumps(rendering))
    done = run_cli("merge", tmp_path / "a", "--out", tmp_path / "all")
    assert done.returncode == 0, done.stderr
    assert "dan.json: not a readable result, left out" in done.stderr
    assert list(read_csv(tmp_path / "all").index) == ["ann"]


def test_atomic_write_leaves_no_temporary_files(tmp_path):
    from autograder.core.files import write_atomically
    from autograder.instructor.student_files import remove_stale_temporaries

    write_atomically(tmp_path / "x.json", "{}")
    (tmp_path / ".y.json.abc.tmp").write_text("half a fi")  # what a killed run leaves
    remove_stale_temporaries(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.json"]


def test_class_table_matches_grade_on_each_student(graded_class):
    from autograder.feedback.formats import as_json
    from autograder.core.grade import run_checks
    from autograder.core.submission import locate

    submitted, out, done = graded_class
    assert graded_names(done.stderr) == ["alice", "bob", "carol"]
    table = read_csv(out)
    assert list(table.index) == ["alice", "bob", "carol"]
    for student in ("alice", "bob", "carol"):
        expected = json.loads(as_json(run_checks(locate(submitted / student, SECTION), "cpu", launcher=zygote())))
        got = json.loads((out / "students" / f"{student}.json").read_text())
        assert got["score"] == expected["score"] and got["max_score"] == expected["max_score"], student
        assert [(t["name"], t["score"]) for t in got["tests"]] == \
               [(t["name"], t["score"]) for t in expected["tests"]], student
        assert set(expected) <= set(got)  # the same schema as `grade --format json`, plus extra_data
        row = table.loc[student]
        assert row["total"] == pytest.approx(expected["score"])
        assert row["max_score"] == pytest.approx(expected["max_score"])
        assert list(table.columns) == [SECTION, "total", "max_score", "status", "sandbox", "handed_in"]
        for section in [SECTION]:
            points = sum(t["score"] for t in expected["tests"] if t["tags"][0] == section)
            assert row[section] == pytest.approx(points), (student, section)
    assert table.loc["alice", "total"] == table.loc["alice", "max_score"] > 0
    assert table.loc["carol", "total"] == 0
    # carol's broken notebook is her zero, refused as unreadable: neither "graded" nor a grader error
    assert dict(table["status"]) == {"alice": "graded", "bob": "graded",
                                     "carol": f"refused: {SECTION} (unreadable notebook)"}
    assert set(table["sandbox"]) <= {"namespaces", "landlock"}  # never graded unconfined by default
    assert "not valid JSON" in json.loads((out / "students" / "carol.json").read_text())["output"]


def test_unchanged_submissions_are_skipped(graded_class):
    submitted, out, _ = graded_class
    before = {p.name: p.stat().st_mtime_ns for p in (out / "students").glob("*.json")}
    hashes = stored_grader_hashes(out)
    done = batch(submitted, out, "--jobs", "2")
    skip_if_the_grader_changed(hashes)
    assert graded_names(done.stderr) == []
    assert done.stderr.count("unchanged ") == 3
    assert {p.name: p.stat().st_mtime_ns for p in (out / "students").glob("*.json")} == before


# --------------------------------------------------------------------------- slow


@pytest.mark.slow
def test_a_killed_batch_resumes_without_losing_or_redoing_work(graded_class, tmp_path):
    submitted, reference, _ = graded_class
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen([sys.executable, "-m", "autograder", "batch", str(submitted), "--out", str(out),
                                "--device", "cpu", "--section", SECTION, "--jobs", "1"], cwd=ROOT, env=env, start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while not list((out / "students").glob("*.json")):
        assert process.poll() is None and time.monotonic() < deadline, "no result appeared"
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    finished = {p.name: p.stat().st_mtime_ns for p in (out / "students").glob("*.json")}
    assert finished and len(finished) < 3
    for path in (out / "students").glob("*.json"):
        json.loads(path.read_text())  # whole files only

    hashes = stored_grader_hashes(out)
    done = batch(submitted, out, "--jobs", "2")
    skip_if_the_grader_changed(hashes)
    regraded = graded_names(done.stderr)
    assert not set(regraded) & {Path(name).stem for name in finished}
    assert sorted(regraded + [Path(name).stem for name in finished]) == ["alice", "bob", "carol"]
    for name, mtime in finished.items():
        assert (out / "students" / name).stat().st_mtime_ns == mtime
    assert grades_of(out) == grades_of(reference)
    assert read_csv(out).equals(read_csv(reference))
    assert not [p for p in out.rglob(".*.tmp")]


@pytest.mark.slow
def test_grading_twice_gives_identical_grades(graded_class, tmp_path):
    submitted, reference, _ = graded_class
    out = tmp_path / "again"
    shutil.copytree(reference, out)
    done = batch(submitted, out, "--force", "--jobs", "2")
    assert graded_names(done.stderr) == ["alice", "bob", "carol"]
    assert grades_of(out) == grades_of(reference)
    assert read_csv(out).equals(read_csv(reference))


@pytest.mark.slow
def test_shards_merged_equal_the_unsharded_batch(graded_class, tmp_path):
    submitted, reference, _ = graded_class
    first = batch(submitted, tmp_path / "s1", "--shard", "1/2", "--jobs", "1")
    second = batch(submitted, tmp_path / "s2", "--shard", "2/2", "--jobs", "1")
    assert graded_names(first.stderr) == ["bob", "carol"] and graded_names(second.stderr) == ["alice"]  # by hash
    done = run_cli("merge", tmp_path / "s1", tmp_path / "s2", "--out", tmp_path / "all")
    assert done.returncode == 0, done.stderr
    assert read_csv(tmp_path / "all").equals(read_csv(reference))
    assert grades_of(tmp_path / "all") == grades_of(reference)


JOBS_SCRIPT = """
import json, sys
from pathlib import Path
from autograder.core.record import from_record
from autograder.instructor.jobs import JobFailed, Jobs

folder = Path(sys.argv[1])
jobs = Jobs("cpu", {}, Path(sys.argv[2]), ["01_scores", "04_causal_mask"])
forked, = jobs.fork_all(1)
fresh = jobs.start(1)  # as a replacement is made: a new interpreter, a copy of the same zygote
results = [from_record(job.grade("alice", folder, None, 120)["result"]) for job in (forked, fresh)]
scores = [result.score for result in results]
# full marks: every check's own points, a bonus check's included
full = [sum(c.max_points for s in result.sections for c in s.checks) for result in results]
forked.process.kill()
try:
    forked.grade("bob", folder, None, 30)
    died = "no error"
except JobFailed as error:
    died = str(error)
for job in (forked, fresh):
    job.close()
jobs.close()
print(json.dumps({"scores": scores, "full": full, "died": died}))
"""


def test_forked_and_fresh_jobs_grade_alike_and_a_dead_job_is_a_reported_failure(tmp_path):
    # in a fresh process: forking this test process, which runs threads, is not what the batch does
    done = subprocess.run([sys.executable, "-c", JOBS_SCRIPT, str(EXAMPLES / "correct"), str(tmp_path / "logs")],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout.splitlines()[-1])
    assert outcome["scores"] == outcome["full"] and outcome["scores"][0] == outcome["scores"][1] > 0
    assert outcome["died"].startswith("the job process died")
