package main

// This file implements the ps command and the view of the live runs that
// ps, 'watch --all' and serve share: one runView per run of the registry
// (registry.go), made from the files the run writes anyway, and the actions
// on a run — a stop request, its cancellation, an answer — which are the
// stop and answer commands' own. The rules are: the runs waiting for a
// person come first; the state of a run is one of running, waiting (for an
// answer), limit (a usage-limit wait), verifying, delay, stopping; nothing
// here signals a run or writes anything but what stop and answer write.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
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
	Progress      *progressRep `json:"progress"`
	Now           string       `json:"now"`
	Question      *string      `json:"question"`
	PID           int          `json:"pid"`
	// StopRequested: a stop after the iteration is asked (the .stop file,
	// or the s key in the run's terminal).
	StopRequested bool `json:"stopRequested"`

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
	for _, e := range entries {
		if project != "" && !sameDir(e.Project, project) {
			continue
		}
		out = append(out, viewOf(e, rr.state(e.State), now))
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
	v := runView{ID: e.ID, Project: e.Project, Workspace: e.Workspace, Path: e.Dir, Agent: e.Agent, PID: e.PID, entry: e}
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
	v.CostUSD = st.Totals.CostUSD
	if st.Iteration > 0 { // the agent of the running (or last) iteration
		v.Agent = firstNonEmpty(st.Agent, agentClaude)
	}
	v.Progress = st.Tasks
	v.Now = nowText(st, now, true)
	if st.Question != "" && !st.Ended {
		q := st.Question
		v.Question = &q
	}
	return v
}

// stateOf is the state of the run whose state file says st; stop: a stop
// after the iteration is asked.
func stateOf(st *runState, stop bool) string {
	switch {
	case st.Ended, st.Interrupted != "", stop:
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
// stop' does: the .stop file, written within the workspace (confineWrites).
func (v runView) requestStop() error {
	confineWrites(v.entry.Dir)
	path := filepath.Join(v.entry.StateDir, stopFile)
	if err := checkStopPath(path); err != nil {
		return err
	}
	return writeStopFile(path)
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

// psUsage is the manual of the ps command.
const psUsage = `Usage: claude-iterate ps [--json] [--project]

Lists the runs going on on this machine, in every project: one line per
run with its project, workspace, state, iteration n/max, elapsed time,
cost, tasks' progress and what the agent is doing now. The runs waiting
for an answer come first.

The states: running, waiting for an answer, usage-limit wait, verifying,
delay (between iterations), stopping.

Every run registers itself in $XDG_STATE_HOME/claude-iterate/runs/
(~/.local/state/claude-iterate/runs/ by default, on macOS too) when it
starts, and unregisters when it ends; the entry of a run that was killed
(kill -9) or of a machine that rebooted is removed by the next ps.

Options:
  --json       a JSON array, one object per run: id, project, workspace,
               path, agent, state (running, waiting, limit, verifying,
               delay, stopping), iteration, maxIterations, elapsedMs,
               costUsd, progress ({"completed", "total"} or null), now,
               question (or null), pid, stopRequested
  --project    only the runs of this directory's project

Examples:
  claude-iterate ps
  claude-iterate ps --project
  claude-iterate ps --json
`

func runPS(env *cliEnv, args []string) error {
	fs := newFlagSet("ps")
	asJSON := fs.Bool("json", false, "")
	here := fs.Bool("project", false, "")
	if _, err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	project := ""
	if *here {
		project = env.projectRoot
	}
	runs, err := liveRuns(project)
	if err != nil {
		return err
	}
	if *asJSON {
		if runs == nil {
			runs = []runView{}
		}
		data, err := json.MarshalIndent(runs, "", "  ")
		if err != nil {
			return err
		}
		_, err = env.stdout.Write(append(data, '\n'))
		return writeError(err)
	}
	return writeError(writePS(env.stdout, runs, *here))
}

// writePS prints runs as ps's table; here: of this project only.
func writePS(w io.Writer, runs []runView, here bool) error {
	if len(runs) == 0 {
		msg := "No run is going on."
		if here {
			msg = "No run of this project is going on."
		}
		_, err := fmt.Fprintln(w, msg)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(psHeader, "\t"))
	for _, v := range runs {
		row := psRow(v)
		row[len(row)-1] = clipWidth(row[len(row)-1], 60)
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// psHeader is the table's header; psPriorities say which columns a narrow
// terminal keeps (watch --all): the higher, the later dropped; the last
// column is clipped before it is dropped.
var (
	psHeader     = []string{"PROJECT", "WORKSPACE", "STATE", "ITERATION", "ELAPSED", "COST", "PROGRESS", "NOW"}
	psPriorities = []int{1, prioKeep, 8, 6, 3, 4, 2, 5}
)

// psRow is v's row of the table, sanitized.
func psRow(v runView) []string {
	return []string{sanitizeString(clipWidth(filepath.Base(v.Project), 24)), sanitizeString(clipWidth(v.Workspace, 24)),
		stateWords(v.State), iterationText(v), compactDuration(time.Duration(v.ElapsedMS) * time.Millisecond),
		formatCost(v.CostUSD), progressText(v.Progress), sanitizeString(oneLine(v.Now))}
}

// fitTable lays out a table in w columns: columns two spaces apart, the
// lowest-priority ones dropped and the last one clipped until it fits.
func fitTable(header []string, rows [][]string, prio []int, w int) (string, []string) {
	n := len(header)
	widths := make([]int, n)
	for i, h := range header {
		widths[i] = displayWidth(h)
		for _, r := range rows {
			widths[i] = max(widths[i], displayWidth(r[i]))
		}
	}
	keep := make([]bool, n)
	for i := range keep {
		keep[i] = true
	}
	total := func() int {
		t, k := 0, 0
		for i, ok := range keep {
			if ok {
				t, k = t+widths[i], k+1
			}
		}
		return t + 2*max(k-1, 0)
	}
	last := n - 1
	for total() > w {
		if over := total() - w; keep[last] && widths[last]-over >= minFlexWidth {
			widths[last] -= over
			break
		}
		low := -1
		for i, ok := range keep {
			if ok && prio[i] < prioKeep && (low < 0 || prio[i] < prio[low]) {
				low = i
			}
		}
		if low < 0 {
			break
		}
		keep[low] = false
	}
	line := func(cells []string) string {
		var b strings.Builder
		for i, c := range cells {
			if !keep[i] {
				continue
			}
			if b.Len() > 0 {
				b.WriteString("  ")
			}
			c = clipWidth(c, widths[i])
			b.WriteString(c)
			if i != last {
				b.WriteString(strings.Repeat(" ", widths[i]-displayWidth(c)))
			}
		}
		return clipWidth(strings.TrimRight(b.String(), " "), w)
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = line(r)
	}
	return line(header), out
}

// iterationText is "3/50", or "-" before the first iteration.
func iterationText(v runView) string {
	if v.Iteration == 0 {
		return "-"
	}
	return strconv.Itoa(v.Iteration) + "/" + strconv.Itoa(v.MaxIterations)
}

// progressText is "35/60", or "-".
func progressText(p *progressRep) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprintf("%d/%d", p.Completed, p.Total)
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

// questionLine is v's question on one line, or "".
func questionLine(v runView) string {
	if v.Question == nil {
		return ""
	}
	return strings.TrimSpace(oneLine(*v.Question))
}
