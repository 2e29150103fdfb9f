"""What a hidden check holds: a proxy for the student's code of one section.

    out = student.call("softmax", x)                  # a plain CPU tensor back
    reply = student.run("score_matrix", x)            # the value, the op counts, the gradients
    mha = student.new("MultiHeadAttention", 3, 2, 6, 0.0, num_heads=2, seed=123)
    out = mha(batch)                                  # eval mode unless mode="train"
    reply = mha.run(batch, mode="train", seed=5, backward=grad_output)

Every call crosses to the worker process as plain data. When the student's
code cannot answer (missing name, stub, exception, timeout, crash, forbidden
API, output of the wrong kind) the call raises `StudentFailure` with a message
in the student's terms, and the check fails with it.
"""
from __future__ import annotations

import contextlib
import time
from concurrent.futures import ThreadPoolExecutor

import torch

from autograder.core.budget import Budget
from autograder.core.extract import Extracted, definition_source
from autograder.core.call_request import (Reply, call_message, check_output_devices, decode_reply,  # noqa: F401
                                         refuse_failed_call)
from autograder.core.failures import heard, place, tampering_failure, worker_message
from autograder.core.sections import Section
from autograder.i18n import _, _f
from autograder.worker import wire
from autograder.core.harness import StudentFailure
from autograder.sandbox.limits import Limits
from autograder.sandbox.zygote import MAX_SPAWNS, Child


MAX_NOTES = 10  # cells that raised, listed per section


class SectionWorker:
    """The student's cells of one section, loaded in a worker child on demand."""

    def __init__(self, launcher, section: Section, extracted: Extracted, limits: Limits, device: str,
                 banned_in_source: dict, budget: Budget | None = None, tampering: list | None = None):
        self.launcher, self.section = launcher, section
        self.extracted = extracted  # the cells, or why the file could not be read (problem, kind)
        self.limits, self.device = limits, device
        self.banned_in_source = banned_in_source  # graded name -> banned APIs seen in its code
        self.tampering = list(tampering or [])  # places the code reaches into the watch: nothing runs
        self.budget = budget or Budget(limits.section_seconds)
        self.budget_spent = False  # a call was refused or stopped for lack of time
        self.child: Child | None = None
        self.spawns = 0
        # graded name -> why no call of it is made again: it stopped the worker (exit, crash, memory)
        # once, or ran past its time twice. Its later checks fail at once, and the worker's restarts (MAX_SPAWNS)
        # stay for the other names: one broken function costs its own checks, not the section's rest
        self.refused: dict[str, str] = {}
        self.timeouts: dict[str, int] = {}
        self.load_report: list = []
        self.defined: list = []
        self.printed: list[str] = []
        self.warnings: list[dict] = []  # those the student's code raised, once each (failures.heard)
        self.load_failure: str | None = None
        self.sources: dict[str, str] = {}  # graded name -> its code (source_of)
        self.next_up: SectionWorker | None = None  # the section graded next: prepared when this one starts
        self.loading: tuple | None = None  # (Future, allowed): a start and load sent ahead, not yet answered

    def source_of(self, name: str) -> str:
        """The student's code of graded `name`, as written (read, never run; parsed once per name)."""
        if name not in self.sources:
            self.sources[name] = definition_source(self.extracted.cells, name)
        return self.sources[name]

    # ------------------------------------------------------------ lifecycle
    def ensure(self) -> Child:
        if self.extracted.problem:
            raise StudentFailure(self.extracted.problem, kind=self.extracted.kind)
        if self.tampering:
            raise tampering_failure(self.tampering)
        if self.load_failure and self.spawns >= MAX_SPAWNS:
            raise StudentFailure(self.load_failure, kind="load")
        if self.child is not None:
            return self.child
        ahead = self._loaded_ahead()
        if ahead is not None:  # started ahead (prepare): only its answer was awaited
            child, reply, status, allowed = ahead
        else:
            self._check_budget()
            if self.spawns >= MAX_SPAWNS:
                raise StudentFailure(
                    _f("your code stopped the grading worker {count} times; the remaining checks of {section} "
                       "were not run", count=MAX_SPAWNS, section=self.section.id), kind="died")
            child = self._spawn()
            allowed = min(self.limits.load_seconds, self.budget.left())
            reply, status = self._timed(child, self._load_message(), allowed)
        if reply is None or not reply.get("ok"):
            self._retire(child)
            self.load_failure = self._load_failure(status, allowed)
            self.spawns = MAX_SPAWNS
            raise StudentFailure(self.load_failure, kind="load")
        self.load_report = reply.get("cells", [])
        self.defined = reply.get("defined", [])
        self.child = child
        if self.next_up is not None:
            self.next_up.prepare()
        return child

    def prepare(self) -> None:
        """Start this section's worker and send it the cells, on a thread of its own: done for the
        next section while this one's checks run, so that its start and loading (an import of pandas,
        say) overlap them. Only on the fork path (a child per section); the load's time limit runs from
        its sending, and the budget counts only the wait for its answer, as for any call."""
        if (self.child is not None or self.loading is not None or self.spawns or self.extracted.problem
                or self.tampering or getattr(self.launcher, "kind", "") != "fork" or self.budget.left() <= 0):
            return
        allowed = min(self.limits.load_seconds, self.budget.left())
        config, message = self._config(), self._load_message()

        def start() -> tuple | None:  # on its own thread, so that the grading does not wait for the zygote
            try:
                child = self.launcher.spawn(self.limits, config)
                child.send(message)  # a child already gone answers "died" when it is read
                return child, time.monotonic() + allowed
            except Exception:  # the zygote failed: this section's own first call meets it again, in its check
                return None

        self.spawns += 1
        ahead = ThreadPoolExecutor(max_workers=1, thread_name_prefix="worker-ahead")
        self.loading = (ahead.submit(start), allowed)
        ahead.shutdown(wait=False)  # nothing more to run: its one thread ends with this start

    def _loaded_ahead(self) -> tuple | None:
        """(child, its load's reply, status, allowed) of the worker started ahead, or None where none
        was, or its start failed (this section then starts its own, and meets the failure in its check)."""
        if self.loading is None:
            return None
        (ahead, allowed), self.loading = self.loading, None
        started = ahead.result()  # None where the start failed (start() in prepare)
        if started is None:
            self.spawns -= 1
            return None
        child, deadline = started
        waited_from = time.monotonic()
        try:
            reply, status = child.receive(deadline)
        finally:
            self.budget.spend(time.monotonic() - waited_from)
        return child, reply, status, allowed

    def _ahead_child(self) -> Child | None:
        """The child started ahead and never asked for (waits for its start to end), or None."""
        started = self.loading[0].result() if self.loading else None
        return started[0] if started else None

    def _spawn(self) -> Child:
        self.spawns += 1
        return self.launcher.spawn(self.limits, self._config())

    def _config(self) -> dict:
        return {"names": list(self.section.names), "device": self.device, "forbidden": list(self.section.forbidden),
                "forbidden_in": list(self.section.forbidden_in),
                "gpu_memory_bytes": self.limits.gpu_memory_bytes}  # the worker's GPU memory cap (device cuda)

    def _load_message(self) -> dict:
        return {"op": "load", "cells": self.extracted.cells, "cell_seconds": self.limits.cell_seconds}

    def _retire(self, child: Child):
        child.kill()
        text = child.printed()
        if text.strip():
            self.printed.append(text)
        if child is self.child:
            self.child = None

    def stop(self):
        """The grading is over: signal the child to go (see `close`, which waits for it)."""
        for child in (self.child, self._ahead_child()):
            if child is not None:
                child.bye()
                child.signal()

    def close(self):
        if self.child is not None:
            self._retire(self.child)
        if self.loading is not None:  # started ahead, never asked for: what it printed belongs to no check
            child = self._ahead_child()
            if child is not None:
                child.kill()
            self.loading = None

    def _load_failure(self, status: str, allowed: float) -> str:
        """Why the notebook could not be loaded, as whole sentences (a translation orders its parts itself)."""
        notebook = self.section.notebook
        if status == "timeout" and allowed >= self.limits.load_seconds:
            return _f("your {notebook} did not finish loading within {seconds:g} s (a cell runs too long or never "
                      "ends); no check of this section could run", notebook=notebook, seconds=self.limits.load_seconds)
        if status == "timeout":
            return _f("your {notebook} did not finish loading within what was left of {budget} (a cell runs too "
                      "long or never ends); no check of this section could run", notebook=notebook,
                      budget=self.budget.which())
        if status == "died":
            return _f("your {notebook} stopped the grading worker while loading (sys.exit, os._exit, a crash, or "
                      "the memory limit); no check of this section could run", notebook=notebook)
        return _f("your {notebook} could not be loaded; no check of this section could run", notebook=notebook)

    def failed_cells(self, unless: tuple[str, ...] = ()) -> list[str]:
        """One line per notebook cell that raised while loading, but for errors of the types `unless` names."""
        lines = []
        for cell in self.load_report:
            if not cell.get("ok") and cell.get("error", {}).get("type") not in unless:
                error = cell.get("error", {})
                where = place(error) or cell.get("label", _("a cell"))
                message = worker_message(error)[:200]
                if error.get("kind") == "cell_timeout":  # the worker's words, said again in the reader's language
                    message = _f("interrupted after {seconds:g} s, the limit for one cell; the cells after it were "
                                 "run, so only what it had yet to define is missing", seconds=self.limits.cell_seconds)
                raised = f"{error.get('type')}: {message}" if message else str(error.get("type"))
                if error.get("line"):
                    lines.append(_f("{where} ({line}): {error}", where=where, line=error["line"], error=raised))
                else:
                    lines.append(_f("{where}: {error}", where=where, error=raised))
        if len(lines) > MAX_NOTES:
            lines[MAX_NOTES:] = [_f("... and {count} more cells that raised", count=len(lines) - MAX_NOTES)]
        return lines

    # ------------------------------------------------------------ calls
    def _timed(self, child, message: dict, timeout: float):
        started = time.monotonic()
        try:
            return child.request(message, timeout)
        finally:
            self.budget.spend(time.monotonic() - started)

    def _check_budget(self):
        if self.budget.left() <= 0:
            self.budget_spent = True
            raise StudentFailure(
                _f("not run: your code used up {budget} (calls that each take long add up); "
                   "make it faster, the checks before this one were graded", budget=self.budget.which()),
                kind="budget")

    def request(self, message: dict, label: str, timeout: float | None = None, culprit: str = "") -> dict:
        """The worker's answer to `message`; `culprit`: the graded name whose code the request runs."""
        if culprit in self.refused:
            raise StudentFailure(_f("{label} was not called again: {why}", label=label, why=self.refused[culprit]),
                                 kind="died")
        child = self.ensure()
        self._check_budget()
        limit = timeout or self.limits.call_seconds
        allowed = min(limit, self.budget.left())
        reply, status = self._timed(child, message, allowed)
        if reply is None:
            self._retire(child)
            if status == "timeout" and allowed < limit:
                self.budget_spent = True
                raise StudentFailure(
                    _f("{label} was stopped when your code had used up {budget} (calls that each take long add up)",
                       label=label, budget=self.budget.which()), kind="budget")
            if culprit and status == "died":
                self.refused[culprit] = _f("{name} stopped the grading worker in an earlier check", name=culprit)
            elif culprit and status == "timeout":  # twice: a slow function may still pass on smaller inputs
                self.timeouts[culprit] = self.timeouts.get(culprit, 0) + 1
                if self.timeouts[culprit] >= 2:
                    self.refused[culprit] = _f("{name} ran past the time limit in two earlier checks", name=culprit)
            if status == "timeout":
                raise StudentFailure(
                    _f("{label} ran past the {seconds:g} s limit and was stopped (an infinite loop, or far too "
                       "much work?)", label=label, seconds=timeout or self.limits.call_seconds), kind="timeout")
            if status == "oversized":
                raise StudentFailure(_f("{label} returned more data than the grader accepts", label=label),
                                     kind="oversized")
            if status == "garbled":
                raise StudentFailure(
                    _f("{label}: the grading worker answered something that is not a reply (does your code "
                       "write to the grader's channel?); the call counts as failed", label=label), kind="garbled")
            raise StudentFailure(
                _f("{label} stopped the grading worker (it exited, crashed, or hit the memory limit)", label=label),
                kind="died")
        return heard(self.warnings, reply)


class Student:
    """The `student` fixture: calls into one section's worker."""

    def __init__(self, worker: SectionWorker):
        self.worker = worker
        self.section = worker.section
        self.device = worker.device
        self.stand_ins: dict = {}  # graded name -> its table: see standing_in
        self.stood_in: set = set()  # the graded names whose stand-in answered a call (the caller resets it)

    # the graded names the notebook defines after loading
    @property
    def defined(self) -> list:
        self.worker.ensure()
        return list(self.worker.defined)

    def call(self, name: str, *args, seed: int | None = None, **kwargs):
        return self.run(name, *args, seed=seed, **kwargs).value

    def run(self, name, *args, seed=None, return_args=False, device=None, backward=None, noncontiguous=False,
            default_device=None, measure=False, count_ops=False, count_lines=False, **kwargs) -> Reply:
        """noncontiguous: tensor arguments of 3+ dims reach the function with the memory
        layout transpose(1, 2) gives (same values, not contiguous), e.g. split_heads' output.
        default_device: where a tensor made without device= lands during the call (the arguments
        stay on `device`): "meta" shows a tensor that does not follow its inputs' device.
        measure: the reply's `measured` holds the largest tensor made and the matrix products run (measure_tiles)
        count_ops: the reply's `ops` holds the number of aten ops the call dispatched (else None)
        count_lines: the reply's `lines` counts the lines of the student's cells the call ran (measure_lines)"""
        self._check_source_bans(name)
        target = {"name": name}
        return self._send(target, name, args, kwargs, culprit=name, seed=seed, return_args=return_args,
                          device=device, backward=backward, noncontiguous=noncontiguous,
                          default_device=default_device, measure=measure, count_ops=count_ops,
                          count_lines=count_lines)

    def new(self, class_name: str, *args, seed: int | None = 0, **kwargs) -> "StudentModule":
        """Construct the student's class under torch.manual_seed(seed)."""
        value = self.run(class_name, *args, seed=seed, **kwargs).value
        if not isinstance(value, wire.Handle):
            raise StudentFailure(_f("{name}(...) did not build an nn.Module (got {value})", name=class_name,
                                    value=repr(value)), kind="raised")
        module = StudentModule(self, value, class_name)
        module.built = (args, kwargs, seed)  # how it was built: a check may build it again under another seed
        return module

    @contextlib.contextmanager
    def standing_in(self, tables: dict):
        """Within: every call finds the graded names of `tables` answering from them, not the student's own: the
        function checked meets right collaborators. A table: {"params": the contract's parameter names, "defaults",
        "rows": [[arguments by name, answer], ...]} (worker/stand_in.answered_from)."""
        previous, self.stand_ins = self.stand_ins, {**self.stand_ins, **tables}
        try:
            yield
        finally:
            self.stand_ins = previous

    def stand_in(self, label: str, parameters=(), linears=()) -> "StudentModule":
        """A module built in the worker from data, no student code (worker/stand_in.py): a collaborator in place
        of the student's own class, whose mistakes then cost its own checks only. parameters: (name, tensor);
        linears: (name, weight, bias or None); label: what messages call it."""
        args = ([list(pair) for pair in parameters], [list(triple) for triple in linears])
        return StudentModule(self, self._send({"stand_in": True}, label, args, {}, culprit="").value, label)

    def source_of(self, name: str) -> str:
        return self.worker.source_of(name)

    def _check_source_bans(self, name):
        apis = self.worker.banned_in_source.get(name)
        if apis:
            raise StudentFailure(_f("{name} uses {apis}, which this section forbids: write the computation yourself",
                                    name=name, apis=", ".join(apis)), kind="forbidden")

    def _send(self, target, label, args, kwargs, *, culprit: str, seed=None, mode=None, return_args=False,
              device=None, backward=None, noncontiguous=False, default_device=None, measure=False,
              count_rows=(), count_ops=False, count_lines=False) -> Reply:
        """One call of student code in the worker: the request, the answer checked and decoded.
        culprit: the graded function or class whose code runs."""
        message = call_message(target, args, kwargs, seed=seed, mode=mode, return_args=return_args,
                               device=device, backward=backward, noncontiguous=noncontiguous,
                               stand_ins=self.stand_ins, count_rows=count_rows, count_ops=count_ops)
        if default_device is not None:
            message["default_device"] = default_device
        if measure:
            message["measure"] = True
        if count_lines:
            message["count_lines"] = True
        reply = self.worker.request(message, label, culprit=culprit)
        self.stood_in.update(name for name in reply.get("stood_in") or () if name in self.section.names)
        refuse_failed_call(label, reply)
        decoded = decode_reply(label, reply, counted=count_ops)
        has_tensor_input = any(isinstance(a, (torch.Tensor, wire.Handle)) for a in list(args) + list(kwargs.values())) \
            or "handle" in target
        check_output_devices(label, decoded.output_devices, device or self.device, has_tensor_input)
        return decoded


class StudentModule:
    """A student's nn.Module living in the worker. Calling it runs forward in eval mode."""

    def __init__(self, student: Student, handle: wire.Handle, class_name: str):
        self.student, self.handle, self.class_name = student, handle, class_name
        self.built = None  # (args, kwargs, seed) of Student.new; None for a stand-in built from data

    def __call__(self, *args, mode="eval", seed=None, **kwargs):
        return self.run(*args, mode=mode, seed=seed, **kwargs).value

    def run(self, *args, mode="eval", seed=None, return_args=False, device=None,
            backward=None, count_rows=(), count_ops=False, **kwargs) -> Reply:
        """count_rows: names of sublayers whose input rows the worker counts (Reply.rows); count_ops: see
        Student.run."""
        self.student._check_source_bans(self.class_name)
        target = {"handle": self.handle.index, "method": None}
        return self.student._send(target, f"{self.class_name}.forward", args, kwargs, culprit=self.class_name,
                                  seed=seed, mode=mode, return_args=return_args, device=device, backward=backward,
                                  count_rows=count_rows, count_ops=count_ops)

    def call_method(self, method: str, *args, **kwargs):
        """The value of the module's public method `method` (its contract's, such as 08's load_from) called with
        these arguments; the module's mode is left as it is."""
        self.student._check_source_bans(self.class_name)
        target = {"handle": self.handle.index, "method": method}
        return self.student._send(target, f"{self.class_name}.{method}", args, kwargs,
                                  culprit=self.class_name).value

    def params(self) -> dict:
        """name -> tensor for every parameter, in creation order."""
        target = {"handle": self.handle.index, "method": "params"}
        label = _f("{name} parameters", name=self.class_name)
        return self.student._send(target, label, (), {}, culprit=self.class_name).value

    def param_ids(self) -> dict:
        """name -> the identity (an int) of each Parameter object, in creation order: equal before and after a call
        where the call kept the module's own Parameters."""
        target = {"handle": self.handle.index, "method": "param_ids"}
        label = _f("{name} parameters", name=self.class_name)
        return self.student._send(target, label, (), {}, culprit=self.class_name).value

    def tensor_shapes(self) -> dict:
        """name -> shape (a list, or None) of each tensor the module holds outside its parameters: its cache."""
        target = {"handle": self.handle.index, "method": "tensor_shapes"}
        label = _f("{name} cache", name=self.class_name)
        return self.student._send(target, label, (), {}, culprit=self.class_name).value

    @property
    def arg(self) -> wire.Handle:
        """Pass the module itself as an argument of another call."""
        return self.handle
