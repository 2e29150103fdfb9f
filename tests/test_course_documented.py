"""The reference solutions reproduce every documented value of the curriculum."""
from __future__ import annotations

import importlib
import sys

import pytest
import torch
from torch import nn

from autograder.core.sections import BY_ID, SECTIONS
from documented_values import VALUES, batch, matches


def reference(section_id: str):
    return importlib.import_module(BY_ID[section_id].solution_module)


@pytest.mark.parametrize("value", VALUES, ids=[v.id for v in VALUES])
def test_documented_value(value):
    if not value.gradable and not (torch.__version__.startswith("2.13.") and sys.platform == "linux"):
        pytest.skip("machine-dependent value documented for PyTorch 2.13 on Linux")
    assert value.section in BY_ID, value.section
    if value.name:
        assert value.name in BY_ID[value.section].names, f"{value.name} is not graded in {value.section}"
    actual = value.compute(reference(value.section))
    assert matches(value, actual), (
        f"{value.expression}:\nexpected {value.expected}\ngot      {actual.tolist()}"
    )


def test_every_section_has_documented_values():
    assert {v.section for v in VALUES} == {s.id for s in SECTIONS}


def _manual_causal_attention(module, x, p_seed):
    """CausalAttention's forward written out, with the dropout drawn by nn.Dropout under `p_seed`."""
    queries, keys, values = module.W_query(x), module.W_key(x), module.W_value(x)
    scores = queries @ keys.transpose(1, 2)
    t = x.shape[1]
    hidden = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
    weights = torch.softmax(scores.masked_fill(hidden, float("-inf")) / keys.shape[-1] ** 0.5, dim=-1)
    torch.manual_seed(p_seed)
    return nn.Dropout(module.dropout.p)(weights) @ values


def test_causal_attention_dropout_matches_nn_dropout_under_the_same_seed():
    ref = reference("04_causal_mask")
    torch.manual_seed(123)
    module = ref.CausalAttention(3, 2, 6, 0.5)
    module.train()
    torch.manual_seed(7)
    actual = module(batch())
    expected = _manual_causal_attention(module, batch(), 7)
    torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-6)
    # the dropout really acted (some weights zeroed, so it differs from eval mode)
    module.eval()
    assert not torch.allclose(actual, module(batch()))


def test_causal_attention_dropout_off_in_eval_mode():
    ref = reference("04_causal_mask")
    torch.manual_seed(123)
    module = ref.CausalAttention(3, 2, 6, 0.5).eval()
    with torch.no_grad():
        first, second = module(batch()), module(batch())
    torch.testing.assert_close(first, second)
    torch.manual_seed(123)
    no_dropout = ref.CausalAttention(3, 2, 6, 0.0)
    torch.testing.assert_close(first, no_dropout(batch()).detach())


def test_multi_head_attention_dropout_matches_nn_dropout_under_the_same_seed():
    ref = reference("06_multihead")
    torch.manual_seed(123)
    module = ref.MultiHeadAttention(3, 4, 6, 0.5, num_heads=2).train()
    torch.manual_seed(11)
    actual = module(batch())
    # the same forward, written out, with nn.Dropout drawing under the same seed
    x = batch()
    b, t, _ = x.shape
    split = lambda y: y.view(b, t, 2, 2).transpose(1, 2)  # noqa: E731
    q, k, v = split(module.W_query(x)), split(module.W_key(x)), split(module.W_value(x))
    hidden = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
    weights = torch.softmax((q @ k.transpose(2, 3)).masked_fill(hidden, float("-inf")) / 2**0.5, dim=-1)
    torch.manual_seed(11)
    context = (nn.Dropout(0.5)(weights) @ v).transpose(1, 2).reshape(b, t, 4)
    torch.testing.assert_close(actual, module.out_proj(context), rtol=1e-5, atol=1e-6)


def test_dropout_statistics():
    """Share zeroed close to p, survivors scaled by 1/(1-p): what checks may rely on anywhere."""
    torch.manual_seed(0)
    out = nn.Dropout(0.5)(torch.ones(200, 200))
    zero_share = (out == 0).float().mean().item()
    assert abs(zero_share - 0.5) < 0.02
    assert torch.all((out == 0) | (out == 2.0))
