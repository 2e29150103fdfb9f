"""`batch --lang zh` (or ATTENTION_COURSE_LANG=zh): every student's results in Chinese.

The messages and titles of a grade are written where the grade is made, in the batch's job
processes; the class is graded in English and in Chinese, and the Chinese outputs (the students'
JSON files, their feedback reports, the batch's own lines) must hold none of the English texts of
the same checks, with the same scores.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support import EXAMPLES, ROOT

SECTION = "02_softmax"  # failures with messages and named mistakes, graded in a few seconds


def batch(submitted: Path, out: Path, *extra, env: dict | None = None) -> subprocess.CompletedProcess:
    inherited = {key: value for key, value in os.environ.items() if key != "ATTENTION_COURSE_LANG"}
    environment = {**inherited, "PYTHONPATH": str(ROOT), **(env or {})}
    done = subprocess.run([sys.executable, "-m", "autograder", "batch", str(submitted), "--out", str(out),
                           "--device", "cpu", "--section", SECTION, "--jobs", "1", "--report", *extra],
                          cwd=ROOT, env=environment, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done


def results(out: Path) -> dict:
    return {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in (out / "students").glob("*.json")
            if path.name != "index.json"}


def english_texts(out: Path) -> set[str]:
    """The English words of an English batch's grades: each check's title, each failure's message,
    each section's title (from the grade's record)."""
    texts = set()
    for data in results(out).values():
        for test in data["tests"]:
            texts.add(test["name"].split(": ", 1)[1])
            if test["output"]:
                texts.add(test["output"])
        for section in data["extra_data"]["record"]["sections"]:
            texts.add(section["title"])
    return texts


def scores(out: Path) -> dict:
    return {student: (data["score"], [(test["score"], test["status"]) for test in data["tests"]])
            for student, data in results(out).items()}


def chinese_outputs(out: Path, done: subprocess.CompletedProcess) -> dict[str, str]:
    """What a Chinese batch wrote for people: the students' files, the feedback reports, its lines."""
    written = {str(path.relative_to(out)): path.read_text(encoding="utf-8")
               for path in sorted([*(out / "students").glob("*.json"), *(out / "feedback").rglob("report.*")])}
    return {**written, "stdout": done.stdout, "stderr": done.stderr}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("languages")
    submitted = root / "submitted"
    shutil.copytree(EXAMPLES / "partial", submitted / "bob")
    (submitted / "carol").mkdir()
    shutil.copy(ROOT / "student_template" / f"{SECTION}.ipynb", submitted / "carol")
    english = batch(submitted, root / "en", "--lang", "en")
    chinese = batch(submitted, root / "zh", "--lang", "zh")
    return submitted, root, english, chinese


def assert_no_english(texts: set[str], outputs: dict[str, str]) -> None:
    assert len(texts) > 10, texts  # the class has failures, and their messages
    found = {(where, text) for where, output in outputs.items() for text in texts if text in output}
    assert not found, sorted(found)[:5]


def test_a_chinese_batch_writes_no_english_text_of_the_checks_and_the_same_scores(graded):
    _, root, english, chinese = graded
    assert scores(root / "zh") == scores(root / "en") and scores(root / "en")
    assert_no_english(english_texts(root / "en"), chinese_outputs(root / "zh", chinese))
    assert "graded bob" in english.stderr and "graded " not in chinese.stderr  # the batch's own lines
    assert "已评分 bob" in chinese.stderr


def test_the_environment_asks_for_chinese_and_an_english_grade_is_not_kept(graded, tmp_path):
    """A class graded in English, then again with ATTENTION_COURSE_LANG=zh: graded again (its
    texts were English), in Chinese, with the same scores; then kept as it is."""
    submitted, root, english, _ = graded
    out = tmp_path / "out"
    shutil.copytree(root / "en", out)
    again = batch(submitted, out, env={"ATTENTION_COURSE_LANG": "zh"})
    assert "已评分 bob" in again.stderr and "已评分 carol" in again.stderr, again.stderr
    assert scores(out) == scores(root / "en")
    assert_no_english(english_texts(root / "en"), chinese_outputs(out, again))
    kept = batch(submitted, out, env={"ATTENTION_COURSE_LANG": "zh"})
    assert "已评分" not in kept.stderr, kept.stderr


DEAD_JOB = """
import sys
from pathlib import Path
from autograder import i18n
from autograder.instructor.jobs import JobFailed, Jobs

i18n.set_language("zh")
jobs = Jobs("cpu", {}, Path(sys.argv[2]), ["01_scores"])
forked, = jobs.fork_all(1)
forked.process.kill()
try:
    forked.grade("bob", Path(sys.argv[1]), None, 30)
except JobFailed as error:
    print(error)
forked.close()
jobs.close()
"""


def test_a_job_that_died_is_said_in_the_batchs_language(tmp_path):
    """What the batch logs (and keeps as the student's grader error) when a job dies: Chinese too."""
    done = subprocess.run([sys.executable, "-c", DEAD_JOB, str(EXAMPLES / "partial"), str(tmp_path / "logs")],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    said = done.stdout.strip().splitlines()[-1]
    assert said.startswith("评分任务进程意外终止（退出状态 "), said
