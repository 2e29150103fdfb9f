#!/usr/bin/env bash
# Grade the example submissions: the correct one, the partial one and the blank
# student template. Run `bash ci/setup.sh` first.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python

if [ -f autograder/__main__.py ]; then
    for submission in examples/correct examples/partial student_template; do
        echo "== python -m autograder grade $submission"
        "$PY" -m autograder grade "$submission"
    done
else
    # No grader yet: run the notebooks. The correct ones must run cleanly; the
    # partial and blank ones stop at their first unfinished or wrong answer.
    "$PY" -m course.execute examples/correct
    "$PY" -m course.execute --expect-error examples/partial student_template
fi
