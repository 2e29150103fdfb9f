"""Which processes have a given parent or session, read from /proc/<pid>/stat.

Both sides use it: the subreaper (confine.py) to find what is left below it,
the trusted side (sandbox/zygote.py) to find what a child's session left behind.
Where there is no /proc (not Linux) it finds nothing.
"""
import os

PARENT, SESSION = 1, 3  # positions among the fields that follow the command name in .../stat


def processes_where(position: int, value: int) -> list[int]:
    found = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2:].split()  # the command name may hold spaces and ")"
        if len(fields) > position and int(fields[position]) == value:
            found.append(int(name))
    return found
