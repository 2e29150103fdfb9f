"""The hidden checks: one module per section, hidden_<id>.py, which compare with solutions/.

The grader runs each after its section's visible checks (checks/section_<id>.py); the students'
self-check wheel leaves this whole folder out, and no shipped module may import it.
"""
