"""The comparisons of the GPU check (benchmarks/gpu_check.py): one grading against another, check by check.

Pure functions over what the grader outputs (its `--format json` report, or
title -> message of the checks a mistake lost), so that the project's tests can
show that each one fails when it should, on a machine without a GPU.
"""
from __future__ import annotations

from autograder.core.hints import DEVICE_HINTS

DEVICE_CHECK = "device"  # the titles of the checks that judge device handling (run on the meta device)


def checks(report: dict) -> dict:
    """check name -> (score, message) from a `grade --format json` report."""
    return {test["name"]: (test.get("score"), test.get("output", "")) for test in report.get("tests", [])}


def section_scores(report: dict) -> dict:
    """section id -> the points it earned, from a `grade --format json` report."""
    scores: dict = {}
    for test in report.get("tests", []):
        section = (test.get("tags") or [test["name"].split(":")[0]])[0]
        scores[section] = round(scores.get(section, 0.0) + float(test.get("score") or 0), 6)
    return scores


def report_differences(first: dict, second: dict, names=("cpu", "cuda")) -> list[str]:
    """Every check whose score or message differs between two reports of one submission ([] if none)."""
    a, b = checks(first), checks(second)
    differences = [f"{name}: only in the {names[0]} report" for name in a if name not in b]
    differences += [f"{name}: only in the {names[1]} report" for name in b if name not in a]
    for name in (n for n in a if n in b):
        (score_a, message_a), (score_b, message_b) = a[name], b[name]
        if score_a != score_b:
            differences.append(f"{name}: {score_a} on {names[0]}, {score_b} on {names[1]}")
        elif message_a != message_b:
            differences.append(f"{name}: the messages differ: {message_a[:160]!r} on {names[0]}, "
                               f"{message_b[:160]!r} on {names[1]}")
    if first.get("score") != second.get("score"):
        differences.append(f"total: {first.get('score')} on {names[0]}, {second.get('score')} on {names[1]}")
    return differences


def is_device_mistake(lost_on_cpu: dict) -> bool:
    """A mistake in device handling: on a CPU it costs only the device checks (run on the meta
    device); on a GPU it breaks the calls it is in, so it costs more there, by design."""
    return any(DEVICE_CHECK in title for title in lost_on_cpu)


def names_device_mistake(message: str) -> bool:
    """Whether a check's message names the device mistake: the opening words of one of
    hints.DEVICE_HINTS (a check may quote a failure shortened)."""
    return any(hint[:40] in message for hint in DEVICE_HINTS)


def catalogue_differences(lost_cpu: dict, lost_gpu: dict) -> tuple[list[str], list[str]]:
    """(differences, device findings) for the catalogue graded on both devices.

    lost_cpu, lost_gpu: mistake id -> {check title: message} of the checks it lost there.
    A mistake must lose exactly the same checks on both devices, except a device mistake
    (`is_device_mistake`): it must lose at least its CPU checks on the GPU, and every check it
    loses there besides must say which device mistake it is (a clear message, not a bare
    RuntimeError). Such a mistake goes to the device findings, whatever the verdict."""
    differences, device = [], []
    for mistake, on_cpu in lost_cpu.items():
        if mistake not in lost_gpu:
            differences.append(f"{mistake}: not graded on the GPU")
            continue
        on_gpu = lost_gpu[mistake]
        if is_device_mistake(on_cpu):
            kept = sorted(set(on_cpu) - set(on_gpu))
            unclear = sorted(t for t in set(on_gpu) - set(on_cpu) if not names_device_mistake(on_gpu[t]))
            device.append(f"{mistake}: {len(on_cpu)} checks lost on the CPU, {len(on_gpu)} on the GPU")
            if kept:
                differences.append(f"{mistake}: loses {kept} on the CPU but not on the GPU")
            if unclear:
                differences.append(f"{mistake}: on the GPU {unclear} lose points without naming the "
                                   f"device mistake: {on_gpu[unclear[0]][:200]!r}")
        elif set(on_cpu) != set(on_gpu):
            only_cpu, only_gpu = sorted(set(on_cpu) - set(on_gpu)), sorted(set(on_gpu) - set(on_cpu))
            if not only_cpu and all(names_device_mistake(on_gpu[t]) for t in only_gpu):
                # a device mistake besides (a hard-coded answer made on the CPU, weights kept as plain
                # tensors) that no meta-device check covers: on a GPU it costs more, each loss naming it
                device.append(f"{mistake}: {len(on_cpu)} checks lost on the CPU, {len(on_gpu)} on the GPU, "
                              "the extra ones naming a device mistake")
                continue
            differences.append(f"{mistake}: lost only on the CPU {only_cpu}, only on the GPU {only_gpu}")
    differences += [f"{mistake}: not graded on the CPU" for mistake in lost_gpu if mistake not in lost_cpu]
    return differences, device


def gpu_mistake_caught(lost: dict) -> tuple[bool, str]:
    """(caught, why) for a submission with a mistake only a GPU shows, graded on the GPU: it must
    lose points, and a check must name the device mistake in its message."""
    if not lost:
        return False, "no check lost points"
    named = [title for title, message in lost.items() if names_device_mistake(message)]
    if not named:
        first = next(iter(lost))
        return False, f"{len(lost)} checks lost points, none naming the mistake; e.g. {first}: {lost[first][:200]!r}"
    return True, f"{len(lost)} checks lost points; {len(named)} name the mistake, e.g. {named[0]}: {lost[named[0]][:200]!r}"
