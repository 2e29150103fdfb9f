"""The collaborators a check hands the function it checks (autograder/worker/stand_in.py): answers from a table
where the arguments are the ones a right caller passes, the student's own function for anything else, and the
student's namespace as it was afterwards; modules built from documented parameters alone."""
from __future__ import annotations

import pytest
import torch

from autograder.worker.stand_in import StandIn, answered_from, standing_in

TABLE = {"params": ["scores", "key_padding_mask"], "defaults": {},
         "rows": [({"scores": torch.tensor([[1.0, 2.0]]), "key_padding_mask": torch.tensor([False, True])},
                   torch.tensor([[1.0, float("-inf")]]))]}


def own(scores, key_padding_mask):
    return torch.full_like(scores, 7.0)


def test_the_arguments_a_right_caller_passes_get_the_table_s_answer_within_float32_tolerance():
    answer = answered_from("mask_padded_scores", TABLE, own)
    close = torch.tensor([[1.0 + 1e-7, 2.0]])  # another order of operations: the same scores to float32 precision
    assert torch.equal(answer(close, torch.tensor([False, True])), torch.tensor([[1.0, float("-inf")]]))
    assert torch.equal(answer(scores=close, key_padding_mask=torch.tensor([False, True])),
                       torch.tensor([[1.0, float("-inf")]]))


@pytest.mark.parametrize("args", [(torch.tensor([[1.0, 2.5]]), torch.tensor([False, True])),  # other scores
                                  (torch.tensor([[1.0, 2.0]]), torch.tensor([True, True])),  # another mask
                                  (torch.tensor([[1.0, 2.0]]), torch.tensor([False, True]), "extra")])
def test_any_other_call_runs_the_student_s_own_function(args):
    answer = answered_from("mask_padded_scores", TABLE, own)
    if len(args) > 2:  # arguments that fit no contract: the student's own function answers (here, raising)
        with pytest.raises(TypeError):
            answer(*args)
    else:
        assert torch.equal(answer(*args), torch.full_like(args[0], 7.0))


def test_a_name_the_student_never_defined_raises_python_s_own_name_error():
    with pytest.raises(NameError, match="name 'mask_padded_scores' is not defined"):
        answered_from("mask_padded_scores", TABLE, None)(torch.zeros(1, 2), torch.tensor([False, False]))


def test_an_answer_lies_on_the_device_asked_for_else_on_the_cpu():
    masks = {"params": ["num_tokens", "device"], "defaults": {"device": None},
             "rows": [({"num_tokens": 2}, torch.tensor([[False, True], [False, False]]))]}
    answer = answered_from("causal_mask", masks, None)
    assert answer(2).device.type == "cpu" and answer(2, device="meta").device.type == "meta"
    assert answer(2, "meta").device.type == "meta"
    answer(2)[0, 0] = True  # a copy each time: the table is not the caller's to change
    assert not answer(2)[0, 0]


def test_the_namespace_is_the_student_s_again_afterwards():
    namespace = {"mask_padded_scores": own}
    with standing_in(namespace, {"mask_padded_scores": TABLE, "causal_mask": TABLE}):
        assert namespace["mask_padded_scores"] is not own and "causal_mask" in namespace
    assert namespace == {"mask_padded_scores": own}


def test_a_stand_in_module_holds_the_documented_parameters_and_a_graph_through_each():
    weight = torch.arange(6.0).reshape(3, 2)
    v1 = StandIn([["W_query", torch.ones(2, 3)]], [])
    v2 = StandIn([], [["W_query", weight, None]])
    assert isinstance(v1.W_query, torch.nn.Parameter) and torch.equal(v1.W_query, torch.ones(2, 3))
    assert isinstance(v2.W_query, torch.nn.Linear) and torch.equal(v2.W_query.weight, weight)
    v1.W_query = torch.nn.Parameter(v2.W_query.weight.T.clone())  # the book's way of copying: a new Parameter
    v1(torch.ones(4, 2)).sum().backward()
    assert v1.W_query.grad is not None
    with pytest.raises(ValueError):
        StandIn([["forward", torch.ones(1)]], [])


def test_a_pair_answer_comes_back_a_pair_of_copies_on_the_call_s_device():
    pairs = {"params": ["queries"], "defaults": {},
             "rows": [({"queries": torch.ones(1, 2)}, (torch.zeros(1, 2), torch.full((1, 1), 0.5)))]}
    answer = answered_from("padded_attention", pairs, None)
    out, weights = answer(torch.ones(1, 2, device="meta"))
    assert out.device.type == "meta" and weights.shape == (1, 1)
    out, weights = answer(torch.ones(1, 2))
    out[0, 0] = 3.0  # a copy: the table is not the caller's to change
    assert torch.equal(answer(torch.ones(1, 2))[0], torch.zeros(1, 2)) and torch.equal(weights, torch.full((1, 1), 0.5))


def test_a_layout_answer_is_the_argument_rearranged_with_its_graph_for_any_values_of_that_shape():
    from autograder.checks.multihead_stand_ins import right_heads

    split = answered_from("split_heads", right_heads(2, 3, 4, 2)["split_heads"], None)
    x = torch.arange(24.0).reshape(2, 3, 4).requires_grad_()
    heads = split(x, 2)
    assert torch.equal(heads, x.detach().reshape(2, 3, 2, 2).transpose(1, 2))  # head h: features [2h, 2h + 2)
    heads.sum().backward()
    assert torch.equal(x.grad, torch.ones(2, 3, 4))
    assert split(torch.zeros(2, 3, 4, device="meta"), num_heads=2).shape == (2, 2, 3, 2)
    with pytest.raises(NameError):  # another shape, or another num_heads: the student's own (here none)
        split(torch.zeros(2, 3, 4), 4)


def test_a_computed_answer_is_the_contract_s_weights_of_the_call_s_own_scores_and_d_k_with_their_graph():
    from autograder.checks.section_04_causal_mask import right_weights
    from solutions import causal_mask as ref

    weights = answered_from("causal_attention_weights", right_weights()["causal_attention_weights"], None)
    for shape, d_k in (((5, 5), 4), ((2, 6, 6), 9), ((3, 4, 4), 2.0)):
        scores = torch.randn(*shape, generator=torch.Generator().manual_seed(7)).requires_grad_()
        got = weights(scores, d_k=d_k)
        assert torch.allclose(got, ref.causal_attention_weights(scores.detach(), d_k))
        got[..., 0].sum().backward()  # a graph back to the scores the caller made
        assert scores.grad is not None and scores.grad.abs().sum() > 0
    assert weights(torch.zeros(2, 3, 3, device="meta"), 2).shape == (2, 3, 3)
    with pytest.raises(NameError):  # a rank the contract does not take: the student's own (here none)
        weights(torch.zeros(2, 2, 3, 3), 2)
    renormalized = answered_from("mask_and_renormalize", right_weights()["mask_and_renormalize"], None)
    softmaxed = torch.softmax(torch.randn(2, 5, 5, generator=torch.Generator().manual_seed(8)), dim=-1)
    assert torch.allclose(renormalized(softmaxed), ref.mask_and_renormalize(softmaxed))


def test_a_stand_in_reports_that_it_answered_and_only_then():
    used: set = set()
    namespace = {"mask_padded_scores": own}
    with standing_in(namespace, {"mask_padded_scores": TABLE}, used):
        namespace["mask_padded_scores"](torch.tensor([[1.0, 2.5]]), torch.tensor([False, True]))  # its own ran
        assert used == set()
        namespace["mask_padded_scores"](torch.tensor([[1.0, 2.0]]), torch.tensor([False, True]))
    assert used == {"mask_padded_scores"}


MET_SPLIT = "split_heads with a bare view, MultiHeadAttention right on top"


@pytest.mark.parametrize("language, says", [("en", "passed with a correct split_heads in place of yours, which "
                                                     "fails its own checks"),
                                            ("zh", "通过时用的是正确的 split_heads 代替你的版本")])
def test_a_check_that_passed_on_a_right_stand_in_says_so_in_the_self_check_and_the_report(language, says):
    """Grading words it as the notebook does: a passing check of MultiHeadAttention whose calls met the right
    split_heads, where the student's own split_heads fails its checks, says so as its message (the self-check's
    summary, report.md and report.html show a check's message); with a right split_heads, nothing is said."""
    from catalogues import mistakes_06_multihead as catalogue
    from support import correct_source, replace_def, self_check

    from autograder import i18n

    mistake = next(m for m in catalogue.MISTAKES if m.id == MET_SPLIT)
    right_split = replace_def(correct_source("06_multihead"), "MultiHeadAttention",
                              mistake.replacements["MultiHeadAttention"])
    i18n.set_language(language)
    try:
        broken, right = self_check("06_multihead", mistake.source("06_multihead")), self_check("06_multihead",
                                                                                                 right_split)
    finally:
        i18n.set_language("en")
    said = [c for c in broken.checks if c.passed and says in c.message]
    assert said and all(c.home == "MultiHeadAttention" for c in said), [(c.name, c.message) for c in broken.checks]
    assert not any(says in c.message for c in right.checks)
    assert all(not c.message for c in right.checks if c.passed)
