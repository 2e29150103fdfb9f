"""Hostile submissions: each one tries one thing a student could do to the grader.

Every case is the correct 01_scores source (or a folder around it) plus hostile
code, graded like a real submission. Each asserts its expected outcome: the
score is no more than the submission deserves (its honest parts still
graded), nothing is left behind (process, file, connection), and the grader
neither crashes nor hangs. Many hostile cells turn what they found into a
wrong answer ("sabotage"), so that a leak shows up as points lost even where
printed output is not reported.

A case that needs a sandbox layer this machine does not give is skipped as
*degraded*, with the reason; the run's last line counts them:
"evil corpus: N/N contained".
"""
from __future__ import annotations

import json
import os
import pathlib
import socket
import subprocess
import sys
import tempfile
import textwrap
import time

import pytest
from support import ROOT, correct_source, failing, replace_def, zygote

from autograder.checks import declared
from autograder.sandbox import tiers
from autograder.core.grade import run_checks
from autograder.core.submission import locate
from autograder.sandbox.limits import Limits

SUMMARY_LINE = "evil corpus"
SECTION = "01_scores"
FULL = 10.0


def titled(*starts: str) -> set:
    return {title for title in declared(SECTION) if title.startswith(starts)}


def points(titles) -> float:
    return sum(declared(SECTION)[title]["points"] for title in titles)


# what a wrong dot_scores loses: the checks of its values (the mutation check passes a wrong value)
DOT_VALUES = titled("dot_scores gives", "dot_scores matches")
DOT_POINTS = points(DOT_VALUES)
SCORE_MATRIX_VALUES = titled("score_matrix gives", "score_matrix on a batch", "score_matrix matches")
BROKEN_DOT = "def dot_scores(query, inputs):\n    return torch.zeros(inputs.shape[0])\n"


# ----------------------------------------------------------------- helpers
@pytest.fixture(scope="module")
def layers():
    """What a worker child reports about its confinement on this machine."""
    return zygote().probe()


def need(report, *names):
    missing = [n for n in names if not tiers.holds(report, n)]
    if missing:
        pytest.skip(f"degraded: guarantee(s) {', '.join(missing)} not given by the sandbox tier here "
                    f"({'; '.join(tiers.missing_words(report)) or 'not reported'})")


@pytest.fixture(scope="module")
def private_tmp(tmp_path_factory):
    """Workdirs and submissions of this module go to a folder of their own, checked empty."""
    folder = tmp_path_factory.mktemp("evil-tmp")
    saved = tempfile.tempdir
    tempfile.tempdir = str(folder)
    yield folder
    tempfile.tempdir = saved


def parents() -> dict:
    table = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = pathlib.Path(f"/proc/{name}/stat").read_bytes()
            except OSError:
                continue
            table[int(name)] = int(stat[stat.rfind(b")") + 2:].split()[1])
    return table


def zygote_descendants() -> list:
    """Every process below the shared zygote (its supervisors, their namespaces' processes)."""
    table, root = parents(), zygote().process.pid
    found = []
    for pid in table:
        seen, current = 0, table.get(pid)
        while current and seen < 64:
            if current == root:
                found.append(pid)
                break
            current, seen = table.get(current), seen + 1
    return found


def processes_with(marker: str) -> list:
    hits = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if marker.encode() in pathlib.Path(f"/proc/{name}/cmdline").read_bytes():
                    hits.append(int(name))
            except OSError:
                pass
    return hits


def settle(condition, seconds=3.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.fixture(autouse=True)
def nothing_left_behind(private_tmp, layers):
    """After every case: no process below the zygote, no file in the temp folder."""
    yield
    assert settle(lambda: not zygote_descendants()), f"worker processes left: {zygote_descendants()}"
    assert settle(lambda: not list(private_tmp.iterdir())), f"files left: {list(private_tmp.iterdir())}"
    assert zygote().process.poll() is None, "the zygote died"


def present(folder):
    """The sections of a folder submission that are in it (the missing ones cost time, no insight)."""
    return [source for source in locate(folder) if source.path is not None]


def grade(source: str, limits: Limits | None = None, section: str = SECTION):
    """Graded with the tamper scan off: each hostile cell really runs, and the sandbox and the
    trusted side's comparisons must hold on their own (test_tampering.py tests the scan)."""
    from support import grade_source

    return grade_source(section, source, limits=limits, scan_source=False)


def with_cell(code: str, source: str | None = None) -> str:
    """The correct source with a hostile top-level cell appended."""
    return (source or correct_source(SECTION)) + "\n\n# %% hostile\n" + textwrap.dedent(code)


def broken_dot(source: str | None = None) -> str:
    return replace_def(source or correct_source(SECTION), "dot_scores", BROKEN_DOT)


def sabotage_if(condition_code: str) -> str:
    """A cell that makes dot_scores wrong when `condition_code` (an expression) is true at load."""
    return textwrap.dedent(f"""
        _LEAK = bool({condition_code})
        print("leak:", _LEAK)
        _honest_dot = dot_scores
        def dot_scores(query, inputs):
            return _honest_dot(query, inputs) + (1.0 if _LEAK else 0.0)
        """)


def dot_checks(result):
    """The checks of dot_scores' values (each lost by a dot_scores that is wrong, raises or dies)."""
    return [c for c in result.checks if c.name in DOT_VALUES]


def assert_only_dot_scores_lost(result):
    """The checks of dot_scores' values lost, and nothing outside dot_scores' own checks (its mutation
    check may go too, where the worker died under it)."""
    lost = {c.name for c in result.checks if not c.passed}
    everything_of_dot = {c.name for c in result.checks if c.name.startswith("dot_scores")}
    assert DOT_VALUES <= lost <= everything_of_dot, lost


# ----------------------------------------------------------------- cases
def test_forged_output_and_results_files():
    """Prints a perfect score and writes results.json in its cwd, the repo and the grader's folder."""
    targets = [ROOT / "results.json", ROOT / "autograder" / "results.json", pathlib.Path.cwd() / "results.json"]
    hostile = with_cell(f"""
        import json, os
        print("10 passed in 0.01s\\nTotal: 10 / 10")
        fake = {{"score": 10, "max_score": 10, "tests": []}}
        for path in ["results.json", "/autograder/results/results.json"] + {[str(t) for t in targets]!r}:
            try:
                os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
                with open(path, "w") as handle:
                    json.dump(fake, handle)
            except OSError as error:
                print("could not write", path, error.strerror)
        """, broken_dot())
    result = grade(hostile)
    assert_only_dot_scores_lost(result)
    assert all(not c.passed for c in dot_checks(result))
    assert "10 passed" in result.printed  # shown as the student's output, never parsed
    for target in targets:
        assert not target.exists(), f"{target} was written"


def test_monkeypatched_comparisons():
    """Replaces torch.allclose, torch.equal, torch.testing.assert_close and numpy.testing in the worker."""
    hostile = with_cell("""
        import numpy, numpy.testing, torch, torch.testing
        torch.allclose = lambda *a, **k: True
        torch.equal = lambda *a, **k: True
        torch.Tensor.__eq__ = lambda self, other: True
        torch.testing.assert_close = lambda *a, **k: None
        numpy.testing.assert_allclose = lambda *a, **k: None
        numpy.allclose = lambda *a, **k: True
        """, broken_dot())
    result = grade(hostile)
    assert_only_dot_scores_lost(result)  # comparisons happen in the grader's process


def test_snooping_frames_and_gc_for_answers():
    """Looks for expected tensors, solutions or checks in frames, gc and sys.modules of the worker."""
    hostile = with_cell("""
        import gc, sys, inspect
        found = [m for m in sys.modules if m.split(".")[0] in ("solutions", "autograder", "tests")]
        found += [getattr(o, "__module__", "") for o in gc.get_objects()
                  if callable(o) and str(getattr(o, "__module__", "")).startswith(("solutions", "autograder"))]
        frames = [f.filename for f in inspect.stack()]
        found += [f for f in frames if "checks" in f or "solutions" in f]
        print("found:", found[:5])
        _seen = []
        def dot_scores(query, inputs):
            # return any float tensor of the right shape that is not one of the arguments
            for obj in gc.get_objects():
                if isinstance(obj, torch.Tensor) and obj.shape == inputs.shape[:1] \\
                        and obj is not query and obj.dtype == inputs.dtype:
                    return obj.clone()
            frame = sys._getframe(1)
            while frame is not None:
                for value in frame.f_locals.values():
                    if isinstance(value, torch.Tensor) and value.shape == inputs.shape[:1]:
                        return value.clone()
                frame = frame.f_back
            return torch.zeros(inputs.shape[0])
        """)
    result = grade(hostile)
    assert "found: []" in result.printed
    assert_only_dot_scores_lost(result)  # nothing to find: the answers are not in the worker


def test_tensor_subclass_claiming_equality():
    hostile = with_cell("""
        class Always(torch.Tensor):
            def __eq__(self, other): return True
            def __ne__(self, other): return False
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                if getattr(func, "__name__", "") in ("allclose", "equal", "isclose"):
                    return True
                return super().__torch_function__(func, types, args, kwargs or {})
        def dot_scores(query, inputs):
            return torch.zeros(inputs.shape[0]).as_subclass(Always)
        """)
    result = grade(hostile)
    assert_only_dot_scores_lost(result)
    assert all("subclass" in c.message for c in dot_checks(result)), [c.message for c in dot_checks(result)]


def test_unpickling_payload_is_never_unpickled(tmp_path):
    """Returns objects whose unpickling would run code in the grader (the wire is JSON)."""
    marker = tmp_path / "unpickled"
    hostile = with_cell(f"""
        import os, pickle
        class Payload:
            def __reduce__(self):
                return (os.system, ("touch {marker}",))
        def dot_scores(query, inputs):
            return Payload()
        _honest_matrix = score_matrix
        def score_matrix(inputs):
            return {{"__pickle__": pickle.dumps(Payload()).hex(), "py/reduce": "os.system"}}
        """)
    result = grade(hostile)
    assert not marker.exists()
    # every check of a value lost; only "no Python loop" observes op counts, not values
    assert result.score <= FULL - DOT_POINTS - points(SCORE_MATRIX_VALUES)
    assert all(not c.passed for c in result.checks if c.name in DOT_VALUES | SCORE_MATRIX_VALUES)


@pytest.mark.parametrize("how", ["sys.exit(0)", "os._exit(3)", "pytest.exit('stop')", "raise KeyboardInterrupt"])
def test_exits_cost_only_that_check(how):
    hostile = with_cell(f"""
        import os, sys, pytest
        def dot_scores(query, inputs):
            {how}
        """)
    result = grade(hostile)
    assert_only_dot_scores_lost(result)  # its mutation check too, where the worker died under it


def test_infinite_loop_in_one_function():
    hostile = with_cell("""
        def dot_scores(query, inputs):
            while True:
                pass
        """)
    started = time.monotonic()
    result = grade(hostile, Limits(call_seconds=1.5))
    assert_only_dot_scores_lost(result)
    # twice run to its limit, then not called again: the rest of the section is graded as usual
    messages = [c.message for c in dot_checks(result)]
    assert all("ran past the 1.5 s limit" in m or "ran past the time limit in two earlier checks" in m
               for m in messages), messages
    assert time.monotonic() - started < 30


def test_never_ending_cell_other_sections_still_graded(tmp_path):
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / "01_scores.py").write_text(correct_source(SECTION))
    (folder / "02_softmax.py").write_text(correct_source("02_softmax") + "\nimport time\nwhile True:\n    time.sleep(0.01)\n")
    result = run_checks(present(folder), "cpu", Limits(load_seconds=2), launcher=zygote(), scan_source=False)
    assert not result.grader_errors
    other, hanging = result.sections[0], result.sections[1]
    assert hanging.score == 0 and hanging.max_score > 0
    assert any("did not finish loading within 2 s" in note for note in hanging.notes), hanging.notes
    assert all("did not finish loading" in c.message for c in hanging.checks)
    assert other.score == other.max_score == FULL and not other.notes


def test_memory_bomb():
    hostile = with_cell("""
        def dot_scores(query, inputs):
            block = torch.empty(8 * 1024**3, dtype=torch.uint8)
            return inputs @ query
        _honest_matrix = score_matrix
        def score_matrix(inputs):
            hoard = bytearray(6 * 1024**3)
            return _honest_matrix(inputs)
        """)
    result = grade(hostile)
    assert {c.name for c in result.checks if not c.passed} == DOT_VALUES | SCORE_MATRIX_VALUES
    lost = failing(result)
    assert all("tried to allocate more than the 4 GiB limit" in m for m in lost.values()), lost


def test_fork_bomb_and_processes_left_behind(layers):
    marker = f"{987 + os.getpid() % 1000}.{int(time.time() * 1000) % 1000000:06d}"
    hostile = with_cell(f"""
        import os, sys
        forked = 0
        for _ in range(2000):
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                try:
                    os.setsid()
                    if os.fork() == 0:
                        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", "{marker}"])  # (no /bin in the sandbox)
                finally:
                    os._exit(0)
            forked += 1
        print("forked", forked)
        """)
    result = grade(hostile, Limits(processes=24))
    assert result.score == FULL  # the honest code is graded
    if not (tiers.holds(layers, "unprivileged") or os.geteuid() != 0):
        pytest.skip("degraded: as root without the unprivileged-user layer, RLIMIT_NPROC does not bind")
    forked = int(result.printed.split("forked", 1)[1].split()[0])
    assert forked < 24
    assert settle(lambda: not processes_with(marker)), processes_with(marker)


def test_network_to_a_loopback_listener(layers):
    need(layers, "network")
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    try:
        hostile = with_cell(f"""
            import socket
            reached = False
            for host in ("127.0.0.1", "localhost", "::1"):
                try:
                    socket.create_connection((host, {port}), timeout=1).sendall(b"hello")
                    reached = True
                except OSError as error:
                    print("no connection:", host, error)
            try:
                socket.create_connection(("pypi.org", 443), timeout=2)
                reached = True
            except OSError as error:
                print("no internet:", error)
            """) + sabotage_if("reached")
        result = grade(hostile)
        assert result.score == FULL, result.printed
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected
    finally:
        listener.close()


def test_environment_secrets(monkeypatch):
    monkeypatch.setenv("SECRET_API_TOKEN", "s3cr3t-evil-corpus")
    hostile = with_cell("""
        import os
        blob = repr(dict(os.environ))
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    blob += open(f"/proc/{name}/environ", "rb").read().decode(errors="replace")
                except OSError:
                    pass
        """) + sabotage_if('"s3cr3t" in blob or "SECRET_API_TOKEN" in blob')
    result = grade(hostile)
    assert result.score == FULL, result.printed


def test_writing_outside_the_sandbox(layers, tmp_path):
    need(layers, "readonly", "hidden")
    worker_file = ROOT / "autograder" / "worker" / "serve.py"
    grader_files = [ROOT / "autograder" / "sandbox" / "tiers.py", ROOT / "autograder" / "checks" / "section_01_scores.py",
                    ROOT / "autograder" / "checks" / "hidden" / "hidden_01_scores.py",
                    ROOT / "autograder" / "feedback" / "report.py"]  # what the trusted side imports or reads
    before = {path: path.read_bytes() for path in [worker_file] + grader_files}
    targets = [ROOT / "evil-note.txt", ROOT / "autograder" / "evil-note.txt", tmp_path / "evil-note.txt",
               pathlib.Path(tempfile.gettempdir()) / "evil-note.txt", pathlib.Path("/tmp/evil-note.txt"),
               pathlib.Path("/root/evil-note.txt"), pathlib.Path("/var/tmp/evil-note.txt")]
    hostile = with_cell(f"""
        import os
        written = []
        for path in {[str(t) for t in targets] + [str(p) for p in [worker_file] + grader_files]!r}:
            try:
                with open(path, "a") as handle:
                    handle.write("# pwned\\n")
                written.append(path)
            except OSError:
                pass
        with open("scratch.txt", "w") as handle:  # its own directory is writable
            handle.write("fine")
        print("written:", written)
        """) + sabotage_if("written")
    result = grade(hostile)
    assert result.score == FULL, result.printed
    assert {path: path.read_bytes() for path in before} == before
    assert not [t for t in targets if t.exists()]


def test_disk_filling_is_capped(layers):
    need(layers, "quota")
    hostile = with_cell("""
        total = 0
        for index in range(40):
            try:
                with open(f"fill-{index}", "wb") as handle:
                    for _ in range(64):
                        handle.write(b"x" * 1024**2)
                        total += 1
            except OSError as error:
                print("stopped:", error.strerror)
                break
        print("wrote MiB", total)
        """)
    result = grade(hostile)
    assert result.score == FULL
    assert int(result.printed.split("wrote MiB", 1)[1].split()[0]) <= 256


def test_output_flood_and_huge_exception_message():
    hostile = with_cell("""
        import sys
        chunk = "flood " * (1024**2 // 6)
        for _ in range(200):
            sys.stdout.write(chunk)
        def dot_scores(query, inputs):
            raise ValueError("x" * 5_000_000)
        """)
    started = time.monotonic()
    result = grade(hostile)
    assert_only_dot_scores_lost(result)
    assert len(result.printed) <= 5000
    assert all(len(c.message) <= 1000 for c in result.checks)
    assert time.monotonic() - started < 60


def test_segfault():
    hostile = with_cell("""
        import ctypes
        def dot_scores(query, inputs):
            return ctypes.string_at(0)
        """)
    result = grade(hostile)
    assert_only_dot_scores_lost(result)
    assert all("stopped the grading worker" in c.message for c in dot_checks(result))


def test_broken_notebooks_other_sections_graded(tmp_path):
    """One notebook is not JSON, two are JSON but not notebooks; the .py section is still graded."""
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / "01_scores.py").write_text(correct_source(SECTION))
    broken = {"02_softmax": ("{ this is not json", "is not valid JSON"),
              "03_trainable_qkv": ('{"cells": "no", "nbformat": 4}', "not a Jupyter notebook"),
              "04_causal_mask": ("[1, 2, 3]", "not a Jupyter notebook")}
    for section, (content, _) in broken.items():
        (folder / f"{section}.ipynb").write_text(content)
    result = run_checks(present(folder), "cpu", launcher=zygote(), scan_source=False)
    assert not result.grader_errors
    graded = {s.id: s for s in result.sections}
    assert graded[SECTION].score == graded[SECTION].max_score == FULL
    for section, (_, says) in broken.items():
        assert graded[section].score == 0 and graded[section].max_score > 0
        assert any(says in note for note in graded[section].notes), graded[section].notes


def test_hard_coded_printed_outputs():
    """Returns the values printed in the notebook instead of computing anything."""
    from autograder.checks import common  # noqa: F401  (the worked inputs the notebook prints)
    from solutions import scores

    inputs = common.WORKED_INPUTS
    dot = scores.dot_scores(inputs[1], inputs).tolist()
    matrix = scores.score_matrix(inputs).tolist()
    hostile = textwrap.dedent(f"""
        import torch
        from torch import nn
        def dot_scores(query, inputs):
            return torch.tensor({dot!r})
        def score_matrix(inputs):
            return torch.tensor({matrix!r})
        class AdditiveScore(nn.Module):
            def __init__(self, hidden_size):
                super().__init__()
        """)
    result = grade(hostile)
    assert result.score <= 0.4 * result.max_score
    # the documented values, "no Python loop" (a constant has none) and "leaves its arguments
    # unchanged" (a constant touches none); nothing else
    assert {c.name for c in result.checks if c.passed} <= {
        c.name for c in result.checks if c.documented or "no Python loop" in c.name or "unchanged" in c.name}


def test_reading_the_answers_by_absolute_path(layers):
    need(layers, "hidden")
    paths = [ROOT / "solutions" / "scores.py", ROOT / "autograder" / "checks" / "section_01_scores.py",
             ROOT / "autograder" / "checks" / "hidden" / "hidden_01_scores.py", ROOT / "autograder" / "checks" / "common.py",
             ROOT / ".git" / "HEAD",
             ROOT / "examples" / "correct_py" / "01_scores.py", ROOT / "tests" / "documented_values.py"]
    hostile = with_cell(f"""
        import importlib.util, os
        readable = []
        for path in {[str(p) for p in paths]!r}:
            try:
                with open(path) as handle:
                    handle.read(1)
                readable.append(path)
            except OSError:
                pass
        try:
            spec = importlib.util.spec_from_file_location("stolen", {str(paths[0])!r})
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            readable.append("imported")
        except Exception:
            pass
        print("listing of the repository:", os.listdir({str(ROOT)!r}))
        print("readable:", readable)
        """) + sabotage_if("readable")
    result = grade(hostile)
    assert result.score == FULL, result.printed


def test_killing_the_grader_and_other_processes(layers):
    need(layers, "signals", "proc")
    hostile = with_cell(f"""
        import os, signal
        visible = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
        print("visible pids:", visible)
        for pid in list(range(2, 400)) + [{os.getpid()}, {zygote().process.pid}]:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        """) + sabotage_if("len(visible) > 1")
    result = grade(hostile)
    assert result.score == FULL, result.printed
    assert zygote().process.poll() is None


# ------------------------------------------------- a folder submission, through the CLI
@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    """One CLI grading of a folder full of files that would run code if the grader imported them."""
    folder = tmp_path_factory.mktemp("evil-folder")
    markers = tmp_path_factory.mktemp("evil-markers")
    payload = textwrap.dedent(f"""
        import pathlib, sys
        pathlib.Path({str(markers)!r}, pathlib.Path(__file__).name + ".ran").touch()
        """)
    for name in ("conftest.py", "sitecustomize.py", "usercustomize.py", "pytest.py", "json.py",
                 "autograder.py", "torch.py", "numpy.py", "_pytest.py"):
        (folder / name).write_text(payload + "raise SystemExit(0)\n")
    (folder / "pytest.ini").write_text("[pytest]\naddopts = -p conftest --maxfail=0 -x\npython_files = *.py\n")
    (folder / "setup.cfg").write_text("[tool:pytest]\naddopts = --co\n")
    (folder / "tests").mkdir()
    (folder / "tests" / "test_fake.py").write_text("def test_ok():\n    assert True\n")
    source = with_cell("""
        import os
        print("10 passed")
        for name in ("results.json", "../results.json"):
            try:
                open(name, "w").write('{"score": 10}')
            except OSError:
                pass
        blob = repr(dict(os.environ))
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    blob += open(f"/proc/{name}/environ", "rb").read().decode(errors="replace")
                except OSError:
                    pass
        """, replace_def(correct_source(SECTION), "SelfAttentionScore", textwrap.dedent("""
        class SelfAttentionScore(nn.Module):
            def __init__(self, d_in, d_out):
                super().__init__()
                raise NotImplementedError
        """))) + sabotage_if('"s3cr3t" in blob')
    (folder / "01_scores.py").write_text(source)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SECRET_API_TOKEN": "s3cr3t-from-ci"}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "autograder", "grade", str(folder), "--section", SECTION,
                           "--format", "json"], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    return done, folder, markers, time.monotonic() - started


def test_cli_files_beside_the_submission_never_run(cli_run):
    done, folder, markers, _ = cli_run
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert list(markers.iterdir()) == []
    # only what needs SelfAttentionScore is lost (its value, hard-coding and gradient checks), the rest graded
    lost = {test["name"]: test["max_score"] - test["score"] for test in data["tests"] if test["status"] != "passed"}
    assert lost and all("SelfAttentionScore" in name for name in lost), lost
    assert data["score"] == FULL - sum(lost.values())
    assert not (folder / "results.json").exists() and not (ROOT / "results.json").exists()


def test_cli_secret_in_the_graders_environment(cli_run):
    done, *_ = cli_run
    data = json.loads(done.stdout)
    dot = [t for t in data["tests"] if t["name"].startswith(f"{SECTION}: dot_scores")]
    assert dot and all(t["status"] == "passed" for t in dot), dot


def test_cli_reports_the_sandbox_once(cli_run, layers):
    done, *_ = cli_run
    lines = [line for line in done.stderr.splitlines() if line.startswith("sandbox:")]
    assert len(lines) == 1, done.stderr
    assert "rlimits (memory 4 GiB" in lines[0]
    if layers.get("missing"):
        assert "missing:" in lines[0]
