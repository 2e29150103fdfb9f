"""Release the source notebooks with nbgrader, as an instructor's course would: what comes out
is what students receive (student_template/) and what the examples fill in."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

from course.builder.layout import HELPER_NAME, NBGRADER_CONFIG, ROOT, BuildError, helper_text
from course.builder.notebooks import notebook_metadata, notebook_text


def release(sources: dict[str, nbformat.NotebookNode], root: Path = ROOT,
            config_text: str | None = None) -> dict[str, nbformat.NotebookNode]:
    """Run `nbgrader generate_assignment` on each source notebook, in a scratch copy of
    the course directory (its gradebook and release/ never touch the repository), under the
    course's configuration, or under `config_text` (a language's: its own code stub).
    The plotting helper sits next to each source notebook, as in assignments/source/,
    and must come out next to the released one."""
    if not sources:
        return {}
    config = root / NBGRADER_CONFIG
    if not config.is_file():
        raise BuildError(f"{config}: missing nbgrader configuration")
    helper = helper_text(root)
    with tempfile.TemporaryDirectory(prefix="course-build-") as tmp:
        course_dir = Path(tmp)
        if config_text is None:
            shutil.copy(config, course_dir / "nbgrader_config.py")
        else:
            (course_dir / "nbgrader_config.py").write_text(config_text, encoding="utf-8", newline="\n")
        for section_id, nb in sources.items():
            target = course_dir / "source" / section_id / f"{section_id}.ipynb"
            target.parent.mkdir(parents=True)
            target.write_text(notebook_text(nb), encoding="utf-8", newline="\n")
            (target.parent / HELPER_NAME).write_text(helper, encoding="utf-8", newline="\n")
        result = _generate_assignments(course_dir)
        return {section_id: _released(course_dir, section_id, result, helper) for section_id in sources}


def _generate_assignments(course_dir: Path) -> subprocess.CompletedProcess:
    """One nbgrader run for all sections: its start-up costs more than the conversions."""
    # nbgrader runs `alembic` from PATH: make the interpreter's own scripts visible.
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "nbgrader", "generate_assignment", "*", "--force", "--log-level=WARN"],
        cwd=course_dir,
        capture_output=True,
        text=True,
        encoding="utf-8",  # not the locale's code page (cp1252 on Windows): nbgrader logs paths and names
        errors="replace",
        env=env,
    )


def _released(course_dir: Path, section_id: str, result: subprocess.CompletedProcess,
              helper: str) -> nbformat.NotebookNode:
    """The notebook nbgrader released for `section_id`, with the helper beside it."""
    out = course_dir / "release" / section_id / f"{section_id}.ipynb"
    if result.returncode != 0 or not out.is_file():
        raise BuildError(
            f"nbgrader generate_assignment failed ({result.returncode}) for {section_id}:\n"
            f"{result.stdout}\n{result.stderr}"
        )
    copied = out.parent / HELPER_NAME
    if not copied.is_file() or copied.read_text(encoding="utf-8") != helper:
        raise BuildError(f"nbgrader did not release {HELPER_NAME} next to {section_id}.ipynb")
    return clean_released(nbformat.read(out, as_version=4))


def clean_released(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Drop what nbgrader adds that is not needed and could vary between runs; keep the
    language of the prose (`metadata["course"]`), which the source notebook recorded."""
    course = nb.metadata.get("course")
    nb.metadata = notebook_metadata()
    if course:
        nb.metadata["course"] = course
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        for key in ("collapsed", "scrolled", "execution"):
            cell.metadata.pop(key, None)
    return nb
