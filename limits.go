package main

// This file recognises usage and rate limits. The rules are: a limit is read
// from a rate_limit_event with status "rejected" (resetsAt, epoch seconds),
// from api_error_status 429 on the result, or from the CLIs' text forms —
// claude's "usage limit reached|<epoch>" and "You've hit your … limit ·
// resets <time>", codex's "You've hit your usage limit. … try again at
// <time>" (or "in 2 hours 5 minutes") — and only in the result text or the CLI's own (synthetic) assistant error
// text, never in tool output, where a file that mentions a limit is just a
// file.

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// limitWaitWords are what a usage-limit wait until until says: the reset
// as shown, the notice, and the countdown's format (%s: the time left).
func limitWaitWords(now, reset, until time.Time) (resetText, notice, countdown string) {
	resetText = "an unknown time"
	if !reset.IsZero() {
		resetText = formatClock(reset, now)
	}
	return resetText, fmt.Sprintf("usage limit reached (resets at %s): waiting until %s, then retrying the iteration", resetText, formatClock(until, now)),
		"Usage limit: retrying in %s"
}

// limitPastDeadline is why a usage limit with reset (zero: unknown) ends
// the run at once: its wait, until the retry, would outlast the run's
// deadline (--max-duration, toDeadline from now, of duration limit), so
// waiting would only hold the lock until the deadline; "" when the retry
// comes before it.
func limitPastDeadline(reset, now time.Time, toDeadline, limit time.Duration) string {
	until := now.Add(limitWait(reset, now))
	deadline := now.Add(max(toDeadline, 0))
	if !until.After(deadline) {
		return ""
	}
	when := "it resets at " + formatClock(reset, now)
	switch {
	case reset.IsZero():
		when = "the retry would be at " + formatClock(until, now) + " (its reset time is unknown)"
	case !reset.After(now):
		when = "the retry would be at " + formatClock(until, now) + " (it reset at " + formatClock(reset, now) + ")"
	}
	return fmt.Sprintf("usage limit reached: %s, after --max-duration's deadline at %s (%s)", when, formatClock(deadline, now), shortDuration(limit))
}

// defaultLimitWait is how long to wait when a limit says no reset time.
const defaultLimitWait = 5 * time.Minute

// limitMargin is added to a reset time: the limit lifts at, not before, it.
const limitMargin = time.Minute

// limitMarginEnv overrides limitMargin (a Go duration); tests shorten it.
const limitMarginEnv = "CLAUDE_ITERATE_LIMIT_MARGIN"

// minLimitWait is the least a usage limit holds, whatever the margin: a
// reset already past (or a margin of 0) never lets a loop call the agents
// without pause.
const minLimitWait = time.Second

// limitWait is how long a usage limit with reset (zero: unknown) holds
// from now: until the reset and limitMargin (or $CLAUDE_ITERATE_LIMIT_MARGIN),
// defaultLimitWait for an unknown reset, the margin for a reset already
// past, never less than minLimitWait. The wait of a run with no agent left
// and the time a fallback keeps the limited agent aside are this one.
func limitWait(reset, now time.Time) time.Duration {
	margin := limitMargin
	if m, err := time.ParseDuration(os.Getenv(limitMarginEnv)); err == nil && m >= 0 {
		margin = m
	}
	var d time.Duration
	switch {
	case reset.IsZero():
		d = defaultLimitWait
	case reset.After(now):
		d = reset.Sub(now) + margin
	default:
		d = margin
	}
	return max(d, minLimitWait)
}

var (
	limitEpochRE = lazyRegexp(`(?i)usage limit reached\|(\d{9,12})`)
	limitHitRE   = lazyRegexp(`(?i)hit your [^·\n]*limit\s*·\s*resets\s+([^\n]+)`)
	// codex: "You’ve hit your usage limit. ... try again at 3:28 PM."
	// (codex-cli 0.171.0 writes a typographic apostrophe; its source an
	// ASCII one), "... at Nov 28th, 2026 6:55 AM." on another day, or
	// "... try again in 3 days 6 hours 57 minutes."
	codexLimitRE = lazyRegexp(`(?i)you['’]ve hit your usage limit`)
	codexAtRE    = lazyRegexp(`(?i)try again at\s+([^\n]+?)\.?\s*$`)
	codexInRE    = lazyRegexp(`(?i)try again in\s+((?:\d+\s*(?:days?|hours?|minutes?|seconds?)[\s,and]*)+)`)
	codexPartRE  = lazyRegexp(`(?i)(\d+)\s*(day|hour|minute|second)`)
	// clockRE: an optional date ("Nov 23,", codex's "Nov 28th, 2026"),
	// the time, an optional zone in parentheses.
	clockRE = lazyRegexp(`(?i)^(?:([a-z]{3})[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(?:(\d{4}),?\s+)?(?:at\s+)?)?(\d{1,2})(?::(\d{2}))?\s*(am|pm)?\s*(?:\(([^)]+)\))?`)
)

// isLimitText reports whether s is one of the CLI's limit messages.
func isLimitText(s string) bool {
	return limitEpochRE().MatchString(s) || limitHitRE().MatchString(s) || codexLimitRE().MatchString(s)
}

// limitResetFromText returns the reset time a limit message gives.
func limitResetFromText(s string, now time.Time) (time.Time, bool) {
	if m := limitEpochRE().FindStringSubmatch(s); m != nil {
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err == nil {
			return time.Unix(n, 0), true
		}
	}
	if m := limitHitRE().FindStringSubmatch(s); m != nil {
		return parseResetClock(strings.TrimSpace(m[1]), now)
	}
	if m := codexInRE().FindStringSubmatch(s); m != nil {
		var d time.Duration
		for _, p := range codexPartRE().FindAllStringSubmatch(m[1], -1) {
			n, _ := strconv.Atoi(p[1])
			unit := map[string]time.Duration{"day": 24 * time.Hour, "hour": time.Hour, "minute": time.Minute, "second": time.Second}[strings.ToLower(p[2])]
			d += time.Duration(n) * unit
		}
		if d > 0 {
			return now.Add(d), true
		}
	}
	if m := codexAtRE().FindStringSubmatch(s); m != nil {
		return parseResetClock(strings.TrimSpace(m[1]), now)
	}
	return time.Time{}, false
}

var monthAbbr = map[string]time.Month{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12}

// parseResetClock parses the CLI's reset times: "8:21pm (UTC)", "3am
// (Europe/Paris)", "Nov 22, 3pm (UTC)", "20:30". Without a date, the next such
// time after now.
func parseResetClock(s string, now time.Time) (time.Time, bool) {
	m := clockRE().FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, false
	}
	year := m[3]
	m = append(m[:3], m[4:]...) // the groups below as before the year's
	hour, _ := strconv.Atoi(m[3])
	minute := 0
	if m[4] != "" {
		minute, _ = strconv.Atoi(m[4])
	}
	switch strings.ToLower(m[5]) {
	case "am":
		if hour == 12 {
			hour = 0
		}
	case "pm":
		if hour != 12 {
			hour += 12
		}
	}
	if hour > 23 || minute > 59 {
		return time.Time{}, false
	}
	loc := now.Location()
	if m[6] != "" {
		if l, err := time.LoadLocation(strings.TrimSpace(m[6])); err == nil {
			loc = l
		}
	}
	n := now.In(loc)
	if m[1] != "" {
		mon, ok := monthAbbr[strings.ToLower(m[1])]
		day, _ := strconv.Atoi(m[2])
		if !ok || day < 1 || day > 31 {
			return time.Time{}, false
		}
		y := n.Year()
		if year != "" {
			y, _ = strconv.Atoi(year)
		}
		t := time.Date(y, mon, day, hour, minute, 0, 0, loc)
		if year == "" && t.Before(n.Add(-24*time.Hour)) { // "Jan 2" seen on Dec 30
			t = t.AddDate(1, 0, 0)
		}
		return t, true
	}
	t := time.Date(n.Year(), n.Month(), n.Day(), hour, minute, 0, 0, loc)
	switch {
	case !t.Add(time.Minute).After(n):
		t = t.AddDate(0, 0, 1)
	case !t.After(n):
		// The CLIs show the reset to the minute: one in the current
		// minute is within it, not tomorrow; its end is surely past it.
		t = t.Add(time.Minute)
	}
	return t, true
}

// failurePause is the pause after a failed iteration, instead of the delay
// when longer: it doubles with each further failure in a row, up to
// maxFailurePause, so that a transient API error or a short outage passes
// before --max-failures ends an overnight run (5 s, 10 s, 20 s, …).
const (
	failurePause    = 5 * time.Second
	maxFailurePause = 5 * time.Minute
)

// failurePauseEnv overrides failurePause (a Go duration, 0 for none): the
// scenarios set it (scriptEnv) so that those that provoke failures do not
// sleep.
const failurePauseEnv = "CLAUDE_ITERATE_FAILURE_PAUSE"

// pauseAfterFailures is the pause after streak failed iterations in a row
// (0 after none).
func pauseAfterFailures(streak int) time.Duration {
	base := failurePause
	if b, err := time.ParseDuration(os.Getenv(failurePauseEnv)); err == nil && b >= 0 {
		base = b
	}
	if streak <= 0 || base == 0 {
		return 0
	}
	limit := max(maxFailurePause, base)
	d := base
	for i := 1; i < streak && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}
