"""Grade the catalogue of common mistakes (tests/catalogues/mistakes_<id>.py) on a device, in parallel processes.

Each process grades its share with one zygote of its own (tests/support.py),
so a catalogue costs a torch import per process, not one per mistake. What
comes back is plain data: case -> {check title: message} of the checks lost.
"""
from __future__ import annotations

import sys
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The mistakes that only a real GPU shows (they pass on a CPU but for the checks run on the meta
# device): four from the catalogue, and .numpy() on a GPU tensor, which no CPU can show at all.
GPU_ONLY = (
    ("04_causal_mask", "mask built on the CPU inside forward"),
    ("04_causal_mask", "mask kept as a plain attribute, not a buffer"),
    ("06_multihead", "mask made on the CPU in forward"),
    ("08_efficient_mha", "fused: mask made on the CPU in forward"),
    ("09_kv_cache", "mask made on the CPU in forward"),
    ("10_grouped_query", "mask made on the CPU in forward"),
    ("02_softmax", ".numpy() on the input"),
)
NUMPY_SOFTMAX = '''
def softmax(x, dim=-1):
    import numpy as np
    values = x.numpy()
    e = np.exp(values - values.max(axis=dim, keepdims=True))
    return torch.from_numpy(e / e.sum(axis=dim, keepdims=True))
'''


def _on_path() -> None:
    for place in (str(ROOT / "tests"), str(ROOT)):
        if place not in sys.path:
            sys.path.insert(0, place)


def mistake_source(section_id: str, mistake_id: str) -> str:
    """The correct example of the section with the named mistake in it."""
    _on_path()
    from catalogues import CATALOGUES
    from support import Mistake

    if mistake_id == ".numpy() on the input":
        return Mistake(mistake_id, {"softmax": NUMPY_SOFTMAX}, []).source(section_id)
    found = [m for m in CATALOGUES[section_id].MISTAKES if m.id == mistake_id]
    if len(found) != 1:
        raise KeyError(f"{section_id}: the catalogue has {len(found)} mistakes named {mistake_id!r}")
    return found[0].source(section_id)


def catalogue_cases(per_section: int | None = None) -> list[tuple[str, str]]:
    """(section id, mistake id) of every catalogued mistake, or of the first `per_section` of each section."""
    _on_path()
    from catalogues import CATALOGUES

    return [(section_id, mistake.id) for section_id, catalogue in CATALOGUES.items()
            for mistake in catalogue.MISTAKES[:per_section]]


def lost_checks(case: tuple[str, str, str]) -> dict:
    """{check title: message} of the checks that lost points, for (section, mistake, device)."""
    section_id, mistake_id, device = case
    _on_path()
    from support import failing, grade_source

    try:
        return failing(grade_source(section_id, mistake_source(section_id, mistake_id), device=device))
    except Exception as error:  # the grader's own failure: a difference the comparison must show
        return {"(the grader failed)": f"{type(error).__name__}: {error}"[:500]}


def grade_cases(cases: list[tuple[str, str, str]], processes: int) -> dict:
    """(section, mistake, device) -> lost checks, graded in `processes` fresh processes (spawned:
    a fork of a process that has used the GPU could not use it again)."""
    if processes <= 1:
        return {case: lost_checks(case) for case in cases}
    with ProcessPoolExecutor(max_workers=processes, mp_context=get_context("spawn")) as pool:
        chunk = max(1, len(cases) // (processes * 4))
        return dict(zip(cases, pool.map(lost_checks, cases, chunksize=chunk)))


def key(section_id: str, mistake_id: str) -> str:
    return f"{section_id}: {mistake_id}"
