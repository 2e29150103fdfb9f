"""CausalAttention's forward written out by the checks of section 04, with a module's own parameters, and the
causal mask it hides the future with. Shipped whole with the visible checks: it never imports `solutions`."""
import math

import torch

INF = float("-inf")


def future_mask(num_tokens):
    """(T, T) bool, True strictly above the diagonal: the keys each query may not see."""
    return torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool), diagonal=1)


def documented_forward(params, x, *, dropout: float = 0.0, train_seed=None, device: str = "cpu"):
    """CausalAttention's forward as the notebook documents it, with the given parameters (a dict of
    W_query/W_key/W_value weights and optional biases): scores / sqrt(d_out), the future at -inf, softmax,
    in train mode (train_seed) dropout on the weights right after torch.manual_seed(train_seed), @ values.
    None where the parameters are not named as documented. Returns (out, dropped context vectors):
    the second is the slip of dropping out the context vectors instead of the weights."""
    names = [f"{layer}.weight" for layer in ("W_query", "W_key", "W_value")]
    if not isinstance(params, dict) or not all(isinstance(params.get(name), torch.Tensor) for name in names):
        return None
    device = "cpu" if device == "meta" else device  # dropout masks differ between devices: draw them on the student's
    x = x.to(device)

    def project(layer):
        bias = params.get(f"{layer}.bias")
        return torch.nn.functional.linear(x, params[f"{layer}.weight"].to(device),
                                          None if bias is None else bias.to(device))

    with torch.no_grad():
        queries, keys, values = project("W_query"), project("W_key"), project("W_value")  # (b, T, d_out)
        hidden = future_mask(x.shape[1]).to(device)
        weights = torch.softmax((queries @ keys.transpose(1, 2)).masked_fill(hidden, INF) / math.sqrt(keys.shape[-1]),
                                dim=-1)  # (b, T, T)
        if train_seed is None:
            return (weights @ values).cpu(), None
        torch.manual_seed(train_seed)
        out = torch.nn.functional.dropout(weights, dropout) @ values
        torch.manual_seed(train_seed)
        on_context = torch.nn.functional.dropout(weights @ values, dropout)
    return out.cpu(), on_context.cpu()
