"""The notebook builder: spec parsing, nbgrader metadata, no drift, nbgrader on the committed sources."""
from __future__ import annotations

import os
import re
from pathlib import Path

import nbformat
import pytest

from autograder.core import rules
from autograder.core.sections import BY_ID, SECTIONS
from course.builder import __main__ as builder_main
from course.builder import examples, layout, notebooks, outputs, points, reference
from course.partial_submissions import PARTIAL, SOLVED, STUB, Mistake, plan_for
from support import release_course, released_text

ROOT = layout.ROOT
FIXTURE_SPEC = Path(__file__).parent / "fixtures" / "specs" / "01_scores.py"
SCORES = BY_ID["01_scores"]


def nbgrader_meta(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def test_fixture_spec_builds_the_expected_cells():
    nb = notebooks.build_source_notebook(SCORES, FIXTURE_SPEC, maximum=7)
    kinds = [(c.cell_type, nbgrader_meta(c).get("grade_id")) for c in nb.cells]
    assert kinds == [
        ("markdown", None),
        ("code", "setup"),
        ("code", "dot_scores"),
        ("code", "test_dot_scores"),
        ("code", "test_dot_scores_2"),
        ("code", None),
        ("code", "score_matrix"),
        ("code", "test_score_matrix"),
        ("code", "AdditiveScore"),
        ("code", "DotProductScore"),
        ("code", "SelfAttentionScore"),
    ]
    # the first cell ends with the section's rules in brief (SECTION's "rules", builder/stated_rules.py), then, as
    # the only Markdown above the solution cells, with each name's list of rules: the task cell of every name
    stated = [rules.section_rules(SCORES, rules.english),
              *(rules.name_rules(SCORES, name, rules.english) for name in SCORES.names if SCORES.rules_of(name))]
    assert nb.cells[0].source == "\n\n".join(["# Fixture\n\nTwo paragraphs,\n\nand a blank line between them.",
                                               *stated])
    setup, solution, test = nb.cells[1], nb.cells[2], nb.cells[3]
    assert nbgrader_meta(setup) == {
        "grade": False, "grade_id": "setup", "locked": True, "schema_version": 3, "solution": False, "task": False}
    assert nbgrader_meta(solution)["solution"] and not nbgrader_meta(solution)["locked"]
    assert not nbgrader_meta(solution)["grade"]
    assert nbgrader_meta(test)["grade"] and nbgrader_meta(test)["locked"] and not nbgrader_meta(test)["solution"]
    # the section's 7 points shared out by the weights 1, 2 and 0.5 of the spec's [test] cells
    assert [nbgrader_meta(nb.cells[i])["points"] for i in (3, 4, 7)] == [2, 4, 1]
    # by default a test cell carries its name's checks' points: the fixture leaves three names untested
    with pytest.raises(layout.BuildError, match=re.escape("no [test] cell for ['AdditiveScore', 'DotProductScore', "
                                                          "'SelfAttentionScore']")):
        notebooks.build_source_notebook(SCORES, FIXTURE_SPEC)
    assert "nbgrader" not in nb.cells[5].metadata  # a demo cell is an ordinary cell
    # the solution cell is the solutions block, markers kept for nbgrader; the spec body is ignored
    block = reference.read_solution_module("solutions.scores").blocks["dot_scores"]
    assert solution.source == block
    assert reference.BEGIN in solution.source and reference.END in solution.source
    assert "ignored" not in solution.source
    assert nb.metadata.kernelspec.name == "python3"
    assert all(c.get("outputs", []) == [] for c in nb.cells)
    nbformat.validate(nb)


def test_building_twice_gives_identical_text():
    first = notebooks.notebook_text(notebooks.build_source_notebook(SCORES, FIXTURE_SPEC, maximum=7))
    second = notebooks.notebook_text(notebooks.build_source_notebook(SCORES, FIXTURE_SPEC, maximum=7))
    assert first == second


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda s: s.replace("# %% [solution] score_matrix\n", ""), "no [solution] cell for ['score_matrix']"),
        (lambda s: s + "\n# %% [solution] softmax\n", "not a graded name"),
        (lambda s: s + "\n# %% [solution] dot_scores\n", "second solution cell"),
        (lambda s: s.replace("# Two paragraphs,", "Two paragraphs,"), "markdown lines must start with '# '"),
        (lambda s: s + "\n# %% [provided] solutions.softmax:softmax\n", "not listed as provided"),
        (lambda s: s + "\n# %% [tests] x 1\n", "unknown cell header"),
        (lambda s: s.replace("[test] score_matrix 0.5", "[test] score_matrix"), "takes 2 argument(s)"),
        (lambda s: s.replace("[test] score_matrix 0.5", "[test] score_matrix lots"), "weight must be a number"),
        (lambda s: s.replace("[test] score_matrix 0.5", "[test] score_matrix 0"), "weight must be positive"),
        (
            lambda s: s.replace("# %% [solution] AdditiveScore\n\n# %% [solution] DotProductScore",
                                "# %% [solution] DotProductScore\n\n# %% [solution] AdditiveScore"),
            "registry order",
        ),
    ],
    ids=["missing", "unknown", "twice", "markdown", "provided", "header", "args", "weight", "zero", "order"],
)
def test_spec_errors_are_reported(tmp_path, edit, message):
    spec = tmp_path / "01_scores.py"
    spec.write_text(edit(FIXTURE_SPEC.read_text()))
    with pytest.raises(layout.BuildError, match=re.escape(message)):
        notebooks.build_source_notebook(SCORES, spec)


def test_fill_regions_keeps_signature_and_docstring():
    code = reference.read_solution_module("solutions.trainable_qkv").blocks["SelfAttention_v1"]
    stubbed = reference.fill_regions(code, [reference.STUB, None], "SelfAttention_v1")
    assert stubbed.count("raise NotImplementedError()") == 1
    assert "def forward(self, x):" in stubbed and '"""Self-attention with raw weight matrices.' in stubbed
    assert reference.BEGIN not in stubbed
    # the stub is indented like the marker it replaces
    assert "        # YOUR CODE HERE\n        raise NotImplementedError()" in stubbed
    with pytest.raises(layout.BuildError, match="1 replacement"):
        reference.fill_regions(code, [None], "SelfAttention_v1")


def test_partial_plan_covers_every_section():
    assert set(PARTIAL) <= {s.id for s in SECTIONS}  # a section not listed is left as the stub
    kinds = set()
    for section in SECTIONS:
        answers = examples.partial_answers(section)
        assert list(answers) == list(section.names)
        plan = plan_for(section.id)
        for name in section.names:
            entry = plan if isinstance(plan, str) else plan[name]
            kinds.add(type(entry).__name__ if isinstance(entry, Mistake) else entry)
            if entry == STUB:
                assert "raise NotImplementedError()" in answers[name]
            elif entry == SOLVED:
                assert answers[name] == examples.correct_answers(section)[name]
            else:
                assert "NotImplementedError" not in answers[name]
                assert answers[name] != examples.correct_answers(section)[name]
            compile(answers[name], name, "exec")
    assert kinds == {SOLVED, STUB, "Mistake"}


def test_correct_py_is_built_for_every_section():
    result_files = {layout.CORRECT_PY.format(id=s.id) for s in SECTIONS}
    assert all((ROOT / rel).is_file() for rel in result_files)


def test_build_check_reports_no_drift(course_build, monkeypatch, capsys):
    """Committed notebooks and examples are exactly what the specs and solutions generate: `python -m
    course.builder --check` exits 0 (run in-process on the run's one build, which it would otherwise redo)."""
    monkeypatch.setattr(builder_main, "build", lambda: course_build)
    status = builder_main.main(["--check"])
    said = capsys.readouterr()
    assert status == 0, f"python -m course.builder --check:\n{said.out}\n{said.err}"
    assert f"all {len(course_build.paths())} generated files are up to date" in said.out


def test_build_check_names_the_stale_file(tmp_path):
    """--check fails and names each file that differs (on a copy of the generated files)."""
    result = outputs.BuildResult(files={"examples/correct_py/01_scores.py": "stale\n", "student_template/x.ipynb": "{}"})
    (tmp_path / "examples" / "correct_py").mkdir(parents=True)
    (tmp_path / "examples" / "correct_py" / "01_scores.py").write_text("edited by hand\n")
    (tmp_path / "examples" / "correct_py" / "99_extra.py").write_text("")
    problems = outputs.drift(result, root=tmp_path)
    assert problems == [
        "out of date: examples/correct_py/01_scores.py",
        "missing: student_template/x.ipynb",
        "no longer generated: examples/correct_py/99_extra.py",
    ]


def test_build_check_names_a_link_and_write_replaces_it_by_a_file(tmp_path):
    """A generated file must be a file: a link out of assignments/ breaks once the course directory
    is copied elsewhere. write() removes the link rather than writing through it."""
    target = tmp_path / "course" / "attention_plots.py"
    target.parent.mkdir()
    target.write_text("helper\n")
    rel = layout.SOURCE_HELPER.format(id="01_scores")
    (tmp_path / rel).parent.mkdir(parents=True)
    (tmp_path / rel).symlink_to(os.path.relpath(target, (tmp_path / rel).parent))
    result = outputs.BuildResult(files={rel: "helper\n"})
    assert outputs.drift(result, root=tmp_path) == [f"a link, not a file: {rel}"]
    outputs.write(result, root=tmp_path)
    assert not (tmp_path / rel).is_symlink() and (tmp_path / rel).read_text() == "helper\n"
    assert target.read_text() == "helper\n"
    assert outputs.drift(result, root=tmp_path) == []


def test_build_check_names_a_stale_or_old_wheel_and_write_replaces_it(tmp_path):
    """The self-check wheel is a generated binary file: compared and written as bytes,
    and a wheel of an older version is no longer generated."""
    grader = tmp_path / layout.TEMPLATE_GRADER
    grader.mkdir(parents=True)
    current = f"{layout.TEMPLATE_GRADER}/attention_course_selfcheck-2.0-py3-none-any.whl"
    (tmp_path / current).write_bytes(b"PK stale")
    (grader / "attention_course_selfcheck-1.0-py3-none-any.whl").write_bytes(b"PK old")
    result = outputs.BuildResult(blobs={current: b"PK\x03\x04 fresh"})
    assert outputs.drift(result, root=tmp_path) == [
        f"out of date: {current}",
        f"no longer generated: {layout.TEMPLATE_GRADER}/attention_course_selfcheck-1.0-py3-none-any.whl",
    ]
    outputs.write(result, root=tmp_path)
    assert [p.name for p in grader.iterdir()] == ["attention_course_selfcheck-2.0-py3-none-any.whl"]
    assert (tmp_path / current).read_bytes() == b"PK\x03\x04 fresh"
    assert outputs.drift(result, root=tmp_path) == []


def committed_sections() -> list[str]:
    return [s.id for s in SECTIONS if (ROOT / layout.SOURCE_NB.format(id=s.id)).is_file()]


def test_nbgrader_generate_assignment_on_the_committed_sources(tmp_path):
    """An instructor's `nbgrader generate_assignment` works from the committed course directory,
    and releases exactly the committed student notebooks."""
    sections = committed_sections()
    if not sections:
        pytest.skip("no source notebook committed yet")
    course_dir = tmp_path / "assignments"
    proc = release_course(ROOT / "assignments" / "nbgrader_config.py", ROOT / "assignments" / "source", course_dir)
    for section_id in sections:
        released = course_dir / "release" / section_id / f"{section_id}.ipynb"
        text = released_text(course_dir, section_id, proc)
        committed = (ROOT / layout.RELEASED_NB.format(id=section_id)).read_text()
        assert text == committed, f"{section_id}: nbgrader's release differs from student_template/"
        helper = released.parent / layout.HELPER_NAME
        assert helper.is_file(), f"nbgrader did not release {layout.HELPER_NAME} with {section_id}"
        assert helper.read_text() == (ROOT / layout.HELPER).read_text()


# --------------------------------------------------------------------------- one weighting: nbgrader's points


def nbgrader_points(notebook: Path) -> float:
    """nbgrader's max score of a notebook: the points of its graded cells (what its gradebook records)."""
    nb = nbformat.read(notebook, as_version=4)
    return sum(float(nbgrader_meta(c).get("points") or 0) for c in nb.cells if nbgrader_meta(c).get("grade"))


def autograder_maximum() -> dict[str, float]:
    """Each section's maximum as the grader gives it (grades.csv): the correct examples, graded."""
    from autograder.core.grade import run_checks
    from autograder.core.submission import locate
    from support import EXAMPLES, zygote

    result = run_checks(locate(EXAMPLES / "correct"), "cpu", launcher=zygote())
    assert not result.grader_errors, result.grader_errors
    return {section.id: section.max_score for section in result.sections}


def test_nbgrader_points_of_each_section_are_the_autograders_maximum():
    """grades.csv and nbgrader's gradebook (`nbgrader export`) count the same points per section."""
    sections = committed_sections()
    maximum = autograder_maximum()
    assert set(sections) == set(maximum), "every graded section has an nbgrader source notebook"
    for section_id in sections:
        # a bonus section's test cells carry 0 points: its points are nbgrader's extra credit, outside the maximum
        expected = 0 if BY_ID[section_id].bonus else maximum[section_id]
        for pattern in (layout.SOURCE_NB, layout.RELEASED_NB):
            found = nbgrader_points(ROOT / pattern.format(id=section_id))
            assert found == expected, f"{pattern.format(id=section_id)}: {found} != {expected}"
        assert points.section_maximum(BY_ID[section_id]) == maximum[section_id]
    total = sum(nbgrader_points(ROOT / layout.RELEASED_NB.format(id=s)) for s in sections)
    assert total == sum(most for section_id, most in maximum.items() if not BY_ID[section_id].bonus)


def test_each_test_cell_carries_the_points_of_its_names_checks():
    """nbgrader scores a test cell as the grader scores the checks about its graded name (core/sections.home)."""
    from autograder.checks import homes

    for section_id in committed_sections():
        section = BY_ID[section_id]
        expected: dict[str, float] = {}
        for name, value in homes(section_id).values():
            expected[f"test_{name}"] = expected.get(f"test_{name}", 0.0) + value
        nb = nbformat.read(ROOT / layout.SOURCE_NB.format(id=section_id), as_version=4)
        cells = {nbgrader_meta(c)["grade_id"]: nbgrader_meta(c)["points"] for c in nb.cells
                 if nbgrader_meta(c).get("grade")}
        assert cells == ({name: 0 for name in expected} if section.bonus else expected), section_id
    spec = ROOT / "course" / "notebooks" / "02_softmax.py"
    source = notebooks.make_source_notebook(BY_ID["02_softmax"], spec, notebooks.read_spec(spec),
                                            reference.read_solution_module(BY_ID["02_softmax"].solution_module))
    source.tests.append((source.tests[0][0], "not_a_name", 1))
    with pytest.raises(layout.BuildError, match="no check of 02_softmax is about 'not_a_name'"):
        points.share_points(BY_ID["02_softmax"], source.tests, "here")


def test_points_are_shared_out_in_proportion_on_a_quarter_grid():
    assert points.apportion(10, [1, 1, 1, 1, 1, 1], "here") == [1.75, 1.75, 1.75, 1.75, 1.5, 1.5]
    assert points.apportion(10, [2, 1, 1, 2, 2, 2], "here") == [2, 1, 1, 2, 2, 2]
    assert points.apportion(7.5, [1, 2], "here") == [2.5, 5]
    assert sum(points.apportion(10, [1, 2, 0.5], "here")) == 10
    with pytest.raises(layout.BuildError, match="not a multiple of 0.25"):
        points.apportion(10.1, [1, 1], "here")
    with pytest.raises(layout.BuildError, match="gets no points"):
        points.apportion(1, [1, 1, 1, 1, 1], "here")
    with pytest.raises(layout.BuildError, match="no \\[test\\] cell"):
        points.apportion(10, [], "here")


def test_a_section_maximum_is_the_sum_of_its_checks_points():
    from autograder.checks import section_01_scores as visible
    from autograder.checks.hidden import hidden_01_scores as hidden

    checks = [f for module in (visible, hidden) for n, f in vars(module).items() if n.startswith("test_")]
    assert any(f.grading["visible"] for f in checks) and not all(f.grading["visible"] for f in checks)
    assert points.section_maximum(SCORES) == sum(f.grading["points"] for f in checks) == 10
