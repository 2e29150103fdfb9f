"""Feedback: the one result model rendered for people and machines (table, Markdown, HTML, JSON, JUnit, heatmaps).

Import rule: imports the grading core's results, sections and files; never
the instructor's tools, and never runs student code.
"""
