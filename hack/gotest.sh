#!/usr/bin/env bash
# hack/gotest.sh runs `go test` with the given arguments and, when it fails,
# repeats the failing tests' own lines (--- FAIL, file:line messages,
# panics) at the end: the host's logs of a failing package run to thousands
# of lines, and CI shows only the tail.
set -uo pipefail
log=$(mktemp "${TMPDIR:-/tmp}/gotest.XXXXXX")
trap 'rm -f "$log"' EXIT
"${GO:-go}" test "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
	echo "== go test $*: failed; the failing tests' lines:"
	grep -E '^(--- FAIL|FAIL|panic:|\s+[A-Za-z0-9_]+\.go:[0-9]+: )' "$log" | grep -vE '^\s+[A-Za-z0-9_]+\.go:[0-9]+: (INFO|DEBUG) ' | head -200
fi
exit "$status"
