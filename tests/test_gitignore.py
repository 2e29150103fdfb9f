"""What the course's tools write where they are run is git-ignored there, and what the templates
hand out is not: the course repository (the instructor's grading and its CI), the nbgrader course
directories, and the student templates (the self-check and its CI job)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from support import ROOT

GRADING = ["grades/grades.csv", "grades/students/alice.json", "grades/index.json", "similarity/similarity.html",
           "submitted/alice/01_scores.ipynb", "feedback/alice/report.md"]
SELF_CHECK = ["feedback/report.md", "self-check.md", "self-check.json", "report.xml", "grades/grades.csv",
              "similarity/similarity.csv"]
# each folder is handed out or copied on its own (the course repository, the nbgrader course directory
# copied to the hub, each student template): the tools it runs -> what they write there
WRITTEN = {
    ".": GRADING + ["grades-shard-1/grades.csv", "shards/grades-shard-1/students/alice.json",
                    "assignments/grades.csv", "assignments/zh/grades.csv"],  # `nbgrader export` where it runs
    "assignments": GRADING + [f"zh/{path}" for path in GRADING] + ["grades.csv", "zh/grades.csv"],
    "student_template": SELF_CHECK,
    "student_template/zh": SELF_CHECK,
}
HANDED_OUT = {
    ".": ["README.md", "ci/roster.example.txt", "student_template/01_scores.ipynb"],
    "assignments": ["nbgrader_config.py", "source/01_scores/01_scores.ipynb", "source/01_scores/grader/wheel.whl",
                    "zh/nbgrader_config.py", "zh/source/01_scores/README.md"],
    "student_template": ["01_scores.ipynb", "README.md", "attention_plots.py", "grader/wheel.whl"],
    "student_template/zh": ["01_scores.ipynb", "README.md", "attention_plots.py", "grader/wheel.whl"],
}


def ignored(folder: str, paths: list[str], tmp_path: Path) -> set[str]:
    """Which of `paths` git ignores in a repository holding `folder`'s .gitignore alone (as when the
    folder is copied or handed out on its own)."""
    repo = tmp_path / ("course" if folder == "." else folder.replace("/", "-"))
    repo.mkdir()
    shutil.copy(ROOT / folder / ".gitignore", repo / ".gitignore")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    done = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], cwd=repo, input="\n".join(paths),
                          capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr  # 1: none ignored
    return set(done.stdout.split())


def test_what_the_tools_write_is_ignored_where_they_run(tmp_path):
    missed = {folder: sorted(set(paths) - ignored(folder, paths, tmp_path)) for folder, paths in WRITTEN.items()}
    assert missed == {folder: [] for folder in WRITTEN}


def test_what_the_templates_hand_out_is_not_ignored(tmp_path):
    wrongly = {folder: sorted(ignored(folder, paths, tmp_path)) for folder, paths in HANDED_OUT.items()}
    assert wrongly == {folder: [] for folder in HANDED_OUT}
