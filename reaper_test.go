package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
)

// ownChildrenMain is the own-children command of the scenarios: with the
// reaper running, as in a run, it runs git N times (the way filesChanged
// does) and a plain child through runOwn N times, and fails when any of
// them lost its exit status to the reaper.
func ownChildrenMain() {
	n, err := strconv.Atoi(os.Args[len(os.Args)-1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "usage: own-children N")
		os.Exit(2)
	}
	startReaper()
	failed := 0
	for range n {
		if _, err := runGit(".", "--version"); err != nil {
			fmt.Fprintf(os.Stderr, "git: %v\n", err)
			failed++
		}
		if err := runOwn(exec.Command("true")); err != nil {
			fmt.Fprintf(os.Stderr, "true: %v\n", err)
			failed++
		}
	}
	if failed > 0 {
		fmt.Fprintf(os.Stderr, "%d of %d children lost their status\n", failed, 2*n)
		os.Exit(1)
	}
}
