"""Every documented value of the curriculum, as data, with how to compute it.

Each entry's `compute(ns)` takes any namespace that has the section's graded
names as attributes (a `solutions.*` module, an imported submission, ...) and
returns the tensor the curriculum documents; `expected` is the documented
value (nested lists), to be compared with `atol` (bool and integer values
exactly). Values whose `gradable` is False depend on the machine (dropout
masks): they describe PyTorch 2.13 on a Linux CPU and must not be used to grade.

Used by the course's own tests (against `solutions/`) and reusable by the
grader's tests.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import torch
from torch import nn

INPUTS = [
    [0.43, 0.15, 0.89],  # Your
    [0.55, 0.87, 0.66],  # journey
    [0.57, 0.85, 0.64],  # starts
    [0.22, 0.58, 0.33],  # with
    [0.77, 0.25, 0.10],  # one
    [0.05, 0.80, 0.55],  # step
]


def inputs() -> torch.Tensor:
    """The worked example, (6, 3) float32."""
    return torch.tensor(INPUTS)


def batch() -> torch.Tensor:
    """Two copies of the worked example, (2, 6, 3)."""
    x = inputs()
    return torch.stack((x, x))


@dataclass(frozen=True)
class Documented:
    id: str  # unique, e.g. "02_softmax/softmax_query_2"
    section: str
    name: str  # the graded name the value checks ("" for a value of the setup)
    expression: str  # the computation, as the curriculum writes it
    expected: Any  # nested lists of float, int or bool
    compute: Callable[[Any], torch.Tensor]
    atol: float = 1e-4
    gradable: bool = True

    def expected_tensor(self) -> torch.Tensor:
        return torch.tensor(self.expected)


def both(item):
    """A documented "each of the two items" value as the (2, ...) batch result."""
    return [item, item]


# --------------------------------------------------------------------- 01_scores

SCORE_MATRIX = [
    [0.9995, 0.9544, 0.9422, 0.4753, 0.4576, 0.6310],
    [0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865],
    [0.9422, 1.4754, 1.4570, 0.8296, 0.7154, 1.0605],
    [0.4753, 0.8434, 0.8296, 0.4937, 0.3474, 0.6565],
    [0.4576, 0.7070, 0.7154, 0.3474, 0.6654, 0.2935],
    [0.6310, 1.0865, 1.0605, 0.6565, 0.2935, 0.9450],
]

# --------------------------------------------------------------------- 02_softmax

WEIGHTS_QUERY_2 = [0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581]
ALL_WEIGHTS = [
    [0.2098, 0.2006, 0.1981, 0.1242, 0.1220, 0.1452],
    [0.1385, 0.2379, 0.2333, 0.1240, 0.1082, 0.1581],
    [0.1390, 0.2369, 0.2326, 0.1242, 0.1108, 0.1565],
    [0.1435, 0.2074, 0.2046, 0.1462, 0.1263, 0.1720],
    [0.1526, 0.1958, 0.1975, 0.1367, 0.1879, 0.1295],
    [0.1385, 0.2184, 0.2128, 0.1420, 0.0988, 0.1896],
]
SIMPLE_SELF_ATTENTION = [
    [0.4421, 0.5931, 0.5790], [0.4419, 0.6515, 0.5683], [0.4431, 0.6496, 0.5671],
    [0.4304, 0.6298, 0.5510], [0.4671, 0.5910, 0.5266], [0.4177, 0.6503, 0.5645],
]


def _scores_2(ns):
    return ns.score_matrix(inputs())[1]


# --------------------------------------------------------------------- 03_trainable_qkv


def seeded_weights(kind: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """`torch.manual_seed(123)`, then W_query, W_key, W_value = torch.<kind>(3, 2) in that order."""
    torch.manual_seed(123)
    draw = getattr(torch, kind)
    return draw(3, 2), draw(3, 2), draw(3, 2)


def _qkv(ns, kind):
    return ns.project_qkv(inputs(), *seeded_weights(kind))


def _query_2_attention(ns, kind):
    queries, keys, values = _qkv(ns, kind)
    return ns.scaled_dot_product_attention(queries[1], keys, values)  # (context, weights)


def _module(ns, name, seed, *args, **kwargs):
    torch.manual_seed(seed)
    return getattr(ns, name)(*args, **kwargs)


# --------------------------------------------------------------------- 04_causal_mask


def v2_789_scores() -> torch.Tensor:
    """`attn_scores = queries @ keys.T` with the layers of `torch.manual_seed(789); SelfAttention_v2(3, 2)`,
    rebuilt from plain Linear layers (W_query, W_key, W_value, in that order)."""
    torch.manual_seed(789)
    W_query, W_key = nn.Linear(3, 2, bias=False), nn.Linear(3, 2, bias=False)
    nn.Linear(3, 2, bias=False)  # W_value: drawn for the same random stream, unused here
    with torch.no_grad():
        x = inputs()
        return W_query(x) @ W_key(x).T


UNMASKED_WEIGHTS = [
    [0.1921, 0.1646, 0.1652, 0.1550, 0.1721, 0.1510],
    [0.2041, 0.1659, 0.1662, 0.1496, 0.1665, 0.1477],
    [0.2036, 0.1659, 0.1662, 0.1498, 0.1664, 0.1480],
    [0.1869, 0.1667, 0.1668, 0.1571, 0.1661, 0.1564],
    [0.1830, 0.1669, 0.1670, 0.1588, 0.1658, 0.1585],
    [0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529],
]
CAUSAL_WEIGHTS = [
    [1.0000, 0.0000, 0.0000, 0.0000, 0.0000, 0.0000],
    [0.5517, 0.4483, 0.0000, 0.0000, 0.0000, 0.0000],
    [0.3800, 0.3097, 0.3103, 0.0000, 0.0000, 0.0000],
    [0.2758, 0.2460, 0.2462, 0.2319, 0.0000, 0.0000],
    [0.2175, 0.1983, 0.1984, 0.1888, 0.1971, 0.0000],
    [0.1935, 0.1663, 0.1666, 0.1542, 0.1666, 0.1529],
]
CAUSAL_ATTENTION_123 = [
    [-0.4519, 0.2216], [-0.5874, 0.0058], [-0.6300, -0.0632],
    [-0.5675, -0.0843], [-0.5526, -0.0981], [-0.5299, -0.1081],
]


def _unmasked(ns=None):
    return torch.softmax(v2_789_scores() / math.sqrt(2), dim=-1)


def _dropout_ones():
    torch.manual_seed(123)
    return nn.Dropout(0.5)(torch.ones(6, 6))[0]


# --------------------------------------------------------------------- 06_multihead

SPLIT_HEADS_FLAT = [
    [[1, 2, 3, 4], [9, 10, 11, 12]],
    [[5, 6, 7, 8], [13, 14, 15, 16]],
    [[17, 18, 19, 20], [25, 26, 27, 28]],
    [[21, 22, 23, 24], [29, 30, 31, 32]],
]
WRAPPER_123 = [
    [-0.4519, 0.2216, 0.4772, 0.1063], [-0.5874, 0.0058, 0.5891, 0.3257],
    [-0.6300, -0.0632, 0.6202, 0.3860], [-0.5675, -0.0843, 0.5478, 0.3589],
    [-0.5526, -0.0981, 0.5321, 0.3428], [-0.5299, -0.1081, 0.5077, 0.3493],
]
MULTIHEAD_123 = [
    [0.3190, 0.4858], [0.2943, 0.3897], [0.2856, 0.3593],
    [0.2693, 0.3873], [0.2639, 0.3928], [0.2575, 0.4028],
]


def _no_grad(fn):
    def run(ns):
        with torch.no_grad():
            return fn(ns)

    return run


# 08_efficient_mha: the fused and SDPA layers draw, under one seed, the weights of 06's MultiHeadAttention, so
# they give MULTIHEAD_123; loaded from a MultiHeadAttention with biases, the fused layer gives that one's output
BIASED_MULTIHEAD_123 = [
    [0.7732, -0.2205], [0.7706, -0.1791], [0.7684, -0.1686],
    [0.7485, -0.1963], [0.7558, -0.1972], [0.7427, -0.2082],
]


def _loaded(ns):
    torch.manual_seed(123)
    mha = ns.MultiHeadAttention(3, 2, 6, 0.0, num_heads=2, qkv_bias=True)
    fused = ns.MultiHeadAttentionFused(3, 2, 6, 0.0, num_heads=2, qkv_bias=True).load_from(mha)
    return fused.eval()(batch())



# 09_kv_cache: the cached layer draws, under one seed, the weights of 06's MultiHeadAttention, so its full forward
# and any cached decoding of the worked batch give MULTIHEAD_123; kv_cache_bytes of the notebook's model table
def _decoded(ns, sizes):
    layer = _module(ns, "MultiHeadAttentionCached", 123, 3, 2, 6, 0.0, num_heads=2).eval()
    return torch.cat([layer(part, use_cache=True) for part in torch.split(batch(), list(sizes), dim=1)], dim=1)

# 07_positional_encoding: the demo table of seed 001 (its encoding doubles the even column index in the
# exponent; the notebook rebuilds the table and asks the student to spot that slip)
NOTES_W_Q = [[0.1, 0.3, 0.5], [0.2, 0.4, 0.6], [0.3, 0.5, 0.7]]
NOTES_W_K = [[0.2, 0.1, 0.4], [0.3, 0.2, 0.5], [0.4, 0.3, 0.6]]
NOTES_W_V = [[0.5, 0.4, 0.3], [0.6, 0.5, 0.2], [0.7, 0.6, 0.1]]
ENCODING_4x4 = [
    [0.0000, 1.0000, 0.0000, 1.0000],
    [0.8415, 0.5403, 0.0100, 0.9999],
    [0.9093, -0.4161, 0.0200, 0.9998],
    [0.1411, -0.9900, 0.0300, 0.9996],
]
ENCODING_WORKED = [  # sinusoidal_encoding(6, 3, start=1): positions 1..6 of the worked example
    [0.8415, 0.5403, 0.0022],
    [0.9093, -0.4161, 0.0043],
    [0.1411, -0.9900, 0.0065],
    [-0.7568, -0.6536, 0.0086],
    [-0.9589, 0.2837, 0.0108],
    [-0.2794, 0.9602, 0.0129],
]
NOTES_TABLE_ROWS = [  # x1..x3, T1..T6, o1..o3 of the first and the last token, as 001 prints them
    [1.271471, 0.690302, 0.890005, 0.315381, 0.239435, 0.105702, 0.044346, 0.066093, 0.229044,
     1.273928, 1.060221, 0.435727],
    [-0.229415, 1.760170, 0.550028, 0.288950, 0.230573, 0.118408, 0.058350, 0.080746, 0.222973,
     1.221021, 1.016597, 0.414371],
]


def _notes_table_rows(ns=None) -> torch.Tensor:
    """Seed 001's table (inputs + its encoding at positions 1..6, softmax(QK^T / sqrt(3)), output), rows 1 and 6."""
    d = 3
    positions = torch.arange(1, 7, dtype=torch.float64).unsqueeze(1)
    even = torch.tensor([0, 0, 2], dtype=torch.float64)  # the notes' loop variable i for columns 0, 1, 2
    angles = positions / 10000 ** (2 * even / d)
    encoding = torch.where(torch.arange(d) % 2 == 0, torch.sin(angles), torch.cos(angles)).float()
    x = inputs() + encoding
    q, k, v = x @ torch.tensor(NOTES_W_Q), x @ torch.tensor(NOTES_W_K), x @ torch.tensor(NOTES_W_V)
    weights = torch.softmax(q @ k.T / math.sqrt(d), dim=-1)
    table = torch.cat((x, weights, weights @ v), dim=1)  # (6, 12)
    return table[[0, -1]]


# 13_tiled_attention: q = k = v = batch; tiled_attention returns (out, logsumexp), each item the same
TILED_OUT = [
    [0.4374, 0.5896, 0.5582], [0.4362, 0.6228, 0.5523], [0.4370, 0.6216, 0.5515],
    [0.4303, 0.6104, 0.5417], [0.4525, 0.5874, 0.5274], [0.4219, 0.6231, 0.5507],
]
TILED_LSE = [2.2296, 2.4383, 2.4298, 2.1483, 2.1033, 2.2542]
TILED_CAUSAL_OUT = [
    [0.4300, 0.1500, 0.8900], [0.4993, 0.5657, 0.7572], [0.5249, 0.6685, 0.7148],
    [0.4541, 0.6381, 0.6314], [0.5206, 0.5514, 0.5236], [0.4219, 0.6231, 0.5507],
]
TILED_CAUSAL_LSE = [0.5771, 1.4124, 1.8541, 1.7728, 1.9471, 2.2542]


def _tiled(ns, part, **blocks):
    return ns.tiled_attention(batch(), batch(), batch(), **blocks)[part]


V = Documented
VALUES: tuple[Documented, ...] = (
    # 01_scores
    V("01_scores/dot_scores_query_2", "01_scores", "dot_scores", "dot_scores(inputs[1], inputs)",
      [0.9544, 1.4950, 1.4754, 0.8434, 0.7070, 1.0865],
      lambda ns: ns.dot_scores(inputs()[1], inputs())),
    V("01_scores/score_matrix", "01_scores", "score_matrix", "score_matrix(inputs)",
      SCORE_MATRIX, lambda ns: ns.score_matrix(inputs())),
    V("01_scores/score_matrix_batch", "01_scores", "score_matrix", "score_matrix(batch), each item",
      both(SCORE_MATRIX), lambda ns: ns.score_matrix(batch())),
    # 02_softmax
    V("02_softmax/normalize_by_sum_query_2", "02_softmax", "normalize_by_sum",
      "normalize_by_sum(score_matrix(inputs)[1])",
      [0.1455, 0.2278, 0.2249, 0.1285, 0.1077, 0.1656], lambda ns: ns.normalize_by_sum(_scores_2(ns))),
    V("02_softmax/softmax_naive_query_2", "02_softmax", "softmax_naive", "softmax_naive(score_matrix(inputs)[1])",
      WEIGHTS_QUERY_2, lambda ns: ns.softmax_naive(_scores_2(ns))),
    V("02_softmax/softmax_query_2", "02_softmax", "softmax", "softmax(score_matrix(inputs)[1])",
      WEIGHTS_QUERY_2, lambda ns: ns.softmax(_scores_2(ns))),
    V("02_softmax/softmax_query_2_sum", "02_softmax", "softmax", "softmax(score_matrix(inputs)[1]).sum()",
      1.0, lambda ns: ns.softmax(_scores_2(ns)).sum()),
    V("02_softmax/softmax_large", "02_softmax", "softmax", "softmax(tensor([1000., 1001.]))",
      [0.2689, 0.7311], lambda ns: ns.softmax(torch.tensor([1000.0, 1001.0]))),
    V("02_softmax/softmax_naive_large_is_nan", "02_softmax", "softmax_naive",
      "softmax_naive(tensor([1000., 1001.])).isnan()",
      [True, True], lambda ns: ns.softmax_naive(torch.tensor([1000.0, 1001.0])).isnan()),
    V("02_softmax/context_vector_2", "02_softmax", "context_vectors",
      "context_vectors(softmax(score_matrix(inputs)[1]), inputs)",
      [0.4419, 0.6515, 0.5683], lambda ns: ns.context_vectors(ns.softmax(_scores_2(ns)), inputs())),
    V("02_softmax/all_weights", "02_softmax", "softmax", "softmax(score_matrix(inputs))",
      ALL_WEIGHTS, lambda ns: ns.softmax(ns.score_matrix(inputs()))),
    V("02_softmax/simple_self_attention", "02_softmax", "simple_self_attention", "simple_self_attention(inputs)",
      SIMPLE_SELF_ATTENTION, lambda ns: ns.simple_self_attention(inputs())),
    V("02_softmax/simple_self_attention_batch", "02_softmax", "simple_self_attention",
      "simple_self_attention(batch), each item",
      both(SIMPLE_SELF_ATTENTION), lambda ns: ns.simple_self_attention(batch())),
    # 03_trainable_qkv, torch.rand weights
    V("03_trainable_qkv/query_2", "03_trainable_qkv", "project_qkv", "seed 123, rand(3, 2) x3: queries[1]",
      [0.4306, 1.4551], lambda ns: _qkv(ns, "rand")[0][1]),
    V("03_trainable_qkv/key_2", "03_trainable_qkv", "project_qkv", "seed 123, rand(3, 2) x3: keys[1]",
      [0.4433, 1.1419], lambda ns: _qkv(ns, "rand")[1][1]),
    V("03_trainable_qkv/value_2", "03_trainable_qkv", "project_qkv", "seed 123, rand(3, 2) x3: values[1]",
      [0.3951, 1.0037], lambda ns: _qkv(ns, "rand")[2][1]),
    V("03_trainable_qkv/scores_query_2", "03_trainable_qkv", "project_qkv",
      "seed 123, rand(3, 2) x3: queries[1] @ keys.T",
      [1.2705, 1.8524, 1.8111, 1.0795, 0.5577, 1.5440],
      lambda ns: _qkv(ns, "rand")[0][1] @ _qkv(ns, "rand")[1].T),
    V("03_trainable_qkv/weights_query_2", "03_trainable_qkv", "scaled_dot_product_attention",
      "seed 123, rand(3, 2) x3: scaled_dot_product_attention(queries[1], keys, values)[1]",
      [0.1500, 0.2264, 0.2199, 0.1311, 0.0906, 0.1820], lambda ns: _query_2_attention(ns, "rand")[1]),
    V("03_trainable_qkv/context_query_2", "03_trainable_qkv", "scaled_dot_product_attention",
      "seed 123, rand(3, 2) x3: scaled_dot_product_attention(queries[1], keys, values)[0]",
      [0.3061, 0.8210], lambda ns: _query_2_attention(ns, "rand")[0]),
    # 03_trainable_qkv, torch.randn weights
    V("03_trainable_qkv/randn_query_2", "03_trainable_qkv", "project_qkv", "seed 123, randn(3, 2) x3: queries[1]",
      [-1.1729, -0.0048], lambda ns: _qkv(ns, "randn")[0][1]),
    V("03_trainable_qkv/randn_scores_query_2", "03_trainable_qkv", "project_qkv",
      "seed 123, randn(3, 2) x3: queries[1] @ keys.T",
      [0.2172, 0.1376, 0.1730, -0.0491, 0.7616, -0.3809],
      lambda ns: _qkv(ns, "randn")[0][1] @ _qkv(ns, "randn")[1].T),
    V("03_trainable_qkv/randn_weights_query_2", "03_trainable_qkv", "scaled_dot_product_attention",
      "seed 123, randn(3, 2) x3: scaled_dot_product_attention(queries[1], keys, values)[1]",
      [0.1704, 0.1611, 0.1652, 0.1412, 0.2505, 0.1117], lambda ns: _query_2_attention(ns, "randn")[1]),
    V("03_trainable_qkv/randn_context_query_2", "03_trainable_qkv", "scaled_dot_product_attention",
      "seed 123, randn(3, 2) x3: scaled_dot_product_attention(queries[1], keys, values)[0]",
      [0.2854, 0.4081], lambda ns: _query_2_attention(ns, "randn")[0]),
    V("03_trainable_qkv/self_attention_v1", "03_trainable_qkv", "SelfAttention_v1",
      "torch.manual_seed(123); SelfAttention_v1(3, 2)(inputs)",
      [[0.2996, 0.8053], [0.3061, 0.8210], [0.3058, 0.8203],
       [0.2948, 0.7939], [0.2927, 0.7891], [0.2990, 0.8040]],
      _no_grad(lambda ns: _module(ns, "SelfAttention_v1", 123, 3, 2)(inputs()))),
    V("03_trainable_qkv/self_attention_v2", "03_trainable_qkv", "SelfAttention_v2",
      "torch.manual_seed(789); SelfAttention_v2(3, 2)(inputs)",
      [[-0.0739, 0.0713], [-0.0748, 0.0703], [-0.0749, 0.0702],
       [-0.0760, 0.0685], [-0.0763, 0.0679], [-0.0754, 0.0693]],
      _no_grad(lambda ns: _module(ns, "SelfAttention_v2", 789, 3, 2)(inputs()))),
    # 04_causal_mask
    V("04_causal_mask/unmasked_weights", "04_causal_mask", "",
      "softmax(attn_scores / sqrt(2)) with the layers of seed 789 SelfAttention_v2(3, 2)",
      UNMASKED_WEIGHTS, _unmasked),
    V("04_causal_mask/mask_and_renormalize", "04_causal_mask", "mask_and_renormalize",
      "mask_and_renormalize(unmasked weights)", CAUSAL_WEIGHTS, lambda ns: ns.mask_and_renormalize(_unmasked())),
    V("04_causal_mask/causal_attention_weights", "04_causal_mask", "causal_attention_weights",
      "causal_attention_weights(attn_scores, 2)", CAUSAL_WEIGHTS,
      lambda ns: ns.causal_attention_weights(v2_789_scores(), 2)),
    V("04_causal_mask/causal_attention", "04_causal_mask", "CausalAttention",
      "torch.manual_seed(123); CausalAttention(3, 2, 6, 0.0)(batch), each item",
      both(CAUSAL_ATTENTION_123),
      _no_grad(lambda ns: _module(ns, "CausalAttention", 123, 3, 2, 6, 0.0)(batch()))),
    V("04_causal_mask/dropout_mask_row_0", "04_causal_mask", "",
      "torch.manual_seed(123); nn.Dropout(0.5)(torch.ones(6, 6))[0] (PyTorch 2.13, Linux CPU)",
      [2.0, 2.0, 0.0, 2.0, 2.0, 0.0], lambda ns=None: _dropout_ones(), gradable=False),
    # 05_padding_mask
    V("05_padding_mask/key_padding_mask", "05_padding_mask", "key_padding_mask", "key_padding_mask([4, 3, 2], 4)",
      [[False, False, False, False], [False, False, False, True], [False, False, True, True]],
      lambda ns: ns.key_padding_mask([4, 3, 2], 4)),
    # 06_multihead
    V("06_multihead/split_heads", "06_multihead", "split_heads",
      "split_heads(torch.arange(1, 33).reshape(2, 2, 8), 2).reshape(4, 2, 4)",
      SPLIT_HEADS_FLAT, lambda ns: ns.split_heads(torch.arange(1, 33).reshape(2, 2, 8), 2).reshape(4, 2, 4)),
    V("06_multihead/multi_head_wrapper", "06_multihead", "MultiHeadAttentionWrapper",
      "torch.manual_seed(123); MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=2)(batch), each item",
      both(WRAPPER_123),
      _no_grad(lambda ns: _module(ns, "MultiHeadAttentionWrapper", 123, 3, 2, 6, 0.0, num_heads=2)(batch()))),
    V("06_multihead/multi_head_attention", "06_multihead", "MultiHeadAttention",
      "torch.manual_seed(123); MultiHeadAttention(3, 2, 6, 0.0, num_heads=2)(batch), each item",
      both(MULTIHEAD_123),
      _no_grad(lambda ns: _module(ns, "MultiHeadAttention", 123, 3, 2, 6, 0.0, num_heads=2)(batch()))),
    # 08_efficient_mha (part 2)
    V("08_efficient_mha/fused", "08_efficient_mha", "MultiHeadAttentionFused",
      "torch.manual_seed(123); MultiHeadAttentionFused(3, 2, 6, 0.0, num_heads=2)(batch), each item",
      both(MULTIHEAD_123),
      _no_grad(lambda ns: _module(ns, "MultiHeadAttentionFused", 123, 3, 2, 6, 0.0, num_heads=2)(batch()))),
    V("08_efficient_mha/loaded", "08_efficient_mha", "MultiHeadAttentionFused",
      "torch.manual_seed(123); mha = MultiHeadAttention(3, 2, 6, 0.0, num_heads=2, qkv_bias=True); "
      "MultiHeadAttentionFused(3, 2, 6, 0.0, num_heads=2, qkv_bias=True).load_from(mha)(batch), each item",
      both(BIASED_MULTIHEAD_123), _no_grad(_loaded)),
    V("08_efficient_mha/sdpa", "08_efficient_mha", "MultiHeadAttentionSDPA",
      "torch.manual_seed(123); MultiHeadAttentionSDPA(3, 2, 6, 0.0, num_heads=2)(batch), each item",
      both(MULTIHEAD_123),
      _no_grad(lambda ns: _module(ns, "MultiHeadAttentionSDPA", 123, 3, 2, 6, 0.0, num_heads=2).eval()(batch()))),
    # 09_kv_cache (part 2)
    V("09_kv_cache/full", "09_kv_cache", "MultiHeadAttentionCached",
      "torch.manual_seed(123); MultiHeadAttentionCached(3, 2, 6, 0.0, num_heads=2)(batch), each item",
      both(MULTIHEAD_123),
      _no_grad(lambda ns: _module(ns, "MultiHeadAttentionCached", 123, 3, 2, 6, 0.0, num_heads=2)(batch()))),
    V("09_kv_cache/one_token_at_a_time", "09_kv_cache", "MultiHeadAttentionCached",
      "torch.manual_seed(123); the batch fed one token at a time with use_cache=True, concatenated, each item",
      both(MULTIHEAD_123), _no_grad(lambda ns: _decoded(ns, (1,) * 6))),
    V("09_kv_cache/prompt_then_tokens", "09_kv_cache", "MultiHeadAttentionCached",
      "torch.manual_seed(123); batch[:, :4], batch[:, 4:5], batch[:, 5:] with use_cache=True, concatenated",
      both(MULTIHEAD_123), _no_grad(lambda ns: _decoded(ns, (4, 1, 1)))),
    V("09_kv_cache/bytes_table", "09_kv_cache", "kv_cache_bytes",
      "kv_cache_bytes of (12, 12, 64, 1024, 2), (32, 32, 128, 4096, 2), (32, 8, 128, 8192, 2)",
      [37_748_736, 2_147_483_648, 1_073_741_824],
      lambda ns: torch.tensor([ns.kv_cache_bytes(*shape) for shape in
                               ((12, 12, 64, 1024, 2), (32, 32, 128, 4096, 2), (32, 8, 128, 8192, 2))]),
      atol=0),
    # 07_positional_encoding (bonus)
    V("07_positional_encoding/encoding_4x4", "07_positional_encoding", "sinusoidal_encoding",
      "sinusoidal_encoding(4, 4)", ENCODING_4x4, lambda ns: ns.sinusoidal_encoding(4, 4)),
    V("07_positional_encoding/encoding_worked_example", "07_positional_encoding", "sinusoidal_encoding",
      "sinusoidal_encoding(6, 3, start=1)", ENCODING_WORKED, lambda ns: ns.sinusoidal_encoding(6, 3, start=1)),
    V("07_positional_encoding/notes_table", "07_positional_encoding", "",
      "seed 001's table: inputs + its encoding (exponent 2*i/d, i the even column), W_Q/W_K/W_V, "
      "softmax(QK^T / sqrt(3)), output; first and last rows", NOTES_TABLE_ROWS, _notes_table_rows, atol=1e-6),
    # 13_tiled_attention (part 2)
    V("13_tiled_attention/out", "13_tiled_attention", "tiled_attention",
      "tiled_attention(batch, batch, batch, block_q=2, block_k=4)[0], each item", both(TILED_OUT),
      lambda ns: _tiled(ns, 0, block_q=2, block_k=4)),
    V("13_tiled_attention/logsumexp", "13_tiled_attention", "tiled_attention",
      "tiled_attention(batch, batch, batch, block_q=2, block_k=4)[1], each item", both(TILED_LSE),
      lambda ns: _tiled(ns, 1, block_q=2, block_k=4)),
    V("13_tiled_attention/causal_out", "13_tiled_attention", "tiled_attention",
      "tiled_attention(batch, batch, batch, block_q=2, block_k=2, causal=True)[0], each item",
      both(TILED_CAUSAL_OUT), lambda ns: _tiled(ns, 0, block_q=2, block_k=2, causal=True)),
    V("13_tiled_attention/causal_logsumexp", "13_tiled_attention", "tiled_attention",
      "tiled_attention(batch, batch, batch, block_q=2, block_k=2, causal=True)[1], each item",
      both(TILED_CAUSAL_LSE), lambda ns: _tiled(ns, 1, block_q=2, block_k=2, causal=True)),
)

# 11_sliding_window (part 2): the band of six tokens and a window of 3 (query i sees i - 3 < j <= i), and the layer
# built under torch.manual_seed(123), which draws 06's weights: window 3, and window 6 (it covers the sequence: 06's)
SLIDING_MASK_6_3 = [
    [False, True, True, True, True, True],
    [False, False, True, True, True, True],
    [False, False, False, True, True, True],
    [True, False, False, False, True, True],
    [True, True, False, False, False, True],
    [True, True, True, False, False, False],
]
SLIDING_WINDOW_3 = [
    [0.3190, 0.4858], [0.2943, 0.3897], [0.2856, 0.3593],
    [0.2530, 0.3552], [0.2432, 0.3942], [0.2298, 0.4474],
]
VALUES += (
    V("11_sliding_window/mask_6_3", "11_sliding_window", "sliding_window_mask", "sliding_window_mask(6, 3)",
      SLIDING_MASK_6_3, lambda ns: ns.sliding_window_mask(6, 3)),
    V("11_sliding_window/window_3", "11_sliding_window", "SlidingWindowAttention",
      "torch.manual_seed(123); SlidingWindowAttention(3, 2, 6, 0.0, num_heads=2, window=3)(batch), each item",
      both(SLIDING_WINDOW_3),
      _no_grad(lambda ns: _module(ns, "SlidingWindowAttention", 123, 3, 2, 6, 0.0, num_heads=2, window=3)(batch()))),
    V("11_sliding_window/window_6", "11_sliding_window", "SlidingWindowAttention",
      "torch.manual_seed(123); SlidingWindowAttention(3, 2, 6, 0.0, num_heads=2, window=6)(batch), each item",
      both(MULTIHEAD_123),
      _no_grad(lambda ns: _module(ns, "SlidingWindowAttention", 123, 3, 2, 6, 0.0, num_heads=2, window=6)(batch()))),
)

# 12_rope (part 2): the tables of rope_angles(4, 6), and the worked example's queries rotated with them
ROPE_COS_4x6 = [[1.0000, 1.0000, 1.0000, 1.0000], [0.5403, 0.9999, 0.5403, 0.9999],
                [-0.4161, 0.9998, -0.4161, 0.9998], [-0.9900, 0.9996, -0.9900, 0.9996],
                [-0.6536, 0.9992, -0.6536, 0.9992], [0.2837, 0.9988, 0.2837, 0.9988]]
ROPE_SIN_4x6 = [[0.0000, 0.0000, 0.0000, 0.0000], [0.8415, 0.0100, 0.8415, 0.0100],
                [0.9093, 0.0200, 0.9093, 0.0200], [0.1411, 0.0300, 0.1411, 0.0300],
                [-0.7568, 0.0400, -0.7568, 0.0400], [-0.9589, 0.0500, -0.9589, 0.0500]]
ROPE_QUERIES_ROTATED = [[0.3022, 0.9986, 0.4093, 0.9230], [-0.2031, 1.5081, 0.5448, 0.9365],
                        [-0.5649, 1.4772, 0.1258, 0.9491], [-0.2008, 0.8424, -0.2124, 0.4631],
                        [0.0232, 0.6615, -0.3701, 0.6515], [0.3328, 1.0925, -0.0843, 0.5496]]


def _rope_queries(ns):
    torch.manual_seed(123)
    queries = inputs() @ torch.rand(3, 4)  # W_query = torch.rand(3, 4), the first draw after the seed
    return ns.apply_rope(queries, *ns.rope_angles(4, 6))


ROPE_ATTENTION = [[0.8918, 0.9171, 1.0733, 0.8657], [1.2376, 0.8801, 1.4021, 1.2247],
                  [1.3093, 0.8704, 1.4677, 1.3086], [1.1689, 0.7687, 1.3119, 1.1535],
                  [1.0449, 0.7358, 1.1691, 1.0933], [1.0730, 0.6947, 1.2029, 1.0545]]


def _rope_attention(ns):
    torch.manual_seed(123)
    queries, keys, values = (inputs() @ torch.rand(3, 4) for _ in range(3))  # W_query, W_key, W_value in order
    return ns.rope_attention(queries, keys, values, *ns.rope_angles(4, 6))


VALUES = VALUES + (
    V("12_rope/cos_4x6", "12_rope", "rope_angles", "rope_angles(4, 6)[0]", ROPE_COS_4x6,
      lambda ns: ns.rope_angles(4, 6)[0]),
    V("12_rope/sin_4x6", "12_rope", "rope_angles", "rope_angles(4, 6)[1]", ROPE_SIN_4x6,
      lambda ns: ns.rope_angles(4, 6)[1]),
    V("12_rope/queries_rotated", "12_rope", "apply_rope",
      "torch.manual_seed(123); queries = inputs @ torch.rand(3, 4); apply_rope(queries, *rope_angles(4, 6))",
      ROPE_QUERIES_ROTATED, _rope_queries),
    V("12_rope/rope_attention", "12_rope", "rope_attention",
      "torch.manual_seed(123); queries, keys, values = (inputs @ torch.rand(3, 4) for 3 draws); "
      "rope_attention(queries, keys, values, *rope_angles(4, 6))", ROPE_ATTENTION, _rope_attention),
)

# 10_grouped_query (part 2): four query heads sharing two key/value groups, then one (multi-query attention);
# with a group per head the layer draws the weights of 06's MultiHeadAttention, so it gives MULTIHEAD_123
GROUPED_123 = [
    [-0.1750, 0.0796, 0.1065, 0.1746, -0.4003, 0.0008, -0.3314, 0.2663],
    [-0.1783, 0.0244, 0.1042, 0.2030, -0.5012, -0.0195, -0.2814, 0.3641],
    [-0.1785, 0.0100, 0.0982, 0.2133, -0.5316, -0.0229, -0.2639, 0.3939],
    [-0.1344, -0.0034, 0.0713, 0.2008, -0.5152, -0.0182, -0.2041, 0.3972],
    [-0.1124, 0.0043, 0.0644, 0.1822, -0.4940, -0.0015, -0.1932, 0.3891],
    [-0.1011, -0.0109, 0.0562, 0.1860, -0.5012, -0.0100, -0.1660, 0.3996],
]
MULTI_QUERY_123 = [
    [-0.0318, -0.0681, -0.0645, -0.4353, -0.1371, 0.0676, -0.1464, 0.6597],
    [-0.0707, 0.0357, -0.1229, -0.4796, -0.1246, 0.0788, -0.0862, 0.8086],
    [-0.0896, 0.0706, -0.1385, -0.4943, -0.1230, 0.0833, -0.0668, 0.8599],
    [-0.0556, 0.0436, -0.1221, -0.4634, -0.1192, 0.0634, -0.0433, 0.8162],
    [-0.0497, 0.0344, -0.1168, -0.4562, -0.1180, 0.0595, -0.0432, 0.8037],
    [-0.0320, 0.0270, -0.1136, -0.4443, -0.1157, 0.0505, -0.0290, 0.7892],
]
VALUES += tuple(
    V(f"10_grouped_query/{label}", "10_grouped_query", "GroupedQueryAttention",
      f"torch.manual_seed(123); GroupedQueryAttention(3, {d_out}, 6, 0.0, num_heads={heads}, "
      f"num_kv_groups={groups})(batch), each item", both(expected),
      _no_grad(lambda ns, d_out=d_out, heads=heads, groups=groups: _module(
          ns, "GroupedQueryAttention", 123, 3, d_out, 6, 0.0, num_heads=heads, num_kv_groups=groups)(batch())))
    for label, d_out, heads, groups, expected in (("grouped", 8, 4, 2, GROUPED_123),
                                                  ("multi_query", 8, 4, 1, MULTI_QUERY_123),
                                                  ("a_group_per_head", 2, 2, 2, MULTIHEAD_123))
)

BY_ID = {value.id: value for value in VALUES}
assert len(BY_ID) == len(VALUES), "duplicate documented-value id"


def for_section(section_id: str, gradable_only: bool = True) -> list[Documented]:
    return [v for v in VALUES if v.section == section_id and (v.gradable or not gradable_only)]


def matches(value: Documented, actual: torch.Tensor) -> bool:
    """Whether `actual` equals the documented value (bool/int exactly, floats within atol)."""
    expected = value.expected_tensor()
    if not isinstance(actual, torch.Tensor) or tuple(actual.shape) != tuple(expected.shape):
        return False
    actual = actual.detach().cpu()
    if expected.dtype == torch.bool:
        return actual.dtype == torch.bool and bool(torch.equal(actual, expected))
    if expected.dtype == torch.int64:
        return not actual.is_floating_point() and bool(torch.equal(actual.to(torch.int64), expected))
    return bool(torch.allclose(actual.float(), expected.float(), atol=value.atol, rtol=0))
