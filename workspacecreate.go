package main

// This file creates a workspace's directory and task files, for init,
// setup and a dry run's demo workspace, and undoes what it made when a
// step fails half way: only the files it wrote and the directories it
// created.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// createWorkspaceDir makes the workspace directory, refusing an existing
// workspace; arg is the workspace as the user gave it, for the hint. It
// returns the directories it created, outermost first.
func createWorkspaceDir(w *workspace, arg string) ([]string, error) {
	if _, err := os.Lstat(w.metadataPath()); errors.Is(err, os.ErrNotExist) && hasTaskFiles(w) {
		return nil, existingTask(w, arg)
	}
	for _, f := range []string{metadataFile, instructionsFile, todoFile} {
		if _, err := os.Lstat(filepath.Join(w.Dir, f)); err == nil {
			return nil, withHint(fmt.Errorf("workspace %s already exists (%s has %s)", w.Name, w.Dir, f), "choose another name, or run it: claude-iterate run %s", shellQuote(arg))
		}
	}
	var created []string
	// Record which ancestors are missing so a failure removes only those.
	for d := w.Dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		created = append([]string{d}, created...)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := makeDirAll(w.Dir, 0o755); err != nil {
		removeCreated(w, created)
		return nil, fmt.Errorf("creating workspace: %w", err)
	}
	if fi, err := os.Stat(w.Dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("creating workspace: %s is not a directory", w.Dir)
	}
	return created, nil
}

func writeWorkspaceFiles(w *workspace, instructions string) error {
	// INSTRUCTIONS.md is private like the log, which holds the same prompt.
	if err := writeNewFile(w.instructionsPath(), instructions, 0o600); err != nil {
		return err
	}
	if err := writeNewFile(filepath.Join(w.Dir, todoFile), starterTODO, 0o644); err != nil {
		return err
	}
	return w.save()
}

// writeNewFile creates path with permissions perm, failing if it exists.
func writeNewFile(path, content string, perm os.FileMode) error {
	f, err := createFile(path, perm)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// removeCreated undoes a failed init: the files it wrote and the directories
// it created.
func removeCreated(w *workspace, created []string) {
	for _, f := range []string{instructionsFile, todoFile, metadataFile, settingsFile} {
		os.Remove(filepath.Join(w.Dir, f))
	}
	for i := len(created) - 1; i >= 0; i-- {
		os.Remove(created[i])
	}
}
