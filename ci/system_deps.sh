#!/usr/bin/env bash
# Install, from the distribution's packages, what the tests that need the real thing use:
#   docker.io, debootstrap   tests/test_container.py (the grader in a real Docker container)
#   chromium                 tests/test_report.py's browser test (the reports render)
#   fonts-noto-cjk           tests/test_plot_language.py (the Chinese notebooks' pictures drawn in a
#                            font with Chinese characters; students want it too, see the README) and
#                            tests/test_report.py's Chinese report in the browser
# Only what is missing is installed (apt-get, --no-install-recommends). No service is started:
# tests/test_container.py starts a Docker daemon itself when none runs, without touching the
# host's network, and stops it afterwards.
#
# This script never fails: where a package cannot be installed (no apt-get, not root and no
# sudo, no network) it says why and exits 0, and the tests that need it are skipped, saying why.
# Environment: SYSTEM_DEPS_TIMEOUT (seconds for each apt-get call, default 600).
set -uo pipefail

TIMEOUT=${SYSTEM_DEPS_TIMEOUT:-600}
say() { echo "ci/system_deps.sh: $*"; }

# package -> the files that show it is installed (any one of them; another Docker counts too)
declare -A PROVIDES=(
    [docker.io]="/usr/sbin/dockerd /usr/bin/dockerd"
    [debootstrap]=/usr/sbin/debootstrap
    [chromium]=/usr/bin/chromium
    [fonts-noto-cjk]=/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc
    # debootstrap checks the signature of Debian's archive with it (Ubuntu lacks it by default)
    [debian-archive-keyring]=/usr/share/keyrings/debian-archive-keyring.gpg
)
installed() {
    local file
    for file in ${PROVIDES[$1]}; do [ -e "$file" ] && return 0; done
    return 1
}
missing=()
for package in docker.io debootstrap chromium debian-archive-keyring fonts-noto-cjk; do
    installed "$package" || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
    say "docker.io, debootstrap, chromium and fonts-noto-cjk are installed"
    exit 0
fi

if ! command -v apt-get >/dev/null; then
    say "not installing ${missing[*]}: no apt-get here; the tests that need them will be skipped"
    exit 0
fi
if [ "$(id -u)" -eq 0 ]; then
    as_root=()
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
else
    say "not installing ${missing[*]}: not root and no password-less sudo; the tests that need them will be skipped"
    exit 0
fi

# Keep apt from starting the packages' services (dockerd would set up its bridge and firewall
# rules on the host): invoke-rc.d and deb-systemd-invoke ask policy-rc.d, and 101 means "no".
# A policy already in place (most container images have one) is left as it is.
POLICY=/usr/sbin/policy-rc.d
own_policy=""
if [ ! -e "$POLICY" ]; then
    printf '#!/bin/sh\nexit 101\n' | "${as_root[@]}" tee "$POLICY" >/dev/null && "${as_root[@]}" chmod 755 "$POLICY" &&
        own_policy=yes
fi
cleanup() { if [ -n "$own_policy" ]; then "${as_root[@]}" rm -f "$POLICY"; fi; }
trap cleanup EXIT

apt() {
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive timeout "$TIMEOUT" apt-get -qq -o=Dpkg::Use-Pty=0 "$@"
}

started=$SECONDS
log=$(mktemp)
say "installing ${missing[*]} (apt-get's output: $log)"
if ! apt update >>"$log" 2>&1; then
    say "apt-get update failed; trying the package lists already here"
fi
if ! apt install -y --no-install-recommends "${missing[@]}" >>"$log" 2>&1; then
    tail -n 5 "$log"
    say "could not install ${missing[*]} (apt-get failed, above); the tests that need them will be skipped"
    exit 0
fi
say "installed ${missing[*]} in $((SECONDS - started)) s"
