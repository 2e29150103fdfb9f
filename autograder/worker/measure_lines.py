"""How much of the student's own code one call runs: the lines of the student's cells executed, each call of a
function defined there counted as one more. A loop over positions runs its body once per position, whatever
it computes with (torch, NumPy, plain floats), and so does a Python function that np.vectorize calls once per
element: the count grows with the size, where a batched computation's stays put.

Only a number goes back; what it means is the checks' business. The tracer sees frames of the student's cells
only, as the worker's `locate` names them (worker/student_code.py's cells; a notebook's own cells where the
notebook's check cells answer in the kernel): torch's and NumPy's own Python is not counted, nor slowed by more
than a look at each call's file name.
"""
import contextlib
import sys


@contextlib.contextmanager
def counting_lines(wanted, locate):
    """Within, where `wanted`: counted["lines"] grows by each line of a student's cell that runs and by each call
    of a function defined in one (a file for which `locate` gives a cell's label, not None); the tracer that was
    there before (a debugger's, coverage's) is put back on leaving, whatever the call did."""
    counted, students = {"lines": 0}, {}
    if not wanted:
        yield counted
        return

    def in_student_frame(frame, event, _arg):
        if event == "line":
            counted["lines"] += 1
        return in_student_frame

    def on_call(frame, _event, _arg):
        filename = frame.f_code.co_filename
        if filename not in students:
            students[filename] = locate(filename) is not None
        if not students[filename]:
            return None  # not the student's code: its lines are not traced
        counted["lines"] += 1
        return in_student_frame

    previous = sys.gettrace()
    sys.settrace(on_call)
    try:
        yield counted
    finally:
        sys.settrace(previous)
