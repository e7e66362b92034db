package main

// This file reads the agent's progress. The rules are: .status.json is the
// source of truth ({"complete":bool, "progress":{"completed":n,"total":n},
// "worked":bool, "summary":str, "lastUpdated":RFC3339, "question":str}); the task is complete
// only when "complete" is exactly true. The agent writes the file, so unknown
// fields are allowed and a missing or invalid file is never fatal: the
// progress then comes from TODO.md's "- [ ]" and "- [x]" lines, and the
// caller warns once.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
)

// taskStatus is what the agent reported.
type taskStatus struct {
	Complete    bool
	HasProgress bool
	Completed   int
	Total       int
	// Worked is nil when the agent did not say.
	Worked      *bool
	Summary     string
	LastUpdated string
	// Question is the agent's question to the user (question.go), "" if none.
	Question string
	// Source is the file the status came from: statusFile, todoFile or "".
	Source string
}

// statusJSON is the wire form of .status.json.
type statusJSON struct {
	Complete *bool `json:"complete"`
	Progress *struct {
		Completed *int `json:"completed"`
		Total     *int `json:"total"`
	} `json:"progress"`
	Worked      *bool  `json:"worked"`
	Summary     string `json:"summary"`
	LastUpdated string `json:"lastUpdated"`
	Question    string `json:"question"`
}

// parseStatusJSON parses the content of .status.json.
func parseStatusJSON(data []byte) (taskStatus, error) {
	var s statusJSON
	if len(bytes.TrimSpace(data)) == 0 {
		return taskStatus{}, errors.New("empty file")
	}
	if err := decodeJSONFile("", data, &s); err != nil {
		return taskStatus{}, err
	}
	ts := taskStatus{Worked: s.Worked, Summary: s.Summary, LastUpdated: s.LastUpdated, Question: s.Question, Source: statusFile}
	if s.Complete != nil {
		ts.Complete = *s.Complete
	}
	if p := s.Progress; p != nil && p.Completed != nil && p.Total != nil {
		if *p.Completed < 0 || *p.Total < 0 {
			return taskStatus{}, errors.New("progress: negative count")
		}
		// More done than listed (4 of 3): the list grew as the agent
		// worked. The done items are the total, so that no view shows
		// "4/3" or "-1 remaining".
		ts.HasProgress, ts.Completed, ts.Total = true, *p.Completed, max(*p.Total, *p.Completed)
	}
	return ts, nil
}

// parseTODO counts a markdown checklist's items.
func parseTODO(data []byte) (completed, total int) {
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		line = bytes.TrimSpace(line)
		for _, bullet := range []string{"- ", "* ", "+ "} {
			rest, ok := bytes.CutPrefix(line, []byte(bullet))
			if !ok {
				continue
			}
			switch {
			case bytes.HasPrefix(rest, []byte("[ ]")):
				total++
			case bytes.HasPrefix(rest, []byte("[x]")), bytes.HasPrefix(rest, []byte("[X]")):
				total++
				completed++
			}
		}
	}
	return completed, total
}

// readTaskStatus reads the workspace's progress. warn, if not nil, says why
// .status.json was not used.
func readTaskStatus(w *workspace) (ts taskStatus, warn error) {
	ts, _, warn = readTaskStatusCopy(w)
	return ts, warn
}

// readTaskStatusCopy is readTaskStatus that also returns the copy of
// .status.json it read, for the before-and-after look (evidence.go).
func readTaskStatusCopy(w *workspace) (ts taskStatus, c statusCopy, warn error) {
	c, err := readStatusCopy(w.statusPath())
	if err == nil {
		if c.parsed {
			return c.status, c, nil
		}
		warn = fmt.Errorf("%s is invalid (%v)", w.statusPath(), c.err)
	} else if !errors.Is(err, os.ErrNotExist) {
		warn = fmt.Errorf("reading %s: %v", w.statusPath(), unwrapPathError(err))
	} else {
		warn = fmt.Errorf("%s does not exist", w.statusPath())
	}
	if p := w.todoPath(); p != "" {
		data, err := readRegularFile(p, agentFileCap)
		if err == nil {
			done, t := parseTODO(data)
			return taskStatus{HasProgress: t > 0, Completed: done, Total: t, Source: todoFile}, c, warn
		}
		if !errors.Is(err, os.ErrNotExist) {
			warn = fmt.Errorf("%v, and reading %s: %v", warn, p, unwrapPathError(err))
		}
	}
	return taskStatus{}, c, warn
}

// progressText shows progress as "n/total", or "-".
func (ts taskStatus) progressText() string {
	if !ts.HasProgress {
		if ts.Complete {
			return "complete"
		}
		return "-"
	}
	return fmt.Sprintf("%d/%d", ts.Completed, ts.Total)
}

// progressRep is the agent's progress as the views show it: items done
// of items listed (status --json, the state file's tasks).
type progressRep struct {
	Completed int `json:"completed"`
	Total     int `json:"total"`
}
