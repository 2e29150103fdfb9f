"""The check helpers of every notebook: the build copies what follows the marker below into each
notebook's setup cell, where the section's own `# <notebook checks>` line stands.

The section's setup cell defines the data they read: HINTS (the grader's hints for errors the
student's code may raise) and BANNED (the built-ins the section forbids). Nothing here may import
the grader: the notebooks run on students' machines with only torch.
"""
# --- the notebooks' copy starts here ---
import ast
import traceback

import torch


def check_close(actual, expected, what, atol=1e-4):
    """Raise AssertionError with a one-line message unless actual matches expected; print the error if it does."""
    expected = torch.as_tensor(expected).detach().float().cpu()
    if not isinstance(actual, torch.Tensor):
        raise AssertionError(f"{what}: expected a torch.Tensor, got {type(actual).__name__}")
    if tuple(actual.shape) != tuple(expected.shape):
        raise AssertionError(f"{what}: expected shape {tuple(expected.shape)}, got {tuple(actual.shape)}")
    actual = actual.detach().float().cpu()
    diff = torch.where(actual == expected, 0.0, (actual - expected).abs().nan_to_num(nan=float("inf")))
    if diff.numel() and diff.max() > atol:
        idx = tuple(int(i) for i in torch.unravel_index(diff.argmax(), diff.shape))
        raise AssertionError(f"{what}: largest difference {diff.max():.2e} at index {idx}: "
                             f"expected {expected[idx]:.4f}, got {actual[idx]:.4f}")
    relative = diff / (actual.abs() + expected.abs()).clamp(min=1e-8)
    largest = float(relative.nan_to_num(0.0).max()) if relative.numel() else 0.0
    print(f"ok  {what.split(' — ')[0]}  (max relative error: {largest:.1e})")


def hint_for(error, tb):
    """The grader's one-line hint for an error raised by your code, or None."""
    functions = {frame.name for frame in traceback.extract_tb(tb)}
    for kind, text, where, hint in HINTS:
        if type(error).__name__ == kind and text in str(error) and (where is None or where in functions):
            return hint
    return None


def show_error(shell, kind, error, tb, tb_offset=None):
    """How Jupyter shows a RuntimeError of your code: one line and the grader's hint, where it has one."""
    hint = hint_for(error, tb)
    shell.showtraceback((kind, error, tb), tb_offset=tb_offset, exception_only=hint is not None)
    if hint:
        print("Hint:", hint)


try:
    get_ipython().set_custom_exc((RuntimeError,), show_error)
except NameError:  # not in Jupyter: errors show as usual
    pass


def check_no_builtin(name):
    """Grading reads your code and takes points if `name` uses a built-in of BANNED: say so here already."""
    cells = [cell for cell in globals().get("In", []) if f"def {name}(" in cell or f"class {name}(" in cell]
    if not cells:  # not in Jupyter, or not defined yet
        return
    try:
        tree = ast.parse(cells[-1])  # the last run of the cell defining `name`
    except SyntaxError:
        return
    for definition in tree.body:
        if getattr(definition, "name", None) == name:
            used = sorted({node.attr for node in ast.walk(definition)
                           if isinstance(node, ast.Attribute) and node.attr in BANNED})
            assert not used, (f"{name} uses the built-in .{used[0]}, which this notebook forbids: grading "
                              "takes points for it, so compute it yourself with tensor operations")
