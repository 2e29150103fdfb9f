"""The grading core: a submission's notebooks, read, run section by section in a worker, checked, scored.

The data path reads down this package: submission.py finds and reads the
notebooks, extract.py (with magics.py) turns them into cells, student.py runs
them in a section's worker, harness.py and plugin.py run the checks against
it, grade.py puts the results together in the one result model (results.py).
sections.py is the registry every layer reads; files.py the one safe way to
read and write files.

Import rule: the core imports `autograder.sandbox` and `autograder.worker`'s
wire protocol below it, never the feedback or the instructor's tools above it.
"""
