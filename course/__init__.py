"""The course material: notebook specs, the notebook builder and the example submissions.

`python -m course.builder` turns `course/notebooks/<section>.py` and the reference
solutions into the nbgrader source notebooks, the released student notebooks
and the example submissions; `python -m course.builder --check` reports drift.
"""
