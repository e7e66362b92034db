package main

// This file defines the iteration record: the one value an iteration yields
// when it ends, whatever ended it. The rules are:
//
//   - A record is made once, by newRecord, after the iteration's agent has
//     exited and its tests (if any) have run; nothing changes it afterwards.
//   - It is the only source of everything shown or kept of an iteration:
//     the console line and the log's iteration section, the run's and the
//     workspace's totals (workTotals.add), watch's state file, the stop
//     conditions (runCounters), the notifications, the event stream and the
//     history (history.go). Views get records, never the runner.
//   - Its JSON form is the history's line format and the "record" of the
//     event stream's iteration events; its field names are a public format.

import (
	"encoding/json"
	"math"
	"sort"
	"time"
)

// How an iteration ended: iterationRecord.End.
const (
	endDone        = "done"         // the agent finished its turn
	endFailed      = "failed"       // an error result, no result, a start failure
	endRefused     = "refused"      // tool calls refused and no progress made
	endHang        = "hang"         // a hang protection ended the agent
	endInterrupted = "interrupted"  // a signal ended the run during it
	endLimit       = "limit"        // a usage limit: not counted, retried after the reset
	endVerify      = "verification" // a verifier's run (verify.go): not an iteration
)

// iterationRecord is what one iteration did.
type iterationRecord struct {
	Run        string    `json:"run"`
	Iteration  int       `json:"iteration"`
	StartedAt  time.Time `json:"startedAt"`
	DurationMS int64     `json:"durationMs"` // time suspended left out
	// Agent is the agent CLI that ran it (claude, codex); AgentChange,
	// when it is not the run's first agent, says why it took over.
	Agent       string `json:"agent,omitempty"`
	AgentChange string `json:"agentChange,omitempty"`
	// End says how the iteration ended (done, failed, refused, hang,
	// interrupted, limit); only done, failed, refused and hang count as
	// iterations of the run.
	End     string  `json:"end"`
	OK      bool    `json:"ok"`
	Reason  string  `json:"reason"` // the loop's own reason; "" when ok
	CostUSD float64 `json:"costUsd"`
	// CostEstimated: CostUSD is estimated from tokens (codex reports no
	// cost: agents.codex.pricing).
	CostEstimated bool           `json:"costEstimated,omitempty"`
	Turns         int            `json:"turns"`
	Tokens        *tokenCounts   `json:"tokens"`
	Tools         map[string]int `json:"tools"`
	Refused       []string       `json:"refused"`
	// Progress is the tasks' progress after the iteration, when known.
	Progress *progressRep `json:"progress"`
	// Complete and Worked: what the agent's status says, as the agent
	// wrote it in the iteration (evidence.go): a claim left from before
	// is neither.
	Complete bool        `json:"complete,omitempty"`
	Worked   *bool       `json:"worked,omitempty"`
	Tests    *testCounts `json:"tests"`
	// FilesChanged are the project files the iteration added, changed or
	// removed, relative to the project root; nil outside a git work tree.
	FilesChanged []string `json:"filesChanged"`
	// Commit is the commit the iteration ended with (gitcommit.go): its
	// sha, or null; left out when the run does not commit. CommitError
	// says why a commit failed. CommitLeftOut are the files the commit
	// left out though the iteration changed them: the user's, dirty
	// before it started (gitmine.go), relative to the project root.
	Commit        json.RawMessage `json:"commit,omitempty"`
	CommitError   string          `json:"commitError,omitempty"`
	CommitLeftOut []string        `json:"commitLeftOut,omitempty"`
	// Verification is the verdict of a verifier's run (End "verification").
	Verification *verdict `json:"verification,omitempty"`

	// resultText (the final result's text), testRun (the whole test
	// run) and evidence (what the agent wrote in the iteration) are what
	// the stop conditions read; they are not kept.
	resultText string
	testRun    *testResults
	evidence   *evidence
}

// tokenCounts are the tokens an iteration used, from its result's usage.
type tokenCounts struct {
	Input         int64 `json:"input"`
	Output        int64 `json:"output"`
	CacheRead     int64 `json:"cacheRead"`
	CacheCreation int64 `json:"cacheCreation"`
}

// testCounts are the tests that passed and failed in the test run after
// an iteration.
type testCounts struct {
	Passed int `json:"passed"`
	Failed int `json:"failed"`
}

// counted reports whether the record is an iteration the loop judges, as
// counted against max iterations and the failure streak: an interrupted
// iteration (the run ends with it), one that hit a usage limit (it is
// retried) and a verification are not.
func (rec *iterationRecord) counted() bool {
	return rec.End != endInterrupted && rec.End != endLimit && rec.End != endVerify
}

// inTotals reports whether the record is an iteration in the totals (the
// run's end line, status, list, history's run header, events): every one
// the loop judges, and an interrupted one, which ran (SPEC §12: every
// iteration yields one record, and totals are the sums of the records);
// not a usage limit's attempt (retried as the same iteration: SPEC §3)
// nor a verification.
func (rec *iterationRecord) inTotals() bool {
	return rec.counted() || rec.End == endInterrupted
}

// duration is the iteration's duration.
func (rec *iterationRecord) duration() time.Duration {
	return time.Duration(rec.DurationMS) * time.Millisecond
}

// recordInput is what newRecord makes a record of.
type recordInput struct {
	run       string
	iteration int
	started   time.Time
	outcome   *iterationOutcome
	// end and reason: how the loop judged the iteration.
	end, reason string
	refused     []string
	status      taskStatus
	evidence    *evidence // what the agent wrote in the iteration: Complete, Worked
	tests       *testResults
	files       []string
	// agent ran the iteration; agentChange says why, when it is a
	// fallback.
	agent, agentChange string
}

// newRecord makes an iteration's record.
func newRecord(in recordInput) *iterationRecord {
	o := in.outcome
	rec := &iterationRecord{
		Run: in.run, Iteration: in.iteration, StartedAt: in.started.UTC().Truncate(time.Millisecond),
		DurationMS: o.elapsed.Milliseconds(), End: in.end, OK: in.end == endDone, Reason: in.reason,
		CostUSD: boundedSum(0, o.cost()), Tools: o.tools, Refused: in.refused, FilesChanged: in.files,
	}
	if rec.OK {
		rec.Reason = ""
	}
	rec.Agent, rec.AgentChange = in.agent, in.agentChange
	rec.CostEstimated = o.costEstimated // without a result too: an estimated $0
	if o.result != nil {
		rec.CostEstimated = rec.CostEstimated || o.result.costEstimated
		rec.Turns = o.result.NumTurns
		if u := o.result.Usage; u != nil {
			rec.Tokens = &tokenCounts{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheCreation: u.CacheCreation}
		}
	}
	if rec.Tools == nil {
		rec.Tools = map[string]int{}
	}
	if rec.Refused == nil {
		rec.Refused = []string{}
	}
	if in.status.HasProgress {
		rec.Progress = &progressRep{Completed: in.status.Completed, Total: in.status.Total}
	}
	if e := in.evidence; e != nil {
		rec.Complete, rec.Worked, rec.evidence = e.complete, e.worked, e
	}
	rec.resultText = o.resultText()
	if t := in.tests; t != nil {
		rec.Tests = &testCounts{Passed: t.Passed, Failed: t.Failed}
		rec.testRun = t
	}
	return rec
}

// toolNames lists the record's tools, most used first.
func (rec *iterationRecord) toolNames() []string {
	names := make([]string, 0, len(rec.Tools))
	for n := range rec.Tools {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := names[i], names[j]
		if rec.Tools[a] != rec.Tools[b] {
			return rec.Tools[a] > rec.Tools[b]
		}
		return a < b
	})
	return names
}

// workTotals are sums over iteration records: a run's, or a workspace's
// (in .metadata.json, status, list and watch). add is the only place they
// change.
type workTotals struct {
	Iterations       int     `json:"iterations"`       // counted iterations
	FailedIterations int     `json:"failedIterations"` // of those, failed ones
	CostUSD          float64 `json:"totalCostUsd"`     // every record's cost, counted or not
	DurationMS       int64   `json:"durationMs,omitempty"`
	// EstimatedUSD is the part of CostUSD estimated from tokens (codex);
	// LastAgent the agent of the last record.
	EstimatedUSD float64 `json:"estimatedCostUsd,omitempty"`
	LastAgent    string  `json:"lastAgent,omitempty"`
	// Estimated: some record's cost was estimated, if only an estimated
	// $0 (a codex iteration that failed before any token).
	Estimated bool `json:"costEstimated,omitempty"`
}

// estimated reports whether the cost is (in part) an estimate, shown
// marked "≈" as each estimated iteration's is (files written before
// Estimated existed: EstimatedUSD says it).
func (t *workTotals) estimated() bool { return t.Estimated || t.EstimatedUSD > 0 }

// add adds rec to the totals.
func (t *workTotals) add(rec *iterationRecord) {
	t.CostUSD = boundedSum(t.CostUSD, rec.CostUSD)
	if rec.CostEstimated {
		t.EstimatedUSD, t.Estimated = boundedSum(t.EstimatedUSD, rec.CostUSD), true
	}
	if rec.Agent != "" {
		t.LastAgent = rec.Agent
	}
	if !rec.inTotals() {
		return
	}
	t.Iterations++
	if !rec.OK && rec.counted() { // an interrupted one did not fail
		t.FailedIterations++
	}
	t.DurationMS += rec.DurationMS
}

// maxCostUSD bounds what an agent can report, so that no sum overflows to
// +Inf (which no JSON encoder writes).
const maxCostUSD = 1e12

// boundedSum adds an iteration's cost to a total, within maxCostUSD, and
// rounds it (roundUSD). Every cost the tool keeps is made here (a record's
// is boundedSum(0, cost)), so every JSON that carries one (the history,
// .metadata.json, .run-state.json, ps --json, serve, events) is rounded.
func boundedSum(total, cost float64) float64 {
	if !(cost > 0) { // negative, zero or NaN
		return total
	}
	return roundUSD(min(total+min(cost, maxCostUSD), maxCostUSD))
}

// roundUSD rounds an amount of dollars to a millionth of a dollar: far
// below what a view shows ($0.0123), and without the float noise of a sum
// (0.1 + 0.2 is 0.30000000000000004; its rounding, written by
// encoding/json in the fewest digits, is 0.3).
func roundUSD(x float64) float64 {
	return math.Round(x*1e6) / 1e6
}
