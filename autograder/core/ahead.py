"""A section's worker started on a thread of its own, while the grading goes on.

Starting a worker child asks the zygote to fork and confine one (a few hundredths
of a second; longer while the zygote still warms a device up), then sends it the
student's cells. The next section's worker is started ahead so while the current
section's checks run (`SectionWorker.prepare`): on a thread, so that the grader's
own thread runs those checks meanwhile instead of waiting for the zygote's answer.
The thread only waits on sockets; the checks never share anything with it but the
launcher, whose lock keeps its requests one at a time.
"""
from __future__ import annotations

import threading


class Ahead:
    """`start()` run on a thread; `result()` waits for it: what it returned, or None where it raised."""

    def __init__(self, start):
        self._result = None
        self._thread = threading.Thread(target=self._run, args=(start,), name="worker-ahead", daemon=True)
        self._thread.start()

    def _run(self, start) -> None:
        try:
            self._result = start()
        except Exception:  # the zygote failed: the section's own first call meets it again, in its own check
            self._result = None

    def result(self):
        self._thread.join()
        return self._result
