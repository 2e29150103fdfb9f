"""Section 12: rotary position embeddings (RoPE), in the rotate-half convention of the Llama family."""
import torch


# %% rope_angles
def rope_angles(head_dim, context_length, theta_base=10_000):
    """The cosine and sine tables of rotary position embeddings.

    Dimensions: T = context_length, d = head_dim (even). Feature pair i is
    (i, i + d/2): the first half of the features is paired with the second
    half (the rotate-half convention of the Llama family). Pair i turns with
    the frequency inv_freq[i] = theta_base ** (-2i / d), so position p turns it
    by the angle p * inv_freq[i]. Both features of pair i need that angle, so
    the table holds the d/2 angles twice, side by side:

        angles[p] = [p*inv_freq[0], ..., p*inv_freq[d/2-1], p*inv_freq[0], ..., p*inv_freq[d/2-1]]

    Args:
        head_dim: d, the size of one head's queries and keys; must be even.
        context_length: T, how many positions (rows): 0, 1, ..., T - 1.
        theta_base: the base of the frequencies (10_000 as in the RoPE paper;
            Llama 3 uses 500_000).

    Returns:
        (cos, sin): two float32 tensors of shape (T, d), cos(angles) and sin(angles).

    Raises:
        ValueError: head_dim is odd (naming it).

    Hints:
        1. torch.arange(0, head_dim, 2) gives the values 2i; divide by head_dim.
        2. A column of positions times a row of frequencies gives every angle at once.
        3. torch.cat((angles, angles), dim=-1) puts the two halves side by side.
    """
    # BEGIN SOLUTION
    if head_dim % 2 != 0:
        raise ValueError(f"head_dim must be even (its features form pairs), got {head_dim}")
    two_i = torch.arange(0, head_dim, 2, dtype=torch.float32)  # (d/2,): the values 2i
    inv_freq = theta_base ** (-two_i / head_dim)  # (d/2,)
    positions = torch.arange(context_length, dtype=torch.float32)  # (T,)
    angles = positions[:, None] * inv_freq[None, :]  # (T, d/2)
    angles = torch.cat((angles, angles), dim=-1)  # (T, d): pair i's angle in columns i and i + d/2
    return torch.cos(angles), torch.sin(angles)
    # END SOLUTION


# %% apply_rope
def apply_rope(x, cos, sin, offset=0):
    """Rotate each feature pair (i, i + d/2) of x by its position's angle.

    Dimensions: T = number of tokens in x, d = head_dim. x holds queries or
    keys (never values), one row per token: token t sits at position
    offset + t, so it takes row offset + t of the tables.

        out = x * cos + rotate_half(x) * sin,   rotate_half(x) = cat(-x2, x1)

    where x1 = x[..., :d/2] and x2 = x[..., d/2:].

    Args:
        x: (..., T, d) tensor: (T, d), (B, T, d) or (B, H, T, d).
        cos, sin: (context_length, d) tables of rope_angles, with
            context_length >= offset + T.
        offset: the position of x's first token (the number of tokens already
            in a KV cache); 0 for a whole sequence.

    Returns:
        A new tensor of x's shape; x itself is left unchanged.

    Hints:
        1. Rows offset .. offset + T - 1 of the tables are the ones x needs.
        2. Slices with ... (x[..., :half]) work for any number of leading dims,
           and a (T, d) table broadcasts against (..., T, d).
    """
    # BEGIN SOLUTION
    num_tokens, head_dim = x.shape[-2], x.shape[-1]
    half = head_dim // 2
    cos = cos[offset:offset + num_tokens]  # (T, d): the rows of positions offset .. offset + T - 1
    sin = sin[offset:offset + num_tokens]  # (T, d)
    x1, x2 = x[..., :half], x[..., half:]  # (..., T, d/2) each
    rotated = torch.cat((-x2, x1), dim=-1)  # (..., T, d): rotate_half(x)
    return x * cos + rotated * sin  # (..., T, d)
    # END SOLUTION


# %% rope_attention
def rope_attention(queries, keys, values, cos, sin, offset=0):
    """Causal scaled dot-product attention whose queries and keys are rotated by RoPE, and whose values are not.

    Dimensions: T = number of tokens, d = head_dim. Token t of the inputs sits at position offset + t, for the
    queries and the keys alike. The rotated queries and keys give the scores; query i sees the keys j <= i only
    (True = hidden above the diagonal, as in every mask of this course); the values are averaged as they are.

        q, k = apply_rope(queries, ...), apply_rope(keys, ...)
        out = softmax(mask(q @ k^T / sqrt(d))) @ values

    Args:
        queries, keys, values: (..., T, d) tensors: (T, d), (B, T, d) or (B, H, T, d).
        cos, sin: (context_length, d) tables of rope_angles, with context_length >= offset + T.
        offset: the position of the first token; passed on to apply_rope for the queries and the keys.

    Returns:
        The context vectors, a (..., T, d) tensor.

    Hints:
        1. Call your apply_rope twice, on the queries and on the keys, with the same offset.
        2. Scale the scores by the square root of d, the size of one head, read from queries.shape[-1].
        3. torch.triu(torch.ones(T, T, dtype=torch.bool, device=queries.device), diagonal=1) is True where a
           key comes after its query: fill those scores with -inf before the softmax over the keys (dim=-1).
    """
    # BEGIN SOLUTION
    rotated_queries = apply_rope(queries, cos, sin, offset)  # (..., T, d)
    rotated_keys = apply_rope(keys, cos, sin, offset)  # (..., T, d)
    num_tokens, head_dim = rotated_queries.shape[-2], rotated_queries.shape[-1]
    scores = rotated_queries @ rotated_keys.transpose(-2, -1) / head_dim ** 0.5  # (..., T, T)
    future = torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool, device=scores.device), diagonal=1)
    weights = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)  # (..., T, T)
    return weights @ values  # (..., T, d): the values as they are, never rotated
    # END SOLUTION
