"""Reference implementations of every graded name, one module per section.

These modules are the only place solution code is written. The course
builder (`course/builder/`) copies each `# %%` block into the matching
nbgrader solution cell, and the trusted side of the grader imports them
to compute reference outputs for fresh random inputs. Student code never
runs in a process that has imported this package.
"""
