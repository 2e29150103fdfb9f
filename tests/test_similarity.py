"""The similarity report ranks planted copies above independent solutions, and says so on its page.

The test classes (similarity_class.py): six independent solutions of every
section, by six hands (the reference, and families B to F, written differently;
D follows the hints as closely as the reference does), and in one class per
disguise of similarity_disguises.py (each alone, and all combined) a copy of each
of the six under that disguise, each filled into the released notebooks as a
student would. Both parts of the course, thirteen sections: the whole file takes about 64 s of CPU.
"""
from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest
from similarity_class import (HOWS, SECTIONS, auc, class_plan, disguise_classes, every_pair, originals, planted,
                              reference_blocks, separation, write_class, write_notebook)
from support import ROOT, VisibleText, store_grade

from autograder.cli import main
from autograder.core.sections import find
from autograder.instructor import similarity
from autograder.instructor.roster import discover
from autograder.instructor.similarity_report import course_pairs

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def classes(tmp_path_factory) -> dict[str, Path]:
    """disguise -> the folder of its class."""
    return {how: write_class(tmp_path_factory.mktemp(how.replace(" ", "-")), plan)
            for how, plan in disguise_classes().items()}


@pytest.fixture(scope="module")
def class_dir(classes) -> Path:
    return classes["combined"]


@pytest.fixture(scope="module")
def compared(classes) -> dict[str, list]:
    """disguise -> its class's results, section by section."""
    return {how: similarity.compare(discover(folder), SECTIONS, jobs=1) for how, folder in classes.items()}


@pytest.fixture(scope="module")
def results(compared):
    return compared["combined"]


def scores_of(result) -> dict[tuple[str, str], float]:
    """Every pair of the section's students, 0 for a pair below the floor."""
    return every_pair(result.submissions, {(p.student_a, p.student_b): p.similarity for p in result.pairs})


def section_scores(compared, index: int) -> dict[tuple[str, str], float]:
    """Every pair of every class in one section, each pair marked with its class (its two ids, the class's
    name as a third)."""
    return {(*pair, how): score for how, results in compared.items()
            for pair, score in scores_of(results[index]).items()}


def course_scores(results) -> dict[tuple[str, str], float]:
    """Every pair of a class, by the sum of its similarities over the sections (the whole-course view)."""
    return every_pair(results[0].submissions, {(p.student_a, p.student_b): p.total for p in course_pairs(results)})


def test_each_class_holds_every_student_in_every_section(compared):
    for results in compared.values():
        assert [r.section.id for r in results] == [s.id for s in SECTIONS]
        for result in results:
            assert len(result.submissions) == 12, (result.section.id, result.problems)


def test_whole_course_view_ranks_every_planted_pair_above_every_independent_one(compared):
    lowest_copy = min(separation(course_scores(results))[0] for results in compared.values())
    highest_other = max(separation(course_scores(results))[1] for results in compared.values())
    print(f"whole course: lowest planted {lowest_copy:.2f}, highest independent {highest_other:.2f}")
    assert lowest_copy > highest_other


@pytest.mark.parametrize("index", range(len(SECTIONS)), ids=[s.id for s in SECTIONS])
def test_each_section_ranks_planted_pairs_above_independent_ones(compared, index):
    value = auc(section_scores(compared, index))
    print(f"{SECTIONS[index].id}: AUC {value:.3f}")
    assert value >= 0.97


@pytest.mark.parametrize("how", HOWS)
def test_each_disguise_still_matches_its_source_in_every_section(compared, how):
    for result in compared[how]:
        scores = scores_of(result)
        matched = {family: scores[tuple(sorted((f"{family}_{how.replace(' ', '-')}", f"{family}_original")))]
                   for family in originals(result.section)}
        assert min(matched.values()) >= 0.6, (result.section.id, matched)


def test_independent_solutions_are_not_called_alike(results):
    # the six hands were written to differ: at most a short exercise may look alike
    for result in results:
        scores = scores_of(result)
        high = [pair for pair, score in scores.items() if score >= 0.6 and not planted(*pair)]
        assert high == [], (result.section.id, high)


@pytest.fixture(scope="module")
def small_class(tmp_path_factory) -> dict[tuple[str, str], float]:
    """A class of ten in section 01, every pair's similarity: the six hands; two copies of the reference (a
    ring of three with it); two students who wrote nothing but the obvious `dot_scores`, which the reference
    and D also write; no one else."""
    section = find("01_scores")
    folder = tmp_path_factory.mktemp("small")
    plan = {f"{family}_original": blocks for family, blocks in originals(section).items()}
    copies = class_plan(["rename", "combined"])
    plan["a_rename"], plan["a_combined"] = copies["a_rename"][section.id], copies["a_combined"][section.id]
    for student in ("g_obvious", "h_obvious"):
        plan[student] = [("dot_scores", "def dot_scores(query, inputs):\n    return inputs @ query\n")]
    for student, blocks in plan.items():
        write_notebook(folder / student, section, blocks)
    result = similarity.compare(discover(folder), [section])[0]
    assert len(result.submissions) == 10
    return scores_of(result)


def test_in_a_class_of_ten_an_obvious_line_is_an_idiom(small_class):
    # four of ten write the same obvious line, and share nothing else: not evidence against any of them
    assert small_class[("g_obvious", "h_obvious")] == 0.0


def test_in_a_class_of_ten_a_ring_of_three_is_still_found(small_class):
    ring = [pair for pair in small_class if planted(*pair)]
    assert len(ring) == 3 and min(small_class[pair] for pair in ring) >= 0.9, {p: small_class[p] for p in ring}
    others = [score for pair, score in small_class.items() if not planted(*pair)]
    assert max(others) < 0.6, sorted(others)[-3:]


def test_two_students_who_share_one_line_and_wrote_nothing_else_are_not_called_alike(tmp_path):
    # a line no one else wrote, but one line: too little code to call two students alike
    section = find("01_scores")
    line = [("dot_scores", 'def dot_scores(query, inputs):\n    return torch.einsum("d,td->t", query, inputs)\n')]
    plan = {f"{family}_original": blocks for family, blocks in originals(section).items()}
    copies = class_plan(["rename"])
    plan.update({"x_line": line, "y_line": line, "a_rename": copies["a_rename"][section.id],
                 "b_rename": copies["b_rename"][section.id]})  # ten: two of them are not more than a fifth
    for student, blocks in plan.items():
        write_notebook(tmp_path / student, section, blocks)
    result = similarity.compare(discover(tmp_path), [section])[0]
    assert len(result.submissions) == 10
    assert 0 < scores_of(result)[("x_line", "y_line")] < 0.5


def test_the_released_code_alone_is_not_a_match(tmp_path):
    # two students who handed in the released notebooks untouched share only the boilerplate
    section = find("01_scores")
    for student in ("ann", "bob"):
        folder = tmp_path / student
        folder.mkdir()
        (folder / section.notebook).write_bytes((ROOT / "student_template" / section.notebook).read_bytes())
    result = similarity.compare({"ann": tmp_path / "ann", "bob": tmp_path / "bob"}, [section])[0]
    assert result.pairs == []


# --------------------------------------------------------------------------- the verb


def test_the_verb_writes_the_csv_and_the_page(class_dir, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["similarity", str(class_dir), "--out", str(out)]) == 0
    table = pd.read_csv(out / "similarity.csv")
    assert list(table.columns) == ["section", "student_a", "student_b", "similarity", "share_a", "share_b", "text",
                                   "computation", "same_wrong_answers"]
    assert table["similarity"].between(0, 1).all() and table["share_a"].between(0, 1).all()
    for _, group in table.groupby("section", sort=False):
        assert list(group["similarity"]) == sorted(group["similarity"], reverse=True)
    page = (out / "similarity.html").read_text()
    assert "<mark>" in page and "Evidence, never a verdict" in page
    assert "Across sections" in page
    targets = set(re.findall(r'href="#([^"]+)"', page))
    assert targets and targets <= set(re.findall(r'id="([^"]+)"', page))  # every link leads somewhere
    assert "similarity:" in capsys.readouterr().out


def test_ids_are_written_as_safely_as_grades_csv_writes_them(tmp_path):
    for student in ("=cmd()", "plain"):
        for section in SECTIONS[:1]:
            write_notebook(tmp_path / "class" / student, section, reference_blocks(section))
    assert main(["similarity", str(tmp_path / "class"), "--out", str(tmp_path / "out")]) == 0
    table = pd.read_csv(tmp_path / "out" / "similarity.csv", dtype=str)
    assert set(table["student_a"]) | set(table["student_b"]) == {"'=cmd()", "plain"}
    assert "&lt;" not in "=cmd()" and "=cmd()" in (tmp_path / "out" / "similarity.html").read_text()


@pytest.mark.parametrize("make, says", [
    (lambda root: root / "nowhere", "no such folder"),
    (lambda root: root, "no student submissions found"),
])
def test_a_bad_class_folder_is_one_line_and_status_2(tmp_path, capsys, make, says):
    assert main(["similarity", str(make(tmp_path)), "--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and says in error[0], error
    assert not (tmp_path / "out").exists()


def test_a_broken_notebook_is_left_out_with_one_line(tmp_path, capsys):
    section = SECTIONS[0]
    for student in ("ann", "bob"):
        write_notebook(tmp_path / "class" / student, section, reference_blocks(section))
    (tmp_path / "class" / "cy").mkdir()
    (tmp_path / "class" / "cy" / section.notebook).write_text("{ not json")
    assert main(["similarity", str(tmp_path / "class"), "--out", str(tmp_path / "out")]) == 0
    said = [line for line in capsys.readouterr().err.splitlines() if "cy" in line]
    assert len(said) == 1 and "left out cy: 01_scores" in said[0] and "not valid JSON" in said[0]
    table = pd.read_csv(tmp_path / "out" / "similarity.csv")
    assert set(table["student_a"]) | set(table["student_b"]) == {"ann", "bob"}


def test_batch_similarity_writes_the_report_beside_the_grades(tmp_path, monkeypatch):
    from autograder.instructor import batch

    for student in ("ann", "bob"):
        write_notebook(tmp_path / "class" / student, SECTIONS[0], reference_blocks(SECTIONS[0]))
    graded = []
    monkeypatch.setattr(batch, "run_batch", lambda *args, **kwargs: graded.append(args) or 0)
    monkeypatch.setattr(batch, "resolve_device", lambda device: "cpu")
    out = tmp_path / "grades"
    assert main(["batch", str(tmp_path / "class"), "--out", str(out), "--similarity", "--section", "01_scores"]) == 0
    assert graded and (out / "similarity.csv").is_file() and (out / "similarity.html").is_file()
    page = (out / "similarity.html").read_text()
    assert 'id="s-01_scores"' in page and 'id="s-02_softmax"' not in page  # the batch's sections only
    assert not (out / "students").exists()  # nothing of it in a student's results


# --------------------------------------------------------------------------- in a browser


def test_the_page_shows_the_matched_fragments_in_headless_chromium(class_dir, results, tmp_path):
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing (apt-get install -y chromium)")
    similarity.write(results, tmp_path, str(class_dir))
    started = time.monotonic()
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run",
             f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom"]
    browser = subprocess.run([CHROMIUM, *flags, (tmp_path / "similarity.html").as_uri()], capture_output=True,
                             text=True, timeout=90)
    body = re.search(r"<body[^>]*>", browser.stdout)
    assert body, browser.stderr[-2000:]
    marks = int(re.search(r'data-marks="(\d+)"', body[0])[1])
    assert marks > 100 and 'data-errors="0"' in body[0], body[0]
    print(f"chromium check took {time.monotonic() - started:.1f} s")


@pytest.mark.parametrize("with_similarity", [True, False])
def test_the_class_report_links_the_similarity_page_when_there_is_one(tmp_path, with_similarity):
    grades = tmp_path / "grades"
    (grades / "students").mkdir(parents=True)
    (grades / "grades.csv").write_text("student,01_scores,total,max_score,status\nann,2.5,2.5,2.5,graded\n")
    from autograder.core.results import CheckResult, GradeResult, SectionResult

    check = CheckResult("01_scores", "a check", 2.5, 2.5)
    store_grade(grades, GradeResult("ann", "cpu", [SectionResult("01_scores", "Scores", [check])]))
    if with_similarity:
        (grades / "similarity.html").write_text("<html></html>")
    assert main(["report", str(grades), "--out", str(tmp_path / "out")]) == 0
    page = (tmp_path / "out" / "class_report.html").read_text()
    assert ('<a href="../grades/similarity.html">' in page) == with_similarity


def test_odd_text_in_a_notebook_is_written_safely(tmp_path):
    # a lone surrogate (valid in a notebook's JSON, not in UTF-8) and markup in the code and the id
    section = SECTIONS[0]
    blocks = [(name, code + "\nnote = '\\ud800 <b>bold</b>'\n") for name, code in reference_blocks(section)]
    for student in ("<b>ann", "bob", "cy"):
        write_notebook(tmp_path / "class" / student, section, blocks)
    notebook = tmp_path / "class" / "bob" / section.notebook
    notebook.write_text(notebook.read_text().replace("\\\\ud800", "\\ud800"))
    assert main(["similarity", str(tmp_path / "class"), "--out", str(tmp_path / "out")]) == 0
    page = (tmp_path / "out" / "similarity.html").read_text(encoding="utf-8")
    assert "&lt;b&gt;ann" in page and "<b>ann" not in page and "<b>bold" not in page
    # bob's lone surrogate is read as '?' (core/extract.valid_text), as grading reads it: not left out
    assert "bob: 01_scores" not in page


def test_an_output_folder_that_cannot_be_written_is_one_line_and_status_1(tmp_path, capsys):
    for student in ("ann", "bob"):
        write_notebook(tmp_path / "class" / student, SECTIONS[0], reference_blocks(SECTIONS[0]))
    (tmp_path / "out").write_text("a file, not a folder")
    assert main(["similarity", str(tmp_path / "class"), "--out", str(tmp_path / "out")]) == 1
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "cannot write the similarity report" in error[0], error


def test_the_ranking_tests_fail_a_detector_that_compares_the_code_as_written(classes, monkeypatch):
    # without the normalisation (names, layout, comments, dead code as the student wrote them) and without
    # the computation's view, the disguised copies fall among the independent pairs: the two ranking tests
    # above would fail
    from autograder.instructor.similarity_code import Unit

    def as_written(cells, graded, kept=frozenset()):
        return [Unit(cell["label"], (0, index, ""), cell["source"], cell["source"]) for index, cell in enumerate(cells)]

    def as_written_units(statements, kept, graded):  # one unit per cell, as written
        cells = {label: source for label, _, source in statements}
        return [Unit(label, (0, index, ""), source, source) for index, (label, source) in enumerate(cells.items())]

    monkeypatch.setattr(similarity, "section_units", as_written)
    monkeypatch.setattr(similarity, "units_of", as_written_units)
    monkeypatch.setattr(similarity, "computation_fingerprints", lambda *args: set())  # the text view alone
    raw = {how: similarity.compare(discover(folder), SECTIONS, jobs=1) for how, folder in classes.items()}
    lowest_copy = min(separation(course_scores(results))[0] for results in raw.values())
    highest_other = max(separation(course_scores(results))[1] for results in raw.values())
    worst = min(auc(section_scores(raw, index)) for index in range(len(SECTIONS)))
    print(f"as written: lowest planted {lowest_copy:.2f}, highest independent {highest_other:.2f}, worst AUC {worst:.3f}")
    assert lowest_copy <= highest_other or worst < 0.97


def test_a_name_added_to_a_function_changes_no_other_line():
    # names stand for their part, not their order: one more name early on renames nothing after it
    from autograder.instructor.similarity_code import section_units

    before = ("def softmax(x, dim=-1):\n    top = x.amax(dim, keepdim=True)\n    e = (x - top).exp()\n"
              "    return e / e.sum(dim, keepdim=True)\n")
    after = before.replace("    top =", "    size = x.shape[0]\n    top =").replace("return e / e.sum(dim, keepdim=True)",
                                                                                 "return (e / e.sum(dim, keepdim=True))[:size]")

    def lines(source):
        return section_units([{"label": "code cell 1", "source": source}], ("softmax",))[0].compared.splitlines()

    assert len(lines(after)) == len(lines(before)) + 1
    assert set(lines(before)[:-1]) <= set(lines(after)), (lines(before), lines(after))


@pytest.mark.parametrize("section", SECTIONS, ids=[s.id for s in SECTIONS])
def test_dead_code_of_every_kind_leaves_the_compared_code_as_it_was(section):
    # a flag set to None guarding prints, a list only filled, no-op statements, an unused helper and name
    from similarity_disguises import DISGUISES

    from autograder.instructor.similarity_code import section_units

    def compared(blocks):
        cells = [{"label": name, "source": source} for name, source in blocks]
        return [unit.compared for unit in section_units(cells, section.names)]

    blocks = reference_blocks(section)
    assert compared(DISGUISES["dead code"](blocks, set(section.names))) == compared(blocks)


def test_statements_without_effect_are_left_out():
    from autograder.instructor.similarity_code import section_units

    plain = "def softmax(x, dim=-1):\n    e = (x - x.amax(dim, keepdim=True)).exp()\n    return e / e.sum(dim, keepdim=True)\n"
    noisy = plain.replace("    return", "    e = e\n    e += 0\n    e *= 1\n    len(e)\n    if dim > 5:\n"
                                         "        print(dim)\n    return")

    def compared(source):
        return [unit.compared for unit in section_units([{"label": "code cell 1", "source": source}], ("softmax",))]

    assert compared(noisy) == compared(plain)


def test_code_nested_too_deeply_to_normalise_is_compared_as_written():
    from autograder.instructor.similarity_code import section_units

    deep = "x = " + "-" * 900 + "1\n"  # parses, but deeper than the normaliser's walks may recurse
    units = section_units([{"label": "code cell 1", "source": deep}], ("dot_scores",))
    assert [unit.compared for unit in units] == [deep]


def test_a_flag_nested_too_deeply_to_evaluate_is_no_flag():
    from autograder.instructor.similarity_code import section_units

    deep = "FLAG = " + "not " * 2000 + "True\nif FLAG:\n    x = 1\n"  # parses, but deeper than the evaluation recurses
    units = section_units([{"label": "code cell 1", "source": deep}], ("dot_scores",))
    assert units and all("if" in unit.compared or unit.compared == deep for unit in units)


def test_a_hostile_chain_of_dead_names_is_cut_short():
    # each name read only by the next: removing the last leaves the one before unread, a thousand times over
    from autograder.instructor.similarity_code import section_units

    chain = "a0 = 1\n" + "".join(f"a{i} = a{i - 1}\n" for i in range(1, 3000))
    started = time.process_time()
    units = section_units([{"label": "code cell 1", "source": chain}], ("dot_scores",))
    assert units and time.process_time() - started < 30


# --------------------------------------------------------------------------- in Chinese


PRODUCTS = {"git", "Jupyter", "KV", "softmax"}  # names, and the glossary's terms kept in English (section titles)


def latin_words(page: str) -> list[str]:
    """The words in Latin letters a reader sees on `page` (its text, not its code), identifiers
    (student ids with a digit, section ids, file names), numbers and single letters left out."""
    seen = VisibleText()
    seen.feed(page)
    text = re.sub(r"\b\w+ > \w+\b", " ", " ".join(seen.parts))  # a menu of Jupyter's, as its window names it
    text = re.sub(r"\S*[_0-9()\[\]=.<>/\\]\S*", " ", text)
    return [word for word in re.findall(r"[A-Za-z][A-Za-z'-]+", text) if word not in PRODUCTS]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_chinese_page_has_no_untranslated_word(tmp_path, lang):
    """Every header, heading and note of the page in Chinese; the same page in English shows its words,
    so the check can fail."""
    for student in ("s1", "s2"):
        for section in SECTIONS[:2]:
            write_notebook(tmp_path / "class" / student, section, reference_blocks(section))
    (tmp_path / "class" / "s3").mkdir()
    (tmp_path / "class" / "s3" / SECTIONS[0].notebook).write_bytes(b"\xff\xfe")  # left out: not text
    out = tmp_path / "out"
    assert main(["similarity", str(tmp_path / "class"), "--out", str(out), "--lang", lang]) == 0
    page = (out / "similarity.html").read_text(encoding="utf-8")
    assert "<h3 " in page and "<li>s3: " in page and page.count("<th>") == 6 + 2 * 9, "the three tables and a pair's code are on the page"
    words = latin_words(page)
    if lang == "en":
        assert {"student", "share", "similarity", "sections"} <= set(words), words
    else:
        assert words == [], sorted(set(words))


def test_a_view_without_evidence_says_so_rather_than_zero(compared, tmp_path):
    # in 02 the reference's computation is what D also computes: an idiom of this class, so the computation's
    # view has nothing to say about the reference's renamed copy, which the text view finds
    result = compared["rename"][1]
    pair = next(p for p in result.pairs if (p.student_a, p.student_b) == ("a_original", "a_rename"))
    assert pair.text == 1.0 and pair.computation is None
    similarity.write(compared["rename"], tmp_path, "class")
    page = (tmp_path / "similarity.html").read_text(encoding="utf-8")
    assert "<td>no evidence</td>" in page
    rows = pd.read_csv(tmp_path / "similarity.csv")
    row = rows[(rows.section == "02_softmax") & (rows.student_a == "a_original") & (rows.student_b == "a_rename")]
    assert row["computation"].isna().all() and (row["text"] == 1.0).all()


def test_a_section_everyone_writes_alike_is_said_to_hold_little_evidence(tmp_path):
    # twelve students hand in the reference alike: every fragment is an idiom, no pair can be told apart
    section = SECTIONS[0]
    for index in range(12):
        write_notebook(tmp_path / "class" / f"s{index:02d}", section, reference_blocks(section))
    result = similarity.compare(discover(tmp_path / "class"), [section], jobs=1)[0]
    assert result.carrying == {"text": 0, "computation": 0} and result.pairs == []
    similarity.write([result], tmp_path / "out", "class")
    assert "Little evidence in this section" in (tmp_path / "out" / "similarity.html").read_text(encoding="utf-8")
