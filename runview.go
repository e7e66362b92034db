package main

// This file implements the view of the live runs that ps, 'watch --all'
// and serve share: one runView per run of the registry (registry.go), made
// from the files the run writes anyway, and the actions on a run — a stop
// request, its cancellation, an answer — which are the stop and answer
// commands' own. The rules are: the runs waiting for a person come first;
// the state of a run is one of running, waiting (for an answer), limit (a
// usage-limit wait), verifying, delay, stopping, suspended; nothing here signals a
// run or writes anything but what stop and answer write.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// The states of a live run, as ps --json and the API say them.
const (
	runStateRunning   = "running"
	runStateWaiting   = "waiting" // for the answer to the agent's question
	runStateLimit     = "limit"   // for a usage limit's reset
	runStateVerifying = "verifying"
	runStateDelay     = "delay" // between iterations
	runStateStopping  = "stopping"
	runStateSuspended = "suspended" // Ctrl+Z in its terminal, till fg
)

// stateWords says a state in words, for the table.
func stateWords(state string) string {
	switch state {
	case runStateWaiting:
		return "waiting for an answer"
	case runStateLimit:
		return "usage-limit wait"
	}
	return state
}

// runView is a live run as ps --json shows it, and the API.
type runView struct {
	ID            string       `json:"id"`
	Project       string       `json:"project"`
	Workspace     string       `json:"workspace"`
	Path          string       `json:"path"`
	Agent         string       `json:"agent"`
	State         string       `json:"state"`
	Iteration     int          `json:"iteration"`
	MaxIterations int          `json:"maxIterations"`
	ElapsedMS     int64        `json:"elapsedMs"`
	CostUSD       float64      `json:"costUsd"`
	CostEstimated bool         `json:"costEstimated,omitempty"` // (in part) from tokens
	Progress      *progressRep `json:"progress"`
	Now           string       `json:"now"`
	Question      *string      `json:"question"`
	PID           int          `json:"pid"`
	// StopRequested: a stop after the iteration is asked (the .stop file,
	// or the s key in the run's terminal).
	StopRequested bool `json:"stopRequested"`
	// DryRun: a dry run ('run --dry-run'), on a scratch copy (Path) of
	// its workspace.
	DryRun bool `json:"dryRun,omitempty"`
	// ProjectName is the project as the tables name it: its folder's
	// name, with as many parent folders as tell it from another project
	// of the same name going on (x1/app, x2/app).
	ProjectName string `json:"projectName"`

	entry runEntry
}

// liveRuns returns the live runs of the registry, of the project at
// project only unless it is "": those waiting for a person first, then
// the oldest first (then by project and workspace).
func liveRuns(project string) ([]runView, error) {
	return (&runsReader{}).runs(project)
}

// runsReader reads the live runs again and again (watch --all, serve),
// reading only what changed: an entry once, a state file when its stamp
// changes. Its zero value reads everything each time. It is not safe for
// concurrent use: one goroutine reads with it.
type runsReader struct {
	entries map[string]runEntry
	states  map[string]seenState
}

// seenState is a state file as last read.
type seenState struct {
	stamp fileStamp
	st    *runState
}

// newRunsReader returns a runsReader that keeps what it read.
func newRunsReader() *runsReader {
	return &runsReader{entries: map[string]runEntry{}, states: map[string]seenState{}}
}

// runs is liveRuns.
func (rr *runsReader) runs(project string) ([]runView, error) {
	entries, err := liveEntries(rr.entries)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	var out []runView
	projects := make([]string, len(entries))
	for i, e := range entries {
		projects[i] = e.Project
	}
	names := projectNames(projects)
	for _, e := range entries {
		if project != "" && !sameDir(e.Project, project) {
			continue
		}
		v := viewOf(e, rr.state(e.State), now)
		v.ProjectName = names[filepath.Clean(e.Project)]
		out = append(out, v)
	}
	if rr.states != nil {
		for path := range rr.states {
			if !slices.ContainsFunc(entries, func(e runEntry) bool { return e.State == path }) {
				delete(rr.states, path)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		wi, wj := out[i].State == runStateWaiting, out[j].State == runStateWaiting
		if wi != wj {
			return wi
		}
		if si, sj := out[i].entry.Started, out[j].entry.Started; !si.Equal(sj) {
			return si.Before(sj)
		}
		return out[i].Project+"\x00"+out[i].Workspace < out[j].Project+"\x00"+out[j].Workspace
	})
	return out, nil
}

// projectNames names each of the project folders paths (by its cleaned
// path) with its shortest tail of folders that no other one ends with:
// its folder's name, or x1/app and x2/app for /a/x1/app and /a/x2/app;
// the whole path when another one ends with all of it.
func projectNames(paths []string) map[string]string {
	parts := map[string][]string{}
	for _, p := range paths {
		p = filepath.Clean(p)
		parts[p] = strings.Split(strings.TrimPrefix(p, "/"), "/")
	}
	tail := func(ps []string, k int) string {
		return strings.Join(ps[max(len(ps)-k, 0):], "/")
	}
	names := map[string]string{}
	for p, ps := range parts {
		for k := 1; ; k++ {
			if k >= len(ps) {
				names[p] = p
				break
			}
			clash := false
			for q, qs := range parts {
				if q != p && tail(qs, k) == tail(ps, k) {
					clash = true
					break
				}
			}
			if !clash {
				names[p] = tail(ps, k)
				break
			}
		}
	}
	return names
}

// state reads the state file at path, nil if it cannot.
func (rr *runsReader) state(path string) *runState {
	if rr.states == nil {
		st, _ := readRunState(path)
		return st
	}
	stamp := stampOf(path)
	if seen, ok := rr.states[path]; ok && seen.stamp == stamp {
		return seen.st
	}
	st, _ := readRunState(path)
	rr.states[path] = seenState{stamp: stamp, st: st}
	return st
}

// sameDir reports whether a and b name the same directory.
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// viewOf is e's run as its state file, st (nil if unread), shows it at
// now. Before the run writes its state file (or while the file is an
// earlier run's), the run is starting.
func viewOf(e runEntry, st *runState, now time.Time) runView {
	v := runView{ID: e.ID, Project: e.Project, Workspace: e.Workspace, Path: e.Dir, Agent: e.Agent, PID: e.PID, DryRun: e.DryRunOf != "", entry: e}
	v.StopRequested = stopFileExists(filepath.Join(e.StateDir, stopFile))
	if st == nil || st.PID != e.PID || !st.Started.Equal(e.Started) {
		v.State, v.Now = runStateRunning, "starting"
		if v.StopRequested {
			v.State = runStateStopping
		}
		v.ElapsedMS = max(0, now.Sub(e.Started).Milliseconds())
		return v
	}
	v.StopRequested = v.StopRequested || st.StopSource != ""
	v.State = stateOf(st, v.StopRequested)
	v.Iteration, v.MaxIterations = st.Iteration, st.Max
	v.ElapsedMS = st.elapsed(now).Milliseconds()
	if st.Ended { // its last moments: its time stopped at the end, which it says
		v.ElapsedMS = st.elapsed(st.Updated).Milliseconds()
	}
	v.CostUSD, v.CostEstimated = st.Totals.CostUSD, st.Totals.estimated()
	if st.Iteration > 0 { // the agent of the running (or last) iteration
		v.Agent = firstNonEmpty(st.Agent, agentClaude)
	}
	v.Progress = st.Tasks
	v.Now = nowText(st, now, true)
	if st.Ended && st.Ending != "" {
		v.Now = st.Ending
	}
	if st.Question != "" && !st.Ended {
		q := st.Question
		v.Question = &q
	}
	return v
}

// stateOf is the state of the run whose state file says st; stop: a stop
// after the iteration is asked. A run that ended (its last moments: a
// notification going out) is in the status it ended with.
func stateOf(st *runState, stop bool) string {
	switch {
	case st.Ended:
		return endedState(st)
	case !st.Suspended.IsZero():
		return runStateSuspended
	case st.Interrupted != "", stop:
		return runStateStopping
	case st.Phase == phaseQuestion:
		return runStateWaiting
	case st.Phase == phaseLimit:
		return runStateLimit
	case st.Phase == phaseVerify:
		return runStateVerifying
	case st.Phase == phaseDelay:
		return runStateDelay
	}
	return runStateRunning
}

// endedState is the status the run whose state file says st ended with,
// as list and status say it (a state file an older version wrote says it
// by its exit code only).
func endedState(st *runState) string {
	switch {
	case st.Status != "":
		return st.Status
	case st.Interrupted != "":
		return statusInterrupted
	case st.ExitCode == exitOK:
		return statusStopped
	}
	return statusFailed
}

// workspace is v's workspace, loaded, for stop and answer.
func (v runView) workspace() (*workspace, error) {
	e := v.entry
	w := &workspace{Name: e.Workspace, Dir: e.Dir, StateDir: e.StateDir, Ralph: e.Ralph}
	confineWrites(e.Dir)
	if err := w.load(); err != nil {
		return nil, err
	}
	return w, nil
}

// label names v's workspace in a message.
func (v runView) label() string {
	if v.entry.Ralph {
		return v.entry.Dir
	}
	return v.Workspace
}

// requestStop asks v's run to stop after its iteration, as 'claude-iterate
// stop' does: the .stop file, written within the workspace (confineWrites),
// whose directory is not made again when it is gone (a dry run's scratch
// copy, removed as it ended: a .stop there would be no one's); never for a
// run that has ended.
func (v runView) requestStop() error {
	if st, err := readRunState(v.entry.State); err == nil && st.PID == v.PID && st.Ended {
		// Its last moments: a .stop now would stop the next run instead.
		return fmt.Errorf("the run of %s has ended (%s): there is nothing to stop", v.label(), endedState(st))
	}
	confineWrites(v.entry.Dir)
	path := filepath.Join(v.entry.StateDir, stopFile)
	if err := checkStopPath(path); err != nil {
		return stopBlocked(err, path, path, v.PID, "ask again")
	}
	return writeStopRequest(path)
}

// keyStopped reports whether the run of pid, whose state file is state,
// was asked to stop with the s key in its terminal: a request that is no
// file, which only that terminal cancels.
func keyStopped(pid int, state string) bool {
	st, err := readRunState(state)
	return pid != 0 && err == nil && st.PID == pid && !st.Ended && st.StopSource == stopByKeyboard
}

// cancelStop withdraws a stop request of v's run, as 'claude-iterate stop
// --cancel' does; it reports whether there was one.
func (v runView) cancelStop() (bool, error) {
	return removeStopFile(filepath.Join(v.entry.StateDir, stopFile))
}

// answer gives text as the answer to v's pending question, as
// 'claude-iterate answer' does.
func (v runView) answer(text string) error {
	text, err := cleanAnswer(text)
	if err != nil {
		return err
	}
	w, err := v.workspace()
	if err != nil {
		return err
	}
	q := w.pendingQuestion()
	if q == nil {
		return fmt.Errorf("no question is pending in workspace %s", v.label())
	}
	_, err = saveAnswer(w, q, text, v.label(), w.answersPath())
	return err
}

// findRun returns the live run with id, or an error saying there is none.
func findRun(id string) (runView, error) {
	if !validRunID(id) {
		return runView{}, errNoRun
	}
	runs, err := liveRuns("")
	if err != nil {
		return runView{}, err
	}
	for _, v := range runs {
		if v.ID == id {
			return v, nil
		}
	}
	return runView{}, errNoRun
}

// errNoRun is a run id that is not a live run's.
var errNoRun = errors.New("no such run going on")
