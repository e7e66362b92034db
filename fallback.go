package main

// This file implements the fallback of a run's agent (--fallback-agent,
// config fallbackAgents). The rules are: when the agent that runs hits its
// usage limit, the same iteration is retried at once with the next of the
// run's agents whose limit is not known to hold, instead of waiting; the
// run's first agent is tried again once the wait a run without a fallback
// would make has passed (limitWait: never less than minLimitWait, so that
// a reset already past cannot make a loop); with no agent left, the run
// waits for the earliest reset as it always did, then goes on with that
// agent. The log, the panel, the record (agent, agentChange) and a
// notification (limit_wait) say which agent runs and why it changed.

import (
	"fmt"
	"time"
)

// agentInUse is which of the run's agents runs, and why.
type agentInUse struct {
	index int // into runPlan.agents
	// change says why the agent that runs is not the run's first; "" while
	// it is.
	change string
	// limitedUntil is, per agent, when its usage limit resets (zero: none
	// known).
	limitedUntil []time.Time
	// refusedHinted: the fix for refused tool calls was shown.
	refusedHinted bool
}

// limited records a usage limit of the agent that runs (of agents), and
// returns the next agent free of one, with why it takes over; ok false
// when there is none (the run then waits for the reset).
func (u *agentInUse) limited(agents []runAgent, reset, now time.Time) (next int, why string, ok bool) {
	if len(agents) < 2 {
		return 0, "", false
	}
	if u.limitedUntil == nil {
		u.limitedUntil = make([]time.Time, len(agents))
	}
	// A reset already past, unknown or too near keeps the agent aside
	// as long as a run without a fallback would wait for it (limitWait).
	until := now.Add(limitWait(reset, now))
	u.limitedUntil[u.index] = until
	for k := 1; k < len(agents); k++ {
		i := (u.index + k) % len(agents)
		if !u.limitedUntil[i].After(now) {
			return i, limitedWhy(agents[u.index].cli.name(), reset, until, now), true
		}
	}
	return 0, "", false
}

// limitedWhy is why agent name, whose usage limit resets at reset (zero:
// it gave no time), is replaced until until: the reset as the agent gave
// it, and when it is tried again if that is another time (the margin, a
// reset past or unknown), each named for what it is.
func limitedWhy(name string, reset, until, now time.Time) string {
	again := formatClock(until, now)
	if reset.IsZero() {
		return fmt.Sprintf("%s hit its usage limit (no reset time given; %s is tried again from %s)", name, name, again)
	}
	resets := formatClock(reset, now)
	if resets == again {
		return fmt.Sprintf("%s hit its usage limit (resets at %s)", name, resets)
	}
	return fmt.Sprintf("%s hit its usage limit (resets at %s; %s is tried again from %s)", name, resets, name, again)
}

// firstIsBack reports whether the run's first agent, replaced after its
// usage limit, is to run again: its reset has passed.
func (u *agentInUse) firstIsBack(now time.Time) bool {
	return u.index != 0 && u.limitedUntil != nil && !u.limitedUntil[0].After(now)
}

// use makes agent i the one that runs, for why ("" for the first).
func (u *agentInUse) use(i int, why string) {
	u.index, u.change = i, why
	if i == 0 {
		u.change = ""
	}
}
