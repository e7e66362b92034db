package main

// This file implements the signals a run answers, and the way a run ended by
// a signal ends the process. The rules are:
//
//   - The handlers are installed before the terminal's mode changes and
//     before any child starts.
//   - A signal that was ignored when the tool started (SIGINT for a
//     background job of a non-interactive shell, SIGHUP under nohup) stays
//     ignored.
//   - Escalation: while a run is already being interrupted, a second
//     Ctrl+C (SIGINT) or a SIGQUIT forces the end at once; a repeat of
//     SIGTERM or SIGHUP does not (bash sends SIGHUP twice when a terminal
//     closes), and only switches a graceful Ctrl+C wait to the terminate
//     path. Ctrl+\ (SIGQUIT) is a forced stop from the start, never a Go
//     goroutine dump.
//   - SIGPIPE is handled, not ignored: a closed stdout makes a write fail
//     instead of killing the supervisor mid-run, and an ignored SIGPIPE
//     would be inherited by the agent and its tools.
//   - What each signal does to a running child — the two-stage Ctrl+C, the
//     terminate-then-kill of SIGTERM and SIGHUP — is the supervisor's
//     (supervisor.go); outside a child, every ending signal ends the run at
//     once.
//   - After cleanup, a run ended by a signal ends the process by re-raising
//     that signal with its default action, so that a calling shell sees the
//     process died of it: bash then stops a "for t in a b; do claude-iterate
//     run $t; done" loop at the first Ctrl+C, which a plain exit(130) would
//     not do. The run returns the signal in its error (exitCodeError); only
//     main re-raises. SIGQUIT is re-raised with core dumps off.

import (
	"os"
	"os/signal"
	"syscall"
	"time"
)

// signals delivers the signals a run handles.
type signals struct {
	c chan os.Signal
	// flushed receives flushSignal, which flush sends the tool itself.
	flushed chan os.Signal
	// ignoredAtStart holds the ending signals that were ignored when the
	// tool started; they stay ignored, and are never re-raised.
	ignoredAtStart map[os.Signal]bool
}

// endingSignals are the signals that end a run.
var endingSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// catchSignals starts delivering the signals a run handles.
func catchSignals() *signals {
	s := &signals{c: make(chan os.Signal, 8), flushed: make(chan os.Signal, 1), ignoredAtStart: map[os.Signal]bool{}}
	sigs := []os.Signal{syscall.SIGTSTP, syscall.SIGCONT}
	for _, sig := range endingSignals {
		if signal.Ignored(sig) {
			s.ignoredAtStart[sig] = true
			continue
		}
		sigs = append(sigs, sig)
	}
	signal.Notify(s.c, sigs...)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	signal.Notify(s.flushed, flushSignal)
	return s
}

// flushWait bounds flush's wait for its own signal: it comes back within
// microseconds; past this, the poll goes on as it would without flush.
const flushWait = 250 * time.Millisecond

// flush makes sure that every signal the kernel delivered to the tool
// before the call is in s.c, so that the poll after it sees it. The Go
// runtime forwards a caught signal to its channel from a goroutine of its
// own, some time after delivery: a signal the agent sent just before it
// exited may not be there yet when the run looks, and one poll would miss
// it for good (a run that should end 130 ends 0). flush sends the tool
// flushSignal and waits for it: the kernel hands a thread its pending
// signals lowest number first, flushSignal's number is above every signal
// the run catches, and the runtime forwards the signals it holds in order
// of their numbers, one at a time, so once flushSignal has come, an ending
// signal delivered earlier is in s.c (issue 33).
func (s *signals) flush() {
	if s.flushed == nil {
		return
	}
	for len(s.flushed) > 0 { // a flush that timed out came late
		<-s.flushed
	}
	if syscall.Kill(os.Getpid(), flushSignal) != nil {
		return
	}
	t := time.NewTimer(flushWait)
	defer t.Stop()
	select {
	case <-s.flushed:
	case <-t.C:
	}
}

// escalates reports whether sig, arriving while the run is already being
// interrupted, forces the end at once.
func escalates(sig os.Signal) bool {
	return sig == syscall.SIGINT || sig == syscall.SIGQUIT
}

// pending returns a signal that is waiting to be handled, without blocking,
// or nil.
func (s *signals) pending() os.Signal {
	select {
	case sig := <-s.c:
		return sig
	default:
		return nil
	}
}

// dropQueued discards queued deliveries of sig, keeping the others in
// order: two Ctrl+Z pressed before the tool stopped suspend it once.
func (s *signals) dropQueued(sig os.Signal) {
	var keep []os.Signal
	for {
		got := s.pending()
		if got == nil {
			break
		}
		if got != sig {
			keep = append(keep, got)
		}
	}
	for _, k := range keep {
		s.c <- k
	}
}

// exitError is the error that ends a run stopped by sig after cleanup: its
// exit code, and the signal to re-raise unless it was ignored at start.
func (s *signals) exitError(sig os.Signal) *exitCodeError {
	e := &exitCodeError{code: exitCodeFor(sig)}
	if ss, ok := sig.(syscall.Signal); ok && !s.ignoredAtStart[sig] {
		e.signal = ss
	}
	return e
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
	case syscall.SIGQUIT:
		return "SIGQUIT"
	case syscall.SIGKILL:
		return "SIGKILL"
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

// raiseDefault ends the process by sig with the signal's default action. It
// returns only if that did not end the process: the caller then exits with
// 128+n. That is the case of PID 1 of a PID namespace (a container's
// entrypoint), which the kernel never ends by a signal it sends itself with
// the default action.
func raiseDefault(sig syscall.Signal) {
	signal.Reset(sig)
	if sig == syscall.SIGQUIT {
		// Go's own SIGQUIT action prints every goroutine's stack and exits
		// 2: set the system's default action instead, without a core dump.
		syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})
	}
	// The system's default action, below the Go runtime's handler: when
	// the raise does not end the process, the runtime's handler would exit
	// with status 2 instead of returning. Where that cannot be set
	// (macOS), SIGQUIT is not raised (the runtime would dump stacks).
	if !setDefaultAction(sig) && sig == syscall.SIGQUIT {
		return
	}
	raiseHere(sig)
}
