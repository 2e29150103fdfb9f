"""assignments/ is a self-contained nbgrader course directory: copied elsewhere as it is (to a
JupyterHub), nbgrader releases, hands out through its exchange and autogrades from it.

The copy keeps links as links (as `cp -a`, rsync or a git clone do), so a file that is only a
link into the rest of the repository would be missing there: nothing under assignments/ may be
a link. One section goes through the cycle, to keep the test short: `generate_assignment`,
`release_assignment` into an exchange of the test's own (every file of the source folder,
the students' README and the self-check wheel included, reaches the students), then
`autograde` of the correct example, which must get nbgrader's full points, and those are the
grader's maximum of the section (grades.csv).
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from autograder.core.sections import BY_ID
from course.builder import layout, points
from support import EXAMPLES, ROOT
from test_nbgrader_cycle import hand_in, nbgrader

ASSIGNMENTS = ROOT / "assignments"
SECTION = "01_scores"
# What nbgrader and an instructor leave in a working course directory (git-ignored): not the course.
WORK_FOLDERS = ("gradebook.db", "release", "submitted", "autograded", "feedback", "__pycache__")


def links_under(folder: Path) -> list[str]:
    """Every link under `folder`, relative to it (os.walk does not follow links to folders)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            if path.is_symlink():
                found.append(path.relative_to(folder).as_posix())
    return sorted(found)


def test_nothing_under_assignments_is_a_link():
    assert links_under(ASSIGNMENTS) == [], "assignments/ must hold real files: run `python -m course.builder`"


def test_a_link_is_found(tmp_path):
    (tmp_path / "source").mkdir()
    (tmp_path / "source" / "helper.py").symlink_to(ROOT / layout.HELPER)
    (tmp_path / "linked").symlink_to(tmp_path / "source")
    assert links_under(tmp_path) == ["linked", "source/helper.py"]


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """assignments/ copied to a folder outside the repository, links kept as links."""
    course = tmp_path_factory.mktemp("hub") / "attention-course"
    shutil.copytree(ASSIGNMENTS, course, symlinks=True, ignore=shutil.ignore_patterns(*WORK_FOLDERS))
    nbgrader(course, "generate_assignment", SECTION, "--force")
    return course


def test_the_copied_course_directory_releases_the_section_with_its_files(course):
    released = course / "release" / SECTION
    source = ASSIGNMENTS / "source" / SECTION
    expected = sorted(p.relative_to(source).as_posix() for p in source.rglob("*") if p.is_file())
    assert sorted(p.relative_to(released).as_posix() for p in released.rglob("*") if p.is_file()) == expected
    assert (released / layout.HELPER_NAME).read_bytes() == (ROOT / layout.HELPER).read_bytes()


def test_release_assignment_hands_out_the_readme_and_the_self_check(course):
    exchange = course.parent / "exchange"  # nbgrader's Exchange.root, /usr/local/share/nbgrader/exchange by default
    nbgrader(course, "release_assignment", SECTION, f"--Exchange.root={exchange}", "--force")
    outbound = exchange / "attention-course" / "outbound" / SECTION
    assert (outbound / f"{SECTION}.ipynb").is_file()
    readme = (outbound / "README.md").read_text(encoding="utf-8")
    assert f"python -m autograder check --section {SECTION}" in readme and "grader/*.whl" in readme
    wheels = [p.name for p in (outbound / "grader").glob("*.whl")]
    assert wheels == [p.name for p in (ROOT / layout.TEMPLATE_GRADER).glob("*.whl")]
    assert (outbound / "grader" / wheels[0]).read_bytes() == (ROOT / layout.TEMPLATE_GRADER / wheels[0]).read_bytes()


def test_autograde_in_the_copied_course_gives_the_correct_example_the_graders_maximum(course):
    from nbgrader.api import Gradebook

    hand_in(course, "alice", SECTION, EXAMPLES / "correct" / f"{SECTION}.ipynb")
    nbgrader(course, "autograde", SECTION, "--force")
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as book:
        submission = book.find_submission(SECTION, "alice")
        score, maximum = submission.score, book.find_notebook(SECTION, SECTION).max_score
    assert (course / "autograded" / "alice" / SECTION / f"{SECTION}.ipynb").is_file()
    assert score == maximum > 0
    assert maximum == points.section_maximum(BY_ID[SECTION])  # the grader's points (grades.csv)
