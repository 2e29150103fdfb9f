"""A worker's working folder: made for it, and removed whatever its code did to it.

Both launch paths (zygote.py, portable.py) give each worker such a folder. It lives in the
sandbox layer, not beside the grader's own file handling (core/files.py), because the sandbox
sits below the core and imports nothing of it.
"""
from __future__ import annotations

import os
import shutil
import tempfile


def make_workdir() -> str:
    """A fresh, private folder for one worker (or one zygote's workers)."""
    return tempfile.mkdtemp(prefix="attn-grade-")


def remove_tree(path: str) -> None:
    """Remove a worker's directory whatever student code did to its modes (chmod 000 included)."""
    def retry(function, failed, _info):
        parent = os.path.dirname(failed)
        try:
            os.chmod(parent, 0o700)
            if os.path.isdir(failed) and not os.path.islink(failed):
                os.chmod(failed, 0o700)
            function(failed)
        except OSError:
            pass

    shutil.rmtree(path, onerror=retry)
    if os.path.exists(path):
        shutil.rmtree(path, ignore_errors=True)


