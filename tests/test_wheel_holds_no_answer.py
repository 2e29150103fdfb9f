"""The self-check wheel holds no written-out answer: no function it ships, put in place of a graded name, earns
that name's points.

The wheel ships autograder/checks/ without hidden/ (tests/test_selfcheck_export.py): the visible checks and
their helpers, readable in site-packages. Each function of those modules is put in place of each graded name of
every section, called as the name is called (a module's forward with the module, its parameters or the input
alone), and the documented values of that name (tests/documented_values.py, what its visible checks compare with)
are computed with it, under the worker's own watch of the APIs the section forbids in that name. A function earns
the name's points when it gives every one of them and calls no forbidden API: none may. A name the curriculum
documents no value of is measured the same way on the calls of OTHER_CALLS, against the reference's answers.
"""
from __future__ import annotations

import contextlib
import importlib
import inspect
import pkgutil

import pytest
import torch
from documented_values import for_section, matches

import autograder.checks
from autograder.core.sections import SECTIONS
from autograder.worker import guards
from autograder.worker.watching import Watch


# the worker's module that computes tensors from a call's arguments (the stand-ins' answers): shipped in the wheel
# with the rest of the worker, whose other modules confine, watch and carry, and compute no values
WORKER_MODULES = ["autograder.worker.stand_in"]


def defined_in(module) -> list:
    """(name, function) of the functions `module` defines, at its top level or as the values of its dicts (a table
    of steps)."""
    found = [(name, value) for name, value in vars(module).items()
             if inspect.isfunction(value) and value.__module__ == module.__name__]
    for table, values in vars(module).items():
        if isinstance(values, dict):
            found += [(f"{table}[{key!r}]", value) for key, value in values.items()
                      if inspect.isfunction(value) and value.__module__ == module.__name__]
    return found


def wheel_functions() -> list:
    """(module.function, function) of every function defined in a module the wheel ships (autograder/checks/
    without hidden/, and WORKER_MODULES)."""
    modules = [f"autograder.checks.{info.name}" for info in pkgutil.iter_modules(autograder.checks.__path__)
               if not info.ispkg]  # hidden/: never shipped
    found = []
    for name in modules + WORKER_MODULES:
        module = importlib.import_module(name)
        found += [(f"{name.rpartition('.')[2]}.{label}", function) for label, function in defined_in(module)]
    return found


FUNCTIONS = wheel_functions()


def calls_of_module(function) -> dict:
    """The ways a module's forward may hand itself to `function`: the module, its parameters, the input alone."""
    return {"module": lambda self, *a, **k: function(self, *a, **k),
            "parameters": lambda self, *a, **k: function(dict(self.named_parameters()), *a, **k),
            "input": lambda self, *a, **k: function(*a, **k)}


def arguments_of(function) -> tuple:
    """Placeholders for the positional parameters `function` cannot go without (self included)."""
    return tuple(object() for parameter in inspect.signature(function).parameters.values()
                 if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)
                 and parameter.default is parameter.empty)


def takes(function, arguments: tuple) -> bool:
    """Whether `function` can be called with that many positional arguments: one that cannot never gives a value
    (it raises TypeError first), so it is not worth building the modules of the measures for."""
    try:
        inspect.signature(function).bind(*arguments)
    except TypeError:
        return False
    return True


def first_of(function):
    """`function`, giving the first item of what it returns where that is a tuple (a forward's output and more)."""
    def first(*args, **kwargs):
        got = function(*args, **kwargs)
        return got[0] if isinstance(got, tuple) and got else got
    return first


def stand_ins(section, name: str, function) -> dict:
    """way -> a namespace: the section's reference with `name` replaced by `function` called that way (its whole
    answer, or the first item of a tuple it returns)."""
    reference = importlib.import_module(section.solution_module)
    original = getattr(reference, name)
    if isinstance(original, type):
        ways = {way: forward for way, forward in calls_of_module(function).items()
                if takes(function, (() if way == "input" else (object(),)) + arguments_of(original.forward)[1:])}
        ways.update({f"{way}, its first result": first_of(forward) for way, forward in list(ways.items())})
        replaced = {way: type(name, (original,), {"forward": forward}) for way, forward in ways.items()}
    elif takes(function, arguments_of(original)):
        replaced = {"arguments": lambda *a, **k: function(*a, **k),
                    "arguments, its first result": first_of(function)}
    else:
        replaced = {}
    return {way: _Namespace(reference, name, stand_in) for way, stand_in in replaced.items()}


class _Namespace:
    """The reference module's names, one replaced."""

    def __init__(self, module, name, replaced):
        self._module, self._name, self._replaced = module, name, replaced

    def __getattr__(self, attr):
        return self._replaced if attr == self._name else getattr(self._module, attr)


def _recording(api: str, original, seen: list):
    """`original`, appending `api` to `seen` on each call."""
    def watched(*args, **kwargs):
        seen.append(api)
        return original(*args, **kwargs)
    return watched


@contextlib.contextmanager
def forbidden_watch(apis):
    """The worker's watches of `apis` (autograder/worker/guards.py, watching.py), in this process: yields the list
    the APIs touched are appended to."""
    seen, originals = [], []
    for api in apis:
        owner, attr = guards._TARGETS[api]
        originals.append((owner, attr, getattr(owner, attr)))
        setattr(owner, attr, _recording(api, getattr(owner, attr), seen))
    try:
        with Watch(banned_ops=guards.banned_aten_ops(apis)) as watch:
            yield seen
        seen.extend(watch.banned_seen)
    finally:
        for owner, attr, original in originals:
            setattr(owner, attr, original)


def _x(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _module(ns, name, *args, seed=123):
    torch.manual_seed(seed)
    return getattr(ns, name)(*args)


_PADDING = torch.tensor([[False, False, True, True], [False, False, False, False]])
# name -> a call of it (on any namespace holding the section's names), for the names without a documented value
OTHER_CALLS = {
    "AdditiveScore": lambda ns: _module(ns, "AdditiveScore", 3)(_x(2, 4, 3)),
    "DotProductScore": lambda ns: _module(ns, "DotProductScore", 3)(_x(2, 4, 3)),
    "SelfAttentionScore": lambda ns: _module(ns, "SelfAttentionScore", 3)(_x(2, 4, 3)),
    "copy_v2_weights_into_v1": lambda ns: _copied(ns),
    "causal_mask": lambda ns: ns.causal_mask(5),
    "mask_padded_scores": lambda ns: ns.mask_padded_scores(_x(2, 4, 4), _PADDING),
    "padded_attention": lambda ns: ns.padded_attention(_x(2, 4, 3), _x(2, 4, 3, seed=1), _x(2, 4, 3, seed=2),
                                                       _PADDING)[0],
    "PaddedSelfAttention": lambda ns: _module(ns, "PaddedSelfAttention", 4)(
        *(_x(2, 4, 4, seed=seed) for seed in range(3)), key_padding_mask=_PADDING)[0],
    "combine_heads": lambda ns: ns.combine_heads(_x(2, 3, 5, 4)),
}


def _copied(ns):
    v1, v2 = _module(ns, "SelfAttention_v1", 3, 2, seed=1), _module(ns, "SelfAttention_v2", 3, 2, seed=2)
    ns.copy_v2_weights_into_v1(v1, v2)
    return v1(_x(5, 3))


def measures(section, name: str) -> list:
    """(compute(namespace), does this value match it): the documented values of `name`, else its OTHER_CALLS
    compared with the reference's answer."""
    values = [(value.compute, lambda got, value=value: matches(value, got))
              for value in for_section(section.id) if value.name == name]
    if not values and name in OTHER_CALLS:
        with torch.no_grad():
            expected = OTHER_CALLS[name](importlib.import_module(section.solution_module))
        values = [(OTHER_CALLS[name], lambda got: isinstance(got, torch.Tensor) and got.shape == expected.shape
                   and bool(torch.allclose(got.float(), expected.float(), atol=1e-4)))]
    return values


def earns(section, name: str, namespace) -> bool:
    """Whether `namespace` gives every measured value of `name` without calling an API forbidden there."""
    values = measures(section, name)
    apis = section.forbidden if name in section.forbidden_in else ()
    for compute, fits in values:
        try:
            with torch.no_grad():
                if not fits(compute(namespace)):
                    return False
            # it gives the value: would the worker have refused the call? (watched only then: watching is slow)
            with forbidden_watch(apis) as seen, torch.no_grad():
                compute(namespace)
        except Exception:
            return False
        if seen:
            return False
    return bool(values)


NAMES = [pytest.param(section, name, id=f"{section.id}:{name}") for section in SECTIONS for name in section.names]


def test_the_wheel_ships_functions():
    assert len(FUNCTIONS) > 50, [label for label, _ in FUNCTIONS]


@pytest.mark.parametrize("section, name", NAMES)
def test_the_reference_earns_the_documented_values(section, name):
    """The measure can tell: the reference itself gives every documented value of the name."""
    assert earns(section, name, importlib.import_module(section.solution_module))


@pytest.mark.parametrize("section, name", NAMES)
def test_no_function_of_the_wheel_earns_a_graded_name_s_values(section, name):
    earning = [f"{label} (called with the {way})" for label, function in FUNCTIONS
               for way, namespace in stand_ins(section, name, function).items() if earns(section, name, namespace)]
    assert not earning, f"the wheel writes out {name}: {earning}"
