package main

// This file implements the signals that come as a run ends on its own. The
// run looks at its pending signals before it chooses its ending
// (startBlocked); what comes after that, while it writes its state, its
// log, its events, the registry and restores the terminal, would be caught
// and never looked at, and a calling shell's loop would go on after a
// SIGHUP that came in those milliseconds (tryout 7: "max iterations
// reached", exit 0). The rules are:
//   - From finish on, the run's signals go through a relay, which notes
//     the first ending signal (SIGTSTP and SIGCONT are dropped: too late to
//     suspend) and passes every signal on to the exit's waits, which end
//     early on one as before.
//   - Before the exit event is written, the run looks again: an ending
//     signal that came turns the ending into that signal's (its exit code,
//     and the process ends by it), said on the console and in the log, and
//     the metadata and the events say it too.
//   - Once all is written and the lock released, the run looks a last
//     time: an ending signal that came since ends the process by it (main
//     re-raises it), and the relay is armed: one that comes later ends the
//     process by it at once, its records being written already.

import (
	"fmt"
	"os"
	"syscall"
)

// exitRelay takes a run's signals from finish to the process's exit.
type exitRelay struct {
	sigs *signals
	// c is what the exit's waits end on.
	c    chan os.Signal
	look chan relayLook
}

// relayLook asks the relay for the first ending signal it took, after it
// took those already in the run's channel; with arm, every ending signal
// from then on ends the process.
type relayLook struct {
	arm   bool
	reply chan os.Signal
}

// relayAtExit starts the relay of s's signals.
func (s *signals) relayAtExit() *exitRelay {
	x := &exitRelay{sigs: s, c: make(chan os.Signal, 8), look: make(chan relayLook)}
	go x.run()
	return x
}

func (x *exitRelay) run() {
	var first os.Signal
	armed := false
	take := func(sig os.Signal) {
		if sig == syscall.SIGTSTP || sig == syscall.SIGCONT {
			return
		}
		if first == nil {
			first = sig
		}
		if armed {
			x.endNow(sig)
		}
		select {
		case x.c <- sig:
		default: // the waits have had one already
		}
	}
	for {
		select {
		case sig := <-x.sigs.c:
			take(sig)
		case l := <-x.look:
			for sig := x.sigs.pending(); sig != nil; sig = x.sigs.pending() {
				take(sig)
			}
			l.reply <- first // the caller ends by it
			armed = armed || (l.arm && first == nil)
		}
	}
}

// late returns the first ending signal that came since the relay started,
// or nil; every signal delivered before the call is counted (flush). With
// arm and none, one that comes from then on ends the process at once.
func (x *exitRelay) late(arm bool) os.Signal {
	x.sigs.flush()
	reply := make(chan os.Signal, 1)
	x.look <- relayLook{arm: arm, reply: reply}
	return <-reply
}

// forget drops the signals passed on to the exit's waits so far: once the
// late signal is the run's ending, only another one ends a wait at once
// (the waits before may not have taken it; a bounded wait would give up at
// once on it, and the last lines with it). Every signal the relay took is
// in x.c before late returns.
func (x *exitRelay) forget() {
	for {
		select {
		case <-x.c:
		default:
			return
		}
	}
}

// endNow ends the process by sig, as main does for a run a signal ended:
// the run's records are written.
func (x *exitRelay) endNow(sig os.Signal) {
	e := x.sigs.exitError(sig)
	if e.signal != 0 {
		raiseDefault(e.signal)
	}
	os.Exit(e.code)
}

// lateEnding is end once sig came after the run chose it: the signal's
// exit code and reason, said on the console and in the log, and put in
// the metadata and the state file (whose summary was summary).
func lateEnding(r *runner, end ending, sig os.Signal, summary string) ending {
	was := end.reason
	end.code, end.signal = exitCodeFor(sig), sig
	end.reason = fmt.Sprintf("%s, then interrupted (%s) as it ended", was, signalName(sig))
	note := fmt.Sprintf("%s came as the run ended (%s): it ends by it, exit %d", signalName(sig), was, end.code)
	r.log.printf("[%s]", note)
	r.con.errorf("%s", note)
	r.live.endedLate(end.code, fmt.Sprintf("%s, then interrupted (%s) as it ended", summary, signalName(sig)))
	m := r.ws.meta
	m.LastStopReason, m.LastExitCode = end.reason, &end.code
	if err := r.ws.save(); err != nil && !(end.gone && isGone(err)) {
		r.checks.disk.warnSave(r.con, r.ws.metadataPath(), err)
	}
	return end
}

// testSignalAtEnv names the point of a run's end at which the tool sends
// itself SIGHUP, for the scenario that pins the late signal
// (signal-late-end): "finish" (its end chosen), "exit" (its records
// written, before the last look). A test hook: unset outside tests, and
// then nothing is sent.
const testSignalAtEnv = "CLAUDE_ITERATE_TEST_SIGNAL_AT"

// testSignalAt is the hook of testSignalAtEnv at point.
func testSignalAt(point string) {
	if os.Getenv(testSignalAtEnv) == point {
		raiseHere(syscall.SIGHUP)
	}
}
