package main

// This file watches .status.json while a run goes on, for the panel's tasks
// field and the status_update notification. The rules are: it is polled at
// the supervisor's poll, at most once per statusPollInterval, and cheaply —
// a stat, and a read only when the file changed; a change is read once the
// file has not changed for the debounce time (the agent may write it in
// several steps); when an iteration ends, the file is looked at once more
// (final), at once, before the iteration's events go out, in the copy the
// iteration's judgement read (no stat nor read of its own: one stat and at
// most one read per iteration in all); a file that does not parse is
// skipped until it changes
// again; with notifyOnlyMeaningful, a change of lastUpdated alone is not a
// change. Messages read "35/60 items (+5) - Migrated the user endpoints",
// with "✅ Complete!" when the task turns complete.

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// statusPollInterval is how often .status.json is looked at.
const statusPollInterval = time.Second

// fileStamp tells whether a file changed, without reading it (the git and
// watch views; the status watch has statusCopy's identity).
type fileStamp struct {
	exists bool
	mod    time.Time
	size   int64
	ino    uint64
}

func stampOf(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	s := fileStamp{exists: true, mod: fi.ModTime(), size: fi.Size()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.ino = uint64(st.Ino)
	}
	return s
}

// statusWatch polls one .status.json. A nil *statusWatch watches nothing.
type statusWatch struct {
	path           string
	debounce       time.Duration
	onlyMeaningful bool

	nextStat time.Time
	// seen is the file as last looked at: read, or only stat'ed (a change
	// settling, or one that could not be read), then without its content.
	seen     statusCopy
	settleAt time.Time  // a change waits to settle until then (zero: none)
	known    bool       // last holds the last status reported
	last     statusCopy // parsed
}

func newStatusWatch(path string, debounce time.Duration, onlyMeaningful bool) *statusWatch {
	return &statusWatch{path: path, debounce: debounce, onlyMeaningful: onlyMeaningful}
}

// prime takes c, the file as the run read it at its start (the ledger's
// copy, evidence.go), as the baseline, which is not a change.
func (w *statusWatch) prime(c statusCopy) (taskStatus, bool) {
	w.seen = c
	if !c.parsed {
		return taskStatus{}, false
	}
	w.known, w.last = true, c
	return c.status, true
}

// poll looks at the file; ok reports a change worth telling, with its
// message and the new status.
func (w *statusWatch) poll(now time.Time) (msg string, ts taskStatus, ok bool) {
	if w == nil || (now.Before(w.nextStat) && (w.settleAt.IsZero() || now.Before(w.settleAt))) {
		return "", taskStatus{}, false
	}
	w.nextStat = now.Add(statusPollInterval)
	if s := statOnly(w.path); !s.sameID(w.seen) {
		w.seen = s
		if !s.exists {
			w.settleAt = time.Time{}
			return "", taskStatus{}, false
		}
		w.settleAt = now.Add(w.debounce)
	}
	if w.settleAt.IsZero() || now.Before(w.settleAt) {
		return "", taskStatus{}, false
	}
	w.settleAt = time.Time{}
	c, err := readStatusCopy(w.path)
	if err != nil {
		return "", taskStatus{}, false // not read again until it changes
	}
	w.seen = c
	return w.take(c)
}

// final is the look at the file when an iteration has ended, at after:
// the copy the iteration's judgement read (evidence.go), so that the look
// costs no stat nor read of its own. Its agent writes no more, so a change
// since the last look is told at once, the debounce not waited for; ok
// reports a change worth telling, as poll does.
func (w *statusWatch) final(now time.Time, after statusCopy) (msg string, ts taskStatus, ok bool) {
	if w == nil {
		return "", taskStatus{}, false
	}
	w.nextStat = now.Add(statusPollInterval)
	if after.same(w.seen) && w.settleAt.IsZero() {
		return "", taskStatus{}, false
	}
	w.seen, w.settleAt = after, time.Time{}
	if !after.exists {
		return "", taskStatus{}, false
	}
	return w.take(after)
}

// take takes c, the file as read after a change; ok reports a change worth
// telling.
func (w *statusWatch) take(c statusCopy) (msg string, ts taskStatus, ok bool) {
	if !c.parsed || (w.known && !w.changed(c)) {
		return "", taskStatus{}, false
	}
	var prev *taskStatus
	if w.known {
		p := w.last.status
		prev = &p
	}
	w.known, w.last = true, c
	return statusMessage(prev, c.status), c.status, true
}

// changed reports whether c differs from the last status reported.
func (w *statusWatch) changed(c statusCopy) bool {
	if !w.onlyMeaningful {
		return c.sum != w.last.sum
	}
	a, b := w.last.status, c.status
	boolOf := func(p *bool) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprint(*p)
	}
	return a.Complete != b.Complete || a.HasProgress != b.HasProgress || a.Completed != b.Completed ||
		a.Total != b.Total || a.Summary != b.Summary || boolOf(a.Worked) != boolOf(b.Worked)
}

// statusMessage says what changed: "35/60 items (+5) - Migrated the user
// endpoints", and "✅ Complete!" when the task turned complete.
func statusMessage(prev *taskStatus, ts taskStatus) string {
	var parts []string
	if ts.HasProgress {
		s := fmt.Sprintf("%d/%d items", ts.Completed, ts.Total)
		if prev != nil && prev.HasProgress && ts.Completed != prev.Completed {
			s += fmt.Sprintf(" (%+d)", ts.Completed-prev.Completed)
		}
		parts = append(parts, s)
	}
	if sum := strings.Join(strings.Fields(ts.Summary), " "); sum != "" {
		parts = append(parts, sanitizeString(clipWidth(sum, 300)))
	}
	msg := strings.Join(parts, " - ")
	if ts.Complete && (prev == nil || !prev.Complete) {
		msg = strings.TrimSpace(msg + " ✅ Complete!")
	}
	if msg == "" {
		if ts.Worked != nil && !*ts.Worked {
			return "no work done"
		}
		return "status updated"
	}
	return msg
}
