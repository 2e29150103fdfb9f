"""The checks: one pytest file per section, section_<id>.py, run only by the grader.

Import rule: a check file imports the core (harness, the `student` fixture's
types), common.py and torch; its hidden checks alone import solutions/, after
the visible ones.

A file starts with the section's SECTION dict (the registry reads it), then its
visible checks (@check(..., visibility="visible"), or documented=True): the
documented values and the properties that need no reference, which a student's
self-check runs too; then the hidden checks, which compare with solutions/ on
fresh inputs. The self-check wheel ships each file with its hidden part cut out
(autograder/instructor/selfcheck_export.visible_part).
"""

import importlib

from autograder.core.sections import BY_ID, check_module, home


def declared(section_id: str) -> dict:
    """title -> the `grading` record (harness.check) of each check of the section, in file order:
    what the grader's pytest run collects (module-level functions named test_*)."""
    module = importlib.import_module(check_module(section_id))
    return {f.grading["title"]: f.grading for name, f in vars(module).items()
            if name.startswith("test_") and callable(f) and hasattr(f, "grading")}


def homes(section_id: str) -> dict[str, tuple[str, float]]:
    """Each check's id (its function's name, CheckResult.id) -> (the graded name it is about, its points):
    that name's test cell carries the check's points in nbgrader."""
    module = importlib.import_module(check_module(section_id))
    section = BY_ID[section_id]
    return {name: (home(f.grading, section), f.grading["points"]) for name, f in vars(module).items()
            if name.startswith("test_") and callable(f) and hasattr(f, "grading")}
