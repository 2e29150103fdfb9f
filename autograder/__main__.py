import os
import sys

from autograder.cli import main

code = main()
sys.stdout.flush()
sys.stderr.flush()
# Every result is written and closed by now; skipping the interpreter's teardown
# (torch's, mostly) saves most of a second per grading.
os._exit(code)
