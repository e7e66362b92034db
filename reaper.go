package main

// This file reaps orphans as they die, as tini does. The tool is the child
// subreaper of its run (and, in a container, maybe PID 1): every process
// the agent's tools leave behind re-parents to it, and when one dies it
// stays a zombie until the tool collects its status. A busy agent leaves
// many, against the container's pid limit, so the tool reaps them as they
// die, not only when an iteration ends. The rules are:
//
//   - The tool's own children (the agent, a test command, a --help probe,
//     an attached CLI) are waited for by whoever started them (os/exec
//     waits for its pid): the reaper never takes their status. Each is
//     started through trackStart, which records its pid under the lock
//     the reaper holds while it reaps, so that no child can die and be
//     reaped between its start and its record; runOwn does that for a
//     command run to its end (git).
//   - On SIGCHLD the reaper collects every dead child that is not one of
//     the tool's own: it peeks with waitid(WNOWAIT), which reaps nothing,
//     and reaps by pid. The kernel shows the same dead child until it is
//     waited for: when that is one of the tool's own, the orphans behind
//     it are collected once its starter has waited for it (forgetChild
//     wakes the reaper), which is at once, as starters wait for their
//     children's exit. Every agent's exit is such a case: a scan of /proc
//     there would cost more than the rest of the iteration's bookkeeping.

import (
	"bytes"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
)

// ownChildren are the pids of the tool's own children.
var ownChildren = struct {
	sync.Mutex
	pids map[int]bool
	// behind is set when the reaper stopped at a dead child of the tool's
	// own: orphans may have died behind it.
	behind bool
}{pids: map[int]bool{}}

// reaperWake wakes the reaper when a child it stopped at was waited for.
var reaperWake = make(chan struct{}, 1)

// trackStart runs start, which starts a child and returns its pid, and
// records the pid as the tool's own until forgetChild.
func trackStart(start func() (pid int, err error)) error {
	ownChildren.Lock()
	defer ownChildren.Unlock()
	pid, err := start()
	if err == nil {
		ownChildren.pids[pid] = true
	}
	return err
}

// forgetChild drops pid from the tool's own children once it was waited
// for.
func forgetChild(pid int) {
	ownChildren.Lock()
	delete(ownChildren.pids, pid)
	wake := ownChildren.behind
	ownChildren.behind = false
	ownChildren.Unlock()
	if wake {
		select {
		case reaperWake <- struct{}{}:
		default: // a wake is pending already
		}
	}
}

// isOwnChild reports whether pid is one of the tool's own children.
func isOwnChild(pid int) bool {
	ownChildren.Lock()
	defer ownChildren.Unlock()
	return ownChildren.pids[pid]
}

// startReaper reaps orphans as they die, for the rest of the process's
// life (the run), where the system can tell (Linux).
func startReaper() {
	if !canPeekChildren {
		return
	}
	died := make(chan os.Signal, 1)
	signal.Notify(died, syscall.SIGCHLD)
	go func() {
		for {
			select {
			case <-died:
			case <-reaperWake:
			}
			reapOrphans()
		}
	}()
	reapOrphans() // any that died before
}

// reapOrphans collects every dead child that is not one of the tool's own.
func reapOrphans() {
	ownChildren.Lock()
	defer ownChildren.Unlock()
	for {
		pid := peekDeadChild()
		if pid <= 0 {
			return
		}
		if ownChildren.pids[pid] {
			// The kernel shows this one until its starter waits for it;
			// then forgetChild wakes the reaper for those behind it.
			ownChildren.behind = true
			return
		}
		reap(pid)
	}
}

// runOwn is cmd.Run for a child of the tool's own: started through
// trackStart and forgotten once waited for. Every command the tool runs
// and waits for goes through it or through trackStart (a test holds the
// sources to that); cmd.Run alone would race the reaper for the exit
// status, and lose it as "waitid: no child processes".
func runOwn(cmd *exec.Cmd) error {
	if err := startOwn(cmd); err != nil {
		return err
	}
	return waitOwn(cmd)
}

// startOwn is cmd.Start for a child of the tool's own (trackStart).
func startOwn(cmd *exec.Cmd) error {
	return trackStart(func() (int, error) {
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		return cmd.Process.Pid, nil
	})
}

// waitOwn is cmd.Wait for a child startOwn started: its exit awaited in the
// poller (awaitExit), then it is forgotten.
func waitOwn(cmd *exec.Cmd) error {
	defer forgetChild(cmd.Process.Pid)
	awaitExit(cmd.Process.Pid)
	return cmd.Wait()
}

// waitProcess is waitOwn for a process started with os.StartProcess
// through trackStart: its error, as cmd.Wait's, is an *exec.ExitError when
// the process did not exit with 0.
func waitProcess(p *os.Process) error {
	defer forgetChild(p.Pid)
	awaitExit(p.Pid)
	state, err := p.Wait()
	if err == nil && !state.Success() {
		err = &exec.ExitError{ProcessState: state}
	}
	return err
}

// outputOwn is cmd.Output through runOwn.
func outputOwn(cmd *exec.Cmd) ([]byte, error) {
	var out bytes.Buffer
	cmd.Stdout = &out
	err := runOwn(cmd)
	return out.Bytes(), err
}
