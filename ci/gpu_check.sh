#!/usr/bin/env bash
# Prove the grader's CUDA path on this machine in one run: benchmarks/gpu_check.py (the gpu tests,
# CUDA against CPU grading check by check, the catalogue of mistakes on both devices, the GPU-only
# mistakes, the sandbox with the GPU inside it, timings, a batch's scaling over --jobs on the CPU).
# Without a GPU it runs its CPU mode.
#
# Needs Linux and a Python >= 3.11 with torch (a CUDA build for the CUDA mode), numpy, pytest,
# matplotlib and pandas: the course's .venv, or a GPU machine's own Python. What the grader imports
# besides and such a machine may lack (IPython and its pure-Python dependencies) is installed, when
# missing, into .gpu-site/ without network, from the wheels that ci/prepare_gpu_wheels.sh downloaded
# beforehand into .gpu-wheels/ on a machine with network (carry that folder along with the tree).
#
#   bash ci/gpu_check.sh [--output FILE] [other options of benchmarks/gpu_check.py]
#   PYTHON=.venv/bin/python bash ci/gpu_check.sh      # another interpreter (default: python3)
#
# It stops itself after 8 minutes (exit 124); it needs about 3 to 5 on a 16-core machine with a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"

WHEELS=.gpu-wheels
if ! "$PY" -c 'import IPython' 2>/dev/null; then
    if ! compgen -G "$WHEELS/*.whl" >/dev/null; then
        echo "ci/gpu_check.sh: $PY has no IPython and $WHEELS/ holds no wheels: run" \
            "'bash ci/prepare_gpu_wheels.sh' on a machine with network, and bring $WHEELS/ along" >&2
        exit 2
    fi
    # only the distributions this Python lacks: its own (typing_extensions, pygments, ...) stay in charge
    mapfile -t missing < <("$PY" - "$WHEELS" <<'PY'
import importlib.metadata, pathlib, sys
for wheel in sorted(pathlib.Path(sys.argv[1]).glob("*.whl")):
    try:
        importlib.metadata.version(wheel.name.split("-")[0])
    except importlib.metadata.PackageNotFoundError:
        print(wheel)
PY
    )
    echo "ci/gpu_check.sh: installing IPython from $WHEELS/ into .gpu-site/ (${#missing[@]} wheels)" >&2
    "$PY" -m pip install --quiet --disable-pip-version-check --no-index --no-deps --no-compile --upgrade \
        --target .gpu-site "${missing[@]}"
    export PYTHONPATH="$PWD/.gpu-site${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONUNBUFFERED=1
exec timeout 480 "$PY" benchmarks/gpu_check.py "$@"
