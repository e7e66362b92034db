package main

// This file keeps a run's ending truthful. The rules are: a run that ends
// on max iterations right after a failed iteration failed (exit 1) — a
// script must be able to tell a run whose every iteration failed from a
// success; a failure ending names the last iteration's error, so that even
// -q shows the cause. (The money an iteration cost counts in the run's and
// the workspace's totals whatever became of the iteration, interrupted or
// retried after a usage limit: workTotals.add.)

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// ending is how a run ends.
type ending struct {
	code   int
	reason string
	status string
	hint   string
	// signal is the signal that ended the run, if one did.
	signal os.Signal
	// gone is set when the workspace was deleted during the run
	// (workspaceGone): the ending says so, and no save warns of it again.
	gone bool
}

// truthfulEnding adjusts the ending that the met condition gives, after an
// iteration that failed (why) or not.
func truthfulEnding(end ending, met *groupedCondition, failed bool, why string) ending {
	if !failed {
		return end
	}
	if end.code == exitOK && met != nil && met.c.Type == condMaxIterations {
		end.code, end.status = exitError, statusFailed
		end.reason = "failed: " + strings.TrimPrefix(end.reason, "stopped: ") + ", and the last iteration failed: " + clip(why, 300)
		return end
	}
	if end.code == exitError && why != "" && !strings.Contains(end.reason, why) {
		end.reason += fmt.Sprintf(" (last error: %s)", clip(why, 300))
	}
	return end
}

// formatCost shows an amount as iterations show it: $0.0123. Every view of
// a cost (lines, panel, watch, notifications, reset) uses it, so that no
// view rounds to $0.00 what another shows as $0.0037.
func formatCost(x float64) string {
	return fmt.Sprintf("$%.4f", x)
}

// lastLines joins the last n lines of s with " | ".
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// roundDuration rounds d as durations are shown: to the second past a
// minute, to a tenth past a second, else to the millisecond.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d > time.Minute:
		return d.Round(time.Second)
	case d > time.Second:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}
