"""The worker's "call", both ways: the request as plain data, which core/student.py sends for every call of
student code (and of a stand-in module, worker/stand_in.py), and its reply read back, checked and decoded."""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from autograder.core.failures import describe_failure, mixing_words
from autograder.core.harness import StudentFailure
from autograder.core.hints import RETURNED_ELSEWHERE
from autograder.i18n import _, _f
from autograder.worker import wire


@dataclass
class Reply:
    """What one call observed. Only `value` comes from the student's return statement."""

    value: object
    ops: int | None = None  # the aten ops the call dispatched, where the call asked to count them (count_ops)
    lines: int = 0  # lines of the student's cells the call ran, where asked (worker/measure_lines.py)
    args_after: list = field(default_factory=list)
    param_grads: dict = field(default_factory=dict)
    arg_grads: list = field(default_factory=list)
    # parameter without a gradient -> how far the output moved when it was moved (worker/param_moves.py)
    param_moves: dict = field(default_factory=dict)
    graph: bool = True
    mixed_devices: list = field(default_factory=list)
    output_devices: list = field(default_factory=list)
    measured: dict = field(default_factory=dict)  # what the call made and computed, where asked (worker/measure_tiles)
    rows: dict = field(default_factory=dict)  # sublayer -> rows it was handed (worker/measure_rows.py)


def call_message(target, args, kwargs, *, seed, mode, return_args, device, backward, noncontiguous,
                 stand_ins=None, count_rows=(), count_ops=False) -> dict:
    """The worker's "call" request: the arguments as plain data (wire.py), never pickled. stand_ins: graded
    name -> its table, the answers that name gives during the call (worker/stand_in.answered_from)."""
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
    if stand_ins:
        message["stand_ins"] = wire.encode(stand_ins)
    if count_rows:
        message["count_rows"] = list(count_rows)
    if count_ops:  # the only calls the worker watches op by op when they ban nothing and guard no device
        message["count_ops"] = True
    return message


def refuse_failed_call(label: str, reply: dict) -> None:
    """StudentFailure when the call used a forbidden API or raised; nothing when it answered."""
    seen = reply.get("forbidden") or []
    if seen:
        raise StudentFailure(_f("{label} calls {apis}, which this section forbids: write the computation yourself",
                                label=label, apis=", ".join(map(str, seen[:3]))), kind="forbidden")
    if not reply.get("ok"):
        raise describe_failure(label, reply.get("error") or {})


def decode_reply(label: str, reply: dict, counted: bool = False) -> Reply:
    """The answer's values as tensors; StudentFailure for what cannot be read or is not a plain tensor.
    counted: the call asked for its ops to be counted (the worker counts only a watched call's)."""
    infos = []
    try:
        value = wire.decode(reply.get("value"), on_tensor=infos.append)
        args_after = [wire.decode(a) for a in reply.get("args_after", [])]
        grads = reply.get("grads") or {}
        param_grads = wire.decode(grads.get("params", {"__dict__": []})) if grads else {}
        arg_grads = wire.decode(grads.get("args", [])) if grads else []
        param_moves = wire.decode(grads.get("moves", {"__dict__": []})) if grads else {}
    except wire.WireError as error:
        raise StudentFailure(_f("{label} returned something the grader cannot read ({error})", label=label,
                                error=error), kind="garbled") from None
    for info in infos:
        if info["kind"] != "Tensor":
            raise StudentFailure(
                _f("{label} returned a {kind}, a subclass of torch.Tensor: return a plain tensor", label=label,
                   kind=info["kind"]), kind="convention")
    return Reply(
        value=value,
        ops=int(reply.get("ops") or 0) if counted else None,
        lines=int(reply.get("lines", 0) or 0),
        args_after=args_after,
        param_grads=param_grads if isinstance(param_grads, dict) else {},
        arg_grads=arg_grads if isinstance(arg_grads, list) else [],
        param_moves={name: float(move) for name, move in param_moves.items()
                     if isinstance(move, (int, float)) and not isinstance(move, bool)}
        if isinstance(param_moves, dict) else {},
        graph=bool(grads.get("graph", True)),
        mixed_devices=[mixing_words(m) for m in (reply.get("mixed_devices") or [])][:5],
        output_devices=[i["device"] for i in infos],
        measured=reply.get("measured") if isinstance(reply.get("measured"), dict) else {},
        rows={str(k): int(v) for k, v in (reply.get("rows") or {}).items() if isinstance(v, int)},
    )


def check_output_devices(label: str, devices: list, expected_device: str, has_tensor_input: bool) -> None:
    """The convention: what a call returns lies on its inputs' device (not checked on meta)."""
    if has_tensor_input and expected_device != "meta":
        wrong = [d for d in devices if d != torch.device(expected_device).type]
        if wrong:
            raise StudentFailure(
                _f("{label} returned a tensor on {device} while its inputs were on {expected}. {advice}",
                   label=label, device=wrong[0], expected=torch.device(expected_device).type,
                   advice=_(RETURNED_ELSEWHERE)),
                kind="convention")
