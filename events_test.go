package main

import (
	"strings"
	"testing"
	"time"
)

// TestNotificationFor: each event's notification, made from the event alone.
func TestNotificationFor(t *testing.T) {
	rec := &iterationRecord{Iteration: 3, DurationMS: 90500, End: endRefused, Reason: "2 tool calls refused: Bash \"x\"", CostUSD: 0.25,
		Progress: &progressRep{Completed: 2, Total: 5}}
	tests := []struct {
		ev                runEvent
		title, prio, body string
	}{
		{runEvent{Event: eventStart, Workspace: "w", Mode: modeLoop, MaxIterations: 1}, "w: run started", "3", "Running w (loop mode, up to 1 iteration)"},
		{runEvent{Event: eventIteration, Workspace: "w", MaxIterations: 9, Record: rec}, "w: iteration 3/9 failed", "3",
			"Iteration 3/9 failed in 1m31s, $0.2500 · 2/5 items (3 remaining)\n2 tool calls refused: Bash \"x\""},
		{runEvent{Event: eventIteration, Workspace: "w", MaxIterations: 9, Record: &iterationRecord{Iteration: 1, DurationMS: 1500, End: endDone, OK: true, CostUSD: 0.01}},
			"w: iteration 1/9 done", "2", "Iteration 1/9 done in 1.5s, $0.0100"},
		{runEvent{Event: eventMilestone, Workspace: "w", Totals: &workTotals{Iterations: 10, CostUSD: 1.234}, ElapsedMS: 5400000, Progress: &progressRep{Completed: 7, Total: 9}},
			"w: 10 iterations", "3", "10 iterations in 1h30m, $1.2340 so far · 7/9 items"},
		{runEvent{Event: eventStatus, Workspace: "w", Message: "3/3 items", Complete: true}, "w: status update", "4", "3/3 items"},
		{runEvent{Event: eventLimit, Workspace: "w", Message: "waiting"}, "w: usage limit", "4", "waiting"},
	}
	for _, tt := range tests {
		nt := notificationFor(tt.ev)
		if nt.event != tt.ev.Event || nt.title != tt.title || nt.priority != tt.prio || nt.body != tt.body {
			t.Errorf("notificationFor(%s) = %q %q %q; want %q %q %q", tt.ev.Event, nt.title, nt.priority, nt.body, tt.title, tt.prio, tt.body)
		}
	}
}

// TestSettingsTyped: the typed settings hold each key's value in its unit.
func TestSettingsTyped(t *testing.T) {
	s := resolveSettings(&configLayer{name: layerProject, values: map[string]any{
		"defaultDelay": 1.5, "notification.statusWatch.debounceMs": 250, "defaultMaxIterations": 7,
		"claude.args": []string{"--x"}, "notification.statusWatch.enabled": false,
	}})
	if s.Delay != 1500*time.Millisecond || s.StatusWatch.Debounce != 250*time.Millisecond || s.MaxIterations != 7 ||
		strings.Join(s.ClaudeArgs, " ") != "--x" || s.StatusWatch.Enabled || !s.StatusWatch.OnlyMeaningful || s.ClaudeCommand != "claude" {
		t.Errorf("resolveSettings = %+v", s)
	}
	if s.isDefault("defaultDelay") || !s.isDefault("outputLevel") {
		t.Errorf("isDefault: defaultDelay %v, outputLevel %v", s.isDefault("defaultDelay"), s.isDefault("outputLevel"))
	}
	// Every key of the table has its typed field.
	for _, k := range configKeys {
		if !s.set(k.name, k.def) {
			t.Errorf("settings.set does not know key %q", k.name)
		}
	}
}
