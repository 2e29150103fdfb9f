"""The command-line options every grading verb shares (grade, check, batch): limits, device, language.

Each verb's own module adds these to its parser and reads them back here, so
that a flag is declared, validated and turned into `Limits` in one place.
"""
from __future__ import annotations

import os

from autograder.core.submission import UsageError
from autograder.i18n import ENVIRONMENT, LANGUAGES, _, _f
from autograder.sandbox.limits import Limits

GPU_DRIVER_FILES = ("/dev/nvidiactl", "/proc/driver/nvidia/version", "/dev/kfd", "/dev/dxg")


def add_limit_flags(parser) -> None:
    """The limit flags, with the defaults of `Limits`."""
    parser.add_argument("--call-timeout", type=float, default=Limits.call_seconds,
                        help=_("seconds one call of student code may take (default %(default)s)"))
    parser.add_argument("--cell-timeout", type=float, default=Limits.cell_seconds,
                        help=_("seconds one notebook cell may run; a cell past it is interrupted and the rest "
                             "of the notebook still runs, as nbgrader does (default %(default)s)"))
    parser.add_argument("--load-timeout", type=float, default=Limits.load_seconds,
                        help=_("seconds all of a notebook's cells may take to run (default %(default)s)"))
    parser.add_argument("--memory-limit", type=float, default=Limits.memory_bytes / 1024**3,
                        help=_("GiB of address space for student code (default %(default)s)"))
    parser.add_argument("--gpu-memory-limit", type=float, default=Limits.gpu_memory_bytes / 1024**3,
                        help=_("GiB of GPU memory one worker may take with --device cuda; 0: no cap "
                             "(default %(default)s)"))
    parser.add_argument("--cpu-limit", type=float, default=Limits.cpu_seconds,
                        help=_("CPU seconds per section's worker (default %(default)s)"))
    parser.add_argument("--file-limit", type=float, default=Limits.file_bytes / 1024**2,
                        help=_("MiB: largest file student code may write (default %(default)s)"))
    parser.add_argument("--process-limit", type=int, default=Limits.processes,
                        help=_("processes student code may run (default %(default)s)"))
    parser.add_argument("--section-budget", type=float, default=Limits.section_seconds,
                        help=_("seconds all of one section's loading and calls may take together "
                             "(default %(default)s)"))
    parser.add_argument("--submission-budget", type=float, default=Limits.submission_seconds,
                        help=_("seconds all sections of a submission may take together (default %(default)s)"))
    parser.add_argument("--sandbox", default="on", choices=("on", "weak", "off"),
                        help=_("'on': hidden grading refuses to run where no sandbox tier holds; 'weak': "
                             "grade anyway, every output marked; 'off': no confinement, for debugging only"))


def add_language_flag(parser) -> None:
    """--lang: the language of what the grader says (default: $ATTENTION_COURSE_LANG, then the
    notebook's metadata.course.language, then English; autograder/i18n.resolve)."""
    parser.add_argument("--lang", choices=tuple(LANGUAGES), default=None,
                        help=_f("language of the grader's messages (default: ${environment}, then the notebook's "
                                "metadata.course.language, then en)", environment=ENVIRONMENT))


def add_device_flag(parser) -> None:
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))


def limits_from(args) -> Limits:
    """The Limits the limit flags ask for; UsageError for a bad value."""
    for name, value in (("--call-timeout", args.call_timeout), ("--cell-timeout", args.cell_timeout),
                        ("--load-timeout", args.load_timeout),
                        ("--memory-limit", args.memory_limit), ("--cpu-limit", args.cpu_limit),
                        ("--file-limit", args.file_limit), ("--process-limit", args.process_limit),
                        ("--section-budget", args.section_budget),
                        ("--submission-budget", args.submission_budget)):
        if not value > 0:
            raise UsageError(_f("{flag} must be a positive number, got {value:g}", flag=name, value=value))
    if not args.gpu_memory_limit >= 0:
        raise UsageError(_f("--gpu-memory-limit must be 0 (no cap) or a positive number, got {value:g}",
                            value=args.gpu_memory_limit))
    return Limits(call_seconds=args.call_timeout, cell_seconds=args.cell_timeout, load_seconds=args.load_timeout,
                  memory_bytes=int(args.memory_limit * 1024**3),
                  gpu_memory_bytes=int(args.gpu_memory_limit * 1024**3),
                  cpu_seconds=max(1, round(args.cpu_limit)), file_bytes=int(args.file_limit * 1024**2),
                  processes=args.process_limit, section_seconds=args.section_budget,
                  submission_seconds=args.submission_budget, sandbox=args.sandbox)


def resolve_device(choice: str) -> str:
    """"cpu" or "cuda" for --device; UsageError for cuda where there is none."""
    if choice == "cpu":
        return "cpu"
    if choice == "auto" and not any(os.path.exists(path) for path in GPU_DRIVER_FILES):
        return "cpu"  # no GPU driver: no need to import torch (seconds) to learn that
    # Ask NVML rather than the CUDA runtime: the runtime's answer starts the CUDA driver in this
    # process, and a batch forks its jobs after this; a fork of a process that has started it cannot
    # use the GPU. Set for good, so that the jobs' own questions (common.seed) are asked the same way.
    os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    import torch

    available = torch.cuda.is_available()
    if choice == "cuda" and not available:
        raise UsageError(_("--device cuda: no CUDA GPU is available on this machine"))
    return "cuda" if available else "cpu"
