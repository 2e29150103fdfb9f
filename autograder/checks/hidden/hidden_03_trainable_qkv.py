"""Hidden checks of section 03 (Scaled dot-product attention with trainable weights): the reference solution on fresh inputs.

Never shipped to students: the self-check wheel leaves autograder/checks/hidden/ out. The
section's registry entry and its visible checks are in autograder/checks/section_03_trainable_qkv.py;
the grader runs those first, then these.
"""

import torch

from autograder.checks.common import (randn, seeded, with_params)
from autograder.checks.parameters import (expect_layer_shapes)
from autograder.checks.qkv_mistakes import module_mistakes
from autograder.checks.section_03_trainable_qkv import V1_ORDER, V2_ORDER, WRONG_PROJECTION, order_hint, unpack
from autograder.core.harness import check, expect_close
from autograder.i18n import _, _f
from solutions import trainable_qkv as ref


@check(0.5, "project_qkv on new (T, d_in) and batched (B, T, d_in) inputs")
def test_project_qkv_random(student):
    weights = [randn(seed, 4, 3) for seed in (301, 302, 303)]
    for x in (randn(304, 5, 4), randn(305, 2, 5, 4)):
        what = _f("{call} with x of shape {shape}", call="project_qkv(x, W_query, W_key, W_value)",
                  shape=tuple(x.shape))
        got = unpack(student.call("project_qkv", x, *weights), 3, what, "(queries, keys, values)")
        expected = ref.project_qkv(x, *weights)
        for index, kind in enumerate((_("queries"), _("keys"), _("values"))):
            mistakes = {WRONG_PROJECTION[other]: expected[other] for other in range(3) if other != index}
            expect_close(got[index], expected[index], _f("the {kind} of {what}", kind=kind, what=what),
                         mistakes=mistakes)


def expect_module_matches(student, name, cls, d_in, d_out, seed, order) -> None:
    """The student's `name`(d_in, d_out) against the reference on a (7, d_in) x."""
    x = randn(seed + 300, 7, d_in)
    module = student.new(name, d_in, d_out, seed=seed)
    if name == "SelfAttention_v2":
        expect_layer_shapes(module, name, d_in, d_out)
    # with the student's own weights where they have the reference's names and shapes:
    # forward alone is graded here, the creation order by its own check
    seeded_reference = seeded(cls, d_in, d_out, seed=seed)
    expected_params = {name: value.detach().clone() for name, value in seeded_reference.named_parameters()}
    reference = with_params(seeded_reference, module.params())
    with torch.no_grad():
        expected = reference(x)
    expect_close(module(x), expected, _f("{call} on a {shape} x", call=f"torch.manual_seed({seed}); "
                                         f"{name}({d_in}, {d_out})(x)", shape=f"(7, {d_in})"),
                 mistakes=module_mistakes(reference, x), hint=order_hint(module, expected_params, order))


# one check per module: a mistake in one of the two costs that module's check only
@check(0.25, "SelfAttention_v1 matches the reference with other seeds and sizes")
def test_v1_random(student):
    expect_module_matches(student, "SelfAttention_v1", ref.SelfAttention_v1, 4, 5, 31, V1_ORDER)


@check(0.5, "SelfAttention_v2 matches the reference with other seeds and sizes")
def test_v2_random(student):
    expect_module_matches(student, "SelfAttention_v2", ref.SelfAttention_v2, 5, 3, 32, V2_ORDER)
