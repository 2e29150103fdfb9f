"""The worker's wire format: JSON lines carrying plain data, never pickle.

Both sides import this module. A value on the wire is JSON, where a few
tagged objects stand for what JSON lacks:

    {"__tensor__": {"dtype": "float32", "shape": [2, 3], "device": "cpu",
                    "data": "<base64 of the raw little-endian bytes>",
                    "requires_grad": false, "kind": "Tensor"}}
    {"__tuple__": [...]}          a tuple (a JSON list is a list)
    {"__dict__": [[key, value], ...]}
    {"__handle__": 3, "type": "CausalAttention"}   an object kept in the worker
    {"__object__": "Foo", "repr": "..."}           anything else, described only
    {"__float__": "nan" | "inf" | "-inf"}          floats JSON cannot spell

`decode` is strict: whatever does not fit the schema raises WireError, so a
submission that forges replies gets an error, not a crafted object.
"""
from __future__ import annotations

import base64
import json
import math

MAX_TENSOR_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 8
MAX_ITEMS = 10_000
MAX_TEXT = 20_000

# dtype name on the wire -> (numpy dtype name, torch dtype name); bfloat16
# travels as float32 since numpy has no bfloat16.
DTYPES = {
    "float32": ("float32", "float32"),
    "float64": ("float64", "float64"),
    "float16": ("float16", "float16"),
    "bfloat16": ("float32", "bfloat16"),
    "int64": ("int64", "int64"),
    "int32": ("int32", "int32"),
    "int16": ("int16", "int16"),
    "int8": ("int8", "int8"),
    "uint8": ("uint8", "uint8"),
    "bool": ("bool", "bool"),
}


class WireError(ValueError):
    """A message that does not fit the schema."""


def dumps(message) -> bytes:
    return json.dumps(message, separators=(",", ":"), allow_nan=False).encode() + b"\n"


def loads(line: bytes):
    try:
        return json.loads(line)
    except (ValueError, RecursionError) as error:
        raise WireError(f"not a JSON message ({error})") from None


MAX_CONTAINERS = 200_000  # JSON objects and arrays in one reply: far above any honest one


def loads_reply(line: bytes) -> dict:
    """Trusted side: a worker's reply line -> a dict whose every field has the schema's type.

    Anything the worker sends may be forged by the student's code sharing its
    process, so the line is bounded before it is parsed (its size by the
    receiver, its number of containers here: `[{},{},...]` would otherwise
    become millions of objects) and validated whole after, so that no check
    ever meets a field of the wrong type.
    """
    if line.count(b"{") + line.count(b"[") > MAX_CONTAINERS:
        raise WireError("a reply with too many objects")
    reply = loads(line)
    check_reply(reply)
    return reply


def _is_text_list(value, limit=MAX_ITEMS) -> bool:
    return isinstance(value, list) and len(value) <= limit and all(isinstance(v, str) for v in value)


# an error's figures: numbers, never words, for the trusted side to say in the reader's language
# lineno: the line of the student's cell that raised; limit_bytes: with kind "memory", the worker's
# address-space limit (None: no limit set)
ERROR_FIGURES = {"lineno", "limit_bytes"}


def _is_error(value) -> bool:
    # cell, lineno: `where` as data (the student's cell and line), for the trusted side to word
    # transposed_dims: the dims of each `.T` operand of the raising line (worker/transposed.py), a hint's evidence
    if not (isinstance(value, dict) and set(value) <= {"kind", "type", "message", "where", "line", "cell", "lineno",
                                                       "transposed_dims", *ERROR_FIGURES}):
        return False
    dims = value.get("transposed_dims", [])
    if not (isinstance(dims, list) and len(dims) <= 8 and all(_is_count(d) for d in dims)):
        return False
    return all(_is_count(v) if k in ERROR_FIGURES else isinstance(v, str)
               for k, v in value.items() if v is not None and k != "transposed_dims")


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_cell(value) -> bool:
    return (isinstance(value, dict) and set(value) <= {"label", "ok", "error"}
            and isinstance(value.get("label", ""), str) and isinstance(value.get("ok", False), bool)
            and ("error" not in value or _is_error(value["error"])))


def _is_mixing(value) -> bool:
    # one torch operation that got tensors on several devices: its name and the devices' types
    return (isinstance(value, dict) and set(value) == {"op", "devices"} and isinstance(value["op"], str)
            and _is_text_list(value["devices"], limit=8))


def _is_warning(value) -> bool:
    # a warning the student's code raised: its category's name, its text, and the cell and line as data
    return (isinstance(value, dict) and set(value) == {"category", "message", "cell", "lineno"}
            and all(isinstance(value[k], str) for k in ("category", "message", "cell")) and _is_count(value["lineno"]))


def _is_grads(value) -> bool:
    return (isinstance(value, dict) and set(value) <= {"params", "args", "graph", "moves"}
            and isinstance(value.get("graph", True), bool))


def _is_measured(value) -> bool:
    # what a measured call made and computed (measure_tiles.py): counts, and each matrix product's four sizes
    return (isinstance(value, dict) and set(value) <= {"largest", "products", "more_products", "peak_bytes"}
            and all(_is_count(value[k]) for k in ("largest", "more_products", "peak_bytes") if k in value)
            and isinstance(value.get("products", []), list) and len(value.get("products", [])) <= MAX_ITEMS
            and all(isinstance(p, list) and len(p) == 4 and all(map(_is_count, p)) for p in value.get("products", [])))


# field -> its test; `value`, `args_after` and the gradients are wire data, checked by decode()
REPLY_FIELDS = {
    "ok": lambda v: isinstance(v, bool),
    "cells": lambda v: isinstance(v, list) and len(v) <= MAX_ITEMS and all(map(_is_cell, v)),
    "defined": _is_text_list,
    "value": lambda v: True,
    "ops": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
    # lines of the student's cells a call ran, where asked (measure_lines.py)
    "lines": lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
    "forbidden": _is_text_list,
    "stood_in": _is_text_list,
    "mixed_devices": lambda v: isinstance(v, list) and len(v) <= MAX_ITEMS and all(map(_is_mixing, v)),
    "args_after": lambda v: isinstance(v, list) and len(v) <= MAX_ITEMS,
    "grads": _is_grads,
    "error": _is_error,
    "printed": lambda v: isinstance(v, str),
    "warnings": lambda v: isinstance(v, list) and len(v) <= MAX_ITEMS and all(map(_is_warning, v)),
    "measured": _is_measured,
    # sublayer -> rows it was handed (measure_rows.py)
    "rows": lambda v: isinstance(v, dict) and len(v) <= MAX_ITEMS and all(
        isinstance(k, str) and len(k) <= 40 and _is_count(n) for k, n in v.items()),
}


def check_reply(reply) -> None:
    if not isinstance(reply, dict) or "ok" not in reply:
        raise WireError("a reply that is not an object with `ok`")
    for key, value in reply.items():
        test = REPLY_FIELDS.get(key)
        if test is None or not test(value):
            raise WireError(f"a reply whose field {str(key)[:40]!r} does not fit the schema")


def encode(value, handles=None, depth=0):
    """Turn a Python value into wire data. `handles` keeps objects that stay in the worker."""
    import torch

    if depth > MAX_DEPTH:
        return {"__object__": type(value).__name__, "repr": "(nested too deeply)"}
    if value is None or isinstance(value, (bool, str)):
        return value[:MAX_TEXT] if isinstance(value, str) else value
    if isinstance(value, int) and type(value) in (int,):
        return value
    if isinstance(value, float) and type(value) is float:
        if math.isfinite(value):
            return value
        return {"__float__": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}
    if isinstance(value, torch.Tensor):
        return {"__tensor__": encode_tensor(value)}
    if isinstance(value, tuple) and type(value) is tuple:
        return {"__tuple__": [encode(v, handles, depth + 1) for v in value[:MAX_ITEMS]]}
    if isinstance(value, list) and type(value) is list:
        return [encode(v, handles, depth + 1) for v in value[:MAX_ITEMS]]
    if isinstance(value, dict) and type(value) is dict:
        items = list(value.items())[:MAX_ITEMS]
        return {"__dict__": [[str(k), encode(v, handles, depth + 1)] for k, v in items]}
    if handles is not None and isinstance(value, torch.nn.Module):
        handles.append(value)
        return {"__handle__": len(handles) - 1, "type": type(value).__name__}
    try:
        text = repr(value)[:200]
    except Exception:
        text = "(repr failed)"
    return {"__object__": type(value).__name__[:100], "repr": text}


def encode_tensor(tensor) -> dict:
    import torch

    kind = "Tensor" if type(tensor) in (torch.Tensor, torch.nn.Parameter) else type(tensor).__name__
    dtype = str(tensor.dtype).replace("torch.", "")
    info = {
        "dtype": dtype,
        "shape": list(tensor.shape),
        "device": tensor.device.type,
        "requires_grad": bool(tensor.requires_grad),
        "kind": kind[:100],
        "data": None,
    }
    if dtype not in DTYPES or tensor.device.type == "meta":
        return info
    plain = torch.Tensor._make_subclass(torch.Tensor, tensor.detach()) if kind != "Tensor" else tensor
    plain = plain.detach().to("cpu")
    if dtype == "bfloat16":
        plain = plain.float()
    if plain.numel() * plain.element_size() > MAX_TENSOR_BYTES:
        info["data"] = "(too large)"
        return info
    info["data"] = base64.b64encode(plain.contiguous().numpy().tobytes()).decode()
    return info


def decode(data, depth=0, on_tensor=None):
    """Turn wire data into Python values. Tensors come back as plain CPU tensors.

    `on_tensor(info)` is told every tensor's metadata (device, kind), so the
    caller can check the conventions without trusting any object from the worker.
    """
    if depth > MAX_DEPTH + 1:
        raise WireError("nested too deeply")
    if data is None or isinstance(data, (bool, int, float)):
        return data
    if isinstance(data, str):
        return data[:MAX_TEXT]
    if isinstance(data, list):
        if len(data) > MAX_ITEMS:
            raise WireError("list too long")
        return [decode(v, depth + 1, on_tensor) for v in data]
    if not isinstance(data, dict) or len(data) not in (1, 2):
        raise WireError("unexpected object")
    if "__tensor__" in data and len(data) == 1:
        return decode_tensor(data["__tensor__"], on_tensor)
    if "__tuple__" in data and len(data) == 1 and isinstance(data["__tuple__"], list):
        return tuple(decode(data["__tuple__"], depth + 1, on_tensor))
    if "__dict__" in data and len(data) == 1 and isinstance(data["__dict__"], list):
        pairs = data["__dict__"]
        if not all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) for p in pairs):
            raise WireError("bad dict")
        return {k: decode(v, depth + 1, on_tensor) for k, v in pairs}
    if "__float__" in data and len(data) == 1 and data["__float__"] in ("nan", "inf", "-inf"):
        return float(data["__float__"])
    if set(data) == {"__handle__", "type"} and isinstance(data["__handle__"], int):
        return Handle(data["__handle__"], str(data["type"])[:100])
    if set(data) == {"__object__", "repr"}:
        return Opaque(str(data["__object__"])[:100], str(data["repr"])[:200])
    raise WireError("unexpected object")


def decode_tensor(info, on_tensor=None):
    import numpy
    import torch

    expected = {"dtype", "shape", "device", "requires_grad", "kind", "data"}
    if not isinstance(info, dict) or set(info) != expected:
        raise WireError("bad tensor header")
    dtype, shape, data = info["dtype"], info["shape"], info["data"]
    if dtype not in DTYPES:
        raise WireError(f"unsupported dtype {str(dtype)[:30]}")
    if not isinstance(shape, list) or len(shape) > 8 or not all(
        isinstance(n, int) and not isinstance(n, bool) and 0 <= n for n in shape
    ):
        raise WireError("bad tensor shape")
    if not isinstance(info["device"], str) or not isinstance(info["kind"], str):
        raise WireError("bad tensor header")
    if on_tensor is not None:
        on_tensor(info)
    numel = math.prod(shape)
    np_dtype, torch_dtype = DTYPES[dtype]
    if data is None or data == "(too large)":
        return TensorStub(dtype, tuple(shape), info["device"])
    if not isinstance(data, str):
        raise WireError("bad tensor data")
    raw = base64.b64decode(data.encode(), validate=True)
    if len(raw) != numel * numpy.dtype(np_dtype).itemsize or len(raw) > MAX_TENSOR_BYTES:
        raise WireError("tensor data does not match its shape")
    array = numpy.frombuffer(raw, dtype=np_dtype).reshape(shape).copy()
    return torch.from_numpy(array).to(getattr(torch, torch_dtype))


class Handle:
    """Names an object that stays in the worker (a student's module)."""

    def __init__(self, index: int, type_name: str):
        self.index, self.type_name = index, type_name

    def __repr__(self):
        return f"<{self.type_name} in the worker>"


class Opaque:
    """Something the worker returned that is not data: only its type and repr travel."""

    def __init__(self, type_name: str, text: str):
        self.type_name, self.text = type_name, text

    def __repr__(self):
        return f"<{self.type_name}: {self.text}>"


class TensorStub:
    """A tensor whose values did not travel (on the meta device, or too large)."""

    def __init__(self, dtype: str, shape: tuple, device: str):
        self.dtype, self.shape, self.device = dtype, shape, device

    def __repr__(self):
        return f"<tensor {self.dtype}{list(self.shape)} on {self.device}>"


def encode_args(values):
    """Trusted side: arguments for a call. Handles stay handles; tensors may ask for grad."""
    import torch

    out = []
    for value in values:
        if isinstance(value, Handle):
            out.append({"__handle__": value.index, "type": value.type_name})
        elif isinstance(value, torch.Tensor):
            out.append({"__tensor__": encode_tensor(value)})
        else:
            out.append(encode(value))
    return out
