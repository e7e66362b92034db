#!/usr/bin/env bash
# Mutation testing of the run core: gremlins (fetched from the Go module
# proxy by `go run`, never a dependency of the binary) mutates the decisions
# in the lines changed since BASE (default: the parent of the record issue's
# work), and runs the unit tests and the run core's scenarios against each
# mutant. A mutant that no test kills (LIVED) is a decision no test pins.
#
# Usage: scripts/mutation.sh [BASE] [OUTPUT.json]
#   WORKERS=N   mutants tested at once (default 1: the scenarios use time)
#   CLAUDE_ITERATE_SCRIPTS=RE   the scenarios run against each mutant
#               (default: the run core's, below)
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-9bdffc2}
out=${2:-mutation.json}
gremlins=github.com/go-gremlins/gremlins/cmd/gremlins@v0.5.0
# The scenarios of the run core: the loop, its records and what is derived
# from them (no pseudo-terminal ones: they cost seconds each).
export CLAUDE_ITERATE_SCRIPTS="${CLAUDE_ITERATE_SCRIPTS:-^(run-(complete|failures|streaks|stops|limit|flags|prompt|hang)|stop-file|events|history.*|reaper-own|notify|outcome-.*|signal-(setup|boundary|delay)|cond-.*|watch|list-status|reset|plain)$}"
go run "$gremlins" unleash --diff "$base" --workers "${WORKERS:-1}" --timeout-coefficient 4 \
	--invert-logical --output "$out" .
