#!/usr/bin/env bash
# Lint beyond go vet (issue 33, item 6): staticcheck with every check, and
# deadcode, both fetched from the Go module proxy by `go install` into a
# scratch folder, never dependencies of the module.
#
# deadcode looks at one platform's binary. A function of a shared file that
# only macOS calls (parsePS, the reader of macOS's ps) is unreachable in the
# Linux binary, and one only Linux calls (readKernelFile, for /proc) in the
# macOS one; both are kept in shared files so that Linux, where every test
# runs, tests and fuzzes them. So a function counts as dead only when
# neither the Linux nor the macOS binary reaches it.
#
# Usage: scripts/lint.sh   (exit 1 when either tool reports anything)
set -euo pipefail
cd "$(dirname "$0")/.."

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
GOBIN=$bin go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
GOBIN=$bin go install golang.org/x/tools/cmd/deadcode@v0.52.0

status=0
echo "staticcheck -checks all"
"$bin/staticcheck" -checks all . || status=1

echo "deadcode (dead on Linux and on macOS alike)"
GOOS=linux "$bin/deadcode" . | sort > "$bin/linux"
GOOS=darwin "$bin/deadcode" . | sort > "$bin/darwin"
dead=$(comm -12 "$bin/linux" "$bin/darwin")
if [ -n "$dead" ]; then
	echo "$dead"
	status=1
fi
exit "$status"
