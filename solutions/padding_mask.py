"""Section 05: batches of sentences of different lengths."""
import torch
from torch import nn


# %% key_padding_mask
def key_padding_mask(seq_lens, max_len):
    """Which positions of each sentence are padding.

    Dimensions: B = batch size, L = max_len.
    Mask convention: True means "hidden / not allowed" (here: padding).

    Args:
        seq_lens: 1-D int tensor or list of B true lengths, each in [1, max_len].
        max_len: L, the padded length.

    Returns:
        (B, L) bool tensor: [b, j] is True when j >= seq_lens[b].

    Raises:
        ValueError naming the bad entry when a length is < 1 or > max_len.

    Hints:
        1. torch.as_tensor turns a list into a tensor (and leaves a tensor as it is).
        2. Compare a (1, L) row of positions with a (B, 1) column of lengths.
    """
    # BEGIN SOLUTION
    lengths = torch.as_tensor(seq_lens)
    for index, length in enumerate(lengths.tolist()):
        if length < 1 or length > max_len:
            raise ValueError(
                f"seq_lens[{index}] = {length} is outside [1, max_len={max_len}]"
            )
    positions = torch.arange(max_len, device=lengths.device)  # (L,)
    return positions[None, :] >= lengths[:, None]  # (B, L)
    # END SOLUTION


# %% mask_padded_scores
def mask_padded_scores(scores, key_padding_mask):
    """Hide the padded keys from every query.

    Dimensions: B = batch size, L = sequence length.
    Mask convention: True means "hidden / not allowed".

    Args:
        scores: (B, L, L); row i holds query i's scores over the keys.
        key_padding_mask: (B, L) bool, True at padding.

    Returns:
        A new (B, L, L) tensor where every padded KEY column is -inf (or -1e9).
        The argument is left unchanged.

    Hints:
        1. The mask hides keys, i.e. columns: give it a query axis with mask[:, None, :].
        2. Use the out-of-place masked_fill.
    """
    # BEGIN SOLUTION
    return scores.masked_fill(key_padding_mask[:, None, :], float("-inf"))  # (B, L, L)
    # END SOLUTION


# %% padded_attention
def padded_attention(queries, keys, values, key_padding_mask):
    """Scaled dot-product attention that ignores padded keys.

    Dimensions: B = batch size, L = sequence length, d = feature size.
    Mask convention: True means "hidden / not allowed".

    Args:
        queries, keys, values: (B, L, d).
        key_padding_mask: (B, L) bool, True at padding.

    Returns:
        (out, weights): out (B, L, d), weights (B, L, L); weights are 0 at padded
        keys and every row sums to 1.

    Hints:
        1. Scores = queries @ keys^T / d ** 0.5.
        2. mask_padded_scores, then softmax over the last dim, then @ values.
    """
    # BEGIN SOLUTION
    d = queries.shape[-1]
    attn_scores = queries @ keys.transpose(-2, -1) / d**0.5  # (B, L, L)
    attn_scores = mask_padded_scores(attn_scores, key_padding_mask)
    attn_weights = torch.softmax(attn_scores, dim=-1)  # (B, L, L)
    return attn_weights @ values, attn_weights
    # END SOLUTION


# %% PaddedSelfAttention
class PaddedSelfAttention(nn.Module):
    """Single-head attention with a key padding mask and an optional attention mask.

    Dimensions: B = batch size, L = sequence length, D = embed_dim.
    Mask convention: True means "hidden / not allowed" for both masks.

    Create the layers in exactly this order:
        1. W_q   = nn.Linear(D, D, bias=False)
        2. W_k   = nn.Linear(D, D, bias=False)
        3. W_v   = nn.Linear(D, D, bias=False)
        4. W_out = nn.Linear(D, D, bias=False)

    forward(q, k, v, key_padding_mask=None, attn_mask=None):
        q, k, v: (B, L, D); key_padding_mask: (B, L); attn_mask: (L, L) or (B, L, L).
        Returns (out, weights): out (B, L, D) after W_out, weights (B, L, L).

    Hints:
        1. Project q, k, v with W_q, W_k, W_v; scale the scores by D ** 0.5.
        2. attn_mask hides (query, key) pairs; key_padding_mask hides key columns.
        3. Apply W_out to the context vectors, not to the weights.
    """

    def __init__(self, embed_dim):
        super().__init__()
        # BEGIN SOLUTION
        self.W_q = nn.Linear(embed_dim, embed_dim, bias=False)
        self.W_k = nn.Linear(embed_dim, embed_dim, bias=False)
        self.W_v = nn.Linear(embed_dim, embed_dim, bias=False)
        self.W_out = nn.Linear(embed_dim, embed_dim, bias=False)
        # END SOLUTION

    def forward(self, q, k, v, key_padding_mask=None, attn_mask=None):
        # BEGIN SOLUTION
        queries = self.W_q(q)  # (B, L, D)
        keys = self.W_k(k)  # (B, L, D)
        values = self.W_v(v)  # (B, L, D)
        attn_scores = queries @ keys.transpose(-2, -1) / queries.shape[-1] ** 0.5  # (B, L, L)
        if attn_mask is not None:
            attn_scores = attn_scores.masked_fill(attn_mask, float("-inf"))
        if key_padding_mask is not None:
            attn_scores = attn_scores.masked_fill(key_padding_mask[:, None, :], float("-inf"))
        attn_weights = torch.softmax(attn_scores, dim=-1)  # (B, L, L)
        return self.W_out(attn_weights @ values), attn_weights
        # END SOLUTION
