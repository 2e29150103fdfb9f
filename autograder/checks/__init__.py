"""The checks, one pair of pytest files per section, run only by the grader.

test_<section>.py here: the hidden checks (they compare with solutions/; never released).
visible/test_<section>.py: the documented-value checks a student's self-check runs too.
"""
