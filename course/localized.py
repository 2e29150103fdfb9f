"""The course in other languages than English: a build step after the English notebooks.

One source, several languages: the code, the checks, the points and the example data exist once;
only the prose (course/prose.py: Markdown cells, docstrings and hints, comments, the labels the
code prints) and the students' README differ, translated in locale/<locale>/LC_MESSAGES/
notebooks.po (course/catalogue.py). For each language `<lang>` of layout.LANGUAGES
(course/builder/layout.py, where its paths are too) the build's step ReleaseOtherLanguages
(course/builder/steps.py) writes

    assignments/<lang>/nbgrader_config.py           the English course directory's configuration
                                                    under a course id of its own (a shared nbgrader
                                                    exchange keeps the two courses apart)
    assignments/<lang>/source/<id>/<id>.ipynb       the source notebook, prose translated
    assignments/<lang>/source/<id>/README.md, attention_plots.py, grader/<wheel>
    student_template/<lang>/<id>.ipynb              the released notebook, prose translated
    student_template/<lang>/README.md, attention_plots.py, grader/<wheel>

where attention_plots.py is the plotting helper with its words (what it draws and prints) in the
language (course/builder/helper_words.py), translated in the same catalogue,

and locale/notebooks.pot, the template the catalogues are merged from. Every notebook records its
language in `metadata["course"]["language"]`.

The released notebooks of a language come from `nbgrader generate_assignment` on its source
notebooks (course/builder/nbgrader_release.py, one run for all sections), not from translating the
English release: nbgrader records a checksum of every locked cell's source, prose included, and
checks it when it autogrades, so only its own release carries the right ones. The course id does
not enter the released notebooks: tests/test_chinese_notebooks.py runs nbgrader in
assignments/zh/ itself and finds the same notebooks.

A unit without a finished translation (missing, empty or fuzzy) stops the build, naming the
notebook, the cell and the line of the PO file: a half-translated notebook is never written.
"""
from __future__ import annotations

import copy
import re
from pathlib import Path

import nbformat

from autograder.core.sections import BY_ID, SECTIONS, Section
from autograder.i18n import catalogues as grader_catalogues
from autograder.i18n import fill
from autograder.instructor import selfcheck_export
from course import catalogue, prose
from course.builder import layout
from course.builder.helper_words import english_words, translated_helper
from course.builder.layout import HELPER_NAME, LANGUAGES, NBGRADER_CONFIG, README_SOURCE, ROOT, BuildError, helper_text
from course.builder.nbgrader_release import release
from course.builder.notebooks import build_source_notebook, notebook_text
from course.builder.outputs import BuildResult
from course.builder.reference import STUB_LINES
from course.builder.quoted import GRADER_CATALOGUES, grader_translations, quoted_values, stand_in_line  # core.po words the sections' titles
from course.builder.readme import SECTION_NOTE as ENGLISH_SECTION_NOTE
from course.builder.readme import TABLE_WORDS, notebook_table
from course.builder.stated_rules import stated, unstated
from course.catalogue import Message

CONFIG = layout.LANGUAGE_CONFIG
SOURCE_DIR = layout.LANGUAGE_SOURCE_DIR
TEMPLATE_DIR = layout.LANGUAGE_TEMPLATE_DIR
COURSE_ID_LINE = 'c.CourseDirectory.course_id = "attention-course"'
README = "README.md"
PLACEHOLDER = re.compile(r"\{\{\w*\}\}")


class LocalizationError(BuildError):
    """A language's files cannot be written: the build stops, as for any other BuildError."""


# The setup cell's import of the checks (course/notebook_setup.py); a notebook in another language than
# English says its language right after it, since a kernel run headless (nbclient, nbconvert, an
# editor's notebook view) is never told which file it runs, so cannot read the notebook's metadata
CHECKS_IMPORT = "    from autograder.notebook import check, check_close\n"


def language_declaration(lang: str) -> str:
    """The lines that replace CHECKS_IMPORT in a notebook of language `lang` (not English)."""
    return ("    from autograder.notebook import check, check_close, choose_language\n"
            f'    choose_language("{lang}")\n')


def set_language(nb: nbformat.NotebookNode, lang: str) -> nbformat.NotebookNode:
    """`nb` marked as written in `lang`, in its metadata and, for the checks' lines, in its setup cell."""
    nb.metadata.setdefault("course", {})["language"] = lang
    setup = [cell for cell in nb.cells if cell.cell_type == "code" and CHECKS_IMPORT in cell.source]
    if len(setup) != 1:
        raise LocalizationError(f"{len(setup)} setup cell(s) import the checks with {CHECKS_IMPORT.strip()!r}: "
                                "expected one (course/notebook_setup.py)")
    setup[0].source = setup[0].source.replace(CHECKS_IMPORT, language_declaration(lang), 1)
    return nb


# --------------------------------------------------------------------------- the units


def unit_message(section_id: str, unit: prose.Unit) -> Message:
    return Message(f"{section_id}/{unit.cell_id}", unit.text, unit.kind)


def readme_blocks(text: str) -> list[tuple[str, str | None]]:
    """The README source as (text, context) blocks: a block with a context is a prose unit (a
    heading, or a paragraph or list between blank lines); fenced code and blank lines are kept
    as they are (context None), and so is a paragraph that is only a `{{placeholder}}`."""
    blocks: list[tuple[str, str | None]] = []
    heading, paragraph, fence = "", [], None

    def flush():
        if paragraph:
            joined = "\n".join(paragraph)
            blocks.append((joined, None if PLACEHOLDER.fullmatch(joined) else f"{README}/{heading}".rstrip("/")))
            paragraph.clear()

    for line in text.split("\n"):
        if fence is not None or line.startswith("```"):
            flush()
            fence = None if (fence is not None and line.startswith("```")) else (fence if fence is not None else line)
            blocks.append((line, None))
        elif not line.strip():
            flush()
            blocks.append((line, None))
        elif line.startswith("#"):
            flush()
            heading = line.lstrip("#").strip() if line.startswith("## ") else heading
            blocks.append((line, f"{README}/{heading}".rstrip("/")))
        else:
            paragraph.append(line)
    flush()
    return blocks


def table_message(text: str) -> Message:
    """A word of the README's table of notebooks, as the translators see it and as it is looked up."""
    return Message(f"{README}/notebooks", text, "table")


def section_title(section: Section, cat: catalogue.Catalogue, root: Path = ROOT) -> str:
    """A section's title in the catalogue's language, as the grader words it: its translation in the
    grader's core.po (autograder/i18n), which the reports and the check lines show. Notebooks, READMEs
    and grader take every title from there, so a title is never translated twice."""
    titles = grader_catalogues.translations(
        grader_catalogues.po_path(cat.locale, "core", root / GRADER_CATALOGUES), cat.locale)
    if section.title not in titles:
        raise LocalizationError(f"{GRADER_CATALOGUES}/{cat.locale}/LC_MESSAGES/core.po: the title of section "
                                f"{section.id}, {section.title!r}, has no finished translation")
    return titles[section.title]


def grader_words(cat: catalogue.Catalogue, root: Path = ROOT):
    """say(template, **fields) in the catalogue's language, as the grader says it: the template's translation in
    the grader's catalogues (autograder/i18n), filled as the grader fills it; for a section's rules."""
    words = grader_translations(cat.locale, root)

    def say(template: str, **fields) -> str:
        if template not in words:
            raise LocalizationError(f"{GRADER_CATALOGUES}/{cat.locale}/LC_MESSAGES: {template!r} has no finished "
                                    "translation")
        return fill(words[template], fields)
    return say


def title_heading(section: Section, title: str) -> str:
    """A notebook's first line where it is the section's title: `# 02 · From scores to ...`."""
    return f"# {section.id[:2]} · {title}"


def without_heading(nb: nbformat.NotebookNode, section: Section) -> tuple[nbformat.NotebookNode, bool]:
    """`nb` without its first line (and the blank line after it) where that line is the section's title
    heading, which the translation takes from the grader's title rather than from the catalogue; and
    whether it was there. A notebook whose heading is a sentence of its own keeps it as prose."""
    nb = copy.deepcopy(nb)
    first = nb.cells[0] if nb.cells and nb.cells[0].cell_type == "markdown" else None
    head, _, rest = first.source.partition("\n") if first else ("", "", "")
    if head != title_heading(section, section.title):
        return nb, False
    first.source = rest.removeprefix("\n")
    return nb, True


def table_messages() -> list[Message]:
    """The words of the README's table of notebooks (course/builder/readme.py's notebook_table)."""
    return [table_message(text) for text in TABLE_WORDS]


SECTION_NOTE = Message(f"{README}/section note", ENGLISH_SECTION_NOTE,
                       "note under the README's title, in a folder released through nbgrader")
# nbgrader's code stub as the course's configuration writes it (a Python literal: "\n" between its lines)
ENGLISH_STUB = "\\n".join(STUB_LINES)
CODE_STUB = Message("nbgrader_config.py/code_stub", STUB_LINES[0],
                    "the comment nbgrader puts in every task cell, above raise NotImplementedError()")
STUB_COMMENT = re.compile(r"# [^\"'\\\n]+")  # one comment line, nothing that would end the config's literal


def readme_messages(root: Path = ROOT) -> list[Message]:
    text = (root / README_SOURCE).read_text(encoding="utf-8")
    units = [Message(context, block, "readme") for block, context in readme_blocks(text) if context]
    return units + table_messages() + [SECTION_NOTE]


def english_sources(root: Path = ROOT) -> dict[str, nbformat.NotebookNode]:
    """The English source notebooks of the sections that have a spec (no nbgrader run)."""
    spec_dir = root / layout.SPEC_DIR
    return {s.id: build_source_notebook(s, layout.spec_path(s, spec_dir), root)
            for s in SECTIONS if layout.spec_path(s, spec_dir).is_file()}


def notebook_messages(sources: dict[str, nbformat.NotebookNode]) -> list[Message]:
    return [unit_message(sid, unit) for sid, nb in sources.items()
            for unit in prose.notebook_units(without_heading(unstated(nb, BY_ID[sid]), BY_ID[sid])[0])]


def helper_message(english: str) -> Message:
    """A word of the plotting helper, as the translators see it and as it is looked up."""
    return Message(HELPER_NAME, english, "a word the plotting helper draws or prints")


def helper_messages(root: Path = ROOT) -> list[Message]:
    return [helper_message(word) for word in english_words(helper_text(root))]


def language_config(english_config: str, lang: str, cat: catalogue.Catalogue) -> str:
    """The course's nbgrader configuration for `lang`: its own course id, and the code stub nbgrader
    writes in every task cell with its comment in `lang` (a Chinese student reads 在这里写你的代码)."""
    if ENGLISH_STUB not in english_config:
        raise LocalizationError(f"{NBGRADER_CONFIG}: the code stub {ENGLISH_STUB!r} is missing")
    comment = cat.lookup(CODE_STUB)
    if not STUB_COMMENT.fullmatch(comment):
        raise LocalizationError(f"{cat.rel}: {CODE_STUB.context}: {comment!r} must be one comment line, '# ...'")
    config = english_config.replace(COURSE_ID_LINE, COURSE_ID_LINE[:-1] + f'-{lang}"')
    return config.replace(ENGLISH_STUB, "\\n".join((comment, *STUB_LINES[1:])))


def language_helper(english_helper: str, lang: str, cat: catalogue.Catalogue) -> str:
    """The plotting helper with its words in `cat`'s language."""
    return translated_helper(english_helper, lang, lambda word: cat.lookup(helper_message(word)))


def english_messages(root: Path = ROOT, sources=None) -> list[Message]:
    """Every prose unit of the course, in the order a reader meets it."""
    return (notebook_messages(sources if sources is not None else english_sources(root)) + readme_messages(root)
            + helper_messages(root) + [CODE_STUB])


# --------------------------------------------------------------------------- one language


def translated_notebook(nb, section_id: str, cat: catalogue.Catalogue, lang: str,
                        root: Path = ROOT) -> nbformat.NotebookNode:
    section = BY_ID[section_id]
    body, headed = without_heading(unstated(nb, section), section)
    out = stated(prose.translated(body, lambda unit: cat.lookup(unit_message(section_id, unit))), section,
                 grader_words(cat, root))
    if headed:
        heading = title_heading(section, section_title(section, cat, root))
        out.cells[0].source = f"{heading}\n\n{out.cells[0].source}" if out.cells[0].source else heading
    return set_language(out, lang)


def translated_readme(cat: catalogue.Catalogue, root: Path = ROOT) -> str:
    """The students' README in the catalogue's language, placeholders filled as in English."""
    source = (root / README_SOURCE).read_text(encoding="utf-8")
    parts = []
    for block, context in readme_blocks(source):
        if context is None:
            parts.append(block)
            continue
        text = cat.lookup(Message(context, block, "readme"))
        if sorted(PLACEHOLDER.findall(text)) != sorted(PLACEHOLDER.findall(block)):
            raise LocalizationError(f"{cat.rel}: {context}: the translation must keep {PLACEHOLDER.findall(block)}")
        parts.append(text)
    values = {
        "notebooks": translated_table(cat, root=root),
        "torch_pin": selfcheck_export.torch_tested()[0],
        "torch_range": selfcheck_export.torch_range(),
        "torch_tested": " / ".join(selfcheck_export.torch_tested()),
        **quoted_values(cat.locale, root),  # the grader's lines, as the grader says them in this language
        "stand_in": stand_in_line(lambda unit: cat.lookup(unit_message(SECTIONS[0].id, unit))),  # as notebook 01 says it
    }
    text = "\n".join(parts)
    for name, value in values.items():
        text = text.replace("{{" + name + "}}", value)
    return text


def translated_table(cat: catalogue.Catalogue, sections: tuple[Section, ...] = SECTIONS, root: Path = ROOT) -> str:
    """The README's table of notebooks (course/builder/readme.py's notebook_table) in the catalogue's language."""
    return notebook_table(sections, lambda text: cat.lookup(table_message(text)),
                          lambda s: section_title(s, cat, root))


def section_readme(section: Section, readme: str, cat: catalogue.Catalogue, root: Path = ROOT) -> str:
    """The translated README with a note on the one section a folder released by nbgrader holds."""
    title, _, rest = readme.partition("\n")
    note = cat.lookup(SECTION_NOTE).format(
        notebook=section.notebook, title=section_title(section, cat, root),
        section=section.id)
    return f"{title}\n\n{note}\n{rest}"


def add_languages(result: BuildResult, sources: dict, root: Path = ROOT) -> None:
    """Add every language's files (and the template) to `result`, from the English source notebooks."""
    messages = english_messages(root, sources)
    result.files[catalogue.TEMPLATE] = catalogue.template_text(messages)
    wheels = {rel: data for rel, data in result.blobs.items() if rel.startswith(layout.TEMPLATE_GRADER + "/")}
    english_config = (root / NBGRADER_CONFIG).read_text(encoding="utf-8")
    if COURSE_ID_LINE not in english_config:
        raise LocalizationError(f"assignments/nbgrader_config.py: the line {COURSE_ID_LINE!r} is missing")
    english_helper = helper_text(root)  # read once: every folder of a language carries the same copy
    for lang, locale in LANGUAGES.items():
        try:
            cat = catalogue.Catalogue(locale, root)
            cat.check(messages)
        except catalogue.MissingTranslation as missing:
            raise LocalizationError(f"the {lang} notebooks are not written: {len(missing.problems)} unit(s) "
                                   "without a translation:\n  " + "\n  ".join(missing.problems)) from None
        config = language_config(english_config, lang, cat)
        result.files[CONFIG.format(lang=lang)] = config
        readme = translated_readme(cat, root)
        helper = language_helper(english_helper, lang, cat)
        template = TEMPLATE_DIR.format(lang=lang)
        result.files[f"{template}/{README}"] = readme
        result.files[f"{template}/{HELPER_NAME}"] = helper
        for rel, data in wheels.items():
            result.blobs[f"{template}/grader/{Path(rel).name}"] = data
        translated = {sid: translated_notebook(nb, sid, cat, lang, root) for sid, nb in sources.items()}
        try:
            released = release(translated, root, config)
        except BuildError as error:
            raise LocalizationError(f"the {lang} notebooks: {error}") from None
        for section in SECTIONS:
            if section.id not in sources:
                continue
            folder = SOURCE_DIR.format(lang=lang, id=section.id)
            result.files[f"{folder}/{section.id}.ipynb"] = notebook_text(translated[section.id])
            result.files[f"{folder}/{README}"] = section_readme(section, readme, cat, root)
            result.files[f"{folder}/{HELPER_NAME}"] = helper
            for rel, data in wheels.items():
                result.blobs[f"{folder}/grader/{Path(rel).name}"] = data
            result.files[f"{template}/{section.id}.ipynb"] = notebook_text(released[section.id])

