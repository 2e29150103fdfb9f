"""A term graded week by week into one output folder: `batch --assignment`, several `--section` ids,
runs that add to what the folder holds, `merge` of folders of different sections, the assignments
file, and Gradescope's archive of one assignment.

The class (5 students, each hands in that week's notebooks): ann (correct, nbgrader's layout), bob
(partial, a flat folder), cat (correct until she changes 02 in week 2), dan, who joins in week 2, and
eve, who hands in week 1 and then has no folder any more.
One three-week run is shared by the tests that read it (module fixture); the others are fast.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import EXAMPLES, ROOT, cli_in_this_process, store_grade

WEEKS = {"week1": ["01_scores", "02_softmax"], "week2": ["03_trainable_qkv", "04_causal_mask"],
         "week3": ["05_padding_mask", "06_multihead", "07_positional_encoding"],
         "week4": ["08_efficient_mha", "09_kv_cache", "10_grouped_query"],
         "week5": ["11_sliding_window", "12_rope", "13_tiled_attention"]}
BONUS = "07_positional_encoding"
TABLE_END = ["total", "max_score", "status", "sandbox", "handed_in"]


def run_cli(*args, timeout=600):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def hand_in(submitted: Path, student: str, example: str, section_ids: list[str], nbgrader: bool = False) -> None:
    """Copy `example`'s notebooks of `section_ids` into the student's folder (nbgrader's layout or flat)."""
    for section_id in section_ids:
        target = submitted / student / section_id if nbgrader else submitted / student
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy(EXAMPLES / example / f"{section_id}.ipynb", target / f"{section_id}.ipynb")


def week_of(submitted: Path, week: str) -> None:
    sections = WEEKS[week]
    hand_in(submitted, "ann", "correct", sections, nbgrader=True)
    hand_in(submitted, "bob", "partial", sections)
    hand_in(submitted, "cat", "correct", sections)
    if week != "week1":  # dan joins in week 2
        hand_in(submitted, "dan", "partial", sections)
    if week == "week1":  # eve hands in week 1 only; from week 2 on, SUBMITTED_DIR has no folder of hers
        hand_in(submitted, "eve", "correct", sections)
    else:
        shutil.rmtree(submitted / "eve", ignore_errors=True)


def read_csv(out: Path):
    import pandas as pd

    return pd.read_csv(out / "grades.csv").set_index("student").sort_index()


def student_file(out: Path, student: str) -> dict:
    return json.loads((out / "students" / f"{student}.json").read_text())


def graded_names(stderr: str) -> list[str]:
    return sorted(line.split()[1].rstrip(":") for line in stderr.splitlines() if line.startswith("graded "))


def assigned_by(week: str) -> list[str]:
    weeks = list(WEEKS)
    return [s for w in weeks[:weeks.index(week) + 1] for s in WEEKS[w]]


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    """Three weeks graded into one folder; after each, a copy of the folder and the run's stderr."""
    root = tmp_path_factory.mktemp("term")
    submitted, out = root / "submitted", root / "grades"
    after, logs = {}, {}
    for week in WEEKS:
        week_of(submitted, week)
        if week == "week2":  # cat changes a week-1 notebook: a week-2 run grades week 2 only
            shutil.copy(EXAMPLES / "partial" / "02_softmax.ipynb", submitted / "cat" / "02_softmax.ipynb")
            selection = ["--section", "03_trainable_qkv", "--section", "04"]  # several ids, a short one too
        else:
            selection = ["--assignment", week]
        done = run_cli("batch", submitted, "--out", out, "--device", "cpu", "--jobs", "2", *selection,
                       *(["--report"] if week != "week3" else []))
        assert done.returncode == 0, done.stderr
        logs[week] = done.stderr
        after[week] = root / f"after_{week}"
        shutil.copytree(out, after[week])
    return submitted, out, after, logs


def test_each_week_counts_only_the_sections_assigned_so_far(term):
    _, _, after, _ = term
    for week in WEEKS:
        assigned = assigned_by(week)
        core = [s for s in assigned if s != BONUS]
        table = read_csv(after[week])
        assert list(table.columns) == assigned + TABLE_END, week
        students = ["ann", "bob", "cat"] + ([] if week == "week1" else ["dan"]) + ["eve"]
        assert list(table.index) == students, week
        # every section is worth 10 points; the bonus adds to the score, never to the maximum
        assert set(table["max_score"]) == {10.0 * len(core)}, week
        assert table.loc["ann", "total"] == table.loc["ann", "max_score"] + (10.0 if BONUS in assigned else 0.0)
        assert (table[assigned].sum(axis=1) == table["total"]).all(), week
        for student in students:
            data = student_file(after[week], student)
            assert data["max_score"] == 10.0 * len(core)
            tags = {test["tags"][0] for test in data["tests"]}
            assert tags == set(assigned), (week, student)  # no test of a section not assigned
            assert data["extra_data"]["sections"] == assigned
            assert not [line for line in data["output"].splitlines()
                        if line[:2].isdigit() and line.split(":")[0] not in assigned]


def test_unassigned_sections_are_nowhere_in_week_one(term):
    _, _, after, _ = term
    from autograder.core.sections import BY_ID

    report = (after["week1"] / "feedback" / "ann" / "report.md").read_text()
    assert report.startswith("## Attention course feedback: 20 / 20\n")
    shown = [s for s in assigned_by("week3") if BY_ID[s].title in report]
    assert shown == WEEKS["week1"]
    assert "not handed in" not in json.dumps(student_file(after["week1"], "ann"))
    done = run_cli("report", after["week1"], "--out", after["week1"] / "class")
    assert done.returncode == 0, done.stderr
    import pandas as pd

    checks = pd.read_csv(after["week1"] / "class" / "class_checks.csv")
    assert set(checks["section"]) == set(WEEKS["week1"])  # the hardest checks: none of a later week's
    sections = pd.read_csv(after["week1"] / "class" / "class_sections.csv")
    assert set(sections["section"]) == set(WEEKS["week1"]) | {"total"}


def test_earlier_weeks_are_kept_and_not_graded_again(term):
    _, _, after, logs = term
    first, last = student_file(after["week1"], "ann"), student_file(after["week3"], "ann")
    for section in WEEKS["week1"]:  # the same grade, from the same grading
        assert last["extra_data"]["graded"][section] == first["extra_data"]["graded"][section]
    first_scores, last_scores = read_csv(after["week1"]), read_csv(after["week3"])
    for student in ("ann", "bob", "cat"):
        for section in WEEKS["week1"]:
            assert last_scores.loc[student, section] == first_scores.loc[student, section], (student, section)
    # cat changed 02 after week 1: the week-2 run (of 03, 04) leaves her week-1 grade as it was
    assert read_csv(after["week2"]).loc["cat", "02_softmax"] == first_scores.loc["cat", "02_softmax"] == 10.0
    # ... and says so, naming the command that grades it again (an old grade is never kept without a word)
    said = [line for line in logs["week2"].splitlines() if "was handed in again" in line]
    assert said == ["cat: 02_softmax was handed in again after it was graded; this run does not grade it and its "
                    "grade stays as it was: grade it again with --section 02_softmax"], said
    # dan joined in week 2: that run graded the week-1 sections he has no grade of (not handed in: zeros)
    dan = student_file(after["week2"], "dan")
    assert list(dan["extra_data"]["graded"]) == assigned_by("week2")
    assert read_csv(after["week2"]).loc["dan", "01_scores"] == 0.0
    assert "01_scores.ipynb was not handed in" in dan["output"]
    assert graded_names(logs["week3"]) == ["ann", "bob", "cat", "dan", "eve"]


def test_a_student_of_the_folder_without_a_folder_this_run_hands_in_nothing(term):
    submitted, _, after, logs = term
    assert not (submitted / "eve").exists()
    for week in ("week2", "week3"):  # eve's sections of the run: zeros, "not handed in", in her file and the table
        eve, table = student_file(after[week], "eve"), read_csv(after[week])
        missing = [s for s in assigned_by(week) if s not in WEEKS["week1"]]
        assert f"no folder for eve in {submitted}: graded as not handed in ({', '.join(WEEKS[week])})" in logs[week]
        assert list(eve["extra_data"]["graded"]) == assigned_by(week)
        assert [table.loc["eve", s] for s in missing] == [0.0] * len(missing)
        assert table.loc["eve", "total"] == 20.0  # her week-1 grade stands
        for section in missing:
            assert f"{section}.ipynb was not handed in" in eve["output"], (week, section)
        assert table.loc["eve", "status"] == "graded, not handed in: " + " ".join(missing), week
    # her feedback report follows her grade, though she has no folder
    report = (after["week2"] / "feedback" / "eve" / "report.md").read_text()
    assert report.startswith("## Attention course feedback: 20 / 40\n") and "not handed in" in report
    # dan joined in week 2 with week 2's notebooks only: the table says which sections he lacks
    assert read_csv(after["week2"]).loc["dan", "status"] == "graded, not handed in: 01_scores 02_softmax"
    assert read_csv(after["week1"]).loc["eve", "status"] == "graded"


def test_a_full_run_after_the_term_grades_only_what_changed(term):
    submitted, out, _, _ = term
    done = run_cli("batch", submitted, "--out", out, "--device", "cpu", "--jobs", "2")
    assert done.returncode == 0, done.stderr
    # every section is assigned now; only cat's changed 02 is graded again, per section; eve's
    # week 1, whose notebooks this SUBMITTED_DIR does not hold any more: not handed in now; and dan's
    # week 1, not handed in, whose message names the notebooks his folder holds: week 3's are new
    assert graded_names(done.stderr) == ["cat", "dan", "eve"]
    assert "unchanged dan: 03_trainable_qkv" in done.stderr
    assert "unchanged cat: 01_scores, 03_trainable_qkv" in done.stderr
    assert student_file(out, "cat")["extra_data"]["graded"]["02_softmax"]["graded_at"]
    table = read_csv(out)
    assert table.loc["cat", "02_softmax"] < 10.0  # the partial notebook she handed in later
    assert table.loc["eve", "total"] == 0.0 and len(set(table["max_score"])) == 1
    again = run_cli("batch", submitted, "--out", out, "--device", "cpu", "--assignment", "week1")
    assert again.returncode == 0, again.stderr
    assert graded_names(again.stderr) == [] and again.stderr.count("unchanged ") == 5


# --------------------------------------------------------------------------- fast


def one_section(student: str, section_id: str, score: float):
    """A grade of one check of `section_id` worth 10 points, `score` of them earned."""
    from autograder.core.results import CheckResult, GradeResult, SectionResult

    check = CheckResult(section_id, "a", 10.0, score, "" if score >= 10 else "wrong")
    return GradeResult(student, "cpu", [SectionResult(section_id, section_id, [check])])


def test_each_shard_grades_its_share_of_the_class_and_its_own_folder_s_absent_students(tmp_path):
    from autograder.instructor.shards import OTHER_SHARDS, shard_of

    submitted = tmp_path / "submitted"
    for name in ("ann", "bob", "dan"):
        hand_in(submitted, name, "correct", ["01_scores"])
    # ida and cat were graded into shard 1's folder earlier and have no folder now: ida belongs to
    # shard 1 (a hash of the id), cat to shard 2, whose folder does not know her
    assert (shard_of("ida", 2), shard_of("cat", 2)) == (1, 2)
    for name in ("ida", "cat"):
        store_grade(tmp_path / "shard1", one_section(name, "01_scores", 10.0), sections=["01_scores"])
    graded = {}
    for shard in ("1/2", "2/2"):
        out = tmp_path / f"shard{shard[0]}"
        done = run_cli("batch", submitted, "--out", out, "--device", "cpu", "--section", "01_scores",
                       "--shard", shard)
        assert done.returncode == 0, done.stderr
        graded[shard] = graded_names(done.stderr)
    # the shares of SUBMITTED_DIR's students do not depend on who else a shard's folder holds
    assert graded == {"1/2": ["ann", "bob", "ida"], "2/2": ["dan"]}
    assert read_csv(tmp_path / "shard1").loc["ida", "status"] == "graded, not handed in: 01_scores"
    # cat is another shard's: her result is set aside, out of the table and of what merge reads
    assert "cat" not in read_csv(tmp_path / "shard1").index
    assert [p.name for p in (tmp_path / "shard1" / OTHER_SHARDS).iterdir()] == ["cat.json"]


def test_the_status_names_the_sections_not_handed_in_as_ids():
    from autograder.core.results import CheckResult, GradeResult, SectionResult
    from autograder.instructor.grades_table import status_of
    from autograder.instructor.student_files import Stored

    def section(section_id: str, *kinds: str) -> SectionResult:
        return SectionResult(section_id, section_id, [CheckResult(section_id, f"c{i}", 1.0, 0.0, "x", kind)
                                                      for i, kind in enumerate(kinds)])

    sections = [section("01_scores", "not_handed_in", "not_handed_in"), section("02_softmax", "tampering"),
                section("03_trainable_qkv", "not_handed_in", "stub"),  # handed in with a stub left: handed in
                section("04_causal_mask", "not_handed_in")]
    stored = Stored("ann", GradeResult("ann", "cpu", sections), {})
    assert status_of(stored) == "refused: 02_softmax (tampering), not handed in: 01_scores 04_causal_mask"
    assert status_of(Stored("ann", GradeResult("ann", "cpu", sections[2:3]), {})) == "graded"
    assert status_of(Stored("ann", GradeResult("ann", "cpu", sections), {"grader_errors": ["boom"]})) == "grader error"


def test_merge_joins_folders_of_different_sections(tmp_path):
    import pandas as pd

    handed = {"w1": "2026-11-01T09:00:00+00:00", "w2": "2026-11-08T09:00:00+00:00",
              "redo": "2026-11-10T09:00:00+00:00"}
    for folder, section, scores in (("w1", "01_scores", {"ann": 10.0, "bob": 4.0}),
                                    ("w2", "02_softmax", {"ann": 6.0, "cat": 8.0}),
                                    ("redo", "01_scores", {"ann": 7.0})):
        for name, score in scores.items():
            store_grade(tmp_path / folder, one_section(name, section, score), sections=[section],
                        graded={section: {"graded_at": folder, "handed_in": handed[folder]}})
    done = run_cli("merge", tmp_path / "w1", tmp_path / "w2", "--out", tmp_path / "all")
    assert done.returncode == 0, done.stderr
    table = read_csv(tmp_path / "all")
    assert list(table.columns) == ["01_scores", "02_softmax"] + TABLE_END
    assert table.loc["ann", "total"] == 16.0 and table.loc["ann", "max_score"] == 20.0
    assert table.loc["bob", "01_scores"] == 4.0 and pd.isna(table.loc["bob", "02_softmax"])  # no grade: empty
    assert table.loc["cat", "total"] == 8.0 and table.loc["cat", "max_score"] == 10.0
    ann = student_file(tmp_path / "all", "ann")
    assert [t["tags"][0] for t in ann["tests"]] == ["01_scores", "02_softmax"]
    assert ann["extra_data"]["sections"] == ["01_scores", "02_softmax"]
    assert ann["extra_data"]["graded"] == {"01_scores": {"graded_at": "w1", "handed_in": handed["w1"]},
                                           "02_softmax": {"graded_at": "w2", "handed_in": handed["w2"]}}
    # a section in two folders: the newest handed-in file wins, section by section, in any order
    for order in (["w1", "w2", "redo"], ["redo", "w2", "w1"]):
        done = run_cli("merge", *(tmp_path / folder for folder in order), "--out", tmp_path / "redone")
        assert done.returncode == 0, done.stderr
        assert read_csv(tmp_path / "redone").loc["ann", "01_scores"] == 7.0
        assert read_csv(tmp_path / "redone").loc["ann", "02_softmax"] == 6.0


def test_several_section_ids_and_assignments_choose_the_same_sections(tmp_path):
    from autograder.instructor.assignments import chosen_sections

    assert chosen_sections(None, ["02_softmax,01_scores"]) == ["01_scores", "02_softmax"]
    assert chosen_sections(None, ["01", "softmax", "01_scores"]) == ["01_scores", "02_softmax"]
    assert chosen_sections(["week1"], None) == ["01_scores", "02_softmax"]
    assert chosen_sections(["week1,week3"], ["04_causal_mask"]) == [
        "01_scores", "02_softmax", "04_causal_mask", "05_padding_mask", "06_multihead", BONUS]
    assert chosen_sections(None, None) is None


def test_grade_takes_several_sections(tmp_path):
    from support import zygote

    from autograder.core.grade import run_checks
    from autograder.core.submission import locate

    result = run_checks(locate(tmp_path, ["01_scores,04_causal_mask"]), "cpu", launcher=zygote())
    assert [s.id for s in result.sections] == ["01_scores", "04_causal_mask"]
    assert result.score == 0 and result.max_score == 20.0  # both not handed in; nothing else counted


def refused(capsys, in_process: bool, *args) -> tuple[int, str]:
    """(exit status, stderr) of the command line `args`: as a process of its own (the first case of each kind
    below), or in this one (support.cli_in_this_process)."""
    if in_process:
        return cli_in_this_process(capsys, *args)
    done = run_cli(*args)
    return done.returncode, done.stderr


@pytest.mark.parametrize("text, message, in_process", [
    ('week1 = ["01_scores"\n', "assignments.toml:1: not valid TOML", False),
    ('# a comment\nweek1 = ["01_scores"]\nweek2 = ["03_trainable_qkv", "09_rnn"]\n',
     "assignments.toml:3: week2: unknown section '09_rnn'", True),
    ('week1 = "01_scores"\n', "assignments.toml:1: week1: expected a list of section ids", True),
    ('week1 = []\n', "assignments.toml:1: week1: expected a list of section ids", True),
    ('week1 = ["01_scores"]\nweek1 = ["02_softmax"]\n', "assignments.toml:2: not valid TOML", True),
])
def test_a_mistake_in_the_assignments_file_is_one_line_naming_file_and_line(tmp_path, capsys, text, message,
                                                                            in_process):
    path = tmp_path / "assignments.toml"
    path.write_text(text)
    submitted = tmp_path / "submitted"
    hand_in(submitted, "ann", "correct", ["01_scores"])
    code, stderr = refused(capsys, in_process, "batch", submitted, "--out", tmp_path / "out", "--device", "cpu",
                           "--assignment", "week1", "--assignments", path)
    assert code == 2
    assert stderr.count("\n") == 1 and message in stderr, stderr
    assert not (tmp_path / "out").exists()  # nothing graded


@pytest.mark.parametrize("args, message, in_process", [
    (["--assignment", "week9"], "--assignment 'week9': not in", False),
    (["--section", "01_scores,99_nothing"], "unknown section '99_nothing'", True),
    (["--section", ","], "--section: no section named", True),
    (["--assignment", "week1", "--assignments", "nowhere.toml"], "nowhere.toml: no such file", True),
])
def test_a_bad_selection_is_one_line_and_exit_2(tmp_path, capsys, args, message, in_process):
    submitted = tmp_path / "submitted"
    hand_in(submitted, "ann", "correct", ["01_scores"])
    code, stderr = refused(capsys, in_process, "batch", submitted, "--out", tmp_path / "out", "--device", "cpu",
                           *args)
    assert code == 2 and stderr.count("\n") == 1 and message in stderr, stderr
    assert not (tmp_path / "out").exists()


def test_the_course_s_assignments_file_is_the_three_week_example():
    from autograder.instructor.assignments import read_assignments

    assert read_assignments() == WEEKS


# --------------------------------------------------------------------------- Gradescope, one assignment


def moved_run_autograder(source: Path, submission: Path, results: Path, tmp_path: Path) -> Path:
    """The archive's run_autograder with Gradescope's paths moved under tmp_path and this interpreter."""
    venv = Path(sys.executable).parent.parent
    script = ((source / "run_autograder").read_text()
              .replace("/autograder/results/results.json", str(results))
              .replace("/autograder/submission", str(submission))
              .replace("/autograder/source", str(source)).replace("/autograder/venv", str(venv)))
    path = tmp_path / "run_autograder"
    path.write_text(script)
    return path


def test_one_assignment_s_archive_grades_its_sections_only(tmp_path):
    import zipfile

    out = tmp_path / "week1.zip"
    done = run_cli("export-gradescope", "--assignment", "week1", "--out", out)
    assert done.returncode == 0, done.stderr
    assert "Landlock tier (Linux >= 5.13)" in done.stderr  # logged with the "wrote ..." line (gone with -q)
    source = tmp_path / "source"
    with zipfile.ZipFile(out) as archive:
        archive.extractall(source)
    results = tmp_path / "results" / "results.json"
    script = moved_run_autograder(source, EXAMPLES / "correct", results, tmp_path)
    graded = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=600)
    assert graded.returncode == 0, graded.stderr
    data = json.loads(results.read_text())
    assert {test["tags"][0] for test in data["tests"]} == set(WEEKS["week1"])  # a whole course handed in
    assert data["score"] == data["max_score"] == 20.0
    # an empty submission, as an instructor's test student: the tier Gradescope's machine gives
    empty = tmp_path / "empty"
    empty.mkdir()
    results.unlink()
    script = moved_run_autograder(source, empty, results, tmp_path)
    graded = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=600)
    assert graded.returncode == 0, graded.stderr
    data = json.loads(results.read_text())
    assert data["extra_data"]["sandbox"] in ("namespaces", "landlock")
    assert f"sandbox: tier {data['extra_data']['sandbox']}" in graded.stderr
    assert data["score"] == 0 and data["max_score"] == 20.0


def test_the_archive_pins_what_the_course_is_tested_with():
    """Every package Gradescope's setup.sh installs is bounded, and this environment (the course's tests)
    is inside each bound."""
    import shlex
    from importlib.metadata import version

    from packaging.requirements import Requirement

    from autograder.instructor.gradescope import PIP_REQUIREMENT, grading_requirements, setup_sh

    setup = setup_sh()
    for text in [*grading_requirements(), PIP_REQUIREMENT]:
        requirement = Requirement(text)
        assert requirement.specifier, f"{text}: not pinned"
        assert version(requirement.name) in requirement.specifier, f"{text}: not what this environment has"
        assert shlex.quote(text) in setup


def test_a_section_graded_with_errors_is_graded_again_by_the_next_run_whatever_it_grades():
    from autograder.instructor.student_files import Stored
    from autograder.instructor.term import combined, provenance_after, to_grade

    week1 = one_section("ann", "01_scores", 10.0)
    week1.sections += one_section("ann", "02_softmax", 10.0).sections
    before = Stored("ann", week1, provenance_after(None, {"student": "ann"}, {"01_scores": "a", "02_softmax": "b"},
                                                    "g", "cpu", ok=True))
    assert to_grade(before, ["03_trainable_qkv"], ["01_scores", "02_softmax", "03_trainable_qkv"]) == [
        "03_trainable_qkv"]
    # 02 graded again (its notebook changed), and the grading had errors: its entry goes, its section stays
    failed = provenance_after(before, {"student": "ann", "grader_errors": ["boom"]}, {"02_softmax": "c"}, "g", "cpu",
                              ok=False)
    after = Stored("ann", combined(week1, one_section("ann", "02_softmax", 0.0)), failed)
    assert list(after.graded) == ["01_scores"] and after.sections == ["01_scores", "02_softmax"]
    assert [s.id for s in after.grade.sections] == ["01_scores", "02_softmax"] and after.grade.score == 10.0
    # the next run, of another week, grades 02 again with its own section
    assert to_grade(after, ["03_trainable_qkv"], ["01_scores", "02_softmax", "03_trainable_qkv"]) == [
        "02_softmax", "03_trainable_qkv"]
