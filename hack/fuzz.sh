#!/usr/bin/env bash
# hack/fuzz.sh runs every fuzz target of the workspace (each `func FuzzX` in
# a _test.go file of the modules ., abi, guest-sdk and examples) for
# FUZZTIME each (default 30s; any value go test's -fuzztime takes, e.g. 3s
# or 1000x), one after another, and fails at the first target that finds a
# failing input. go test keeps that input under the package's
# testdata/fuzz/FuzzX/, where plain `go test` replays it from then on:
# commit it with the fix.
# `make fuzz` runs it with FUZZTIME=30s; `make test` with FUZZTIME=3s.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-30s}
targets=$(grep -rl --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' \
	--exclude-dir=.git --exclude-dir=bin --exclude-dir=node_modules --exclude-dir=target . | sort)
if [ -z "$targets" ]; then
	echo "hack/fuzz.sh: no fuzz targets found" >&2
	exit 1
fi
count=0
for file in $targets; do
	dir=$(dirname "$file")
	mod=$dir
	while [ ! -f "$mod/go.mod" ]; do mod=$(dirname "$mod"); done
	pkg=./${dir#"$mod"}
	pkg=${pkg//\/\//\/}
	pkg=${pkg%/}
	for name in $(grep -oE '^func Fuzz[A-Za-z0-9_]*' "$file" | cut -d' ' -f2); do
		echo "== fuzz $name ($mod $pkg, $FUZZTIME)"
		(cd "$mod" && "$GO" test -run '^$' -fuzz "^$name\$" -fuzztime "$FUZZTIME" "$pkg")
		count=$((count + 1))
	done
done
echo "hack/fuzz.sh: $count fuzz targets ran for $FUZZTIME each without a failure"
