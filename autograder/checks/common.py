"""Shared tools of the checks (hidden and visible): inputs, seeded modules, recurring checks.

Every random input is made on the CPU from a fixed hidden seed, so a regrade
sees the same inputs and every device grades the same numbers. This module is
shipped to students with the visible checks: it must never import `solutions`.
"""
from __future__ import annotations

import functools
import re
from types import SimpleNamespace

import torch

from autograder.core.harness import CheckFailed, StudentFailure, close, expect, expect_shape
from autograder.core.hints import BATCHED_T, TRANSPOSE_HINT  # noqa: F401  (the checks' names for them)
from autograder.core.hints import device_hint
from autograder.core.shortening import shorten
from autograder.i18n import N_, _, _f
from autograder.worker.wire import TensorStub

WORKED_INPUTS = torch.tensor(
    [[0.43, 0.15, 0.89],  # Your
     [0.55, 0.87, 0.66],  # journey
     [0.57, 0.85, 0.64],  # starts
     [0.22, 0.58, 0.33],  # with
     [0.77, 0.25, 0.10],  # one
     [0.05, 0.80, 0.55]])  # step
WORKED_BATCH = torch.stack((WORKED_INPUTS, WORKED_INPUTS))  # (2, 6, 3)
TOKENS = ["Your", "journey", "starts", "with", "one", "step"]


def hint_if_written(student, name: str, pattern: str, hint: str) -> str:
    """`hint` where the student's code of `name` contains `pattern` (a regular expression), else "":
    a value check's hint about a cause must see that cause in the code (`.T`, a `.view(`)."""
    return hint if re.search(pattern, student.source_of(name)) else ""


def randn(seed: int, *shape, scale: float = 1.0) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=generator) * scale


def rand(seed: int, *shape) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.rand(*shape, generator=generator)


def manual_seed(seed: int) -> None:
    """torch.manual_seed, without its CUDA bookkeeping where there is no GPU to seed: on a CPU
    build each call records a stack trace for a CUDA start that never comes (a tenth of a check)."""
    if torch.cuda.is_available():
        torch.manual_seed(seed)
    else:
        torch.default_generator.manual_seed(seed)


def seeded(cls, *args, seed: int, **kwargs):
    """The reference module built the way the student's is: torch.manual_seed(seed) first."""
    manual_seed(seed)
    module = cls(*args, **kwargs)
    module.eval()
    return module


def seeded_projections(d_in: int, d_out: int, *, seed: int, raw: bool = False) -> SimpleNamespace:
    """W_query, W_key, W_value created as the notebooks say, one after the other after torch.manual_seed(seed).

    raw=False: nn.Linear(d_in, d_out, bias=False) layers (SelfAttention_v2, CausalAttention);
    raw=True: nn.Parameter(torch.rand(d_in, d_out)) matrices (SelfAttention_v1).
    The creation order is public, so these are the weights of any course module that creates
    its projections first: the visible checks use them where hidden ones use a seeded reference.
    """
    manual_seed(seed)
    if raw:
        make = lambda: torch.nn.Parameter(torch.rand(d_in, d_out))  # noqa: E731
    else:
        make = lambda: torch.nn.Linear(d_in, d_out, bias=False)  # noqa: E731
    return SimpleNamespace(W_query=make(), W_key=make(), W_value=make())


def _run_or_raised(run, args, kwargs):
    """(reply, None), or (None, the failure) when the student's code raised; any other failure
    (a forbidden API, a stub, a timeout, a crash) propagates."""
    try:
        return run(*args, **kwargs), None
    except StudentFailure as failure:
        if failure.kind != "raised":
            raise
        return None, failure


class MeetingModule:
    """A student's module (a StudentModule) whose runs meet right collaborators: a subclass's run() says which
    (Student.standing_in tables for that call); everything else is the student's module's own."""

    def __init__(self, module):
        self.module, self.class_name, self.handle = module, module.class_name, module.handle

    @property
    def arg(self):
        return self.module.arg

    def __call__(self, *args, mode="eval", seed=None, **kwargs):
        return self.run(*args, mode=mode, seed=seed, **kwargs).value

    def params(self) -> dict:
        return self.module.params()


def stand_in_table(params, rows, defaults=None) -> dict:
    """A collaborator's answers for Student.standing_in: params, the contract's parameter names in order (the
    worker binds a call's arguments by them); rows, (arguments by name, the right answer) pairs; defaults, the
    contract's defaults. A call whose arguments match no row runs the student's own function."""
    return {"params": list(params), "defaults": dict(defaults or {}), "rows": [[dict(key), value] for key, value in rows]}


def meeting(tables: dict):
    """A check's decorator: the whole check, the student's modules built in it included, runs within
    Student.standing_in(tables). For the checks of a module whose forward (or __init__) may call the student's
    own graded helpers: the module then meets right ones, and a wrong helper costs the helper's checks only.
    `tables` are made once, when the checks are imported: they must not depend on the check's inputs."""
    def wrap(check_function):
        @functools.wraps(check_function)
        def within(student):
            with student.standing_in(tables):
                return check_function(student)
        return within
    return wrap


def run_unless_raised(run, *args, **kwargs):
    """`run(*args, **kwargs)` (a student.run or module.run), or None when the student's code raised.

    For a check of one convention (arguments left unchanged, no Python loop, no forbidden
    API): an exception is a wrong result, which the checks of the values already grade;
    a forbidden API, a stub, a timeout or a crash still fails the check.
    """
    return _run_or_raised(run, args, kwargs)[0]


def run_where_made(run, *args, mistake: str, advice: str, **kwargs):
    """For a check of where tensors are made: `run_unless_raised`, except that a call raising because
    it mixes devices fails this check, naming `mistake`. On a GPU a tensor made on the CPU breaks the
    plain call on the grading device already; the value checks then see only an error, so this check
    is the one to name the mistake (on a CPU that call runs, and the meta device shows it instead)."""
    reply, failure = _run_or_raised(run, args, kwargs)
    if failure is not None and device_hint(failure.message):
        raise CheckFailed(f"{failure.shortened(600)}. {advice}", mistake=mistake) from None  # advice: translated
    return reply


def expect_unchanged(reply, originals, name: str) -> None:
    """The call must not have modified its tensor arguments (reply made with return_args=True;
    None, from run_unless_raised, when the call raised: nothing to compare)."""
    if reply is None:
        return
    for index, (before, after) in enumerate(zip(originals, reply.args_after)):
        if isinstance(before, torch.Tensor) and isinstance(after, torch.Tensor):
            same = before.shape == after.shape and torch.equal(before.nan_to_num(), after.nan_to_num())
            expect(same, _f("{name} modified its argument #{number} in place; "
                            "use out-of-place ops (masked_fill, not masked_fill_) on tensors you were given",
                            name=name, number=index + 1))


def expect_no_loop(counts: dict, name: str, over: str) -> None:
    """Op counts at two sizes must be equal: a Python loop dispatches more ops for a larger size."""
    if None in counts.values():  # the grader's own slip: an uncounted call would read as no loop at all
        raise RuntimeError("expect_no_loop needs calls run with count_ops=True")
    (small, n_small), (large, n_large) = sorted(counts.items())
    # i18n: {over} is the name of what is counted, e.g. "tokens", "heads" (translated by the caller)
    expect(n_small == n_large,
           _f("{name} dispatched {n_small} tensor ops for {small} {over} but {n_large} for {large}: "
              "it looks like a Python loop over {over}; compute them all with one batched operation",
              name=name, n_small=n_small, small=small, over=_(over), n_large=n_large, large=large),
           mistake=f"a Python loop over {over}")


def expect_output(out, shape, what: str) -> None:
    """A tensor of `shape` that differs between batch items (their inputs differ): a property check
    earns nothing for a forward that ignores its input."""
    expect_shape(out, shape, what)
    expect(not close(out[0], out[1]),
           _f("{what}: every batch item gave the same output, though their inputs differ; "
              "the output must depend on the input", what=what))


# the likely cause of a forward that breaks after .to(device): what expect_forward_on_any_device's callers advise
CPU_MADE_MASK = N_("a tensor created on the CPU inside forward (e.g. a mask made with torch.ones(T, T)) does not "
                   "follow .to(device): register a buffer or create it with device=x.device")


def expect_forward_on_any_device(module, x, name: str, shape: tuple, advice: str, calls=({},)) -> None:
    """`module`'s forward of `x` after .to(device), here the meta device (where a tensor made on the CPU shows up
    as it would on a GPU), once per keyword arguments of `calls` (e.g. with and without a cache): it runs, mixes
    no devices and returns one `shape` tensor on that device. advice: the likely cause (translated), said where
    the forward raises or mixes devices."""
    for kwargs in calls:
        try:
            reply = module.run(x, device="meta", **kwargs)
        except StudentFailure as failure:
            if failure.kind != "raised":
                raise
            raise CheckFailed(_f("after .to(device) (here the meta device), {error}\nMost likely {advice}",
                                 error=failure.shortened(300), advice=advice)) from None
        mixed = "; ".join(reply.mixed_devices[:2])
        expect(not mixed, _f("after .to(device), {name}.forward mixes devices ({mixed}): {advice}", name=name,
                             mixed=mixed, advice=advice))
        expect(isinstance(reply.value, (TensorStub, torch.Tensor)) and tuple(reply.value.shape) == shape
               and reply.output_devices == ["meta"],
               _f("after .to(device), {name}.forward did not return one {shape} tensor on that device", name=name,
                  shape=str(shape)))


def expect_dropout_acts(module, x, got, name: str, what: str, other_seed: int, mistake: str, eval_what: str = "",
                        shape=None) -> None:
    """`got`, the module's train-mode output for x, must differ from its eval-mode output (dropout acts in train
    mode); where they are equal, an output that ignores its input is told so first (the input of `other_seed`).
    mistake: the words of no dropout in train mode (N_); eval_what: where the eval-mode output's `shape` is checked."""
    eval_out = module(x, mode="eval")
    if eval_what:
        expect_shape(eval_out, shape, eval_what)
    if close(got, eval_out):  # an output that ignores its input says so, not that dropout is missing
        other = randn(other_seed, *x.shape)
        expect_not_hard_coded(name, (eval_out, module(other, mode="eval")), (x, other))
    expect(not close(got, eval_out), _f("{what}: the output equals the eval-mode output. This looks like "
                                        "{mistake}", what=what, mistake=_(mistake)), mistake=mistake)


def stack_items(items, what: str, name: str) -> torch.Tensor:
    """The outputs of `name` for each item of a batch (`what`: one item's call), stacked: what the
    batched call must equal. CheckFailed where they are not tensors of one shape."""
    expect(all(isinstance(item, torch.Tensor) for item in items), _f("{what} should return a tensor", what=what))
    try:
        return torch.stack(items)
    except RuntimeError as error:
        raise CheckFailed(_f("{name} returned outputs of different shapes for the items of a batch: {error}",
                             name=name, error=error)) from None


# Made at import time: marked here, translated with _() where they are shown
UNUSED_PARAMETER = N_("is it used in forward? was it created as a Parameter / Linear?")
# a parameter without a gradient whose moving moves the output: used, but through .detach(), .data or no_grad
DETACHED = N_("a parameter used in forward but cut from the autograd graph (.detach(), .data or torch.no_grad())")
NO_GRAPH = N_("the output has no autograd graph (no requires_grad): avoid .detach(), torch.no_grad() and .data "
              "in forward, and create the weights as nn.Parameter / nn.Linear")


def expect_gradients(reply, names, what: str, unused: str = UNUSED_PARAMETER, out=None) -> None:
    """Every parameter in `names` gets a gradient; finite ones where the output itself is finite
    (NaN in the forward is the value checks' business: its gradients are NaN too).
    unused: the hint for a parameter that got none; out: the output to judge (default: the reply's value)."""
    out = reply.value if out is None else out
    nonfinite_out = isinstance(out, torch.Tensor) and out.is_floating_point() and not bool(torch.isfinite(out).all())
    expect_grads_flow(reply, names, what, unused, finite=not nonfinite_out)


def expect_grads_flow(reply, names, name: str, unused: str = UNUSED_PARAMETER, finite: bool = True) -> None:
    """The output has an autograd graph and each parameter in `names` gets a gradient, a finite one
    unless `finite` is False.

    Only that the gradients flow: their values follow from the forward, which other checks grade.
    """
    value = getattr(reply, "value", None)
    if not reply.graph and value is None:  # nothing came back: no graph to blame, a forward without a return
        raise CheckFailed(_f("{what} returned None: does forward end with a return?", what=name))
    expect(reply.graph, _f("{what}: {why}", what=name, why=_(NO_GRAPH)))
    for param_name in names:
        grad = reply.param_grads.get(param_name)
        if not isinstance(grad, torch.Tensor) and moves_output(reply, param_name):
            raise CheckFailed(_f("{what}: parameter {name} received no gradient: it is used in forward but cut from "
                                 "the autograd graph (.detach(), .data or torch.no_grad()), so its gradient is None",
                                 what=name, name=param_name), DETACHED)
        if not isinstance(grad, torch.Tensor):
            raise CheckFailed(_f("{what}: parameter {name} received no gradient ({unused})", what=name,
                                 name=param_name, unused=_(unused)))
        expect(not finite or bool(torch.isfinite(grad).all()),
               _f("{what}: the gradient of {name} is not finite", what=name, name=param_name))


def moves_output(reply, param_name: str) -> bool:
    """Whether the output moved when the worker moved `param_name` (a parameter that got no gradient): by more
    than float32 rounding of the output's magnitude. Not measured: False (nothing is claimed)."""
    value = reply.value[0] if isinstance(reply.value, (tuple, list)) and reply.value else reply.value
    scale = largest_magnitude(value)
    return reply.param_moves.get(param_name, 0.0) > 1e-4 * (1.0 + scale)


def largest_magnitude(value) -> float:
    finite = value.detach().double().nan_to_num(0.0, 0.0, 0.0) if isinstance(value, torch.Tensor) else None
    return float(finite.abs().max()) if finite is not None and finite.numel() else 0.0


def with_params(reference: torch.nn.Module, params) -> torch.nn.Module:
    """`reference` holding the student's parameter values where their names and shapes match
    its own (else left as seeded): an output check then grades forward alone, not the creation order."""
    own = dict(reference.named_parameters())
    if (isinstance(params, dict) and sorted(params) == sorted(own)
            and all(isinstance(v, torch.Tensor) and v.shape == own[k].shape for k, v in params.items())):
        with torch.no_grad():
            for key, value in params.items():
                own[key].copy_(value)
    return reference


def expect_raises(call, error: str, what: str, naming=()) -> str:
    """`call()` (one student call) must raise `error` (a type name) whose message names each of `naming`.

    A name matches as a whole token: "7" is found in "got 7 tokens", not in "17" or "line 7"
    of the location the grader adds. Returns the student's message.
    """
    try:
        value = call()
    except StudentFailure as failure:
        if failure.kind != "raised":
            raise
        raised, message = str(failure.error.get("type", "")), str(failure.error.get("message", ""))
    else:
        if isinstance(value, torch.Tensor):
            raise CheckFailed(_f("{what} should raise {error}, but it returned a tensor of shape {shape}",
                                 what=what, error=error, shape=tuple(value.shape)))
        raise CheckFailed(_f("{what} should raise {error}, but it returned {kind}", what=what, error=error,
                             kind=type(value).__name__))
    text = f"{raised}: {message}" if message else raised
    expect(raised == error, _f("{what} should raise {error}; it raised {got}", what=what, error=error, got=shorten(text, 300)))
    missing = [str(n) for n in naming
               if not re.search(rf"(?<![\w.]){re.escape(str(n))}(?![\w]|\.\d)", message)]
    expect(not missing, _f("{what} raised {error}({message}); the message should name "
                           "{names} so the user can see what was wrong", what=what, error=error,
                           message=repr(shorten(message, 200)), names=_(" and ").join(map(str, naming))))
    return message


def expect_sums_to_one(weights, shape, what: str, dim: int = -1) -> None:
    """Attention weights: a float tensor of `shape`, no negative entry, summing to 1 along `dim`.

    When they sum to 1 along another dim instead, the message says so (softmax over the wrong dim).
    """
    if not isinstance(weights, torch.Tensor):
        raise CheckFailed(_f("{what}: expected a torch.Tensor, got {got}", what=what, got=type(weights).__name__))
    expect(tuple(weights.shape) == tuple(shape),
           _f("{what}: expected shape {expected}, got {got}", what=what, expected=tuple(shape),
              got=tuple(weights.shape)))
    expect(weights.is_floating_point(),
           _f("{what}: expected float weights, got {dtype}", what=what, dtype=weights.dtype))
    values = weights.double()
    expect(not values.isnan().any(),
           _f("{what}: your weights contain nan (did exp overflow, or inf - inf?)", what=what))
    expect(bool((values >= 0).all()),
           _f("{what}: your weights have negative entries; softmax weights are >= 0", what=what))
    asked, dim = dim, dim % values.dim()

    def sums_to_one(d):
        sums = values.sum(d)
        return bool(torch.allclose(sums, torch.ones_like(sums), rtol=0, atol=1e-5))

    if sums_to_one(dim):
        return
    others = [d for d in range(values.dim()) if d != dim and sums_to_one(d)]
    sums = values.sum(dim)
    detail = _f("their sums range from {low:.4g} to {high:.4g}", low=sums.min().item(), high=sums.max().item())
    if others:
        other = others[0] - values.dim() if asked < 0 else others[0]
        detail = _f("they sum to 1 along dim {other} instead: softmax over the wrong dim?", other=other)
    raise CheckFailed(_f("{what}: your weights don't sum to 1 along dim {asked}; {detail}", what=what, asked=asked,
                         detail=detail))


# A catalogued mistake's name (what the class report counts): an answer written out instead of computed
# a nan in train mode where the eval-mode forward (the same mask) gives numbers: dropout met the masked
# scores, -inf times dropout's 0 (said instead of harness.NAN_NOTE, whose guess is the mask's direction)
TRAIN_ONLY_NAN = N_("nan appears in train mode only, so the mask is right: this looks like dropout applied to the "
                    "masked scores before the softmax (-inf × 0 is nan)")
# +inf where -inf belongs: each row that hides a key holds +inf, whose softmax is nan (inf - inf), whatever the mask's
# direction (said instead of harness.NAN_NOTE, whose guess is the mask's direction)
PLUS_INF = N_("the mask filled with +inf instead of -inf (float('-inf'), with the minus sign)")
PLUS_INF_NAN = N_("nan appears in every row that hides a key, so the mask is right: a softmax over +inf is nan "
                  "(inf - inf)")
HARD_CODED = N_("the answer is hard-coded: the same values whatever the input")


def _same_values(a, b) -> bool:
    return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape \
        and bool(torch.equal(a.detach().cpu(), b.detach().cpu()))


def expect_not_hard_coded(name: str, answers, expected) -> None:
    """Fail where `name` gave identical outputs for different inputs whose right outputs differ: the evidence of
    an answer written out (the documented one) instead of computed. answers: the student's outputs on two or more
    inputs; expected: the right ones, in the same order. An output that changes with any of the inputs is no such
    evidence (a slip in a formula can make two outputs alike: another input still tells), and without evidence
    nothing is said here: the value checks grade the answer."""
    first, *others = answers
    if all(_same_values(first, other) for other in others) and \
            not all(_same_values(expected[0], other) for other in expected[1:]):
        raise CheckFailed(_f("{name} returns the same values for different inputs: is the answer hard-coded?",
                             name=name), HARD_CODED)
