package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
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

// orphanBehindMain is the orphan-behind command of the scenarios: as a
// subreaper with the reaper running, it leaves a child of its own dead and
// not yet waited for, lets an orphan die meanwhile, then waits for its own
// child, as a run does for its agent; 20 rounds. The kernel shows one of
// the two first (which one depends on the threads they hang from): when it
// is the tool's own child, the orphan must be reaped once that child is
// waited for. It fails when an orphan is still a zombie 10 s after that,
// or when no round had the orphan behind the tool's child.
func orphanBehindMain() {
	if err := becomeSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, "subreaper:", err)
		os.Exit(1)
	}
	startReaper()
	behind := 0
	for range 20 {
		own := exec.Command("true")
		if err := startOwn(own); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		awaitExit(own.Process.Pid) // dead, not waited for
		// The orphan: a shell leaves a sleeper and exits at once; the
		// sleeper re-parents to this process and dies 0.1 s later.
		out, err := outputOwn(exec.Command("sh", "-c", "sleep 0.1 & echo $!"))
		if err != nil {
			fmt.Fprintln(os.Stderr, "sh:", err)
			os.Exit(1)
		}
		orphan, _ := strconv.Atoi(strings.TrimSpace(string(out)))
		stat := "/proc/" + strconv.Itoa(orphan) + "/stat"
		for {
			state := zombieState(stat)
			if state == 'Z' {
				behind++ // dead, and left behind the tool's own child
				break
			}
			if state == 0 {
				break // reaped: the kernel showed it first
			}
			time.Sleep(5 * time.Millisecond)
		}
		own.Wait()
		forgetChild(own.Process.Pid)
		reaped := false
		for range 1000 {
			if reaped = zombieState(stat) == 0; reaped {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if !reaped {
			fmt.Fprintf(os.Stderr, "orphan %d is still a zombie behind the tool's own child\n", orphan)
			os.Exit(1)
		}
	}
	if behind == 0 {
		fmt.Fprintln(os.Stderr, "no orphan died behind the tool's own child: the scenario no longer tests it")
		os.Exit(1)
	}
	fmt.Printf("%d of 20 orphans died behind the tool's own child\n", behind)
}

// zombieState is the state letter of a /proc/PID/stat, or 0 when the
// process is gone.
func zombieState(stat string) byte {
	data, err := os.ReadFile(stat)
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 >= len(data) {
		return 0
	}
	return data[i+2]
}
