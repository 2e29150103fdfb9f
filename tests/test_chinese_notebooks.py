"""The course in Chinese: one source, two languages.

Every prose unit of the English notebooks and README has a finished translation in
locale/zh_CN/LC_MESSAGES/notebooks.po; the Chinese notebooks differ from the English ones in
prose only (code, cell ids, nbgrader metadata and points, notebook metadata but the language);
no Chinese Markdown cell keeps an English sentence; the build writes and checks the Chinese
files like the English ones; nbgrader releases assignments/zh/ as the build does.
"""
from __future__ import annotations

import ast
import copy
import re
from pathlib import Path

import nbformat
import pytest

from autograder.core.sections import SECTIONS
from course import catalogue, localized, prose
from course.builder import examples, layout, nbgrader_release, notebooks, outputs, points, steps
from course.catalogue import Message
from support import release_course, released_text

ROOT = layout.ROOT
LANG, LOCALE = "zh", "zh_CN"
SECTION_IDS = [s.id for s in SECTIONS if (ROOT / layout.SOURCE_NB.format(id=s.id)).is_file()]
PAIRS = [(f"assignments/source/{sid}/{sid}.ipynb", f"assignments/zh/source/{sid}/{sid}.ipynb") for sid in SECTION_IDS] + [
    (f"student_template/{sid}.ipynb", f"student_template/zh/{sid}.ipynb") for sid in SECTION_IDS]


def read(rel: str) -> nbformat.NotebookNode:
    path = ROOT / rel
    if not path.is_file():
        pytest.fail(f"{rel} is missing: run `python -m course.builder`")
    return nbformat.read(path, as_version=4)


@pytest.fixture(scope="module")
def messages() -> list[Message]:
    return localized.english_messages()


# --------------------------------------------------------------------------- every unit translated


def test_every_prose_unit_has_a_finished_translation(messages):
    cat = catalogue.Catalogue(LOCALE)
    cat.check(messages)  # raises, naming each unit and its PO line, if one is missing, empty or fuzzy
    sections = {m.context.split("/")[0] for m in messages}
    assert set(SECTION_IDS) <= sections and "README.md" in sections


def test_the_units_of_every_notebook_are_counted(messages):
    """Each notebook has prose in Markdown, docstrings, hints and the setup cell's lines."""
    for sid in SECTION_IDS:
        kinds = {m.comment for m in messages if m.context.startswith(sid + "/")}
        assert {"markdown", "docstring", "hint", "hints", "comment", "printed"} <= kinds, sid


def edited_catalogue(tmp_path: Path, edit) -> catalogue.Catalogue:
    """The committed Chinese catalogue, changed by `edit` (text -> text), read from a copy."""
    rel = catalogue.CATALOGUE.format(locale=LOCALE)
    target = tmp_path / rel
    target.parent.mkdir(parents=True)
    target.write_text(edit((ROOT / rel).read_text(encoding="utf-8")), encoding="utf-8")
    return catalogue.Catalogue(LOCALE, root=tmp_path)


def test_an_untranslated_unit_is_named_with_its_place_in_the_po(tmp_path, messages):
    heading = "## 2. 一次算出所有查询的分数"
    cat = edited_catalogue(tmp_path, lambda text: re.sub(
        r'msgstr ""\n"' + re.escape(heading) + r'\\n"\n(".*"\n)+', 'msgstr ""\n', text, count=1))
    with pytest.raises(catalogue.MissingTranslation) as caught:
        cat.check(messages)
    (problem,) = caught.value.problems
    assert re.fullmatch(r"locale/zh_CN/LC_MESSAGES/notebooks\.po:\d+: 01_scores/cell-07 \(markdown\): untranslated", problem)
    line = int(problem.split(":")[1])
    po_lines = (tmp_path / catalogue.CATALOGUE.format(locale=LOCALE)).read_text(encoding="utf-8").split("\n")
    assert po_lines[line - 1].startswith("msgid"), "the line named is the unit's msgid"


def test_a_fuzzy_unit_stops_the_build_of_the_language(tmp_path, messages, monkeypatch):
    cat = edited_catalogue(tmp_path, lambda text: text.replace(
        '#. hint\nmsgctxt "01_scores/dot_scores"', '#. hint\n#, fuzzy\nmsgctxt "01_scores/dot_scores"', 1))
    problems = [p for p in (cat.problem(m) for m in messages) if p]
    assert len(problems) == 1 and "01_scores/dot_scores (hint): fuzzy" in problems[0]
    monkeypatch.setattr(localized.catalogue, "Catalogue", lambda locale, root: cat)
    result = outputs.BuildResult()
    with pytest.raises(localized.LocalizationError, match=r"the zh notebooks are not written: 1 unit"):
        localized.add_languages(result, localized.english_sources(), ROOT)
    assert not any("/zh/" in rel for rel in result.files), "no Chinese file of a half-translated course"


def test_a_unit_new_in_english_is_not_in_the_catalogue(messages):
    cat = catalogue.Catalogue(LOCALE)
    new = Message("01_scores/cell-02", "A paragraph nobody has translated yet.", "markdown")
    assert "not in locale/zh_CN/LC_MESSAGES/notebooks.po" in cat.problem(new)


def test_update_marks_a_changed_unit_fuzzy_and_a_new_one_empty(tmp_path):
    """`python -m course.translators update` after the English changed: the translator's to-do list."""
    first = [Message("01_scores/cell-00", "Attention scores, step one.", "markdown"),
             Message("01_scores/cell-02", "Unchanged paragraph.", "markdown")]
    po = tmp_path / catalogue.CATALOGUE.format(locale="xx")
    po.parent.mkdir(parents=True)
    translated = catalogue.template(first)
    translated.locale = "xx"
    for message in translated:
        if message.id:
            message.string = "[xx] " + message.id
    po.write_text(catalogue.po_text(translated), encoding="utf-8")
    later = [Message("01_scores/cell-00", "Attention scores, step one!", "markdown"), first[1],
             Message("01_scores/cell-05", "A paragraph new in English.", "markdown")]
    assert catalogue.update(later, root=tmp_path)[-1].endswith(": 2 unit(s) to translate")
    cat = catalogue.Catalogue("xx", root=tmp_path)
    assert "fuzzy" in cat.problem(later[0]) and "untranslated" in cat.problem(later[2])
    assert cat.problem(later[1]) is None and cat.lookup(later[1]) == "[xx] Unchanged paragraph."
    assert (tmp_path / catalogue.TEMPLATE).read_text(encoding="utf-8") == catalogue.template_text(later)


# --------------------------------------------------------------------------- prose only


class _BlankProse(ast.NodeTransformer):
    """Empties the strings that are prose: docstrings, and the strings the build translates
    (prose._shown_strings: a print() call's text and an exception's message, their {fields} code that
    stays; the words a show_weights() call draws). Comments are not in the syntax tree at all."""

    def _blank_docstring(self, node):
        self.generic_visit(node)
        first = node.body[0] if node.body else None
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            first.value.value = ""
        return node

    visit_FunctionDef = visit_ClassDef = visit_AsyncFunctionDef = _blank_docstring

    def visit_Call(self, node):
        self.generic_visit(node)
        for shown in prose._shown_strings(node):  # what the build translates: print's text, an exception's
            for part in shown.values if isinstance(shown, ast.JoinedStr) else [shown]:  # message, a picture's words
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    part.value = ""
            if isinstance(shown, ast.JoinedStr):  # its fields stay, in order, wherever the words put them
                shown.values = [part for part in shown.values if not (isinstance(part, ast.Constant) and part.value == "")]
        return node


def code_without_prose(source: str) -> str:
    """The cell's syntax tree with its prose emptied: equal for two cells that differ in prose only."""
    return ast.dump(_BlankProse().visit(ast.parse(source)))


def cell_metadata(cell) -> dict:
    """The cell's metadata but nbgrader's checksum (a hash of the source, prose included)."""
    meta = copy.deepcopy(dict(cell.metadata))
    meta.get("nbgrader", {}).pop("checksum", None)
    return meta


def differences(english: nbformat.NotebookNode, other: nbformat.NotebookNode) -> list[str]:
    """Where `other` differs from `english` in anything but prose."""
    found = []
    lang = other.metadata.get("course", {}).get("language", "en")
    declared = localized.language_declaration(lang)  # the one line of code a language adds (its setup cell)
    meta_a, meta_b = copy.deepcopy(dict(english.metadata)), copy.deepcopy(dict(other.metadata))
    for meta in (meta_a, meta_b):
        meta.get("course", {}).pop("language", None)
    if meta_a != meta_b:
        found.append(f"notebook metadata: {meta_a} != {meta_b}")
    if [(c.id, c.cell_type) for c in english.cells] != [(c.id, c.cell_type) for c in other.cells]:
        return found + ["cell ids, types or order differ"]
    for x, y in zip(english.cells, other.cells):
        if cell_metadata(x) != cell_metadata(y):
            found.append(f"cell {x.id}: metadata differs")
        if x.cell_type == "code":
            source = y.source if lang == "en" else y.source.replace(declared, localized.CHECKS_IMPORT, 1)
            if code_without_prose(x.source) != code_without_prose(source):
                found.append(f"cell {x.id}: code differs")
            if (x.get("outputs"), x.get("execution_count")) != (y.get("outputs"), y.get("execution_count")):
                found.append(f"cell {x.id}: outputs differ")
    return found


@pytest.mark.parametrize("english_rel, chinese_rel", PAIRS, ids=[p[1] for p in PAIRS])
def test_the_chinese_notebook_differs_from_the_english_in_prose_only(english_rel, chinese_rel):
    english, chinese = read(english_rel), read(chinese_rel)
    assert english.metadata["course"]["language"] == "en"
    assert chinese.metadata["course"]["language"] == LANG
    assert differences(english, chinese) == []
    points = [c.metadata.get("nbgrader", {}).get("points") for c in chinese.cells]
    assert points == [c.metadata.get("nbgrader", {}).get("points") for c in english.cells]
    assert chinese.cells != english.cells, "the prose is translated"


def test_a_change_to_code_or_points_is_found():
    english = read(PAIRS[0][0])
    changed = prose.translated(english, lambda unit: unit.text)
    setup = next(c for c in changed.cells if c.id == "setup")
    setup.source = setup.source.replace("# Your", "# 你的").replace("0.43", "0.44", 1)
    graded = next(c for c in changed.cells if c.metadata.get("nbgrader", {}).get("grade"))
    graded.metadata["nbgrader"]["points"] += 1
    assert differences(english, changed) == ["cell setup: code differs", f"cell {graded.id}: metadata differs"]
    setup.source = setup.source.replace("0.44", "0.43", 1)  # a comment translated is not a difference
    graded.metadata["nbgrader"]["points"] -= 1
    assert differences(english, changed) == []


def test_putting_the_english_prose_back_gives_the_notebook_back():
    for english_rel, _ in PAIRS:
        english = read(english_rel)
        assert notebooks.notebook_text(prose.translated(english, lambda unit: unit.text)) == notebooks.notebook_text(english)


def test_a_translation_that_would_change_code_is_refused():
    english = read(PAIRS[0][0])

    def breaking(unit):
        return 'closes the docstring """ early' if unit.kind == "docstring" else unit.text

    with pytest.raises(prose.ProseError, match="triple quotes"):
        prose.translated(english, breaking)
    with pytest.raises(prose.ProseError, match="must keep"):
        prose.translated(english, lambda unit: "已跳过" if unit.kind == "printed" else unit.text)


# --------------------------------------------------------------------------- no English left


def glossary_terms() -> set[str]:
    """The English column of docs/glossary.md, each term and each of its `/`-separated parts."""
    terms = set()
    for line in (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 3 and re.search(r"[\u4e00-\u9fff]", cells[1]):
            terms.add(cells[0].lower())
            terms.update(part.strip().lower() for part in cells[0].split("/"))
    return terms


ENGLISH_RUN = re.compile(r"[A-Za-z][A-Za-z'’-]*(?:[ \t]+[A-Za-z][A-Za-z'’-]*){3,}")
NOT_PROSE = [
    re.compile(r"```.*?```", re.S),  # fenced code
    re.compile(r"\$\$.*?\$\$", re.S),  # display LaTeX
    re.compile(r"\$[^$\n]+\$"),  # inline LaTeX
    re.compile(r"`[^`\n]+`"),  # code spans
    re.compile(r"<[^>\n]+>"),  # HTML tags
    re.compile(r'\*?"[^"\n]+"\*?|“[^”\n]+”'),  # quoted English: the example sentence, a button's label
    re.compile(r"\*[^*\n]+\*"),  # italics: a title, a menu path
]


def english_sentences(markdown: str, glossary: set[str]) -> list[str]:
    """Runs of four or more English words in `markdown`, outside code, LaTeX, HTML, quotes,
    italics and parentheses that hold a glossary term."""
    text = markdown.replace("**", "")  # bold is prose: only its markers go, so that italics pair up
    for pattern in NOT_PROSE:
        text = pattern.sub(" ", text)
    text = re.sub(r"[（(]([^（）()\n]+)[）)]",
                  lambda m: " " if m.group(1).strip().lower() in glossary else m.group(0), text)
    return [match.group(0) for match in ENGLISH_RUN.finditer(text)]


def chinese_markdown() -> list[tuple[str, str]]:
    found = [(f"{rel}#{cell.id}", cell.source) for _, rel in PAIRS for cell in read(rel).cells
             if cell.cell_type == "markdown"]
    return found + [("student_template/zh/README.md", (ROOT / "student_template/zh/README.md").read_text(encoding="utf-8"))]


def test_no_chinese_markdown_keeps_an_english_sentence():
    glossary = glossary_terms()
    left = {where: runs for where, text in chinese_markdown() if (runs := english_sentences(text, glossary))}
    assert left == {}


# Words a label keeps in English: Python's constants (a mask's "True = 遮住") and the glossary's
# "token", which both languages write so.
# a glossary word both languages write alike (log-sum-exp too, taken out before the words are read), a unit,
# and the method every layer has
KEPT_IN_LABELS = {"True", "False", "None", "token", "RoPE", "KV", "softmax", "MiB", "forward"}


def english_in_labels(nb: nbformat.NotebookNode) -> list[str]:
    """The English words of the labels a notebook's code prints or draws (prose.printed_units) that
    are not names of the cell's own code (`softmax_naive:`, `split_heads, ...` and `exp:` may stay)."""
    found = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        names = {n.id for n in ast.walk(ast.parse(cell.source)) if isinstance(n, ast.Name)} | KEPT_IN_LABELS
        names |= {n.attr for n in ast.walk(ast.parse(cell.source)) if isinstance(n, ast.Attribute)}
        names |= {n.arg for n in ast.walk(ast.parse(cell.source)) if isinstance(n, ast.keyword) and n.arg}
        for unit in prose.printed_units(cell.id, cell.source):
            text = prose.PLACEHOLDER.sub(" ", prose.ESCAPE.sub(" ", unit.text)).replace("log-sum-exp", " ")
            words = re.findall(r"[A-Za-z_]\w+", text)
            found += [f"{cell.id}: {unit.text}" for word in words if word not in names][:1]
    return found


def test_no_chinese_code_cell_prints_an_english_label():
    """What the code shows on the screen is Chinese too: the setup's notes and the demos' labels."""
    left = {rel: words for _, rel in PAIRS if (words := english_in_labels(read(rel)))}
    assert left == {}
    english = english_in_labels(read(PAIRS[0][0]))
    assert any("additive" in line for line in english), "the check finds a label left in English"


def test_an_english_sentence_left_in_a_chinese_cell_is_found():
    glossary = glossary_terms()
    cell = read(PAIRS[0][1]).cells[0].source
    planted = cell + "\n\nThis sentence was left in English by mistake."
    assert english_sentences(planted, glossary) == ["This sentence was left in English by mistake"]
    # English where it belongs is not a finding: code, LaTeX, a glossary term after its Chinese
    allowed = cell + "\n\n保留 `keep this identifier as it is`，$\\text{key j is padding}$，多头注意力（multi-head attention）。"
    assert english_sentences(allowed, glossary) == []
    assert english_sentences("注意（some words not in the glossary）", glossary) == ["some words not in the glossary"]


# --------------------------------------------------------------------------- the build


@pytest.fixture(scope="module")
def built(course_build) -> outputs.BuildResult:
    return course_build


def test_the_build_writes_and_checks_the_chinese_files(built):
    chinese = sorted(rel for rel in built.paths() if "/zh/" in rel or rel.startswith("locale/"))
    expected = ["assignments/zh/nbgrader_config.py", catalogue.TEMPLATE, "student_template/zh/README.md",
                f"student_template/zh/{layout.HELPER_NAME}"]
    for sid in SECTION_IDS:
        expected += [f"assignments/zh/source/{sid}/{name}" for name in (f"{sid}.ipynb", "README.md", layout.HELPER_NAME)]
        expected.append(f"student_template/zh/{sid}.ipynb")
    assert set(expected) <= set(chinese)
    assert any(rel.startswith("student_template/zh/grader/") and rel.endswith(".whl") for rel in chinese)
    stale = [line for line in outputs.drift(built) if "/zh/" in line or "locale/" in line]
    assert stale == [], "the Chinese files are out of date: run `python -m course.builder`"


def test_the_other_languages_are_a_step_of_their_own_after_the_english_release_and_the_wheel():
    names = [step.name for step in steps.STEPS]
    here = names.index("release the other languages")
    assert names.index("release the notebooks with nbgrader") < here
    assert names.index("make the self-check wheel") < here
    assert all(pattern in layout.GENERATED_GLOBS for pattern in layout.language_globs())


def test_the_language_of_the_prose_survives_nbgraders_release():
    """nbgrader rewrites a notebook's metadata; cleaning its release keeps the language recorded."""
    for lang in ("en", LANG):
        nb = nbformat.v4.new_notebook(metadata={"course": {"language": lang}, "nbgrader": {"x": 1}})
        assert nbgrader_release.clean_released(nb).metadata["course"] == {"language": lang}
        assert "nbgrader" not in nb.metadata
    assert "course" not in nbgrader_release.clean_released(nbformat.v4.new_notebook()).metadata


def test_a_stale_or_stray_chinese_file_is_named(built, tmp_path):
    rel = f"student_template/zh/{SECTION_IDS[0]}.ipynb"
    subset = outputs.BuildResult(files={rel: built.files[rel]})
    (tmp_path / rel).parent.mkdir(parents=True)
    (tmp_path / rel).write_text(built.files[rel].replace("查询", "query"), encoding="utf-8")
    (tmp_path / "student_template/zh/99_old.ipynb").write_text("{}", encoding="utf-8")
    assert outputs.drift(subset, root=tmp_path) == [f"out of date: {rel}",
                                                 "no longer generated: student_template/zh/99_old.ipynb"]


def test_the_chinese_course_directory_has_a_course_id_of_its_own():
    """Its own course id, and nbgrader's code stub with its comment in Chinese; nothing else differs."""
    english = (ROOT / "assignments/nbgrader_config.py").read_text(encoding="utf-8")
    chinese = (ROOT / "assignments/zh/nbgrader_config.py").read_text(encoding="utf-8")
    comment = catalogue.Catalogue(LOCALE).lookup(localized.CODE_STUB)
    assert comment.startswith("# ") and comment != localized.CODE_STUB.text
    expected = english.replace('course_id = "attention-course"', 'course_id = "attention-course-zh"')
    assert chinese == expected.replace(localized.ENGLISH_STUB, localized.ENGLISH_STUB.replace(
        localized.CODE_STUB.text, comment, 1))


@pytest.fixture(scope="module")
def released_zh(tmp_path_factory):
    """(a course directory, nbgrader's process): assignments/zh/'s nbgrader_config.py and source/ copied to a hub
    of their own, every section released there by an instructor's `nbgrader generate_assignment *`, once for the
    two tests below."""
    course_dir = tmp_path_factory.mktemp("hub") / "attention-course-zh"
    proc = release_course(ROOT / "assignments/zh/nbgrader_config.py", ROOT / "assignments/zh/source", course_dir)
    return course_dir, proc


def test_nbgrader_generate_assignment_on_the_chinese_sources(released_zh):
    """An instructor's `nbgrader generate_assignment` in assignments/zh/ releases exactly the
    committed Chinese student notebooks (the build releases the translated sources the same way)."""
    course_dir, proc = released_zh
    for sid in SECTION_IDS:
        text = released_text(course_dir, sid, proc)
        assert text == (ROOT / f"student_template/zh/{sid}.ipynb").read_text(encoding="utf-8"), sid
        assert (course_dir / "release" / sid / "README.md").read_text(encoding="utf-8").startswith("# PyTorch 中的注意力机制")


# --------------------------------------------------------------------------- the Chinese course directory at work

SECTION = "01_scores"


@pytest.fixture(scope="module")
def chinese_course(released_zh) -> Path:
    """The Chinese course directory with its sections released (released_zh: the release is nbgrader's either way)."""
    return released_zh[0]


def test_the_chinese_course_releases_autogrades_and_exports(chinese_course, tmp_path):
    """Through nbgrader's exchange under its own course id, then autograde and export: the
    correct answers in the Chinese notebook get nbgrader's full points, the grader's maximum."""
    from nbgrader.api import Gradebook
    from test_nbgrader_cycle import export_rows, hand_in, nbgrader

    from autograder.core.sections import BY_ID

    exchange = tmp_path / "exchange"
    nbgrader(chinese_course, "release_assignment", SECTION, f"--Exchange.root={exchange}", "--force")
    outbound = exchange / "attention-course-zh" / "outbound" / SECTION
    assert "python -m autograder check --section 01_scores" in (outbound / "README.md").read_text(encoding="utf-8")
    released = nbformat.read(chinese_course / "release" / SECTION / f"{SECTION}.ipynb", as_version=4)
    answered = examples.fill_notebook(released, examples.correct_answers(BY_ID[SECTION]))
    handed = tmp_path / f"{SECTION}.ipynb"
    handed.write_text(notebooks.notebook_text(answered), encoding="utf-8")
    hand_in(chinese_course, "alice", SECTION, handed)
    nbgrader(chinese_course, "autograde", SECTION, "--force")
    with Gradebook(f"sqlite:///{chinese_course / 'gradebook.db'}") as book:
        score = book.find_submission(SECTION, "alice").score
        maximum = book.find_notebook(SECTION, SECTION).max_score
    assert score == maximum == points.section_maximum(BY_ID[SECTION]) > 0
    assert export_rows(chinese_course)[(SECTION, "alice")] == (score, maximum)
