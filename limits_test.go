package main

import (
	"testing"
	"time"
)

func TestLimitResetFromText(t *testing.T) {
	utc := time.UTC
	now := time.Date(2026, 11, 21, 19, 0, 0, 0, utc)
	tests := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"Claude AI usage limit reached|1795292493", time.Unix(1795292493, 0), true},
		{"You've hit your session limit · resets 8:21pm (UTC)", time.Date(2026, 11, 21, 20, 21, 0, 0, utc), true},
		{"You've hit your weekly limit · resets 3am (UTC)", time.Date(2026, 11, 22, 3, 0, 0, 0, utc), true},
		{"You've hit your limit · resets 6pm (UTC)", time.Date(2026, 11, 22, 18, 0, 0, 0, utc), true},
		{"You've hit your Opus limit · resets Nov 23, 12pm (UTC)", time.Date(2026, 11, 23, 12, 0, 0, 0, utc), true},
		{"You've hit your session limit · resets 12am (UTC)", time.Date(2026, 11, 22, 0, 0, 0, 0, utc), true},
		{"You've hit your session limit · resets soon", time.Time{}, false},
		{"nothing to see", time.Time{}, false},
	}
	for _, tt := range tests {
		got, ok := limitResetFromText(tt.in, now)
		if ok != tt.ok || (ok && !got.Equal(tt.want)) {
			t.Errorf("limitResetFromText(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestUsageLimitOnlyFromResultText(t *testing.T) {
	msg := "You've hit your session limit · resets 8pm (UTC)"
	ok := "success"
	tests := []struct {
		name string
		o    iterationOutcome
		want bool
	}{
		{"error result text", iterationOutcome{result: &streamEvent{Type: "result", Subtype: ok, IsError: true, Result: &msg}}, true},
		{"synthetic assistant text", iterationOutcome{syntheticText: msg, result: &streamEvent{Subtype: ok, IsError: true}}, true},
		{"429 status", iterationOutcome{result: &streamEvent{Subtype: ok, IsError: true, APIErrorStatus: ptr(429)}}, true},
		{"rejected event", iterationOutcome{rateLimit: &rateLimitInfo{Status: "rejected", ResetsAt: 1}}, true},
		{"successful iteration whatever it said", iterationOutcome{result: &streamEvent{Subtype: ok, Result: &msg}}, false},
		{"plain failure", iterationOutcome{result: &streamEvent{Subtype: "error_max_turns", IsError: true}}, false},
	}
	for _, tt := range tests {
		if got, _ := tt.o.usageLimit(time.Now()); got != tt.want {
			t.Errorf("%s: usageLimit() = %v; want %v", tt.name, got, tt.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func FuzzLimitText(f *testing.F) {
	f.Add("You've hit your session limit · resets 8:21pm (UTC)")
	f.Add("usage limit reached|1795292493")
	f.Add("You've hit your limit · resets Feb 30, 99pm (Mars/Olympus)")
	f.Add("You've hit your limit · resets Jan 2, 3am (UTC)")
	f.Add("hit your weekly limit · resets 12am")
	now := time.Date(2026, 12, 30, 22, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		reset, ok := limitResetFromText(s, now)
		if !ok {
			return
		}
		// Only a limit message gives a reset time.
		if !isLimitText(s) {
			t.Fatalf("limitResetFromText(%q) = %v, but the text is no limit message", s, reset)
		}
		// A clock time is the next such time: not a day in the past, and
		// within a year.
		if !limitEpochRE().MatchString(s) && (reset.Before(now.Add(-25*time.Hour)) || reset.After(now.AddDate(1, 0, 2))) {
			t.Fatalf("limitResetFromText(%q) = %v: not the next such time after %v", s, reset, now)
		}
	})
}
