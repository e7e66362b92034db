package main

// This file runs one iteration and makes its record. The rules are: the
// agent runs to its end under the supervisor; then the loop judges it
// (failed, refused, a hang), reads the agent's status and runs the tests;
// then the record is made, once, and everything else is derived from it —
// the counters (runCounters.add), the workspace's totals, the history, the
// console line, the log, the live view, the notifications and the events;
// last, the stop conditions are evaluated against the counters.

import (
	"fmt"
	"strings"
	"time"
)

// iterationRun is an iteration whose agent has ended, not yet judged.
type iterationRun struct {
	n       int
	started time.Time
	outcome *iterationOutcome
	before  *gitSnapshot // the work tree before the agent ran
	status  statusCopy   // .status.json as the agent found it (evidence.go)
}

// iterate runs one agent to its end.
func (r *runner) iterate() (*iterationRun, error) {
	it := &iterationRun{n: r.count.totals.Iterations + 1}
	prompt, err := r.buildPrompt()
	if err != nil {
		return nil, err
	}
	it.before = r.git.start()
	it.status = r.checks.status.before()
	it.started = time.Now()
	r.con.progressf("▶ Iteration %d/%d started at %s", it.n, r.maxIterations, it.started.Format("15:04:05"))
	r.log.section(fmt.Sprintf("ITERATION %d", it.n), "Started: "+logTime(it.started))
	r.log.printf("CLAUDE OUTPUT:")
	spec := r.spec
	spec.pipes, r.nextPipes = r.nextPipes, nil
	spec.input = []byte(prompt)
	spec.env = append(spec.env[:len(spec.env):len(spec.env)], r.lock.markers()...)
	transcript := r.con.transcript(r.log)
	r.live.iterationStarted(it.n, r.agent.name())
	c, o, err := startAgent(spec, transcript, r.log, r.live.onEvent)
	if err != nil {
		it.outcome = agentStartFailed(spec, err, it.started)
		return it, nil
	}
	r.lock.addChild(c)
	// The next agent's pipes, made while this one runs: off the path from
	// its exit to the next start. On an error, the next start makes them
	// and reports it.
	r.nextPipes, _ = makeChildPipes(r.spec.mergeOutput)
	c.timeout, c.idle = r.cfg.IterationTimeout, r.cfg.IdleTimeout
	end := r.sup.watch(c)
	r.lock.dropChild(c.pid)
	o = agentEnded(c, o, end, spec, r.sup, it.started)
	if o.skipped > 0 || o.malformed > 0 {
		r.log.printf("[%d malformed and %d oversized stream-json lines]", o.malformed, o.skipped)
	}
	it.outcome = o
	return it, nil
}

// afterIteration judges a counted iteration, runs the tests, records it,
// and evaluates the stop conditions: it returns the run's ending if one is
// met.
func (r *runner) afterIteration(it *iterationRun) *ending {
	o := it.outcome
	r.notesGiven()
	failed, why := o.failed()
	end := endDone
	switch {
	case o.hang != "":
		end = endHang
	case failed:
		end = endFailed
	}
	ts, after, warn := readTaskStatusCopy(r.ws)
	ev := r.checks.status.judge(it.status, after, ts)
	refused := describeDenials(o.denials(), r.env.projectRoot)
	if len(refused) > 0 && !failed && !ev.madeProgress(r.count.bestCompleted) {
		failed, why, end = true, denialSummary(refused, maxDenialsShown), endRefused
	}
	if failed {
		ev.fail()
	}
	if !ev.written {
		r.log.printf("[%s not written in this iteration: its claims are not this iteration's]", statusFile)
	}
	// An iteration that failed says nothing of the status file: no warning
	// about it before the failure itself.
	if warn != nil && !failed && ts.Source != statusFile && !r.statusWarned && !r.ws.Ralph {
		r.statusWarned = true
		if ts.Source != "" {
			r.con.noticef("warning: %v; progress falls back to %s", warn, ts.Source)
		} else {
			r.con.noticef("warning: %v; no progress can be shown", warn)
		}
		r.log.printf("WARNING: %v", warn)
	}
	fatal := o.fatal()
	var tests *testResults
	if r.side.testCmd != "" && fatal == nil {
		tests = r.side.runTests()
		if r.sup.ending() {
			r.recordWith(it, end, why, ev, refused, nil) // the tests did not finish
			e := r.interruptEnding()
			return &e
		}
	}
	rec := r.recordWith(it, end, why, ev, refused, tests)
	st := r.count.condState(rec)
	r.stop.poll(true)
	st.Elapsed, st.ProgressWord, st.StopRequest = r.elapsed(), progressWord(r.mode), r.stop.source
	st.Dir, st.RunScript = r.workRoot(), r.side.runScript
	v := r.stops.evaluate(&st)
	// A failed iteration completes nothing (evidence.go); a refused
	// completion's files count again once an iteration changes them
	// (condfile.go).
	if !rec.OK {
		if v.met != nil && v.met.group == groupSuccess {
			r.log.printf("[%s: not accepted after a failed iteration]", v.reason)
			r.checks.notes.rewrite = r.stops.rejected(st.Dir, rec.Iteration)
			v = otherMet(v, &r.stops)
		}
		refuseSuccess(v.reports, "the iteration failed")
	}
	if v.met != nil && v.met.group == groupSuccess && rec.Iteration < r.minIterations {
		claim := v.reason
		r.checks.notes.rewrite = r.stops.rejected(st.Dir, rec.Iteration)
		v = r.checks.notes.holdClaim(v, &r.stops, rec.Iteration, r.minIterations)
		refuseSuccess(v.reports, fmt.Sprintf("before iteration %d (--min-iterations)", r.minIterations))
		msg := fmt.Sprintf("completion claimed at iteration %d, before iteration %d (--min-iterations): not accepted", rec.Iteration, r.minIterations)
		if v.met == nil { // else the run's last line says why it ends
			msg += ", the run goes on"
		}
		r.con.noticef("%s", msg)
		r.log.printf("[%s: %s]", msg, claim)
	}
	if r.sup.ending() { // while a script ran
		e := r.interruptEnding()
		return &e
	}
	question, isNew := r.checks.asks.note(ev)
	if question != "" && r.onQuestion != onQuestionContinue && v.met != nil && v.met.group == groupSuccess {
		v = r.holdForQuestion(v, st.Dir, rec.Iteration)
	}
	r.ws.meta.Conditions = v.reports
	r.saveMetadata()
	r.log.printf("CONDITIONS:")
	for _, c := range v.reports {
		r.log.printf("  [%s] %s: %.0f%%, %s", c.Group, c.Condition, c.Progress*100, c.Reason)
	}
	if fatal != nil { // after the conditions, so that 'status' shows them evaluated
		return &ending{code: exitError, reason: "error: " + fatal.msg, status: statusFailed, hint: fatal.hint}
	}
	if isNew { // told whatever the run does next
		r.checks.asks.ask(question)
	}
	if v.met != nil && v.met.group == groupSuccess && r.checks.verifier != nil && !r.sup.ending() {
		if e := r.verifyClaim(v.reason, otherMet(v, &r.stops).met == nil); e != nil {
			return e
		}
		r.checks.notes.rewrite = r.stops.rejected(st.Dir, rec.Iteration)
		v = otherMet(v, &r.stops)
		refuseSuccess(v.reports, "the verifier did not pass it")
	}
	if v.met == nil {
		r.showConditions(v.reports)
		if question == "" {
			return nil
		}
		switch r.onQuestion {
		case onQuestionStop:
			return r.checks.asks.stopEnding(question)
		case onQuestionWait:
			if !isNew { // pending from before: told again, as the run waits
				r.checks.asks.ask(question)
			}
			return r.waitForAnswer()
		}
		return nil
	}
	e := truthfulEnding(endingFor(v.met, v.reason), v.met, !rec.OK, rec.Reason)
	return &e
}

// holdForQuestion refuses the completion v claims at iteration while the
// agent asks a question: the question says it is not sure, and the run
// waits for the answer or stops (--on-question), as for any question. The
// next prompt says why; --on-question continue, which waits for no answer,
// takes the claim.
func (r *runner) holdForQuestion(v stopVerdict, dir string, iteration int) stopVerdict {
	claim := v.reason
	r.checks.notes.rewrite = r.stops.rejected(dir, iteration)
	r.checks.notes.asking = claim
	v = otherMet(v, &r.stops)
	refuseSuccess(v.reports, "the agent asks a question")
	msg := "completion claimed while the agent asks a question: not accepted until it is answered"
	r.con.noticef("%s", msg)
	r.log.printf("[%s: %s]", msg, claim)
	return v
}

// refuseSuccess shows the met success conditions of reports as not met,
// and why: a completion not accepted (a failed iteration, --min-iterations,
// the verifier) is said so in the conditions line and status, never "met
// (100%)". A task_complete's reason is then a claim not accepted, as
// status reads it (claimText).
func refuseSuccess(reports []condReport, why string) {
	for i := range reports {
		c := &reports[i]
		switch {
		case c.Group != groupSuccess || !c.Met:
			continue
		case c.Type == condTaskComplete:
			c.Reason = claimNotAccepted + why
		default:
			c.Reason += ", not accepted: " + why
		}
		c.Met, c.Progress = false, 0
	}
}

// record records an iteration that the loop does not judge further: an
// interrupted one, or one that hit a usage limit.
func (r *runner) record(it *iterationRun, end, reason string) *iterationRecord {
	ts, after, _ := readTaskStatusCopy(r.ws)
	ev := r.checks.status.judge(it.status, after, ts)
	ev.fail() // not a counted iteration: it completes nothing
	if end == endLimit {
		r.checks.status.retried(it.status) // the retry is the same iteration
	}
	return r.recordWith(it, end, reason, ev, describeDenials(it.outcome.denials(), r.env.projectRoot), nil)
}

// recordWith makes the iteration's record and derives everything from it.
func (r *runner) recordWith(it *iterationRun, end, reason string, ev *evidence, refused []string, tests *testResults) *iterationRecord {
	var after *gitSnapshot
	if !strayPath(r.gitSetup) { // gitworktreecheck.go: never a link put at the worktree's path
		after = r.git.snapshot()
	}
	rec := newRecord(recordInput{
		run: r.lock.record.RunID, iteration: it.n, started: it.started, outcome: it.outcome,
		end: end, reason: reason, refused: refused, status: ev.status, evidence: ev, tests: tests,
		files: r.git.changed(it.before, after), agent: r.agent.name(), agentChange: r.using.change,
	})
	r.gitSetup.afterIteration(r.git, rec, ev, it.before, after) // gitcommit.go
	r.count.add(rec, r.mode)
	m := r.ws.meta
	m.workTotals.add(rec)
	m.LastRunIterations = r.count.totals.Iterations
	r.history.append(rec)
	r.report(rec, it.outcome.stderrTail)
	return rec
}

// report shows and logs a record.
func (r *runner) report(rec *iterationRecord, stderrTail string) {
	n := rec.Iteration
	if rec.counted() {
		if !rec.OK {
			r.con.noticef("iteration %d failed: %s (%d/%d consecutive failures)", n, rec.Reason, r.count.failStreak, r.maxFailures)
			if stderrTail != "" {
				r.log.printf("AGENT STDERR (last lines):\n%s", stderrTail)
				r.con.noticef("agent stderr: %s", clip(stderrLinesShown(stderrTail, 3), 600))
			}
		}
		if len(rec.Refused) > 0 {
			r.log.printf("REFUSED TOOL CALLS (%d):", len(rec.Refused))
			for _, d := range rec.Refused {
				r.log.printf("  %s", d)
			}
			if rec.End != endRefused {
				r.con.noticef("iteration %d: %s", n, denialSummary(rec.Refused, maxDenialsShown))
			}
			if !r.using.refusedHinted && r.con.level != outputQuiet {
				r.using.refusedHinted = true
				r.con.noticef("hint: %s", r.agent.refusedHint())
			}
		}
		mark := "✓"
		if !rec.OK {
			mark = "✗"
		}
		r.con.progressf("%s Iteration %d/%d %s in %s, %s%s", mark, n, r.maxIterations, endWord(rec), roundDuration(rec.duration()), costText(rec.CostUSD, rec.CostEstimated), progressSuffix(rec.Progress))
	}
	status := "success"
	if !rec.OK {
		status = "error: " + rec.Reason
	}
	r.log.printf("\nSTATUS: %s", status)
	r.log.printf("Completed: %s", logTime(time.Now()))
	if p := rec.Progress; p != nil {
		r.log.printf("Remaining: %d", p.Total-p.Completed)
	}
	if len(rec.Tools) > 0 {
		r.log.printf("Tools: %s", toolsText(rec, 0))
	}
	if rec.FilesChanged != nil {
		r.log.printf("Files changed: %d", len(rec.FilesChanged))
	}
	r.log.printf("Cost: $%.4f", rec.CostUSD)
	r.log.printf("")
	r.log.Flush()
	r.live.recorded(rec, r.count.totals, r.elapsed(), r.checks.status.last) // as judge read it after the iteration
}

// toolsText is "Bash 3, Edit 2", naming at most max tools (0: all).
func toolsText(rec *iterationRecord, max int) string {
	var parts []string
	for i, name := range rec.toolNames() {
		if max > 0 && i == max {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprintf("%s %d", name, rec.Tools[name]))
	}
	return strings.Join(parts, ", ")
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

// stagnationKey is the config key of mode's stagnation threshold.
func stagnationKey(mode string) string {
	if mode == modeIterative {
		return "defaultStagnationThreshold"
	}
	return "loopStagnationThreshold"
}

// progressWord names what stagnation lacks, for its reason.
func progressWord(mode string) string {
	if mode == modeIterative {
		return "work"
	}
	return "progress"
}

// runCounters are a run's numbers: its totals and the streaks the stop
// conditions read. add is the only place they change.
type runCounters struct {
	totals         workTotals
	failStreak     int // consecutive failed iterations
	sinceProgress  int // iterations without progress (no_progress)
	bestCompleted  int // the highest progress.completed seen (loop mode)
	testFailStreak int
	lastTests      *testResults
	lastRefused    bool // the last iteration had refused tool calls
}

// add counts rec. Progress is what the agent wrote in the iteration
// (evidence.go): in loop mode a higher progress.completed; in iterative
// mode worked:true (an iteration that writes its status without saying is
// not counted either way).
func (c *runCounters) add(rec *iterationRecord, mode string) {
	c.totals.add(rec)
	if !rec.counted() {
		return
	}
	if rec.OK {
		c.failStreak = 0
	} else {
		c.failStreak++
	}
	c.lastRefused = len(rec.Refused) > 0
	switch rec.evidence.progress(mode, c.bestCompleted) {
	case progressMade:
		c.sinceProgress = 0
	case progressNone:
		c.sinceProgress++
	}
	if e := rec.evidence; e != nil && e.rose(c.bestCompleted) {
		c.bestCompleted = e.status.Completed
	}
	if t := rec.testRun; t != nil {
		c.lastTests = t
		if t.runFailed() {
			c.testFailStreak++
		} else {
			c.testFailStreak = 0
		}
	}
}

// condState is what the stop conditions see of the counters after rec.
func (c *runCounters) condState(rec *iterationRecord) condState {
	return condState{
		Iteration: c.totals.Iterations, Cost: c.totals.CostUSD,
		FailStreak: c.failStreak, Failed: !rec.OK, Error: rec.Reason, ResultText: rec.resultText,
		TaskComplete: rec.Complete, Claim: rec.evidence.claimRefused(), SinceProgress: c.sinceProgress,
		Tests: c.lastTests, TestFailStreak: c.testFailStreak,
	}
}

// notesGiven forgets the notes a counted iteration was given, and the
// metadata's verification findings with them (saved with the iteration).
func (r *runner) notesGiven() {
	r.checks.notes = promptNotes{}
	if vs := r.ws.meta.Verification; vs != nil {
		vs.Findings = nil
	}
}
