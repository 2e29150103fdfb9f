#!/usr/bin/env bash
# Download, on a machine with network, the wheels ci/gpu_check.sh installs on a GPU machine that has
# none: what the grader imports at run time and such a machine's Python may lack, i.e. IPython and
# its pure-Python dependencies (the GPU machine brings torch with CUDA, numpy, pytest, matplotlib
# and pandas). They go to .gpu-wheels/ (ignored by git): carry that folder to the GPU machine with
# the working tree. The wheels are the GPU machine's Python's, not this one's.
#
#   bash ci/prepare_gpu_wheels.sh                        # for Python 3.12 (the GPU machine's)
#   GPU_PYTHON_VERSION=3.13 bash ci/prepare_gpu_wheels.sh
#
# IPython's release range is pyproject.toml's (autograder/instructor/declared.py reads it).
# Environment: PYTHON (this machine's interpreter, default python3), GPU_PYTHON_VERSION (3.12).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
DEST=.gpu-wheels
version="${GPU_PYTHON_VERSION:-3.12}"

if [[ ! "$version" =~ ^3\.[0-9]+$ ]]; then
    echo "ci/prepare_gpu_wheels.sh: GPU_PYTHON_VERSION must be like 3.12, not '$version'" >&2
    exit 2
fi
requirement=$("$PY" -m autograder.instructor.declared requirement ipython)

# Into a fresh folder, then swapped in: a failed download leaves the previous wheels as they were.
fresh=$(mktemp -d "${TMPDIR:-/tmp}/gpu-wheels.XXXXXX")
trap 'rm -rf "$fresh"' EXIT
"$PY" -m pip download --quiet --disable-pip-version-check --only-binary=:all: \
    --python-version "$version" --dest "$fresh" "$requirement"
rm -rf "$DEST"
mkdir -p "$DEST"
mv "$fresh"/*.whl "$DEST"/
echo "ci/prepare_gpu_wheels.sh: $(find "$DEST" -name '*.whl' | wc -l) wheels for Python $version ($requirement) in $DEST/"
