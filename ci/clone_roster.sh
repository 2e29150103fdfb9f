#!/usr/bin/env bash
# Clone every student repository listed in a roster file into DEST/<student>/.
#
#   ci/clone_roster.sh ROSTER DEST
#
# ROSTER: one student a line, "<student> <repository>" where <repository> is
# owner/name on $GIT_HOST (default github.com); $GIT_BASE_URL (default
# https://$GIT_HOST) serves a server under a path, or a local mirror. Blank
# lines and # comments are ignored. The token in $GIT_TOKEN (read access to
# the student repositories) is sent as an HTTP header, never written into the
# clones' .git/config, and the grading steps that run student code do not get
# it. A repository that cannot be cloned is reported and skipped: one student
# never stops the others.
set -uo pipefail
roster=${1:?usage: clone_roster.sh ROSTER DEST}
dest=${2:?usage: clone_roster.sh ROSTER DEST}
host=${GIT_HOST:-github.com}
base=${GIT_BASE_URL:-https://$host}
user=${GIT_TOKEN_USER:-x-access-token}  # GitLab: oauth2
mkdir -p "$dest"
header=()
if [ -n "${GIT_TOKEN:-}" ]; then
    basic=$(printf '%s:%s' "$user" "$GIT_TOKEN" | base64 | tr -d '\n')
    header=(-c "http.$base/.extraheader=AUTHORIZATION: basic $basic")
fi
cloned=0 failed=0
while read -r student repository _rest; do
    case "$student" in '' | '#'*) continue ;; esac
    if ! [[ "$student" =~ ^[A-Za-z0-9._-]+$ ]] || [[ "$student" == .* ]]; then
        echo "clone_roster: skipping bad student name '$student'" >&2; failed=$((failed + 1)); continue
    fi
    rm -rf "${dest:?}/$student"
    if GIT_TERMINAL_PROMPT=0 git "${header[@]}" clone --quiet --depth 1 \
            "$base/$repository.git" "$dest/$student"; then
        cloned=$((cloned + 1))
    else
        echo "clone_roster: could not clone $repository for $student" >&2; failed=$((failed + 1))
    fi
done < "$roster"
echo "clone_roster: $cloned cloned, $failed failed"
[ "$cloned" -gt 0 ]
