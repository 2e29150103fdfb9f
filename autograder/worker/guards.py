"""Python-level watches inside the worker: which banned APIs a call touched.

This is observation, not security (the student's code shares this process and
could undo it). The trusted side also scans the source, and the worker's
dispatch watch sees the aten ops underneath, so renaming an import or calling
through an alias does not hide a banned call.
"""
import importlib.abc
import sys

import torch
import torch.nn.functional as F

# public API name -> (owner object, attribute)
_TARGETS = {
    "torch.softmax": (torch, "softmax"),
    "torch.nn.functional.softmax": (F, "softmax"),
    "torch.special.softmax": (torch.special, "softmax"),
    "torch.log_softmax": (torch, "log_softmax"),
    "torch.nn.functional.log_softmax": (F, "log_softmax"),
    "torch.special.log_softmax": (torch.special, "log_softmax"),
    "Tensor.softmax": (torch.Tensor, "softmax"),
    "Tensor.log_softmax": (torch.Tensor, "log_softmax"),
    "torch.nn.Softmax": (torch.nn.Softmax, "forward"),
    "torch.nn.LogSoftmax": (torch.nn.LogSoftmax, "forward"),
    "torch.nn.functional.scaled_dot_product_attention": (F, "scaled_dot_product_attention"),
    "torch.nn.MultiheadAttention": (torch.nn.MultiheadAttention, "forward"),
}

# fragments of aten op names that reveal a banned API underneath
_ATEN = {
    "softmax": ("softmax",),
    "scaled_dot_product_attention": ("scaled_dot_product", "_native_multi_head_attention"),
    "MultiheadAttention": ("_native_multi_head_attention",),
}

# packages student code must not import inside the worker (answers live there)
BLOCKED_PACKAGES = ("solutions", "autograder", "course", "tests")

_active = set()
_seen = []


def banned_aten_ops(apis):
    parts = []
    for api in apis:
        for key, fragments in _ATEN.items():
            if key in api:
                parts.extend(f for f in fragments if f not in parts)
    return tuple(parts)


def _wrap(api, original):
    def watched(*args, **kwargs):
        if api in _active and api not in _seen:
            _seen.append(api)
        return original(*args, **kwargs)

    watched.__name__ = getattr(original, "__name__", "watched")
    watched.__doc__ = getattr(original, "__doc__", None)
    return watched


class BlockAnswers(importlib.abc.MetaPathFinder):
    """Refuses the course's own packages (the grader, the reference) to graded code, naming the package as data."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in BLOCKED_PACKAGES:
            error = ImportError(f"{fullname} cannot be imported while grading", name=fullname)
            error.blocked_while_grading = True  # the trusted side words it (core/failures.py), from the name
            raise error
        return None


_installed = False


def install():
    """Wrap the banned APIs and block the answers' packages, once per process: the zygote does it
    before it forks, and each child's own call then does nothing. (Done in every child, it cost
    some 1,200 copy-on-write page faults, 4-5 ms of CPU: reading every name in sys.modules
    touches pages the zygote shares with it.)"""
    global _installed
    if _installed:
        return
    _installed = True
    for api, (owner, attr) in _TARGETS.items():
        original = getattr(owner, attr, None)
        if original is not None:
            setattr(owner, attr, _wrap(api, original))
    for name in list(sys.modules):
        if name.split(".")[0] in BLOCKED_PACKAGES:
            del sys.modules[name]
    sys.meta_path.insert(0, BlockAnswers())


def watching(apis):
    _active.clear()
    _active.update(apis)
    _seen.clear()


def stop_watching():
    seen = list(_seen)
    _active.clear()
    _seen.clear()
    return seen
