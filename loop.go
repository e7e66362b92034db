package main

// This file implements the loop of a run. The rules are: one agent at a
// time; an iteration is never cut short by a graceful stop (the .stop file,
// the s key), only by a signal or a hang protection; a pending signal is
// checked before every agent starts; every iteration, however it ends,
// yields one record (iteration.go), from which everything else is derived;
// after each counted iteration the stop conditions are evaluated, and the
// first met one ends the run; an iteration that hit a usage limit is not
// counted, and is retried after the reset; and every way out of a run goes
// through finish, which deletes .stop, writes the metadata and the log's
// last lines, restores the terminal and prints why the run ended.
//
// A run is three parts: its configuration (runPlan, built by setup and
// never changed after), its counters (runCounters, changed only by add,
// from a record), and the loop (runner), which owns the run's machinery.
//
// It is longer than 600 lines because it holds the loop and every wait the
// loop makes between iterations (the delay, the pause after failures, a
// question's answer, a usage limit's reset, a claim's verification): they
// are runner methods, which the shape rule keeps in three files (this one,
// iteration.go for one iteration, runsetup.go for the setup), and they
// share the loop's endings and deadline.

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// runPlan is a run's configuration, fixed once setup is done.
type runPlan struct {
	env  *cliEnv
	ws   *workspace
	opts *runOptions
	cfg  *settings
	mode string

	maxIterations, stagnation, maxFailures int
	delay                                  time.Duration
	stops                                  stopSet
	spec                                   childSpec // the agent's path, argv0 and arguments; input set per iteration
	// agent is the CLI that runs now (spec is its: both change when a
	// fallback takes over, fallback.go); agents are the run's, the first
	// one, then the fallbacks (agentcli.go).
	agent                            agentCLI
	agents                           []runAgent
	systemPrompt, systemPromptSource string
	// scratch is the dry run's copy of the workspace, removed at the end;
	// promptFile the system prompt's file, when it is passed as one;
	// dryRunOf the workspace a dry run copied, as shown, and realWS that
	// workspace itself (nil: not a dry run).
	scratch, promptFile, dryRunOf string
	realWS                        *workspace
	// git is the project's git work tree, nil outside one.
	git         *gitTree
	gitSetup    *runGitSetup // the worktree and the commits (gitcommit.go); nil without
	testTimeout time.Duration
	// minIterations: a completion claimed before it is not accepted;
	// onQuestion: what the run does when the agent asks (question.go).
	minIterations int
	onQuestion    string
	// newState is the ralph-mode state directory this run made, removed
	// if the set-up fails; "" when it was there.
	newState string
	// projectSecret: the project config holds a notify URL with
	// credentials (said before the first iteration).
	projectSecret bool
}

// runner is one run's loop and machinery. Its fields are owned by the
// goroutine running the loop; a child's readers touch only the child and
// its outcome.
type runner struct {
	*runPlan
	count runCounters

	con      *console
	log      *runLog
	sup      *supervisor
	stop     *stopRequest
	lock     *runLock // the workspace's run lock, held until finish
	termMode *savedMode
	live     *live // the panel, the state file, notifications, events
	side     *sideRunner
	history  *historyWriter
	events   *eventWriter
	// promptCache holds the task (or ralph-mode prompt) file between
	// iterations, re-read when it changes.
	promptCache  fileCache
	nextPipes    *childPipes // the next agent's standard streams, made in advance
	start        time.Time
	metaSaved    time.Time // the last write of the metadata during the run
	metaDirty    bool      // the metadata has changed since
	statusWarned bool
	// using is which of the run's agents runs, and why (fallback.go).
	using  agentInUse
	checks runChecks
}

// runChecks are what a run does beyond the loop: the notes the next
// iteration's prompt adds to the task (notes.go), the agent's questions
// (question.go), the verifier (verify.go), the evidence (evidence.go), a
// full device (endings.go).
type runChecks struct {
	notes    promptNotes
	asks     *questionDesk
	verifier *verifier // run --verify; nil without
	disk     diskCheck
	status   statusLedger
}

// elapsed is the run's time so far, time suspended excluded.
func (r *runner) elapsed() time.Duration {
	return time.Since(r.start) - r.sup.suspended
}

// startLive starts the live view and wires the supervisor, the stop
// request and the console to it: the one place where the run's callbacks
// are set, before the first child starts.
func (r *runner) startLive() {
	r.live = newLive(liveConfig{
		con: r.con, log: r.log, ws: r.ws, mode: r.mode, start: r.start, max: r.maxIterations,
		keyboard: r.sup.kb != nil, root: r.env.projectRoot, cfg: r.cfg, opts: r.opts,
		events: r.events, run: r.lock.record.RunID, status: r.checks.status.start,
	})
	r.side = &sideRunner{sup: r.sup, con: r.con, log: r.log, live: r.live, lock: r.lock,
		dir: r.workRoot(), testCmd: r.stops.cfg.TestCmd, testTimeout: r.testTimeout}
	r.con.tellLines(r.live.addLine)
	r.checks.disk = diskCheck{ws: r.ws, root: r.env.projectRoot, log: r.log, history: r.history}
	r.checks.asks = &questionDesk{ws: r.ws, con: r.con, log: r.log, live: r.live, notes: &r.checks.notes, onQuestion: r.onQuestion, save: r.saveMetadata}
	r.stop.changed = func(source string) {
		r.showStopState(source)
		r.live.stopChanged(source)
	}
	r.stop.blocked = stopBlockedWarning(r.con, r.log, r.sup, r.ws, r.env.projectRoot)
	// Without a panel to keep current or notifications to send, nothing
	// is shown between an iteration's start and end.
	quiet := !r.con.panelWanted() && !r.live.notifies() && !r.live.beatsFasterThan(quietPollEvery)
	r.sup.hooks = supervisorHooks{
		key: r.stop.key,
		poll: func() {
			r.flushMetadata()
			r.lock.lookAround()
			r.stop.poll(false)
			keepTerminalMode(r.sup.kb, r.termMode)
			r.live.tick(time.Now(), r.sup.interrupt, r.sup.suspended)
		},
		quiet: quiet,
	}
	if quiet {
		r.sup.hooks.nudge, r.sup.hooks.pending = r.live.quietNudge(), r.live.stateDirty
	}
	r.sup.hooks.suspended = func(at time.Time) { r.live.suspendedAt(at, r.sup.suspended) }
	r.live.started()
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
	if note := projectRootNote(r.env); note != "" {
		r.con.progressf("%s", note)
	}
	if r.opts.dryRun {
		var names []string
		for _, a := range r.agents {
			names = append(names, a.cli.name())
		}
		r.con.progressf("Dry run: the built-in mock agent stands in for %s, on a scratch copy of the workspace (%s is left unchanged)", andList(names), r.dryRunOf)
	}
	keys := ""
	if r.sup.kb != nil {
		keys = runKeysHint
		if !r.sup.kb.inForeground() { // started with &: no key reaches it before fg
			keys = runKeysHintBg
		}
	}
	apart := "" // the delay, said once: it is part of a run's time
	if r.delay > 0 && r.maxIterations > 1 {
		apart = ", " + roundDuration(r.delay).String() + " apart"
	}
	r.con.progressf("Running %s (%s mode, up to %s%s)%s", r.ws.Name, r.mode, plural(r.maxIterations, "iteration"), apart, keys)
	var given []string
	for _, gc := range r.stops.ordered {
		if !gc.c.builtin {
			given = append(given, groupVerb[gc.group]+" "+gc.c.describe())
		}
	}
	if len(given) > 0 {
		r.con.progressf("Stop conditions: %s", strings.Join(given, "; "))
	}
	r.carryFindings()
	if end := r.inherited(); end != nil {
		return *end
	}
	for {
		r.checks.asks.take() // an answer given while no run waited for it
		if end := r.checks.disk.orFull(workspaceGone(r.ws)); end != nil {
			return *end
		}
		if end := r.checkDeadline(); end != nil {
			return *end
		}
		if end := strayEnding(r.gitSetup); end != nil { // after an iteration that was retried
			return *end
		}
		if r.sup.startBlocked() {
			return r.interruptEnding()
		}
		if r.using.index != 0 && r.using.firstIsBack(time.Now()) {
			r.useAgent(0, "")
		}
		it, err := r.iterate()
		if err != nil {
			return ending{code: exitError, reason: "error: " + err.Error(), status: statusFailed}
		}
		if it.outcome.interrupted {
			r.record(it, endInterrupted, strings.TrimPrefix(r.interruptEnding().reason, "stopped: "))
			return r.interruptEnding()
		}
		if limited, reset := it.outcome.usageLimit(time.Now()); limited {
			next, why, fallBack := r.using.limited(r.agents, reset, time.Now())
			reason := "usage limit reached: the iteration is retried after the reset"
			var pastDeadline *ending
			if fallBack {
				reason = "usage limit reached: the iteration is retried at once with " + r.agents[next].cli.name()
			} else if pastDeadline = r.limitEndsRun(reset); pastDeadline != nil {
				reason = "usage limit reached: it resets after --max-duration's deadline: the run ends"
			}
			r.record(it, endLimit, reason)
			r.saveMetadata()
			r.log.Flush()
			if fallBack {
				r.useAgent(next, why)
				continue
			}
			if pastDeadline != nil {
				return *pastDeadline
			}
			if end := r.waitForLimit(reset); end != nil {
				return *end
			}
			continue // the iteration is not counted, and is retried
		}
		end := r.afterIteration(it)
		if stray := strayEnding(r.gitSetup); stray != nil { // gitworktreecheck.go: the agent switched branch
			end = stray
		}
		if end := r.checks.disk.orFull(end); end != nil {
			return *end
		}
		if end := r.wait(r.pauseBefore(), nil); end != nil {
			return *end
		}
	}
}

// useAgent makes agent i of the run's the one that runs, for why (a
// fallback's reason; "" back to the first), and says so: the console, the
// log, and the panel and a notification (limit_wait) for a fallback.
func (r *runner) useAgent(i int, why string) {
	from := r.agent.name()
	r.using.use(i, why)
	r.agent, r.spec = r.agents[i].cli, r.agents[i].spec
	msg := fmt.Sprintf("%s: the iteration is retried at once with %s", why, r.agent.name())
	if i == 0 {
		msg = fmt.Sprintf("the usage limit of %s has reset: %s runs again instead of %s", r.agent.name(), r.agent.name(), from)
	}
	r.con.noticef("%s", msg)
	r.log.printf("[agent changed: %s]", msg)
	r.log.Flush()
	if i != 0 {
		r.live.limitReached(msg, time.Now()) // retried at once
	}
}

// metadataInterval is how often, at most, the metadata is written while a
// run goes on: each atomic write makes a file, which costs the file system
// more than the rest of an iteration (finish always writes it).
const metadataInterval = time.Second

// saveMetadata writes the metadata during a run, without fsync and at most
// once per metadataInterval (a write due sooner is made at the next
// look-around, flushMetadata). The write is still atomic (a crash of the
// tool never leaves half a file); a crash may lose the counters of the
// iterations since the last save, which the next run takes back from the
// history (runsetup.go). finish writes it durably, on every exit path.
func (r *runner) saveMetadata() {
	r.metaDirty = true
	r.flushMetadata()
}

// flushMetadata writes the metadata if it is out of date and the last
// write is metadataInterval old.
func (r *runner) flushMetadata() {
	if !r.metaDirty || time.Since(r.metaSaved) < metadataInterval {
		return
	}
	r.metaDirty, r.metaSaved = false, time.Now()
	// A workspace deleted under the run ends it at the next iteration's
	// start (workspaceGone), which says so; or finish warns, at the last.
	if err := r.ws.saveSync(false); err != nil && !isGone(err) {
		r.checks.disk.saveFailed(r.con, err)
	}
}

// checkDeadline ends the run once a max_duration condition (at the top
// level of a list) is met: checked before each iteration and during waits
// too, so that a long usage-limit wait cannot outlast it.
func (r *runner) checkDeadline() *ending {
	gc, _ := r.deadline()
	if gc == nil {
		return nil
	}
	if res := gc.c.evaluate(&condState{Elapsed: r.elapsed()}); res.Met {
		end := endingFor(gc, res.Reason)
		return &end
	}
	return nil
}

// deadline is the run's earliest top-level max_duration condition (nil:
// none), and the time left to it.
func (r *runner) deadline() (gc *groupedCondition, left time.Duration) {
	for i := range r.stops.ordered {
		c := r.stops.ordered[i].c
		if l := c.Duration - r.elapsed(); c.Type == condMaxDuration && (gc == nil || l < left) {
			gc, left = &r.stops.ordered[i], l
		}
	}
	return gc, left
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

// pauseBefore is the wait before the next iteration: the delay, or after a
// failed iteration the pause for failures in a row (pauseAfterFailures)
// when longer, said on the console and the log and shown in the panel.
func (r *runner) pauseBefore() time.Duration {
	streak := r.count.failStreak
	pause := pauseAfterFailures(streak)
	if pause <= r.delay {
		return r.delay
	}
	shown := compactDuration(pause)
	if pause < time.Second { // the scenarios' pauses
		shown = pause.String()
	}
	msg := fmt.Sprintf("Pausing %s after %s in a row before the next iteration", shown, plural(streak, "failed iteration"))
	r.con.progressf("%s", msg)
	r.log.printf("[%s]", msg)
	r.log.Flush()
	r.live.pauseAfter(streak)
	return pause
}

// wait waits for d (a delay, or a usage-limit wait with show set), ending
// early on a signal, a stop request or the deadline.
func (r *runner) wait(d time.Duration, show func(left time.Duration)) *ending {
	phase := phaseDelay
	if show != nil {
		phase = phaseLimit
	}
	return r.waitIn(phase, d, show)
}

// waitIn is a wait in phase (the delay, a usage-limit wait) until d has
// passed; a signal, a stop request or the deadline end it early.
func (r *runner) waitIn(phase string, d time.Duration, show func(left time.Duration)) *ending {
	var end *ending
	lastShown := time.Time{}
	defer r.live.waitEnded()
	// The wait ends at the run's deadline, not at the look-around after it
	// (every five seconds without a terminal).
	deadline, toDeadline := r.deadline()
	bounded := deadline != nil
	if bounded && toDeadline < d {
		d = max(toDeadline, 0) + time.Millisecond
		r.live.waitToDeadline() // no retry, no next iteration after it
	}
	interrupted := r.sup.sleep(d, func(left time.Duration) bool {
		r.live.waitLeft(left, phase)
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
	if end == nil && bounded {
		end = r.checkDeadline()
	}
	return end
}

// waitForAnswer waits until the pending question is answered, a signal,
// a stop request or the deadline. It looks for the answer every
// answerPoll, doing the supervisor's look-around itself: a quiet run's
// supervisor looks around only every few seconds.
func (r *runner) waitForAnswer() *ending {
	defer r.live.waitEnded()
	shown := false
	for {
		if r.checks.asks.take() {
			return nil
		}
		r.live.waitLeft(0, phaseQuestion)
		if poll := r.sup.hooks.poll; poll != nil {
			poll()
		}
		if end := r.checkStopRequest(); end != nil {
			return end
		}
		if end := r.checkDeadline(); end != nil {
			return end
		}
		if !shown {
			shown = true
			r.con.progressf("Waiting for an answer (%s; s or claude-iterate stop ends the run)", answerCommand(r.ws))
			r.log.Flush()
		}
		if r.sup.sleep(answerPoll, func(time.Duration) bool { return false }) {
			e := r.interruptEnding()
			return &e
		}
	}
}

// verifyClaim verifies a claimed completion (run --verify, claim the met
// success condition's reason): it returns the run's ending, or nil when
// the run goes on with the verifier's findings in the next prompt — or
// ends on another condition met (goesOn false), whose line says why.
func (r *runner) verifyClaim(claim string, goesOn bool) *ending {
	v := r.checks.verifier
	v.sup, v.con, v.log, v.lock, v.history, v.onEvent = r.sup, r.con, r.log, r.lock, r.history, r.live.onEvent
	for {
		r.con.progressf("Verifying the completion (%s)", v.depth)
		r.live.verifying(v.depth)
		vr, err := v.run()
		if err != nil {
			return &ending{code: exitError, reason: "error: " + err.Error(), status: statusFailed}
		}
		if vr.outcome.interrupted {
			e := r.interruptEnding()
			return &e
		}
		if limited, reset := vr.outcome.usageLimit(time.Now()); limited {
			if end := r.waitForLimit(reset); end != nil {
				return end
			}
			continue
		}
		rec := v.keep(vr, r.lock.record.RunID, r.count.totals.Iterations)
		r.count.add(rec, r.mode) // the verifier's cost is the run's
		vd := vr.verdict
		if vr.failed {
			vd = verdict{Verdict: verdictNeedsReview, Summary: "the verifier failed: " + vr.why, Issues: []string{}}
		}
		if vd.Verdict != verdictPass {
			v.failures++
			// For the next iteration's prompt, this run's or the next run's.
			r.ws.meta.Verification.Findings = &verifyFindings{Verdict: vd, Attempt: v.failures}
		}
		r.saveMetadata()
		r.live.verified(rec, vd, r.count.totals, r.elapsed())
		if vd.Verdict == verdictPass {
			r.con.progressf("Verification passed: %s", sanitizeString(clip(vd.Summary, 300)))
			return &ending{code: exitOK, reason: "completed (verified): " + claim, status: statusCompleted}
		}
		if v.failures >= r.cfg.Verification.MaxAttempts {
			return &ending{code: exitError, status: statusFailed,
				reason: fmt.Sprintf("failed: verification failed %s: %s", plural(v.failures, "time"), clip(oneLine(vd.Summary), 300))}
		}
		then := map[bool]string{true: "; the run goes on"}[goesOn]
		r.con.noticef("verification %s (%d of %d): %s%s", vd.Verdict, v.failures, r.cfg.Verification.MaxAttempts, sanitizeString(clip(vd.Summary, 300)), then)
		r.checks.notes.verifyNote = r.ws.meta.Verification.Findings.note()
		return nil
	}
}

// waitForLimit waits until a usage limit resets (+limitMargin).
func (r *runner) waitForLimit(reset time.Time) *ending {
	now := time.Now()
	d := limitWait(reset, now)
	until := now.Add(d)
	resetText, msg, countdown := limitWaitWords(now, reset, until)
	r.con.noticef("%s", msg)
	r.live.limitReached(msg, until)
	r.log.printf("[usage limit reached: resets at %s; waiting until %s]", resetText, logTime(until))
	r.log.Flush()
	lastPlain := time.Now()
	end := r.wait(d, func(left time.Duration) {
		// On a terminal, the panel counts down.
		if !r.con.panelWanted() && time.Since(lastPlain) >= time.Minute {
			lastPlain = time.Now()
			r.con.progressf(countdown, left.Round(time.Second))
		}
	})
	if end == nil {
		r.con.progressf("Usage limit wait over: retrying the iteration")
	}
	return end
}

// limitEndsRun is the ending of a run whose usage limit, with reset, would
// be waited for past the run's deadline (limitPastDeadline); nil when there
// is no deadline or the retry comes before it.
func (r *runner) limitEndsRun(reset time.Time) *ending {
	gc, toDeadline := r.deadline()
	if gc == nil {
		return nil
	}
	why := limitPastDeadline(reset, time.Now(), toDeadline, gc.c.Duration)
	if why == "" {
		return nil
	}
	r.log.printf("[%s]", why)
	end := endingFor(gc, why)
	return &end
}

// settle waits for every line said to be written. Standard output may not
// drain (a paused pager): the ending does not wait for it past a signal
// (settleOr), and writes to it no more once it gave up, which the log says.
func (r *runner) settle(end ending, abort <-chan os.Signal) {
	if !r.con.settleOr(abort, end.signal != nil) {
		r.log.printf("[gave up writing to standard output at the exit: it does not drain]")
	}
}

// finish ends the run: the one exit path. A signal that comes meanwhile
// is not lost (signallate.go).
func (r *runner) finish(end ending) error {
	testSignalAt("finish")
	late := r.sup.sigs.relayAtExit()
	r.settle(end, late.c) // before the ending's own writes, which take the console
	if end.hint != "" {
		r.log.printf("HINT: %s", end.hint)
	}
	// A workspace deleted or replaced: the .stop there is not this run's.
	if workspacePresent(r.ws) == nil {
		if removed, err := removeStopFile(r.ws.stopPath()); err != nil {
			r.con.errorf("warning: %v", err)
		} else if removed {
			r.log.printf("[deleted %s]", stopFile)
		}
	}
	r.log.releaseReserve() // room for the last writes, the agent done
	r.history.close()
	m := r.ws.meta
	m.Status, m.LastStopReason, m.PID = end.status, end.reason, 0
	if r.log != nil && m.LastLog != "" {
		if p := r.log.file(); p != "" {
			m.LastLog = p // where the rest went, if it was replaced
		}
	}
	code := end.code
	m.LastExitCode = &code
	if err := r.ws.save(); err != nil && !(end.gone && isGone(err)) {
		r.checks.disk.warnSave(r.con, r.ws.metadataPath(), err)
	}
	if msg := r.gitSetup.endNote(r.git); msg != "" { // gitcommit.go
		r.con.errorf("warning: %s", msg)
		r.log.printf("WARNING: %s", msg)
	}
	elapsed := r.elapsed()
	run := r.count.totals
	summary := fmt.Sprintf("%s (%s, %s, %s)", end.reason, plural(run.Iterations, "iteration"), roundDuration(elapsed), costText(run.CostUSD, run.estimated()))
	if end.hint == "" && end.code == exitError && r.count.lastRefused && r.con.level == outputQuiet {
		end.hint = r.agent.refusedHint() // shown with the refusals at the other levels
	}
	r.live.ended(end, summary, run, elapsed)
	r.log.section("RUN ENDED", "Ended: "+logTime(time.Now()), "Reason: "+end.reason,
		fmt.Sprintf("Exit code: %d", end.code), fmt.Sprintf("Iterations: %d", run.Iterations),
		fmt.Sprintf("Cost: $%.4f", run.CostUSD), "Elapsed: "+roundDuration(elapsed).String())
	r.sup.kb.close()
	r.termMode.restoreAtExit()
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
	r.settle(end, late.c) // every line said, before the exit
	r.live.drain(late.c)  // after the last line: a slow server delays only the exit
	if sig := late.late(false); sig != nil && end.signal == nil {
		late.forget()
		end = lateEnding(r, end, sig, summary)
		r.settle(end, late.c)
	}
	r.events.write(exitEvent(end.code, end.reason))
	r.events.drain(late.c, end.signal != nil, r.env.stderr)
	r.log.Close()
	r.lock.release()
	testSignalAt("exit")
	if end.signal == nil { // one that came since ends the process, as will a later one
		end.signal = late.late(true)
	}
	if end.signal != nil {
		return r.sup.sigs.exitError(end.signal)
	}
	if end.code == exitOK {
		return nil
	}
	return &exitCodeError{code: end.code}
}
