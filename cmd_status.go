package main

// This file implements the list and status commands: read-only views of
// workspaces. A corrupt workspace is reported (file, position, fault) without
// hiding the others.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// listUsage is the manual of the list command.
const listUsage = `Usage: claude-iterate list [--archived]

Lists the workspaces under the workspaces directory (claude-iterate/workspaces
by default, see 'claude-iterate config'), and a ralph-mode run's state in the
current directory, with mode, status, iterations run, progress and last run.
A workspace made at a path (init ./dir) is not listed: the tool keeps no
record of them; 'claude-iterate status ./dir' shows one.
A status of "ended abnormally" is a run that ended without cleaning up (killed with
SIGKILL, or a crash); ", question waits" marks a workspace whose agent asked
a question not answered yet ('claude-iterate answer'). When a workspace
works in a git worktree (run --worktree), a BRANCH column shows its branch,
+commits ahead of and -behind its base, ~files uncommitted, and "merged".

Options:
  --archived   also list the workspaces archived by 'claude-iterate clean'

Examples:
  claude-iterate list
  claude-iterate list --archived
`

// statusUsage is the manual of the status command.
const statusUsage = `Usage: claude-iterate status [<workspace>] [--json] [--archived]

Shows a workspace: mode, status, what a run in progress is doing now,
iterations, progress (.status.json, or TODO.md's checklist), the agent's
summary, whether a stop is requested, why the last run stopped and its exit
code, and the stop conditions' progress; with a git worktree (run
--worktree), its branch, the commits ahead of and behind its base, the
files changed in it and not committed, and whether it is merged.
'claude-iterate watch' follows a run in progress live.
Without <workspace>, shows the ralph-mode run of the current directory.

Options:
  --json       print the same as a JSON object
  --archived   show an archived workspace, as it was archived: <workspace>
               names its latest archive, or is an archive (see 'claude-iterate
               help archive')

Examples:
  claude-iterate status demo
  claude-iterate status ./tasks/refactor --json
  claude-iterate status demo --archived
`

func runList(env *cliEnv, args []string) error {
	fs := newFlagSet("list")
	archived := fs.Bool("archived", false, "")
	if _, err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	err := listWorkspaces(env)
	if *archived {
		if aerr := listArchives(env, true); err == nil {
			err = aerr
		}
	}
	return err
}

// listWorkspaces prints the workspaces.
func listWorkspaces(env *cliEnv) error {
	dir, warn := workspacesDirLenient(env)
	warnConfig(env, warn)
	if err := workspacesDirUsable(env.projectRoot, dir); err != nil {
		return err
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(env.projectRoot, dir)
	}
	entries, err := readDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("reading workspaces directory: %w", err)
	}
	var spaces []*workspace
	var broken []error
	for _, e := range entries {
		if !e.IsDir() || !validName(e.Name()) {
			continue
		}
		w := &workspace{Name: e.Name(), Dir: filepath.Join(dir, e.Name())}
		w.StateDir = w.Dir
		if err := lookWorkspace(w); err != nil {
			if !errors.Is(err, os.ErrNotExist) {
				broken = append(broken, err)
			}
			continue
		}
		spaces = append(spaces, w)
	}
	if rw := ralphWorkspace(env.projectRoot); rw.load() == nil {
		rw.Name = "."
		spaces = append(spaces, rw)
	}
	sort.Slice(spaces, func(i, j int) bool { return spaces[i].Name < spaces[j].Name })
	if len(spaces) == 0 && len(broken) == 0 {
		fmt.Fprintf(env.stdout, "No workspaces in %s.\n", relPath(env.projectRoot, dir))
		fmt.Fprintf(env.stdout, "Create one with: claude-iterate init <name> --instructions TASK.md\n")
		fmt.Fprintf(env.stdout, "Workspaces made at a path (init ./dir) are not listed: claude-iterate status ./dir shows one.\n")
		return nil
	}
	if len(spaces) > 0 {
		tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
		views, branches := make([]*gitView, len(spaces)), ""
		for i, w := range spaces {
			if views[i] = viewGit(w); views[i] != nil {
				branches = "\tBRANCH" // gitstate.go: only when a workspace has one
			}
		}
		fmt.Fprintln(tw, "NAME\tMODE\tSTATUS\tITERATIONS\tPROGRESS\tLAST RUN"+branches)
		for i, w := range spaces {
			ts, _ := readTaskStatus(w)
			last := "never"
			if w.meta.LastRun != nil {
				last = w.meta.LastRun.Local().Format("2006-01-02 15:04")
			}
			status := sanitizeString(w.displayStatus()) // the metadata's word: an agent can write it
			if w.questionWaits() {
				status += ", question waits"
			}
			mode := w.meta.Mode
			if a := w.meta.LastAgent; a != "" && a != agentClaude {
				mode += ", " + a // the agent, when not the default
			}
			branch := ""
			if branches != "" {
				branch = "\t-"
				if views[i] != nil {
					branch = "\t" + views[i].short()
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s%s\n", w.Name, mode, status, w.meta.Iterations, ts.progressText(), last, branch)
		}
		if err := tw.Flush(); err != nil {
			return writeError(err)
		}
	}
	for _, err := range broken {
		fmt.Fprintf(env.stderr, "%s: %v\n", progName, err)
	}
	if len(broken) > 0 {
		return &exitCodeError{code: exitError}
	}
	return nil
}

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
	LastRunIters   int                `json:"lastRunIterations"`
	Progress       *progressRep       `json:"progress,omitempty"`
	Complete       bool               `json:"complete"`
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
	Now            string             `json:"now,omitempty"` // a run in progress: what it does now
	Question       *questionView      `json:"question,omitempty"`
	Verification   *verificationState `json:"verification,omitempty"`
	Git            *gitView           `json:"git,omitempty"` // gitstate.go
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
	r.Question, r.Verification = viewQuestion(w), m.Verification
	if st, err := readRunState(w.statePath()); err == nil && r.Running && st.PID == r.PID && !st.Ended {
		r.Now = st.nowLine(time.Now())
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
	if from != nil {
		r.Path, r.Archive, r.Archived = from.path, from.path, &from.at
	} else {
		r.Git = viewGit(w)
	}
	if *asJSON {
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(env.stdout, "%s\n", b)
		return writeError(err)
	}
	out := &errWriter{w: env.stdout}
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
		fmt.Fprintf(out, "Cost:        %s%s\n", formatCost(r.CostUSD), est)
	}
	prog := ts.progressText()
	if ts.Source != "" {
		prog += " (from " + ts.Source + ")"
	}
	if ts.Complete {
		prog += ", complete"
	}
	fmt.Fprintf(out, "Progress:    %s\n", prog)
	if r.Summary != "" {
		fmt.Fprintf(out, "Summary:     %s\n", r.Summary)
	}
	r.Question.print(out)
	r.Verification.print(out)
	if r.StopRequested {
		fmt.Fprintf(out, "Stop:        requested (%s exists; '%s' removes it)\n", stopFile, cancelCommand(pos))
	}
	if r.LastStopReason != "" {
		fmt.Fprintf(out, "Last stop:   %s (exit %d)\n", r.LastStopReason, derefInt(r.LastExitCode))
	}
	if len(r.Conditions) > 0 {
		fmt.Fprintf(out, "Conditions:\n")
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		for _, c := range r.Conditions {
			met := ""
			if c.Met {
				met = "met"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%3.0f%%\t%s\t%s\n", c.Group, clip(firstNonEmpty(c.Condition, c.Type), 60), c.Progress*100, met, c.Reason)
		}
		tw.Flush()
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

func derefInt(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// workspaceFromArgs opens the workspace named by the optional positional
// argument, for a command that changes it (openWorkspace): without one,
// the ralph-mode workspace of the current directory.
func workspaceFromArgs(env *cliEnv, pos []string) (*workspace, error) {
	return workspaceFromArgsWith(env, pos, openWorkspace)
}

// lookUpFromArgs is workspaceFromArgs for a command that only looks at
// the workspace (lookUpWorkspace): a fresh clone's is not written.
func lookUpFromArgs(env *cliEnv, pos []string) (*workspace, error) {
	return workspaceFromArgsWith(env, pos, lookUpWorkspace)
}

// workspaceFromArgsWith is workspaceFromArgs, opening a named workspace
// with open.
func workspaceFromArgsWith(env *cliEnv, pos []string, open func(*cliEnv, string, string) (*workspace, error)) (*workspace, error) {
	if len(pos) == 0 {
		return ralphFromArgs(env)
	}
	dir, err := workspacesDir(env)
	if err != nil {
		return nil, err
	}
	return open(env, dir, pos[0])
}

// lookAtWorkspace is workspaceFromArgs for the commands that only look at
// a workspace (status, watch): a broken config file is left out, and
// returned as warn.
func lookAtWorkspace(env *cliEnv, pos []string) (w *workspace, warn, err error) {
	if len(pos) == 0 {
		w, err = ralphFromArgs(env)
		return w, nil, err
	}
	dir, warn := workspacesDirLenient(env)
	w, err = lookUpWorkspace(env, dir, pos[0])
	return w, warn, err
}

// ralphFromArgs opens the ralph-mode workspace of the current directory.
func ralphFromArgs(env *cliEnv) (*workspace, error) {
	{
		w := ralphWorkspace(env.projectRoot)
		if err := w.load(); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, usagef("missing workspace (and no ralph-mode run in this directory: no %s)", filepath.Join(ralphStateDir, metadataFile))
			}
			return nil, err
		}
		return w, nil
	}
}

// workspacesDirLenient is workspacesDir for the commands that only look at
// a workspace or stop its run (status, list, watch, stop): a broken config
// file must not lock the user out of a live run, so it is left out, and
// returned as warn, for a warning.
func workspacesDirLenient(env *cliEnv) (dir string, warn error) {
	layers := []*configLayer{envLayer()}
	for _, f := range []struct{ name, path string }{
		{layerProject, filepath.Join(env.projectRoot, projectConfigName)},
		{layerUser, userConfigPath()},
	} {
		l, err := loadFileLayer(f.name, f.path)
		if err != nil {
			warn = errors.Join(warn, err)
			continue
		}
		layers = append(layers, l)
	}
	return resolveSettings(layers...).WorkspacesDir, warn
}

// warnConfig prints the warning about a broken config file that a lenient
// command left out.
func warnConfig(env *cliEnv, warn error) {
	if warn != nil {
		for _, l := range strings.Split(warn.Error(), "\n") {
			fmt.Fprintf(env.stderr, "%s: warning: %s (ignored here)\n", progName, l)
		}
	}
}

// workspacesDir is the workspaces directory as the configuration files and
// the environment set it (not a workspace's own config, which is inside it).
func workspacesDir(env *cliEnv) (string, error) {
	project, user, err := baseLayers(env.projectRoot)
	if err != nil {
		return "", err
	}
	return resolveSettings(envLayer(), project, user).WorkspacesDir, nil
}
