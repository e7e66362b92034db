package main

// This file handles a workspace deleted under its run (an agent that ran
// rm -rf on it), or replaced by another directory (mv task task.old; cp -a
// task.old task). The rules are: the run notices it at the next iteration
// boundary and ends with an error naming the workspace; no write of the
// tool re-creates the directory of a workspace that is gone, so that what
// is left is no workspace at all, never a half-workspace holding only the
// tool's state files; and none writes into a directory put in the place of
// the one the run locked (its identity, lock.go), which is another
// workspace, maybe another run's: no metadata, no run state, no stop
// request or answer read or removed, no log reserve removed. (The history
// and the log are open files: they stay with the directory the run started
// in, wherever it went.)

import (
	"errors"
	"fmt"
	"os"
)

// workspaceGone returns the ending of a run whose workspace was deleted, or
// nil while it is there.
func workspaceGone(w *workspace) *ending {
	if err := workspacePresent(w); err != nil {
		hint := "the agent (or something else) removed it during the run; nothing was re-created"
		if err.(*goneError).replaced {
			hint = "it was moved away and another directory put in its place (a copy, a restore) during the run; nothing of this run was written into the new directory"
		}
		return &ending{code: exitError, reason: "error: " + err.Error(), status: statusFailed, gone: true, hint: hint}
	}
	return nil
}

// workspacePresent returns an error naming w (a *goneError) if its
// directory, or its state directory, is gone, or if the state directory is
// no longer the one the run locked (w.stateID).
func workspacePresent(w *workspace) error {
	dirs := []string{w.Dir}
	if w.StateDir != w.Dir { // ralph mode; one directory for a workspace made by init
		dirs = append(dirs, w.StateDir)
	}
	for _, dir := range dirs {
		fi, err := os.Stat(dir)
		if err != nil || !fi.IsDir() {
			return &goneError{name: w.Name, dir: dir}
		}
		if dir == w.StateDir && w.stateID != "" && dirIdentity(fi) != w.stateID {
			return &goneError{name: w.Name, dir: dir, replaced: true}
		}
	}
	return nil
}

// goneError says a run's workspace was deleted, or replaced, under it.
type goneError struct {
	name, dir string
	replaced  bool
}

func (e *goneError) Error() string {
	if e.replaced {
		return fmt.Sprintf("workspace %s was replaced during the run: %s is another directory now (a copy?)", e.name, e.dir)
	}
	return fmt.Sprintf("workspace %s was deleted during the run (%s is gone)", e.name, e.dir)
}

// isGone reports whether err is a save that failed because the workspace
// was deleted, or replaced, during the run.
func isGone(err error) bool {
	var g *goneError
	return errors.As(err, &g)
}

// ensureStateDir makes w's state directory before a save, unless the
// workspace itself is gone, or a run holds it (w.held, or its lock: the
// directory's identity) and it is gone or replaced: then the save fails
// instead of leaving a half-workspace, or writing into another one.
func ensureStateDir(w *workspace) error {
	if w.held || w.stateID != "" {
		return workspacePresent(w)
	}
	if fi, err := os.Stat(w.Dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("workspace %s is gone (%s)", w.Name, w.Dir)
	}
	return makeDirAll(w.StateDir, 0o755)
}
