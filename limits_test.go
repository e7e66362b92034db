package main

import (
	"os"
	"path/filepath"
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
		// codex-cli 0.171.0's own words (testdata/fixtures/codex): a
		// typographic apostrophe, the reset to the minute, local time; on
		// another day "Nov 22nd, 2026 3:05 AM".
		{"You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at 7:45 PM.", time.Date(2026, 11, 21, 19, 45, 0, 0, utc), true},
		{"You’ve hit your usage limit. Try again at Nov 22nd, 2026 3:05 AM.", time.Date(2026, 11, 22, 3, 5, 0, 0, utc), true},
		{"You’ve hit your usage limit. Try again at Dec 1st, 2026 12:30 PM.", time.Date(2026, 12, 1, 12, 30, 0, 0, utc), true},
		// A reset shown to the minute that is the current minute is in
		// this minute, not tomorrow: the end of the minute.
		{"You’ve hit your usage limit. Try again at 7:00 PM.", time.Date(2026, 11, 21, 19, 1, 0, 0, utc), true},
		{"You've hit your session limit · resets 7pm (UTC)", time.Date(2026, 11, 21, 19, 1, 0, 0, utc), true},
		// a minute ago is tomorrow
		{"You’ve hit your usage limit. Try again at 6:59 PM.", time.Date(2026, 11, 22, 18, 59, 0, 0, utc), true},
		{"nothing to see", time.Time{}, false},
	}
	for _, tt := range tests {
		if isLimitText(tt.in) != tt.ok && tt.in != "You've hit your session limit · resets soon" {
			t.Errorf("isLimitText(%q) = %v; want %v", tt.in, !tt.ok, tt.ok)
		}
		got, ok := limitResetFromText(tt.in, now.Add(30*time.Second))
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

// TestCodexFixtureLimitReset: the real CLI's limit transcripts
// (testdata/fixtures/codex, captured in UTC) give their reset, on the
// day and on another day.
func TestCodexFixtureLimitReset(t *testing.T) {
	now := time.Date(2026, 11, 27, 7, 30, 0, 0, time.UTC)
	for name, want := range map[string]time.Time{
		"exec-usage-limit":          time.Date(2026, 11, 27, 7, 45, 0, 0, time.UTC),
		"exec-usage-limit-mid-turn": time.Date(2026, 11, 28, 6, 55, 0, 0, time.UTC), // 6:55 AM is past: tomorrow's
		"exec-usage-limit-tomorrow": time.Date(2026, 11, 28, 8, 14, 0, 0, time.UTC),
	} {
		data, err := os.ReadFile(filepath.Join("testdata/fixtures/codex", name+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		o, _ := codexOutcome(t, string(data))
		hit, reset := o.usageLimit(now)
		if !hit || !reset.Equal(want) {
			t.Errorf("%s: usage limit %v, reset %v; want the limit, reset %v", name, hit, reset, want)
		}
	}
}

// TestLimitWait pins how long a usage limit holds, for the run's wait and
// for a fallback alike: the reset plus the margin; an unknown reset,
// defaultLimitWait; a reset already past, the margin; never less than
// minLimitWait, even with a margin of 0 (a past reset once made a loop).
func TestLimitWait(t *testing.T) {
	now := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	t.Setenv(limitMarginEnv, "")
	for _, c := range []struct {
		reset time.Time
		want  time.Duration
	}{
		{time.Time{}, defaultLimitWait},
		{now.Add(-time.Hour), limitMargin},
		{now.Add(10 * time.Minute), 10*time.Minute + limitMargin},
	} {
		if got := limitWait(c.reset, now); got != c.want {
			t.Errorf("limitWait(%v) = %v, want %v", c.reset, got, c.want)
		}
	}
	t.Setenv(limitMarginEnv, "0s")
	for _, reset := range []time.Time{now.Add(-time.Hour), now, now.Add(time.Millisecond)} {
		if got := limitWait(reset, now); got != minLimitWait {
			t.Errorf("margin 0: limitWait(%v) = %v, want %v", reset, got, minLimitWait)
		}
	}
}
