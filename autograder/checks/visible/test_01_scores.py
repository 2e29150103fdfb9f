"""Visible checks of section 01: the documented scores (2 of the section's 10 points).

The other 8 points are hidden, in autograder/checks/test_01_scores.py.
"""
import torch

from autograder.checks.common import TOKENS, WORKED_INPUTS
from autograder.core.harness import check, expect_close

DOC_DOT = torch.tensor([0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865])
DOC_MATRIX = torch.tensor(
    [[0.9995, 0.9544, 0.9422, 0.4753, 0.4576, 0.6310],
     [0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865],
     [0.9422, 1.4754, 1.4570, 0.8296, 0.7154, 1.0605],
     [0.4753, 0.8434, 0.8296, 0.4937, 0.3474, 0.6565],
     [0.4576, 0.7070, 0.7154, 0.3474, 0.6654, 0.2935],
     [0.6310, 1.0865, 1.0605, 0.6565, 0.2935, 0.9450]])


@check(1, "dot_scores gives the documented scores of 'journey'", documented=True)
def test_dot_scores_documented(student):
    got = student.call("dot_scores", WORKED_INPUTS[1], WORKED_INPUTS)
    expect_close(got, DOC_DOT, "dot_scores(inputs[1], inputs)", atol=1e-4, heatmap_labels=(TOKENS[1:2], TOKENS))


@check(1, "score_matrix gives the documented 6x6 scores", documented=True)
def test_score_matrix_documented(student):
    got = student.call("score_matrix", WORKED_INPUTS)
    expect_close(got, DOC_MATRIX, "score_matrix(inputs)", atol=1e-4, heatmap_labels=TOKENS)
