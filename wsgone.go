package main

// This file handles a workspace deleted under its run (an agent that ran
// rm -rf on it). The rules are: the run notices it at the next iteration
// boundary and ends with an error naming the workspace; and no write of the
// tool re-creates the directory of a workspace that is gone, so that what
// is left is no workspace at all, never a half-workspace holding only the
// tool's state files.

import (
	"fmt"
	"os"
)

// workspaceGone returns the ending of a run whose workspace was deleted, or
// nil while it is there.
func workspaceGone(w *workspace) *ending {
	if err := workspacePresent(w); err != nil {
		return &ending{code: exitError, reason: "error: " + err.Error(), status: statusFailed,
			hint: "the agent (or something else) removed it during the run; nothing was re-created"}
	}
	return nil
}

// workspacePresent returns an error naming w if its directory, or its state
// directory, is gone.
func workspacePresent(w *workspace) error {
	for _, dir := range []string{w.Dir, w.StateDir} {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return fmt.Errorf("workspace %s was deleted during the run (%s is gone)", w.Name, dir)
		}
	}
	return nil
}

// ensureStateDir makes w's state directory before a save, unless the
// workspace itself is gone: then the save fails instead of leaving a
// half-workspace.
func ensureStateDir(w *workspace) error {
	if fi, err := os.Stat(w.Dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("workspace %s is gone (%s)", w.Name, w.Dir)
	}
	return os.MkdirAll(w.StateDir, 0o755)
}
