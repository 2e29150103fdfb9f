"""Every line a student reads about a catalogued mistake is right, over the whole catalogue.

For each mistake of tests/catalogues, the lines the self-check shows (the failing visible checks' messages,
graded as `check` grades them) and the lines of the notebook's check cells (the runs test_notebook_agrees
makes, reused: no kernel of its own):

- precision: every hint (core/hints.py), named mistake ("this looks like ...") and question that guesses a
  cause ("no causal mask?", QUESTIONS below) belongs to the planted mistake: its `hint`, a name that holds its
  `says` (or one of its `also`), a question that holds its `says` (or whose kind is in its `asks`);
- recall: the mistake's `says` is in the first failing line of a function it replaces (and so in one line);
- in Chinese the self-check gives each mistake the same hints, named mistakes and questions as in English.

A mistake the self-check does not fail (the hidden checks catch it) has no line to judge, nor one with no
`says`; both are counted and shown. The figures are printed on a failure, and must be 1.0 and 1.0.
"""
from __future__ import annotations

import ast
import json
import re

import pytest
from catalogues import CATALOGUES
from catalogues.mistakes_01_scores import self_attention_score
from support import filled_fields, self_check
from test_notebook_agrees import cell_name, outcomes_of, spoken_outcomes

from autograder import i18n
from autograder.checks import homes
from autograder.checks.common import TRAIN_ONLY_NAN, UNUSED_PARAMETER
from autograder.checks.multihead_mistakes import FUTURE_LEAKS, NO_MASK_LEAK
from autograder.checks.section_03_trainable_qkv import ORDER_HINT
from autograder.core.harness import NAN_NOTE
from autograder.core.hints import BATCHED_T, HINTS, TRANSPOSE_HINT
from autograder.i18n import _

# The sentences that guess a cause, and the kind of mistake each guesses: a question shown to a mistake of
# another kind misleads. (A hint of core/hints.py is judged by its own `mistake`, a named mistake by its name.)
QUESTIONS = {
    NO_MASK_LEAK: "no causal mask",
    # "hide the scores above the diagonal": a mask to fix, where heads mixed up leak the future as well
    FUTURE_LEAKS: "a wrong causal mask",
    ORDER_HINT: "parameters created in another order",
    NAN_NOTE: "a row with every key hidden",
    TRAIN_ONLY_NAN: "dropout on the masked scores",
    UNUSED_PARAMETER: "a parameter unused in forward",
}
# the checks' own `.T` hint (hint_if_written) says what the BATCHED_T hint of core/hints.py says
HINT_TEXTS = {**{hint.text: hint.mistake for hint in HINTS}, TRANSPOSE_HINT: BATCHED_T}
MISTAKES = [(section_id, mistake) for section_id, catalogue in CATALOGUES.items() for mistake in catalogue.MISTAKES]


def said(line: str) -> dict:
    """The hints and the kinds of the questions of QUESTIONS that `line` shows, in the language spoken now
    (each found by its own translated text, up to its first field)."""
    return {"hints": sorted({mistake for text, mistake in HINT_TEXTS.items() if _(text).split("{")[0] in line}),
            "questions": sorted({kind for text, kind in QUESTIONS.items() if _(text).split("{")[0] in line})}


def shown(section_id: str, mistake) -> list[dict]:
    """The failing visible checks of the self-check, in its order: each its message, the mistake it names
    (its `mistake` field), its hints and questions, and the graded name whose cell runs it."""
    home = {check_id: name for check_id, (name, _points) in homes(section_id).items()}
    result = self_check(section_id, mistake.source(section_id))
    return [{"line": check.message, "named": check.mistake, "home": home.get(check.id), **said(check.message)}
            for check in result.checks if not check.passed]


def notebook_lines(section_id: str, mistake, variants: list | None = None, language: str = "en") -> list[dict]:
    """The failing check cells' lines of the released notebook: test_notebook_agrees' runs, reused; with
    `variants` (the mistakes run with it), a run of those alone, the cells speaking `language`."""
    outcomes = (outcomes_of(section_id, mistake.id) if variants is None else spoken_outcomes(
        section_id, tuple((vid, json.dumps(code, sort_keys=True)) for vid, code in variants), language)[mistake.id])
    return [{"line": error, "named": "", "home": cell_name(cell), **said(error)}
            for cell, error in outcomes.items() if error]


def belongs(mistake, kind: str, item: str, line: str) -> bool:
    """Whether a hint, question or named mistake `item` that `line` shows belongs to `mistake`."""
    says = mistake.says.lower()
    if kind == "hints":
        return item == mistake.hint
    if kind == "questions":
        text = next(text for text, question in QUESTIONS.items() if question == item)
        return item in mistake.asks or bool(says) and says in text.lower()
    # a named mistake: its name holds the `says` (or an `also`), or it is the name of the line that says it
    parts = [says] * bool(says) + [part.lower() for part in mistake.also]
    return any(part in item.lower() for part in parts) or bool(says) and says in line.lower()


def judged(lines: list[dict], mistake) -> tuple[int, list[str]]:
    """(how many hints, questions and named mistakes `lines` show; those that do not belong, described)."""
    count, wrong = 0, []
    for line in lines:
        items = [("hints", hint) for hint in line["hints"]] + [("questions", kind) for kind in line["questions"]]
        items += [("named", line["named"])] * bool(line["named"])
        count += len(items)
        wrong += [f"{mistake.id}: {kind} {item!r} in: {line['line'][:400]}" for kind, item in items
                  if not belongs(mistake, kind, item, line["line"])]
    return count, wrong


def first_line_names(mistake, lines: list[dict]) -> bool | None:
    """Whether the first failing line of a function the mistake replaces names it (its `says`, or one of its
    `also`); None where there is nothing to judge: no `says`, or no such line in the self-check."""
    own = [line for line in lines if line["home"] in mistake.replacements]
    if not mistake.says or not own:
        return None
    first = own[0]["line"].lower()
    return any(name.lower() in first for name in (mistake.says, *mistake.also))


def figures(judgements) -> tuple[str, float, float]:
    """(the figures in words, precision, recall) of `judgements` (count, what misleads, first line named)."""
    shown_count = sum(count for count, _wrong, _named in judgements)
    wrong = [item for _count, items, _named in judgements for item in items]
    named = [hit for _count, _wrong, hit in judgements if hit is not None]
    precision = (shown_count - len(wrong)) / shown_count if shown_count else 1.0
    recall = sum(named) / len(named) if named else 1.0
    return (f"precision {precision:.3f} ({shown_count - len(wrong)} of {shown_count} hints, questions and named "
            f"mistakes belong to the planted mistake), recall {recall:.3f} ({sum(named)} of {len(named)} mistakes "
            f"named in the first failing line of their function; {len(judgements) - len(named)} with no line "
            "or no `says` to judge)"), precision, recall


# What the lines still get wrong, as measured by the test below (each entry "section:mistake"): a line that
# misleads (a hint, question or name of another mistake), and a mistake that the first failing line of its
# function does not name. Each fix takes its entry out: the test fails on an entry that is fixed, and on a new one.
MISLEADING: set[str] = set()
UNNAMED_FIRST: set[str] = set()


def measured() -> tuple[list, dict, dict]:
    """(each mistake's (count, what misleads, whether its first line names it); section:mistake -> what
    misleads; section:mistake -> the first line that does not name it)."""
    judgements, misleading, unnamed = [], {}, {}
    for section_id, mistake in MISTAKES:
        lines = shown(section_id, mistake)
        count, wrong = judged(lines + notebook_lines(section_id, mistake), mistake)
        hit = first_line_names(mistake, lines)
        judgements.append((count, wrong, hit))
        key = f"{section_id}:{mistake.id}"
        if wrong:
            misleading[key] = wrong
        if hit is False:
            first = next(line for line in lines if line["home"] in mistake.replacements)
            unnamed[key] = f"{key}: {mistake.says!r} is not in: {first['line'][:400]}"
    return judgements, misleading, unnamed


def test_every_line_a_student_reads_names_the_planted_mistake_and_only_it():
    judgements, misleading, unnamed = measured()
    text, _precision, _recall = figures(judgements)
    rest = [judgement for judgement, (section_id, mistake) in zip(judgements, MISTAKES)
            if f"{section_id}:{mistake.id}" not in MISLEADING | UNNAMED_FIRST]
    rest_text, precision, recall = figures(rest)
    report = [f"over the whole catalogue: {text}", f"without the listed gaps: {rest_text}"]
    new_wrong = [item for key in sorted(set(misleading) - MISLEADING) for item in misleading[key]]
    new_unnamed = [unnamed[key] for key in sorted(set(unnamed) - UNNAMED_FIRST)]
    fixed = sorted((MISLEADING - set(misleading)) | (UNNAMED_FIRST - set(unnamed)))
    assert (precision, recall) == (1.0, 1.0) and not fixed, "\n".join(
        report + new_wrong + new_unnamed + [f"fixed, so take it out of the lists: {key}" for key in fixed])


def signature(lines: list[dict]) -> list[tuple]:
    """What the lines say of the mistake, whatever the language: per failing check, its hints, questions
    and named mistake."""
    return [(line["home"], tuple(line["hints"]), tuple(line["questions"]), line["named"]) for line in lines]


# Grading every mistake again in Chinese takes half a minute: the default run compares every third mistake of
# each section's catalogue (each section and most kinds of line met), `pytest -m slow` every one.
EVERY_MISTAKE = [pytest.param(MISTAKES, id="every mistake", marks=pytest.mark.slow),
                 pytest.param([item for index, item in enumerate(MISTAKES)
                               if index == 0 or MISTAKES[index - 1][0] != item[0] or index % 3 == 0],
                              id="every third mistake")]


@pytest.mark.parametrize("mistakes", EVERY_MISTAKE)
def test_the_chinese_self_check_and_notebook_give_each_mistake_the_same_hints_as_the_english(mistakes):
    notebooks = {mistake.id: notebook_lines(section_id, mistake) for section_id, mistake in mistakes}
    english = {mistake.id: signature(shown(section_id, mistake) + notebooks[mistake.id])
               for section_id, mistake in mistakes}
    # a notebook cell's line is compared where it gives a hint or a question (a cell names no mistake of its
    # own): the Chinese notebooks run only those mistakes, a few seconds rather than minutes
    spoken = [(section_id, mistake) for section_id, mistake in mistakes
              if any(line["hints"] or line["questions"] for line in notebooks[mistake.id])]
    previous = i18n.language()
    i18n.set_language("zh")
    try:
        chinese = {mistake.id: signature(shown(section_id, mistake) + (notebook_lines(
                       section_id, mistake, [(other.id, other.replacements) for where, other in spoken
                                             if where == section_id], "zh")
                       if (section_id, mistake) in spoken else notebooks[mistake.id]))
                   for section_id, mistake in mistakes}
    finally:
        i18n.set_language(previous)
    differ = [f"{key}:\n  en {english[key]}\n  zh {chinese[key]}" for key in english if english[key] != chinese[key]]
    assert spoken and not differ, "\n".join(differ)


# ------------------------------------------------------------------ no English word in a Chinese line

# The fields whose text comes into a sentence from the student, and stays as it came: the error their code
# raised, their own line.
STUDENTS_FIELDS = {"error", "line"}
CHINESE = re.compile("[\u3400-\u9fff\uff08-\uff1f\u3001\u3002]")
# an error of the student's code as Python words it ("RuntimeError: ..."), wherever a field shows it
RAISED = re.compile(r"[A-Za-z_][\w.]*(Error|Exception|Warning): ")
NAME = re.compile(r"[\w.\[\]]+")  # a dotted name, a file's name, a parameter's name ("heads.0.W_query.bias")


def parses(text: str) -> bool:
    try:
        ast.parse(text.replace("…", ""))  # a shortened expression ("f(queri…)") is still code
    except SyntaxError:
        return False
    return True


def is_code(text: str) -> bool:
    """Whether a field's text is code: Python as a whole or in each of its comma-separated parts
    ("d_in=4, d_out=4"), a name, or a value as Python shows it ("<tensor bool[6, 6] on meta>")."""
    return (parses(text) or parts_parse(text) or bool(NAME.fullmatch(text))
            or text.startswith("<") and text.endswith(">"))


def parts_parse(text: str) -> bool:
    """Whether `text` is code parts joined by ", ", each part as long as it needs to be to parse
    ("f(4, 10), d_out = 10": "f(4, 10)" and "d_out = 10")."""
    part = ""
    for piece in text.split(", "):
        part = f"{part}, {piece}" if part else piece
        if parses(part):
            part = ""
    return not part


def english_fields(section_id: str, mistake) -> list[str]:
    """The fields of the Chinese sentences a student reads that hold English that is not code: each field is
    judged by what the code gave the sentence (never by reading the sentence back); a field with Chinese in it
    is a translated sentence, judged where it was filled in."""
    source = mistake.source(section_id)
    lines = [check.message for check in self_check(section_id, source).checks if not check.passed]
    found = []
    for sentence in filled_fields(section_id, source):
        if not any(sentence["text"] in line for line in lines):
            continue  # made, but not shown: the check passed
        found += [f"{mistake.id}: {{{field}}} = {value!r} in: {sentence['text'][:300]}"
                  for field, value in sentence["fields"].items()
                  if isinstance(value, str) and field not in STUDENTS_FIELDS and not CHINESE.search(value)
                  and not RAISED.match(value) and not is_code(value)]
    return found


@pytest.mark.parametrize("mistakes", EVERY_MISTAKE)
def test_a_chinese_line_holds_no_english_but_code_names_and_what_the_student_wrote(chinese, mistakes):
    found = [item for section_id, mistake in mistakes for item in english_fields(section_id, mistake)]
    assert not found, "\n".join(found)


# ------------------------------------------------------------------ the evidence the `.T` hint needs


def raised_here(code: str, **names) -> tuple[str, object]:
    """(the line of `code` that raised, its frame): `code` run with `names` as its locals."""
    import sys
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's own warning about a 3-D `.T`
            exec(compile(code, "<student cell 1>", "exec"), {}, dict(names))
    except RuntimeError:
        tb = sys.exc_info()[2]
    else:
        raise AssertionError(f"{code} should raise")
    from autograder.worker.student_code import student_cell
    from autograder.worker.transposed import last_student_frame

    return code.strip(), last_student_frame(tb, student_cell)


def test_the_worker_measures_each_transposed_operand_of_the_raising_line():
    import torch

    from autograder.worker.transposed import transposed_dims

    matrix, batch = torch.ones(4, 3), torch.ones(2, 5, 3)
    line, frame = raised_here("matrix.T @ batch.T", matrix=matrix, batch=batch)
    assert sorted(transposed_dims(line, frame)) == [2, 3]
    line, frame = raised_here("torch.ones(5, 3).copy_(layer.weight.T)", torch=torch,
                              layer=torch.nn.Linear(4, 3))
    assert transposed_dims(line, frame) == [2]  # a module's parameter, reached through its attributes


def test_the_batched_t_hint_needs_an_operand_that_is_not_2d():
    from autograder.core.hints import hint_for

    message, line = "The size of tensor a (3) must match the size of tensor b (5)", "v1.W.copy_(v2.W.weight.T)"
    assert hint_for("RuntimeError", message, line, {"transposed_dims": [2]}) is None
    assert hint_for("RuntimeError", message, line, {}) is None  # nothing measured: no guess
    assert hint_for("RuntimeError", message, line, {"transposed_dims": [2, 3]}).mistake == BATCHED_T


# ------------------------------------------------------------------ the evidence the gradient check's question needs

def gradient_line(forward: str) -> str:
    """The self-check's line of 01's gradient check for a SelfAttentionScore whose forward returns `forward`."""
    from support import correct_source, replace_def

    source = replace_def(correct_source("01_scores"), "SelfAttentionScore", self_attention_score(forward))
    return next(check.message for check in self_check("01_scores", source).checks
                if check.name.startswith("SelfAttentionScore: gradients reach") and not check.passed)


def test_a_parameter_without_gradient_is_asked_about_its_use_only_where_the_output_ignores_it():
    """W_k read through .data moves the output (the worker moves it and measures): the line names the cut
    from the graph, no question; W_k never read leaves the output put: the question, and no cut named."""
    from autograder.checks.common import DETACHED

    through_data = gradient_line("self.W_q(X) @ (X @ self.W_k.weight.data.T).transpose(-2, -1)")
    unused = gradient_line("self.W_q(X) @ self.W_q(X).transpose(-2, -1)")
    assert "W_k.weight" in through_data and "cut from the autograd graph" in through_data
    assert _(UNUSED_PARAMETER) not in through_data
    assert "W_k.weight" in unused and _(UNUSED_PARAMETER) in unused
    assert "cut from the autograd graph" not in unused and DETACHED not in unused


def test_the_batched_t_hint_names_the_operand_the_line_transposes():
    import torch

    from autograder.core.hints import hint_for
    from autograder.worker.transposed import transposed_dims

    batch, layer = torch.ones(2, 5, 3), torch.nn.Linear(3, 3)
    for code, operand in [("inputs @ inputs.T", "inputs"), ("torch.softmax(queries @ keys.T, dim=-1)", "keys"),
                          ("inputs @ layer.weight.T @ keys.T", "keys")]:  # the matrix's .T is right
        line, frame = raised_here(code, torch=torch, inputs=batch, queries=batch, keys=batch, layer=layer)
        try:
            exec(code, {}, {"torch": torch, "inputs": batch, "queries": batch, "keys": batch, "layer": layer})
        except RuntimeError as error:
            message = str(error)
        evidence = {"transposed_dims": transposed_dims(line, frame)}
        said = hint_for("RuntimeError", message, line, evidence).say(line, evidence)
        assert f"two dims of {operand}: {operand}.transpose(-2, -1)" in said, said
