package main

// This file implements the status command: a read-only view of one
// workspace (or of its archive), in words or as JSON. A corrupt file is
// reported (file, position, fault), never hidden.

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// statusUsage is the manual of the status command.
const statusUsage = `Usage: claude-iterate status [<workspace>] [--json] [--archived]

Shows a workspace: mode, status, what a run in progress is doing now,
iterations, progress (.status.json, or TODO.md's checklist), the agent's
summary, whether a stop is requested, a dry run of it going on, why the
last run stopped and its exit code, the processes a killed run left running
(which 'claude-iterate stop' ends), and the stop conditions' progress; with a git worktree (run
--worktree), its branch, the commits ahead of and behind its base, the
files changed in it and not committed, and whether it is merged.
'claude-iterate watch' follows a run in progress live.
Without <workspace>, shows the ralph-mode run of the current directory.

Options:
  --json       print the same as a JSON object
  --archived   show an archived workspace, as it was archived: <workspace>
               names its latest archive, or is an archive (see 'claude-iterate
               help archive')

Exit status: 0 shown; 1 error (no such workspace); 2 usage error.

Examples:
  claude-iterate status demo
  claude-iterate status ./tasks/refactor --json
  claude-iterate status demo --archived
`

// statusReport is the status command's --json form.
type statusReport struct {
	Name    string     `json:"name"`
	Path    string     `json:"path"`
	Mode    string     `json:"mode"`
	Status  string     `json:"status"`
	Running bool       `json:"running"`
	PID     int        `json:"pid,omitempty"`
	Created time.Time  `json:"created"`
	LastRun *time.Time `json:"lastRun,omitempty"`
	workTotals
	LastRunIters int          `json:"lastRunIterations"`
	Progress     *progressRep `json:"progress,omitempty"`
	Complete     bool         `json:"complete"` // what .status.json says
	// Claim says why the completion .status.json claims is not the
	// workspace's (claimText), when it is not.
	Claim          string             `json:"claim,omitempty"`
	Summary        string             `json:"summary,omitempty"`
	ProgressSource string             `json:"progressSource,omitempty"`
	StopRequested  bool               `json:"stopRequested"`
	LastStopReason string             `json:"lastStopReason,omitempty"`
	LastExitCode   *int               `json:"lastExitCode,omitempty"`
	Log            string             `json:"log,omitempty"`
	Conditions     []condReport       `json:"conditions,omitempty"`
	Warning        string             `json:"warning,omitempty"`
	Archive        string             `json:"archive,omitempty"`
	Archived       *time.Time         `json:"archived,omitempty"`
	Now            string             `json:"now,omitempty"`       // a run in progress: what it does now
	Suspended      bool               `json:"suspended,omitempty"` // that run is suspended (Ctrl+Z)
	Question       *questionView      `json:"question,omitempty"`
	Verification   *verificationState `json:"verification,omitempty"`
	Git            *gitView           `json:"git,omitempty"` // gitstate.go
	// DryRuns are the dry runs of the workspace going on, each on its
	// scratch copy (its path), which leave the workspace unchanged.
	DryRuns []runView `json:"dryRuns,omitempty"`
	// Leftovers are the pids of the processes a killed run left running
	// (leftovers.go), which stop, or the next run, ends.
	Leftovers []int `json:"leftovers,omitempty"`
}

func runStatus(env *cliEnv, args []string) error {
	fs := newFlagSet("status")
	asJSON := fs.Bool("json", false, "")
	archived := fs.Bool("archived", false, "")
	pos, err := parseFlags(fs, args, 1)
	if err != nil {
		return err
	}
	var w *workspace
	var from *archivedWorkspace
	if *archived {
		if from, err = openArchivedArg(env, pos); err == nil {
			defer from.close()
			w = from.ws
		}
	} else {
		var warn error
		w, warn, err = lookAtWorkspace(env, pos)
		warnConfig(env, warn)
		if _, dry, ralphErr := orRalphDryRun(env, pos, err); err != nil && ralphErr == nil {
			e := dry[len(dry)-1]
			return withHint(fmt.Errorf("the ralph-mode run of this directory has no state here: its only run is a dry run going on (pid %d), %s", e.PID, scratchOf(e)),
				"claude-iterate watch follows it; claude-iterate stop stops it")
		}
	}
	if err != nil {
		return err
	}
	ts, warn := readTaskStatus(w)
	stopWarn := checkStopPath(w.stopPath())
	m := w.meta
	r := statusReport{
		Name: w.Name, Path: w.Dir, Mode: m.Mode, Status: w.displayStatus(), PID: w.runningPID(),
		Created: m.Created, LastRun: m.LastRun, workTotals: m.workTotals, LastRunIters: m.LastRunIterations,
		Complete: ts.Complete, Summary: ts.Summary,
		ProgressSource: ts.Source, StopRequested: stopFileExists(w.stopPath()), LastStopReason: m.LastStopReason,
		LastExitCode: m.LastExitCode, Conditions: m.Conditions, Log: m.LastLog,
	}
	r.Running = r.PID != 0
	claim := claimText(w, ts)
	if claim != "complete" {
		r.Claim = claim
	}
	r.Question, r.Verification = viewQuestion(w), m.Verification
	if st, err := readRunState(w.statePath()); err == nil && r.Running && st.PID == r.PID && !st.Ended {
		r.Now, r.Suspended = st.nowLine(time.Now()), !st.Suspended.IsZero()
	}
	if ts.HasProgress {
		r.Progress = &progressRep{ts.Completed, ts.Total}
	}
	// Only an iteration that did not fail was expected to write the file.
	if warn != nil && ts.Source != statusFile && m.Iterations > m.FailedIterations && !w.Ralph && from == nil {
		r.Warning = warn.Error()
	}
	if stopWarn != nil {
		r.Warning = strings.TrimPrefix(strings.Join([]string{r.Warning, stopWarn.Error()}, "; "), "; ")
	}
	if histWarn := historyFault(w.historyPath(), relPath(env.projectRoot, w.historyPath())); histWarn != nil {
		r.Warning = strings.TrimPrefix(strings.Join([]string{r.Warning, histWarn.Error()}, "; "), "; ")
	}
	if from != nil {
		r.Path, r.Archive, r.Archived = from.path, from.path, &from.at
	} else {
		r.Git = viewGit(env, w)
		r.Leftovers = leftPIDs(w)
		for _, e := range liveDryRuns(w.StateDir) {
			st, _ := readRunState(e.State)
			r.DryRuns = append(r.DryRuns, viewOf(e, st, time.Now()))
		}
	}
	if *asJSON {
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(env.stdout, "%s\n", b)
		return writeError(err)
	}
	// Every line may quote the agent (its summary, its question, a stop
	// reason naming it): the report is sanitized whole.
	out := &errWriter{w: sanitizingWriter{valueFolder(env.stdout, outputWidth(env.stdout))}}
	fmt.Fprintf(out, "Workspace:   %s\n", r.Name)
	if r.Archive != "" {
		fmt.Fprintf(out, "Archive:     %s (archived %s)\n", relPath(env.projectRoot, r.Archive), r.Archived.Local().Format(time.DateTime))
	} else {
		fmt.Fprintf(out, "Path:        %s\n", relPath(env.projectRoot, r.Path))
	}
	fmt.Fprintf(out, "Mode:        %s\n", r.Mode)
	status := sanitizeString(r.Status)
	if r.Running {
		status = fmt.Sprintf("%s (pid %d)", status, r.PID)
	}
	if r.Suspended {
		status += ", suspended (Ctrl+Z)"
	}
	if r.Question != nil && !r.Question.Answered {
		status += ", a question waits for an answer"
	}
	fmt.Fprintf(out, "Status:      %s\n", status)
	if r.Now != "" {
		fmt.Fprintf(out, "Now:         %s\n", r.Now)
	}
	fmt.Fprintf(out, "Created:     %s\n", r.Created.Local().Format(time.DateTime))
	if r.LastRun != nil {
		fmt.Fprintf(out, "Last run:    %s\n", r.LastRun.Local().Format(time.DateTime))
	} else {
		fmt.Fprintf(out, "Last run:    never\n")
	}
	fmt.Fprintf(out, "Iterations:  %d in all, %d in the last run, %d failed\n", r.Iterations, r.LastRunIters, r.FailedIterations)
	if r.LastAgent != "" {
		fmt.Fprintf(out, "Agent:       %s (the last iteration's)\n", r.LastAgent)
	}
	if r.CostUSD > 0 {
		est := ""
		if r.EstimatedUSD > 0 {
			est = fmt.Sprintf(" (%s of it estimated from tokens: agents.codex.pricing)", formatCost(r.EstimatedUSD))
		}
		fmt.Fprintf(out, "Cost:        %s%s\n", costText(r.CostUSD, r.estimated()), est)
	}
	prog := "-"
	if ts.HasProgress {
		prog = ts.progressText()
	} else if claim != "" {
		prog, claim = claim, "" // said once
	}
	if ts.Source != "" {
		prog += " (from " + ts.Source + ")"
	}
	if claim != "" {
		prog += ", " + claim
	}
	fmt.Fprintf(out, "Progress:    %s\n", prog)
	if r.Summary != "" {
		fmt.Fprintf(out, "Summary:     %s\n", oneLine(r.Summary))
	}
	r.Question.print(out)
	r.Verification.print(out)
	if n := len(r.Leftovers); n > 0 {
		fmt.Fprintf(out, "Leftovers:   %s\n", leftText("the killed run", r.Leftovers, stopCommand(pos))+" (or the next run does)")
	}
	for _, v := range r.DryRuns {
		fmt.Fprintf(out, "Dry run:     %s\n", dryRunText(v))
	}
	if r.StopRequested {
		fmt.Fprintf(out, "Stop:        requested (%s exists; '%s' removes it)\n", stopFile, cancelCommand(pos))
	}
	switch {
	case r.Status == statusKilled && r.LastStopReason != "":
		// The reason kept is the run's before: the killed one said none.
		fmt.Fprintf(out, "Last stop:   none: the last run was killed, or crashed (the run before it: %s, exit %d)\n", r.LastStopReason, derefInt(r.LastExitCode))
	case r.LastStopReason != "":
		fmt.Fprintf(out, "Last stop:   %s (exit %d)\n", r.LastStopReason, derefInt(r.LastExitCode))
	}
	if len(r.Conditions) > 0 {
		fmt.Fprintf(out, "Conditions:\n")
		rows := make([][]string, len(r.Conditions))
		for i, c := range r.Conditions {
			met := ""
			if c.Met {
				met = "met"
			}
			rows[i] = []string{c.Group, clip(firstNonEmpty(c.Condition, c.Type), 60), fmt.Sprintf("%3.0f%%", c.Progress*100), met, oneLine(c.Reason)}
		}
		if width := outputWidth(env.stdout); width > 0 {
			// A narrow output: the condition is clipped, and the lowest-
			// priority columns go (the table's, as ps's does).
			_, lines := fitColumns(make([]string, len(rows[0])), rows, condPriorities, width-2, 1)
			for _, l := range lines {
				fmt.Fprintf(out, "  %s\n", l)
			}
		} else {
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			for _, row := range rows {
				fmt.Fprintf(tw, "  %s\n", strings.Join(row, "\t"))
			}
			tw.Flush()
		}
	}
	if r.Log != "" {
		fmt.Fprintf(out, "Log:         %s\n", relPath(env.projectRoot, r.Log))
	}
	if r.Git != nil {
		fmt.Fprintf(out, "Git:         %s\n", r.Git.text(env.projectRoot))
	}
	if r.Warning != "" {
		fmt.Fprintf(out, "Warning:     %s\n", r.Warning)
	}
	return writeError(out.err)
}

// dryRunText says what the dry run v is doing, and where.
func dryRunText(v runView) string {
	parts := []string{fmt.Sprintf("in progress (pid %d)", v.PID)}
	if v.Iteration > 0 {
		parts = append(parts, "iteration "+iterationText(v))
	}
	if v.State != runStateRunning && v.State != runStateStopping {
		parts = append(parts, stateWords(v.State))
	}
	if v.StopRequested {
		parts = append(parts, "stop requested")
	}
	return strings.Join(parts, ", ") + ", " + scratchOf(v.entry) + ": the workspace is left unchanged"
}

// condPriorities say which columns of status's Conditions table a narrow
// output drops first (the lowest): the reason, the group, the percentage;
// the condition (clipped) and whether it is met stay.
var condPriorities = []int{2, prioKeep, 3, prioKeep, 1}

func derefInt(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// claimText says what became of the completion the status file claims
// (ts.Complete), as the runs judged it: "complete" when accepted, else the
// claim and why it is not the workspace's completion — the reason of the
// last run's task_complete condition (evidence.go: a failed iteration's
// claim, a claim not written in the iteration) — and "" when none is
// claimed. status and list show it, never a claim as a completion.
func claimText(w *workspace, ts taskStatus) string {
	if !ts.Complete {
		return ""
	}
	m := w.meta
	for _, c := range m.Conditions {
		if c.Type == condTaskComplete && strings.HasPrefix(c.Reason, claimNotAccepted) {
			return c.Reason
		}
	}
	switch {
	case w.runningPID() != 0:
		return "claimed complete, not judged yet"
	case m.Status == statusCompleted:
		return "complete"
	case m.LastRun == nil:
		return "claimed complete, no run has judged it yet"
	}
	return "claimed complete, not accepted by the last run"
}

// progressCell is the PROGRESS of a workspace in a table (list): the
// items done of items listed, else what became of a completion claimed.
func progressCell(w *workspace, ts taskStatus) string {
	if ts.HasProgress || !ts.Complete {
		return ts.progressText()
	}
	switch claim := claimText(w, ts); {
	case claim == "complete":
		return claim
	case strings.Contains(claim, "not accepted"):
		return "claimed, not accepted" // status says why
	}
	return "claimed"
}

// statusValueColumn is where status's values start ("Workspace:   ").
const statusValueColumn = 13

// valueFolder is w, through which a "Label:      value" line wider than
// width (0: any) has its value wrapped at spaces and slashes, under the
// value's column, rather than broken by the terminal mid-word. Each write
// is whole lines.
func valueFolder(w io.Writer, width int) io.Writer {
	if width <= statusValueColumn+10 {
		return w
	}
	return foldingWriter{w, width}
}

type foldingWriter struct {
	w     io.Writer
	width int
}

func (f foldingWriter) Write(p []byte) (int, error) {
	lines := strings.SplitAfter(string(p), "\n")
	var b strings.Builder
	for _, line := range lines {
		body, nl := strings.CutSuffix(line, "\n")
		label, value, _ := strings.Cut(body, ":")
		n := statusValueColumn - len(label) - 1 // the spaces after the colon
		if displayWidth(body) <= f.width || label == "" || label[0] == ' ' || n < 1 || len(value) <= n ||
			strings.Trim(value[:n], " ") != "" || value[n] == ' ' {
			b.WriteString(line) // not a label's line: as it is
			continue
		}
		for i, l := range wrapWidth(value[n:], f.width-statusValueColumn, f.width-statusValueColumn, 0) {
			if i == 0 {
				b.WriteString(body[:statusValueColumn] + l)
			} else {
				b.WriteString("\n" + strings.Repeat(" ", statusValueColumn) + l)
			}
		}
		if nl {
			b.WriteString("\n")
		}
	}
	if _, err := io.WriteString(f.w, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}
