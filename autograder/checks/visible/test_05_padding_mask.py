"""Visible check of section 05: the documented padding mask (1 of the section's 10 points).

The other 9 points are hidden, in autograder/checks/test_05_padding_mask.py.
"""
import torch

from autograder.core.harness import check, expect_close

DOC_MASK = torch.tensor([[False, False, False, False],
                         [False, False, False, True],
                         [False, False, True, True]])
INVERTED = "an inverted padding mask (True should mean hidden: True at the padding)"


# ---------------------------------------------------------------- key_padding_mask (2.5 points, 1 of them here)

@check(1, "key_padding_mask([4, 3, 2], 4) gives the documented mask", documented=True)
def test_key_padding_mask_documented(student):
    expect_close(student.call("key_padding_mask", [4, 3, 2], 4), DOC_MASK, "key_padding_mask([4, 3, 2], 4)",
                 mistakes={INVERTED: ~DOC_MASK}, heatmap_labels=True)
