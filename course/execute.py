"""Run a notebook top to bottom in a fresh kernel of *this* interpreter.

    python -m course.execute NOTEBOOK_OR_DIR... [--expect-error] [--timeout SECONDS]

The kernel is always `sys.executable -m ipykernel_launcher` (the venv that runs
this module), whatever kernelspecs are installed for the user or system, so the
notebooks see the same torch as the tests.
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from traitlets import default


class ThisPythonKernelManager(AsyncKernelManager):
    """Knows only ipykernel's built-in `python3` spec, which launches sys.executable."""

    @default("kernel_spec_manager")
    def _only_the_native_kernel(self) -> KernelSpecManager:
        return KernelSpecManager(kernel_dirs=[], ensure_native_kernel=True)


@dataclass
class Run:
    notebook: nbformat.NotebookNode  # with outputs
    seconds: float
    cpu_seconds: float | None = None  # the kernel's CPU time (user + system), when measured
    kernel_executable: str | None = None  # the kernel's sys.executable, when measured
    error_cell: int | None = None  # index of the first cell that raised
    ename: str | None = None  # exception class name, e.g. "NotImplementedError"
    evalue: str | None = None

    @property
    def ok(self) -> bool:
        return self.error_cell is None


# The kernel's CPU time (user + system, all threads) and interpreter. time.process_time
# rather than resource.getrusage: Windows has no `resource` module.
PROBE = (
    "import sys as _course_sys, time as _course_time\n"
    "print('kernel-probe', _course_time.process_time(), _course_sys.executable)"
)


def run_notebook(
    source: Path | nbformat.NotebookNode, timeout: float = 120, cwd: Path | None = None, measure_cpu: bool = False
) -> Run:
    """Execute every cell in order, stopping at the first error (which is recorded, not raised).

    With `measure_cpu`, a last cell (removed again afterwards) reads the kernel's CPU
    time, which unlike the wall time hardly depends on what else the machine is doing,
    and the kernel's interpreter.
    """
    nb = nbformat.read(source, as_version=4) if isinstance(source, (str, Path)) else source
    probe = None
    if measure_cpu:
        probe = nbformat.v4.new_code_cell(PROBE)
        nb.cells.append(probe)
    if cwd is None:
        cwd = Path(source).parent if isinstance(source, (str, Path)) else Path.cwd()
    client = NotebookClient(
        nb,
        kernel_name="python3",
        kernel_manager_class=ThisPythonKernelManager,
        extra_arguments=["--IPKernelApp.log_level=ERROR"],  # no start-up chatter on stderr
        timeout=timeout,
        allow_errors=False,
        resources={"metadata": {"path": str(cwd)}},
    )
    start = time.perf_counter()
    run = Run(nb, 0.0)
    try:
        client.execute()
    except CellExecutionError as error:
        run.ename, run.evalue = error.ename, error.evalue
        for index, cell in enumerate(nb.cells):
            if cell.cell_type == "code" and any(out.get("output_type") == "error" for out in cell.get("outputs", [])):
                run.error_cell = index
                break
        else:
            run.error_cell = -1
    run.seconds = time.perf_counter() - start
    if probe is not None:
        nb.cells.remove(probe)
        # the kernel may deliver one print in several stream messages: read them as one text
        text = "".join(output.get("text", "") for output in probe.get("outputs", []))
        for line in text.splitlines():
            words = line.split(maxsplit=2)
            if words[:1] == ["kernel-probe"] and len(words) == 3:
                run.cpu_seconds, run.kernel_executable = float(words[1]), words[2].strip()
    return run


def _notebooks(paths: list[str]) -> list[Path]:
    found = []
    for name in paths:
        path = Path(name)
        found.extend(sorted(path.glob("*.ipynb")) if path.is_dir() else [path])
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.execute", description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", help="notebooks, or folders of notebooks")
    parser.add_argument("--expect-error", action="store_true",
                        help="report errors without failing (for unfinished submissions)")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per cell")
    args = parser.parse_args(argv)
    failed = 0
    for path in _notebooks(args.paths):
        run = run_notebook(path, timeout=args.timeout)
        if run.ok:
            print(f"ok     {path} ({run.seconds:.1f} s)")
        else:
            failed += 1
            print(f"error  {path} ({run.seconds:.1f} s): cell {run.error_cell}: {run.ename}: {run.evalue}")
    if failed and not args.expect_error:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
