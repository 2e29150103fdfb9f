"""The prose units of a code cell (course/prose.py): the labels its print() calls show are prose,
put back in place even beside a trailing comment, and a translation that would change code is refused."""
from __future__ import annotations

import nbformat
import pytest

from course import prose

DEMO = '''torch.manual_seed(123)
print("row sums in training mode:", dropped.sum(dim=-1))  # no longer all 1
for k in (1, 2):
    print(f"offset {k:2d}: from {low:.4f} to {high:.4f}")
print("eval:\\n", model.eval()(batch)[0])
print(f"{word:>8s}  {score:.4f}")
print(" " * 8 + "".join(words))
print(dropped)'''

SOLUTION = '''def f(x):
    """Doc."""
    # BEGIN SOLUTION
    print("the student's own debugging line", x)
    # END SOLUTION
    print("after the region:", x)'''


def cell(source: str, cell_id: str = "cell-07") -> nbformat.NotebookNode:
    code = nbformat.v4.new_code_cell(source)
    code.id = cell_id
    return code


def printed(source: str) -> list[str]:
    return [unit.text for unit in prose.cell_units(cell(source)) if unit.kind == "printed"]


def test_the_labels_a_demo_cell_prints_are_prose():
    assert printed(DEMO) == ["row sums in training mode:", "offset {k:2d}: from {low:.4f} to {high:.4f}", "eval:\\n"]


def test_a_print_inside_a_solution_region_is_not_prose():
    assert printed(SOLUTION) == ["after the region:"]


def translate_demo(translations: dict[str, str]) -> str:
    nb = nbformat.v4.new_notebook()
    nb.cells = [cell(DEMO)]
    return prose.translated(nb, lambda unit: translations.get(unit.text, unit.text)).cells[0].source


def test_a_label_and_a_trailing_comment_on_one_line_are_both_translated():
    source = translate_demo({"row sums in training mode:": "训练模式下的各行之和：", "no longer all 1": "不再全是 1",
                             "offset {k:2d}: from {low:.4f} to {high:.4f}": "偏移 {k:2d}：从 {low:.4f} 到 {high:.4f}",
                             "eval:\\n": "评估模式：\\n"})
    lines = source.split("\n")
    assert lines[1] == 'print("训练模式下的各行之和：", dropped.sum(dim=-1))  # 不再全是 1'
    assert lines[3] == '    print(f"偏移 {k:2d}：从 {low:.4f} 到 {high:.4f}")'
    assert lines[4] == 'print("评估模式：\\n", model.eval()(batch)[0])'
    assert translate_demo({}) == DEMO, "the English put back gives the cell back byte for byte"


@pytest.mark.parametrize("label, text, message", [
    ("eval:\\n", '评估"模式', "holds a quote"),
    ("eval:\\n", "评估模式：", r"must keep \['\\\\n'\]"),
    ("offset {k:2d}: from {low:.4f} to {high:.4f}", "偏移 {k}：从 {low:.4f} 到 {high:.4f}", "must keep"),
    ("offset {k:2d}: from {low:.4f} to {high:.4f}", "偏移 {k:2d}：从 {low:.4f} 到 {high:.4f} {", "no longer one string"),
])
def test_a_label_s_translation_that_would_change_code_is_refused(label, text, message):
    with pytest.raises(prose.ProseError, match=message):
        translate_demo({label: text})


PICTURE = '''show_weights(mask(x), labels=["item 0", "item 1"], title="your mask (True = hidden)")
show_weights(weights, title=name)  # not a string: code
show_weights(weights, "a positional label is not a title")'''


def test_the_words_a_picture_shows_are_prose_and_go_back_in_place():
    assert printed(PICTURE) == ["item 0", "item 1", "your mask (True = hidden)"]
    nb = nbformat.v4.new_notebook()
    nb.cells = [cell(PICTURE)]
    words = {"item 0": "样本 0", "item 1": "样本 1", "your mask (True = hidden)": "你的掩码（True = 遮住）"}
    source = prose.translated(nb, lambda unit: words.get(unit.text, unit.text)).cells[0].source
    assert source.split("\n")[0] == 'show_weights(mask(x), labels=["样本 0", "样本 1"], title="你的掩码（True = 遮住）")'
    assert source.split("\n")[1:] == PICTURE.split("\n")[1:]
