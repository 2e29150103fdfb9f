"""The worker child's request loop: load the student's cells, then answer calls.

Every reply is plain wire data (see wire.py). Nothing here compares anything with an expected value: the
worker never holds one. What it reports about a call (ops dispatched, lines of the student's code run, forbidden
APIs touched, devices mixed, arguments after the call) is raw observation that the trusted side judges.
"""
import contextlib
import linecache
import sys
import types
import warnings

import torch

from . import (gpu, guards, measure_cache, measure_lines, measure_rows, measure_tiles, meta_copy, param_moves, stand_in,
               wire)
from .student_code import (STUDENT_FILE_PREFIX, CellInterrupted, cell_limit, describe_error, describe_warnings,
                           no_shell, student_cell)
from .watching import NewTensorsOn, Watch


class Worker:
    def __init__(self, config: dict):
        self.names = set(config.get("names", ()))
        self.device = torch.device(config.get("device", "cpu"))
        self.gpu_memory_bytes = int(config.get("gpu_memory_bytes") or 0)
        if self.device.type == "cuda" and not torch.cuda.is_initialized():  # the portable path: no
            gpu.prepare("cuda", self.gpu_memory_bytes)  # confinement step before, and `open` is not timed
        self.banned_for = set(config.get("forbidden_in", ()))
        self.banned_apis = tuple(config.get("forbidden", ()))
        self.namespace = {"__name__": "__main__", "__builtins__": __builtins__, "get_ipython": no_shell}
        self.handles = []
        self.locate = student_cell  # which frames of a traceback are the student's (describe_error)

    # ----------------------------------------------------------- loading
    def load(self, cells: list, cell_seconds=None) -> dict:
        """Run the cells in order, each under `cell_seconds` (nbgrader's semantics: a cell past
        its limit is interrupted and noted, and the rest of the notebook still runs)."""
        report = []
        for cell in cells:
            label, source = str(cell.get("label", "cell")), str(cell.get("source", ""))
            try:
                filename = f"{STUDENT_FILE_PREFIX}{label}>"
                # the cell's lines where tracebacks look them up: an error names the line it ran
                linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
                code = compile(source, filename, "exec")
                with cell_limit(cell_seconds):
                    exec(code, self.namespace)
                report.append({"label": label, "ok": True})
            except CellInterrupted:
                report.append({"label": label, "ok": False, "error": {
                    "kind": "cell_timeout", "type": "TimeoutError", "where": label,
                    "message": f"interrupted after {cell_seconds:g} s, the limit for one cell; the cells "
                               "after it were run, so only what it had yet to define is missing"}})
            except BaseException as error:  # a demo cell may fail; the rest still loads
                report.append({"label": label, "ok": False, "error": describe_error(error)})
            sys.stdout.flush()
        defined = sorted(n for n in self.names if n in self.namespace)
        return {"ok": True, "cells": report, "defined": defined}

    # ----------------------------------------------------------- calls
    def resolve(self, value):
        if isinstance(value, wire.Handle):
            if not 0 <= value.index < len(self.handles):
                raise LookupError("unknown handle")
            return self.handles[value.index]
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self.resolve(v) for v in value)
        if isinstance(value, dict):
            return {k: self.resolve(v) for k, v in value.items()}
        return value

    def place(self, value, device, requires_grad):
        if isinstance(value, torch.Tensor):
            moved = value.to(device)
            if requires_grad and moved.is_floating_point():
                moved = moved.detach().requires_grad_(True)
            return moved
        if isinstance(value, list):
            return [self.place(v, device, requires_grad) for v in value]
        if isinstance(value, tuple):
            return tuple(self.place(v, device, requires_grad) for v in value)
        if isinstance(value, dict):  # keyword arguments (key_padding_mask=...) go to the device too
            return {k: self.place(v, device, requires_grad) for k, v in value.items()}
        return value

    def call(self, request: dict) -> dict:
        # A notebook may change torch's defaults for its own demos (set_default_dtype(float64)
        # is common advice); the checks' inputs and expected values are float32 on the grading
        # device, so every call starts from torch's own defaults, as a fresh kernel would.
        torch.set_default_dtype(torch.float32)
        torch.set_default_device(None)
        gpu.between_calls(self.device.type, self.gpu_memory_bytes)  # TF32 off and the memory cap, again
        device = torch.device(request.get("device") or self.device)
        wants_grad = bool(request.get("backward"))
        args, kwargs = self.arguments(request, device, wants_grad)
        target = self.target(request, device)
        if "reply" in target:  # nothing to call: the name is missing, or the module's parameters were asked
            return target["reply"]
        with stand_in.standing_in(self.namespace, self.stand_in_tables(request), used := set()):
            reply = self.run(request, target, device, args, kwargs, wants_grad)
        return {**reply, "stood_in": sorted(used)} if used else reply  # right collaborators that answered: said

    def stand_in_tables(self, request: dict) -> dict:
        """The call's "stand_ins": graded name -> its table (see stand_in.answered_from); only graded names."""
        tables = {}
        for name, table in wire.decode(request.get("stand_ins", {"__dict__": []})).items():
            if name not in self.names:
                raise LookupError(f"{name} is not graded in this section")
            tables[name] = {"params": list(table["params"]), "defaults": dict(table.get("defaults", {})),
                            "rows": [(dict(key), value) for key, value in table["rows"]]}
        return tables

    def arguments(self, request: dict, device, wants_grad: bool) -> tuple[list, dict]:
        """The call's arguments, decoded, on `device` (positional ones needing gradients when asked)."""
        args = self.place(self.resolve(wire.decode(request.get("args", []))), device, wants_grad)
        kwargs = self.place(self.resolve(wire.decode(request.get("kwargs", {}))), device, False)
        if not isinstance(kwargs, dict) or not isinstance(args, list):
            raise ValueError("bad arguments")
        if request.get("noncontiguous"):  # same values, the layout transpose(1, 2) returns
            args = [a.detach().transpose(1, 2).contiguous().transpose(1, 2).requires_grad_(a.requires_grad)
                    if isinstance(a, torch.Tensor) and a.dim() >= 3 else a for a in args]
        return args, kwargs

    def target(self, request: dict, device) -> dict:
        """What to call: {"func", "graded_name", "module" (an nn.Module called, or None)}, or {"reply"}.
        A target names a graded name, a module built earlier (its handle), or a stand-in to build."""
        target = request.get("target", {})
        if "stand_in" in target:  # a module built from the call's data (stand_in.py): no student code runs
            return {"func": stand_in.StandIn, "graded_name": "", "module": None}
        if "name" in target:
            name = str(target["name"])
            if name not in self.names:
                raise LookupError(f"{name} is not graded in this section")
            if name not in self.namespace:
                return {"reply": {"ok": False, "error": {"kind": "missing", "type": "NameError",
                                                         "message": f"{name} is not defined", "where": ""}}}
            return {"func": self.namespace[name], "graded_name": name, "module": None}
        obj = self.resolve(wire.Handle(int(target.get("handle", -1)), ""))
        method = target.get("method")
        if method in ("params", "param_ids", "tensor_shapes"):  # parameters, their identities, a cache's shapes
            return {"reply": {"ok": True, "value": wire.encode(measure_cache.held(obj, method))}}
        graded_name = type(obj).__name__
        if device.type == "meta":
            obj = meta_copy.meta_copy(obj)
        if (mode := request.get("mode")) in ("train", "eval") and isinstance(obj, torch.nn.Module):
            obj.train(mode == "train")
        func = obj if method in (None, "__call__") else getattr(obj, str(method), None)  # a public method: load_from
        if not callable(func) or str(method).startswith("_"):
            return {"reply": {"ok": False, "error": describe_error(AttributeError(f"{graded_name} has no {method}"))}}
        return {"func": func, "graded_name": graded_name, "module": obj}

    def run(self, request: dict, target: dict, device, args: list, kwargs: dict, wants_grad: bool) -> dict:
        """Call the target under the watch; the reply holds the value (or the error) and what was seen."""
        banned = target["graded_name"] in self.banned_for
        # "default_device": the device a tensor made without device= lands on during the call, while the
        # arguments stay on `device`: a tensor the code makes without following its inputs then sits on
        # another device than they do, as it would on a GPU, where the default device is the CPU
        default_device = request.get("default_device")
        watch = Watch(
            banned_ops=guards.banned_aten_ops(self.banned_apis) if banned else (),
            guard_devices=request.get("guard_devices", device.type == "meta" or default_device is not None),
            meter=measure_tiles.TileMeter(device) if request.get("measure") else None)
        seed_for_call(request.get("seed"))
        module = target["module"]
        if wants_grad and module is not None:
            module.zero_grad(set_to_none=True)
        guards.watching(self.banned_apis if banned else ())
        made_on = NewTensorsOn(default_device) if default_device is not None else contextlib.nullcontext()
        # every warning the call raises, each time (the student's are sent back: describe_warnings)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with torch.set_grad_enabled(wants_grad or bool(request.get("grad_enabled", True))):
                    watching = watch if watch.needed(request.get("count_ops")) else contextlib.nullcontext()
                    with watching, made_on, measure_rows.counting_rows(module, request.get("count_rows")) as rows, \
                            measure_lines.counting_lines(request.get("count_lines"), self.locate) as lines:
                        result = target["func"](*args, **kwargs)
                    if isinstance(result, torch.nn.Module) and device.type != "meta":
                        result.to(device)
                    grads = self.backward(request, result, target, args, kwargs)
            except BaseException as error:
                seen = guards.stop_watching()
                return {"ok": False, "error": describe_error(error, locate=self.locate),
                        "forbidden": seen + watch.banned_seen, "mixed_devices": watch.mixed,
                        "warnings": describe_warnings(caught, self.locate)}
            finally:
                sys.stdout.flush()
        seen = guards.stop_watching()  # before the value is encoded: encoding is not the student's doing
        reply = {"ok": True, "value": wire.encode(result, self.handles), "ops": watch.count, "lines": lines["lines"],
                 "rows": rows, "forbidden": seen + watch.banned_seen, "mixed_devices": watch.mixed,
                 "warnings": describe_warnings(caught, self.locate), **(watch.meter.report() if watch.meter else {})}
        if request.get("return_args"):
            reply["args_after"] = [wire.encode(a) for a in args]
        if grads is not None:
            reply["grads"] = grads
        return reply

    def backward(self, request, result, target, args, kwargs):
        module, spec = target["module"], request.get("backward")
        if not spec:
            return None
        grad_output = wire.decode(spec["grad_output"]).to(result.device if torch.is_tensor(result) else self.device)
        out = result[0] if isinstance(result, tuple) else result
        if not torch.is_tensor(out) or not out.requires_grad:
            return {"params": wire.encode({}), "args": wire.encode([None for _ in args]), "graph": False}
        (out * grad_output).sum().backward()
        params, moves = {}, {}
        if module is not None:
            params = {name: p.grad for name, p in module.named_parameters()}
            # the evidence that tells a parameter cut from the graph from one never used: does the output move?
            moves = param_moves.output_moves(target["func"], module, args, kwargs, request.get("seed"),
                                             [name for name, grad in params.items() if grad is None])
        arg_grads = [a.grad if torch.is_tensor(a) else None for a in args]
        return {"params": wire.encode(params), "args": wire.encode(arg_grads), "graph": True,
                "moves": wire.encode(moves)}


def seed_for_call(seed) -> None:
    """Seed as torch.manual_seed does (None: leave the generators); its CUDA part only where there is
    CUDA, which a CPU grading never starts."""
    if seed is None:
        return
    if torch.cuda.is_available():
        torch.manual_seed(int(seed))
    else:
        torch.default_generator.manual_seed(int(seed))


def warm_up(device: str) -> None:
    """Run once in the zygote what every child would otherwise import on first use.

    On "cpu": the first dispatch watch, and a tensor's first repr. On "meta": the
    first op on the meta device imports torch's Python meta kernels (and sympy with
    them: 0.15 s of CPU); done in the zygote, every child forked afterwards starts
    with them loaded.

    No backward pass here: autograd's first backward asks every device type how many
    devices it has, which starts the CUDA driver in this process, and a child forked
    from it can then never use the GPU (CUDA "initialization error"; seen on an H200).
    """
    with Watch(banned_ops=("softmax",), guard_devices=True):
        layer = torch.nn.Linear(2, 2).to(device)
        x = torch.ones(1, 2, 2, device=device)
        scores = layer(x) @ x.transpose(1, 2)
        scores = scores.masked_fill(torch.ones(2, 2, dtype=torch.bool, device=device).triu(1), float("-inf"))
        torch.nn.functional.dropout(torch.softmax(scores, dim=-1), 0.1)
    repr(scores)  # most notebooks print a tensor: its first repr imports torch's dispatch-mode helpers


def preload(modules) -> None:
    """Import, once in the zygote, modules that the notebooks import (a batch names them): every child
    forked afterwards finds them in sys.modules, as a fresh interpreter would after the same import.
    One that cannot be imported is left for the notebook's own import to report."""
    import importlib

    for name in modules:
        try:
            importlib.import_module(name)
        except Exception:  # the student's cell meets the same error, in its own words
            pass


class Baseline:
    """The interpreter's global state before any student code, restored between sections.

    Only the portable path needs it: there one spawned interpreter serves every
    section in turn (each in a namespace of its own), so what one notebook changes
    globally (torch's default dtype or device, a monkeypatched torch function)
    must not reach the next. On the fork path every section gets a fresh child."""

    def __init__(self):
        import builtins
        import math
        import os

        import numpy

        self.modules = [torch, torch.nn, torch.nn.functional, torch.special, torch.linalg, numpy,
                        math, builtins, os]
        self.types = [torch.Tensor, torch.nn.Module, torch.nn.Linear, torch.nn.Dropout]
        self.saved = [(owner, dict(vars(owner))) for owner in self.modules + self.types]
        self.dtype = torch.get_default_dtype()
        self.device = torch.get_default_device()
        self.threads = torch.get_num_threads()
        self.cwd = os.getcwd()
        self.environ = dict(os.environ)
        self.path = list(sys.path)

    def restore(self) -> None:
        import os

        for owner, saved in self.saved:
            current = vars(owner)
            # what a section added goes, but for a submodule imported since (numpy.random, loaded on
            # first use): it stays in sys.modules, and a package whose __getattr__ imports it lazily
            # would recurse without end on `import package.sub` once the attribute were gone
            for name in [n for n in current if n not in saved and not _is_submodule(owner, n, current[n])]:
                try:
                    delattr(owner, name)
                except (AttributeError, TypeError):
                    pass
            for name, value in saved.items():
                if current.get(name, _MISSING) is not value:
                    try:
                        setattr(owner, name, value)
                    except (AttributeError, TypeError):
                        pass
        torch.set_default_dtype(self.dtype)
        torch.set_default_device(self.device)
        torch.set_grad_enabled(True)
        if deterministic_mode_changed():  # torch's own switch imports its compiler (a second of CPU): only then
            torch.use_deterministic_algorithms(False)
        torch.set_num_threads(self.threads)
        os.chdir(self.cwd)
        os.environ.clear()
        os.environ.update(self.environ)
        sys.path[:] = self.path


_MISSING = object()


def deterministic_mode_changed() -> bool:
    """Whether code since the baseline (which has it off) turned torch's deterministic mode on, either
    switch of it. torch.use_deterministic_algorithms sets both, and importing torch._inductor.config to
    set its own copy of the flag imports torch's compiler (dynamo, inductor, sympy): called on every
    switch of sections, that import was most of the portable self-check's extra second."""
    inductor = sys.modules.get("torch._inductor.config")
    return (torch.are_deterministic_algorithms_enabled() or torch.is_deterministic_algorithms_warn_only_enabled()
            or bool(getattr(inductor, "deterministic", False)))


def _is_submodule(owner, name: str, value) -> bool:
    return (isinstance(value, types.ModuleType) and isinstance(owner, types.ModuleType)
            and value.__name__ == f"{owner.__name__}.{name}" and sys.modules.get(value.__name__) is value)


def answer(worker: "Worker", request: dict):
    """One request of a section's worker -> its reply (None for `bye`)."""
    op = request.get("op")
    if op == "load":
        return worker.load(request.get("cells", []), request.get("cell_seconds"))
    if op == "call":
        return worker.call(request)
    if op == "bye":
        return None
    return {"ok": False, "error": {"kind": "internal", "type": "", "message": f"unknown op {op}", "where": ""}}


def serve(reader, write, config: dict) -> None:
    """The fork path: one section, one process; requests on `reader`, replies through `write`."""
    guards.install()
    worker = Worker(config)
    for line in reader:
        try:
            reply = answer(worker, wire.loads(line))
            if reply is None:
                return
            data = wire.dumps(reply)
        except BaseException as error:  # the worker's own trouble, or a request it cannot serve
            data = wire.dumps({"ok": False, "error": describe_error(error, kind="internal")})
        write(data)


class Capture:
    """What a section's code prints, kept (capped) to go back with the reply: on the portable
    path several sections share one process, so its output stream cannot tell them apart."""

    CAP = 16 * 1024

    def __init__(self):
        self.parts, self.size, self.dropped = [], 0, 0

    def write(self, text):
        text = str(text)
        room = self.CAP - self.size
        if room > 0:
            self.parts.append(text[:room])
            self.size += min(room, len(text))
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def flush(self):
        pass

    def isatty(self):
        return False

    def take(self) -> str:
        text = "".join(self.parts)
        if self.dropped:
            text += f"\n[... {self.dropped} more characters of output were dropped]"
        self.parts, self.size, self.dropped = [], 0, 0
        return text


def serve_sessions(reader, write) -> None:
    """The portable path: one spawned process serves a session per section, in turn.

    `open` starts a session (its own namespace and handles) with a config,
    `close` ends it; every other request names its session. Switching sessions
    restores the interpreter's baseline state first: the state taken at the first
    session, before any student code. Before it, `warm` (no reply) loads the meta
    device's kernels (portable.Launcher.warm), so that the baseline holds them.
    """
    guards.install()
    baseline = None
    sessions, active = {}, None
    for line in reader:
        capture = Capture()
        saved = sys.stdout, sys.stderr
        try:
            request = wire.loads(line)
            session = str(request.get("session", ""))
            op = request.get("op")
            if op == "warm":
                if baseline is None and request.get("device") == "meta":  # never "cuda": see warm_up
                    warm_up("meta")
                continue
            if baseline is None:
                baseline = Baseline()
            elif session != active:
                baseline.restore()
            active = session
            sys.stdout = sys.stderr = capture
            if op == "open":
                sessions[session] = Worker(request.get("config", {}))
                reply = {"ok": True}
            elif op == "close":
                sessions.pop(session, None)
                reply = {"ok": True}
            elif session not in sessions:
                reply = {"ok": False, "error": {"kind": "internal", "type": "", "where": "",
                                                "message": f"no session {session}"}}
            else:
                reply = answer(sessions[session], request)
                if reply is None:
                    sessions.pop(session, None)
                    continue
            reply["printed"] = capture.take()
            data = wire.dumps(reply)
        except BaseException as error:
            data = wire.dumps({"ok": False, "error": describe_error(error, kind="internal"),
                               "printed": capture.take()})
        finally:
            sys.stdout, sys.stderr = saved
        write(data)
