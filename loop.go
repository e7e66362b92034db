package main

// This file implements the loop of a run. The rules are: one agent at a
// time; an iteration is never cut short by a graceful stop (the .stop file,
// the s key), only by a signal or a hang protection; a pending signal is
// checked before every agent starts; after each iteration the stop
// conditions are evaluated, and the first met one ends the run; an
// iteration that hit a usage limit is not counted, and is retried after the
// reset; and every way out of a run goes through finish, which deletes
// .stop, writes the metadata and the log's last lines, restores the
// terminal and prints why the run ended.

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// runner is one run's state. Its fields are owned by the goroutine running
// the loop; a child's readers touch only the child and its outcome.
type runner struct {
	env      *cliEnv
	ws       *workspace
	opts     *runOptions
	cfg      *settings
	con      *console
	log      *runLog
	sup      *supervisor
	stop     *stopRequest
	lock     *runLock // the workspace's run lock, held until finish
	termMode *savedMode
	spawn    *spawner // starts every child of the run
	// promptCache holds the task (or ralph-mode prompt) file between
	// iterations, re-read when it changes.
	promptCache fileCache
	spec        childSpec // the agent's path, argv0 and arguments; input set per iteration
	mode        string
	start       time.Time

	maxIterations, stagnation, maxFailures int
	delay                                  time.Duration
	stops                                  stopSet
	systemPrompt, systemPromptSource       string

	iter           int // iterations counted in this run
	failStreak     int
	sinceProgress  int // iterations without progress (no_progress)
	bestCompleted  int // the highest progress.completed seen (loop mode)
	testFailStreak int
	lastTests      *testResults
	cost           float64
	statusWarned   bool
	refusedHinted  bool // the fix for refused tool calls was shown
	lastRefused    bool // the last iteration had refused tool calls
	// scratch is the dry run's copy of the workspace, removed at the end;
	// promptFile the system prompt's file, when it is passed as one.
	scratch, promptFile string
	dryRunOf            string // the workspace a dry run copied, as shown
	live                *live  // the panel, the state file, notifications
}

// ending is how a run ends.
type ending struct {
	code   int
	reason string
	status string
	hint   string
	// signal is the signal that ended the run, if one did.
	signal os.Signal
}

// elapsed is the run's time so far, time suspended excluded.
func (r *runner) elapsed() time.Duration {
	return time.Since(r.start) - r.sup.suspended
}

// runRun is the run command.
func runRun(env *cliEnv, args []string) error {
	opts, pos, err := parseRunFlags(args)
	if err != nil {
		return err
	}
	r := &runner{env: env, opts: opts, start: time.Now(), spawn: newSpawner()}
	defer r.removeTemporaries()
	// Signals first: before the terminal changes and before any child starts.
	r.sup = &supervisor{sigs: catchSignals(), interruptGrace: defaultInterruptGrace, resultWatchdog: resultWatchdogDefault}
	becomeSubreaper()
	err = r.setup(pos)
	defer r.lock.release() // idempotent: finish releases it first
	if err != nil {
		return err
	}
	r.termMode = saveTerminalMode(env.stdin, env.stdout, env.stderr)
	if !opts.noKeyboard {
		r.sup.kb = openKeyboard(env.stdin)
	}
	defer r.sup.kb.close()
	r.startLive()
	end := r.protectedLoop()
	if end.signal == nil && r.sup.startBlocked() && r.sup.interrupt != nil {
		// A signal came as the run was ending on its own: it still ends the
		// run as a signal does, so that a calling shell loop stops too.
		end = r.interruptEnding()
	}
	return r.finish(end)
}

// protectedLoop runs the loop, turning a panic into an error ending so that
// cleanup still runs and no stack trace reaches the user.
func (r *runner) protectedLoop() (end ending) {
	defer func() {
		if p := recover(); p != nil {
			r.log.printf("INTERNAL ERROR: %v", p)
			end = ending{code: exitError, reason: fmt.Sprintf("error: internal error: %v", p), status: statusFailed}
		}
	}()
	return r.loop()
}

// loop runs iterations until something ends the run.
func (r *runner) loop() ending {
	if r.opts.dryRun {
		r.con.progressf("Dry run: the built-in mock agent stands in for claude, on a scratch copy of the workspace (%s is left unchanged)", r.dryRunOf)
	}
	keys := ""
	if r.sup.kb != nil {
		keys = "; press s to stop after the current iteration"
	}
	r.con.progressf("Running %s (%s mode, up to %s)%s", r.ws.Name, r.mode, plural(r.maxIterations, "iteration"), keys)
	var given []string
	for _, gc := range r.stops.ordered {
		if !gc.c.builtin {
			given = append(given, groupVerb[gc.group]+" "+gc.c.describe())
		}
	}
	if len(given) > 0 {
		r.con.progressf("Stop conditions: %s", strings.Join(given, "; "))
	}
	for {
		if end := r.checkDeadline(); end != nil {
			return *end
		}
		if r.sup.startBlocked() {
			return r.interruptEnding()
		}
		o, err := r.iterate()
		if err != nil {
			return ending{code: exitError, reason: "error: " + err.Error(), status: statusFailed}
		}
		if o.interrupted {
			r.charge(o)
			return r.interruptEnding()
		}
		if limited, reset := o.usageLimit(time.Now()); limited {
			r.charge(o)
			r.saveMetadata()
			r.log.Flush()
			if end := r.waitForLimit(reset); end != nil {
				return *end
			}
			continue // the iteration is not counted, and is retried
		}
		if end := r.afterIteration(o); end != nil {
			return *end
		}
		if end := r.wait(r.delay, nil); end != nil {
			return *end
		}
	}
}

// iterate runs one agent to its end.
func (r *runner) iterate() (*iterationOutcome, error) {
	n := r.iter + 1
	prompt, err := r.buildPrompt()
	if err != nil {
		return nil, err
	}
	started := time.Now()
	r.con.progressf("▶ Iteration %d/%d started at %s", n, r.maxIterations, started.Format("15:04:05"))
	r.log.section(fmt.Sprintf("ITERATION %d", n), "Started: "+logTime(started))
	r.log.printf("CLAUDE OUTPUT:")
	spec := r.spec
	spec.input = []byte(prompt)
	spec.env = append(spec.env[:len(spec.env):len(spec.env)], runIDEnv+"="+r.lock.record.RunID)
	transcript := r.con.transcript(r.log)
	r.live.iterationStarted(n)
	c, o, err := startAgent(r.spawn, spec, transcript, r.log, r.live.onEvent)
	if err != nil {
		return &iterationOutcome{startErr: fmt.Errorf("starting %s: %w", spec.path, err), elapsed: time.Since(started)}, nil
	}
	r.lock.addChild(c.pid)
	c.timeout, c.idle = r.opts.iterationTimeout.d, r.opts.idleTimeout.d
	end := r.sup.watch(c)
	o.finish(c.waitErr, c.tail.String())
	o.hang = end.hang
	o.interrupted = r.sup.ending()
	o.elapsed = time.Since(started) - end.suspended
	if o.skipped > 0 || o.malformed > 0 {
		r.log.printf("[%d malformed and %d oversized stream-json lines]", o.malformed, o.skipped)
	}
	return o, nil
}

// afterIteration counts an iteration, runs the tests, and evaluates the
// stop conditions: it returns the run's ending if one is met.
func (r *runner) afterIteration(o *iterationOutcome) *ending {
	r.iter++
	m := r.ws.meta
	m.Iterations++
	m.LastRunIterations++
	r.charge(o)
	failed, why := o.failed()
	ts, warn := readTaskStatus(r.ws)
	if refused := r.noteRefusals(o, ts, failed); refused != "" {
		failed, why = true, refused
	}
	if failed {
		m.FailedIterations++
	}
	// An iteration that failed says nothing of the status file: no warning
	// about it before the failure itself.
	if warn != nil && !failed && ts.Source != statusFile && !r.statusWarned && !r.ws.Ralph {
		r.statusWarned = true
		r.con.noticef("warning: %v; progress falls back to %s", warn, firstNonEmpty(ts.Source, "nothing"))
		r.log.printf("WARNING: %v", warn)
	}
	if failed {
		r.failStreak++
		r.con.noticef("iteration %d failed: %s (%d/%d consecutive failures)", r.iter, why, r.failStreak, r.maxFailures)
		if o.stderrTail != "" {
			r.log.printf("AGENT STDERR (last lines):\n%s", o.stderrTail)
			r.con.noticef("agent stderr: %s", clip(lastLines(o.stderrTail, 3), 600))
		}
	} else {
		r.failStreak = 0
	}
	r.hintRefusals()
	r.reportIteration(o, ts, failed, why)
	fatal := o.fatal()
	r.trackProgress(ts)
	if r.stops.cfg.TestCmd != "" && fatal == nil {
		r.saveMetadata() // 'status' shows the iteration while the tests run
		t := r.runTests()
		if r.sup.ending() {
			end := r.interruptEnding()
			return &end
		}
		r.lastTests = t
		if t.runFailed() {
			r.testFailStreak++
		} else {
			r.testFailStreak = 0
		}
	}
	r.stop.poll(true)
	v := r.stops.evaluate(&condState{
		Iteration: r.iter, Elapsed: r.elapsed(), Cost: r.cost,
		FailStreak: r.failStreak, Failed: failed, Error: why, ResultText: o.resultText(),
		TaskComplete: ts.Complete, SinceProgress: r.sinceProgress, ProgressWord: r.progressWord(),
		Tests: r.lastTests, TestFailStreak: r.testFailStreak, StopRequest: r.stop.source,
		Dir: r.env.projectRoot, RunScript: r.runScript,
	})
	if r.sup.ending() { // while a script ran
		end := r.interruptEnding()
		return &end
	}
	m.Conditions = v.reports
	r.saveMetadata()
	r.log.printf("CONDITIONS:")
	for _, c := range v.reports {
		r.log.printf("  [%s] %s: %.0f%%, %s", c.Group, c.Condition, c.Progress*100, c.Reason)
	}
	if fatal != nil { // after the conditions, so that 'status' shows them evaluated
		return &ending{code: exitError, reason: "error: " + fatal.msg, status: statusFailed, hint: fatal.hint}
	}
	if v.met == nil {
		r.showConditions(v.reports)
		return nil
	}
	end := truthfulEnding(endingFor(v.met, v.reason), v.met, failed, why)
	return &end
}

// showConditions prints where the conditions the user gave stand.
func (r *runner) showConditions(reports []condReport) {
	var parts []string
	for i, gc := range r.stops.ordered {
		if !gc.c.builtin && i < len(reports) {
			parts = append(parts, fmt.Sprintf("%s (%.0f%%)", reports[i].Reason, reports[i].Progress*100))
		}
	}
	if len(parts) > 0 {
		r.con.progressf("  Conditions: %s", clip(strings.Join(parts, " · "), 400))
	}
}

// saveMetadata writes the metadata during a run, without fsync: the fsync
// was most of the tool's cost per iteration. The write is still atomic (a
// crash of the tool never leaves half a file); a crash of the machine may
// lose the counters of the iterations since the last durable save — at the
// run's start and end (finish), on every exit path, signals included.
func (r *runner) saveMetadata() {
	if err := r.ws.saveSync(false); err != nil {
		r.con.errorf("warning: saving %s: %v", r.ws.metadataPath(), err)
	}
}

// trackProgress counts iterations without progress: in loop mode, since
// progress.completed last grew; in iterative mode, since the last
// worked:true (an iteration that does not say is not counted).
func (r *runner) trackProgress(ts taskStatus) {
	if r.mode == modeIterative {
		switch {
		case ts.Worked != nil && !*ts.Worked:
			r.sinceProgress++
		case ts.Worked != nil && *ts.Worked:
			r.sinceProgress = 0
		}
		return
	}
	if ts.HasProgress && ts.Completed > r.bestCompleted {
		r.bestCompleted = ts.Completed
		r.sinceProgress = 0
		return
	}
	r.sinceProgress++
}

func (r *runner) progressWord() string {
	if r.mode == modeIterative {
		return "work"
	}
	return "progress"
}

// reportIteration prints and logs an iteration's end.
func (r *runner) reportIteration(o *iterationOutcome, ts taskStatus, failed bool, why string) {
	defer r.live.iterationDone(r, o, ts, failed)
	progress := ""
	if ts.HasProgress {
		progress = fmt.Sprintf(" · %d/%d items (%d remaining)", ts.Completed, ts.Total, ts.Total-ts.Completed)
	}
	mark, verb := "✓", "done"
	if failed {
		mark, verb = "✗", "failed"
	}
	r.con.progressf("%s Iteration %d/%d %s in %s, $%.4f%s", mark, r.iter, r.maxIterations, verb, roundDuration(o.elapsed), o.cost(), progress)
	status := "success"
	if failed {
		status = "error: " + why
	}
	r.log.printf("\nSTATUS: %s", status)
	r.log.printf("Completed: %s", logTime(time.Now()))
	if ts.HasProgress {
		r.log.printf("Remaining: %d", ts.Total-ts.Completed)
	}
	r.log.printf("Cost: $%.4f", o.cost())
	r.log.printf("")
	r.log.Flush()
}

// checkDeadline ends the run once a max_duration condition (at the top
// level of a list) is met: checked before each iteration and during waits
// too, so that a long usage-limit wait cannot outlast it.
func (r *runner) checkDeadline() *ending {
	st := &condState{Elapsed: r.elapsed()}
	for i := range r.stops.ordered {
		gc := &r.stops.ordered[i]
		if gc.c.Type != condMaxDuration {
			continue
		}
		if res := gc.c.evaluate(st); res.Met {
			end := endingFor(gc, res.Reason)
			return &end
		}
	}
	return nil
}

// checkStopRequest looks at the stop file, and ends the run if a stop is
// requested, through the first user_signal condition. It serves the waits
// between iterations; after an iteration, user_signal is evaluated with
// every other condition.
func (r *runner) checkStopRequest() *ending {
	r.stop.poll(true)
	if r.stop.source == "" {
		return nil
	}
	st := &condState{StopRequest: r.stop.source}
	for i := range r.stops.ordered {
		gc := &r.stops.ordered[i]
		if gc.c.Type == condUserSignal {
			end := endingFor(gc, gc.c.evaluate(st).Reason)
			return &end
		}
	}
	return nil
}

// showStopState shows and logs a change of the stop request.
func (r *runner) showStopState(source string) {
	if source != "" && r.sup.kb != nil {
		r.con.progressf("Stop requested (press s to cancel)")
	} else if source != "" {
		r.con.progressf("Stop requested: the run ends after the current iteration")
		r.log.printf("[stop requested (%s)]", source)
	} else {
		r.con.progressf("Stop cancelled: the run goes on")
		r.log.printf("[stop cancelled]")
	}
}

// interruptEnding is the ending after a signal, or after an internal fault
// in a helper goroutine.
func (r *runner) interruptEnding() ending {
	if r.sup.fault != "" {
		return ending{code: exitError, reason: "error: " + r.sup.fault, status: statusFailed}
	}
	sig := r.sup.interrupt
	return ending{code: exitCodeFor(sig), reason: fmt.Sprintf("stopped: interrupted (%s)", signalName(sig)), status: statusInterrupted, signal: sig}
}

// wait waits for d (a delay, or a usage-limit wait with show set), ending
// early on a signal, a stop request or the deadline.
func (r *runner) wait(d time.Duration, show func(left time.Duration)) *ending {
	var end *ending
	lastShown := time.Time{}
	defer r.live.waitEnded()
	interrupted := r.sup.sleep(d, func(left time.Duration) bool {
		r.live.waitLeft(left, show != nil)
		if r.stop.source != "" {
			end = r.checkStopRequest()
			return true
		}
		if end = r.checkDeadline(); end != nil {
			return true
		}
		if show != nil && time.Since(lastShown) >= time.Second {
			lastShown = time.Now()
			show(left)
		}
		return false
	})
	if interrupted {
		e := r.interruptEnding()
		return &e
	}
	return end
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
		resetText = formatClock(reset, now)
	}
	msg := fmt.Sprintf("usage limit reached (resets at %s): waiting until %s, then retrying the iteration", resetText, formatClock(until, now))
	r.con.noticef("%s", msg)
	r.live.limitReached(msg)
	r.log.printf("[usage limit reached: resets at %s; waiting until %s]", resetText, logTime(until))
	r.log.Flush()
	lastPlain := time.Now()
	end := r.wait(d, func(left time.Duration) {
		// On a terminal, the panel counts down.
		if !r.con.panelWanted() && time.Since(lastPlain) >= time.Minute {
			lastPlain = time.Now()
			r.con.progressf("Usage limit: retrying in %s", left.Round(time.Second))
		}
	})
	if end == nil {
		r.con.progressf("Usage limit wait over: retrying the iteration")
	}
	return end
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
	elapsed := r.elapsed()
	summary := fmt.Sprintf("%s (%s, %s, %s)", end.reason, plural(r.iter, "iteration"), roundDuration(elapsed), formatCost(r.cost))
	if end.hint == "" && end.code == exitError && r.lastRefused && r.con.level == outputQuiet {
		end.hint = refusedHint // shown with the refusals at the other levels
	}
	r.live.ended(end, summary)
	r.log.section("RUN ENDED", "Ended: "+logTime(time.Now()), "Reason: "+end.reason,
		fmt.Sprintf("Exit code: %d", end.code), fmt.Sprintf("Iterations: %d", r.iter),
		fmt.Sprintf("Cost: $%.4f", r.cost), "Elapsed: "+roundDuration(elapsed).String())
	r.sup.kb.close()
	r.termMode.restore()
	r.con.releaseHeld(true)
	if end.signal == syscall.SIGTERM || end.signal == syscall.SIGHUP {
		r.con.rawf("Done.")
	}
	switch {
	case end.code == exitOK:
		r.con.noticef("%s", summary)
	default:
		r.con.errorf("%s", summary)
		if end.hint != "" {
			r.con.errorf("hint: %s", end.hint)
		}
	}
	r.live.drain(r.sup.sigs.c) // after the last line: a slow server delays only the exit
	r.log.Close()
	r.lock.release()
	if end.signal != nil {
		return r.sup.sigs.exitError(end.signal)
	}
	if end.code == exitOK {
		return nil
	}
	return &exitCodeError{code: end.code}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

func roundDuration(d time.Duration) time.Duration {
	switch {
	case d > time.Minute:
		return d.Round(time.Second)
	case d > time.Second:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}
