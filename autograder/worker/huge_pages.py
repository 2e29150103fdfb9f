"""Back the zygote's memory with huge pages before it forks, so that forking stays cheap.

Every worker child is forked from the zygote (twice, in the namespaces tier: the
supervisor, then the namespace's PID 1), and a fork copies one page-table entry per
4 KiB page the parent has written: after `import torch` and the warm-ups, about
180 MiB of heap, some 45,000 entries, copied again and torn down again for every
section of every student. Collapsed into 2 MiB pages (MADV_COLLAPSE, Linux 6.1),
the same memory needs one entry per 2 MiB: the fork copies a few hundred. A page
that the child (or the zygote) later writes is split back into 4 KiB pages and
copied as before, so what a child may see or change is exactly what it was; only
the bookkeeping of the untouched memory gets cheaper.

Collapsing costs about 0.3 s of CPU, once: a batch's zygote, which forks two
processes per section of every student, pays it (`main.py ... huge`); one student's
grading, fourteen forks, would not win it back. Best effort: where the kernel lacks
MADV_COLLAPSE, or transparent huge pages are turned off, nothing changes.
"""
import ctypes

MADV_COLLAPSE = 25
HUGE = 2 * 1024 * 1024


def writable_private_ranges(maps_text: str) -> list[tuple[int, int]]:
    """The 2 MiB-aligned parts of the anonymous read-write mappings (the heap, malloc's and Python's
    arenas) listed in /proc/self/maps: what a fork copies entry by entry."""
    ranges = []
    for line in maps_text.splitlines():
        fields = line.split()
        if len(fields) < 5 or not fields[1].startswith("rw") or fields[1][3] != "p":
            continue
        name = fields[5] if len(fields) > 5 else ""
        if name not in ("", "[heap]"):  # files, the stack, vdso: left as they are
            continue
        start, end = (int(x, 16) for x in fields[0].split("-"))
        start, end = -(-start // HUGE) * HUGE, end // HUGE * HUGE
        if end > start:
            ranges.append((start, end))
    return ranges


def collapse() -> int:
    """Ask the kernel to back this process's anonymous memory with huge pages now; returns the bytes
    it took (0 where it could not)."""
    try:
        with open("/proc/self/maps") as maps:
            ranges = writable_private_ranges(maps.read())
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return 0
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    taken = 0
    for start, end in ranges:  # only what is there now: later allocations get pages as before
        if libc.madvise(start, end - start, MADV_COLLAPSE) == 0:
            taken += end - start
    return taken
