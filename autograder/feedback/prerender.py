"""The report's heatmaps drawn while the checks still run, in a process of their own.

Drawing is most of a feedback report's cost (matplotlib's import, a third of a
second per picture). A check's pictures are known as soon as it has run, so
`Drawer` forks a process that imports matplotlib and draws each picture it is
sent while the grading goes on, on the core the grading leaves idle; the report
then takes them (`heatmaps.render_figure` asks `heatmaps.drawn_ahead`) instead
of drawing them itself. The same code draws the same picture, so the bytes are
those the report would have drawn; a picture the drawer lost (it died, say) is
drawn by the report as before.

The drawer runs no student code: it is forked from the trusted process before
any worker starts, and keeps nothing of it but its two pipes.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import signal
import struct
import threading

from autograder.feedback import heatmaps

HEADER = struct.Struct("!I")


def figure_key(figure: dict) -> str:
    """What a picture shows, as a digest: equal keys draw equal bytes."""
    digest = hashlib.sha256()
    for key in ("expected", "actual"):
        matrix = heatmaps.as_array(figure[key])
        digest.update(repr(matrix.shape).encode() + matrix.tobytes())
    digest.update(repr((figure.get("labels"), figure.get("what", ""), bool(figure.get("passed")))).encode())
    return digest.hexdigest()


def _send(fd: int, message) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    os.write(fd, HEADER.pack(len(data)))
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _receive(fd: int):
    """The next message, or None at the end of the pipe."""
    header = _read_exactly(fd, HEADER.size)
    if header is None:
        return None
    data = _read_exactly(fd, HEADER.unpack(header)[0])
    return None if data is None else pickle.loads(data)


def _read_exactly(fd: int, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _draw_forever(requests: int, replies: int) -> None:
    """The drawer: (key, figure) in, (key, PNG bytes or None) out, until its input ends."""
    heatmaps.warm_up()
    while (message := _receive(requests)) is not None:
        key, figure = message
        try:
            png = heatmaps.render_figure(figure)
        except Exception:  # the report draws it again, and says what went wrong
            png = None
        _send(replies, (key, png))


class Drawer:
    """A forked drawer of heatmaps; `submit` a check's figures, the report gets them through
    heatmaps.drawn_ahead while the drawer is installed (`close` uninstalls it)."""

    def __init__(self):
        request_read, self.requests = os.pipe()
        self.replies, reply_write = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            try:
                low, high = sorted((request_read, reply_write))  # nothing of the grading's: its pipes only
                os.closerange(3, low)
                os.closerange(low + 1, high)
                os.closerange(high + 1, os.sysconf("SC_OPEN_MAX"))
                _draw_forever(request_read, reply_write)
            finally:
                os._exit(0)
        os.close(request_read)
        os.close(reply_write)
        self.sent: set[str] = set()
        self.drawn: dict[str, bytes | None] = {}
        self.arrived = threading.Condition()
        self.ended = False
        self.reader = threading.Thread(target=self._collect, daemon=True)
        self.reader.start()
        heatmaps.drawn_ahead = self.drawn_for

    def _collect(self) -> None:
        while True:
            try:
                message = _receive(self.replies)
            except (OSError, pickle.UnpicklingError, EOFError):
                message = None
            with self.arrived:
                if message is None:
                    self.ended = True
                    self.arrived.notify_all()
                    return
                self.drawn[message[0]] = message[1]
                self.arrived.notify_all()

    def submit(self, figures: list[dict]) -> None:
        """Send pictures to be drawn (plain arrays: the drawer needs no torch)."""
        for figure in figures:
            key = figure_key(figure)
            if key in self.sent:
                continue
            plain = {**figure, "expected": heatmaps.as_array(figure["expected"]),
                     "actual": heatmaps.as_array(figure["actual"])}
            try:
                _send(self.requests, (key, plain))
            except OSError:  # the drawer is gone: the report draws
                return
            self.sent.add(key)

    def drawn_for(self, figure: dict) -> bytes | None:
        """The drawer's PNG of `figure`, waiting for it if it was sent; None: draw it here."""
        key = figure_key(figure)
        if key not in self.sent:
            return None
        with self.arrived:
            while key not in self.drawn and not self.ended:
                self.arrived.wait()
            return self.drawn.get(key)

    def close(self) -> None:
        if heatmaps.drawn_ahead == self.drawn_for:
            heatmaps.drawn_ahead = None
        try:
            os.close(self.requests)  # the drawer ends when its input does
        except OSError:
            pass
        with self.arrived:
            unwanted = not self.sent.issubset(self.drawn)
        if unwanted:  # the grading ended early: its pictures are not wanted any more
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.reader.join(timeout=5)
        try:
            os.close(self.replies)
        except OSError:
            pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
