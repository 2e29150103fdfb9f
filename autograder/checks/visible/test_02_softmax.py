"""Visible checks of section 02: the documented weights and context vectors (3 of the section's 10 points).

The other 7 points are hidden, in autograder/checks/test_02_softmax.py.
"""
import math

import torch

from autograder.checks.common import WORKED_INPUTS
from autograder.core.harness import check, expect_close

JOURNEY_SCORES = WORKED_INPUTS @ WORKED_INPUTS[1]  # the scores of query 'journey' (section 01)
DOC_NORMALIZED = torch.tensor([0.1455, 0.2278, 0.2249, 0.1285, 0.1077, 0.1656])
DOC_JOURNEY_WEIGHTS = torch.tensor([0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581])
DOC_WEIGHTS = torch.tensor(
    [[0.2098, 0.2006, 0.1981, 0.1242, 0.1220, 0.1452],
     [0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581],
     [0.1390, 0.2369, 0.2326, 0.1242, 0.1108, 0.1565],
     [0.1435, 0.2074, 0.2046, 0.1462, 0.1263, 0.1720],
     [0.1526, 0.1958, 0.1975, 0.1367, 0.1879, 0.1295],
     [0.1385, 0.2184, 0.2128, 0.1420, 0.0988, 0.1896]])
DOC_Z2 = torch.tensor([0.4419, 0.6515, 0.5683])
DOC_CONTEXT = torch.tensor(
    [[0.4421, 0.5931, 0.5790], [0.4419, 0.6515, 0.5683], [0.4431, 0.6496, 0.5671],
     [0.4304, 0.6298, 0.5510], [0.4671, 0.5910, 0.5266], [0.4177, 0.6503, 0.5645]])

COLUMNS = ("softmax over dim 0 or -2 (down the columns) instead of the last dim, "
           "or the weights transposed in context_vectors")


@check(0.5, "normalize_by_sum gives the documented weights of 'journey'", documented=True)
def test_normalize_documented(student):
    got = student.call("normalize_by_sum", JOURNEY_SCORES)
    expect_close(got, DOC_NORMALIZED, "normalize_by_sum(scores of 'journey')", atol=1e-4,
                 mistakes={"a softmax (this function only divides by the sum)": torch.softmax(JOURNEY_SCORES, -1),
                           "a division by the L2 norm (F.normalize's default p=2) instead of the sum":
                               JOURNEY_SCORES / JOURNEY_SCORES.norm()})


@check(1, "softmax_naive and softmax give the documented weights", documented=True)
def test_softmax_documented(student):
    for name in ("softmax_naive", "softmax"):
        got = student.call(name, JOURNEY_SCORES)
        expect_close(got, DOC_JOURNEY_WEIGHTS, f"{name}(scores of 'journey')", atol=1e-4,
                     mistakes={"normalize_by_sum (divide by the sum) instead of a softmax":
                                   JOURNEY_SCORES / JOURNEY_SCORES.sum()})
    scores = WORKED_INPUTS @ WORKED_INPUTS.T
    expect_close(student.call("softmax", scores), DOC_WEIGHTS, "softmax(score_matrix(inputs))", atol=1e-4,
                 mistakes={"softmax over dim 0 (down the columns) instead of the last dim":
                               torch.softmax(scores, 0)})


@check(0.5, "context_vectors gives the documented context vector z(2)", documented=True)
def test_context_documented(student):
    weights = torch.softmax(JOURNEY_SCORES, dim=-1)
    got = student.call("context_vectors", weights, WORKED_INPUTS)
    expect_close(got, DOC_Z2, "context_vectors(weights of 'journey', inputs)", atol=1e-4,
                 mistakes={"a sum over the embedding dim instead of over the tokens":
                               (weights.unsqueeze(-1) * WORKED_INPUTS).sum(-1)})


@check(1, "simple_self_attention gives the documented context vectors", documented=True)
def test_simple_attention_documented(student):
    scores = WORKED_INPUTS @ WORKED_INPUTS.T
    expect_close(student.call("simple_self_attention", WORKED_INPUTS), DOC_CONTEXT,
                 "simple_self_attention(inputs)", atol=1e-4,
                 mistakes={COLUMNS: torch.softmax(scores, 0) @ WORKED_INPUTS,
                           "scores divided by sqrt(d) (this attention is unscaled)":
                               torch.softmax(scores / math.sqrt(3), -1) @ WORKED_INPUTS})
