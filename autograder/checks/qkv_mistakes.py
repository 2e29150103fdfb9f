"""Section 03's common mistakes, computed by its checks: what a wrong scaled_dot_product_attention or a wrong
forward of SelfAttention_v1/v2 returns, so that a check can name the one a student's output equals. Its sentences
belong to section 03's catalogue. Shipped with the visible checks: it never imports `solutions`."""
import math

import torch

from autograder.checks.qkv_forward import attend
from autograder.core.harness import Mistake
from autograder.i18n import N_

NO_SCALING = N_("no scaling by sqrt(d_k) (divide the scores by keys.shape[-1] ** 0.5 before the softmax)")
OVER_QUERIES = N_("softmax over dim -2 (over the queries) instead of the last dim (over the keys): the wrong dim")
BY_D_K = N_("scores divided by d_k instead of sqrt(d_k)")
BY_TWICE_D_K = N_("scores divided by 2 * d_k: ** binds before /, so scores / d_k ** 1/2 is scores / d_k / 2; write "
                  "d_k ** 0.5")
# context = attn_scores @ values: the weights computed, then left unused (the book's variable names sit side by side)
SCORES_NOT_WEIGHTS = N_("the scores multiplied by the values instead of the attention weights (the softmax's output "
                        "unused: context = attn_weights @ values)")
# d_k = keys.shape[1]: the last dim of a (T, d_k) matrix, but the number of keys on a (B, T, d_k) batch
DIM_1_AS_D_K = N_("d_k taken as keys.shape[1], which on a batch (B, T, d_k) is the number of keys T: d_k is the last "
                  "dim, keys.shape[-1]")
NO_SOFTMAX = N_("no softmax: the scaled scores multiplied by the values (the weights are softmax(scores / "
                "sqrt(d_k)) along the keys)")


def attention_mistakes(queries, keys, values):
    """description -> (context, weights) that a common wrong scaled_dot_product_attention returns."""
    d_k, d_v, num_keys = keys.shape[-1], values.shape[-1], keys.shape[-2]
    wrong = {NO_SCALING: attend(queries, keys, values, 1.0),
             BY_D_K: attend(queries, keys, values, d_k),
             BY_TWICE_D_K: attend(queries, keys, values, 2 * d_k)}
    if d_v != d_k:
        # a template and its numbers: the mistake is recorded in English, shown in the reader's language
        wrong[Mistake(N_("scores divided by sqrt(d_v) = sqrt(values.shape[-1]) = sqrt({d_v}) instead of "
                         "sqrt(d_k) = sqrt(keys.shape[-1]) = sqrt({d_k})"), d_v=d_v, d_k=d_k)] = \
            attend(queries, keys, values, math.sqrt(d_v))
    if num_keys != d_k:
        wrong[N_("scores divided by the square root of the number of keys instead of sqrt(d_k)")] = \
            attend(queries, keys, values, math.sqrt(num_keys))
    if queries.dim() >= 2:
        wrong[OVER_QUERIES] = attend(queries, keys, values, math.sqrt(d_k), dim=-2)
    return wrong


def module_mistakes(reference, x):
    """description -> output of a common wrong forward, with the weights of `reference`
    (a seeded reference module, or seeded_projections: anything with W_query, W_key, W_value)."""
    with torch.no_grad():
        if isinstance(reference.W_query, torch.nn.Linear):
            queries, keys, values = reference.W_query(x), reference.W_key(x), reference.W_value(x)
        else:
            queries, keys, values = x @ reference.W_query, x @ reference.W_key, x @ reference.W_value
    d_in, d_k = x.shape[-1], keys.shape[-1]
    wrong = {NO_SCALING: attend(queries, keys, values, 1.0)[0],
             OVER_QUERIES: attend(queries, keys, values, math.sqrt(d_k), dim=-2)[0],
             N_("queries and keys swapped (keys @ queries^T, or W_key created before W_query)"):
                 attend(keys, queries, values, math.sqrt(d_k))[0],
             BY_D_K: attend(queries, keys, values, d_k)[0],
             SCORES_NOT_WEIGHTS: queries @ keys.transpose(-2, -1) @ values,
             NO_SOFTMAX: queries @ keys.transpose(-2, -1) / math.sqrt(d_k) @ values}
    if d_in != d_k:
        wrong[Mistake(N_("scores divided by sqrt(d_in) = sqrt(x.shape[-1]) = sqrt({d_in}) instead of sqrt(d_k) = "
                         "sqrt(keys.shape[-1]) = sqrt({d_k})"), d_in=d_in, d_k=d_k)] = \
            attend(queries, keys, values, math.sqrt(d_in))[0]
    return wrong
