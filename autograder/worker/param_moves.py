"""How far a module's output moves when one of its parameters moves: measured for the parameters that
received no gradient, so the trusted side can tell a parameter forward never uses (the output stays put)
from one it uses but cuts from the autograd graph (.detach(), .data, torch.no_grad(): the output moves).

Only numbers go back, one per parameter: the largest change of the output. What they mean is the
checks' business.
"""
import torch

MAX_PROBED = 4  # parameters measured per call, in creation order (a check names the first without a gradient): each costs a forward
NUDGE_SEED = 0  # the change added to a parameter: standard normal noise from this seed


def output_moves(forward, module, args, kwargs, seed, names) -> dict:
    """Parameter name -> the largest absolute change of the output (the first tensor of a tuple) when
    that parameter alone is moved by standard normal noise; both forwards under no_grad, seeded alike
    (seed, or 0), with torch's random state restored afterwards. A parameter whose forward raises, or
    whose output is not a tensor of one shape, is left out: no evidence, nothing said."""
    params = dict(module.named_parameters())
    names = [name for name in names if name in params and params[name].device.type != "meta"][:MAX_PROBED]
    if not names:
        return {}
    moves = {}
    cuda = [torch.cuda.current_device()] if torch.cuda.is_available() and torch.cuda.is_initialized() else []
    with torch.random.fork_rng(devices=cuda), torch.no_grad():
        base = _output(forward, args, kwargs, seed)
        for name in names if base is not None else ():
            param = params[name]
            kept = param.detach().clone()
            generator = torch.Generator(device=param.device).manual_seed(NUDGE_SEED)
            try:
                param.add_(torch.randn(param.shape, generator=generator, device=param.device, dtype=param.dtype))
                moved = _output(forward, args, kwargs, seed)
            finally:
                param.copy_(kept)
            if moved is not None and moved.shape == base.shape:
                moves[name] = float((moved.double() - base.double()).nan_to_num(0.0, 0.0, 0.0).abs().max())
    return moves


def _output(forward, args, kwargs, seed):
    """The forward's output tensor (the first of a tuple) under torch.manual_seed(seed or 0), or None
    where it raises or gives no tensor."""
    if torch.cuda.is_available():
        torch.manual_seed(int(seed or 0))
    else:  # a CPU build's manual_seed would record a CUDA start that never comes
        torch.default_generator.manual_seed(int(seed or 0))
    try:
        out = forward(*args, **kwargs)
    except Exception:  # the call itself answered; a second forward that raises is no evidence
        return None
    out = out[0] if isinstance(out, (tuple, list)) and out else out
    return out.detach() if isinstance(out, torch.Tensor) and out.is_floating_point() else None
