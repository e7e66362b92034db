package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeRegistry registers n live runs in a state directory under dir, all
// of them this process (its pid and start time), each with a state file
// the size of a real one (a dozen lines, an activity, tasks), and returns
// the state directory, for XDG_STATE_HOME.
func fakeRegistry(t testing.TB, dir string, n int) string {
	t.Helper()
	start, ok := processStart(os.Getpid())
	if !ok {
		t.Skip("no process start time here")
	}
	state := filepath.Join(dir, "state")
	runs := filepath.Join(state, "claude-iterate", "runs")
	if err := os.MkdirAll(runs, 0o700); err != nil {
		t.Fatal(err)
	}
	started := time.Now().Add(-time.Hour).UTC()
	for i := range n {
		ws := filepath.Join(dir, "project", "claude-iterate", "workspaces", fmt.Sprintf("task%02d", i))
		if err := os.MkdirAll(ws, 0o755); err != nil {
			t.Fatal(err)
		}
		st := runState{PID: os.Getpid(), Workspace: filepath.Base(ws), Mode: modeLoop, Started: started, Phase: phaseRunning,
			Iteration: 12, Max: 50, Totals: workTotals{Iterations: 11, CostUSD: 1.23, DurationMS: 600000},
			IterStarted: started.Add(55 * time.Minute), Tasks: &progressRep{Completed: 11, Total: 30},
			Activity: activity{Kind: actTool, Tool: "Bash", Arg: "go test ./...", Since: started.Add(59 * time.Minute)}, Updated: started.Add(59 * time.Minute)}
		for j := range maxStateLines {
			st.Lines = append(st.Lines, stateLine{Seq: j + 1, Text: "✓ Iteration " + strings.Repeat("x", 40)})
		}
		data, _ := json.MarshalIndent(&st, "", "  ")
		statePath := filepath.Join(ws, runStateFile)
		if err := os.WriteFile(statePath, data, 0o600); err != nil {
			t.Fatal(err)
		}
		e := runEntry{ID: fmt.Sprintf("%d-%d", os.Getpid(), i+1), PID: os.Getpid(), Start: start, Project: filepath.Join(dir, "project"),
			Workspace: st.Workspace, Dir: ws, StateDir: ws, Agent: "claude", State: statePath, Started: started}
		data, _ = json.MarshalIndent(&e, "", "  ")
		if err := os.WriteFile(filepath.Join(runs, e.ID+".json"), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return state
}

// BenchmarkPS is 'claude-iterate ps' with 50 runs registered (the limit:
// under 50 ms, start-up included; scripts/bench.sh measures the binary).
func BenchmarkPS(b *testing.B) {
	b.Setenv("XDG_STATE_HOME", fakeRegistry(b, b.TempDir(), 50))
	for b.Loop() {
		if st := run([]string{"ps"}, nil, io.Discard, io.Discard); st.code != exitOK {
			b.Fatalf("ps: exit %d", st.code)
		}
	}
}

// TestPSManyRuns: ps shows every one of 50 registered runs, and keeps
// them (they are alive).
func TestPSManyRuns(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", fakeRegistry(t, t.TempDir(), 50))
	runs, err := liveRuns("")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 50 {
		t.Fatalf("%d runs; want 50", len(runs))
	}
	v := runs[0]
	if v.State != runStateRunning || v.Iteration != 12 || v.MaxIterations != 50 || v.Progress == nil || v.Progress.Total != 30 || !strings.Contains(v.Now, "Bash: go test") {
		t.Errorf("first run: %+v", v)
	}
	var b strings.Builder
	if err := writePS(&b, runs, false); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "\n"); n != 51 {
		t.Errorf("ps printed %d lines; want 51", n)
	}
}
