"""The references of sections 05 and 06 agree with torch's own attention, and the visible checks,
which build their expected values without the references, compute what the references do."""
import pytest
import torch
from torch import nn


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """The references compare tiny tensors: one thread spares thread-pool wake-ups on a busy machine."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def torch_multihead(reference):
    """nn.MultiheadAttention carrying the reference's weights (d_in == d_out, qkv_bias=True)."""
    theirs = torch.nn.MultiheadAttention(reference.d_out, reference.num_heads, batch_first=True)
    with torch.no_grad():
        layers = (reference.W_query, reference.W_key, reference.W_value)
        theirs.in_proj_weight.copy_(torch.cat([layer.weight for layer in layers]))
        theirs.in_proj_bias.copy_(torch.cat([layer.bias for layer in layers]))
        theirs.out_proj.weight.copy_(reference.out_proj.weight)
        theirs.out_proj.bias.copy_(reference.out_proj.bias)
    return theirs.eval()


def test_reference_equals_torch_multihead_attention():
    """What the hidden check states: with d_in == d_out and the weights copied, the reference equals
    nn.MultiheadAttention under a causal attn_mask (and key_padding_mask), and per head it equals
    F.scaled_dot_product_attention(is_causal=True)."""
    from solutions.multihead import MultiHeadAttention, combine_heads, split_heads

    torch.manual_seed(0)
    ours = MultiHeadAttention(8, 8, 6, 0.0, num_heads=2, qkv_bias=True).eval()
    theirs = torch_multihead(ours)
    x = torch.randn(3, 6, 8)
    padding = torch.tensor([[False] * 6, [False] * 4 + [True] * 2, [False, True, False, False, True, False]])
    causal = torch.triu(torch.ones(6, 6, dtype=torch.bool), diagonal=1)
    with torch.no_grad():
        for kpm in (None, padding):
            expected, _ = theirs(x, x, x, attn_mask=causal, key_padding_mask=kpm, need_weights=False)
            torch.testing.assert_close(ours(x, key_padding_mask=kpm), expected, rtol=1e-5, atol=1e-6)
        q, k, v = (split_heads(layer(x), 2) for layer in (ours.W_query, ours.W_key, ours.W_value))
        per_head = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        torch.testing.assert_close(ours(x), ours.out_proj(combine_heads(per_head)), rtol=1e-5, atol=1e-6)


def test_the_visible_checks_rebuild_the_forward_from_the_module_s_own_weights():
    """What the visible checks compute from a student's parameters (own_layers) is the reference's forward:
    attend and nn.MultiheadAttention in eval mode, and in train mode the dropout of the attention weights
    under the same seed, so the checks judge the student's module by its own weights."""
    from autograder.checks.multihead_forward import attend, causal_torch_output, own_layers
    from solutions.multihead import MultiHeadAttention

    torch.manual_seed(3)
    ours = MultiHeadAttention(8, 8, 6, 0.5, num_heads=2, qkv_bias=True).eval()
    own = own_layers(dict(ours.named_parameters()), 8, 8, 2)
    x = torch.randn(2, 6, 8)
    with torch.no_grad():
        expected = ours(x)
        torch.testing.assert_close(attend(own, x), expected, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(causal_torch_output(own, x), expected, rtol=1e-5, atol=1e-6)
        torch.manual_seed(6)
        trained = ours.train()(x)
    torch.manual_seed(6)
    dropped = attend(own, x, weights_dropout=lambda w: nn.functional.dropout(w, 0.5))
    torch.testing.assert_close(dropped, trained, rtol=1e-5, atol=1e-6)
    assert own_layers({"W_query.weight": torch.zeros(8, 8)}, 8, 8, 2) is None  # not the documented parameters


def test_what_the_visible_checks_compute_equals_the_reference():
    """The visible checks build their expected values without the reference: the mask from the lengths,
    softmax(q k^T / sqrt(d)) @ v with the padded keys hidden, and nn.MultiheadAttention holding the
    weights created in the documented order. At the sizes they use, these are the reference's."""
    import torch

    from autograder.checks.common import randn, seeded
    from autograder.checks.section_05_padding_mask import (attend, documented_layers, multihead_attention,
                                                             padded_positions)
    from solutions import padding_mask as ref

    for seq_lens, max_len in (([5, 1, 3], 6), (torch.tensor([2, 7, 7, 4]), 7), ([4, 3, 2], 4)):
        assert torch.equal(padded_positions(max_len, seq_lens), ref.key_padding_mask(seq_lens, max_len))
    queries, keys, values = randn(503, 3, 5, 4, scale=2.0), randn(504, 3, 5, 4), randn(505, 3, 5, 4)
    mask = padded_positions(5, [5, 2, 3])
    for ours, theirs in zip(attend(queries, keys, values, mask[:, None, :]),
                            ref.padded_attention(queries, keys, values, mask)):
        torch.testing.assert_close(ours, theirs)
    for dim, seq_lens, seed in ((3, [4, 3, 2], 52), (6, [5, 3], 53)):
        x = randn(seed + 500, len(seq_lens), max(seq_lens), dim)
        mask = padded_positions(max(seq_lens), seq_lens)
        reference = seeded(ref.PaddedSelfAttention, dim, seed=seed)
        with torch.no_grad():
            expected_out, expected_weights = reference(x, x, x, key_padding_mask=mask)
        out, weights = multihead_attention(documented_layers(dim, seed), x, x, x, key_padding_mask=mask)
        torch.testing.assert_close(out, expected_out, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(weights, expected_weights, rtol=1e-5, atol=1e-6)
        q, k, v = x, randn(seed + 510, *x.shape), randn(seed + 520, *x.shape)  # the check's distinct inputs
        with torch.no_grad():
            expected = reference(q, k, v, key_padding_mask=mask)
        for ours, theirs in zip(multihead_attention(documented_layers(dim, seed), q, k, v, key_padding_mask=mask),
                                expected):
            torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-6)


def test_reference_equals_torch_multihead_attention_with_both_masks():
    """What the hidden check 'matches the reference with both masks' stands for: nn.MultiheadAttention."""
    import torch

    from autograder.checks.common import rand, randn, seeded
    from autograder.checks.section_05_padding_mask import documented_layers, multihead_attention, padded_positions
    from solutions.padding_mask import PaddedSelfAttention

    q, k, v = randn(522, 4, 6, 5), randn(524, 4, 6, 5), randn(525, 4, 6, 5)
    mask = padded_positions(6, [6, 3, 5, 1])
    per_item = rand(523, 4, 6, 6) > 0.6
    per_item[:, :, 0] = False
    ours = seeded(PaddedSelfAttention, 5, seed=57)
    for attn_mask in (torch.triu(torch.ones(6, 6, dtype=torch.bool), diagonal=1), per_item):
        with torch.no_grad():
            out, weights = ours(q, k, v, key_padding_mask=mask, attn_mask=attn_mask)
        expected_out, expected_weights = multihead_attention(documented_layers(5, 57), q, k, v, key_padding_mask=mask,
                                                             attn_mask=attn_mask)
        torch.testing.assert_close(out, expected_out, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(weights, expected_weights, rtol=1e-5, atol=1e-6)
