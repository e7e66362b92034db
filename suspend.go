package main

// This file implements the tool's own stop on Ctrl+Z, once every process of
// the run is stopped (supervisor.suspend). The rules are:
//
//   - When the tool leads its job, or its parent is the job-control shell,
//     the shell waits for the tool to stop before it takes the terminal
//     back: the tool stops itself with SIGSTOP, and the SIGCONT of fg or
//     bg continues it.
//   - When a wrapper leads the job (bash -c '…', a script, make run) and
//     Ctrl+Z has stopped it already, the shell knows only the wrapper: it
//     may take the terminal back and continue the job (fg, bg) before the
//     tool has stopped itself, and a SIGSTOP after that SIGCONT stopped the
//     tool for good, with the wrapper waiting for it (issue 34). The tool
//     then does not stop: it waits for the SIGCONT that fg or bg sends the
//     whole group, the agent and its tools stopped meanwhile. Other signals
//     that come meanwhile are handled once it is back, as they would be
//     after a continue; an ending signal ends the wait (kill %1 sends
//     SIGTERM, then SIGCONT).
//   - A wrapper is the tool's parent when it is in the tool's process
//     group, and it stops on Ctrl+Z by itself when it takes SIGTSTP with
//     the default action (on Linux; elsewhere, when it is seen stopped).
//     One that relays Ctrl+Z and waits for the tool to stop (sudo) catches
//     it: the tool stops itself then.
//   - While it so waits, it looks at its group (every pollInterval until
//     the wrapper is seen stopped, then every pollEvery): one that has
//     become orphaned gets what the kernel gives an orphaned group with a
//     stopped process (SIGHUP, and a continue); a wrapper that runs again
//     without a SIGCONT to the tool (kill -CONT of the wrapper alone), is
//     gone, or is not seen stopped within stopLag (the job was continued
//     before the tool looked), continues the run too.

import (
	"os"
	"syscall"
	"time"
)

// stopHere stops the tool until its job is continued (fg, bg), and returns
// once it is.
func stopHere(sigs *signals) {
	if !wrapperStops() {
		raiseHere(syscall.SIGSTOP)
		return
	}
	awaitContinue(sigs)
}

// wrapper returns the tool's parent when it is in the tool's process
// group, so leads or belongs to its job (bash -c, a script, make).
func wrapper() (procInfo, bool) {
	ppid, pgid := os.Getppid(), syscall.Getpgrp()
	for _, p := range listProcs() {
		if p.pid == ppid {
			return p, p.pgid == pgid
		}
	}
	return procInfo{}, false
}

// wrapperStops reports whether a wrapper leads or belongs to the tool's
// job and stops on Ctrl+Z by itself: it is stopped already, or takes
// SIGTSTP with the default action and is about to (on Linux, where that
// can be read; elsewhere a wrapper not stopped yet counts as one that
// relays).
func wrapperStops() bool {
	w, ok := wrapper()
	if !ok {
		return false
	}
	if w.state == 'T' {
		return true
	}
	stops, _ := stopsOnTSTP(w.pid)
	return stops
}

// awaitContinue waits, without stopping, until the job is continued
// (SIGCONT), an ending signal comes (it is queued again for the
// supervisor), or the wrapper runs again: once seen stopped, or never seen
// so within stopLag, which means the job was continued before the tool
// looked (a bg typed at once, whose SIGCONT the supervisor took before
// the SIGTSTP: the runtime hands over pending signals by number, and
// SIGCONT's is lower).
func awaitContinue(sigs *signals) {
	start := time.Now()
	tick := time.NewTimer(0)
	defer tick.Stop()
	seenStopped := false
	for {
		select {
		case sig := <-sigs.c:
			switch sig {
			case syscall.SIGCONT:
				return
			case syscall.SIGTSTP:
				// Suspended already.
			default:
				sigs.requeue(sig)
				return
			}
		case <-tick.C:
			if orphanedGroup() {
				sigs.requeue(syscall.SIGHUP)
				return
			}
			w, ok := wrapper()
			switch {
			case ok && w.state == 'T':
				seenStopped = true
			case seenStopped || !ok || time.Since(start) >= stopLag:
				return
			}
			// Often while the wrapper may still be on its way to a stop,
			// then at the look-around's pace.
			if seenStopped || time.Since(start) >= stopLag {
				tick.Reset(pollEvery)
			} else {
				tick.Reset(pollInterval)
			}
		}
	}
}

// stopLag is how long a wrapper that stops on Ctrl+Z by itself may take
// to be seen stopped: the signal reached it with the tool's, and the tool
// has stopped the run's processes since.
const stopLag = time.Second

// requeue puts sig back for the supervisor to handle; the channel is
// full only if signals come faster than they are handled, and then sig
// is dropped, as signal.Notify drops a signal for a full channel.
func (s *signals) requeue(sig os.Signal) {
	select {
	case s.c <- sig:
	default:
	}
}

// suspend stops c (if any), every other process of the run and the tool
// (Ctrl+Z), and resumes them all when the tool is continued. It returns how
// long the tool was stopped (0 when the SIGTSTP was ignored).
func (s *supervisor) suspend(c *child) time.Duration {
	if orphanedGroup() {
		s.log.printf("[SIGTSTP ignored: the process group is orphaned, nobody could continue it]")
		s.log.Flush()
		return 0
	}
	// Every process of the run stops first, before anything touches the
	// terminal: under a wrapper that leads the job (bash -c, a script,
	// make), the shell has the terminal back already, and nothing the
	// terminal does to the tool may leave the agent running on.
	pgid := 0
	if c != nil {
		pgid = c.pgid
	}
	others := stopTree(pgid)
	stopped := time.Now()
	if s.hooks.suspended != nil {
		s.hooks.suspended(stopped) // before the console is taken: it may warn
	}
	if s.kb != nil {
		s.kb.pause() // restores the terminal's mode
	}
	// The console stays taken until the run resumes: under a wrapper the
	// tool waits for the continue without being stopped (suspend.go), and
	// what its goroutines would write meanwhile (the agent's output still
	// in the pipe) waits as it would in a stopped tool.
	s.con.lock()
	s.con.clearStatus()
	s.con.out.Flush()
	s.term.showCursor()
	s.log.printf("[suspended (SIGTSTP)]")
	s.log.Flush()
	stopHere(s.sigs)
	s.con.unlock()
	d := time.Since(stopped)
	s.suspended += d
	continueTree(pgid, others)
	if s.hooks.suspended != nil {
		s.hooks.suspended(time.Time{})
	}
	s.sigs.dropQueued(syscall.SIGTSTP)
	s.log.printf("[resumed after %s]", roundDuration(d))
	s.log.Flush()
	if s.kb != nil {
		s.kb.resume() // only if in the foreground again
	}
	return d
}
