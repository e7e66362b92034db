package main

// This file holds the one rule by which a run's decisions read the
// agent's .status.json, and what a run says of what it inherits (issue
// 32: the file outlives iterations, runs and resets, and when the agent
// cannot write it — its tool calls refused — the claims of an earlier
// iteration or run went on deciding). The rules are:
//
//   - A claim counts only when the agent wrote it during the iteration
//     judged. The run compares the file as it was when the agent started
//     with the file as it is once the agent has ended: its identity
//     (device and inode), size, modification time and a hash of its
//     content; never the agent's own lastUpdated. A file left as it was
//     says nothing of the iteration.
//   - "worked", a rise of progress.completed and a new "question" count
//     only when written in the iteration; "complete" too, or when it was
//     already true at the run's start and the user passed
//     --accept-complete. A rise of TODO.md's checklist (the fallback when
//     .status.json is missing) counts against the best seen since the
//     run's start.
//   - A failed iteration claims no completion, whatever the file says,
//     and no success condition is met after it (afterIteration).
//   - A question is asked when the iteration wrote it (question.go: one
//     answered and left in the file as it was before is not asked again;
//     one removed and written again later is a new question). A status
//     written without the pending question withdraws it.
//   - Every decision reads the evidence, never the file: the refused-call
//     judgement (madeProgress), the stagnation count (runCounters.add, and
//     so no_progress), task_complete and --min-iterations (the record's
//     Complete), the questions (questionDesk.note), and the record, which
//     the notifications and events carry. What the file says is still
//     shown as it is (progress, summary).
//   - Cost: before an iteration one stat, and a read only when the file
//     changed since the last iteration's end; after it, the read the
//     progress needed anyway, with the fstat of the descriptor it read.
//     A file system with coarse timestamps may miss a rewrite of the same
//     bytes within one tick; an agent's iteration takes far longer.
//   - Before the first iteration the run names, in one line each, what it
//     inherits: a .status.json that says complete, a stop requested, a
//     question pending — with what happens and the command to change it.
//     A pending question is waited on, or stopped on, before any
//     iteration is paid for.

import (
	"crypto/sha256"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"
)

// statusCopy is .status.json as read once: what identifies its content,
// and what it says.
type statusCopy struct {
	exists   bool
	dev, ino uint64
	size     int64
	mod      time.Time
	sum      [sha256.Size]byte
	status   taskStatus // what it says, when parsed
	parsed   bool
	err      error // why it did not parse
}

// readStatusCopy reads .status.json at path. A file that cannot be read
// (missing, not a regular file, too large) is returned as a copy of
// nothing, with the error.
func readStatusCopy(path string) (statusCopy, error) {
	data, fi, err := readRegularFileInfo(path, agentFileCap)
	if err != nil {
		return statusCopy{}, err
	}
	c := statusCopy{exists: true, sum: sha256.Sum256(data)}
	c.setStat(fi)
	c.status, c.err = parseStatusJSON(data)
	c.parsed = c.err == nil
	return c, nil
}

// setStat takes the file's identity, size and modification time from fi.
func (c *statusCopy) setStat(fi fs.FileInfo) {
	c.size, c.mod = fi.Size(), fi.ModTime()
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		c.dev, c.ino = uint64(st.Dev), uint64(st.Ino)
	}
}

// statOnly is the file at path as a stat sees it: a copy of its identity,
// size and modification time, not of its content (nothing if it cannot be
// stat'ed).
func statOnly(path string) statusCopy {
	fi, err := os.Stat(path)
	if err != nil {
		return statusCopy{}
	}
	c := statusCopy{exists: true}
	c.setStat(fi)
	return c
}

// sameStat reports whether fi describes the file c was read from, as it
// was then.
func (c statusCopy) sameStat(fi fs.FileInfo) bool {
	s := statusCopy{exists: true}
	s.setStat(fi)
	return c.exists && c.sameID(s)
}

// sameID reports whether a and b are the same file (or both none) with the
// same size and modification time: whether it changed, without a read.
func (c statusCopy) sameID(b statusCopy) bool {
	return c.exists == b.exists && c.dev == b.dev && c.ino == b.ino && c.size == b.size && c.mod.Equal(b.mod)
}

// same reports whether a and b are the same content of the same file.
func (c statusCopy) same(b statusCopy) bool {
	return c.sameID(b) && c.sum == b.sum
}

// statusLedger is what a run knows of .status.json between iterations.
type statusLedger struct {
	path  string
	start statusCopy // as the run found it
	last  statusCopy // as last read
	// acceptComplete: --accept-complete, a completion the run found
	// counts.
	acceptComplete bool
	// retry is the file as the agent found it in an iteration retried
	// after a usage limit: the retry is the same iteration.
	retry *statusCopy
}

// begin takes the file as the run finds it.
func (l *statusLedger) begin(path string, c statusCopy, acceptComplete bool) {
	l.path, l.start, l.last, l.acceptComplete = path, c, c, acceptComplete
}

// inheritedComplete reports whether the file said complete at the run's
// start.
func (l *statusLedger) inheritedComplete() bool {
	return l.start.parsed && l.start.status.Complete
}

// before is the file as an agent starts: the copy last read if a stat
// says the file has not changed since, else the file read again.
func (l *statusLedger) before() statusCopy {
	if c := l.retry; c != nil {
		l.retry = nil
		return *c
	}
	fi, err := os.Stat(l.path)
	if err != nil {
		return statusCopy{}
	}
	if !l.last.sameStat(fi) {
		l.last, _ = readStatusCopy(l.path)
	}
	return l.last
}

// retried keeps before, the file as the agent found it, for the retry of
// an iteration that hit a usage limit.
func (l *statusLedger) retried(before statusCopy) {
	l.retry = &before
}

// evidence is what the decisions may take from .status.json after one
// iteration: the rule of this file, applied once.
type evidence struct {
	// status is what the progress reads after the iteration (the file,
	// or TODO.md's checklist): shown as it is.
	status taskStatus
	// written: the agent wrote .status.json during the iteration; fresh:
	// and it parses, so its claims are the iteration's.
	written, fresh bool
	failed         bool  // the iteration failed: it claims no completion
	complete       bool  // the completion counts
	worked         *bool // "worked", as written in the iteration
	// question is the question written in the iteration, "" if none;
	// leftIn: the file held the same question before it.
	question  string
	leftIn    bool
	withdrawn bool // written without a question
}

// judge compares before, the file as the agent found it, with after, as
// it left it; ts is the progress as read after the iteration.
func (l *statusLedger) judge(before, after statusCopy, ts taskStatus) *evidence {
	l.last = after
	e := &evidence{status: ts, written: !before.same(after)}
	e.fresh = e.written && after.parsed
	s := after.status
	if e.fresh {
		e.worked = s.Worked
		e.question = strings.TrimSpace(s.Question)
		e.leftIn = e.question != "" && e.question == strings.TrimSpace(before.status.Question)
		e.withdrawn = e.question == ""
	}
	e.complete = after.parsed && s.Complete && (e.fresh || (l.acceptComplete && l.inheritedComplete()))
	return e
}

// fail marks the iteration failed: it claims no completion.
func (e *evidence) fail() {
	e.failed, e.complete = true, false
}

// rose reports whether progress.completed rose above best, the best seen
// since the run's start, as the agent wrote it.
func (e *evidence) rose(best int) bool {
	return e.status.HasProgress && e.status.Completed > best && (e.fresh || e.status.Source == todoFile)
}

// claimRefused says why the completion the status file claims after the
// iteration does not count: "" when it claims none, or it counts.
func (e *evidence) claimRefused() string {
	switch {
	case e == nil || e.complete || !e.status.Complete || e.status.Source != statusFile:
		return ""
	case e.failed:
		return "the iteration failed"
	case !e.fresh:
		return "the iteration did not write it"
	}
	return ""
}

// workedTrue reports whether the iteration wrote "worked": true.
func (e *evidence) workedTrue() bool {
	return e.worked != nil && *e.worked
}

// madeProgress reports whether the iteration shows progress the agent
// wrote: an iteration whose tool calls were refused and that did not is
// a failure.
func (e *evidence) madeProgress(best int) bool {
	return e.complete || e.workedTrue() || e.rose(best)
}

// How an iteration bears on the stagnation count (runCounters.add).
const (
	progressNone   = iota // no progress the agent wrote
	progressMade          // progress the agent wrote
	progressUnsaid        // iterative mode: "worked" not said, or a failure: not counted
)

// progress says how the iteration bears on the stagnation count: in loop
// mode a rise of progress.completed, in iterative mode "worked": true,
// each written in the iteration. In iterative mode an iteration that
// failed without writing its status is not counted: the failure streak
// counts it (two API errors are not "stagnation", exit 0).
func (e *evidence) progress(mode string, best int) int {
	switch {
	case e == nil:
		return progressNone
	case mode != modeIterative && e.rose(best):
		return progressMade
	case mode != modeIterative:
		return progressNone
	case e.workedTrue():
		return progressMade
	case e.fresh && e.worked == nil, e.failed && !e.fresh:
		return progressUnsaid
	}
	return progressNone
}

// wsCmdArg is the argument that names w again in a command suggested to the
// user, quoted for the shell: the path it was given as (./odd dir), else
// its name.
func wsCmdArg(w *workspace) string {
	return shellQuote(firstNonEmpty(w.arg, w.Name))
}

// wsCommand is the command that does verb to w, with flags: "claude-iterate
// reset demo --all", or without the workspace for a ralph-mode run.
func wsCommand(w *workspace, verb string, flags ...string) string {
	parts := []string{progName, verb}
	if !w.Ralph {
		parts = append(parts, wsCmdArg(w))
	}
	return strings.Join(append(parts, flags...), " ")
}
