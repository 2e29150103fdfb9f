"""The trusted side of isolation: starting workers, confining them, and naming the tier reached.

Import rule: modules here import the standard library, each other (limits.py
at the bottom, launch.py at the top) and `autograder.worker`'s wire protocol;
never the grading core, the feedback or the instructor's tools above them.
The untrusted side, the code that runs inside a worker, is `autograder.worker`.
"""
