#!/usr/bin/env bash
# Grade the bundled example submissions with the hidden checks and print the
# result: first the full feedback one student gets (the partly correct
# example), then the class table of all four examples (correct notebooks,
# correct .py files, partly correct, blank template). Run `bash ci/setup.sh` first.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}  # the course venv (ci/setup.sh); the tests pass their own

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/class"
# copies, not links: a batch grades real folders only (a linked student folder is left out)
cp -R examples/correct "$work/class/correct"
cp -R examples/correct_py "$work/class/correct_py"
cp -R examples/partial "$work/class/partial"
cp -R student_template "$work/class/blank"

echo "== python -m autograder grade examples/partial"
"$PY" -m autograder grade examples/partial

echo
echo "== python -m autograder batch (the four examples as a class of four students)"
"$PY" -m autograder batch "$work/class" --out "$work/grades" --jobs 2
echo
# every cell as text, as written: a student id such as NA or None is a name, not a missing value
"$PY" -c 'import sys, pandas; print(pandas.read_csv(sys.argv[1], dtype=str, keep_default_na=False).to_string(index=False))' "$work/grades/grades.csv"
