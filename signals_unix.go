//go:build linux || darwin

package main

// This file implements the managed child's process control (seeds 001 and
// 003). The rules are: the agent runs in its own process group, so terminal
// signals reach only the tool, which forwards them deliberately; the real
// CLI runs its tools in their own sessions, which a group signal misses, so
// every signal that must reach "everything the agent started" also goes to
// each descendant found by parent links; when an iteration ends, no process it
// started, directly or indirectly, is left alive (the sweep); and the tool
// ends a signal-caused exit by re-raising the signal on itself, so a calling
// shell knows it died of it.

import (
	"errors"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// exitSignals maps exit codes to the signal that caused them.
var exitSignals = map[int]syscall.Signal{
	exitSIGHUP: syscall.SIGHUP,
	exitSIGINT: syscall.SIGINT,
	exitSIGTRM: syscall.SIGTERM,
}

// exitBySignal ends the process by the signal that code stands for, with
// the default action, so that a calling shell sees WIFSIGNALED: bash then
// stops a "for t in a b; do claude-iterate run $t; done" loop at the first
// Ctrl+C, which a plain exit(130) would not do. It returns only for other
// codes, or if the signal did not end the process.
func exitBySignal(code int) {
	sig, ok := exitSignals[code]
	if !ok || !endedBySignal {
		return
	}
	signal.Reset(sig)
	if sig == syscall.SIGINT && sigintIgnoredAtStart {
		return
	}
	raiseHere(sig)
	// Still here: the signal is blocked or ignored; main falls back to the
	// exit code.
}

// endedBySignal is set when the run ends because of a signal; only then does
// main re-raise it.
var endedBySignal bool

// sigintIgnoredAtStart records that SIGINT was ignored when the tool started
// (a background job of a non-interactive shell): it then stays ignored.
var sigintIgnoredAtStart bool

// notifySignals starts delivering the signals the run handles to c. It must
// be called before the terminal mode changes and before any child starts.
func notifySignals(c chan<- os.Signal) {
	sigs := []os.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGTSTP, syscall.SIGCONT}
	if signal.Ignored(syscall.SIGINT) {
		sigintIgnoredAtStart = true
	} else {
		sigs = append(sigs, syscall.SIGINT)
	}
	signal.Notify(c, sigs...)
	// A closed stdout (claude-iterate run … | head) must not kill the
	// supervisor mid-run: with SIGPIPE handled, the write fails instead.
	// Handled, not ignored: an ignored SIGPIPE would be inherited by the
	// agent and its tools.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
}

// signalName is a signal's conventional name.
func signalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGTSTP:
		return "SIGTSTP"
	case syscall.SIGCONT:
		return "SIGCONT"
	}
	return sig.String()
}

// exitCodeFor is the exit status for a run ended by sig.
func exitCodeFor(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return exitError
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

// sweepTermWait is how long the sweep waits for descendants to exit after
// SIGTERM before it kills them.
const sweepTermWait = 2 * time.Second

// sweepDescendants ends every process below this one: the leftovers of the
// agent (processes re-parented here because this process is a subreaper,
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

// reap collects the exit status of a child of this process that is not the
// agent (whose status os/exec collects): a re-parented orphan.
func reap(pid int) {
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		if !errors.Is(err, syscall.EINTR) {
			return
		}
	}
}
