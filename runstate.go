package main

// This file defines a run's state: what a run is doing now (runState), the
// live view's model, which the run writes to its state file
// (.run-state.json in the workspace's state directory, live.go) and every
// other view reads back: watch (cmd_watch.go), ps and watch --all (ps.go,
// watchall.go), serve (serve*.go). The rules are: the run is its only
// writer; a reader never trusts it alone (a run killed with SIGKILL leaves
// it saying "running": the pid and the lock tell).

import (
	"fmt"
	"time"
)

// runStateFile is the run's state file, in the workspace's state directory.
const runStateFile = ".run-state.json"

// readRunState reads a run state file.
func readRunState(path string) (*runState, error) {
	data, err := readOwnFile(path, runStateCap) // a link there is not the run's
	if err != nil {
		return nil, err
	}
	st := &runState{}
	if err := decodeJSONFile(path, data, st); err != nil {
		return nil, err
	}
	return st, nil
}

// Phases of a run.
const (
	phaseStarting = "starting" // before the first iteration
	phaseRunning  = "running"  // an agent runs
	phaseBetween  = "between"  // after an iteration: tests, conditions
	phaseDelay    = "delay"    // the delay between iterations
	phaseLimit    = "limit"    // waiting for a usage limit's reset
	phaseQuestion = "question" // waiting for the answer to the agent's question
	phaseVerify   = "verify"   // the verifier runs (run --verify)
	phaseEnded    = "ended"
)

// runState is what a run is doing: the panel's model, and the content of
// the state file.
type runState struct {
	PID         int       `json:"pid"`
	Workspace   string    `json:"workspace"`
	Mode        string    `json:"mode"`
	Started     time.Time `json:"started"`
	SuspendedMS int64     `json:"suspendedMs"`
	// Suspended is when the run was suspended (Ctrl+Z), while it is;
	// zero while it goes on. Its durations stop there.
	Suspended   time.Time    `json:"suspended,omitzero"`
	Phase       string       `json:"phase"`
	Interrupted string       `json:"interrupted,omitempty"` // the signal's name
	Iteration   int          `json:"iteration"`             // the running, or last started, iteration
	Agent       string       `json:"agent,omitempty"`       // that iteration's agent CLI
	Totals      workTotals   `json:"totals"`                // the run's, from its records
	Max         int          `json:"max"`
	IterStarted time.Time    `json:"iterationStarted"`
	Tasks       *progressRep `json:"tasks,omitempty"`
	Complete    bool         `json:"complete,omitempty"`
	Activity    activity     `json:"activity"`
	WaitUntil   time.Time    `json:"waitUntil"`
	StopSource  string       `json:"stopSource,omitempty"`
	// Question is the agent's question, pending; AnswerCmd answers it.
	Question  string `json:"question,omitempty"`
	AnswerCmd string `json:"answerCommand,omitempty"`
	// VerifyDepth is the depth of the running verifier.
	VerifyDepth string      `json:"verifyDepth,omitempty"`
	Keyboard    bool        `json:"keyboard"` // the s key works in the run's terminal
	Updated     time.Time   `json:"updated"`  // the last sign of life
	Lines       []stateLine `json:"lines,omitempty"`
	Ended       bool        `json:"ended"`
	Ending      string      `json:"ending,omitempty"`
	Hint        string      `json:"hint,omitempty"`
	ExitCode    int         `json:"exitCode"`
	// Status is the workspace's status the run ended with (completed,
	// stopped, failed, interrupted), as list and status say it.
	Status string `json:"status,omitempty"`

	// WaitEndsRun: the wait ends at the run's deadline (--max-duration),
	// not in a retry or a next iteration.
	WaitEndsRun bool `json:"waitEndsRun,omitempty"`
	// PauseAfter: the delay is the pause after this many failed
	// iterations in a row (pauseAfterFailures).
	PauseAfter int `json:"pauseAfter,omitempty"`
}

// stateLine is one scrolling line of the run's output.
type stateLine struct {
	Seq  int    `json:"seq"`
	Text string `json:"text"`
}

// endLines are the lines the run said last, once it ended, as watch shows
// them: how it ended, and on a failure the hint; none before its end.
func (st *runState) endLines() []stateLine {
	if !st.Ended || st.Ending == "" {
		return nil
	}
	seq := 0
	if n := len(st.Lines); n > 0 {
		seq = st.Lines[n-1].Seq
	}
	out := []stateLine{{Seq: seq + 1, Text: progName + ": " + st.Ending}}
	if st.ExitCode != exitOK && st.Hint != "" {
		out = append(out, stateLine{Seq: seq + 2, Text: progName + ": hint: " + st.Hint})
	}
	return out
}

// elapsed is the run's time at now, time suspended excluded.
func (st *runState) elapsed(now time.Time) time.Duration {
	if st.Started.IsZero() {
		return 0
	}
	if !st.Suspended.IsZero() && now.After(st.Suspended) {
		now = st.Suspended // stopped there, till fg
	}
	return max(0, now.Sub(st.Started)-time.Duration(st.SuspendedMS)*time.Millisecond)
}

// tasksText shows the tasks' progress: "35/60", or "".
func (st *runState) tasksText() string {
	switch {
	case st.Tasks != nil && st.Complete:
		return fmt.Sprintf("%d/%d, complete", st.Tasks.Completed, st.Tasks.Total)
	case st.Tasks != nil:
		return fmt.Sprintf("%d/%d", st.Tasks.Completed, st.Tasks.Total)
	case st.Complete:
		return "complete"
	}
	return ""
}

// nowLine says in one line what the run is doing at now: "running
// iteration 3, 2/50 done: Bash: go test ./... · 42s".
func (st *runState) nowLine(now time.Time) string {
	label, _ := stateLabel(st)
	return fmt.Sprintf("%s, %d/%d done: %s", label, st.Totals.Iterations, st.Max, nowText(st, now, true))
}
