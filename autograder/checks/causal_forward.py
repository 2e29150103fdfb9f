"""What the checks of section 04 measure a CausalAttention against: torch's own attention
(F.scaled_dot_product_attention, which the section forbids the student to call) run with the module's own
parameters, and the causal mask of a score matrix. Nothing here is CausalAttention's forward written out: the
weights are what torch's attention gives with the identity as the values. Shipped whole with the visible
checks: it never imports `solutions`."""
import torch
import torch.nn.functional as F

INF = float("-inf")


def future_of(scores: torch.Tensor) -> torch.Tensor:
    """(T, T) bool for scores (..., T, T), True strictly above the diagonal: the keys each query may not see."""
    num_tokens = scores.shape[-1]
    return torch.ones(num_tokens, num_tokens, dtype=torch.bool).triu(1)


def torch_causal_weights(scores: torch.Tensor, scale: float) -> torch.Tensor:
    """The causal attention weights of `scores` (..., T, T) as torch's scaled_dot_product_attention computes them
    (is_causal=True, each score times `scale`): the scores as queries, the identity as keys and values."""
    identity = torch.eye(scores.shape[-1], dtype=torch.float64)
    return F.scaled_dot_product_attention(scores.double(), identity, identity, is_causal=True,
                                          scale=scale).to(scores.dtype)


def documented_forward(params, x, *, dropout: float = 0.0, train_seed=None, device: str = "cpu"):
    """torch's own causal attention with the given parameters (a dict of W_query/W_key/W_value weights and
    optional biases), as the notebook documents CausalAttention: in train mode (train_seed), nn.Dropout's mask
    drawn right after torch.manual_seed(train_seed) on the attention weights. None where the parameters are not
    named as documented. Returns (out, dropped context vectors): the second is the slip of dropping out the
    context vectors instead of the weights."""
    names = [f"{layer}.weight" for layer in ("W_query", "W_key", "W_value")]
    if not isinstance(params, dict) or not all(isinstance(params.get(name), torch.Tensor) for name in names):
        return None
    device = "cpu" if device == "meta" else device  # dropout masks differ between devices: draw them on the student's

    def project(layer):
        bias = params.get(f"{layer}.bias")
        return F.linear(x.cpu(), params[f"{layer}.weight"].cpu(), None if bias is None else bias.cpu())

    with torch.no_grad():
        queries, keys, values = project("W_query"), project("W_key"), project("W_value")  # (b, T, d_out)
        if train_seed is None:
            return F.scaled_dot_product_attention(queries, keys, values, is_causal=True), None
        identity = torch.eye(x.shape[1]).expand(x.shape[0], -1, -1)
        weights = F.scaled_dot_product_attention(queries, keys, identity, is_causal=True).to(device)
        values, context = values.to(device), (weights @ values.to(device))
        torch.manual_seed(train_seed)
        out = F.dropout(weights, dropout) @ values
        torch.manual_seed(train_seed)
        on_context = F.dropout(context, dropout)
    return out.cpu(), on_context.cpu()
