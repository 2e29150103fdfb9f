"""The checks: two modules per section, run only by the grader.

    section_<id>.py         the section's SECTION dict (the registry reads it), then its visible checks
                            (@check(..., visibility="visible"), or documented=True): the documented values
                            and the properties that need no reference, which a student's self-check runs
                            too. The self-check wheel ships it as it is, and a notebook's check cell
                            imports it (autograder/notebook.py).
    hidden/hidden_<id>.py   its hidden checks, which compare with solutions/ on fresh inputs. The wheel
                            leaves the whole hidden/ folder out.

Import rule: a visible module imports the core (harness, the `student` fixture's types), common.py and
torch, never solutions/ nor a hidden module; a hidden module may import its section's visible module
for the helpers both use (never a test_* function: pytest would collect it twice).
"""

import importlib

from autograder.core.sections import BY_ID, check_module, hidden_module, home


def _check_functions(section_id: str):
    """(name, function) of each check of the section, visible module first, in file order: what the grader's
    pytest run collects (module-level functions named test_*)."""
    for module_name in (check_module(section_id), hidden_module(section_id)):
        module = importlib.import_module(module_name)
        yield from ((name, f) for name, f in vars(module).items()
                    if name.startswith("test_") and callable(f) and hasattr(f, "grading"))


def declared(section_id: str) -> dict:
    """title -> the `grading` record (harness.check) of each check of the section, visible ones first."""
    return {f.grading["title"]: f.grading for _, f in _check_functions(section_id)}


def homes(section_id: str) -> dict[str, tuple[str, float]]:
    """Each check's id (its function's name, CheckResult.id) -> (the graded name it is about, its points):
    that name's test cell carries the check's points in nbgrader."""
    section = BY_ID[section_id]
    return {name: (home(f.grading, section), f.grading["points"]) for name, f in _check_functions(section_id)}
