"""The grader's CUDA path, proven in one run on a machine with a GPU (run by ci/gpu_check.sh).

    python benchmarks/gpu_check.py [--output FILE] [--processes N] [--jobs N] [--catalogue all|N]
                                   [--suite FILE ...] [--steps parity,sandbox,...] [--deadline S] [--limit S]
                                   [--scaling-jobs 1,4,8,14] [--class-size 42]

Steps, in this order, each recorded with what it found (or why it was skipped), the findings
written after each one (`complete` says whether every step ran):

1. parity: `grade examples/correct` and `examples/partial` with --device cuda and --device cpu,
   compared check by check (score and message) and per section;
2. sandbox: the tier, the GPU seen from inside the confined worker (the namespaces tier, and the
   Landlock tier through tests/platforms.py's container where the machine can build it), and a
   worker that reaches neither the network nor another process's GPU memory;
3. catalogue: every catalogued mistake graded on both devices (a device mistake may lose more on
   the GPU, each extra loss naming it), and the GPU-only mistakes, each caught on the GPU;
4. batch: a class of copies of the examples graded by --jobs batch jobs sharing the device;
5. tests: the `gpu` tests (`pytest -m gpu tests/test_gpu.py tests/test_measure_tiles.py`);
6. timings: a CPU grade alone against `python -c "import torch"` (gpu_timing.py), the CUDA
   context's start-up apart;
7. scaling: a class of --class-size students graded on the CPU by `batch --jobs J` for each J of
   --scaling-jobs (gpu_timing.py): the `batch_scaling` table, the same grades at every J;
8. suite: the files of --suite, in the time left before --limit.

The budget, 480 s (ci/gpu_check.sh's limit), from what was measured: on the H200 machine (16
cores) parity took 50 s, sandbox 13, the whole catalogue 48, batch 40 (150 s), and the tests with
the suite did not end within the 330 s left, so the suite comes last and is stopped at --limit
(465 s), failed, the JSON written. On 2 loaded cores (load 5 to 6) the timings step took 34 s
(floor 4.9 s, grade 6.5 s, three each), and 42 students took 45 s at --jobs 1 (17 s idle).
Taking that machine's CPU grade as 4 times slower (11.9 s there against 2.8 s here): timings
about 3 x (5 + 12) = 51 s; scaling 42 students about 4 x 17 s = 70 s at J=1, then 30, 21 and
17 s at 4, 8 and 14 (a batch's start-up, about 12 s there, plus 70 / J): 140 s. 150 + the 4 gpu
tests (40 s, a guess) + 51 + 140 = 380 s, under the 420 s --deadline after which no step
starts; the suite gets the 85 s left.

Without a GPU it runs in CPU mode: every step that needs none runs on the CPU, the others are
listed under "skipped" with the reason, no CUDA figure is written, and the JSON goes to
benchmarks/results/gpu-check-cpu-mode.json (not committed) unless --output says otherwise.
Exit status: 0 when nothing failed, 1 when something did (the JSON's "failures" says what).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import gpu_catalogue  # noqa: E402
import gpu_compare  # noqa: E402
import gpu_isolation  # noqa: E402
import gpu_timing  # noqa: E402
from gpu_timing import run, step_timings  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
CUDA_OUTPUT = RESULTS / "gpu-check.json"
CPU_OUTPUT = RESULTS / "gpu-check-cpu-mode.json"
SUITE = ("tests/test_gpu_check.py", "tests/test_tiers.py", "tests/test_hostile_input.py")
EXAMPLES = ("correct", "partial")
NO_GPU = "no CUDA GPU on this machine"
STEPS = ("parity", "sandbox", "catalogue", "batch", "tests", "timings", "scaling", "suite")


def cuda_present() -> bool:
    os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")  # this process forks nothing after, but
    import torch  # the grading processes it starts inherit the way of asking (see core/options.py)

    return torch.cuda.is_available()


def environment(cuda: bool) -> dict:
    import torch

    found = {"cuda": cuda, "torch": torch.__version__, "python": platform.python_version(),
             "machine": f"{platform.system()} {platform.release()} {platform.machine()}",
             "cpus": os.cpu_count(), "root": os.geteuid() == 0}
    if cuda:
        found["device_name"] = torch.cuda.get_device_name(0)
        found["torch_cuda"] = torch.version.cuda
        found["driver"] = driver_version()
    return found


def driver_version() -> str:
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=60)
        if done.returncode == 0 and done.stdout.strip():
            return done.stdout.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        text = Path("/proc/driver/nvidia/version").read_text()
        match = re.search(r"Kernel Module\s+(\S+)", text)
        return match.group(1) if match else text.splitlines()[0]
    except OSError:
        return "unknown"


# ------------------------------------------------------------------------------------------- steps

def junit_counts(path: Path) -> dict:
    """passed / failed / skipped from a pytest JUnit file (errors count as failed)."""
    root = ElementTree.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else list(root)
    total = sum(int(s.get("tests", 0)) for s in suites)
    failed = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
    skipped = sum(int(s.get("skipped", 0)) for s in suites)
    return {"passed": total - failed - skipped, "failed": failed, "skipped": skipped}


def pytest_run(arguments: list[str], scratch: Path, name: str, timeout: float) -> dict:
    report = scratch / f"{name}.xml"
    done, seconds = run([sys.executable, "-m", "pytest", *arguments, "-q", "-rs", "-p", "no:cacheprovider",
                         f"--junitxml={report}"], timeout=timeout)
    counts = junit_counts(report) if report.exists() else {"passed": 0, "failed": 1, "skipped": 0}
    counts["seconds"] = round(seconds, 1)
    counts["tail"] = done.stdout.strip().splitlines()[-6:]
    return counts


def step_tests(cuda: bool, scratch: Path, record: dict, seconds_left: float = 300) -> None:
    """The `gpu` tests, the GPU proof's own (the suite runs apart, last: step_suite)."""
    gpu = pytest_run(["-m", "gpu", "tests/test_gpu.py", "tests/test_measure_tiles.py"], scratch, "gpu",
                     min(300.0, seconds_left))
    record["gpu_tests"] = gpu
    record["gpu_tests_passed"], record["gpu_tests_failed"] = gpu["passed"], gpu["failed"]
    if gpu["failed"]:
        record["failures"].append(f"{gpu['failed']} gpu tests failed: {gpu['tail']}")
    if not cuda:
        record["skipped"]["gpu tests"] = f"{NO_GPU}: pytest skipped all {gpu['skipped']} (not counted as passed)"
    elif gpu["skipped"] or not gpu["passed"]:
        record["failures"].append(f"with a GPU present, {gpu['skipped']} gpu tests were skipped and "
                                  f"{gpu['passed']} passed")


def step_suite(suite: list[str], scratch: Path, record: dict, seconds_left: float) -> None:
    """The suite that applies, in the time left before --limit (stopped then, and failed)."""
    if not suite:
        record["skipped"]["suite"] = "no test file asked for (--suite none)"
        return
    rest = pytest_run(list(suite), scratch, "suite", max(1.0, seconds_left))
    record["suite"] = {"files": list(suite), **rest}
    if rest["failed"] or not rest["passed"]:
        record["failures"].append(f"the suite: {rest['failed']} failed, {rest['passed']} passed: {rest['tail']}")


def grade(example: str, device: str, scratch: Path) -> tuple[dict, str, float]:
    """(report, sandbox line, seconds) of `grade examples/<example> --device <device>`."""
    out = scratch / f"{example}-{device}.json"
    done, seconds = run([sys.executable, "-m", "autograder", "grade", f"examples/{example}", "--device", device,
                         "--format", "json", "--output", str(out)], timeout=300)
    if done.returncode != 0 or not out.exists():
        raise RuntimeError(f"grade examples/{example} --device {device} exited {done.returncode}: "
                           f"{done.stderr.strip()[-600:]}")
    line = next((x for x in done.stderr.splitlines() if x.startswith("sandbox:")), "")
    return json.loads(out.read_text()), line, seconds


def step_parity(cuda: bool, scratch: Path, record: dict) -> None:
    devices = ["cpu", "cuda"] if cuda else ["cpu"]
    reports = {}
    for example in EXAMPLES:
        for device in devices:
            report, line, seconds = grade(example, device, scratch)
            reports[example, device] = report
            record["timings"][f"grade_{example}_{device}_s"] = round(seconds, 2)
            record["sandbox_lines"][device] = line
    record["scores_cpu"] = {e: gpu_compare.section_scores(reports[e, "cpu"]) for e in EXAMPLES}
    if not cuda:
        record["skipped"]["parity"] = f"{NO_GPU}: graded on the CPU only; scores_cuda not written"
        return
    record["scores_cuda"] = {e: gpu_compare.section_scores(reports[e, "cuda"]) for e in EXAMPLES}
    record["parity_differences"] = {e: gpu_compare.report_differences(reports[e, "cpu"], reports[e, "cuda"])
                                    for e in EXAMPLES}
    for example, differences in record["parity_differences"].items():
        if differences:
            record["failures"].append(f"examples/{example} grades differently on cuda: {differences[:3]}")
    full = reports["correct", "cuda"]
    if full.get("score") is None or full["score"] < full.get("max_score", 0):
        record["failures"].append(f"examples/correct on cuda: {full.get('score')} / {full.get('max_score')}")


def batch_table(device: str, scratch: Path, jobs: int) -> dict:
    """student -> {column: value} of grades.csv from `batch` over a class of copies of the examples,
    graded by `jobs` job processes at once (on "cuda": several jobs, and their workers, on one GPU)."""
    import csv
    import shutil

    submitted = scratch / "class"
    if not submitted.exists():
        for index in range(2 * jobs):
            shutil.copytree(ROOT / "examples" / EXAMPLES[index % 2], submitted / f"student{index:02d}")
    out = scratch / f"batch-{device}"
    done, seconds = run([sys.executable, "-m", "autograder", "batch", str(submitted), "--out", str(out),
                         "--jobs", str(jobs), "--device", device], timeout=420)
    if done.returncode != 0:
        raise RuntimeError(f"batch --device {device} exited {done.returncode}: {done.stderr.strip()[-600:]}")
    with open(out / "grades.csv", newline="") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    return {"rows": rows, "seconds": round(seconds, 2)}


def step_batch(cuda: bool, scratch: Path, jobs: int, record: dict) -> None:
    devices = ["cpu", "cuda"] if cuda else ["cpu"]
    tables = {device: batch_table(device, scratch, jobs) for device in devices}
    for device, table in tables.items():
        record["timings"][f"batch_{len(table['rows'])}_students_{jobs}_jobs_{device}_s"] = table["seconds"]
    expected = {e: sum(record["scores_cpu"][e].values()) for e in EXAMPLES} if "scores_cpu" in record else {}
    for device, table in tables.items():
        for student, row in table["rows"].items():
            example = EXAMPLES[int(student[-2:]) % 2]
            if expected and abs(float(row["total"]) - expected[example]) > 1e-9:
                record["failures"].append(f"batch --device {device}: {student} ({example}) scored {row['total']}, "
                                          f"grade gave {expected[example]}")
    if not cuda:
        record["skipped"]["batch on cuda"] = f"{NO_GPU}: {jobs} batch jobs graded on the CPU only"
        return
    differing = [s for s, row in tables["cpu"]["rows"].items()
                 if {k: v for k, v in row.items() if k != "sandbox"}
                 != {k: v for k, v in tables["cuda"]["rows"].get(s, {}).items() if k != "sandbox"}]
    record["batch_jobs_sharing_gpu"] = {"jobs": jobs, "students": len(tables["cuda"]["rows"]),
                                        "same_as_cpu": not differing}
    if differing:
        record["failures"].append(f"batch: {differing[:3]} grade differently with {jobs} jobs on cuda")


def step_catalogue(cuda: bool, per_section: int | None, processes: int, record: dict) -> None:
    cases = gpu_catalogue.catalogue_cases(per_section)
    second = "cuda" if cuda else "cpu"
    wanted = [(s, m, d) for s, m in cases for d in ("cpu", second)]
    wanted += [(s, m, d) for s, m in gpu_catalogue.GPU_ONLY for d in ("cpu", second)]
    started = time.perf_counter()
    graded = gpu_catalogue.grade_cases(sorted(set(wanted)), processes)
    record["timings"]["catalogue_s"] = round(time.perf_counter() - started, 1)
    lost_cpu = {gpu_catalogue.key(s, m): graded[s, m, "cpu"] for s, m in cases}
    lost_other = {gpu_catalogue.key(s, m): graded[s, m, second] for s, m in cases}
    differences, device = gpu_compare.catalogue_differences(lost_cpu, lost_other)
    record["catalogue_cases"] = len(cases)
    if cuda:
        record["catalogue_same"] = not differences
        record["catalogue_differences"] = differences
        record["catalogue_device_mistakes"] = device
        if differences:
            record["failures"].append(f"the catalogue grades differently on cuda: {differences[:3]}")
    else:  # the same comparison, the CPU against itself: it shows the machinery and that grading is repeatable
        record["catalogue_cpu_repeat_same"] = not differences
        record["skipped"]["catalogue on cuda"] = (f"{NO_GPU}: {len(cases)} mistakes graded twice on the CPU "
                                                  "and compared; catalogue_same not written")
        if differences:
            record["failures"].append(f"the catalogue grades differently in two CPU runs: {differences[:3]}")
    gpu_only = {}
    for section_id, mistake_id in gpu_catalogue.GPU_ONLY:
        lost = graded[section_id, mistake_id, second]
        entry = {"lost_on_cpu": sorted(graded[section_id, mistake_id, "cpu"])}
        if cuda:
            caught, why = gpu_compare.gpu_mistake_caught(lost)
            entry.update(caught_on_cuda=caught, why=why)
            if not caught:
                record["failures"].append(f"{gpu_catalogue.key(section_id, mistake_id)} on cuda: {why}")
        gpu_only[gpu_catalogue.key(section_id, mistake_id)] = entry
    record["gpu_only_mistakes"] = gpu_only
    if not cuda:
        record["skipped"]["GPU-only mistakes on cuda"] = f"{NO_GPU}: graded on the CPU only (what a CPU sees)"


def step_sandbox(cuda: bool, scratch: Path, record: dict) -> None:
    done, _ = run([sys.executable, "-m", "autograder.sandbox"], timeout=120)
    record["sandbox_probe"] = done.stdout.strip().splitlines()[-3:]
    line = record["sandbox_lines"].get("cuda" if cuda else "cpu", "")
    match = re.match(r"sandbox: tier (\w+)", line)
    record["tier"] = match.group(1) if match else "unknown"
    if cuda:
        record["gpu_in_worker"] = re.search(r"GPU [^,]*\([^)]*\)", line).group(0) if "GPU " in line else ""
        if not record["gpu_in_worker"]:
            record["failures"].append(f"the cuda grading's sandbox line names no GPU: {line}")
    found = gpu_isolation.isolation("cuda" if cuda else "cpu")
    record["isolation"] = found
    record["failures"] += gpu_isolation.verdict(found, "cuda" if cuda else "cpu")
    if not cuda:
        record["skipped"]["GPU memory isolation"] = f"{NO_GPU}: network and processes probed on the CPU only"
    landlock_tier(cuda, scratch, record)


def landlock_tier(cuda: bool, scratch: Path, record: dict) -> None:
    """The Landlock tier, as in a container run as root: tests/platforms.py builds one from the
    kernel's own mechanisms, where this machine lets it (root with every capability)."""
    sys.path.insert(0, str(ROOT / "tests"))
    import platforms

    reason = platforms.can_emulate()
    if reason:
        record["skipped"]["Landlock tier"] = f"the container platform cannot be built here: {reason}"
        return
    device = "cuda" if cuda else "cpu"
    out = scratch / "landlock.json"
    done = platforms.run("container-root", [sys.executable, "-m", "autograder", "grade", "examples/correct",
                                            "--section", "04_causal_mask", "--device", device, "--format", "json",
                                            "--output", str(out)],
                         env={"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))},
                         cwd=str(ROOT), timeout=300)
    line = next((x for x in done.stderr.splitlines() if x.startswith("sandbox:")), "")
    record["landlock_line"] = line or done.stderr.strip()[-400:]
    if done.returncode != 0 or not out.exists():
        if "tier none" in done.stderr or "Landlock" in done.stderr and "not available" in done.stderr:
            record["skipped"]["Landlock tier"] = f"this kernel gives no Landlock tier: {done.stderr.strip()[-300:]}"
            return
        record["failures"].append(f"grading in the container platform exited {done.returncode}: "
                                  f"{done.stderr.strip()[-300:]}")
        return
    report = json.loads(out.read_text())
    if report.get("score") != report.get("max_score") or "tier landlock" not in line:
        record["failures"].append(f"the Landlock tier: {report.get('score')} / {report.get('max_score')}; {line}")
    if cuda and "GPU " not in line:
        record["failures"].append(f"the Landlock tier's worker saw no GPU: {line}")


# --------------------------------------------------------------------------------------------- main

def positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return int(text)


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, help=f"the JSON file (default {CUDA_OUTPUT.relative_to(ROOT)} "
                                                    f"with a GPU, {CPU_OUTPUT.relative_to(ROOT)} without)")
    parser.add_argument("--processes", type=int, default=min(8, os.cpu_count() or 1),
                        help="processes grading the catalogue (default %(default)s)")
    parser.add_argument("--catalogue", default=None,
                        help="'all', or how many mistakes of each section (default: all with a GPU, 1 without)")
    parser.add_argument("--suite", nargs="*", default=None,
                        help=f"test files of the suite that applies (default: {' '.join(SUITE)}; none: no file)")
    parser.add_argument("--jobs", type=int, default=4, help="batch jobs sharing the device (default %(default)s)")
    parser.add_argument("--deadline", type=float, default=420,
                        help="seconds after which no further step starts (default %(default)s)")
    parser.add_argument("--limit", type=float, default=465,
                        help="seconds by which the tests and the suite are stopped, failed, so that the JSON "
                             "is written before ci/gpu_check.sh's 480 (default %(default)s)")
    parser.add_argument("--scaling-jobs", type=gpu_timing.jobs_option, default=gpu_timing.SCALING_JOBS,
                        help="the batch --jobs values of the scaling step, comma-separated (default "
                             f"{','.join(map(str, gpu_timing.SCALING_JOBS))}; those above the CPU count are skipped)")
    parser.add_argument("--class-size", type=positive, default=gpu_timing.CLASS_SIZE,
                        help="students in the scaling step's class (default %(default)s)")
    parser.add_argument("--steps", default=",".join(STEPS),
                        help="which steps to run, comma-separated (default: all)")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse(argv)
    cuda = cuda_present()
    started = time.perf_counter()
    record = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              **environment(cuda), "mode": "cuda" if cuda else "cpu", "tier": "unknown",
              "timings": {}, "sandbox_lines": {}, "skipped": {}, "failures": []}
    per_section = None if (args.catalogue or ("all" if cuda else "1")) == "all" else int(args.catalogue or 1)
    suite = list(SUITE) if args.suite is None else [f for f in args.suite if f != "none"]
    steps = set(args.steps.split(","))
    output = args.output or (CUDA_OUTPUT if cuda else CPU_OUTPUT)
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as folder:
        scratch = Path(folder)
        # the GPU proof first, then the CPU's timings, the suite last in the time left (the module's
        # docstring says why); each step's findings are written at once, so a run stopped at its
        # time limit still leaves what it found

        def left() -> float:
            return args.limit - (time.perf_counter() - started)

        for name, step in (("parity", lambda: step_parity(cuda, scratch, record)),
                           ("sandbox", lambda: step_sandbox(cuda, scratch, record)),
                           ("catalogue", lambda: step_catalogue(cuda, per_section, args.processes, record)),
                           ("batch", lambda: step_batch(cuda, scratch, args.jobs, record)),
                           ("tests", lambda: step_tests(cuda, scratch, record, left())),
                           ("timings", lambda: step_timings(cuda, record)),
                           ("scaling", lambda: gpu_timing.step_scaling(scratch, args.scaling_jobs,
                                                                       args.class_size, record)),
                           ("suite", lambda: step_suite(suite, scratch, record, left()))):
            if name not in steps:
                record["skipped"][name] = "not asked for (--steps)"
                continue
            if time.perf_counter() - started > args.deadline:
                record["skipped"][name] = f"not run: past the deadline of {args.deadline:g} s"
                record["failures"].append(f"{name}: not run, past the deadline")
                continue
            step_started = time.perf_counter()
            print(f"gpu_check: {name} ...", file=sys.stderr, flush=True)
            try:
                step()
            except Exception as error:  # one broken step is a failure to report, not the end of the run
                record["failures"].append(f"{name}: {type(error).__name__}: {str(error)[:600]}")
            record["timings"][f"step_{name}_s"] = round(time.perf_counter() - step_started, 1)
            write(record, output, complete=False)
    record["timings"]["total_s"] = round(time.perf_counter() - started, 1)
    write(record, output, complete=True)
    summary(record, output)
    return 0 if record["passed"] else 1


def write(record: dict, output: Path, complete: bool) -> None:
    """The findings so far; `passed` only once every step has run and none failed."""
    record["complete"] = complete
    record["passed"] = complete and not record["failures"]
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(record, indent=2) + "\n")


def summary(record: dict, output: Path) -> None:
    print(f"gpu_check: mode {record['mode']}, torch {record['torch']}, python {record['python']}, "
          f"tier {record['tier']}" + (f", {record.get('device_name')}, driver {record.get('driver')}"
                                      if record["cuda"] else ""))
    if record.get("gpu_in_worker"):
        print(f"  the worker's GPU: {record['gpu_in_worker']}")
    if record.get("landlock_line"):
        print(f"  in the container platform: {record['landlock_line'][:110]}")
    for what, why in record["skipped"].items():
        print(f"  skipped: {what}: {why}")
    for key, value in record["timings"].items():
        print(f"  {key}: {value}")
    if record.get("batch_scaling"):
        print(gpu_timing.scaling_text(record["batch_scaling"]))
    for failure in record["failures"]:
        print(f"  FAILED: {failure}")
    print(f"gpu_check: {'passed' if record['passed'] else 'FAILED'}; written to {output}")


if __name__ == "__main__":
    sys.exit(main())
