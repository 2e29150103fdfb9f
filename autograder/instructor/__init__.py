"""The instructor's tools: batch grading, the nbgrader gradebook, Gradescope, the class report, the self-check wheel.

Import rule: the top layer. These modules may import the core, the sandbox
and the feedback; nothing below imports them (cli.py dispatches to them).
"""
