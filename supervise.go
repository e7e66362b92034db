//go:build linux || darwin

package main

// This file implements the run's waiting: for the agent, for the delay
// between iterations, for a usage limit to reset. The rules are (SPEC §6):
//
//   - First Ctrl+C: no new iteration starts; SIGINT (and SIGCONT) go to the
//     agent's group; the tool waits for the agent to exit, then exits 130.
//     After --interrupt-grace it escalates by itself.
//   - Second Ctrl+C: SIGKILL to the agent's group and every descendant.
//   - SIGTERM / SIGHUP: SIGTERM (and SIGCONT) to the agent's group, SIGKILL
//     after terminateTimeout; exit 143 / 129.
//   - Hang protections use the SIGTERM-then-SIGKILL path.
//   - Ctrl+Z: restore the terminal, stop the agent's group and its
//     descendants outside it, then stop the tool with SIGSTOP (a self-sent
//     SIGTSTP is dropped by the Go runtime's handler). On continue: resume
//     them all, and re-enter cbreak mode only if in the foreground again.
//   - Outside an iteration, every signal ends the run at once.

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// superviseResult is what happened while an agent ran.
type superviseResult struct {
	hang      string // the hang protection that fired
	forced    bool   // the agent was SIGKILLed
	recorded  []int  // its descendants, recorded before the kill
	suspended time.Duration
}

// keyChan returns the key channel, or nil (blocks forever) without a
// keyboard.
func (r *runner) keyChan() <-chan byte {
	if r.kb == nil {
		return nil
	}
	return r.kb.keys
}

// onKey handles a key press.
func (r *runner) onKey(k byte) {
	if k == 's' || k == 'S' {
		r.toggleStop()
	}
}

// pollForeground starts reading keys again once the tool is back in the
// foreground (bash's fg of a running background job sends no SIGCONT).
func (r *runner) pollForeground() {
	if r.kb == nil {
		return
	}
	fg := r.kb.inForeground()
	switch {
	case fg && !r.kb.active():
		r.kb.resume()
	case !fg && r.kb.active():
		r.kb.pause()
	}
}

// supervise waits for the agent to exit, answering everything else.
func (r *runner) supervise(a *agent) superviseResult {
	var res superviseResult
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	var escalateAt time.Time
	for {
		select {
		case <-a.done:
			return res
		case k := <-r.keyChan():
			r.onKey(k)
		case sig := <-r.sigs:
			switch sig {
			case syscall.SIGTSTP:
				res.suspended += r.suspend(a)
				a.lastOutput.Store(time.Now().UnixNano())
			case syscall.SIGCONT:
				// Handled where the tool stopped itself.
			case syscall.SIGINT:
				if r.interruptSig != nil {
					r.forceKill(a, &res)
					continue
				}
				r.interruptSig = sig
				r.con.rawf("Interrupted: waiting for %s to finish cleaning up (press Ctrl+C again to force quit)", a.name)
				r.log.printf("[SIGINT: forwarded to the agent]")
				signalGroup(a.pgid, syscall.SIGINT)
				signalGroup(a.pgid, syscall.SIGCONT)
				escalateAt = time.Now().Add(r.interruptGrace)
			default: // SIGTERM, SIGHUP
				if r.interruptSig != nil {
					r.forceKill(a, &res)
					continue
				}
				r.interruptSig = sig
				r.con.rawf("Interrupted. Terminating %s process...", a.name)
				r.log.printf("[%s: terminating the agent]", signalName(sig))
				r.terminate(a)
				escalateAt = time.Now().Add(terminateTimeout)
			}
		case now := <-tick.C:
			r.pollStopFile(false)
			r.pollForeground()
			if !escalateAt.IsZero() && now.After(escalateAt) {
				escalateAt = time.Time{}
				if r.interruptSig == syscall.SIGINT {
					r.con.rawf("%s did not exit within %s.", a.name, r.interruptGrace)
				}
				r.forceKill(a, &res)
				continue
			}
			if res.hang == "" && r.interruptSig == nil {
				if hang := r.hangCheck(a, now, res.suspended); hang != "" {
					res.hang = hang
					who := "the agent"
					if a.name != "claude" {
						who = a.name
					}
					r.con.noticef("%s: ending %s", hang, who)
					r.log.printf("[%s: terminating the agent]", hang)
					r.terminate(a)
					escalateAt = now.Add(terminateTimeout)
				}
			}
		}
	}
}

// hangCheck returns which hang protection, if any, should end the agent.
func (r *runner) hangCheck(a *agent, now time.Time, suspended time.Duration) string {
	if d := a.timeout; d > 0 && now.Sub(a.started)-suspended > d {
		if a.name != "claude" {
			return fmt.Sprintf("%s timed out after %s", a.name, d)
		}
		return fmt.Sprintf("iteration timeout (%s)", d)
	}
	if d := a.idle; d > 0 && now.Sub(time.Unix(0, a.lastOutput.Load())) > d {
		return fmt.Sprintf("idle timeout (no output for %s)", d)
	}
	if at := a.resultAt.Load(); at != 0 && now.Sub(time.Unix(0, at)) > r.resultWatchdog {
		return fmt.Sprintf("agent still running %s after its result", r.resultWatchdog)
	}
	return ""
}

// terminate asks the agent's group to end.
func (r *runner) terminate(a *agent) {
	signalGroup(a.pgid, syscall.SIGTERM)
	signalGroup(a.pgid, syscall.SIGCONT)
}

// forceKill kills the agent's group and every descendant, recording the
// descendants first (once the agent is dead they re-parent away).
func (r *runner) forceKill(a *agent, res *superviseResult) {
	if res.forced {
		return
	}
	r.con.rawf("Force-killing %s...", a.name)
	r.log.printf("[force-killing the agent]")
	res.forced = true
	for _, p := range descendants(a.pid, listProcs()) {
		res.recorded = append(res.recorded, p.pid)
		syscall.Kill(p.pid, syscall.SIGKILL)
	}
	signalGroup(a.pgid, syscall.SIGKILL)
}

// endAgent drains the agent's output and ends everything it left behind.
func (r *runner) endAgent(a *agent, res superviseResult) {
	drained := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		for _, c := range []chan struct{}{a.streamDone, a.stderrDone} {
			select {
			case <-c:
			case <-t.C:
				return false
			}
		}
		return true
	}
	drained(drainWait)
	// The group first (cheap, and it holds most leftovers), then the sweep.
	signalGroup(a.pgid, syscall.SIGKILL)
	if n := sweepDescendants(res.forced, res.recorded); n > 0 {
		r.log.printf("[ended %d leftover processes of the agent]", n)
	}
	if !drained(readerCloseWait) {
		a.closeReaders()
		<-a.streamDone
		<-a.stderrDone
	}
}

// wait waits for d (a delay, or a usage-limit wait with show set), ending
// early on a signal, a stop request or the deadline.
func (r *runner) wait(d time.Duration, show func(left time.Duration)) *ending {
	until := time.Now().Add(d)
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	lastShown := time.Time{}
	for {
		left := time.Until(until)
		if left <= 0 {
			return nil
		}
		select {
		case k := <-r.keyChan():
			r.onKey(k)
			if r.stopSource != "" {
				return r.checkStopRequest()
			}
		case sig := <-r.sigs:
			switch sig {
			case syscall.SIGTSTP:
				until = until.Add(r.suspend(nil))
			case syscall.SIGCONT:
			default:
				r.interruptSig = sig
				end := r.interruptEnding()
				return &end
			}
		case <-tick.C:
			r.pollStopFile(false)
			r.pollForeground()
			if r.stopSource != "" {
				return r.checkStopRequest()
			}
			if end := r.checkDeadline(); end != nil {
				return end
			}
			if show != nil && time.Since(lastShown) >= time.Second {
				lastShown = time.Now()
				show(left)
			}
		}
	}
}

// waitForLimit waits until a usage limit resets (+limitMargin).
func (r *runner) waitForLimit(reset time.Time) *ending {
	now := time.Now()
	margin := limitMargin
	if m, err := time.ParseDuration(os.Getenv(limitMarginEnv)); err == nil && m >= 0 {
		margin = m
	}
	var d time.Duration
	switch {
	case reset.IsZero():
		d = defaultLimitWait
	case reset.After(now):
		d = reset.Sub(now) + margin
	default:
		d = margin
	}
	until := now.Add(d)
	resetText := "an unknown time"
	if !reset.IsZero() {
		resetText = reset.Local().Format("15:04:05")
	}
	r.con.noticef("usage limit reached (resets at %s): waiting until %s, then retrying the iteration", resetText, until.Local().Format("15:04:05"))
	r.log.printf("[usage limit reached: resets at %s; waiting until %s]", resetText, logTime(until))
	r.log.Flush()
	lastPlain := time.Now()
	end := r.wait(d, func(left time.Duration) {
		if r.con.fancy {
			r.con.status(false, "Usage limit: retrying in %s (s or Ctrl+C to stop)", left.Round(time.Second))
		} else if time.Since(lastPlain) >= time.Minute {
			lastPlain = time.Now()
			r.con.status(true, "Usage limit: retrying in %s", left.Round(time.Second))
		}
	})
	if end == nil {
		r.con.progressf("Usage limit wait over: retrying the iteration")
	}
	return end
}

// suspend stops the agent, its descendants and the tool (Ctrl+Z), and
// resumes them all when the tool is continued. It returns how long the
// tool was stopped.
func (r *runner) suspend(a *agent) time.Duration {
	if r.kb != nil {
		r.kb.pause() // restores the terminal's mode
	}
	r.con.mu.Lock()
	r.con.clearStatus()
	r.con.out.Flush()
	r.con.mu.Unlock()
	r.log.printf("[suspended (SIGTSTP)]")
	r.log.Flush()
	if a != nil {
		signalGroup(a.pgid, syscall.SIGTSTP)
		signalOutsideGroup(a.pid, a.pgid, syscall.SIGSTOP)
	}
	stopped := time.Now()
	raiseHere(syscall.SIGSTOP)
	d := time.Since(stopped)
	r.suspended += d
	if a != nil {
		signalOutsideGroup(a.pid, a.pgid, syscall.SIGCONT)
		signalGroup(a.pgid, syscall.SIGCONT)
	}
	r.log.printf("[resumed after %s]", roundDuration(d))
	if r.kb != nil {
		r.kb.resume() // only if in the foreground again
	}
	return d
}

// finish ends the run: the one exit path.
func (r *runner) finish(end ending) error {
	if end.hint != "" {
		r.log.printf("HINT: %s", end.hint)
	}
	if removed, err := removeStopFile(r.ws.stopPath()); err != nil {
		r.con.errorf("warning: %v", err)
	} else if removed {
		r.log.printf("[deleted %s]", stopFile)
	}
	m := r.ws.meta
	m.Status, m.LastStopReason, m.PID = end.status, end.reason, 0
	code := end.code
	m.LastExitCode = &code
	if err := r.ws.save(); err != nil {
		r.con.errorf("warning: saving %s: %v", r.ws.metadataPath(), err)
	}
	elapsed := time.Since(r.start) - r.suspended
	r.log.section("RUN ENDED", "Ended: "+logTime(time.Now()), "Reason: "+end.reason,
		fmt.Sprintf("Exit code: %d", end.code), fmt.Sprintf("Iterations: %d", r.iter),
		fmt.Sprintf("Cost: $%.4f", r.cost), "Elapsed: "+roundDuration(elapsed).String())
	r.log.Close()
	r.kb.close()
	if r.interruptSig == syscall.SIGTERM || r.interruptSig == syscall.SIGHUP {
		r.con.rawf("Done.")
	}
	noun := "iterations"
	if r.iter == 1 {
		noun = "iteration"
	}
	summary := fmt.Sprintf("%s (%d %s, %s, $%.2f)", end.reason, r.iter, noun, roundDuration(elapsed), r.cost)
	switch {
	case end.code == exitOK:
		r.con.noticef("%s", summary)
	default:
		r.con.errorf("%s", summary)
		if end.hint != "" {
			r.con.errorf("hint: %s", end.hint)
		}
	}
	if r.interruptSig != nil {
		endedBySignal = true
	}
	if end.code == exitOK {
		return nil
	}
	return &exitCodeError{code: end.code}
}
