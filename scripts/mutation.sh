#!/usr/bin/env bash
# Mutation testing: gremlins (fetched from the Go module proxy by `go run`,
# never a dependency of the binary) mutates the decisions in some lines, and
# runs the unit tests and a set of scenarios against each mutant. A mutant
# that no test kills (LIVED) is a decision no test pins.
#
# Usage: scripts/mutation.sh [BASE] [OUTPUT.json]
#          mutates the lines changed since BASE (default: the parent of the
#          record issue's work)
#        scripts/mutation.sh --file FILE.go [OUTPUT.json]
#          mutates every line of FILE.go: gremlins only takes a diff, so
#          the script makes one in a scratch worktree, from a commit where
#          FILE.go is empty to the current tree
#   SINCE=REV[:PATH][:LINES]   with --file: mutate only the lines of FILE.go
#               that are not in PATH (default FILE.go) as it was at REV, cut
#               after its first LINES lines: what an earlier run at REV did not
#               mutate, because the file changed since or the run was cut
#               after line LINES (PATH: the file's name then, if renamed)
#   WORKERS=N   mutants tested at once (default 1: the scenarios use time)
#   TIMEOUT_COEFFICIENT=N   a mutant times out after N times the tests' own
#               time (default 4; more on a loaded machine)
#   CLAUDE_ITERATE_SCRIPTS=RE   the scenarios run against each mutant
#               (default: the run core's, below)
set -euo pipefail
cd "$(dirname "$0")/.."
gremlins=github.com/go-gremlins/gremlins/cmd/gremlins@v0.5.0
# The scenarios of the run core: the loop, its records and what is derived
# from them (no pseudo-terminal ones: they cost seconds each).
export CLAUDE_ITERATE_SCRIPTS="${CLAUDE_ITERATE_SCRIPTS:-^(run-(complete|failures|streaks|stops|limit|flags|prompt|hang)|stop-file|events|history.*|reaper-own|notify|outcome-.*|signal-(setup|boundary|delay)|cond-.*|watch|list-status|reset|plain)$}"

if [ "${1:-}" = --file ]; then
	file=${2:?usage: scripts/mutation.sh --file FILE.go [OUTPUT.json]}
	out=$(realpath -m "${3:-mutation-$(basename "$file" .go).json}")
	[ -f "$file" ] || { echo "mutation.sh: no file $file" >&2; exit 2; }
	scratch=$(mktemp -d)
	trap 'git worktree remove --force "$scratch/tree" >/dev/null 2>&1; rm -rf "$scratch"' EXIT
	git worktree add -q --detach "$scratch/tree" HEAD
	# The working tree's state of every file (uncommitted changes too).
	git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -C "$scratch/tree" -xf -
	repo=$PWD
	cd "$scratch/tree"
	if [ -n "${SINCE:-}" ]; then
		IFS=: read -r rev old lines <<<"$SINCE"
		[ -n "$old" ] || old=$file
		case $old in [0-9]*) lines=$old old=$file ;; esac
		git -C "$repo" show "$rev:$old" > "$scratch/since"
		head -n "${lines:-2147483647}" "$scratch/since" > "$file"
	else
		: > "$file"
	fi
	git add -A && git -c user.name=m -c user.email=m@m commit -q --allow-empty -m "mutation base: $file ${SINCE:-empty}"
	base=$(git rev-parse HEAD)
	cp -p "$repo/$file" "$file"
	git add -A && git -c user.name=m -c user.email=m@m commit -q -m "mutation target: $file"
	go run "$gremlins" unleash --diff "$base" --workers "${WORKERS:-1}" --timeout-coefficient "${TIMEOUT_COEFFICIENT:-4}" \
		--invert-logical --output "$out" .
	exit
fi

base=${1:-9bdffc2}
out=${2:-mutation.json}
go run "$gremlins" unleash --diff "$base" --workers "${WORKERS:-1}" --timeout-coefficient "${TIMEOUT_COEFFICIENT:-4}" \
	--invert-logical --output "$out" .
