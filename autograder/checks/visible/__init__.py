"""Visible checks: the ones a student's self-check (`python -m autograder check`) runs.

One pytest file per section, named like its hidden counterpart one folder up.
They compare with the values the notebooks print, so they are public: they are
shipped to students in the self-check wheel. They may therefore import neither
`solutions` nor a hidden check file (tests/test_visible_checks.py enforces it);
a hidden file may import the helpers defined here.
"""
