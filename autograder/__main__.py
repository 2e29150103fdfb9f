import gc
import os
import sys

# The grader's imports (torch's, mostly) make few cycles but a great many objects, and every
# collection they set off walks all of them: a seventh of the imports' CPU. Collection resumes
# once they are done, with their objects frozen, so that later collections skip them too.
gc.disable()
if sys.argv[1:2] in (["grade"], ["check"]):  # before the grader imports torch: the worker imports it meanwhile
    from autograder.sandbox.launch import prestart

    prestart()

from autograder.cli import main  # noqa: E402

gc.freeze()
gc.enable()
code = main()
sys.stdout.flush()
sys.stderr.flush()
# Every result is written and closed by now; skipping the interpreter's teardown
# (torch's, mostly) saves most of a second per grading.
os._exit(code)
