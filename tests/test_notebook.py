"""autograder/notebook.py: what a check cell prints, how errors show in Jupyter, and the setup cell
without the self-check installed."""
from __future__ import annotations

import builtins
import linecache
import subprocess
import sys

import nbformat
import pytest
import torch
from support import ROOT, linked_venv

from autograder import notebook
from autograder.core.hints import BARE_VIEW_HINT, BATCHED_T
from autograder.core.sections import check_module
from course.builder import layout


def test_a_passing_comparison_says_what_was_checked_and_nothing_else(capsys):
    notebook.check_close(torch.tensor([1.0, 2.0]), [1.0, 2.0 + 2e-5], "two numbers — a hint only a failure needs")
    assert capsys.readouterr().out == "ok  two numbers\n"


def test_a_failing_comparison_is_one_line_with_the_place_the_values_and_the_hint():
    with pytest.raises(notebook.NotebookCheckFailed) as failure:
        notebook.check_close(torch.tensor([1.0, 2.0]), [1.0, 3.0], "two numbers — did you add one?")
    assert str(failure.value) == "two numbers: at index (1,) expected 3.0000, got 2.0000 — did you add one?"


@pytest.mark.parametrize("value, says", [(float("nan"), "a row whose keys are all hidden"),
                                         (float("inf"), "exp overflows")])
def test_nan_and_inf_are_explained(value, says):
    with pytest.raises(notebook.NotebookCheckFailed, match=says):
        notebook.check_close(torch.tensor([0.5, value]), [0.5, 0.5], "weights")


def test_a_check_leaves_the_notebook_s_random_state_and_defaults_as_they_were():
    namespace: dict = {}
    exec("import torch\ndef causal_mask(num_tokens, device=None):\n"
         "    return torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool, device=device), 1)\n", namespace)
    torch.manual_seed(7)
    expected = torch.rand(3)
    torch.manual_seed(7)
    torch.set_default_dtype(torch.float64)
    try:
        notebook.check("causal_mask", namespace)
        assert torch.get_default_dtype() == torch.float64
    finally:
        torch.set_default_dtype(torch.float32)
    assert torch.equal(torch.rand(3, dtype=torch.float32), expected)


def test_an_unknown_name_is_one_line_naming_the_graded_ones():
    with pytest.raises(notebook.NotebookCheckFailed, match="no section grades 'combine_head'.*combine_heads"):
        notebook.check("combine_head", {})


class Shell:
    """IPython's showtraceback, recorded."""

    def __init__(self):
        self.shown = []

    def showtraceback(self, exc_tuple, tb_offset=None, exception_only=False):
        self.shown.append((exc_tuple[0].__name__, exception_only))


def raised_by(line: str, error: Exception, **names):
    """An error raised from a notebook cell whose only line is `line`, with `names` (tensors) defined in the cell."""
    filename = "<notebook cell 7>"
    source = f"def forward(x):\n    raise error; {line}\n"  # the error comes from the line that holds `line`
    import linecache
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"error": error, **names}
    exec(compile(source, filename, "exec"), namespace)
    try:
        namespace["forward"](None)
    except Exception as raised:
        return raised


@pytest.mark.parametrize("line, message, hint", [
    ("return queries @ keys.T", "The size of tensor a (2) must match the size of tensor b (3) at non-singleton "
                                "dimension 0", BATCHED_T),
    ("return x.transpose(1, 2).view(b, t, d)", "view size is not compatible with input tensor's size and stride",
     BARE_VIEW_HINT),
    # nn.Linear(d_out, d_in) built the wrong way round: the same kind of error, but no `.T` in sight
    ("return self.W_query(x)", "mat1 and mat2 shapes cannot be multiplied (12x3 and 2x3)", None),
    ("return x.reshape(b, t, d)", "shape '[2, 6, 4]' is invalid for input of size 36", None),
    # the `.T` of a matrix is the transpose meant (nn.Linear's habit on a (d_in, d_out) Parameter): no hint
    ("return x @ weight.T", "mat1 and mat2 shapes cannot be multiplied (6x3 and 2x3)", None),
])
def test_an_error_in_the_student_s_code_gets_a_hint_only_when_its_line_fits(line, message, hint, capsys):
    # the cell's tensors, which the kernel measures for the `.T` hint: keys a batch, weight a matrix
    error = raised_by(line, RuntimeError(message), keys=torch.ones(2, 3, 4), weight=torch.ones(3, 2))
    shell = Shell()
    notebook.show_error(shell, RuntimeError, error, error.__traceback__)
    assert shell.shown == [("RuntimeError", False)], "the student's own traceback is shown in full"
    printed = capsys.readouterr().err
    if hint is None:
        assert "Hint" not in printed
    else:
        assert printed.startswith("Hint:") and hint in printed


def test_a_check_s_verdict_shows_as_its_message_alone(capsys):
    """In IPython, a failing check cell shows the course's lines and nothing of the interpreter's (no
    "An exception has occurred, use %tb ...", no traceback, no exception's name)."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        shell.set_custom_exc((notebook.NotebookCheckFailed, RuntimeError), notebook.show_error)
        capsys.readouterr()
        shell.run_cell("from autograder.notebook import NotebookCheckFailed\n"
                       "raise NotebookCheckFailed('combine_heads is not implemented yet\\nsplit_heads: wrong values')")
        shown = capsys.readouterr()
    finally:
        InteractiveShell.clear_instance()
    assert shown.out + shown.err == "combine_heads is not implemented yet\nsplit_heads: wrong values\n"


def test_the_raising_line_skips_torch_s_and_the_grader_s_frames():
    error = raised_by("return x.softmax(dim=5)", RuntimeError("x"))
    assert notebook.raising_line(error.__traceback__) == "raise error; return x.softmax(dim=5)"
    assert notebook.student_label(torch.__file__) is None
    assert notebook.student_label(notebook.__file__) is None


def test_torch_reached_through_a_linked_venv_is_not_taken_for_a_notebook_cell(tmp_path):
    """A .venv linked from elsewhere: torch's frames name its files through the link."""
    probe = "import torch; from autograder import notebook; print(notebook.student_label(torch.__file__))"
    run = subprocess.run([str(linked_venv(tmp_path) / "bin" / "python"), "-c", probe], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert (run.returncode, run.stdout.strip()) == (0, "None"), run.stderr[-1000:]


def test_without_the_self_check_the_setup_cell_runs_and_the_check_cells_say_they_skipped(monkeypatch, capsys):
    """A notebook opened where the self-check is not installed still runs top to bottom."""
    real_import = builtins.__import__

    def no_grader(name, *args, **kwargs):
        if name.split(".")[0] == "autograder":
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_grader)
    nb = nbformat.read(ROOT / layout.RELEASED_NB.format(id="03_trainable_qkv"), as_version=4)
    setup = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "setup")
    namespace: dict = {}
    exec(setup.source, namespace)
    namespace["check"]("project_qkv")
    namespace["check_close"](torch.ones(1), [2.0], "a value — never shown")
    out = capsys.readouterr().out
    assert "skipped: the checks of project_qkv" in out and "skipped: a value\n" in out


def test_the_setup_cell_is_short_and_leaves_warnings_on():
    nb = nbformat.read(ROOT / layout.RELEASED_NB.format(id="06_multihead"), as_version=4)
    setup = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "setup")
    assert "filterwarnings" not in setup.source
    assert len(setup.source.splitlines()) <= 40, "the setup cell holds no grader plumbing"
    assert "from autograder.notebook import check, check_close" in setup.source


STUDENT_MODULES_FIRST = """
import sys, types
mine = {name: types.ModuleType(name) for name in ("wire", "guards", "serve", "gpu", "watching", "student_code")}
sys.modules.update(mine)  # the student's own modules, imported before the setup cell
from autograder import notebook
namespace = {}
exec("import torch\\ndef causal_mask(num_tokens, device=None):\\n"
     "    return torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool, device=device), 1)\\n", namespace)
notebook.check("causal_mask", namespace)
print("kept", all(sys.modules[name] is module for name, module in mine.items()))
"""


def test_a_student_module_named_as_a_worker_module_neither_blocks_nor_replaces_it():
    """The worker is a package the notebook imports by its dotted names (autograder.worker.serve, ...):
    a kernel's own modules called `wire`, `guards` or `serve`, imported before the setup cell, stay the
    student's, and the checks run."""
    done = subprocess.run([sys.executable, "-c", STUDENT_MODULES_FIRST], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "ok  " in done.stdout and "kept True" in done.stdout, done.stdout


def test_the_notebook_runs_the_visible_checks_module_itself():
    """A check cell runs the functions of the section's visible module as imported (what the wheel ships),
    and none of its hidden module's."""
    section, checks = notebook.checks_of("causal_mask")
    assert checks and {f.__module__ for f in checks} == {check_module(section.id)}
    assert all(f is getattr(sys.modules[check_module(section.id)], f.__name__) for f in checks)


@pytest.fixture
def torch_warns_always():
    """Torch raises its `.T` deprecation warning once per process: an earlier test in this process that took a
    batch's `.T` would leave none for this one, so torch is asked to raise it every time, as in a new kernel."""
    import torch

    before = torch.is_warn_always_enabled()
    torch.set_warn_always(True)
    yield
    torch.set_warn_always(before)


def test_the_warnings_the_student_s_code_raises_show_in_the_check_cell_once_each(capsys, torch_warns_always):
    """Torch's own warning about the student's `.T` and the student's own warning, each once (the
    checks call the code many times), on stdout with the cell and line; nothing on stderr."""
    filename = "<notebook cell 12>"
    source = ("import torch, warnings\n"
              "def causal_mask(num_tokens, device=None):\n"
              "    torch.ones(2, 3, 4).T\n"
              "    warnings.warn('my mask is made on every call')\n"
              "    return torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool, device=device), 1)\n")
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace: dict = {}
    exec(compile(source, filename, "exec"), namespace)
    notebook.check("causal_mask", namespace)
    shown = capsys.readouterr()
    said = [line for line in shown.out.splitlines() if line.startswith("warning from your code")]
    assert len(said) == 2, shown.out
    assert '"import torch, warnings", line 3): UserWarning: The use of `x.T`' in said[0], said
    assert said[0].endswith("the dimensions of a tensor."), said  # not where in torch's C++ it was raised
    assert said[1].endswith("line 4): UserWarning: my mask is made on every call")
    assert shown.err == ""


def test_a_failing_check_cell_draws_its_picture_before_it_stops_run_all(monkeypatch):
    """"Run All" stops at a failing check cell: the heatmap that explains the failure (expected, yours, their
    difference) is drawn in that cell, before it stops, where a comparison on public inputs failed."""
    import IPython.display
    from IPython.core.interactiveshell import InteractiveShell

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda *objects, **_: shown.extend(objects))
    namespace: dict = {}
    exec("import torch\ndef causal_mask(num_tokens, device=None):\n"  # the diagonal hidden too
         "    return torch.triu(torch.ones(num_tokens, num_tokens, dtype=torch.bool, device=device))\n", namespace)
    with pytest.raises(notebook.NotebookCheckFailed):
        notebook.check("causal_mask", namespace)
    assert not shown, "outside a Jupyter kernel the report draws the pictures, not the cell"
    InteractiveShell.instance()
    try:
        with pytest.raises(notebook.NotebookCheckFailed) as failed:
            notebook.check("causal_mask", namespace)
    finally:
        InteractiveShell.clear_instance()
    assert [type(picture).__name__ for picture in shown] == ["SVG"], shown
    assert "causal_mask(7)" in shown[0].data and "causal_mask(7)" in str(failed.value)


def test_a_check_that_passed_on_a_right_stand_in_says_so_where_the_student_s_own_fails(capsys):
    """A MultiHeadAttention that calls the student's split_heads meets a right one in its checks, so that a broken
    split_heads costs its own checks only: where that split_heads' cell fails, MultiHeadAttention's lines say that
    they passed with a right split_heads in its place (the worker reports the stand-ins a call met); where it
    passes, nothing is said."""
    from catalogues import mistakes_06_multihead as catalogue
    from support import correct_source, replace_def

    mistake = next(m for m in catalogue.MISTAKES if m.id == "split_heads with a bare view, MultiHeadAttention right on top")
    said = "with a correct split_heads in place of yours, which fails its own checks"
    right_split = replace_def(correct_source("06_multihead"), "MultiHeadAttention",
                              mistake.replacements["MultiHeadAttention"])  # the same module, its split_heads right
    for source, split_fails in ((mistake.source("06_multihead"), True), (right_split, False)):
        namespace: dict = {}
        exec(source, namespace)
        if split_fails:
            with pytest.raises(notebook.NotebookCheckFailed):
                notebook.check("split_heads", namespace)
        else:
            notebook.check("split_heads", namespace)
        capsys.readouterr()
        notebook.check("MultiHeadAttention", namespace)
        lines = capsys.readouterr().out.splitlines()
        assert lines and all(line.startswith("ok  ") for line in lines), lines
        assert any(said in line for line in lines) == split_fails, lines
        if split_fails:  # said of the checks that met it only: the parameter checks call no split_heads
            assert not all(said in line for line in lines), lines

