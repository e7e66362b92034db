package main

// This file implements the supervisor: the one event loop of a run. It waits
// for a child (the agent, a test command, a script) or for time to pass (the
// delay between iterations, a usage-limit wait), and answers signals, keys
// and the stop file meanwhile. The rules are:
//
//   - First Ctrl+C: no new iteration starts; SIGINT (and SIGCONT) go to the
//     child's group; the supervisor waits for the child to exit, and the run
//     then ends with 130. After the interrupt grace it escalates by itself.
//   - Second Ctrl+C, or Ctrl+\ (SIGQUIT) at any time: SIGKILL to the
//     child's group and every descendant.
//   - SIGTERM / SIGHUP: SIGTERM (and SIGCONT) to the child's group, SIGKILL
//     after terminateTimeout. Their repeats do not escalate (signals.go).
//   - A signal that came while no child ran is handled before the next
//     child starts: no agent starts after a signal.
//   - Time spent suspended is not spent from any timer: the interrupt grace,
//     the terminate timeout, the iteration and idle timeouts and the
//     after-result watchdog all resume where they were.
//   - The hang protections (iteration timeout, idle timeout, the agent
//     still running after its result, or after closing its output without
//     one) use the SIGTERM-then-SIGKILL path.
//   - Ctrl+Z: stop every process of the run (sweep.go), restore the
//     terminal (from the foreground, or while its modes are still the
//     keyboard's: keyboard.pause), then stop the tool (suspend.go: with SIGSTOP, a
//     self-sent SIGTSTP is dropped by the Go runtime's handler; under a
//     wrapper, by waiting for the SIGCONT). Under a wrapper that leads the
//     job (bash -c, a script, make), the wrapper stops at once and the
//     shell takes the terminal back meanwhile: no terminal call of the
//     tool may stop it there (withoutTTOU). On continue: resume them all,
//     and re-enter cbreak mode only if in the foreground again. A SIGTSTP that reaches a
//     tool whose process group is orphaned (started under setsid, no job
//     control shell) is ignored, as the kernel would: nobody could continue
//     it. Ctrl+Z pressed twice before the tool stopped suspends it once.
//   - A panic in a child's reader or writer, or in the keyboard's reader,
//     ends the child by force and the run with an internal error; the
//     terminal is restored on the way out like on every other.
//   - Outside a child, every ending signal ends the wait at once.
//   - When a child ends, by any path, its output is drained and everything
//     it left behind is swept (sweep.go).

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// Timings of the supervisor.
const (
	defaultInterruptGrace = 10 * time.Second
	terminateTimeout      = 5 * time.Second
	resultWatchdogDefault = 30 * time.Second
	// pollEvery is how often the supervisor looks around (the stop file,
	// the panel, the state file) while nothing else is due: it wakes only
	// then, at a deadline, or on an event.
	pollEvery = time.Second
	// pollInterval is the look-around period while the keyboard waits in
	// the background: bash's fg of a running background job sends no
	// SIGCONT, so coming back to the foreground is noticed by polling.
	pollInterval = 100 * time.Millisecond
	// quietPollEvery replaces pollEvery when nobody watches the run live
	// (no panel, no notifications): a stop request is still seen at the
	// iteration's end, and the state file for watch stays a few seconds
	// fresh.
	quietPollEvery  = 5 * time.Second
	drainWait       = 200 * time.Millisecond
	readerCloseWait = 2 * time.Second
)

// supervisor is the run's event loop and the state it shares across the
// children of a run: the signal that is ending the run, and the time spent
// suspended.
type supervisor struct {
	sigs *signals
	kb   *keyboard // nil without a keyboard
	// term is the terminal's saved modes, whose cursor Ctrl+Z shows; nil
	// without a terminal.
	term *savedMode
	con  *console
	log  *runLog

	interruptGrace time.Duration
	resultWatchdog time.Duration

	hooks    supervisorHooks
	lastPoll time.Time

	// interrupt is the signal that is ending the run, once one came.
	interrupt os.Signal
	// fault is an internal error (a panic in a helper goroutine) that ends
	// the run.
	fault string
	// suspended is the time the tool has spent stopped (Ctrl+Z).
	suspended time.Duration
	// holding is set while the console holds output (ttyhold.go).
	holding bool
}

// supervisorHooks are what the supervisor tells the run of, set once
// before the first child starts (runner.startLive).
type supervisorHooks struct {
	// key is called for each key pressed; poll at every look-around (at
	// least once per pollEvery).
	key  func(k byte)
	poll func()
	// quiet is set when nobody watches the run live: the supervisor looks
	// around every quietPollEvery only, or pollEvery while pending reports
	// something to write (the state file, for watch); nudge wakes it when
	// that becomes so.
	quiet   bool
	pending func() bool
	nudge   <-chan struct{}
	// suspended is called as the run stops (Ctrl+Z), with the time, once
	// every process of the run is stopped, and with the zero time once it
	// goes on: the state file says it to ps, watch and serve.
	suspended func(at time.Time)
}

// childEnd is how a supervised child ended.
type childEnd struct {
	hang      string        // the hang protection that fired
	fault     string        // a panic in one of its goroutines
	forced    bool          // the child was SIGKILLed
	recorded  []int         // its descendants, recorded before the kill
	suspended time.Duration // time spent suspended while it ran
	// readerLeft: a signal ends the run, and a reader of the child's
	// output is still held up writing it to a standard output that does
	// not drain: what the reader fills is not to be read.
	readerLeft bool
}

// pollPeriod is the time to the next look-around.
func (s *supervisor) pollPeriod() time.Duration {
	switch {
	case s.kb != nil && !s.kb.active():
		return pollInterval
	case s.hooks.quiet && s.kb == nil && (s.hooks.pending == nil || !s.hooks.pending()):
		return quietPollEvery
	}
	return pollEvery
}

// nextWake is when the supervisor must wake next: the next look-around, or
// an earlier deadline (zero deadlines are none). A deadline wakes it a
// millisecond late, so that the check it serves finds the time passed.
func (s *supervisor) nextWake(deadlines ...time.Time) time.Duration {
	now := time.Now()
	wake := s.lastPoll.Add(s.pollPeriod())
	if s.lastPoll.IsZero() {
		wake = now.Add(s.pollPeriod())
	}
	for _, d := range deadlines {
		if !d.IsZero() && d.Before(wake) {
			wake = d.Add(time.Millisecond)
		}
	}
	return wake.Sub(now)
}

// hangDeadline is when c's next hang protection would fire, or zero.
func (s *supervisor) hangDeadline(c *child, suspended time.Duration) time.Time {
	var first time.Time
	earliest := func(t time.Time) {
		if first.IsZero() || t.Before(first) {
			first = t
		}
	}
	if c.timeout > 0 {
		earliest(c.started.Add(c.timeout + suspended))
	}
	if c.idle > 0 {
		earliest(time.Unix(0, c.lastOutput.Load()).Add(c.idle))
	}
	if at := c.watchdogFrom(); at != 0 {
		earliest(time.Unix(0, at).Add(s.resultWatchdog))
	}
	return first
}

// keys returns the key channel, or nil (blocks forever) without a keyboard.
func (s *supervisor) keys() <-chan byte {
	if s.kb == nil {
		return nil
	}
	return s.kb.keys
}

// poll runs the periodic checks: the stop file, and whether the tool came
// back to the foreground (bash's fg of a running background job sends no
// SIGCONT), to read keys again.
func (s *supervisor) poll() {
	s.lastPoll = time.Now()
	if s.hooks.poll != nil {
		s.hooks.poll()
	}
	s.con.releaseHeld(false)
	if h, known := s.con.holding(); known && h != s.holding {
		s.holding = h
		if h {
			s.log.printf("[output held: the tool is in the background of a tostop terminal]")
		} else {
			s.log.printf("[held output written]")
		}
		s.log.Flush()
	}
	if s.kb == nil {
		return
	}
	fg := s.kb.inForeground()
	switch {
	case fg && !s.kb.active():
		s.kb.resume()
	case !fg && s.kb.active():
		s.kb.pause()
	}
}

// watch waits for c to exit, answering everything else, then drains its
// output and ends what it left behind.
func (s *supervisor) watch(c *child) childEnd {
	end := s.await(c)
	s.cleanUp(c, &end)
	return end
}

// await waits for c to exit.
func (s *supervisor) await(c *child) childEnd {
	w := &waiting{c: c}
	s.waitLoop(w)
	return w.end
}

// waiting is what the supervisor's loop waits for: a child to exit (c
// set), or time to pass (until, check).
type waiting struct {
	c          *child
	end        childEnd
	escalateAt time.Time // when a child's graceful end escalates to SIGKILL

	until time.Time
	check func(left time.Duration) bool
	ready <-chan struct{} // without a child: its close ends the wait too
}

// waitLoop is the supervisor's one event loop. It answers keys, signals,
// suspension and look-arounds until the child exits, or until the time is
// up, check says so, or a signal ends a wait without a child (it then
// reports true).
func (s *supervisor) waitLoop(w *waiting) (interrupted bool) {
	tick := time.NewTimer(pollEvery)
	defer tick.Stop()
	var done <-chan struct{}
	var panicked <-chan any
	if w.c != nil {
		done, panicked = w.c.done, w.c.panicked
	} else {
		done = w.ready
	}
	for {
		left := time.Until(w.until)
		if w.c == nil {
			if left <= 0 {
				return false
			}
			tick.Reset(s.nextWake(w.until))
		} else {
			hang := time.Time{}
			if w.end.hang == "" && s.interrupt == nil {
				hang = s.hangDeadline(w.c, w.end.suspended)
			}
			tick.Reset(s.nextWake(w.escalateAt, hang))
		}
		select {
		case <-done:
			return false
		case p := <-panicked:
			s.childPanic(w, p)
		case p := <-s.kb.panics():
			s.keyboardPanic(p)
			if w.c == nil {
				return true
			}
			s.forceKill(w.c, &w.end, "")
		case k := <-s.keys():
			if s.hooks.key != nil {
				s.hooks.key(k)
			}
			if w.c == nil && w.check(left) {
				return false
			}
		case <-s.hooks.nudge:
			// Something to write: the next wake is computed anew.
		case sig := <-s.sigs.c:
			switch {
			case sig == syscall.SIGTSTP:
				s.suspendWaiting(w)
			case sig == syscall.SIGCONT:
				// Handled where the tool stopped itself.
			case w.c == nil:
				s.interrupt = sig
				return true
			default:
				s.signalChild(w, sig)
			}
		case now := <-tick.C:
			s.poll()
			if w.c == nil {
				if w.check(left) {
					return false
				}
				continue
			}
			s.childDue(w, now)
		}
	}
}

// childPanic ends a child one of whose goroutines panicked.
func (s *supervisor) childPanic(w *waiting, p any) {
	if w.end.fault != "" {
		return
	}
	w.end.fault = fmt.Sprintf("internal error: %v", p)
	if s.fault == "" {
		s.fault = w.end.fault
	}
	s.con.errorf("%s: ending %s", w.end.fault, w.c.who())
	s.log.printf("INTERNAL ERROR: %v", p)
	s.forceKill(w.c, &w.end, "")
}

// suspendWaiting suspends the run (Ctrl+Z); the timers of the wait resume
// where they were.
func (s *supervisor) suspendWaiting(w *waiting) {
	d := s.suspend(w.c)
	if w.c == nil {
		w.until = w.until.Add(d)
		return
	}
	w.end.suspended += d
	w.c.resumedAfter(d, time.Now())
	if !w.escalateAt.IsZero() {
		w.escalateAt = w.escalateAt.Add(d)
	}
}

// signalChild answers an ending signal while a child runs.
func (s *supervisor) signalChild(w *waiting, sig os.Signal) {
	c := w.c
	switch {
	case s.interrupt != nil && escalates(sig):
		s.forceKill(c, &w.end, "")
	case s.interrupt != nil:
		// A repeat of SIGTERM or SIGHUP: no escalation, but a graceful
		// Ctrl+C wait becomes a terminate wait.
		s.log.printf("[%s again: still waiting for %s]", signalName(sig), c.who())
		if s.interrupt == syscall.SIGINT && !w.end.forced {
			terminate(c)
			if at := time.Now().Add(terminateTimeout); at.Before(w.escalateAt) {
				w.escalateAt = at
			}
		}
	case sig == syscall.SIGQUIT:
		s.interrupt = sig
		s.log.printf("[SIGQUIT: forced stop]")
		s.forceKill(c, &w.end, "")
	// In each case the child is signalled before anything is written: a
	// terminal that does not drain (an agent flooding it, a slow link)
	// blocks the write, and the stop must not wait for it.
	case sig == syscall.SIGINT:
		s.interrupt = sig
		signalGroup(c.pgid, syscall.SIGINT)
		signalGroup(c.pgid, syscall.SIGCONT)
		w.escalateAt = time.Now().Add(s.interruptGrace)
		s.log.printf("[SIGINT: forwarded to %s]", c.who())
		s.con.rawf("Interrupted: waiting for %s to finish cleaning up (press Ctrl+C again to force quit)", c.name)
	default: // SIGTERM, SIGHUP
		s.interrupt = sig
		terminate(c)
		w.escalateAt = time.Now().Add(terminateTimeout)
		s.log.printf("[%s: terminating %s]", signalName(sig), c.who())
		s.con.rawf("Interrupted. Terminating %s process...", c.name)
	}
}

// childDue does what is due at now while a child runs: the escalation of
// its graceful end, and the hang protections.
func (s *supervisor) childDue(w *waiting, now time.Time) {
	c := w.c
	// The child is signalled before anything is written: a terminal that
	// does not drain may hold a message up (see signalChild).
	if !w.escalateAt.IsZero() && !now.Before(w.escalateAt) {
		w.escalateAt = time.Time{}
		note := ""
		if s.interrupt == syscall.SIGINT {
			note = fmt.Sprintf("%s did not exit within %s.", c.name, s.interruptGrace)
		}
		s.forceKill(c, &w.end, note)
		return
	}
	if w.end.hang == "" && s.interrupt == nil {
		if hang := s.hangCheck(c, now, w.end.suspended); hang != "" {
			w.end.hang = hang
			terminate(c)
			w.escalateAt = now.Add(terminateTimeout)
			s.log.printf("[%s: terminating %s]", hang, c.who())
			s.con.noticef("%s: ending %s", hang, c.who())
		}
	}
}

// keyboardPanic records a panic of the keyboard's reader as the run's fault.
func (s *supervisor) keyboardPanic(p any) {
	if s.fault == "" {
		s.fault = fmt.Sprintf("internal error: %v", p)
		s.log.printf("INTERNAL ERROR (keyboard): %v", p)
	}
}

// hangCheck returns which hang protection, if any, should end c.
func (s *supervisor) hangCheck(c *child, now time.Time, suspended time.Duration) string {
	if d := c.timeout; d > 0 && now.Sub(c.started)-suspended > d {
		if !c.isAgent {
			return fmt.Sprintf("%s timed out after %s", c.name, d)
		}
		return fmt.Sprintf("iteration timeout (%s)", d)
	}
	if d := c.idle; d > 0 && now.Sub(time.Unix(0, c.lastOutput.Load())) > d {
		return fmt.Sprintf("idle timeout (no output for %s)", d)
	}
	if at := c.watchdogFrom(); at != 0 && now.Sub(time.Unix(0, at)) > s.resultWatchdog {
		if c.resultAt.Load() == 0 {
			return fmt.Sprintf("agent closed its output without a result and was still running %s later", s.resultWatchdog)
		}
		return fmt.Sprintf("agent still running %s after its result", s.resultWatchdog)
	}
	return ""
}

// terminate asks c's group to end.
func terminate(c *child) {
	signalGroup(c.pgid, syscall.SIGTERM)
	signalGroup(c.pgid, syscall.SIGCONT)
}

// forceKill kills c's group and every descendant, recording the
// descendants for the sweep.
// note, if set, is written before the kill's own message, once the kill
// is done.
func (s *supervisor) forceKill(c *child, end *childEnd, note string) {
	if end.forced {
		return
	}
	end.forced = true
	end.recorded = append(end.recorded, killTree(c.pid, c.pgid)...)
	if note != "" {
		s.con.rawf("%s", note)
	}
	s.log.printf("[force-killing %s]", c.who()) // after the kill: see signalChild
	s.con.rawf("Force-killing %s...", c.name)
}

// cleanUp drains c's output and ends everything it left behind.
func (s *supervisor) cleanUp(c *child, end *childEnd) {
	drained := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		for _, ch := range []chan struct{}{c.streamDone, c.stderrDone} {
			select {
			case <-ch:
			case <-t.C:
				return false
			}
		}
		return true
	}
	drained(drainWait)
	// What the child left, in its group or outside it: TERM, then KILL
	// after a grace (at once when it was force-killed).
	if n := sweepDescendants(end.forced, end.recorded, c.pgid); n > 0 {
		s.log.printf("[ended %d leftover processes of %s]", n, c.who())
	}
	if drained(readerCloseWait) {
		return
	}
	c.closeReaders()
	// A reader that a read deadline does not end is writing: to a standard
	// output that does not drain (a paused pager, a stopped terminal), or
	// stuck in a system call. It is waited for, but a signal still ends
	// the run then (tryout6 #1: a reader stuck for good made it deaf to
	// every signal), and does not wait for it.
	if s.interrupt == nil && !s.awaitReaders(c) {
		return
	}
	if !drained(readerCloseWait) {
		end.readerLeft = true
		s.log.printf("[%s's output is held up: standard output does not drain; the rest of it is not shown nor logged]", c.who())
	}
}

// awaitReaders waits for c's readers to end, answering keys, signals and
// suspension meanwhile; it reports whether a signal ended the wait first.
func (s *supervisor) awaitReaders(c *child) (interrupted bool) {
	for _, ch := range []chan struct{}{c.streamDone, c.stderrDone} {
		if s.waitLoop(&waiting{ready: ch, until: time.Now().Add(100 * 365 * 24 * time.Hour), check: func(time.Duration) bool { return false }}) {
			return true
		}
	}
	return false
}

// sleep waits for d, answering keys, signals and suspension (which extends
// the wait by the time suspended). check is called after each key and poll
// with the time left; a true answer ends the wait early. It reports whether
// a signal ended the wait (s.interrupt is then set).
func (s *supervisor) sleep(d time.Duration, check func(left time.Duration) bool) (interrupted bool) {
	// No flush: what a wait decides is decided again, flushed, before the
	// next child starts (startBlocked) or the run chooses its exit status.
	if s.answerPending() {
		return true
	}
	return s.waitLoop(&waiting{until: time.Now().Add(d), check: check})
}

// ending reports whether a signal or a fault is ending the run.
func (s *supervisor) ending() bool {
	return s.interrupt != nil || s.fault != ""
}

// startBlocked answers the signals that came while no child ran (at an
// iteration's boundary, in setup, in a zero delay), and reports whether one
// of them ends the run, or a fault did: then no child may start.
func (s *supervisor) startBlocked() bool {
	s.sigs.flush()
	return s.answerPending()
}

// answerPending answers the signals already in the run's channel, and
// reports whether one of them ends the run, or a fault did.
func (s *supervisor) answerPending() bool {
	for {
		sig := s.sigs.pending()
		switch {
		case sig == nil:
			return s.ending()
		case sig == syscall.SIGTSTP:
			s.suspend(nil)
		case sig == syscall.SIGCONT:
		default:
			if s.interrupt == nil {
				s.interrupt = sig
			}
		}
	}
}
