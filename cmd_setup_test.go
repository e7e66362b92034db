package main

import (
	"strings"
	"testing"
	"time"
)

func TestClassifyTask(t *testing.T) {
	tests := []struct {
		data string
		want taskState
	}{
		{"", taskEmpty},
		{" \n\t\n", taskEmpty},
		{starterInstructions, taskTemplate},
		{"\n" + strings.TrimSpace(starterInstructions) + "\n\n", taskTemplate},
		{starterInstructions + "Also rename foo.\n", taskWritten},
		{"# Task\n\nRename foo to bar.\n", taskWritten},
	}
	for _, tt := range tests {
		if got := classifyTask([]byte(tt.data)); got != tt.want {
			t.Errorf("classifyTask(%q) = %d; want %d", tt.data, got, tt.want)
		}
	}
}

func TestResetMetadata(t *testing.T) {
	created := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	last := created.Add(time.Hour)
	code := 1
	m := &metadata{
		Name: "demo", Mode: modeIterative, Created: created, LastRun: &last, Status: statusFailed,
		workTotals: workTotals{Iterations: 7, FailedIterations: 2, CostUSD: 1.25}, LastRunIterations: 3,
		LastStopReason: "stopped: 3 consecutive failed iterations", LastExitCode: &code, PID: 42,
		Conditions: []condReport{{Group: "failure", Type: "failure_streak"}},
		Config:     map[string]any{"defaultDelay": 5.0},
	}
	changes := resetMetadata(m)
	want := &metadata{Name: "demo", Mode: modeIterative, Created: created, Status: statusNew, Config: map[string]any{"defaultDelay": 5.0}}
	if m.Name != want.Name || m.Mode != want.Mode || !m.Created.Equal(created) || m.Status != statusNew ||
		m.LastRun != nil || m.Iterations != 0 || m.LastRunIterations != 0 || m.FailedIterations != 0 ||
		m.CostUSD != 0 || m.LastStopReason != "" || m.LastExitCode != nil || m.PID != 0 ||
		m.Conditions != nil || m.Config["defaultDelay"] != 5.0 {
		t.Errorf("resetMetadata left %+v; want %+v", m, want)
	}
	got := strings.Join(changes, "\n")
	for _, w := range []string{"status\tfailed → new", "iterations\t7 (2 failed) → 0", "cost\t$1.2500 → $0.0000", "last run\t", "last stop\tstopped: 3 consecutive failed iterations (exit 1) → none", "conditions\tprogress of 1 → none"} {
		if !strings.Contains(got, w) {
			t.Errorf("resetMetadata changes = %q; want a line with %q", got, w)
		}
	}
	if again := resetMetadata(m); len(again) != 0 {
		t.Errorf("resetMetadata of a fresh workspace = %q; want no change", again)
	}
}
