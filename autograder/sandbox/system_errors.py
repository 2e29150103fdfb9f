"""The system's errors (an errno) in the reader's language: shared by the sandbox line, which
names why a layer is missing, and the submission reader, which names why a file was not read.

English reads the C library's own words (os.strerror); another language reads the table below,
translated, and, for an error not in it, the errno's name (EIO), which every reader can look up.
"""
from __future__ import annotations

import errno as errnos
import os

from autograder.i18n import DEFAULT, N_, _, language

ERRORS = {
    "EPERM": N_("operation not permitted"),
    "EACCES": N_("permission denied"),
    "EINVAL": N_("invalid argument"),
    "ENOSYS": N_("function not implemented"),
    "EOPNOTSUPP": N_("operation not supported"),
    "ENOENT": N_("no such file or directory"),
    "EBUSY": N_("device or resource busy"),
    "ENOMEM": N_("cannot allocate memory"),
    "ENOSPC": N_("no space left on device"),
    "EROFS": N_("read-only file system"),
    "EUSERS": N_("too many users"),
    "ENOTDIR": N_("not a directory"),
    "EISDIR": N_("is a directory"),
    "ELOOP": N_("too many levels of symbolic links"),
}


def system_error(number: int, english: str | None = None) -> str:
    """The words for errno `number`: `english` (default: the C library's, in lower case) in English,
    the translated table's words in another language, else the errno's name."""
    if language() == DEFAULT:
        return english if english is not None else os.strerror(number).lower()
    name = errnos.errorcode.get(number, "")
    return _(ERRORS[name]) if name in ERRORS else (name or f"errno {number}")
