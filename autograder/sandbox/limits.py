"""What every worker process shares, whichever path starts it: its limits and its environment.

Both launch paths (zygote.py on Linux, portable.py elsewhere) build on this
module and nothing else of the trusted side, so neither imports the other.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from autograder.worker.lazy_torch import SWITCH as TORCH_SHORTCUTS

# what a worker process runs: it loads the worker's folder alone, as a package, and starts its main
WORKER_BOOT = Path(__file__).resolve().parents[1] / "worker" / "boot.py"
MAX_REPLY_BYTES = 96 * 1024 * 1024
OUTPUT_CAP = 16 * 1024

@dataclass
class Limits:
    """Per-section limits. Every one has a command-line override."""

    call_seconds: float = 10.0  # one call of a student function
    cell_seconds: float = 30.0  # one notebook cell: interrupted past it, the rest still runs (nbgrader's way)
    load_seconds: float = 60.0  # running all of the notebook's cells
    memory_bytes: int = 4 * 1024**3
    # on a GPU: what torch's allocator may take there per worker (0: no cap), so that the workers of
    # several batch jobs share one GPU (the address-space limit above cannot apply there: see zygote.py)
    gpu_memory_bytes: int = 4 * 1024**3
    cpu_seconds: int = 120
    file_bytes: int = 64 * 1024**2
    processes: int = 256
    # time budgets: what a section's loading and calls may take together, and all sections of a
    # submission together, however the time is spread over calls (each under call_seconds)
    section_seconds: float = 60.0
    submission_seconds: float = 300.0
    sandbox: str = "on"  # "on": hidden grading needs a tier that holds; "weak": grade at any tier
    # (marked); "off": no confinement at all, for debugging only

    def __post_init__(self):
        if isinstance(self.sandbox, bool):  # the older spelling: True / False
            self.sandbox = "on" if self.sandbox else "off"


def minimal_env() -> dict:
    """The worker's whole environment: nothing of the grader's (no tokens, no CI secrets)."""
    env = {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    # LD_LIBRARY_PATH: where a GPU machine's image may keep the driver's library (libcuda), which the
    # worker must load to use the GPU; the sandbox lets it read those folders (allowed.library_folders)
    # TORCH_SHORTCUTS: off has the worker take torch's plain paths (worker/lazy_torch), as the grader does
    for key in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "LD_LIBRARY_PATH", "OPENBLAS_CORETYPE",
                "OPENBLAS_L2_SIZE", "TMPDIR", TORCH_SHORTCUTS):
        if key in os.environ:
            env[key] = os.environ[key]
    return env
