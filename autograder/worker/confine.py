"""What a worker child does to itself before it runs any student code.

Layers applied here (each one that the machine refuses is reported back to the
trusted side, which says so once and grades on): its own session and process
group, so the whole tree can be killed at once; output sent to a capped pipe;
standard input closed; a private working directory; resource limits.
"""
import os
import resource
import sys

DEFAULT_LIMITS = {
    "memory_bytes": 4 * 1024**3,  # address space of the child
    "cpu_seconds": 120,  # CPU time of the child over all its checks
    "file_bytes": 64 * 1024**2,  # largest file it may write
    "processes": 256,  # RLIMIT_NPROC (not enforced for root)
}


def enter(limits: dict, out_fd: int) -> list:
    """Confine the current (freshly forked) process. Returns the layers in force."""
    layers = []
    os.setsid()
    layers.append("process group")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(out_fd, 1)
    os.dup2(out_fd, 2)
    os.close(out_fd)
    sys.stdout = open(1, "w", buffering=1, closefd=False, errors="replace")
    sys.stderr = sys.stdout
    workdir = limits.get("workdir")
    if workdir:
        os.chdir(workdir)
        os.environ["HOME"] = workdir
        os.environ["TMPDIR"] = workdir
        layers.append("private directory")
    settings = {**DEFAULT_LIMITS, **{k: v for k, v in limits.items() if k in DEFAULT_LIMITS}}
    for name, key in (
        ("memory_bytes", resource.RLIMIT_AS),
        ("cpu_seconds", resource.RLIMIT_CPU),
        ("file_bytes", resource.RLIMIT_FSIZE),
        ("processes", resource.RLIMIT_NPROC),
    ):
        value = settings[name]
        if value:
            try:
                resource.setrlimit(key, (int(value), int(value)))
                layers.append(name)
            except (ValueError, OSError):
                pass
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return layers
