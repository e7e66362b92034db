package main

import (
	"testing"
	"time"
)

// TestLimitedWhy pins what a fallback says of the limit it leaves: the
// reset the agent gave, and when the agent is tried again only when that
// is another time, each named; no reset given is said so.
func TestLimitedWhy(t *testing.T) {
	now := time.Now()
	reset := now.Add(100 * time.Second).Truncate(time.Second)
	until := reset.Add(time.Minute)
	for _, c := range []struct {
		reset, until time.Time
		want         string
	}{
		{reset, until, "claude hit its usage limit (resets at " + formatClock(reset, now) + "; claude is tried again from " + formatClock(until, now) + ")"},
		{reset, reset, "claude hit its usage limit (resets at " + formatClock(reset, now) + ")"},
		{time.Time{}, until, "claude hit its usage limit (no reset time given; claude is tried again from " + formatClock(until, now) + ")"},
	} {
		if got := limitedWhy("claude", c.reset, c.until, now); got != c.want {
			t.Errorf("limitedWhy(%v, %v) = %q, want %q", c.reset, c.until, got, c.want)
		}
	}
}
