"""Where the build reads its inputs and writes its outputs, relative to the repository root.

Every generated path has one pattern here (`{id}`: a section's id), so the steps that
make a file and the check that finds a stale one agree on its name.
"""
from __future__ import annotations

from pathlib import Path

from autograder.core.sections import Section

ROOT = Path(__file__).resolve().parents[2]


class BuildError(Exception):
    """A spec, a solutions module or the partial data does not fit the contract
    (the message starts with the file, and its line where one is to blame)."""


# Hand-written inputs.
SPEC_DIR = "course/notebooks"  # one notebook spec per section, <id>.py
HELPER = "course/attention_plots.py"  # the plotting helper the notebooks import
README_SOURCE = "course/student_readme.md"  # the students' README, with {{placeholders}}
NBGRADER_CONFIG = "assignments/nbgrader_config.py"

# Generated notebooks and examples.
SOURCE_NB = "assignments/source/{id}/{id}.ipynb"
RELEASED_NB = "student_template/{id}.ipynb"
CORRECT_NB = "examples/correct/{id}.ipynb"
PARTIAL_NB = "examples/partial/{id}.ipynb"
CORRECT_PY = "examples/correct_py/{id}.py"
# Copies of the helper, the students' README and the self-check next to the notebooks.
HELPER_NAME = "attention_plots.py"
SOURCE_HELPER = "assignments/source/{id}/" + HELPER_NAME
SOURCE_README = "assignments/source/{id}/README.md"
SOURCE_GRADER = "assignments/source/{id}/grader"
TEMPLATE_HELPER = "student_template/" + HELPER_NAME
STUDENT_README = "student_template/README.md"
LINKED_HELPERS = tuple(f"{folder}/{HELPER_NAME}" for folder in ("examples/correct", "examples/partial"))
# The grader's message catalogues, compiled from the PO files the translators edit (binary, like the wheel).
CATALOGUE_MO = "autograder/i18n/*/LC_MESSAGES/*.mo"
# The self-check wheel: its name carries the course version, so an older one is noticed as stale.
TEMPLATE_GRADER = "student_template/grader"

# The course in other languages (course/localized.py, docs/translating.md).
LANGUAGES = {"zh": "zh_CN"}  # language code (the folders' name) -> gettext locale (its catalogue's folder)
PROSE_TEMPLATE = "locale/notebooks.pot"  # the translators' template of the English prose
LANGUAGE_CONFIG = "assignments/{lang}/nbgrader_config.py"
LANGUAGE_SOURCE_DIR = "assignments/{lang}/source/{id}"
LANGUAGE_TEMPLATE_DIR = "student_template/{lang}"


def language_globs(languages=LANGUAGES) -> tuple[str, ...]:
    """The generated files of the other languages: their notebooks, READMEs, helpers and wheels."""
    globs = [PROSE_TEMPLATE]
    for lang in languages:
        source, template = LANGUAGE_SOURCE_DIR.format(lang=lang, id="*"), LANGUAGE_TEMPLATE_DIR.format(lang=lang)
        globs.append(LANGUAGE_CONFIG.format(lang=lang))
        for folder in (source, template):
            globs += [f"{folder}/*.ipynb", f"{folder}/README.md", f"{folder}/{HELPER_NAME}", f"{folder}/grader/*.whl"]
    return tuple(globs)


# Globs of generated files, so that a file that is no longer generated is noticed.
GENERATED_GLOBS = (
    SOURCE_NB.format(id="*"),
    RELEASED_NB.format(id="*"),
    CORRECT_NB.format(id="*"),
    PARTIAL_NB.format(id="*"),
    CORRECT_PY.format(id="*"),
    SOURCE_HELPER.format(id="*"),
    SOURCE_README.format(id="*"),
    SOURCE_GRADER.format(id="*") + "/*.whl",
    TEMPLATE_HELPER,
    STUDENT_README,
    *LINKED_HELPERS,
    f"{TEMPLATE_GRADER}/*.whl",
    *language_globs(),
    CATALOGUE_MO,
)


def spec_path(section: Section, spec_dir: Path | None = None) -> Path:
    """The notebook spec of `section` (in `spec_dir`, default course/notebooks)."""
    return (spec_dir or ROOT / SPEC_DIR) / f"{section.id}.py"


def helper_text(root: Path = ROOT) -> str:
    """The plotting helper, which every folder of notebooks carries a copy of."""
    path = root / HELPER
    if not path.is_file():
        raise BuildError(f"{path}: missing plotting helper")
    return path.read_text(encoding="utf-8")
