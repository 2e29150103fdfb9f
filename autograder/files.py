"""Writing results so that nothing is ever half-written or lost."""
from __future__ import annotations

import hashlib
import os
import re
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


SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,99}")


def safe_filename(student_id: str) -> str:
    """The file name (no suffix) that stands for a student id: stable, collision-free, always valid.

    An id that is already a plain short name is its own file name, so existing
    outputs keep their names. Any other id (too long, a slash, spaces, a leading
    dot, a name a spreadsheet or a shell would misread) becomes a readable part
    followed by `~` and a hash of the whole id: `~` never occurs in a plain name,
    so the two kinds cannot collide, and two ids never share a hash prefix in practice.
    """
    if SAFE_NAME.fullmatch(student_id):
        return student_id
    digest = hashlib.sha256(student_id.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", student_id)[:60].strip("._-")
    return f"{readable}~{digest}"
