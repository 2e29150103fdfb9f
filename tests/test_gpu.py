"""CUDA grading: runs only where a GPU is present (marked gpu; skipped with a reason elsewhere)."""
import sys

import pytest
import torch
from support import EXAMPLES, ROOT, correct_source, failing, grade_source, replace_def, zygote

from autograder.core.grade import run_checks
from autograder.core.submission import locate

pytestmark = pytest.mark.gpu
sys.path.insert(0, str(ROOT / "benchmarks"))  # gpu_catalogue: the GPU-only mistakes of the GPU check

needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU on this machine")


@needs_gpu
def test_correct_submission_gets_full_marks_on_cuda():
    result = run_checks(locate(EXAMPLES / "correct"), "cuda", launcher=zygote())
    assert not result.grader_errors
    assert result.score == result.max_score


@needs_gpu
def test_partial_submission_grades_the_same_on_cuda_and_cpu():
    on_cpu = run_checks(locate(EXAMPLES / "partial"), "cpu", launcher=zygote())
    on_gpu = run_checks(locate(EXAMPLES / "partial"), "cuda", launcher=zygote())
    assert [(c.name, c.points) for s in on_cpu.sections for c in s.checks] == \
           [(c.name, c.points) for s in on_gpu.sections for c in s.checks]


@needs_gpu
def test_tf32_turned_on_by_the_notebook_is_off_for_every_call():
    """A notebook may turn TF32 on for its demos (either of torch's ways): the values the checks
    compare would then be off by about 1e-3; the worker turns it off before every call."""
    source = correct_source("03_trainable_qkv") + (
        "\ntorch.backends.cuda.matmul.allow_tf32 = True\ntorch.set_float32_matmul_precision('high')\n")
    result = grade_source("03_trainable_qkv", source, device="cuda")
    assert result.score == result.max_score, failing(result)


@needs_gpu
def test_numpy_on_a_gpu_tensor_is_named_in_the_feedback():
    """Full marks on a CPU (a CPU tensor converts to NumPy), caught with a clear message on a GPU."""
    from gpu_catalogue import NUMPY_SOFTMAX

    source = replace_def(correct_source("02_softmax"), "softmax", NUMPY_SOFTMAX)
    lost = failing(grade_source("02_softmax", source, device="cuda"))
    assert lost and any("calls .numpy() on a tensor on the GPU" in message for message in lost.values()), lost
