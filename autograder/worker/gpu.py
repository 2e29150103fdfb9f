"""What a worker child does with a GPU before and between the calls of student code.

Only the grading device "cuda" needs it; on the CPU and the meta device every
function here does nothing. Three things matter on a GPU:

- float32 matrix products in full precision: the checks compare the student's
  values with the reference within float32 tolerances, and TF32 (the matrix
  units' reduced-precision mode that some GPUs use for float32) is off by a
  factor of about a thousand; a notebook may turn it on for its own demos, so
  every call turns it off again (`full_precision`);
- the CUDA context started before the first timed call (`warm`): starting it
  and loading the matrix libraries takes a second or more, which no student's
  call timeout should pay;
- a cap on the GPU memory one worker may take (`cap_memory`), so that several
  workers, of several batch jobs, share one GPU without one taking it all. It
  is the cap of torch's allocator (which every tensor goes through); the
  trusted side's source scan refuses notebooks that touch it.
"""
import time

import torch


def full_precision() -> None:
    """float32 matrix products and convolutions in IEEE float32, never TF32, whichever of torch's
    two ways a notebook used to turn TF32 on.

    Since torch 2.9 there are two sets of settings, the older flags (allow_tf32,
    set_float32_matmul_precision) and the newer fp32_precision, and torch raises at the next
    matrix product when the two disagree. So the newer ones go back to "none" (follow the older),
    then the older ones are set: the two then agree, on every way a notebook could have left them.
    """
    backends = torch.backends
    if hasattr(backends, "fp32_precision"):
        backends.fp32_precision = "none"
        for owner in (backends.cuda.matmul, backends.cudnn, getattr(backends.cudnn, "conv", None),
                      getattr(backends.cudnn, "rnn", None)):
            if owner is not None and hasattr(owner, "fp32_precision"):
                owner.fp32_precision = "none"
    torch.set_float32_matmul_precision("highest")
    backends.cuda.matmul.allow_tf32 = False
    backends.cudnn.allow_tf32 = False


def tf32_off() -> bool:
    """Whether float32 matrix products and convolutions avoid TF32 (reading the settings as torch's
    matrix product does: it raises where they disagree)."""
    return (not torch.backends.cuda.matmul.allow_tf32 and not torch.backends.cudnn.allow_tf32
            and torch.get_float32_matmul_precision() == "highest")


def cap_memory(limit_bytes: int) -> dict | None:
    """Cap torch's allocator on the current GPU at `limit_bytes` (0: no cap). Returns what was set, as
    data for the report ({"gib": the cap, "total_gib": the GPU's memory}), None for no cap."""
    if not limit_bytes:
        return None
    total = torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory
    fraction = min(1.0, float(limit_bytes) / total)
    torch.cuda.set_per_process_memory_fraction(fraction)
    return {"gib": limit_bytes / 1024**3, "total_gib": total / 1024**3}


def warm() -> float:
    """Start the CUDA context and the libraries a check's calls use; returns the seconds it took."""
    started = time.monotonic()
    x = torch.ones(4, 4, device="cuda")
    scores = torch.softmax((x @ x.T).masked_fill(torch.ones(4, 4, dtype=torch.bool, device="cuda").triu(1),
                                                 float("-inf")), dim=-1)
    torch.nn.functional.dropout(scores, 0.1).sum().item()
    torch.cuda.synchronize()
    return time.monotonic() - started


def prepare(device: str, memory_bytes: int) -> tuple[list, list]:
    """For a worker grading on `device`: (layers, missing) for its sandbox report, as data (the
    trusted side words it: sandbox/layer_words.py). On "cuda" the
    context is started here, in the confined process, so the report says whether the GPU can be
    reached from inside the sandbox at all."""
    if device != "cuda":
        return [], []
    try:
        full_precision()
        if not tf32_off():
            raise RuntimeError("TF32 could not be turned off")
        seconds = warm()
        cap = cap_memory(memory_bytes)
        name = torch.cuda.get_device_name()
    except Exception as error:  # reported, never raised: the trusted side refuses to grade without it
        return [], [{"id": "gpu", "error": f"{type(error).__name__}: {str(error)[:160]}"}]
    return [{"id": "gpu", "name": name, "seconds": seconds, "cap": cap}], []


def between_calls(device: str, memory_bytes: int) -> None:
    """Undo what a notebook may have changed since the last call: TF32 on, the memory cap raised."""
    if device == "cuda" and torch.cuda.is_initialized():
        full_precision()
        if memory_bytes:
            cap_memory(memory_bytes)
