"""The worker's "call" request, as plain data: what core/student.py sends for every call of student code
(and of a stand-in module, worker/stand_in.py)."""
from __future__ import annotations

from autograder.worker import wire


def call_message(target, args, kwargs, *, seed, mode, return_args, device, backward, noncontiguous) -> dict:
    """The worker's "call" request: the arguments as plain data (wire.py), never pickled."""
    message = {
        "op": "call",
        "target": target,
        "args": wire.encode_args(args),
        "kwargs": {"__dict__": [[k, v] for k, v in zip(kwargs, wire.encode_args(kwargs.values()))]},
        "seed": seed,
        "mode": mode,
        "return_args": return_args,
        "device": device,
    }
    if backward is not None:
        message["backward"] = {"grad_output": wire.encode_args([backward])[0]}
    if noncontiguous:
        message["noncontiguous"] = True
    return message
