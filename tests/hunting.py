"""The hostile submission that hunts: 01_scores, correct, plus a cell that looks for the answers on
disk, for a secret in the grader's environment, for a listener on the loopback, and leaves a daemon
behind. Whatever it finds makes its dot_scores wrong, so a grading that exposes anything loses
dot_scores' points. Graded under the emulated platforms (test_platforms.py) and in a real
container (test_container.py, through in_container.py).
"""
from __future__ import annotations

import os
import socket
import sys
import textwrap
from pathlib import Path

from support import correct_source

# what the grader's environment carries and student code must never see (a token's shape)
SECRET = "gh" + "p_platformsecret0123456789"


def hunting_source(port: int, marker: str) -> str:
    """01_scores, correct, plus a cell that hunts for answers, secrets and the network, leaves a
    daemon behind, and turns what it found into a wrong dot_scores."""
    hunt = textwrap.dedent(f"""
        import os, socket, subprocess, sys
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
                    os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", "{marker}"])  # (no /bin in the sandbox)
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


# What the student's process may read, stated here on its own from the interpreter's layout (not
# from the grader's allow-list, which the walking cell below checks): the Python install, the import
# path's packages, the system's shared libraries, a few files of /etc, the worker's folder, and the
# child's own working directory. The kernel's views (/proc, /sys, /dev) are not walked.
def interpreter_roots() -> list[str]:
    import sysconfig

    roots = ["/lib", "/lib32", "/lib64", "/libx32", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libx32",
             "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/passwd",
             "/etc/group", "/etc/nsswitch.conf", "/etc/os-release", sys.executable,
             os.path.join(sys.prefix, "pyvenv.cfg"), str(Path(__file__).resolve().parents[1] / "autograder" / "worker")]
    roots += [sysconfig.get_paths()[name] for name in ("stdlib", "platstdlib", "purelib", "platlib")]
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    roots += [os.path.join(libdir, name) for name in os.listdir(libdir) if name.startswith("libpython")] \
        if os.path.isdir(libdir) else []
    return sorted({os.path.realpath(root) for root in roots if os.path.lexists(root)})


def walking_source(planted: list[str], roots: list[str]) -> str:
    """01_scores, correct, plus a cell that tries to read every planted copy (of the answers, a
    classmate's work, a gradebook) by its path, then walks the whole filesystem it can list and
    tries to read every file outside `roots` and its own working directory. Whatever it reads, or a
    walk that did not finish in time, makes dot_scores raise, naming the first paths (so a failing
    check shows them)."""
    walk = textwrap.dedent(f"""
        import os, time
        found, walked = [], []
        _honest = dot_scores
        def dot_scores(query, inputs):
            if found or not walked:
                raise RuntimeError(f"read {{len(found)}} files outside the allow-list (walk finished: "
                                   f"{{bool(walked)}}): " + "; ".join(found[:4]))
            return _honest(query, inputs)
        def _try(path):
            try:
                with open(path, "rb") as some_file:
                    some_file.read(1)
                found.append(path)
            except OSError:
                pass
        for path in {planted!r}:
            _try(path)
        allowed = {roots!r} + [os.path.realpath(os.getcwd())]
        def _allowed(path):
            path = os.path.realpath(path)
            return any(path == root or path.startswith(root.rstrip("/") + "/") for root in allowed)
        deadline = time.monotonic() + 20  # within the cell's time; an unfinished walk fails too
        for folder, dirs, files in os.walk("/"):
            if time.monotonic() > deadline:
                break
            if folder in ("/proc", "/sys", "/dev") or _allowed(folder):
                dirs[:] = []
                continue
            for name in files:
                path = os.path.join(folder, name)
                if not _allowed(path) and len(found) <= 50:
                    _try(path)
        else:
            walked.append(True)
        """)
    return correct_source("01_scores") + "\n\n# %% walking\n" + walk


def plant(rng, bases: tuple = ()) -> tuple[list[str], list[str]]:
    """Copies of the solutions, the hidden checks, a classmate's submission and a gradebook at random
    paths no code of the grader names (as root: under /usr/local/share, nbgrader's exchange there,
    /var/lib, a new top-level folder; else under `bases`, folders the user may write), readable by
    everyone. Returns (the files, the top folders made, to remove)."""
    root = Path(__file__).resolve().parents[1]
    tag = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(8))
    homes = [Path(f"/usr/local/share/{tag}"), Path(f"/usr/local/share/nbgrader-{tag}"), Path(f"/var/lib/{tag}"),
             Path(f"/data-{tag}")]
    if bases:
        homes = [Path(bases[number % len(bases)]) / f"{tag}-{number}" for number in range(len(homes))]
    copies = {
        homes[0] / "course" / "solutions" / "softmax.py": (root / "solutions" / "softmax.py").read_bytes(),
        homes[0] / "course" / "autograder" / "checks" / "hidden" / "hidden_02_softmax.py":
            (root / "autograder" / "checks" / "hidden" / "hidden_02_softmax.py").read_bytes(),
        homes[1] / "exchange" / "attention" / "inbound" / f"bob+ps1+{tag}" / "01_scores.ipynb":
            (root / "examples" / "correct" / "01_scores.ipynb").read_bytes(),
        homes[2] / "solutions" / "scores.py": (root / "solutions" / "scores.py").read_bytes(),
        homes[3] / "grading" / "gradebook.db": b"SQLite format 3\0 bob 70.0 alice 12.5",
    }
    for path, data in copies.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(0o644)
    for home in homes:
        for folder in [home, *home.rglob("*")]:
            if folder.is_dir():
                folder.chmod(0o755)
    return [str(p) for p in copies], [str(h) for h in homes]


def interpreter_source() -> str:
    """01_scores, correct, plus a cell that uses what the allow-list must still give: the packages a
    notebook imports (matplotlib, pandas) in its own process, and a fresh interpreter it starts
    (through the venv's link chain) importing torch and numpy. Anything missing makes dot_scores
    raise, saying what."""
    cell = textwrap.dedent("""
        import subprocess, sys
        problems, finished = [], []
        _honest = dot_scores
        def dot_scores(query, inputs):  # first: a cell that stops half-way must not leave the honest one
            if problems or not finished:
                raise RuntimeError(f"finished: {bool(finished)}; " + "; ".join(problems))
            return _honest(query, inputs)
        try:
            import matplotlib, pandas
        except Exception as error:
            problems.append(f"import: {error!r}")
        try:
            child = subprocess.run([sys.executable, "-c", "import torch, numpy; print(torch.ones(2).sum().item())"],
                                   capture_output=True, text=True)
            if child.stdout.strip() != "2.0":
                problems.append("a fresh interpreter failed: " + child.stderr[-300:])
        except Exception as error:
            problems.append(f"a fresh interpreter did not start: {error!r}")
        finished.append(True)
        """)
    return correct_source("01_scores") + "\n\n# %% interpreter\n" + cell
