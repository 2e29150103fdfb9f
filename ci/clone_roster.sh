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
#
# For each clone, DEST/.roster/<student>.json records when it was fetched and
# the time and hash of the commit fetched: the gradebook's submission time
# (autograder/instructor/submission_time.py) comes from this record, outside the student's folder,
# never from a file in their repository. Student names cannot start with a dot,
# so no student folder is named .roster.
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
# DEST/.roster/STUDENT.json: the fetch time, and the commit's time (committer date, in UTC) and hash.
# Every value is a checked student name (no quote, backslash or control character), a date or a hex
# hash: nothing to escape in JSON.
record_clone() {
    local when commit
    when=$(TZ=UTC git -C "$dest/$1" log -1 --format=%cd --date=iso-strict-local 2>/dev/null) || when=""
    commit=$(git -C "$dest/$1" rev-parse HEAD 2>/dev/null) || commit=""
    [[ "$when" =~ ^[0-9TZ:+-]+$ ]] || when=""
    [[ "$commit" =~ ^[0-9a-f]+$ ]] || commit=""
    mkdir -p "$dest/.roster"
    printf '{"student": "%s", "fetched_at": "%s", "commit_time": "%s", "commit": "%s"}\n' \
        "$1" "$2" "$when" "$commit" > "$dest/.roster/$1.json"
}
cloned=0 failed=0
while read -r student repository _rest; do
    case "$student" in '' | '#'*) continue ;; esac
    # the name becomes a folder and a JSON string: letters of any script (José, 张伟), digits, . _ -;
    # never a leading dot, a slash, a quote, a backslash, a space or a control character
    case "$student" in
        .* | *[/\\\"\'[:space:][:cntrl:]]*)
            echo "clone_roster: skipping bad student name '$student'" >&2; failed=$((failed + 1)); continue ;;
    esac
    rm -rf "${dest:?}/$student"
    rm -f "$dest/.roster/$student.json"  # a failed clone leaves no record of an earlier one
    fetched=$(date -u +%Y-%m-%dT%H:%M:%S+00:00)
    if GIT_TERMINAL_PROMPT=0 git "${header[@]}" clone --quiet --depth 1 \
            "$base/$repository.git" "$dest/$student"; then
        record_clone "$student" "$fetched"
        cloned=$((cloned + 1))
    else
        echo "clone_roster: could not clone $repository for $student" >&2; failed=$((failed + 1))
    fi
done < "$roster"
echo "clone_roster: $cloned cloned, $failed failed"
[ "$cloned" -gt 0 ]
