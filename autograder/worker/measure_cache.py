"""What a module keeps between calls, measured in the worker: the shape of each tensor it holds as an attribute
or a buffer (section 11's KV cache, `cache_k` and `cache_v`), and which Parameter objects it holds. Shapes and
identities only, plain ints: the trusted side judges them (how many tokens the cache holds after each call,
whether a call replaced a parameter); no value of the student's leaves this way."""
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


# every Parameter whose identity was reported, kept alive so that no later object is given its id
_IDENTIFIED = []


def param_ids(module) -> dict:
    """name -> id() of each Parameter object, in creation order: the trusted side compares them before and after a
    call (08's load_from must copy into the layer's own Parameters, which an optimizer holds, not replace them)."""
    params = dict(module.named_parameters())
    _IDENTIFIED.extend(params.values())
    return {str(name): id(param) for name, param in params.items()}


def held(module, method: str) -> dict:
    """What a module holds, as the trusted side asks for it: "params", name -> tensor for every parameter in
    creation order; "param_ids", param_ids; "tensor_shapes", tensor_shapes."""
    if method == "params":
        return dict(module.named_parameters())
    return param_ids(module) if method == "param_ids" else tensor_shapes(module)
