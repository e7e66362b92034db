package main

// This file implements the process tree of a run: finding every descendant
// of a child, signalling them, and ending them. The rules are: a child runs
// in its own process group, so terminal signals reach only the tool, which
// forwards them deliberately; the real CLI runs its tools in their own
// sessions, which a group signal misses, so every signal that must reach
// "everything the child started" also goes to each descendant found by
// parent links; and when a child ends, no process it started, directly or
// indirectly, is left alive (the sweep). The tool is the child subreaper
// where the system has one (Linux), so orphaned descendants re-parent to it
// instead of init and stay findable. Listing processes is the platform's
// part (proc_linux.go, proc_darwin.go).

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// procInfo is what the sweep needs of a process.
type procInfo struct {
	pid, ppid, pgid int
	state           byte
}

// signalGroup sends sig to process group pgid, ignoring a group that is gone.
func signalGroup(pgid int, sig syscall.Signal) {
	if pgid > 0 {
		syscall.Kill(-pgid, sig)
	}
}

// descendants returns the live processes below root, by parent links.
func descendants(root int, procs []procInfo) []procInfo {
	children := map[int][]procInfo{}
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p)
	}
	var out []procInfo
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if c.pid == root {
				continue
			}
			out = append(out, c)
			queue = append(queue, c.pid)
		}
	}
	return out
}

// signalOutsideGroup sends sig to every live descendant of root that is not
// in process group pgid (the group itself is signalled as a whole).
func signalOutsideGroup(root, pgid int, sig syscall.Signal) {
	for _, p := range descendants(root, listProcs()) {
		if p.pgid != pgid && p.state != 'Z' {
			syscall.Kill(p.pid, sig)
		}
	}
}

// stopTree stops a child's group (SIGTSTP, which it may catch to clean up its
// terminal) and its descendants outside the group (SIGSTOP).
func stopTree(pid, pgid int) {
	signalGroup(pgid, syscall.SIGTSTP)
	signalOutsideGroup(pid, pgid, syscall.SIGSTOP)
}

// continueTree resumes what stopTree stopped, the outside first so that the
// child finds its tools running when it wakes.
func continueTree(pid, pgid int) {
	signalOutsideGroup(pid, pgid, syscall.SIGCONT)
	signalGroup(pgid, syscall.SIGCONT)
}

// killTree kills a child's descendants and its group at once, and returns
// the descendants' pids: once the child is dead they re-parent away, so the
// sweep is told about them.
func killTree(pid, pgid int) []int {
	var killed []int
	for _, p := range descendants(pid, listProcs()) {
		killed = append(killed, p.pid)
		syscall.Kill(p.pid, syscall.SIGKILL)
	}
	signalGroup(pgid, syscall.SIGKILL)
	return killed
}

// sweepTermWait is how long the sweep waits for descendants to exit after
// SIGTERM before it kills them.
const sweepTermWait = 2 * time.Second

// sweepDescendants ends every process below this one: the leftovers of a
// child (processes re-parented here because this process is a subreaper,
// and their children) plus the recorded pids. With force it kills at once;
// otherwise it asks with SIGTERM first. It reaps what it kills and returns
// how many processes it found.
func sweepDescendants(force bool, recorded []int) int {
	if len(recorded) == 0 && !hasChildren() {
		return 0
	}
	self := os.Getpid()
	found := map[int]bool{}
	deadline := time.Now().Add(sweepTermWait)
	termSent := map[int]bool{}
	for round := 0; round < 1000; round++ {
		procs := listProcs()
		var live []int
		for _, p := range descendants(self, procs) {
			if p.state == 'Z' {
				if p.ppid == self {
					reap(p.pid)
				}
				continue
			}
			live = append(live, p.pid)
		}
		if round == 0 {
			for _, pid := range recorded {
				if pid > 0 && pid != self && syscall.Kill(pid, 0) == nil {
					live = append(live, pid)
				}
			}
		}
		if len(live) == 0 {
			return len(found)
		}
		for _, pid := range live {
			found[pid] = true
			if force || time.Now().After(deadline) {
				syscall.Kill(pid, syscall.SIGKILL)
			} else if !termSent[pid] {
				syscall.Kill(pid, syscall.SIGTERM)
				syscall.Kill(pid, syscall.SIGCONT)
				termSent[pid] = true
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return len(found)
}

// reap collects the exit status of a child of this process that is not a
// supervised child (whose status os/exec collects): a re-parented orphan.
func reap(pid int) {
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		if !errors.Is(err, syscall.EINTR) {
			return
		}
	}
}
