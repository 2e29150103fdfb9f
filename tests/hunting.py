"""The hostile submission that hunts: 01_scores, correct, plus a cell that looks for the answers on
disk, for a secret in the grader's environment, for a listener on the loopback, and leaves a daemon
behind. Whatever it finds makes its dot_scores wrong, so a grading that exposes anything loses
dot_scores' points. Graded under the emulated platforms (test_platforms.py) and in a real
container (test_container.py, through in_container.py).
"""
from __future__ import annotations

import os
import socket
import textwrap

from support import correct_source

# what the grader's environment carries and student code must never see (a token's shape)
SECRET = "gh" + "p_platformsecret0123456789"


def hunting_source(port: int, marker: str) -> str:
    """01_scores, correct, plus a cell that hunts for answers, secrets and the network, leaves a
    daemon behind, and turns what it found into a wrong dot_scores."""
    hunt = textwrap.dedent(f"""
        import os, socket, subprocess
        found = []
        for top in ("/", "/work", "/root", "/home", "/tmp", "/autograder", "/opt", "/srv"):
            for folder, dirs, files in os.walk(top):
                if folder.startswith(("/proc", "/sys", "/dev", "/usr")) or folder.count("/") > 6:
                    dirs[:] = []
                    continue
                for name in files:
                    if name in ("scores.py", "section_01_scores.py", "hidden_01_scores.py", "documented_values.py",
                                "config") \\
                            or name.endswith(".ipynb"):
                        path = os.path.join(folder, name)
                        try:
                            text = open(path, errors="replace").read(4096)
                        except OSError:
                            continue
                        if "def dot_scores" in text or "[remote" in text or "documented" in text:
                            found.append(path)
        for name in os.listdir("/proc") if os.path.isdir("/proc") else []:
            if name.isdigit():
                try:
                    if b"{SECRET}" in open(f"/proc/{{name}}/environ", "rb").read():
                        found.append("environ " + name)
                except OSError:
                    pass
        if "{SECRET}" in repr(dict(os.environ)):
            found.append("own environment")
        for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
            try:
                with socket.socket(socket.AF_INET, kind) as sock:
                    sock.settimeout(1)
                    sock.connect(("127.0.0.1", {port}))
                    sock.send(b"leak")
                    found.append(f"network {{kind}}")
            except OSError:
                pass
        try:
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    os.execv("/bin/sleep", ["sleep", "{marker}"])
                os._exit(0)
        except OSError:
            pass
        print("found:", found)
        _honest = dot_scores
        def dot_scores(query, inputs):
            return _honest(query, inputs) + (1.0 if found else 0.0)
        """)
    return correct_source("01_scores") + "\n\n# %% hunting\n" + hunt


def sleepers(marker: str) -> list[int]:
    """The processes whose command line carries `marker` (the daemon the hunting cell leaves)."""
    hits = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if marker.encode() in open(f"/proc/{name}/cmdline", "rb").read():
                    hits.append(int(name))
            except OSError:
                pass
    return hits


def loopback_listeners() -> tuple[socket.socket, socket.socket, int]:
    """A TCP listener and a UDP socket on one free loopback port: what the hunt must not reach."""
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(4)
    tcp.setblocking(False)
    port = tcp.getsockname()[1]
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", port))
    udp.setblocking(False)
    return tcp, udp, port
