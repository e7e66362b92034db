package main

// This file handles a workspace deleted under its run (an agent that ran
// rm -rf on it). The rules are: the run notices it at the next iteration
// boundary and ends with an error naming the workspace; and no write of the
// tool re-creates the directory of a workspace that is gone, so that what
// is left is no workspace at all, never a half-workspace holding only the
// tool's state files.

import (
	"errors"
	"fmt"
	"os"
)

// workspaceGone returns the ending of a run whose workspace was deleted, or
// nil while it is there.
func workspaceGone(w *workspace) *ending {
	if err := workspacePresent(w); err != nil {
		return &ending{code: exitError, reason: "error: " + err.Error(), status: statusFailed, gone: true,
			hint: "the agent (or something else) removed it during the run; nothing was re-created"}
	}
	return nil
}

// workspacePresent returns an error naming w (a *goneError) if its
// directory, or its state directory, is gone.
func workspacePresent(w *workspace) error {
	dirs := []string{w.Dir}
	if w.StateDir != w.Dir { // ralph mode; one directory for a workspace made by init
		dirs = append(dirs, w.StateDir)
	}
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return &goneError{name: w.Name, dir: dir}
		}
	}
	return nil
}

// goneError says a run's workspace was deleted under it.
type goneError struct{ name, dir string }

func (e *goneError) Error() string {
	return fmt.Sprintf("workspace %s was deleted during the run (%s is gone)", e.name, e.dir)
}

// isGone reports whether err is a save that failed because the workspace
// was deleted during the run.
func isGone(err error) bool {
	var g *goneError
	return errors.As(err, &g)
}

// ensureStateDir makes w's state directory before a save, unless the
// workspace itself is gone, or a run holds it (w.held) and it is gone:
// then the save fails instead of leaving a half-workspace.
func ensureStateDir(w *workspace) error {
	if w.held {
		return workspacePresent(w)
	}
	if fi, err := os.Stat(w.Dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("workspace %s is gone (%s)", w.Name, w.Dir)
	}
	return makeDirAll(w.StateDir, 0o755)
}
