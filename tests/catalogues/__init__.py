"""The catalogues of common mistakes, one per section: section id -> its module here, mistakes_<id>.py.

Each is data (MISTAKES, STYLES, HARD_CODED), not tests: tests/test_catalogues.py grades every
catalogue, and the other tests read them. A new section's catalogue is imported below.
"""
from __future__ import annotations

from . import (mistakes_01_scores, mistakes_02_softmax, mistakes_03_trainable_qkv, mistakes_04_causal_mask,
               mistakes_05_padding_mask, mistakes_06_multihead, mistakes_07_positional_encoding,
               mistakes_08_efficient_mha, mistakes_09_kv_cache, mistakes_10_grouped_query, mistakes_11_sliding_window,
               mistakes_12_rope, mistakes_13_tiled_attention)

CATALOGUES = {module.__name__.rsplit(".", 1)[-1].removeprefix("mistakes_"): module
              for module in (mistakes_01_scores, mistakes_02_softmax, mistakes_03_trainable_qkv,
                             mistakes_04_causal_mask, mistakes_05_padding_mask, mistakes_06_multihead,
                             mistakes_07_positional_encoding, mistakes_08_efficient_mha, mistakes_09_kv_cache,
                             mistakes_10_grouped_query, mistakes_11_sliding_window, mistakes_12_rope,
                             mistakes_13_tiled_attention)}
