"""The students' self-check on Windows' Python surface, emulated on this Linux machine.

tests/windows_python.py builds an interpreter whose every process (the trusted
one and the workers it spawns with `-I`) lacks what Windows' CPython lacks: no
fork, no AF_UNIX, no `resource`, a sockets-only `select`, cp1252 as the
default text encoding and on redirected output. Under it `check` must take the
portable worker path and give the same visible results as the fork path,
print its protection line, and never a traceback; hidden grading must refuse
in one line.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import windows_python
from support import EXAMPLES

from autograder.core.sections import SECTIONS as REGISTERED

SECTIONS = tuple(section.id for section in REGISTERED)
TIMEOUT = 120

# Run in the emulated interpreter, and again in a child it spawns as the portable worker path
# does (`-I`, a minimal environment): what each process sees, as JSON.
PROBE = """
import json, os, select, signal, socket, subprocess, sys

def surface():
    found = {"os": [n for n in ("fork", "setsid", "killpg", "getuid", "waitid") if hasattr(os, n)],
             "socket": [n for n in ("AF_UNIX", "send_fds", "recv_fds", "CMSG_LEN") if hasattr(socket, n)],
             "signal": [n for n in ("SIGKILL", "SIGCHLD", "SIGALRM", "setitimer", "alarm") if hasattr(signal, n)],
             "select": [n for n in ("poll", "epoll") if hasattr(select, n)],
             "importable": []}
    for name in ("resource", "fcntl", "pwd", "grp", "termios"):
        try:
            __import__(name)
            found["importable"].append(name)
        except ImportError:
            pass
    read_end, _ = os.pipe()
    try:
        select.select([read_end], [], [], 0)
        found["select_on_a_pipe"] = "works"
    except OSError as error:
        found["select_on_a_pipe"] = error.errno
    return found

if sys.argv[1:] == ["child"]:
    print(json.dumps(surface()))
else:
    child = subprocess.run([sys.executable, "-I", __file__, "child"], capture_output=True, text=True,
                           timeout=60, env={"PATH": "/usr/bin:/bin"})
    spawned = json.loads(child.stdout) if child.returncode == 0 else child.stderr
    print(json.dumps({"trusted": surface(), "spawned": spawned}))
"""


def probe(python: str, folder: Path) -> dict:
    script = folder / "probe.py"
    script.write_text(PROBE, encoding="utf-8")
    done = run(python, str(script), cwd=folder)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.fixture(scope="session")
def windows_python_exe(tmp_path_factory) -> str:
    try:
        return windows_python.build(tmp_path_factory.mktemp("windows-python") / "env")
    except RuntimeError as error:
        pytest.skip(f"the Windows emulation cannot be built here: {error}")


def run(python: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "AUTOGRADER_"))}
    return subprocess.run([python, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT)


def comparable(report: dict) -> list:
    return [(t["name"], t["score"], t["max_score"], t["status"], t["output"]) for t in report["tests"]]


def assert_no_traceback(done: subprocess.CompletedProcess) -> None:
    for stream in (done.stdout, done.stderr):
        assert "Traceback (most recent call last)" not in stream, stream[-3000:]


def test_the_emulation_takes_windows_lacks_away_in_the_process_and_its_spawned_workers(windows_python_exe,
                                                                                       tmp_path):
    seen = probe(windows_python_exe, tmp_path)
    for where in ("trusted", "spawned"):
        surface = seen[where]
        assert isinstance(surface, dict), f"the -I child failed: {surface}"
        assert surface["os"] == surface["socket"] == surface["signal"] == surface["select"] == [], (where, surface)
        assert surface["importable"] == [], (where, surface)
        assert surface["select_on_a_pipe"] == windows_python.WSAENOTSOCK, (where, surface)
    # The probe can tell: this machine's own Python has all of it.
    host = probe(sys.executable, tmp_path)
    for where in ("trusted", "spawned"):
        surface = host[where]
        assert "fork" in surface["os"] and "AF_UNIX" in surface["socket"] and "resource" in surface["importable"]
        assert surface["select_on_a_pipe"] == "works"


def test_the_emulation_keeps_what_windows_has(windows_python_exe, tmp_path):
    """torch, matplotlib without a display, pytest, pipes to a subprocess, Popen.kill and
    multiprocessing's spawn all work there, so they must keep working here."""
    script = (
        "import multiprocessing, subprocess, sys, time\n"
        "import torch, pytest, matplotlib\n"
        "matplotlib.use('Agg')\n"
        "import matplotlib.pyplot as plt\n"
        "plt.figure(); plt.imshow([[0, 1], [1, 0]]); plt.gcf().canvas.draw(); plt.close('all')\n"
        "echo = subprocess.run([sys.executable, '-I', '-c', 'import sys; sys.stdout.write(sys.stdin.read()[::-1])'],\n"
        "                      input=b'olleh', capture_output=True, timeout=60)\n"
        "sleeper = subprocess.Popen([sys.executable, '-I', '-c', 'import time; time.sleep(60)'])\n"
        "sleeper.kill()\n"
        "killed = sleeper.wait(timeout=30)\n"
        "if __name__ == '__main__':\n"
        "    with multiprocessing.get_context().Pool(1) as pool:\n"
        "        squares = pool.map(abs, [-2, 3])\n"
        "    print(torch.tensor([1.0, 2.0]).sum().item(), echo.stdout.decode(), killed != 0,\n"
        "          multiprocessing.get_start_method(), squares, open(__file__).encoding)\n"
    )
    (tmp_path / "keeps.py").write_text(script, encoding="utf-8")
    done = run(windows_python_exe, str(tmp_path / "keeps.py"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["3.0", "hello", "True", "spawn", "[2,", "3]", windows_python.ANSI_CODE_PAGE]


# The code cells of each notebook of a folder, in order, in one namespace per notebook, with the
# folder as the working directory and on the path (as Jupyter runs them), and no display.
RUN_NOTEBOOKS = """
import json, linecache, os, sys
from pathlib import Path

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg

drawn = []
draw = FigureCanvasAgg.draw
FigureCanvasAgg.draw = lambda canvas, *a, **k: (drawn.append(1), draw(canvas, *a, **k))[1]
folder = Path(sys.argv[1])
sys.path.insert(0, str(folder))
os.chdir(folder)
for path in sorted(folder.glob("*.ipynb")):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    code = "\\n\\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "code")
    namespace = {"__name__": "__main__"}
    name = f"<notebook {path.name}>"  # as Jupyter does: the cells' code in linecache, read back by the checks
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    exec(compile(code, name, "exec"), namespace)
    print("ran", path.name, getattr(namespace.get("show_weights"), "__module__", "-"))
print("drawn", len(drawn), "with", matplotlib.get_backend())
"""


def test_the_notebooks_run_and_draw_their_heatmaps_without_a_display(windows_python_exe, tmp_path):
    script = tmp_path / "run_notebooks.py"
    script.write_text(RUN_NOTEBOOKS, encoding="utf-8")
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("PYTHON", "MPL")) and key not in ("DISPLAY", "WAYLAND_DISPLAY")}
    # the notebooks print what they check ("inputs[0] · inputs[3]"); Windows' console encodes it in its
    # own code page (cp1252 here), so the bytes are read as they come, not as UTF-8
    done = subprocess.run([windows_python_exe, str(script), str(EXAMPLES / "correct")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, encoding="utf-8", errors="replace", timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    ran = [line for line in lines if line.startswith("ran ")]
    # the helper, not the notebooks' fallback stub (the shared setup cell imports it in every notebook)
    assert ran == [f"ran {section}.ipynb attention_plots" for section in SECTIONS], ran
    assert not [line for line in lines if line.startswith("show_weights:")], lines  # it says so when it cannot draw
    drawn = lines[-1].split()
    assert int(drawn[1]) >= 5 and drawn[3].lower() == "agg", lines[-1]


def test_check_gives_the_correct_example_full_visible_marks(windows_python_exe, tmp_path):
    submission = EXAMPLES / "correct"
    done = run(windows_python_exe, "-m", "autograder", "check", str(submission), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert_no_traceback(done)
    protection = [line for line in done.stderr.splitlines() if line.startswith("self-check: ")]
    assert len(protection) == 1, done.stderr
    assert "no sandbox" in protection[0], protection  # the portable path: no tier holds
    # full marks: the core maximum, and the whole bonus apart ("Total: 49 / 49, plus 6.5 / 6.5 bonus")
    totals = re.findall(r"^Total: ([\d.]+) / ([\d.]+)(?:, plus ([\d.]+) / ([\d.]+) bonus)?",
                        done.stdout, flags=re.MULTILINE)
    assert len(totals) == 1, done.stdout[-2000:]
    score, maximum, bonus, bonus_max = (float(value or 0) for value in totals[0])
    assert maximum > 0 and bonus == bonus_max and score == maximum, done.stdout[-2000:]
    for section in SECTIONS:
        assert re.search(rf"^{section} .* ([\d.]+) / \1$", done.stdout, flags=re.MULTILINE), section
    assert "FAIL" not in done.stdout

    # The feedback report opens from feedback/ on any system: UTF-8 declared and written,
    # every link inside the page or a data: image, the Markdown's images relative and present.
    feedback = tmp_path / "feedback"
    html = (feedback / "report.html").read_bytes().decode("utf-8")
    assert '<meta charset="utf-8">' in html
    links = re.findall(r'(?:href|src)="([^"]*)"', html)
    assert links and all(link.startswith(("#", "data:")) for link in links), sorted(set(links))[:5]
    markdown = (feedback / "report.md").read_bytes().decode("utf-8")
    for target in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", markdown):
        assert not target.startswith(("/", "file:")) and "\\" not in target, target
        assert (feedback / target).is_file(), target


def test_check_on_the_partial_example_flags_what_is_missing_like_the_fork_path(windows_python_exe, tmp_path):
    emulated, host = tmp_path / "emulated", tmp_path / "host"
    emulated.mkdir()
    host.mkdir()
    args = ["-m", "autograder", "check", str(EXAMPLES / "partial"), "--format", "json", "--output", "out.json"]
    env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTHON", "AUTOGRADER_"))}
    # Both at once (each waits on its own worker): this machine's Python takes the fork path.
    reference = subprocess.Popen([sys.executable, *args], cwd=host, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
    done = run(windows_python_exe, *args, cwd=emulated)
    _, host_stderr = reference.communicate(timeout=TIMEOUT)
    assert reference.returncode == 0, host_stderr[-3000:]
    assert done.returncode == 0, done.stderr[-3000:]
    assert_no_traceback(done)
    assert sum(line.startswith("self-check: ") for line in done.stderr.splitlines()) == 1, done.stderr
    report = json.loads((emulated / "out.json").read_text(encoding="utf-8"))
    assert 0 < report["score"] < report["max_score"]
    outputs = " ".join(t["output"] for t in report["tests"])
    assert "is not implemented yet: it still raises NotImplementedError" in outputs
    assert "This looks like" in outputs  # the named mistakes of the partial example
    assert {t["tags"][0] for t in report["tests"]} == set(SECTIONS)
    expected = json.loads((host / "out.json").read_text(encoding="utf-8"))
    assert comparable(report) == comparable(expected)
    assert (report["score"], report["max_score"]) == (expected["score"], expected["max_score"])


def test_hidden_grading_refuses_in_one_line(windows_python_exe, tmp_path):
    done = run(windows_python_exe, "-m", "autograder", "grade", str(EXAMPLES / "correct"), cwd=tmp_path)
    assert done.returncode == 1, (done.returncode, done.stdout[-2000:], done.stderr[-2000:])
    assert_no_traceback(done)
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert "refused" in done.stderr and "--sandbox weak" in done.stderr, done.stderr
    assert not (tmp_path / "feedback").exists()
