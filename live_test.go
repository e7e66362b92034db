package main

import (
	"testing"
	"time"
)

// TestSuspendedTimeLeftOut: the activity's timers and the iteration's
// time leave time suspended out, as Elapsed does.
func TestSuspendedTimeLeftOut(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	l := &live{}
	l.st.IterStarted = t0
	l.st.Phase = phaseRunning
	l.st.Activity = activity{Kind: actTool, Tool: "Bash", Arg: "make", Since: t0.Add(10 * time.Second)}
	l.act.tools = []runningTool{{id: "a", name: "Bash", arg: "make", since: t0.Add(10 * time.Second)}}
	l.act.last = l.st.Activity
	// 50 s later, of which 30 s suspended.
	l.setSuspended(30 * time.Second)
	now := t0.Add(50 * time.Second)
	if got, want := l.st.Activity.text(now), "Bash: make · 10s"; got != want {
		t.Errorf("activity after a suspension = %q; want %q", got, want)
	}
	if got, want := l.iterationElapsed(now), 20*time.Second; got != want {
		t.Errorf("iterationElapsed = %v; want %v", got, want)
	}
	if got, want := l.act.tools[0].since, t0.Add(40*time.Second); !got.Equal(want) {
		t.Errorf("running tool since %v; want %v", got, want)
	}
	// The same total again changes nothing.
	l.setSuspended(30 * time.Second)
	if got, want := l.st.Activity.text(now), "Bash: make · 10s"; got != want {
		t.Errorf("activity after no new suspension = %q; want %q", got, want)
	}
	// An iteration that starts after the suspension counts from its start.
	l.iterSuspendedMS = l.st.SuspendedMS
	l.st.IterStarted = now
	if got := l.iterationElapsed(now.Add(5 * time.Second)); got != 5*time.Second {
		t.Errorf("iterationElapsed of a new iteration = %v; want 5s", got)
	}
}
