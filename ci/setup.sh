#!/usr/bin/env bash
# Create .venv if it is missing and install the course into it (editable).
# Safe to run again: when nothing changed it only checks and returns.
#
# torch comes from, in this order:
#   1. $TORCH_INDEX_URL, if set (a GPU runner sets e.g. https://download.pytorch.org/whl/cu128);
#   2. a local wheel in pip's find-links (pip install --no-index), if there is one;
#   3. the PyTorch CPU wheel index (a CPU build, much smaller than PyPI's default CUDA build).
# The torch release is pyproject.toml's (torch==X.Y.Z), read by autograder/instructor/declared.py.
# Environment: PYTHON (interpreter used to create .venv, default python3), TORCH_INDEX_URL.
set -euo pipefail
cd "$(dirname "$0")/.."

CPU_INDEX_URL=https://download.pytorch.org/whl/cpu
VENV=.venv
PY="$VENV/bin/python"

if [ ! -x "$PY" ]; then
    echo "ci/setup.sh: creating $VENV"
    "${PYTHON:-python3}" -m venv "$VENV"
fi
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "ci/setup.sh: Python >= 3.11 is required; $VENV has $("$PY" --version 2>&1)" >&2
    exit 1
fi
# the standard library suffices: this runs before anything is installed
TORCH_VERSION=$("$PY" -m autograder.instructor.declared torch-version)

# The wheel tag the index serves (cpu, cu128, ...), when its URL ends with one.
want_tag=""
if [ -n "${TORCH_INDEX_URL:-}" ]; then
    last=$(basename "${TORCH_INDEX_URL%/}")
    if [[ "$last" =~ ^(cpu|cu[0-9]+|rocm[0-9.]+|xpu)$ ]]; then want_tag="$last"; fi
fi

installed_version() {
    "$PY" -c 'import importlib.metadata as m, sys
try: print(m.version(sys.argv[1]))
except m.PackageNotFoundError: pass' "$1"
}

torch_ok() {
    local have
    have=$(installed_version torch)
    case "$have" in
        "$TORCH_VERSION" | "$TORCH_VERSION"+*) ;;
        *) return 1 ;;
    esac
    [ -z "$want_tag" ] || [ "$have" = "$TORCH_VERSION+$want_tag" ]
}

pip_install() { "$PY" -m pip install --disable-pip-version-check "$@"; }

if ! torch_ok; then
    if [ -n "${TORCH_INDEX_URL:-}" ]; then
        spec="torch==$TORCH_VERSION${want_tag:++$want_tag}"
        echo "ci/setup.sh: installing $spec from $TORCH_INDEX_URL"
        pip_install "$spec" --index-url "$TORCH_INDEX_URL"
    elif pip_install --quiet --no-index --no-deps "torch==$TORCH_VERSION" 2>/dev/null; then
        # torch's own dependencies come with the project's install below.
        echo "ci/setup.sh: installed torch $TORCH_VERSION from a local wheel"
    else
        echo "ci/setup.sh: installing torch $TORCH_VERSION (CPU build) from $CPU_INDEX_URL"
        pip_install "torch==$TORCH_VERSION" --index-url "$CPU_INDEX_URL"
    fi
fi

# The project itself (and its other dependencies), once per change of pyproject.toml.
stamp="$VENV/.attention-course-installed"
want_stamp="$("$PY" -c 'import hashlib, sys; print(hashlib.sha256(open("pyproject.toml", "rb").read()).hexdigest(), sys.argv[1])' "$PWD")"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want_stamp" ] || [ -z "$(installed_version attention-course)" ]; then
    echo "ci/setup.sh: installing the course, the instructor's tools and the test tools (pip install -e '.[test]')"
    if ! pip_install --quiet -e ".[test]"; then
        # The linters of the CI files ship binaries for the common platforms only: the
        # course and the instructor's tools must still install (the linters' tests then skip, saying why).
        echo "ci/setup.sh: the [test] extras did not install; installing the course with [suite] (no linters)" >&2
        pip_install --quiet -e ".[suite]"
    fi
    echo "$want_stamp" > "$stamp"
fi

torch_ok || { echo "ci/setup.sh: torch $TORCH_VERSION is not installed in $VENV" >&2; exit 1; }
echo "ci/setup.sh: ready ($VENV: torch $(installed_version torch), attention-course $(installed_version attention-course))"
