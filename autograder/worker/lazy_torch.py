"""Keep torch from importing what a call does not use: its compiler, and sympy for a shape check.

Many of torch's Python kernels (the reference ops behind the meta device, the
decompositions) are wrapped by `torch._compile._disable_dynamo`: on their first
call the wrapper imports `torch._dynamo` (with sympy and torch.distributed,
about half a second of CPU) only to wrap the function so that a compiler that
is tracing skips it. Where `torch._dynamo` was never imported, nothing can be
tracing, and that wrapper would change nothing. `defer_dynamo()` gives each
such function, once, a stand-in for that wrapper: it calls the function
directly while `torch._dynamo` is not loaded, and builds torch's own wrapper
(and keeps it) the first time it is, so code that compiles still gets exactly
what torch does.

Likewise `torch._check_with` (behind torch._check, e.g. nn.MultiheadAttention's
check of a padding mask's shape) imports torch's symbolic shapes (sympy, half a
second) on its first call, only to find that a plain True holds.
`quick_shape_checks()` answers a plain True at once and hands everything else
to torch's own function.
"""
import gc
import sys
import types

import torch

ATTRIBUTE = "__dynamo_disable"  # where torch's wrapper caches what it built


def _stand_in(fn, recursive):
    def call(*args, **kwargs):
        dynamo = sys.modules.get("torch._dynamo")
        if dynamo is None:
            return fn(*args, **kwargs)
        built = dynamo.disable(fn, recursive, wrapping=False)  # what torch's wrapper would have built
        setattr(fn, ATTRIBUTE, built)
        return built(*args, **kwargs)

    return call


def defer_dynamo() -> int:
    """Install the stand-in in every function torch wrapped so; returns how many. Does nothing on a
    torch whose wrapper is shaped otherwise (it then imports the compiler on first use, as before)."""
    try:
        code = torch._compile._disable_dynamo(lambda: None).__code__
        fn_cell, recursive_cell = code.co_freevars.index("fn"), code.co_freevars.index("recursive")
    except (AttributeError, ValueError, TypeError):
        return 0
    if ATTRIBUTE not in code.co_consts + code.co_names:
        return 0
    count = 0
    # the wrappers are the functions that refer to that code: the collector finds them in C, three
    # times faster than a Python loop over gc.get_objects() (a quarter of a million objects)
    for wrapper in gc.get_referrers(code):
        if type(wrapper) is types.FunctionType and wrapper.__code__ is code:
            fn = wrapper.__closure__[fn_cell].cell_contents
            if getattr(fn, ATTRIBUTE, None) is None:
                setattr(fn, ATTRIBUTE, _stand_in(fn, wrapper.__closure__[recursive_cell].cell_contents))
                count += 1
    return count


def quick_shape_checks() -> bool:
    """Install the fast path of torch._check_with for a plain True; False where torch has none to wrap."""
    original = getattr(torch, "_check_with", None)
    if original is None or getattr(original, "quick", False):
        return original is not None

    def _check_with(error_type, cond, message=None):
        if cond is True:  # what torch's own check concludes, without importing sympy to do so
            return None
        return original(error_type, cond, message)

    _check_with.quick = True
    _check_with.__doc__ = original.__doc__
    torch._check_with = _check_with
    return True
