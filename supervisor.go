package main

// This file implements the supervisor: the one event loop of a run. It waits
// for a child (the agent, a test command, a script) or for time to pass (the
// delay between iterations, a usage-limit wait), and answers signals, keys
// and the stop file meanwhile. The rules are:
//
//   - First Ctrl+C: no new iteration starts; SIGINT (and SIGCONT) go to the
//     child's group; the supervisor waits for the child to exit, and the run
//     then ends with 130. After the interrupt grace it escalates by itself.
//   - Second Ctrl+C: SIGKILL to the child's group and every descendant.
//   - SIGTERM / SIGHUP: SIGTERM (and SIGCONT) to the child's group, SIGKILL
//     after terminateTimeout.
//   - The hang protections (iteration timeout, idle timeout, the agent
//     still running after its result) use the SIGTERM-then-SIGKILL path.
//   - Ctrl+Z: restore the terminal, stop the child's group and its
//     descendants outside it, then stop the tool with SIGSTOP (a self-sent
//     SIGTSTP is dropped by the Go runtime's handler, and ignored in an
//     orphaned process group). On continue: resume them all, and re-enter
//     cbreak mode only if in the foreground again.
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
	pollInterval          = 100 * time.Millisecond
	drainWait             = 200 * time.Millisecond
	readerCloseWait       = 2 * time.Second
)

// supervisor is the run's event loop and the state it shares across the
// children of a run: the signal that is ending the run, and the time spent
// suspended.
type supervisor struct {
	sigs *signals
	kb   *keyboard // nil without a keyboard
	con  *console
	log  *runLog

	interruptGrace time.Duration
	resultWatchdog time.Duration

	// onKey is called for each key pressed; onPoll about every
	// pollInterval (the stop file's poll).
	onKey  func(k byte)
	onPoll func()

	// interrupt is the signal that is ending the run, once one came.
	interrupt os.Signal
	// suspended is the time the tool has spent stopped (Ctrl+Z).
	suspended time.Duration
}

// childEnd is how a supervised child ended.
type childEnd struct {
	hang      string        // the hang protection that fired
	forced    bool          // the child was SIGKILLed
	recorded  []int         // its descendants, recorded before the kill
	suspended time.Duration // time spent suspended while it ran
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
	if s.onPoll != nil {
		s.onPoll()
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
	s.cleanUp(c, end)
	return end
}

// await waits for c to exit.
func (s *supervisor) await(c *child) childEnd {
	var end childEnd
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	var escalateAt time.Time
	for {
		select {
		case <-c.done:
			return end
		case k := <-s.keys():
			if s.onKey != nil {
				s.onKey(k)
			}
		case sig := <-s.sigs.c:
			switch sig {
			case syscall.SIGTSTP:
				end.suspended += s.suspend(c)
				c.lastOutput.Store(time.Now().UnixNano())
			case syscall.SIGCONT:
				// Handled where the tool stopped itself.
			case syscall.SIGINT:
				if s.interrupt != nil {
					s.forceKill(c, &end)
					continue
				}
				s.interrupt = sig
				s.con.rawf("Interrupted: waiting for %s to finish cleaning up (press Ctrl+C again to force quit)", c.name)
				s.log.printf("[SIGINT: forwarded to %s]", c.who())
				signalGroup(c.pgid, syscall.SIGINT)
				signalGroup(c.pgid, syscall.SIGCONT)
				escalateAt = time.Now().Add(s.interruptGrace)
			default: // SIGTERM, SIGHUP
				if s.interrupt != nil {
					s.forceKill(c, &end)
					continue
				}
				s.interrupt = sig
				s.con.rawf("Interrupted. Terminating %s process...", c.name)
				s.log.printf("[%s: terminating %s]", signalName(sig), c.who())
				terminate(c)
				escalateAt = time.Now().Add(terminateTimeout)
			}
		case now := <-tick.C:
			s.poll()
			if !escalateAt.IsZero() && now.After(escalateAt) {
				escalateAt = time.Time{}
				if s.interrupt == syscall.SIGINT {
					s.con.rawf("%s did not exit within %s.", c.name, s.interruptGrace)
				}
				s.forceKill(c, &end)
				continue
			}
			if end.hang == "" && s.interrupt == nil {
				if hang := s.hangCheck(c, now, end.suspended); hang != "" {
					end.hang = hang
					s.con.noticef("%s: ending %s", hang, c.who())
					s.log.printf("[%s: terminating %s]", hang, c.who())
					terminate(c)
					escalateAt = now.Add(terminateTimeout)
				}
			}
		}
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
	if at := c.resultAt.Load(); at != 0 && now.Sub(time.Unix(0, at)) > s.resultWatchdog {
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
func (s *supervisor) forceKill(c *child, end *childEnd) {
	if end.forced {
		return
	}
	s.con.rawf("Force-killing %s...", c.name)
	s.log.printf("[force-killing %s]", c.who())
	end.forced = true
	end.recorded = append(end.recorded, killTree(c.pid, c.pgid)...)
}

// cleanUp drains c's output and ends everything it left behind.
func (s *supervisor) cleanUp(c *child, end childEnd) {
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
	// The group first (cheap, and it holds most leftovers), then the sweep.
	signalGroup(c.pgid, syscall.SIGKILL)
	if n := sweepDescendants(end.forced, end.recorded); n > 0 {
		s.log.printf("[ended %d leftover processes of %s]", n, c.who())
	}
	if !drained(readerCloseWait) {
		c.closeReaders()
		<-c.streamDone
		<-c.stderrDone
	}
}

// sleep waits for d, answering keys, signals and suspension (which extends
// the wait by the time suspended). check is called after each key and poll
// with the time left; a true answer ends the wait early. It reports whether
// a signal ended the wait (s.interrupt is then set).
func (s *supervisor) sleep(d time.Duration, check func(left time.Duration) bool) (interrupted bool) {
	until := time.Now().Add(d)
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		left := time.Until(until)
		if left <= 0 {
			return false
		}
		select {
		case k := <-s.keys():
			if s.onKey != nil {
				s.onKey(k)
			}
			if check(left) {
				return false
			}
		case sig := <-s.sigs.c:
			switch sig {
			case syscall.SIGTSTP:
				until = until.Add(s.suspend(nil))
			case syscall.SIGCONT:
			default:
				s.interrupt = sig
				return true
			}
		case <-tick.C:
			s.poll()
			if check(left) {
				return false
			}
		}
	}
}

// suspend stops c (if any), its descendants and the tool (Ctrl+Z), and
// resumes them all when the tool is continued. It returns how long the
// tool was stopped.
func (s *supervisor) suspend(c *child) time.Duration {
	if s.kb != nil {
		s.kb.pause() // restores the terminal's mode
	}
	s.con.mu.Lock()
	s.con.clearStatus()
	s.con.out.Flush()
	s.con.mu.Unlock()
	s.log.printf("[suspended (SIGTSTP)]")
	s.log.Flush()
	if c != nil {
		stopTree(c.pid, c.pgid)
	}
	stopped := time.Now()
	raiseHere(syscall.SIGSTOP)
	d := time.Since(stopped)
	s.suspended += d
	if c != nil {
		continueTree(c.pid, c.pgid)
	}
	s.log.printf("[resumed after %s]", roundDuration(d))
	if s.kb != nil {
		s.kb.resume() // only if in the foreground again
	}
	return d
}
