package main

// This file implements the reset command: a workspace's runs forgotten —
// its counters, cost, status, last stop and history — its task and the
// agent's files kept.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// resetUsage is the manual of the reset command.
const resetUsage = `Usage: claude-iterate reset [<workspace>] [--all]

Forgets a workspace's runs: in .metadata.json, the iteration counts, the
cost, the status, the last run, why it stopped and the stop conditions'
progress go back to those of a new workspace, and the history of its
iterations (history.jsonl, see 'claude-iterate help history') is removed.
The agent's pending question and an answer no run has taken are forgotten:
a question the agent asks again is asked. The mode and the workspace's
configuration stay, as do INSTRUCTIONS.md, TODO.md, .status.json, the logs
and every file of the agent, as do a git worktree's files, commits and
branch (run --worktree). Prints what it reset. Without <workspace>,
resets the ralph-mode run of the current directory. A workspace being run is
not reset: stop the run first.

Options:
  --all   also remove .status.json and TODO.md, the agent's progress, so that
          the next run starts the task over (in ralph mode only .status.json:
          TODO.md is the project's)

Exit status: 0 reset; 1 error (a run holds the workspace); 2 usage error.

Examples:
  claude-iterate reset demo
  claude-iterate reset demo --all
`

// resetMetadata forgets the runs recorded in m, as reset does, and returns
// what changed, one "field\tbefore → after" line each.
func resetMetadata(m *metadata) []string {
	var changes []string
	add := func(field, from, to string) {
		changes = append(changes, field+"\t"+from+" → "+to)
	}
	if m.Status != statusNew {
		add("status", m.Status, statusNew)
	}
	if m.Iterations != 0 || m.LastRunIterations != 0 || m.FailedIterations != 0 {
		from := fmt.Sprint(m.Iterations)
		if m.FailedIterations > 0 {
			from += fmt.Sprintf(" (%d failed)", m.FailedIterations)
		}
		add("iterations", from, "0")
	}
	if m.CostUSD != 0 {
		add("cost", formatCost(m.CostUSD), formatCost(0))
	}
	if m.LastRun != nil {
		add("last run", m.LastRun.Local().Format("2006-01-02 15:04"), "never")
	}
	if m.LastStopReason != "" || m.LastExitCode != nil {
		from := m.LastStopReason
		if m.LastExitCode != nil {
			from = strings.TrimSpace(fmt.Sprintf("%s (exit %d)", from, *m.LastExitCode))
		}
		add("last stop", from, "none")
	}
	if len(m.Conditions) > 0 {
		add("conditions", fmt.Sprintf("progress of %d", len(m.Conditions)), "none")
	}
	if v := m.Verification; v != nil && v.LastVerdict != "" {
		add("verification", v.LastVerdict, "none")
	}
	m.Verification = nil
	m.Status, m.LastRun, m.PID = statusNew, nil, 0
	m.workTotals, m.LastRunIterations = workTotals{}, 0
	m.LastStopReason, m.LastExitCode, m.Conditions = "", nil, nil
	return changes
}

func runReset(env *cliEnv, args []string) error {
	fs := newFlagSet("reset")
	all := fs.Bool("all", false, "")
	pos, err := parseFlags(fs, args, 1)
	if err != nil {
		return err
	}
	w, release, err := claimFromArgs(env, pos, "reset")
	if err != nil {
		return err
	}
	defer release()
	label := wsLabel(w, pos)
	// Every write and removal checked before the first (the history's
	// removal): never half a reset, the history gone and the metadata
	// still counting it.
	if err := checkWritable(w.metadataPath()); err != nil {
		return fmt.Errorf("%w; nothing was reset", err)
	}
	gone := []string{w.historyPath(), w.answerPath()}
	if *all {
		gone = append(gone, w.statusPath(), w.todoPath())
	}
	if err := checkRemovableFiles(gone...); err != nil {
		return err
	}
	changes := resetMetadata(w.meta)
	records := 0
	if skipped, err := eachRecord(w.historyPath(), func(*iterationRecord) { records++ }); err == nil && records+skipped > 0 {
		changes = append(changes, fmt.Sprintf("history\t%s → none", plural(records, "record")))
	}
	if err := os.Remove(w.historyPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", w.historyPath(), unwrapPathError(err))
	}
	if c, err := forgetQuestions(w); err != nil {
		return err
	} else if c != "" {
		changes = append(changes, c)
	}
	if len(changes) > 0 {
		if err := w.save(); err != nil {
			return fmt.Errorf("writing %s: %w", w.metadataPath(), unwrapPathError(err))
		}
	}
	var removed []string
	if *all {
		for _, p := range []string{w.statusPath(), w.todoPath()} {
			if p == "" {
				continue
			}
			err := os.Remove(p)
			switch {
			case err == nil:
				removed = append(removed, filepath.Base(p))
			case !errors.Is(err, os.ErrNotExist):
				return fmt.Errorf("removing %s: %w", p, unwrapPathError(err))
			}
		}
	}
	out := env.stdout
	if len(changes) == 0 {
		fmt.Fprintf(out, "Workspace %s has no runs to forget\n", label)
	} else {
		fmt.Fprintf(out, "Reset workspace %s:\n", label)
		for _, c := range changes {
			field, change, _ := strings.Cut(c, "\t")
			fmt.Fprintf(out, "  %-11s %s\n", field, change)
		}
	}
	if len(removed) > 0 {
		fmt.Fprintf(out, "Removed %s\n", strings.Join(removed, ", "))
	}
	if !w.Ralph {
		fmt.Fprintf(out, "Kept %s, the logs and the agent's files\n", instructionsFile)
	}
	return nil
}

// checkRemovableFiles refuses, before reset removes any, a path among paths
// that os.Remove could not remove: a directory with files in it (an
// agent's mkdir .answer.json/x) where reset removes a file.
func checkRemovableFiles(paths ...string) error {
	for _, p := range paths {
		if p == "" {
			continue
		}
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			if entries, _ := readDir(p); len(entries) > 0 {
				return withHint(fmt.Errorf("%s is a directory with files in it, where reset removes a file; nothing was reset", p), "look at it, then remove it and reset again: rm -r %s", shellQuote(p))
			}
		}
	}
	return nil
}
