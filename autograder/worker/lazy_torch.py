"""Keep torch from importing what a call does not use: its compiler, and sympy for a shape check.

Three shortcuts, each through one private part of torch and each in one place here:

- `defer_dynamo()`: many of torch's Python kernels (the reference ops behind the
  meta device, the decompositions) are wrapped by `torch._compile._disable_dynamo`:
  on their first call the wrapper imports `torch._dynamo` (with sympy and
  torch.distributed, about half a second of CPU) only to wrap the function so that
  a compiler that is tracing skips it. Where `torch._dynamo` was never imported,
  nothing can be tracing, and that wrapper would change nothing. `defer_dynamo()`
  gives each such function, once, a stand-in for that wrapper: it calls the
  function directly while `torch._dynamo` is not loaded, and builds torch's own
  wrapper (and keeps it) the first time it is, so code that compiles still gets
  exactly what torch does.
- `quick_shape_checks()`: `torch._check_with` (behind torch._check, e.g.
  nn.MultiheadAttention's check of a padding mask's shape) imports torch's symbolic
  shapes (sympy, half a second) on its first call, only to find that a plain True
  holds. The shortcut answers a plain True at once and hands everything else to
  torch's own function.
- `DispatchAsWritten`: torch wraps a dispatch mode's handler in that same
  `_disable_dynamo` when the class is made, so the first op a mode sees would
  import the compiler; a mode that mixes this class in keeps its handler as written.

torch offers no public way to do any of this. Each shortcut first checks that the
private part has the shape it relies on; where it does not (a newer torch), it
leaves torch as it is: the plain path, which grades alike and pays the imports
once. AUTOGRADER_TORCH_SHORTCUTS=off takes the plain path everywhere (the tests
that compare both paths, and measuring what the shortcuts save); the sandbox
passes that variable on to the workers.
"""
import gc
import inspect
import os
import sys
import types

SWITCH = "AUTOGRADER_TORCH_SHORTCUTS"  # off: torch's plain paths (read in every process, the workers' too)
ATTRIBUTE = "__dynamo_disable"  # where torch's wrapper caches what it built
CHECK_WITH_PARAMETERS = ["error_type", "cond", "message"]  # torch._check_with's, as the shortcut calls it


def shortcuts_wanted() -> bool:
    return os.environ.get(SWITCH, "on").lower() not in ("off", "0", "no", "false")


def _stand_in(fn, recursive):
    def call(*args, **kwargs):
        dynamo = sys.modules.get("torch._dynamo")
        if dynamo is None:
            return fn(*args, **kwargs)
        built = dynamo.disable(fn, recursive, wrapping=False)  # what torch's wrapper would have built
        setattr(fn, ATTRIBUTE, built)
        return built(*args, **kwargs)

    return call


def _wrapper_code():
    """The code of torch's `_disable_dynamo` wrapper and where its closure keeps (fn, recursive); None
    where the wrapper is shaped otherwise than this module relies on."""
    import torch

    try:
        code = torch._compile._disable_dynamo(lambda: None).__code__
        cells = code.co_freevars.index("fn"), code.co_freevars.index("recursive")
    except (AttributeError, ValueError, TypeError):
        return None
    return (code, cells) if ATTRIBUTE in code.co_consts + code.co_names else None


def defer_dynamo() -> int:
    """Install the stand-in in every function torch wrapped so; returns how many. Does nothing where the
    shortcuts are off or torch's wrapper is shaped otherwise (it then imports the compiler on first use)."""
    found = _wrapper_code() if shortcuts_wanted() else None
    if found is None:
        return 0
    code, (fn_cell, recursive_cell) = found
    count = 0
    # the wrappers are the functions that refer to that code: the collector finds them in C, three
    # times faster than a Python loop over gc.get_objects() (a quarter of a million objects)
    for wrapper in gc.get_referrers(code):
        if type(wrapper) is types.FunctionType and wrapper.__code__ is code:
            try:
                fn = wrapper.__closure__[fn_cell].cell_contents
                recursive = wrapper.__closure__[recursive_cell].cell_contents
                if callable(fn) and getattr(fn, ATTRIBUTE, None) is None:
                    setattr(fn, ATTRIBUTE, _stand_in(fn, recursive))
                    count += 1
            except (TypeError, IndexError, ValueError, AttributeError):  # a cell not filled as expected, or a
                continue  # function that keeps no attributes: this one stays as torch wrapped it
    return count


def _check_with_as_expected(original) -> bool:
    try:
        return list(inspect.signature(original).parameters) == CHECK_WITH_PARAMETERS
    except (TypeError, ValueError):
        return False


def quick_shape_checks() -> bool:
    """Install the fast path of torch._check_with for a plain True; False where the shortcuts are off or
    torch has no such function (or one that takes other arguments) to wrap: torch's own then runs."""
    import torch

    original = getattr(torch, "_check_with", None)
    if getattr(original, "quick", False):
        return True
    if original is None or not shortcuts_wanted() or not _check_with_as_expected(original):
        return False

    def _check_with(error_type, cond, message=None):
        if cond is True:  # what torch's own check concludes, without importing sympy to do so
            return None
        return original(error_type, cond, message)

    _check_with.quick = True
    _check_with.plain = original  # torch's own, for whoever must restore it
    _check_with.__doc__ = original.__doc__
    torch._check_with = _check_with
    return True


class DispatchAsWritten:
    """Mixed into a TorchDispatchMode, before it: torch leaves the mode's __torch_dispatch__ as written.

    When a mode's class is made, torch asks its private `_should_skip_dynamo()` (True unless a
    mode says otherwise) and, where True, wraps the handler in `_disable_dynamo`, whose first call
    imports the compiler (seconds) only to keep a compiler out of it; the grader never compiles.
    Where the shortcuts are off, or torch asks with arguments this does not know, it answers as
    torch's own would (the plain path: the handler wrapped). A torch without that method never
    asks: its plain path is all there is.
    """

    @classmethod
    def _should_skip_dynamo(cls, *args, **kwargs):
        if args or kwargs or not shortcuts_wanted():
            return super()._should_skip_dynamo(*args, **kwargs)
        return False


def dispatch_as_written(mode_class) -> bool:
    """Whether `mode_class`'s handler is the one its class body wrote (the shortcut took), not a
    wrapper torch put around it."""
    handler = mode_class.__dict__.get("__torch_dispatch__")
    return handler is not None and getattr(handler, "__wrapped__", None) is None
