package main

// This file implements list --json: the workspaces as a JSON array, for
// scripts, in the shape of status --json and ps --json (camelCase keys,
// times in RFC 3339, progress {"completed", "total"} or null). Only JSON
// goes to stdout; a workspace that cannot be read is said on stderr, and
// the command fails, after the array of the others.

import (
	"encoding/json"
	"time"
)

// listItem is one workspace of list --json.
type listItem struct {
	Name       string       `json:"name"`
	Path       string       `json:"path"`
	Mode       string       `json:"mode"`
	Agent      string       `json:"agent,omitempty"` // the last run's agent
	Status     string       `json:"status"`
	Running    bool         `json:"running"`
	PID        int          `json:"pid,omitempty"`
	Iterations int          `json:"iterations"`
	Progress   *progressRep `json:"progress"`
	// Claim is what .status.json claims when it is not progress
	// ("claimed", "complete"...), as list's PROGRESS column says it.
	Claim         string     `json:"claim,omitempty"`
	QuestionWaits bool       `json:"questionWaits"`
	Created       time.Time  `json:"created"`
	LastRun       *time.Time `json:"lastRun"`
	Git           *gitView   `json:"git,omitempty"`
	Leftovers     []int      `json:"leftovers,omitempty"`
	// Archived and Archive: an archived workspace (--archived), when and
	// where.
	Archived *time.Time `json:"archived,omitempty"`
	Archive  string     `json:"archive,omitempty"`
}

// newListItem is w's item; the agent's text (the status word) sanitized.
func newListItem(w *workspace) listItem {
	ts, _ := readTaskStatus(w)
	m := w.meta
	it := listItem{Name: w.Name, Path: w.Dir, Mode: m.Mode, Agent: m.LastAgent, Status: sanitizeString(w.displayStatus()),
		PID: w.runningPID(), Iterations: m.Iterations, QuestionWaits: w.questionWaits(), Created: m.Created, LastRun: m.LastRun}
	it.Running = it.PID != 0
	if ts.HasProgress {
		it.Progress = &progressRep{ts.Completed, ts.Total}
	} else if c := progressCell(w, ts); c != ts.progressText() {
		it.Claim = c
	}
	return it
}

// listJSON prints the workspaces (and, with archived, the archived ones
// after them) as a JSON array.
func listJSON(env *cliEnv, archived bool) error {
	spaces, _, broken, err := readWorkspaces(env)
	if err != nil {
		return err
	}
	items := make([]listItem, 0, len(spaces))
	for _, w := range spaces {
		it := newListItem(w)
		it.Git = viewGit(env, w)
		if it.Status == statusKilled {
			it.Leftovers = leftPIDs(w)
		}
		items = append(items, it)
	}
	if archived {
		arch, abroken, err := readArchives(env)
		if err != nil {
			return err
		}
		defer closeArchives(arch)
		for _, a := range arch {
			it := newListItem(a.ws)
			it.Name, it.Path, it.Running, it.PID, it.QuestionWaits = sanitizeString(a.ws.Name), a.path, false, 0, false
			it.Archived, it.Archive = &a.at, a.path
			items = append(items, it)
		}
		broken = append(broken, abroken...)
	}
	data, err := json.MarshalIndent(items, "", "  ")
	if err != nil {
		return err
	}
	if _, err := env.stdout.Write(append(data, '\n')); err != nil {
		return writeError(err)
	}
	return reportBroken(env, broken)
}
