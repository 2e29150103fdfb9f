"""What a module keeps between calls, measured in the worker: the shape of each tensor it holds as an attribute
or a buffer (section 11's KV cache, `cache_k` and `cache_v`). Shapes only, plain ints: the trusted side judges
them (how many tokens the cache holds after each call); no value of the student's leaves this way."""
import torch


def tensor_shapes(module) -> dict:
    """name -> list of dims for every tensor the module holds directly (its buffers, and tensors set as plain
    attributes), parameters excluded (params gives those); a name holding None maps to None."""
    shapes = {}
    for name, buffer in module._buffers.items():  # a buffer registered as None is an empty cache
        shapes[str(name)] = None if buffer is None else [int(dim) for dim in buffer.shape]
    for name, value in vars(module).items():
        if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter):
            shapes[str(name)] = [int(dim) for dim in value.shape]
        elif value is None and not name.startswith("_"):
            shapes.setdefault(str(name), None)
    return shapes


def held(module, method: str) -> dict:
    """What a module holds, as the trusted side asks for it: "params", name -> tensor for every parameter in
    creation order; "tensor_shapes", tensor_shapes."""
    return dict(module.named_parameters()) if method == "params" else tensor_shapes(module)
