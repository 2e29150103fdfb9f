import os
import sys

if sys.argv[1:2] in (["grade"], ["check"]):  # before the grader imports torch: the worker imports it meanwhile
    from autograder.sandbox.launch import prestart

    prestart()

from autograder.cli import main  # noqa: E402

code = main()
sys.stdout.flush()
sys.stderr.flush()
# Every result is written and closed by now; skipping the interpreter's teardown
# (torch's, mostly) saves most of a second per grading.
os._exit(code)
