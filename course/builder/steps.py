"""The build as a declared list of steps, run in order over one shared state.

Each step does one job and says so in its name; it reads what earlier steps left in the `Build`
state and adds to it. The generated files collect in `build.result`, which course/builder/outputs.py
compares with the disk or writes.

Adding a step: write a class with a `name` and a `run(build)` method and put it in STEPS where
its inputs exist, and the paths of what it writes in layout.GENERATED_GLOBS, so that `--check`
also notices a stale one. ReleaseOtherLanguages, for instance, comes once the English notebooks
are complete and the self-check wheel made: it reads `build.sources`, translates their prose
(course/localized.py), releases them with nbgrader, and adds the files of every other language
(layout.LANGUAGES, layout.language_globs) to `build.result`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import nbformat

from autograder.core.sections import SECTIONS, Section
from autograder.i18n import catalogues
from autograder.instructor import selfcheck_export
from course import localized
from course.builder import layout
from course.builder.examples import correct_answers, correct_py, fill_notebook, partial_answers
from course.builder.nbgrader_release import release
from course.builder.notebooks import SourceNotebook, make_source_notebook, notebook_text
from course.builder.outputs import BuildResult
from course.builder.points import share_points
from course.builder.readme import section_readme, student_readme
from course.builder.reference import SolutionModule, read_solution_module
from course.builder.specs import SpecCell, read_spec


@dataclass
class Build:
    """What the steps share: the inputs' places, what each step made, and the generated files."""

    root: Path
    sections: tuple[Section, ...]
    spec_dir: Path
    solutions: dict[str, SolutionModule] = field(default_factory=dict)  # section id -> its reference module
    specs: dict[str, tuple[Path, list[SpecCell]]] = field(default_factory=dict)  # section id -> its spec
    sources: dict[str, SourceNotebook] = field(default_factory=dict)  # section id -> its source notebook
    released: dict[str, nbformat.NotebookNode] = field(default_factory=dict)  # section id -> what nbgrader released
    compiled: dict[str, bytes] = field(default_factory=dict)  # path -> a message catalogue's MO bytes
    result: BuildResult = field(default_factory=BuildResult)

    def with_spec(self) -> list[Section]:
        """The sections that have a notebook spec, in the registry's order."""
        return [section for section in self.sections if section.id in self.specs]


class Step(Protocol):
    name: str

    def run(self, build: Build) -> None: ...


class ReadSolutions:
    name = "read the reference solutions"

    def run(self, build: Build) -> None:
        for section in build.sections:
            build.solutions[section.id] = read_solution_module(section.solution_module, build.root)


class ReadSpecs:
    name = "read the notebook specs"

    def run(self, build: Build) -> None:
        for section in build.sections:
            path = layout.spec_path(section, build.spec_dir)
            if not path.is_file():  # a section without a spec yet gets only its correct_py example
                build.result.sections_without_spec.append(section.id)
                continue
            build.specs[section.id] = (path, read_spec(path))
            build.result.sections_built.append(section.id)


class MakeNotebooks:
    name = "make the source notebooks"

    def run(self, build: Build) -> None:
        for section in build.with_spec():
            path, cells = build.specs[section.id]
            build.sources[section.id] = make_source_notebook(
                section, path, cells, build.solutions[section.id], build.root)


class ShareOutPoints:
    name = "share out the points over the test cells"

    def run(self, build: Build) -> None:
        for section in build.with_spec():
            source = build.sources[section.id]
            share_points(section, source.tests, str(build.specs[section.id][0]))
            # complete now: the source notebook is what instructors keep in assignments/source/
            build.result.files[layout.SOURCE_NB.format(id=section.id)] = notebook_text(source.notebook())


class ReleaseWithNbgrader:
    name = "release the notebooks with nbgrader"

    def run(self, build: Build) -> None:
        sources = {section_id: source.notebook() for section_id, source in build.sources.items()}
        build.released = release(sources, build.root)
        for section_id, notebook in build.released.items():
            build.result.files[layout.RELEASED_NB.format(id=section_id)] = notebook_text(notebook)


class CompileCatalogues:
    name = "compile the grader's message catalogues"

    def run(self, build: Build) -> None:
        folder = build.root / catalogues.HERE.relative_to(catalogues.ROOT)
        build.compiled = catalogues.compiled(build.root, folder)
        build.result.blobs.update(build.compiled)


class MakeSelfCheckWheel:
    name = "make the self-check wheel"

    def run(self, build: Build) -> None:
        try:  # with the catalogues just compiled, not the MO files on disk, which may be stale
            wheel_name, wheel = selfcheck_export.build_wheel(build.root, build.compiled)
        except selfcheck_export.ExportError as error:
            raise layout.BuildError(f"the self-check wheel: {error}") from None
        build.result.blobs[f"{layout.TEMPLATE_GRADER}/{wheel_name}"] = wheel
        for section in build.with_spec():
            build.result.blobs[f"{layout.SOURCE_GRADER.format(id=section.id)}/{wheel_name}"] = wheel


class ReleaseOtherLanguages:
    name = "release the other languages"

    def run(self, build: Build) -> None:
        # the complete English source notebooks (points shared out) and the wheel, which every language carries
        sources = {section_id: source.notebook() for section_id, source in build.sources.items()}
        localized.add_languages(build.result, sources, build.root)  # its LocalizationError is a BuildError


class CopyStudentFiles:
    name = "copy the helper and the students' README next to the notebooks"

    def run(self, build: Build) -> None:
        files = build.result.files
        files[layout.STUDENT_README] = student_readme(build.root)
        if not build.specs:
            return
        helper = layout.helper_text(build.root)
        files[layout.TEMPLATE_HELPER] = helper
        build.result.links.update((rel, layout.HELPER) for rel in layout.LINKED_HELPERS)
        for section in build.with_spec():
            files[layout.SOURCE_HELPER.format(id=section.id)] = helper
            files[layout.SOURCE_README.format(id=section.id)] = section_readme(section, build.root)


class MakeExamples:
    name = "make the examples"

    def run(self, build: Build) -> None:
        files = build.result.files
        for section in build.sections:
            files[layout.CORRECT_PY.format(id=section.id)] = correct_py(section, build.root)
        for section in build.with_spec():
            released = build.released[section.id]
            correct = fill_notebook(released, correct_answers(section, build.root))
            files[layout.CORRECT_NB.format(id=section.id)] = notebook_text(correct)
            partial = fill_notebook(released, partial_answers(section, build.root))
            files[layout.PARTIAL_NB.format(id=section.id)] = notebook_text(partial)


# The build, in order. Each step's inputs are made by the steps before it.
STEPS: tuple[Step, ...] = (
    ReadSolutions(),
    ReadSpecs(),
    MakeNotebooks(),
    ShareOutPoints(),
    ReleaseWithNbgrader(),
    CompileCatalogues(),
    MakeSelfCheckWheel(),
    ReleaseOtherLanguages(),
    CopyStudentFiles(),
    MakeExamples(),
)


def build(root: Path = layout.ROOT, sections: tuple[Section, ...] = SECTIONS, spec_dir: Path | None = None,
          steps: tuple[Step, ...] = STEPS) -> BuildResult:
    """Compute every generated file in memory (specs from `spec_dir`, default course/notebooks)."""
    state = Build(root, sections, spec_dir or root / layout.SPEC_DIR)
    for step in steps:
        step.run(state)
    return state.result
