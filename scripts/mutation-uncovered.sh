#!/usr/bin/env bash
# Runs, one by one, the mutants that a gremlins run (scripts/mutation.sh)
# reported NOT COVERED: gremlins tests only the mutants of lines that the
# unit tests' coverage reaches, but most of the tool is reached only by the
# scenarios, whose binary runs in subprocesses that report no coverage, and
# Go's coverage leaves out a switch's case expressions. Each mutant is made
# in a scratch copy of the working tree, and the same tests are run against
# it: KILLED (a test failed), LIVED (all passed), TIMED OUT, or NO BUILD.
#
# Usage: scripts/mutation-uncovered.sh GREMLINS.log
#   with the GOFLAGS (-run=...) and CLAUDE_ITERATE_SCRIPTS of the gremlins
#   run; MUTANT_TIMEOUT=seconds a mutant's tests may take (default 600).
# Prints a line a mutant, in gremlins' words.
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(realpath "${1:?usage: scripts/mutation-uncovered.sh GREMLINS.log}")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -C "$scratch" -xf -
cd "$scratch"

# mutate TYPE FILE LINE COL: the operator at LINE:COL (gremlins' 1-based
# byte column) replaced as gremlins would; fails when none is there.
mutate() {
	perl -i -e '
		my ($type, $line, $col) = splice @ARGV, 0, 3;
		my %swap = (
			CONDITIONALS_NEGATION => [["==", "!="], ["!=", "=="], ["<=", ">"], [">=", "<"], ["<", ">="], [">", "<="]],
			CONDITIONALS_BOUNDARY => [["<=", "<"], [">=", ">"], ["<", "<="], [">", ">="]],
			INVERT_LOGICAL => [["&&", "||"], ["||", "&&"]],
			ARITHMETIC_BASE => [["+", "-"], ["-", "+"], ["*", "/"], ["/", "*"], ["%", "*"]],
			INCREMENT_DECREMENT => [["++", "--"], ["--", "++"]],
			INVERT_NEGATIVES => [["-", "+"]],
		);
		my $done = 0;
		while (<>) {
			if ($. == $line) {
				for my $p (@{$swap{$type} || []}) {
					my ($from, $to) = @$p;
					if (substr($_, $col - 1, length $from) eq $from) {
						substr($_, $col - 1, length $from) = $to;
						$done = 1;
						last;
					}
				}
			}
			print;
		}
		exit($done ? 0 : 3);
	' "$1" "$3" "$4" "$2"
}

grep 'NOT COVERED' "$log" | while read -r _ _ type _ pos; do
	file=${pos%%:*} rest=${pos#*:}
	line=${rest%%:*} col=${rest#*:}
	cp -p "$file" "$scratch/.orig"
	if ! mutate "$type" "$file" "$line" "$col"; then
		result="NOT MADE"
	else
		rc=0
		out=$(timeout -k 10s "${MUTANT_TIMEOUT:-600}" go test -count=1 -failfast . 2>&1) || rc=$?
		case $rc in
		0) result=LIVED ;;
		124 | 137) result="TIMED OUT" ;;
		*) if grep -qE '\[(build|setup) failed\]' <<<"$out"; then result="NO BUILD"; else result=KILLED; fi ;;
		esac
	fi
	cp -p "$scratch/.orig" "$file"
	printf '%12s %s at %s\n' "$result" "$type" "$pos"
done
