package main

import (
	"regexp"
	"sync"
)

// lazyRegexp returns a fixed regular expression that is compiled the first
// time it is asked for. Package-level regexp.MustCompile calls run at every
// start, whatever the command: compiling them all made a third of the
// allocations and page faults of 'claude-iterate stop' before main ran, and
// a page fault is dear on some virtual machines (scripts/bench.sh's start-up
// row). A command now compiles only the expressions it uses.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
