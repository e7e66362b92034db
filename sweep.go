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
	"strconv"
	"strings"
	"syscall"
	"time"
)

// procInfo is what the sweep needs of a process.
type procInfo struct {
	pid, ppid, pgid int
	state           byte
	start           uint64 // clock ticks since boot; 0 when not read
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

// stopTree stops every process of the run (Ctrl+Z): the child's group
// (pgid, 0 for none) and every other descendant of the tool, including
// processes re-parented to it — a double-forked daemon, a tool whose parent
// exited. SIGSTOP, not SIGTSTP: the child is a session leader without a
// terminal, whose group is orphaned, and the kernel discards a
// default-action SIGTSTP there. It returns the pids it stopped outside the
// group, for continueTree; one already stopped by someone else is left as
// it is.
func stopTree(pgid int) []int {
	signalGroup(pgid, syscall.SIGSTOP)
	var stopped []int
	for _, p := range descendants(os.Getpid(), listProcs()) {
		if p.pgid == pgid || p.state == 'Z' || p.state == 'T' {
			continue
		}
		if syscall.Kill(p.pid, syscall.SIGSTOP) == nil {
			stopped = append(stopped, p.pid)
		}
	}
	return stopped
}

// continueTree resumes what stopTree stopped, the outside first so that the
// child finds its tools running when it wakes.
func continueTree(pgid int, stopped []int) {
	for _, pid := range stopped {
		syscall.Kill(pid, syscall.SIGCONT)
	}
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
// and their children), every member of the child's process group pgid (0:
// none; without a subreaper its orphans re-parent elsewhere), and the
// recorded pids. With force it kills at once; otherwise it asks with SIGTERM
// first and kills what is still alive after sweepTermWait. It reaps what it
// kills and returns how many processes it found.
func sweepDescendants(force bool, recorded []int, pgid int) int {
	return sweeper{list: listProcs, self: os.Getpid()}.sweep(force, recorded, pgid)
}

// sweeper is the sweep with its process lister, which tests replace.
type sweeper struct {
	list func() []procInfo
	self int
	// kill sends a signal; nil means syscall.Kill.
	kill func(pid int, sig syscall.Signal) error
	// hasChildren reports whether there may be anything below self; nil
	// means the system's answer.
	hasChildren func() bool
}

func (sw sweeper) signal(pid int, sig syscall.Signal) error {
	if sw.kill != nil {
		return sw.kill(pid, sig)
	}
	return syscall.Kill(pid, sig)
}

func (sw sweeper) sweep(force bool, recorded []int, pgid int) int {
	if sw.hasChildren == nil {
		sw.hasChildren = hasChildren
	}
	if pgid > 0 && sw.signal(-pgid, 0) != nil {
		pgid = 0 // the group is empty (ESRCH): nothing of it to look for
	}
	if len(recorded) == 0 && pgid == 0 && !sw.hasChildren() {
		return 0
	}
	self := sw.self
	found := map[int]bool{}
	deadline := time.Now().Add(sweepTermWait)
	termSent := map[int]bool{}
	for round := 0; round < 1000; round++ {
		procs := sw.list()
		var live []int
		seen := map[int]bool{}
		add := func(p procInfo) {
			if seen[p.pid] || p.pid == self {
				return
			}
			seen[p.pid] = true
			if p.state == 'Z' {
				if p.ppid == self && !isOwnChild(p.pid) {
					reap(p.pid)
				}
				return
			}
			live = append(live, p.pid)
		}
		for _, p := range descendants(self, procs) {
			add(p)
		}
		if pgid > 0 {
			for _, p := range procs {
				if p.pgid == pgid {
					add(p)
				}
			}
		}
		if round == 0 {
			for _, pid := range recorded {
				if pid > 0 && !seen[pid] && pid != self && sw.signal(pid, 0) == nil {
					seen[pid] = true
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
				sw.signal(pid, syscall.SIGKILL)
			} else if !termSent[pid] {
				sw.signal(pid, syscall.SIGTERM)
				sw.signal(pid, syscall.SIGCONT)
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

// orphanedGroup reports whether this process's group is orphaned: no member
// has a parent in another group of the same session, so no job-control
// shell could continue it once stopped. The kernel discards a default-action
// SIGTSTP in such a group; the tool, which handles SIGTSTP itself, must do
// the same.
func orphanedGroup() bool {
	pgid, sid := syscall.Getpgrp(), sessionOf(0)
	members := []procInfo{{pid: os.Getpid(), ppid: os.Getppid(), pgid: pgid}}
	for _, p := range listProcs() {
		if p.pgid == pgid && p.pid != members[0].pid {
			members = append(members, p)
		}
	}
	for _, m := range members {
		ppg, err := syscall.Getpgid(m.ppid)
		if err != nil || ppg == pgid {
			continue
		}
		if sessionOf(m.ppid) == sid {
			return false
		}
	}
	return true
}

// parsePS reads the output of "ps -A -o pid=,ppid=,pgid=,stat=" (macOS has
// no /proc), leaving out the ps process itself (lister): it is a live child
// of the tool while it runs, and the sweep would wait for it in vain.
func parsePS(out []byte, lister int) []procInfo {
	var procs []procInfo
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		pid, _ := strconv.Atoi(f[0])
		ppid, _ := strconv.Atoi(f[1])
		pgid, _ := strconv.Atoi(f[2])
		if pid == lister || pid <= 0 {
			continue
		}
		procs = append(procs, procInfo{pid: pid, ppid: ppid, pgid: pgid, state: f[3][0]})
	}
	return procs
}
