"""Writing results so that nothing is ever half-written or lost."""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

_UMASK = os.umask(0)
os.umask(_UMASK)


def write_atomically(path: Path, text: str) -> None:
    """Write `text` to `path` so that a reader (or a killed writer) never sees half a file.

    A path that names something other than a regular file (/dev/null, a pipe,
    /dev/stdout) is written in place: replacing it would replace the device.
    """
    path = Path(path)
    try:
        special = not stat.S_ISREG(path.stat().st_mode)
    except FileNotFoundError:
        special = False
    if special:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; results are ordinary files
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
