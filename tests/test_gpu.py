"""CUDA grading: runs only where a GPU is present (marked gpu; skipped with a reason elsewhere)."""
import pytest
import torch
from support import EXAMPLES, zygote

from autograder.core.grade import run_checks
from autograder.core.submission import locate

pytestmark = pytest.mark.gpu

needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU on this machine")


@needs_gpu
def test_correct_submission_gets_full_marks_on_cuda():
    result = run_checks(locate(EXAMPLES / "correct"), "cuda", zygote=zygote())
    assert not result.grader_errors
    assert result.score == result.max_score


@needs_gpu
def test_partial_submission_grades_the_same_on_cuda_and_cpu():
    on_cpu = run_checks(locate(EXAMPLES / "partial"), "cpu", zygote=zygote())
    on_gpu = run_checks(locate(EXAMPLES / "partial"), "cuda", zygote=zygote())
    assert [(c.name, c.points) for s in on_cpu.sections for c in s.checks] == \
           [(c.name, c.points) for s in on_gpu.sections for c in s.checks]
