package main

// This file reads a workspace's task, INSTRUCTIONS.md, as setup, edit and
// run judge it: missing, empty, still init's template, or written.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
)

// taskState is what a workspace's INSTRUCTIONS.md holds.
type taskState int

// classifyTask says what the content of an existing INSTRUCTIONS.md holds.
func classifyTask(data []byte) taskState {
	trimmed := bytes.TrimSpace(data)
	switch {
	case len(trimmed) == 0:
		return taskEmpty
	case string(trimmed) == strings.TrimSpace(starterInstructions):
		return taskTemplate
	}
	return taskWritten
}

// readTask reads a workspace's INSTRUCTIONS.md and says what it holds.
func readTask(w *workspace) (taskState, []byte, error) {
	data, err := readRegularFile(w.instructionsPath(), taskFileCap)
	if errors.Is(err, os.ErrNotExist) {
		return taskMissing, nil, nil
	}
	if err != nil {
		return taskMissing, nil, fmt.Errorf("reading %s: %w", w.instructionsPath(), unwrapPathError(err))
	}
	return classifyTask(data), data, nil
}

// describeTask says what is wrong with INSTRUCTIONS.md at shown in state.
func describeTask(shown string, state taskState) string {
	switch state {
	case taskMissing:
		return shown + " does not exist"
	case taskEmpty:
		return shown + " is empty"
	case taskTemplate:
		return shown + " still holds the template"
	}
	return shown + " holds a task"
}

// readOptional reads a file that may not exist (nil then).
func readOptional(path string) []byte {
	if path == "" {
		return nil
	}
	data, _ := readRegularFile(path, agentFileCap)
	return data
}

// leftEmpty reports whether a workspace setup created holds nothing but what
// setup wrote: .metadata.json, .workspace.json, and at most an
// INSTRUCTIONS.md without a task.
func leftEmpty(w *workspace) bool {
	entries, err := readDir(w.Dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.Name() != metadataFile && e.Name() != settingsFile && e.Name() != instructionsFile {
			return false
		}
	}
	return true
}
