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

from autograder.core.sections import check_module, hidden_module


def declared(section_id: str) -> dict:
    """title -> the `grading` record (harness.check) of each check of the section, visible ones first,
    in file order: what the grader's pytest run collects (module-level functions named test_*)."""
    found = {}
    for name in (check_module(section_id), hidden_module(section_id)):
        module = importlib.import_module(name)
        found.update({f.grading["title"]: f.grading for attribute, f in vars(module).items()
                      if attribute.startswith("test_") and callable(f) and hasattr(f, "grading")})
    return found
