"""Section 07 (bonus): telling attention where each token sits."""
import math

import torch


# %% sinusoidal_encoding
def sinusoidal_encoding(num_positions, d_model, start=0):
    """The fixed sine/cosine positional encoding of the original Transformer.

    Dimensions: P = num_positions, D = d_model. Column pair (2i, 2i + 1) shares
    one frequency, 1 / 10000^(2i / D):

        PE[p, 2i]     = sin(p / 10000^(2i / D))
        PE[p, 2i + 1] = cos(p / 10000^(2i / D))

    Args:
        num_positions: P, how many consecutive positions (rows) to encode.
        d_model: D, the embedding size; any D >= 1, odd ones included (the
            last column of an odd D is a sine without its cosine partner).
        start: the position of the first row; row r encodes position start + r.

    Returns:
        (P, D) float32 tensor whose row r is the encoding of position start + r.

    Hints:
        1. Build every position at once: torch.arange gives a column of positions
           and a row of even column indices 2i; broadcasting gives all the angles.
        2. Fill the even columns with sin and the odd ones with cos (slices 0::2
           and 1::2); for an odd D there is one sine column more than cosines.
        3. Both columns of pair i use the exponent 2i / D, where 2i is the index
           of the pair's even column (0, 2, 4, ...).
    """
    # BEGIN SOLUTION
    positions = torch.arange(start, start + num_positions, dtype=torch.float32).unsqueeze(1)  # (P, 1)
    even = torch.arange(0, d_model, 2, dtype=torch.float32)  # (ceil(D/2),): the values 2i
    inv_freq = torch.exp(even * (-math.log(10000.0) / d_model))  # (ceil(D/2),)
    angles = positions * inv_freq  # (P, ceil(D/2))
    encoding = torch.zeros(num_positions, d_model)  # (P, D)
    encoding[:, 0::2] = torch.sin(angles)
    encoding[:, 1::2] = torch.cos(angles[:, : d_model // 2])  # (P, floor(D/2))
    return encoding
    # END SOLUTION
