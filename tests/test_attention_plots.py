"""The notebooks' plotting helper: it draws what the notebooks give it and never raises."""
from __future__ import annotations

import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display: the helper must only draw

import matplotlib.pyplot as plt
import pytest
import torch

from course import attention_plots
from course.attention_plots import TOKENS, show_weights


def labels(axis) -> list[str]:
    return [tick.get_text() for tick in axis.get_ticklabels()]


def test_a_6x6_matrix_gets_the_token_labels_and_its_values(drawn):
    weights = torch.softmax(torch.randn(6, 6), dim=-1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. "FigureCanvasAgg is non-interactive"
        assert show_weights(weights, title="your attention weights") is None
    (figure,) = drawn
    axes = figure.axes[0]
    assert labels(axes.xaxis) == list(TOKENS) and labels(axes.yaxis) == list(TOKENS)
    assert axes.get_title() == "your attention weights"
    assert f"{weights[0, 0].item():.2f}" in [text.get_text() for text in axes.texts]


def test_a_bool_mask_is_drawn_as_zeros_and_ones(drawn):
    show_weights(torch.ones(6, 6).triu(1).bool())
    image = drawn[0].axes[0].images[0].get_array()
    assert image.tolist() == torch.ones(6, 6).triu(1).tolist()
    assert {text.get_text() for text in drawn[0].axes[0].texts} == {"0", "1"}


def test_a_batch_shows_its_first_item(drawn):
    batch = torch.rand(2, 4, 4, requires_grad=True)
    show_weights(batch)
    assert drawn[0].axes[0].images[0].get_array().shape == (4, 4)
    assert torch.allclose(torch.tensor(drawn[0].axes[0].images[0].get_array().tolist()).float(), batch[0].detach())


def test_labels_go_to_the_matching_axis(drawn, capsys):
    show_weights(torch.zeros(3, 4, dtype=torch.bool), labels=["item 0", "item 1", "item 2"])
    assert labels(drawn[0].axes[0].yaxis) == ["item 0", "item 1", "item 2"]
    show_weights(torch.rand(3, 4), labels=["a", "b"])
    assert "2 labels for a 3 x 4 matrix" in capsys.readouterr().out


@pytest.mark.parametrize(
    "odd", [None, 3.0, "abc", {"a": 1}, torch.zeros(0, 3), torch.zeros(100, 100), torch.zeros(2, 2, dtype=torch.cfloat)],
    ids=["none", "scalar", "str", "dict", "empty", "huge", "complex"],
)
def test_odd_input_prints_one_line_and_draws_nothing(odd, drawn, capsys):
    before = plt.get_fignums()
    assert show_weights(odd) is None
    out = capsys.readouterr().out
    assert out.startswith("show_weights: ") and out.count("\n") == 1
    assert drawn == [] and plt.get_fignums() == before


def test_non_finite_values_are_drawn(drawn):
    show_weights(torch.tensor([[0.5, float("-inf")], [float("nan"), 2.0]]))
    assert len(drawn) == 1


def test_the_helper_needs_neither_torch_nor_the_course_package():
    text = Path(attention_plots.__file__).read_text(encoding="utf-8")
    assert "import torch" not in text and "from course" not in text and "autograder" not in text
