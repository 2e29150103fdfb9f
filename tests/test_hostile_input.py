"""Hostile input on the trusted side: what the grader reads, parses and believes.

The worker is confined (test_evil_corpus.py, test_platforms.py); these cases
aim at the trusted process instead: links and special files in a submission,
malformed notebooks, forged worker replies, calls that add up to hours, code
that hides from the grader's watch, and honest code that changes torch's
defaults. Each case asserts what the student gets and that the rest of the
submission is still graded.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time

import pytest
from support import EXAMPLES, ROOT, check_max_points, correct_source, grade_source, replace_def, zygote

from autograder.core.files import Refused, from_spreadsheet_safe, read_inside, safe_filename
from autograder.core.grade import run_checks
from autograder.core.submission import locate
from autograder.worker import wire
from autograder.sandbox.limits import Limits
from autograder.sandbox.zygote import Child

SECTIONS = sorted(p.stem for p in (EXAMPLES / "correct").glob("*.ipynb"))


def grade_cli(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)


def by_section(result) -> dict:
    return {section.id: section for section in result.sections}


# ----------------------------------------------------------------- links and special files
@pytest.fixture
def linked_submission(tmp_path):
    """A folder whose first three sections point elsewhere; the others are the correct notebooks."""
    folder = tmp_path / "student"
    folder.mkdir()
    for section in SECTIONS[3:]:
        shutil.copy(EXAMPLES / "correct" / f"{section}.ipynb", folder)
    # an absolute link through /proc/self/cwd, as a student who knows the grader's layout would
    os.symlink(f"/proc/self/cwd/examples/correct/{SECTIONS[0]}.ipynb", folder / f"{SECTIONS[0]}.ipynb")
    # a relative link into a classmate's folder (nbgrader's layout: a linked directory)
    classmate = tmp_path / "classmate" / SECTIONS[1]
    classmate.mkdir(parents=True)
    shutil.copy(EXAMPLES / "correct" / f"{SECTIONS[1]}.ipynb", classmate)
    os.symlink(f"../classmate/{SECTIONS[1]}", folder / SECTIONS[1])
    # a host file, whose text would come back in a NameError
    os.symlink("/etc/hostname", folder / f"{SECTIONS[2]}.py")
    return folder


def test_links_are_refused_with_a_note_and_the_rest_is_graded(linked_submission):
    result = run_checks(locate(linked_submission), "cpu", launcher=zygote())
    sections = by_section(result)
    for section in SECTIONS[:3]:
        assert sections[section].score == 0, section
        assert any("symbolic link" in note for note in sections[section].notes), sections[section].notes
    for section in SECTIONS[3:]:
        assert sections[section].score == sections[section].max_score > 0, section
    hostname = open("/etc/hostname").read().strip() if os.path.exists("/etc/hostname") else "\0"
    text = json.dumps(result.to_gradescope())
    assert hostname not in text


def test_links_to_the_solutions_earn_nothing(tmp_path):
    folder = tmp_path / "student"
    folder.mkdir()
    for path in sorted((ROOT / "solutions").glob("*.py")):
        section = next((s for s in SECTIONS if path.stem in s), None)
        if section:
            os.symlink(f"/proc/self/cwd/solutions/{path.name}", folder / f"{section}.py")
    result = run_checks(locate(folder), "cpu", launcher=zygote())
    assert result.score == 0


def test_the_grade_verb_refuses_a_link_and_grades_the_rest(linked_submission):
    done = grade_cli("grade", linked_submission, "--format", "json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    earned = sum(t["score"] for t in result["tests"] if t["tags"][0] in SECTIONS[3:])
    assert earned == result["score"] > 0


def test_a_fifo_or_a_folder_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "01_scores.ipynb")
    (tmp_path / "02_softmax.ipynb").mkdir()
    for name, says in (("01_scores.ipynb", "pipe"), ("02_softmax.ipynb", "folder")):
        with pytest.raises(Refused, match=says):
            read_inside(tmp_path, name)


def test_read_inside_caps_the_size_and_never_leaves_the_folder(tmp_path):
    (tmp_path / "big.ipynb").write_bytes(b"x" * 2048)
    with pytest.raises(Refused, match="larger|MB"):
        read_inside(tmp_path, "big.ipynb", limit=1024)
    with pytest.raises(Refused, match="inside"):
        read_inside(tmp_path, "../etc/passwd")
    assert read_inside(tmp_path, "big.ipynb") == b"x" * 2048


REFUSALS = [  # (how the file is made, the English words kept as they always read)
    (lambda folder: os.symlink("/etc/hostname", folder / "x.ipynb"), "is a symbolic link"),
    (lambda folder: os.mkfifo(folder / "x.ipynb"), "is a pipe (FIFO)"),
    (lambda folder: (folder / "x.ipynb").mkdir(), "is a folder"),
    (lambda folder: (folder / "x.ipynb").write_bytes(b"x" * 2048), "files over 0 MB are not graded"),
    (lambda folder: None, "could not be read (No such file or directory)"),
]


@pytest.mark.parametrize("make, english", REFUSALS, ids=["link", "fifo", "folder", "too-big", "missing"])
def test_a_refusal_is_said_in_the_readers_language(tmp_path, make, english):
    """What a Chinese student reads when a file is refused is Chinese, the file's name aside;
    English reads as it always read."""
    from autograder import i18n

    make(tmp_path)
    with pytest.raises(Refused) as refused:
        read_inside(tmp_path, "x.ipynb", limit=1024)
    assert english in str(refused.value)
    i18n.set_language("zh")
    try:
        with pytest.raises(Refused) as refused:
            read_inside(tmp_path, "x.ipynb", limit=1024)
    finally:
        i18n.set_language("en")
    words = str(refused.value).replace("x.ipynb", "")
    assert words.strip() and not re.findall(r"[A-Za-z]{2,}", re.sub(r"FIFO|\bMB\b", "", words)), words


# ----------------------------------------------------------------- malformed notebooks
def test_a_deeply_nested_notebook_costs_only_its_section(tmp_path):
    folder = tmp_path / "student"
    shutil.copytree(EXAMPLES / "correct", folder)
    (folder / f"{SECTIONS[0]}.ipynb").write_text("[" * 200_000 + "]" * 200_000)
    done = grade_cli("grade", folder, "--format", "json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    # every section but the first keeps all its points (a bonus check's own points are in extra_data)
    kept = {section: (sum(t["score"] for t in result["tests"] if t["tags"][0] == section),
                      sum(check_max_points(t) for t in result["tests"] if t["tags"][0] == section))
            for section in SECTIONS}
    assert kept[SECTIONS[0]] == (0, kept[SECTIONS[0]][1]) and kept[SECTIONS[0]][1] > 0
    assert all(score == full > 0 for section, (score, full) in kept.items() if section != SECTIONS[0]), kept
    assert "nested too deeply" in result["output"]


@pytest.mark.parametrize("cells, says", [
    ('{"cells": 3}', "not a Jupyter notebook"),
    ('{"cells": [{"cell_type": "code", "source": [1, 2], "metadata": []}]}', None),
    ('{"cells": [' + ",".join(['{"cell_type": "markdown"}'] * 6000) + "]}", "cells"),
])
def test_malformed_notebooks_are_one_clear_message(cells, says):
    from autograder.core.extract import from_notebook

    extracted = from_notebook("01_scores.ipynb", cells.encode())
    if says is None:
        assert extracted.problem is None and extracted.cells[0]["source"].strip() == ""
    else:
        assert says in extracted.problem


# ----------------------------------------------------------------- forged replies
@pytest.mark.parametrize("line, why", [
    (b"[]", "not an object"),
    (b'{"ok": true, "cells": "x"}', "cells"),
    (b'{"ok": true, "ops": -1}', "ops"),
    (b'{"ok": false, "error": {"message": ["x"]}}', "error"),
    (b'{"ok": true, "surprise": 1}', "surprise"),
    (b'{"ok": false, "error": {"kind": "memory", "limit_bytes": "4 GiB"}}', "error"),  # a figure, never words
    (b'{"ok": false, "error": {"kind": "memory", "limit_bytes": -1}}', "error"),
    (b'{"ok": false, "error": {"kind": "memory", "limit_bytes": true}}', "error"),
    (b"[" + b"{}," * 300_000 + b"{}]", "too many"),
])
def test_replies_of_the_wrong_shape_are_refused(line, why):
    with pytest.raises(wire.WireError, match=why):
        wire.loads_reply(line)


def test_a_forged_45_mib_reply_is_refused_quickly_and_small():
    import resource

    line = b"[" + b"{}," * (15 * 1024 * 1024) + b"{}]"
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.process_time()
    with pytest.raises(wire.WireError):
        wire.loads_reply(line)
    assert time.process_time() - started < 1.0
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100 * 1024  # KiB: < 100 MiB


def test_receiving_a_reply_in_small_chunks_is_linear():
    """The old loop copied its whole buffer on every chunk: 32 MiB in 64 KiB pieces took seconds."""
    ours, theirs = socket.socketpair()
    read_fd, write_fd = os.pipe()
    os.close(write_fd)
    child = Child(pid=0, conn=ours, out_fd=read_fd, workdir="")
    payload = wire.dumps({"ok": True, "printed": "x" * (32 * 1024 * 1024)})

    def send():
        for start in range(0, len(payload), 65536):
            theirs.sendall(payload[start:start + 65536])

    import threading

    sender = threading.Thread(target=send)
    sender.start()
    started = time.monotonic()
    reply, status = child.request({"op": "noop"}, timeout=30)
    elapsed = time.monotonic() - started
    sender.join()
    ours.close()
    theirs.close()
    assert status == "ok" and len(reply["printed"]) == 32 * 1024 * 1024
    assert elapsed < 5.0, f"{elapsed:.1f} s to receive 32 MiB"


FORGER = """
import os as _os
_honest_dot = dot_scores
def dot_scores(query, inputs):
    out = _honest_dot(query, inputs)
    for fd in range(3, 12):  # the worker's channel is one of these: write a reply of the wrong shape
        try:
            _os.write(fd, b'[1, 2, 3]\\n')
        except OSError:
            pass
    return out
"""


def test_forged_replies_cost_only_the_forger_and_never_fail_the_grader():
    source = correct_source("01_scores") + "\n" + FORGER
    section = grade_source("01_scores", source, scan_source=False)  # asserts no grader errors
    dot = [c for c in section.checks if c.name.startswith("dot_scores")]
    assert dot and all(not c.passed for c in dot)
    assert section.score < section.max_score
    scanned = grade_source("01_scores", source)
    assert scanned.score == 0 and "os.write" in scanned.checks[0].message


# ----------------------------------------------------------------- time budgets
SLOW = """
import time as _time
_honest_dot = dot_scores
def dot_scores(query, inputs):
    _time.sleep(0.6)
    return _honest_dot(query, inputs)
"""


def test_slow_calls_stop_at_the_section_budget():
    source = correct_source("01_scores") + "\n" + SLOW
    limits = Limits(call_seconds=1.0, section_seconds=1.0, submission_seconds=60)
    started = time.monotonic()
    section = grade_source("01_scores", source, limits=limits)
    assert time.monotonic() - started < 10
    budget = [c for c in section.checks if c.kind == "budget"]
    assert budget, [c.message for c in section.checks]
    assert "section's 1 s time budget" in budget[0].message
    assert any("time budget" in note for note in section.notes)


def test_the_submission_budget_bounds_all_sections_together(tmp_path):
    folder = tmp_path / "slow"
    shutil.copytree(EXAMPLES / "correct", folder)
    for notebook in folder.glob("*.ipynb"):
        data = json.loads(notebook.read_text())
        data["cells"].append({"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                              "source": "import time as _t\n_t.sleep(0.8)\n"})
        notebook.write_text(json.dumps(data))
    started = time.monotonic()
    done = grade_cli("grade", folder, "--format", "json", "--submission-budget", "2.5")
    assert time.monotonic() - started < 40
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert "submission's 2.5 s time budget" in result["output"] or any(
        "submission's 2.5 s" in t["output"] for t in result["tests"])
    assert 0 < result["score"] < sum(check_max_points(t) for t in result["tests"])  # full marks: every check's points


@pytest.mark.parametrize("flag", ["--section-budget", "--submission-budget"])
def test_budget_flags_are_checked(flag):
    done = grade_cli("grade", EXAMPLES / "correct", flag, "0")
    assert done.returncode == 2 and flag in done.stderr and len(done.stderr.strip().splitlines()) == 1


# ----------------------------------------------------------------- hiding from the watch
HIDDEN_SOFTMAX = """
def softmax(x, dim=-1):
    from torch.utils._python_dispatch import _disable_current_modes
    fetched = getattr(torch, "softmax")
    with _disable_current_modes():
        return fetched(x, dim)
"""

COMPUTED_GETATTR = """
def softmax(x, dim=-1):
    name = "soft" + "max"
    return getattr(torch, name)(x, dim)
"""


@pytest.mark.parametrize("code, finding", [
    (HIDDEN_SOFTMAX, "_python_dispatch"),
    (COMPUTED_GETATTR, "computed attribute name"),
    ("import gc\n_everything = gc.get_objects()\n", "import gc"),
    ("import sys\n_frame = sys._getframe()\n", "_getframe"),
    ("_C = torch._C\n", "torch._C"),
])
def test_reaching_into_the_watch_zeroes_the_section_and_is_flagged(code, finding):
    source = correct_source("02_softmax")
    source = replace_def(source, "softmax", code) if code.startswith("\ndef softmax") else source + "\n" + code
    section = grade_source("02_softmax", source)
    assert section.score == 0
    assert all(c.kind == "tampering" for c in section.checks)
    assert finding in section.checks[0].message
    assert any("flagged for the instructor" in note for note in section.notes)


def test_the_tamper_scan_never_flags_the_course_own_code():
    from autograder.core.extract import tampering

    for folder in sorted(p for p in EXAMPLES.iterdir() if p.is_dir()) + [ROOT / "student_template"]:
        for source in locate(folder):
            assert tampering(source.extracted.cells) == [], (folder.name, source.section.id)
    for path in sorted((ROOT / "solutions").glob("*.py")):
        assert tampering([{"label": path.name, "source": path.read_text()}]) == [], path.name


# ----------------------------------------------------------------- honest code, changed defaults
def test_a_float64_default_in_the_notebook_is_not_a_grader_error():
    source = "import torch\ntorch.set_default_dtype(torch.float64)\n" + correct_source("03_trainable_qkv")
    section = grade_source("03_trainable_qkv", source)  # asserts no grader errors
    assert section.score == section.max_score, {c.name: c.message for c in section.checks if not c.passed}


# ----------------------------------------------------------------- ids and file names
@pytest.mark.parametrize("student", ["alice", "NA", "x" * 250, "../up", "=cmd|' /C calc'!A0", ".hidden",
                                     "a b", "ünï", ""])
def test_safe_filename_is_stable_valid_and_collision_free(student):
    name = safe_filename(student)
    assert name == safe_filename(student)
    assert 0 < len(name) <= 100 and "/" not in name and not name.startswith(".")
    others = {safe_filename(other) for other in ("alice", "NA", "x" * 249, "up", "a_b", "cmd") if other != student}
    assert name not in others


def test_batch_keeps_odd_ids_verbatim_and_refuses_linked_folders(tmp_path):
    import pandas as pd

    submitted = tmp_path / "submitted"
    names = ["NA", "None", "null", "y" * 250, "=SUM(A1)"]
    for name in names:
        (submitted / name).mkdir(parents=True)
        shutil.copy(EXAMPLES / "correct" / "01_scores.ipynb", submitted / name)
    os.symlink(submitted / "NA", submitted / "copycat")
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "autograder", "batch", str(submitted), "--out", str(out),
                           "--section", "01_scores", "--jobs", "1"], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "copycat: a link" in done.stderr
    table = pd.read_csv(out / "grades.csv", dtype=str, keep_default_na=False)
    assert "'=SUM(A1)" in set(table["student"])  # shown as text by a spreadsheet, never evaluated
    assert sorted(map(from_spreadsheet_safe, table["student"])) == sorted(names)
    assert set(table["total"]) == {"10.0"}
    report = subprocess.run([sys.executable, "-m", "autograder", "report", str(out), "--out", str(tmp_path / "r")],
                            capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert report.returncode == 0, report.stderr
    problems = (tmp_path / "r" / "class_problems.csv").read_text(encoding="utf-8")
    assert "=SUM" not in problems  # every id found its results file: no problem listed
    for path in (out / "students").glob("*.json"):
        assert len(path.name) <= 120
    again = subprocess.run([sys.executable, "-m", "autograder", "batch", str(submitted), "--out", str(out),
                            "--section", "01_scores", "--jobs", "1"], capture_output=True, text=True,
                           cwd=ROOT, timeout=300)
    assert again.returncode == 0 and f"0 graded, {len(names)} unchanged" in again.stdout


def test_batch_records_a_student_over_budget_as_graded_and_keeps_it(tmp_path):
    submitted = tmp_path / "submitted" / "slowpoke"
    submitted.mkdir(parents=True)
    (submitted / "01_scores.py").write_text(correct_source("01_scores") + "\n" + SLOW)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "autograder", "batch", str(submitted.parent), "--out", str(out),
               "--section", "01_scores", "--jobs", "1", "--section-budget", "1", "--call-timeout", "1"]
    first = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert first.returncode == 0, first.stderr
    assert "0 with grader errors" in first.stdout
    again = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert "0 graded, 1 unchanged" in again.stdout


def test_student_timeout_must_exceed_the_submission_budget(tmp_path):
    done = grade_cli("batch", tmp_path, "--student-timeout", "100", "--submission-budget", "300")
    assert done.returncode == 2 and "--submission-budget" in done.stderr


def test_a_lone_surrogate_in_a_cell_is_noted_and_the_section_still_graded(tmp_path):
    """JSON may carry "\\ud800", which no UTF-8 encoder accepts: replaced, noted, never the grader's failure."""
    notebook = json.loads((EXAMPLES / "correct" / "02_softmax.ipynb").read_text())
    cell = next(c for c in notebook["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "softmax")
    cell["source"] = "note = '\ud800'\n" + "".join(cell["source"])
    (tmp_path / "02_softmax.ipynb").write_text(json.dumps(notebook))
    result = run_checks(locate(tmp_path), "cpu", None, launcher=zygote())
    assert not result.grader_errors, result.grader_errors
    section = by_section(result)["02_softmax"]
    assert section.score == section.max_score
    assert any("lone surrogates" in note for note in section.notes), section.notes
