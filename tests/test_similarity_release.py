"""The similarity report subtracts the release the class was given: the Chinese notebooks' code, the
course's own release/ of an nbgrader course, not only the English notebooks the course ships.

A blank student (the release handed in as it was, or with a comment of their own in every given
cell) wrote nothing: two of them are never a pair, in either language, whatever release they got.
"""
from __future__ import annotations

import json
from itertools import combinations

import pytest
from similarity_class import SECTIONS, class_plan, originals, released_text, write_notebook

from autograder.core.sections import find
from autograder.instructor import similarity
from autograder.instructor.roster import discover
from autograder.instructor.similarity_release import course_releases

BLANK = [f"zh_blank_{index}" for index in range(6)]


def touched(text: str) -> str:
    """A notebook's JSON with a comment of the student's own at the end of every code cell: no cell is
    left exactly as released, so only the normalised comparison can tell it is given code."""
    notebook = json.loads(text)
    for cell in notebook["cells"]:
        if cell.get("cell_type") == "code":
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            cell["source"] = source + "\n# 我看过了\n"
    return json.dumps(notebook)


def write_blank(folder, section, language: str, edit) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / section.notebook).write_text(edit(released_text(section.notebook, language)), encoding="utf-8")


@pytest.mark.parametrize("edit", [lambda text: text, touched], ids=["as-released", "a-comment-in-every-cell"])
def test_six_blank_chinese_students_are_no_pair_in_any_section(tmp_path, edit):
    # the term of issue 49: the English class's hands and six Chinese students who wrote nothing
    for section in SECTIONS:
        for family, blocks in originals(section).items():
            write_notebook(tmp_path / f"{family}_original", section, blocks)
        for student in BLANK:
            write_blank(tmp_path / student, section, "zh", edit)
    results = similarity.compare(discover(tmp_path), SECTIONS, jobs=1)
    blank_pairs = {frozenset(pair) for pair in combinations(BLANK, 2)}
    called = [(r.section.id, p.student_a, p.student_b, p.similarity) for r in results for p in r.pairs
              if frozenset((p.student_a, p.student_b)) in blank_pairs or {p.student_a, p.student_b} & set(BLANK)]
    assert called == []


def test_a_copy_in_the_chinese_class_is_still_found(tmp_path):
    plan = class_plan(["rename", "combined"])
    for section in SECTIONS:
        for family, blocks in originals(section).items():
            write_notebook(tmp_path / f"{family}_original", section, blocks, "zh")
        for student in ("a_rename", "b_combined"):
            write_notebook(tmp_path / student, section, plan[student][section.id], "zh")
    results = similarity.compare(discover(tmp_path), SECTIONS, jobs=1)
    for result in results:
        scores = {(p.student_a, p.student_b): p.similarity for p in result.pairs}
        assert scores.get(("a_original", "a_rename"), 0) >= 0.6, (result.section.id, scores)
        assert scores.get(("b_combined", "b_original"), 0) >= 0.6, (result.section.id, scores)


GIVEN_HELPER = ("def show_rows(weights, tokens, width=6):\n"
                "    rows = weights.detach().clone()\n"
                "    rows = rows / rows.sum(dim=-1, keepdim=True).clamp_min(1e-9)\n"
                "    order = torch.argsort(rows, dim=-1, descending=True)[..., :width]\n"
                "    for row, picks in zip(rows.tolist(), order.tolist()):\n"
                "        print([tokens[i] for i in picks], [round(row[i], 3) for i in picks])\n"
                "    return order\n")


def course_release(root, section) -> str:
    """An nbgrader course whose instructor added a cell of given code to the section's release: its JSON."""
    notebook = json.loads(released_text(section.notebook))
    notebook["cells"].append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                              "source": GIVEN_HELPER})
    release = root / "release" / section.id
    release.mkdir(parents=True)
    text = json.dumps(notebook)
    (release / section.notebook).write_text(text, encoding="utf-8")
    return text


@pytest.mark.parametrize("edit", [lambda text: text, touched], ids=["as-released", "a-comment-in-every-cell"])
def test_the_courses_own_release_is_given_code_too(tmp_path, edit):
    section = find("02_softmax")
    text = course_release(tmp_path, section)
    for family, blocks in originals(section).items():
        write_notebook(tmp_path / "submitted" / f"{family}_original" / section.id, section, blocks)
    for student in BLANK[:4]:
        folder = tmp_path / "submitted" / student / section.id
        folder.mkdir(parents=True)
        (folder / section.notebook).write_text(edit(text), encoding="utf-8")
    assert course_releases(tmp_path) == course_releases(tmp_path / "submitted") == (tmp_path / "release",)
    result = similarity.compare(discover(tmp_path), [section], jobs=1,
                                courses=course_releases(tmp_path / "submitted"))[0]
    assert [p for p in result.pairs if {p.student_a, p.student_b} & set(BLANK)] == []


def test_the_verb_finds_the_courses_release_beside_submitted(tmp_path):
    section = find("02_softmax")
    text = touched(course_release(tmp_path, section))
    for student in BLANK[:3]:
        folder = tmp_path / "submitted" / student / section.id
        folder.mkdir(parents=True)
        (folder / section.notebook).write_text(text, encoding="utf-8")
    assert similarity.run(tmp_path / "submitted", tmp_path / "out", sections=[section]) == 0
    rows = (tmp_path / "out" / similarity.CSV_NAME).read_text().strip().splitlines()
    assert rows == ["section,student_a,student_b,similarity,share_a,share_b,text,computation,same_wrong_answers"]


# --------------------------------------------------------------------------- a term in one folder


def write_week(root, sections, plan) -> None:
    for student, blocks in plan.items():
        for section in sections:
            write_notebook(root / student, section, blocks[section.id])


def test_each_weeks_run_keeps_the_other_weeks_pairs(tmp_path):
    # week 1 (01), week 2 (02), then a late rerun of week 1: week 2's pairs stay, week 1's are replaced
    week_1, week_2 = [find("01_scores")], [find("02_softmax")]
    plan = class_plan(["rename"])
    plan = {s: blocks for s, blocks in plan.items() if s.endswith("_original") or s in ("a_rename", "c_rename")}
    out = tmp_path / "grades"
    write_week(tmp_path / "class", week_1, plan)
    assert similarity.run(tmp_path / "class", out, sections=week_1) == 0
    write_week(tmp_path / "class", week_2, plan)
    assert similarity.run(tmp_path / "class", out, sections=week_2) == 0
    import pandas as pd

    after_two = pd.read_csv(out / similarity.CSV_NAME)
    assert set(after_two["section"]) == {"01_scores", "02_softmax"}
    write_notebook(tmp_path / "class" / "c_rename", week_1[0], plan["b_original"]["01_scores"])  # c's late fix: b's
    assert similarity.run(tmp_path / "class", out, sections=week_1) == 0
    table = pd.read_csv(out / similarity.CSV_NAME)
    week_2_rows = table[table["section"] == "02_softmax"].reset_index(drop=True)
    pd.testing.assert_frame_equal(week_2_rows, after_two[after_two["section"] == "02_softmax"].reset_index(drop=True))
    def week_1(frame) -> dict:
        rows = frame[frame["section"] == "01_scores"]
        return {(a, b): value for a, b, value in rows[["student_a", "student_b", "similarity"]].values}

    before, after = week_1(after_two), week_1(table)
    assert before[("c_original", "c_rename")] >= 0.9 and after.get(("c_original", "c_rename"), 0) < 0.9
    assert after[("b_original", "c_rename")] >= 0.9 > before.get(("b_original", "c_rename"), 0)
    page = (out / similarity.HTML_NAME).read_text(encoding="utf-8")
    assert 'id="s-01_scores"' in page and 'id="s-02_softmax"' in page and "earlier run" in page


def test_an_unreadable_term_record_is_set_aside_with_one_line(tmp_path, caplog):
    section = find("01_scores")
    for family, blocks in list(originals(section).items())[:2]:
        write_notebook(tmp_path / "class" / family, section, blocks)
    out = tmp_path / "out"
    out.mkdir()
    (out / "similarity.json").write_text("{ not json")
    assert similarity.run(tmp_path / "class", out, sections=[section]) == 0
    said = [r.getMessage() for r in caplog.records if "similarity.json" in r.getMessage()]
    assert len(said) == 1 and "could not be read" in said[0], said
    assert (out / "similarity.json.unreadable").read_text() == "{ not json"
    assert json.loads((out / "similarity.json").read_text())["sections"].keys() == {"01_scores"}
