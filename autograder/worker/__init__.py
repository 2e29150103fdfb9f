"""The untrusted side: code that runs next to student code in a worker process.

Nothing in this folder may import the rest of `autograder`, `solutions` or the
hidden checks, and its modules import one another relatively (`from . import
wire`): a worker process loads this folder alone, as the package `worker`
(boot.py), with no folder of the grader on its path; the trusted side imports
the same files as `autograder.worker`.
"""
