"""The GPU check (benchmarks/gpu_check.py) and the grader's GPU handling, proven on any machine.

Each comparison of the check is shown to fail when the two devices disagree, the
check's CPU mode runs end to end and writes no CUDA figure, and the worker's GPU
handling (TF32, the context's start, the memory cap) is exercised where it can be
without a GPU: its failure to find one is reported, never raised or hidden.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch
from support import ROOT, zygote

sys.path.insert(0, str(ROOT / "benchmarks"))

import gpu_check  # noqa: E402
import gpu_compare  # noqa: E402

from autograder.core.extract import tampering  # noqa: E402
from autograder.core.grade import gpu_unreachable  # noqa: E402
from autograder.worker import gpu  # noqa: E402
from autograder.checks.common import run_where_made  # noqa: E402
from autograder.core.harness import CheckFailed  # noqa: E402
from autograder.core.hints import DEVICE_MISTAKES, RETURNED_ELSEWHERE  # noqa: E402
from autograder.core.student import refuse_failed_call  # noqa: E402
from autograder.core.harness import StudentFailure  # noqa: E402
from autograder.sandbox.limits import Limits  # noqa: E402
from autograder.sandbox.layer_words import in_force, refused  # noqa: E402

MIX_HINT, NUMPY_HINT = (hint for _, hint in DEVICE_MISTAKES)


def described(label: str, message: str) -> StudentFailure:
    """What a check says when the student's call raised with `message`."""
    with pytest.raises(StudentFailure) as raised:
        refuse_failed_call(label, {"ok": False, "error": {"kind": "raised", "type": "RuntimeError",
                                                          "message": message}})
    return raised.value


def report(*tests, total=None):
    rows = [{"name": name, "score": score, "output": output, "tags": [name.split(":")[0]]}
            for name, score, output in tests]
    return {"score": sum(r["score"] for r in rows) if total is None else total, "tests": rows}


CPU_REPORT = report(("01_scores: a", 2.0, ""), ("01_scores: b", 0.0, "wrong values"), ("02_softmax: c", 1.5, ""))


# --------------------------------------------------------------------------- comparisons

def test_identical_reports_have_no_difference():
    assert gpu_compare.report_differences(CPU_REPORT, json.loads(json.dumps(CPU_REPORT))) == []
    assert gpu_compare.section_scores(CPU_REPORT) == {"01_scores": 2.0, "02_softmax": 1.5}


def test_a_score_that_differs_between_devices_is_a_difference():
    on_gpu = report(("01_scores: a", 2.0, ""), ("01_scores: b", 1.0, ""), ("02_softmax: c", 1.5, ""))
    differences = gpu_compare.report_differences(CPU_REPORT, on_gpu)
    assert any("01_scores: b: 0.0 on cpu, 1.0 on cuda" in d for d in differences), differences
    assert any(d.startswith("total:") for d in differences)


def test_a_message_that_differs_between_devices_is_a_difference():
    on_gpu = report(("01_scores: a", 2.0, ""), ("01_scores: b", 0.0, "raised RuntimeError"), ("02_softmax: c", 1.5, ""))
    assert gpu_compare.report_differences(CPU_REPORT, on_gpu) == [
        "01_scores: b: the messages differ: 'wrong values' on cpu, 'raised RuntimeError' on cuda"]


def test_a_check_missing_on_one_device_is_a_difference():
    on_gpu = report(("01_scores: a", 2.0, ""), ("01_scores: b", 0.0, "wrong values"), total=3.5)
    assert gpu_compare.report_differences(CPU_REPORT, on_gpu) == ["02_softmax: c: only in the cpu report"]


def test_a_mistake_losing_other_checks_on_the_gpu_is_a_difference():
    same = {"m1": {"check x": "wrong values"}}
    assert gpu_compare.catalogue_differences(same, same) == ([], [])
    differences, _ = gpu_compare.catalogue_differences(same, {"m1": {"check x": "w", "check y": "raised"}})
    assert differences == ["m1: lost only on the CPU [], only on the GPU ['check y']"]
    differences, _ = gpu_compare.catalogue_differences(same, {})
    assert differences == ["m1: not graded on the GPU"]


def test_a_device_mistake_may_lose_more_on_the_gpu_only_with_a_message_naming_it():
    on_cpu = {"m": {"X works on any device: no tensor created on the CPU in forward": "after .to(device)"}}
    named = {**on_cpu["m"], "X gives the documented values": f"X.forward: {MIX_HINT} (X.forward raised RuntimeError)"}
    differences, device = gpu_compare.catalogue_differences(on_cpu, {"m": named})
    assert differences == [] and device == ["m: 1 checks lost on the CPU, 2 on the GPU"]
    bare = {**on_cpu["m"], "X gives the documented values": "X.forward raised RuntimeError: ..."}
    differences, _ = gpu_compare.catalogue_differences(on_cpu, {"m": bare})
    assert len(differences) == 1 and "without naming the device mistake" in differences[0]
    differences, _ = gpu_compare.catalogue_differences(on_cpu, {"m": {}})
    assert len(differences) == 1 and "on the CPU but not on the GPU" in differences[0]


def test_a_value_mistake_made_on_the_cpu_may_lose_more_on_the_gpu_only_naming_the_device():
    # a hard-coded answer, made on the CPU: no meta-device check covers it, a GPU shows it
    on_cpu = {"m": {"X gives the documented values": "wrong values"}}
    elsewhere = f"X returned a tensor on cpu while its inputs were on cuda. {RETURNED_ELSEWHERE}"
    on_gpu = {"m": {**on_cpu["m"], "X leaves its input unchanged": elsewhere}}
    differences, device = gpu_compare.catalogue_differences(on_cpu, on_gpu)
    assert differences == [] and device == ["m: 1 checks lost on the CPU, 2 on the GPU, the extra ones "
                                            "naming a device mistake"]
    bare = {"m": {**on_cpu["m"], "X leaves its input unchanged": "X raised RuntimeError: ..."}}
    differences, _ = gpu_compare.catalogue_differences(on_cpu, bare)
    assert differences == ["m: lost only on the CPU [], only on the GPU ['X leaves its input unchanged']"]


def test_a_device_check_names_the_mistake_when_the_plain_call_breaks_on_the_gpu():
    """On a GPU a mask made on the CPU breaks the call on the grading device already: the device check
    fails there, naming its mistake, instead of leaving the error to the value checks."""
    def raising(message):
        def run(*args, **kwargs):
            raise described("causal_mask", message)
        return run

    mixed = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
    with pytest.raises(CheckFailed) as failed:
        run_where_made(raising(mixed), 5, mistake="mask made on the CPU", advice="make it on x.device")
    assert failed.value.mistake == "mask made on the CPU" and MIX_HINT in str(failed.value)
    assert run_where_made(raising("shapes cannot be multiplied"), 5, mistake="m", advice="a") is None
    assert run_where_made(lambda *a, **k: "reply", 5, mistake="m", advice="a") == "reply"


def test_the_zygote_warms_up_without_a_backward_pass():
    """A backward pass in the zygote starts the CUDA driver there (autograd asks every device type
    for its devices), and no child forked from it can then use the GPU (seen on an H200)."""
    script = (f"import runpy; runpy.run_path({str(ROOT / 'autograder' / 'worker' / 'boot.py')!r})['load']()\n"
              "import torch\nfrom worker import serve\n"
              "def refuse(*a, **k): raise AssertionError('a backward pass in the zygote')\n"
              "torch.Tensor.backward = refuse; torch.autograd.backward = refuse\n"
              "serve.warm_up('cpu'); serve.warm_up('meta'); print('warmed')")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "warmed" in done.stdout, done.stderr[-1500:]


def test_a_gpu_only_mistake_is_caught_only_with_a_message_naming_it():
    assert gpu_compare.gpu_mistake_caught({})[0] is False
    assert gpu_compare.gpu_mistake_caught({"c": "softmax raised TypeError: ..."})[0] is False
    assert gpu_compare.gpu_mistake_caught({"c": f"softmax: {NUMPY_HINT} (softmax raised TypeError: ...)"})[0] is True
    shortened = f"after .to(device), softmax: {NUMPY_HINT}"[:80]  # a check may quote a failure shortened
    assert gpu_compare.gpu_mistake_caught({"c": shortened})[0] is True


# --------------------------------------------------------------------------- the device mistakes' messages

@pytest.mark.parametrize("message, hint", [
    # what torch says on a GPU (its own words, from a CUDA run) and on the meta device (raised here)
    ("Expected all tensors to be on the same device, but got mat2 is on cpu, different from other tensors "
     "on cuda:0 (when checking argument in method wrapper_CUDA_mm)", MIX_HINT),
    ("Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!", MIX_HINT),
    ("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory "
     "first.", NUMPY_HINT),
    ("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)", None),
])
def test_a_device_error_is_named_in_the_students_terms(message, hint):
    failure = described("CausalAttention.forward", message)
    if hint is None:
        assert not any(h in failure.message for _, h in DEVICE_MISTAKES), failure.message
        assert failure.message == f"CausalAttention.forward raised RuntimeError: {message}"
    else:  # the mistake named first, torch's own words after (the call named once: the check's words name it too)
        assert failure.message == f"{hint} (CausalAttention.forward raised RuntimeError: {message})", failure.message


def test_the_meta_devices_own_mixing_error_is_named_too():
    with pytest.raises(RuntimeError) as raised:
        torch.ones(2, 3, device="meta") + torch.ones(2, 3)
    failure = described("f", str(raised.value))
    assert MIX_HINT in failure.message


def test_touching_the_gpu_memory_cap_is_refused_by_the_source_scan():
    cells = [{"label": "code cell 1", "source": "import torch\ntorch.cuda.set_per_process_memory_fraction(1.0)\n"}]
    assert any("GPU memory cap" in line for line in tampering(cells))
    assert tampering([{"label": "code cell 1", "source": "import torch\nx = torch.ones(2, device='cuda')\n"}]) == []


# --------------------------------------------------------------------------- the worker on a GPU

@pytest.fixture
def precision():
    """torch's TF32 settings as they were, restored the way the worker restores them."""
    cudnn_tf32 = torch.backends.cudnn.allow_tf32
    yield
    gpu.full_precision()
    torch.backends.cudnn.allow_tf32 = cudnn_tf32


TF32_ON = {  # each way a notebook may turn TF32 on (the older flags, the newer settings, both)
    "allow_tf32": "torch.backends.cuda.matmul.allow_tf32 = True",
    "matmul precision": "torch.set_float32_matmul_precision('high')",
    "fp32_precision": "torch.backends.cuda.matmul.fp32_precision = 'tf32'",
    "global fp32_precision": "torch.backends.fp32_precision = 'tf32'",
    "cudnn": "torch.backends.cudnn.allow_tf32 = True; torch.backends.cudnn.conv.fp32_precision = 'tf32'",
    "both": "torch.backends.cuda.matmul.allow_tf32 = True; torch.backends.cuda.matmul.fp32_precision = 'tf32'",
}


def tf32_on_or_mixed() -> bool:
    """TF32 on, or the two sets of settings mixed (torch raises at the next matrix product)."""
    try:
        return not gpu.tf32_off()
    except RuntimeError:
        return True


@pytest.mark.parametrize("way", TF32_ON.values(), ids=TF32_ON.keys())
def test_full_precision_turns_tf32_off_again_between_calls(way, precision, monkeypatch):
    exec(way, {"torch": torch})
    assert tf32_on_or_mixed()
    gpu.between_calls("cuda", 0)
    assert tf32_on_or_mixed(), "no CUDA context here: nothing to change yet"
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    gpu.between_calls("cpu", 0)
    assert tf32_on_or_mixed(), "grading on the CPU: the settings are the notebook's"
    gpu.between_calls("cuda", 0)
    assert gpu.tf32_off()  # and reading them did not raise: the two sets of settings agree


def test_the_memory_cap_is_a_fraction_of_the_gpu(monkeypatch):
    set_to = []
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda _: type("P", (), {"total_memory": 80 * 1024**3}))
    monkeypatch.setattr(torch.cuda, "set_per_process_memory_fraction", lambda f: set_to.append(f))
    assert gpu.cap_memory(4 * 1024**3) == {"gib": 4.0, "total_gib": 80.0}
    assert gpu.cap_memory(0) is None and set_to == [0.05]
    gpu.cap_memory(200 * 1024**3)
    assert set_to == [0.05, 1.0]


def test_prepare_reports_a_gpu_it_cannot_start_and_never_raises(monkeypatch):
    assert gpu.prepare("cpu", 0) == ([], [])

    def no_driver():
        raise RuntimeError("Found no NVIDIA driver on your system")

    monkeypatch.setattr(gpu, "warm", no_driver)
    layers, missing = gpu.prepare("cuda", 0)
    assert layers == [] and missing == [{"id": "gpu", "error": "RuntimeError: Found no NVIDIA driver on your system"}]
    assert refused(missing[0]) == "GPU (RuntimeError: Found no NVIDIA driver on your system)"


def test_a_cuda_worker_reports_the_gpu_from_inside_its_sandbox():
    """Through the real zygote: the child starts CUDA once confined, before its report. Without a GPU
    the report names the GPU as missing (and grading on cuda then fails as the grader's error);
    with one, the GPU is a layer, and the context is started before any timed call."""
    z = zygote()
    z.spawn(Limits(), {"names": [], "device": "cuda", "gpu_memory_bytes": 1024**3}).kill()
    report = z.sandbox
    if torch.cuda.is_available():
        assert any(in_force(layer).startswith("GPU ") and "context started" in in_force(layer)
                   for layer in report["layers"]), report
        assert gpu_unreachable(report, "cuda") == ""
    else:
        assert any(refused(m).startswith("GPU (") for m in report["missing"]), report
        assert gpu_unreachable(report, "cuda").startswith("--device cuda: the sandboxed worker could not use the GPU")
    assert gpu_unreachable(report, "cpu") == ""


# --------------------------------------------------------------------------- the check itself

def test_the_check_reports_a_score_mismatch_between_devices_as_a_failure(monkeypatch, tmp_path):
    def grade(example, device, scratch):
        rows = [("01_scores: a", 2.0, ""), ("01_scores: b", 1.0 if device == "cuda" else 0.0, "")]
        return report(*rows), f"sandbox: tier namespaces: on {device}", 1.0

    monkeypatch.setattr(gpu_check, "grade", grade)
    record = {"timings": {}, "sandbox_lines": {}, "skipped": {}, "failures": []}
    gpu_check.step_parity(True, tmp_path, record)
    assert record["scores_cpu"]["correct"] == {"01_scores": 2.0}
    assert record["scores_cuda"]["correct"] == {"01_scores": 3.0}
    assert [f.split(":")[0] for f in record["failures"]] == ["examples/correct grades differently on cuda",
                                                             "examples/partial grades differently on cuda"]


def test_skipped_gpu_tests_are_never_counted_as_passed(monkeypatch, tmp_path):
    monkeypatch.setattr(gpu_check, "pytest_run",
                        lambda *a: {"passed": 0, "failed": 0, "skipped": 2, "seconds": 1.0, "tail": []})
    record = {"skipped": {}, "failures": []}
    gpu_check.step_tests(True, tmp_path, record)
    assert record["gpu_tests_passed"] == 0
    assert record["failures"] == ["with a GPU present, 2 gpu tests were skipped and 0 passed"]
    record = {"skipped": {}, "failures": []}
    gpu_check.step_tests(False, tmp_path, record)
    assert record["failures"] == [] and "not counted as passed" in record["skipped"]["gpu tests"]


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU: the check runs its CUDA mode there")
def test_the_cpu_mode_runs_and_writes_no_cuda_figure(tmp_path):
    out = tmp_path / "check.json"
    done = subprocess.run([sys.executable, "benchmarks/gpu_check.py", "--steps", "parity", "--output", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    record = json.loads(out.read_text())
    assert record["cuda"] is False and record["mode"] == "cpu" and record["passed"] is True
    for figure in ("scores_cuda", "catalogue_same", "device_name", "driver", "gpu_tests_passed"):
        assert figure not in record, figure
    assert record["scores_cpu"]["correct"]["01_scores"] == 10.0
    assert record["skipped"]["parity"].startswith("no CUDA GPU on this machine")
    assert "skipped: parity: no CUDA GPU" in done.stdout


def test_comparisons_that_name_no_device_take_the_grading_devices_tolerance():
    """Most checks compare without naming a device: on a GPU they must allow for its arithmetic
    (grade.run_checks sets the grading device), and on a CPU stay as strict as ever."""
    from autograder.core.harness import close, grading_device

    expected = torch.linspace(1.0, 2.0, 8)
    actual = expected * (1 + 5e-5)  # a float32 rounding difference between two devices' kernels, and more
    assert not close(actual, expected)
    previous = grading_device("cuda")
    try:
        assert close(actual, expected)
        assert not close(actual, expected, "cpu"), "a device named by the check still decides"
        assert not close(expected * (1 + 5e-3), expected), "the GPU's tolerance is no licence for wrong values"
    finally:
        grading_device(previous)
    assert not close(actual, expected)


def test_the_drivers_library_folders_stay_readable_in_both_tiers(tmp_path, monkeypatch):
    """A GPU image may find libcuda through LD_LIBRARY_PATH: the worker gets the variable, and both
    tiers keep its folders readable, but never one holding the answers or the grader."""
    from autograder.sandbox.limits import minimal_env
    from autograder.worker import allowed, landlock

    driver = tmp_path / "nvidia" / "lib64"
    driver.mkdir(parents=True)
    answers = tmp_path / "course"
    (answers / "solutions").mkdir(parents=True)
    workdir = tmp_path / "work"
    workdir.mkdir()
    here = str(ROOT / "autograder" / "worker")
    monkeypatch.setenv("LD_LIBRARY_PATH", f"{driver}:{answers}:relative/lib:/:{ROOT}")
    assert minimal_env()["LD_LIBRARY_PATH"] == f"{driver}:{answers}:relative/lib:/:{ROOT}"
    assert allowed.library_folders(here) == [str(driver.resolve())]
    read = landlock.plan(str(workdir), str(ROOT), [], [sys.prefix], here)["read"]
    assert str(driver.resolve()) in read and str(answers.resolve()) not in read
    granted = allowed.plan(str(workdir), str(ROOT), [], [sys.prefix], here)["read"]  # the new root's
    assert str(driver.resolve()) in granted and str(answers.resolve()) not in granted


def test_the_students_uid_keeps_only_the_group_that_opens_a_restricted_gpu(monkeypatch):
    """The worker drops every group; where the GPU's device files open for their group only, it
    keeps that group, or the GPU could not be reached from the sandbox at all."""
    import os
    import stat

    from autograder.worker import namespaces

    assert namespaces.gpu_groups("/dev/null") == []  # 0666, as the usual /dev/nvidia*: no group needed
    restricted = os.stat_result((stat.S_IFCHR | 0o660, 0, 0, 1, 0, 44, 0, 0, 0, 0))
    real_stat = os.stat
    monkeypatch.setattr(os, "stat", lambda path, *a, **k: restricted if path == "/dev/null" else real_stat(path, *a, **k))
    assert namespaces.gpu_groups("/dev/null") == [44]
    assert namespaces.gpu_groups("/dev/no-such-gpu*") == []


def test_a_failed_or_unfinished_step_makes_the_check_fail(monkeypatch, tmp_path):
    """Its exit status and its JSON: 1 and passed false when a step failed; a step past the deadline
    is not run and counts as failed, never as passed."""
    def broken(cuda, record):
        raise RuntimeError("the machine fell over")

    monkeypatch.setattr(gpu_check, "step_timings", broken)
    out = tmp_path / "check.json"
    assert gpu_check.main(["--steps", "timings", "--output", str(out)]) == 1
    record = json.loads(out.read_text())
    assert record["complete"] is True and record["passed"] is False
    assert record["failures"] == ["timings: RuntimeError: the machine fell over"]
    assert gpu_check.main(["--steps", "timings", "--deadline", "-1", "--output", str(out)]) == 1
    record = json.loads(out.read_text())
    assert record["failures"] == ["timings: not run, past the deadline"] and record["passed"] is False


def test_the_scaling_step_grades_a_small_class_alike_at_every_jobs_count(monkeypatch, tmp_path):
    """Three students (correct, partial, blank) by `batch --jobs 1` and `--jobs 2` on the CPU:
    one row a J with every figure, the same grades at both, and a J above the CPU count skipped."""
    import os

    import gpu_timing

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    record = {"timings": {}, "sandbox_lines": {}, "skipped": {}, "failures": []}
    gpu_timing.step_scaling(tmp_path, (1, 2, 3), 3, record)
    scaling = record["batch_scaling"]
    assert record["failures"] == [] and scaling["kinds"] == {"correct": 1, "partial": 1, "blank": 1}
    assert [row["jobs"] for row in scaling["rows"]] == [1, 2]
    for row in scaling["rows"]:
        assert set(row) == {"jobs", "students", "wall_s", "students_per_s", "cpu_s_per_student", "same_grades"}
        assert row["students"] == 3 and row["same_grades"] is True and row["cpu_s_per_student"] > 0
        assert row["students_per_s"] == pytest.approx(3 / row["wall_s"], rel=0.05)
    assert record["skipped"] == {"batch scaling at 3 jobs": "more jobs than this machine's 2 CPUs"}
    assert "same grades" in gpu_timing.scaling_text(scaling)


def test_a_jobs_count_that_grades_a_student_differently_is_a_failure(monkeypatch, tmp_path):
    import os

    import gpu_timing

    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    def graded_batch(submitted, out, jobs):
        grades = {f"student{i:03d}": {"student": f"student{i:03d}", "total": "70.0"} for i in range(3)}
        if jobs == 4:
            grades["student001"] = {"student": "student001", "total": "69.5"}
        return {"wall_s": 2.0, "cpu_s": 3.0, "grades": grades}

    monkeypatch.setattr(gpu_timing, "graded_batch", graded_batch)
    record = {"skipped": {}, "failures": []}
    gpu_timing.step_scaling(tmp_path, (1, 4), 3, record)
    assert [row["same_grades"] for row in record["batch_scaling"]["rows"]] == [True, False]
    assert record["failures"] == ["batch scaling: with --jobs 4, 1 students grade differently from --jobs 1: "
                                  "['student001']"]


@pytest.mark.parametrize("option", [["--scaling-jobs", "1,0"], ["--scaling-jobs", "four"], ["--class-size", "0"]])
def test_the_scaling_options_refuse_a_bad_value_in_one_line(option, tmp_path):
    done = subprocess.run([sys.executable, "benchmarks/gpu_check.py", *option, "--output", str(tmp_path / "x.json")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "expected" in done.stderr.strip().splitlines()[-1]
    assert not (tmp_path / "x.json").exists()


def test_a_suite_stopped_at_the_limit_is_a_failure_and_the_findings_are_written(monkeypatch, tmp_path):
    def pytest_run(arguments, scratch, name, timeout):
        assert timeout <= 5
        raise subprocess.TimeoutExpired(["pytest"], timeout)

    monkeypatch.setattr(gpu_check, "pytest_run", pytest_run)
    out = tmp_path / "check.json"
    assert gpu_check.main(["--steps", "suite", "--limit", "5", "--output", str(out)]) == 1
    record = json.loads(out.read_text())
    assert record["complete"] is True and record["passed"] is False
    assert [f.split(":")[0] for f in record["failures"]] == ["suite"] and "TimeoutExpired" in record["failures"][0]


@pytest.mark.slow
def test_the_cuda_branches_run_end_to_end_with_the_cpu_standing_in(monkeypatch, tmp_path):
    """The check's CUDA branches, which only a GPU machine runs for real, rehearsed here with every
    "cuda" grading done on the CPU: the comparisons then find the devices equal; of the GPU-only
    mistakes, the three masks on the CPU are named by the checks run on the meta device, and
    .numpy(), which a CPU cannot show, is reported as not caught, as it must be."""
    import gpu_catalogue

    real_grade, real_cases = gpu_check.grade, gpu_catalogue.grade_cases
    monkeypatch.setattr(gpu_check, "grade", lambda example, device, scratch: real_grade(example, "cpu", scratch))

    def on_cpu(cases, processes):
        graded = real_cases(sorted({(s, m, "cpu") for s, m, _ in cases}), 1)
        return {(s, m, d): graded[s, m, "cpu"] for s, m, d in cases}

    monkeypatch.setattr(gpu_catalogue, "grade_cases", on_cpu)
    record = {"timings": {}, "sandbox_lines": {}, "skipped": {}, "failures": []}
    gpu_check.step_parity(True, tmp_path, record)
    assert record["scores_cuda"] == record["scores_cpu"] and record["failures"] == []
    gpu_check.step_catalogue(True, 1, 1, record)
    assert record["catalogue_same"] is True and record["catalogue_cases"] == 7
    assert [f.split(" on cuda:")[0] for f in record["failures"]] == ["02_softmax: .numpy() on the input"]
    assert sum(entry["caught_on_cuda"] for entry in record["gpu_only_mistakes"].values()) == 3


# ------------------------------------------------- ci/gpu_check.sh: the wheels a GPU machine lacks

def fake_wheel(folder, distribution: str, module: str) -> None:
    """A wheel of `distribution` holding the package `module`, which says where it was imported from."""
    import zipfile

    info = f"{distribution}-1.0.dist-info"
    with zipfile.ZipFile(folder / f"{distribution}-1.0-py3-none-any.whl", "w") as wheel:
        wheel.writestr(f"{module}/__init__.py", "FROM = __file__\n")
        wheel.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 1.0\n")
        wheel.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        wheel.writestr(f"{info}/RECORD", "")


@pytest.fixture(scope="module")
def python_without_ipython(tmp_path_factory):
    """A Python with pip and without IPython, as a GPU machine's may be."""
    venv = tmp_path_factory.mktemp("gpu-python") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300)
    return venv / "bin" / "python"


def gpu_check_tree(tmp_path):
    """ci/gpu_check.sh in a tree of its own, beside a stand-in for the check that reports IPython's home."""
    import shutil

    (tmp_path / "ci").mkdir()
    shutil.copy(ROOT / "ci" / "gpu_check.sh", tmp_path / "ci" / "gpu_check.sh")
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "gpu_check.py").write_text("import IPython\nprint('IPython from', IPython.FROM)\n")
    return tmp_path


def test_the_gpu_check_installs_what_the_python_lacks_from_the_prepared_wheels(tmp_path, python_without_ipython):
    tree = gpu_check_tree(tmp_path)
    wheels = tree / ".gpu-wheels"  # where ci/prepare_gpu_wheels.sh puts them
    wheels.mkdir()
    fake_wheel(wheels, "ipython", "IPython")
    fake_wheel(wheels, "pip", "pip_copy")  # a distribution this Python has: its own stays in charge
    done = subprocess.run(["bash", "ci/gpu_check.sh"], cwd=tree, capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "PYTHON": str(python_without_ipython)})
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"IPython from {tree / '.gpu-site' / 'IPython' / '__init__.py'}" in done.stdout
    assert "(1 wheels)" in done.stderr and not (tree / ".gpu-site" / "pip_copy").exists()


def test_the_gpu_check_without_ipython_or_prepared_wheels_says_what_to_run(tmp_path, python_without_ipython):
    tree = gpu_check_tree(tmp_path)
    done = subprocess.run(["bash", "ci/gpu_check.sh"], cwd=tree, capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "PYTHON": str(python_without_ipython)})
    assert done.returncode == 2 and "bash ci/prepare_gpu_wheels.sh" in done.stderr, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
