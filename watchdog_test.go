package main

import (
	"testing"
	"time"
)

// TestWatchdogAfterClosedOutput: the after-result watchdog starts at the
// agent's result, or, without one, when its output closed; it fires once
// its grace has passed since then, and says which of the two it was.
func TestWatchdogAfterClosedOutput(t *testing.T) {
	s := &supervisor{resultWatchdog: time.Second}
	now := time.Now()
	at := func(d time.Duration) int64 { return now.Add(-d).UnixNano() }
	for _, tc := range []struct {
		name             string
		result, closed   int64
		want             string
		wantDeadlineFrom int64
	}{
		{name: "neither"},
		{name: "closed just now", closed: at(500 * time.Millisecond), wantDeadlineFrom: at(500 * time.Millisecond)},
		{name: "closed long ago", closed: at(2 * time.Second), want: "agent closed its output without a result and was still running 1s later", wantDeadlineFrom: at(2 * time.Second)},
		{name: "result long ago", result: at(2 * time.Second), closed: at(500 * time.Millisecond), want: "agent still running 1s after its result", wantDeadlineFrom: at(2 * time.Second)},
		{name: "result just now", result: at(500 * time.Millisecond), closed: at(2 * time.Second), wantDeadlineFrom: at(500 * time.Millisecond)},
	} {
		c := &child{isAgent: true, started: now.Add(-time.Hour)}
		c.lastOutput.Store(now.UnixNano())
		c.resultAt.Store(tc.result)
		c.closedAt.Store(tc.closed)
		if got := s.hangCheck(c, now, 0); got != tc.want {
			t.Errorf("%s: hangCheck = %q, want %q", tc.name, got, tc.want)
		}
		want := time.Time{}
		if tc.wantDeadlineFrom != 0 {
			want = time.Unix(0, tc.wantDeadlineFrom).Add(time.Second)
		}
		if got := s.hangDeadline(c, 0); !got.Equal(want) {
			t.Errorf("%s: hangDeadline = %v, want %v", tc.name, got, want)
		}
	}
}

// TestResumedAfterShiftsWatchdog: time suspended is not spent from the
// watchdog, whether a result or the output's end started it, nor from the
// idle clock; a watchdog not started stays so.
func TestResumedAfterShiftsWatchdog(t *testing.T) {
	now := time.Now()
	c := &child{}
	c.closedAt.Store(now.Add(-2 * time.Second).UnixNano())
	c.resumedAfter(5*time.Second, now)
	if got, want := c.closedAt.Load(), now.Add(3*time.Second).UnixNano(); got != want {
		t.Errorf("closedAt moved to %v, want %v", time.Unix(0, got), time.Unix(0, want))
	}
	if c.resultAt.Load() != 0 {
		t.Errorf("resultAt set by a resume: %d", c.resultAt.Load())
	}
	if c.lastOutput.Load() != now.UnixNano() {
		t.Errorf("lastOutput not moved to the resume")
	}
	c.resultAt.Store(now.UnixNano())
	c.resumedAfter(time.Second, now)
	if got, want := c.resultAt.Load(), now.Add(time.Second).UnixNano(); got != want {
		t.Errorf("resultAt moved to %v, want %v", time.Unix(0, got), time.Unix(0, want))
	}
	s := &supervisor{resultWatchdog: time.Second}
	if got := s.hangCheck(c, now.Add(1500*time.Millisecond), 0); got != "" {
		t.Errorf("watchdog fired %q within its grace after a resume", got)
	}
}
