"""Setting up the student's folder in one go, in both languages: the README's install lines give up
fast where the package index cannot be reached, the folder the student pushes leaves out the
environment, Jupyter's checkpoints and the feedback, and the notebooks point at README headings
that exist."""
from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
from support import ROOT

TEMPLATES = [ROOT / "student_template", ROOT / "student_template" / "zh"]
NOT_PUSHED = [".venv/bin/python", ".venv/Lib/site-packages/torch/__init__.py", ".ipynb_checkpoints/01_scores-checkpoint.ipynb",
              "feedback/report.html", "feedback/heatmaps/a.svg"]
PUSHED = ["01_scores.ipynb", "attention_plots.py", "README.md"]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize("folder", TEMPLATES, ids=lambda folder: folder.name)
def test_the_template_leaves_the_environment_checkpoints_and_feedback_out_of_a_push(folder, tmp_path):
    """The folder's own .gitignore, alone in a repository of its own (as a student's is), not the course's."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=60)
    shutil.copy(folder / ".gitignore", tmp_path / ".gitignore")

    def ignored(path: str) -> bool:
        done = subprocess.run(["git", "check-ignore", "--no-index", "-q", path], cwd=tmp_path, timeout=60)
        return done.returncode == 0

    assert [path for path in NOT_PUSHED if not ignored(path)] == []
    assert [path for path in PUSHED if ignored(path)] == []


def install_lines(readme: str) -> list[str]:
    return [line for line in readme.splitlines() if re.match(r"\s*python -m pip install ", line)]


@pytest.mark.parametrize("folder", TEMPLATES, ids=lambda folder: folder.name)
def test_every_install_line_gives_up_fast_where_the_index_is_unreachable(folder):
    lines = install_lines((folder / "README.md").read_text(encoding="utf-8"))
    assert len(lines) >= 9  # three systems, three lines each
    slow = [line for line in lines if not re.search(r"--timeout \d+ --retries [01]\b", line)]
    assert slow == []


@pytest.mark.parametrize("folder", TEMPLATES, ids=lambda folder: folder.name)
def test_the_notebooks_name_a_readme_heading_that_exists(folder):
    readme = (folder / "README.md").read_text(encoding="utf-8")
    headings = [line.lstrip("#").strip() for line in readme.splitlines() if line.startswith("#")]
    for notebook in sorted(folder.glob("*.ipynb")):
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        said = [line for cell in cells if cell["cell_type"] == "code"
                for line in "".join(cell["source"]).splitlines() if "README" in line]
        assert said, notebook.name
        for line in said:
            assert any(heading and heading in line for heading in headings), (notebook.name, line)
