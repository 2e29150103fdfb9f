"""Writing results so that nothing is ever half-written or lost."""
from __future__ import annotations

import hashlib
import os
import re
import stat
import tempfile
from pathlib import Path

from autograder.i18n import N_, _, _f
from autograder.sandbox.system_errors import system_error

_UMASK = os.umask(0)
os.umask(_UMASK)


def write_atomically(path: Path, text: str) -> None:
    """Write `text` (UTF-8) to `path` so that a reader (or a killed writer) never sees half a file."""
    write_bytes_atomically(path, text.encode("utf-8"))


def write_bytes_atomically(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file and os.replace: whole or not at all.

    A path that names something other than a regular file (/dev/null, a pipe,
    /dev/stdout) is written in place: replacing it would replace the device.
    """
    path = Path(path)
    try:
        special = not stat.S_ISREG(path.stat().st_mode)
    except FileNotFoundError:
        special = False
    if special:
        with open(path, "wb") as handle:
            handle.write(data)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
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


def result_file_name(student_id: str) -> str:
    """students/<this> in a batch's output: the student's results.json under a safe name."""
    return safe_filename(student_id) + ".json"


# a cell starting with one of these is a formula to a spreadsheet (OWASP: CSV injection);
# a leading ' is escaped too, so that reading back is unambiguous
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")


def spreadsheet_safe(text: str) -> str:
    """`text` as a CSV cell that a spreadsheet shows as text and never evaluates: a leading '."""
    return "'" + text if text.startswith(_FORMULA_START) else text


def from_spreadsheet_safe(text: str) -> str:
    """The text `spreadsheet_safe` was given."""
    return text[1:] if text.startswith("'") else text


# --------------------------------------------------------------------------- reading submissions

class Refused(ValueError):
    """A submission file the grader will not open; the message says why, in one line."""


class TooBig(Refused):
    """A submission file over the size the grader reads (MAX_SUBMISSION_FILE, or the limit given)."""


MAX_SUBMISSION_FILE = 20 * 1024 * 1024  # a section's notebook or .py file

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO must not block the open: fstat refuses it next
_NOCTTY = getattr(os, "O_NOCTTY", 0)
_BINARY = getattr(os, "O_BINARY", 0)
_REPARSE_POINT = getattr(stat, "FILE_ATTRIBUTE_REPARSE_POINT", 0x400)


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return N_("a symbolic link")
    if stat.S_ISDIR(mode):
        return N_("a folder")
    if stat.S_ISFIFO(mode):
        return N_("a pipe (FIFO)")
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return N_("a device")
    if stat.S_ISSOCK(mode):
        return N_("a socket")
    return N_("not a regular file")


def _not_a_file(shown: str, what: str) -> Refused:
    return Refused(_f("{file} is {kind}; the grader reads only regular files inside the submission "
                      "folder (replace it with the real file)", file=shown, kind=_(what)))


def _unreadable(shown: str, error: OSError) -> Refused:
    return Refused(_f("{file} could not be read ({error})", file=shown,
                      error=system_error(error.errno, english=error.strerror) if error.errno else error.strerror))


def lexists_inside(root: Path, relative: str) -> bool:
    """Whether `root/relative` names anything at all, a link included, without following any link."""
    try:
        os.lstat(Path(root) / relative)
        return True
    except OSError:
        return False


def read_inside(root: Path, relative: str, limit: int = MAX_SUBMISSION_FILE) -> bytes:
    """The bytes of the regular file `root/relative`, at most `limit` of them.

    `root` is the folder the instructor named and may itself be reached through
    links; below it, no component is followed if it is a symbolic link (or a
    Windows junction), and the file must be a regular file, not a device, FIFO
    or socket. Everything else raises Refused. This is what keeps a submission
    from pointing the trusted side at the examples, the solutions, a classmate's
    folder or a host file: the student chooses what is inside the folder, never
    what lies outside it.
    """
    parts = Path(relative).parts
    shown = Path(relative).as_posix()
    if not parts or Path(relative).is_absolute() or any(p in ("", ".", "..") for p in parts):
        raise Refused(_f("{file}: not a path inside the submission folder", file=shown))
    if _NOFOLLOW and os.open in os.supports_dir_fd:
        fd = _open_below(root, parts, shown)
    else:
        fd = _open_checked(root, parts, shown)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise _not_a_file(shown, _kind(info.st_mode))
        if info.st_size > limit:
            raise TooBig(_f("{file} is {size:.0f} MB; files over {limit} MB are not graded",
                            file=shown, size=info.st_size / 1024**2, limit=limit // 1024**2))
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise TooBig(_f("{file} is larger than {limit} MB; it is not graded", file=shown, limit=limit // 1024**2))
    return data


def _open_below(root: Path, parts: tuple, shown: str) -> int:
    """POSIX: walk from `root` one component at a time with O_NOFOLLOW, so no link is ever taken."""
    try:
        fd = os.open(root, os.O_RDONLY | _DIRECTORY)
    except OSError as error:
        raise Refused(_f("{folder}: the submission folder cannot be opened ({error})", folder=root,
                         error=system_error(error.errno, english=error.strerror))) from None
    try:
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            try:
                mode = os.lstat(part, dir_fd=fd).st_mode
            except OSError as error:
                raise _unreadable(shown, error) from None
            wanted = stat.S_ISREG(mode) if last else stat.S_ISDIR(mode)
            if not wanted:  # refused before opening: opening a device can have effects of its own
                raise _not_a_file(shown if last else "/".join(parts[:index + 1]), _kind(mode))
            flags = (os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _NOCTTY) if last else (
                os.O_RDONLY | _DIRECTORY | _NOFOLLOW)
            try:
                opened = os.open(part, flags, dir_fd=fd)
            except OSError as error:  # swapped for a link between lstat and open, or unreadable
                raise _unreadable(shown, error) from None
            os.close(fd)
            fd = opened
        return fd
    except BaseException:
        os.close(fd)
        raise


def _open_checked(root: Path, parts: tuple, shown: str) -> int:
    """Windows: no dir_fd or O_NOFOLLOW; each component is checked with lstat, then the file opened.

    (Only the students' self-check runs here, on their own files.)"""
    path = Path(root)
    for index, part in enumerate(parts):
        path = path / part
        try:
            info = os.lstat(path)
        except OSError as error:
            raise _unreadable(shown, error) from None
        last = index == len(parts) - 1
        if getattr(info, "st_file_attributes", 0) & _REPARSE_POINT or stat.S_ISLNK(info.st_mode):
            raise _not_a_file(shown if last else "/".join(parts[:index + 1]), N_("a link (or junction)"))
        if not (stat.S_ISREG(info.st_mode) if last else stat.S_ISDIR(info.st_mode)):
            raise _not_a_file(shown if last else "/".join(parts[:index + 1]), _kind(info.st_mode))
    try:
        return os.open(path, os.O_RDONLY | _BINARY)
    except OSError as error:
        raise _unreadable(shown, error) from None
