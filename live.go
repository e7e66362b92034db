package main

// This file implements a run's live view, live: it keeps what a run is
// doing now — runState — and shows it: the live panel on a terminal,
// heartbeat lines elsewhere, the state file that 'claude-iterate watch'
// follows; and it publishes the run's events (events.go) to the event
// stream and the notifications. The rules are:
//
//   - The loop tells it of its events through a handful of calls (an
//     iteration starts, its record is made, a wait, a stop request, the
//     end); the agent's stream events come from the reader goroutine,
//     already decoded. Numbers come from records and the totals made of
//     them (record.go), never worked out again here.
//   - It adds no wake-ups: redraws (at most once a second, at once on a
//     stop request or a resize), heartbeats, the .status.json poll and
//     state-file writes are done when their deadline has passed, at the
//     supervisor's periodic poll (which must come at least once a second).
//   - The state file is written atomically, on events only and at most
//     once a second (the last one, the run's ending, at once), and never
//     while nothing happens: watch computes the durations itself.
//   - Lock order: the console's lock, then live's; live never calls the
//     console while holding its own.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Timings of the live view.
const (
	redrawInterval    = time.Second
	stateFileInterval = time.Second
	defaultHeartbeat  = 5 * time.Minute
	// maxStateLines is how many of the last scrolling lines the state
	// file keeps, for watch to show.
	maxStateLines = 12
	// notifyMilestone: an iteration_milestone every so many iterations.
	notifyMilestone = 10
)

// live is a run's live view. A nil *live does nothing.
type live struct {
	mu  sync.Mutex
	st  runState
	act activityTracker
	seq int
	// dirty: the state file is out of date; redraw: the panel.
	dirty, redraw bool
	// nudge, in a quiet run, wakes the supervisor when the state file
	// becomes out of date.
	nudge chan struct{}

	con       *console
	log       *runLog
	opts      panelOpts
	heartbeat time.Duration
	nextBeat  time.Time
	lastDraw  time.Time
	// iterSuspendedMS is the run's time suspended when the running
	// iteration started.
	iterSuspendedMS int64
	lastWrite       time.Time
	statePath       string
	writeErr        bool
	status          *statusWatch
	pub             publisher
	// ws is the run's workspace: no state file goes into a directory put
	// in the place of the one the run locked (workspacePresent).
	ws *workspace
}

// publisher is where a run's events go: the event stream and the
// notifications.
type publisher struct {
	notify *notifier
	events *eventWriter
	run    string // the run's id, in its events
	// statusNotify: status updates are published (statusWatch.enabled).
	statusNotify bool
	serveURL     string // where 'serve' is reached (serve.url): notifications link there
}

// liveConfig is what a live view is made from.
type liveConfig struct {
	con      *console
	log      *runLog
	ws       *workspace
	mode     string
	start    time.Time
	max      int
	keyboard bool // the s key works in the run's terminal
	root     string
	cfg      *settings
	opts     *runOptions
	events   *eventWriter
	run      string
	status   statusCopy // .status.json as the run read it at its start
}

// newLive makes a run's live view, once the run is set up and the
// keyboard open.
func newLive(lc liveConfig) *live {
	now := time.Now()
	l := &live{con: lc.con, log: lc.log, statePath: filepath.Join(lc.ws.StateDir, runStateFile), ws: lc.ws, heartbeat: defaultHeartbeat,
		pub: publisher{events: lc.events, run: lc.run, serveURL: lc.cfg.ServeURL}}
	if lc.opts.heartbeat.set {
		l.heartbeat = lc.opts.heartbeat.d
	}
	l.st = runState{PID: os.Getpid(), Workspace: lc.ws.Name, Mode: lc.mode, Started: lc.start, Phase: phaseStarting,
		Max: lc.max, Keyboard: lc.keyboard, Updated: now}
	l.act.root = lc.root
	l.opts = panelOpts{color: lc.con.color, oneLine: lc.con.level == outputVerbose}
	sw := lc.cfg.StatusWatch
	l.status = newStatusWatch(lc.ws.statusPath(), sw.Debounce, sw.OnlyMeaningful)
	if ts, ok := l.status.prime(lc.status); ok {
		l.setTasks(ts)
	}
	l.pub.statusNotify = sw.Enabled
	if u := lc.cfg.NotifyURL; u != "" {
		r := lc.log
		r.printf("[notifications: %s, events: %v]", redactURL(u), lc.cfg.NotifyEvents)
		l.pub.notify = newNotifier(u, lc.cfg.NotifyEvents, func(msg string) { r.printf("WARNING: %s", msg) })
		l.pub.notify.onScreen(func(msg string) { lc.con.errorf("%s", msg) })
	}
	lc.events.onFailure(func(msg string) { lc.con.errorf("warning: %s", msg) })
	return l
}

// notifies reports whether notifications go out.
func (l *live) notifies() bool { return l.pub.notify != nil }

// quietNudge makes and returns the channel that wakes the supervisor of
// a quiet run when the state file becomes out of date.
func (l *live) quietNudge() <-chan struct{} {
	l.nudge = make(chan struct{}, 1)
	return l.nudge
}

// started announces the run and draws the panel.
func (l *live) started() {
	l.emit(runEvent{Event: eventStart, Mode: l.st.Mode, MaxIterations: l.st.Max})
	l.mu.Lock()
	l.dirty, l.redraw = true, true
	l.mu.Unlock()
	l.update(time.Now())
}

// emit publishes ev: to the event stream, and as a notification.
func (l *live) emit(ev runEvent) {
	ev = l.stamp(ev)
	l.pub.events.write(ev)
	if l.pub.notify.wants(ev.Event) { // the message is made only for a subscriber
		l.pub.notify.send(withView(notificationFor(ev), l.pub.serveURL, l.pub.run))
	}
}

// beats reports whether heartbeat lines are printed: plain output, not
// quiet, a heartbeat set.
func (l *live) beats() bool {
	return !l.con.panelWanted() && l.con.level != outputQuiet && l.heartbeat > 0
}

// beatsFasterThan reports whether heartbeat lines come more often than
// every d: a quiet supervisor, looking around every d, would space them d
// apart.
func (l *live) beatsFasterThan(d time.Duration) bool {
	return l.beats() && l.heartbeat < d
}

// tick does what is due at now; it runs at the supervisor's poll.
func (l *live) tick(now time.Time, interrupt os.Signal, suspended time.Duration) {
	if l == nil {
		return
	}
	var heartbeat string
	l.mu.Lock()
	if interrupt != nil && l.st.Interrupted == "" {
		l.st.Interrupted = signalName(interrupt)
		l.dirty, l.redraw = true, true
	}
	l.setSuspended(suspended)
	if l.beats() && l.st.Phase == phaseRunning && !now.Before(l.nextBeat) {
		l.nextBeat = now.Add(l.heartbeat)
		heartbeat = fmt.Sprintf("… iteration %d: %s, %s", l.st.Iteration, compactDuration(l.iterationElapsed(now)), nowText(&l.st, now, false))
	}
	l.mu.Unlock()
	if msg, ts, ok := l.status.poll(now); ok {
		l.statusChanged(msg, ts, now)
	}
	if heartbeat != "" {
		l.con.progressf("%s", heartbeat)
	}
	l.update(now)
}

// statusChanged takes a change of .status.json: the panel's tasks, the
// log, and the status_update.
func (l *live) statusChanged(msg string, ts taskStatus, now time.Time) {
	l.mu.Lock()
	l.setTasks(ts)
	l.st.Updated = now
	l.dirty, l.redraw = true, true
	l.mu.Unlock()
	l.log.printf("[status update: %s]", msg)
	if l.pub.statusNotify {
		ev := runEvent{Event: eventStatus, Message: msg, Complete: ts.Complete}
		if ts.HasProgress {
			ev.Progress = &progressRep{ts.Completed, ts.Total}
		}
		l.emit(ev)
	}
}

// setSuspended takes the run's time suspended so far. One rule for every
// duration shown: time suspended is left out, as from Elapsed, iteration
// durations and max_duration — so the activity's timers (the running
// tool's, thinking's, the API retry's countdown) start again where they
// stopped. l.mu must be held.
func (l *live) setSuspended(suspended time.Duration) {
	ms := suspended.Milliseconds()
	if ms == l.st.SuspendedMS {
		return
	}
	delta := time.Duration(ms-l.st.SuspendedMS) * time.Millisecond
	l.st.SuspendedMS = ms
	l.st.Activity = l.st.Activity.shifted(delta)
	l.act.shift(delta)
	l.dirty = true
}

// iterationElapsed is the running iteration's time at now, time suspended
// excluded. l.mu must be held.
func (l *live) iterationElapsed(now time.Time) time.Duration {
	return max(0, now.Sub(l.st.IterStarted)-time.Duration(l.st.SuspendedMS-l.iterSuspendedMS)*time.Millisecond)
}

// setTasks takes the tasks' progress from ts; l.mu must be held.
func (l *live) setTasks(ts taskStatus) {
	l.st.Complete = ts.Complete
	l.st.Tasks = nil
	if ts.HasProgress {
		l.st.Tasks = &progressRep{ts.Completed, ts.Total}
	}
}

// update redraws the panel and writes the state file if they are due.
func (l *live) update(now time.Time) {
	var lines []string
	var data []byte
	l.mu.Lock()
	if l.con.panelWanted() && !l.st.Ended {
		if l.con.takeResized() {
			l.redraw = true
		}
		if l.redraw || now.Sub(l.lastDraw) >= redrawInterval {
			l.redraw, l.lastDraw = false, now
			o := l.opts
			o.width = l.con.termWidth()
			lines = renderPanel(&l.st, now, o)
		}
	}
	if l.dirty && now.Sub(l.lastWrite) >= stateFileInterval {
		data = l.marshal(now)
	}
	l.mu.Unlock()
	if lines != nil {
		l.con.queuePanel(lines)
	}
	if data != nil {
		l.writeState(data)
	}
}

// marshal encodes the state for the state file; l.mu must be held.
func (l *live) marshal(now time.Time) []byte {
	l.dirty, l.lastWrite = false, now
	data, err := json.MarshalIndent(&l.st, "", "  ")
	if err != nil {
		return nil
	}
	return append(data, '\n')
}

// writeState writes the state file; a failure is one warning, on the
// screen and in the log.
func (l *live) writeState(data []byte) {
	if l.ws != nil && workspacePresent(l.ws) != nil {
		return // deleted or replaced: the run ends at its next look, and says so
	}
	// Not fsynced: the file is for watching a live run, and is rewritten
	// within a second of every event.
	if err := writeFileAtomicSync(l.statePath, data, 0o600, false); err != nil && !l.writeErr {
		l.writeErr = true
		l.con.errorf("warning: writing %s: %v ('claude-iterate watch' cannot follow this run)", l.statePath, unwrapPathError(err))
		l.log.printf("WARNING: writing %s: %v ('claude-iterate watch' cannot follow this run)", l.statePath, unwrapPathError(err))
	}
}

// addLine records a scrolling line; the console calls it, holding its lock.
func (l *live) addLine(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.st.Ended {
		return
	}
	l.seq++
	l.st.Lines = append(l.st.Lines, stateLine{Seq: l.seq, Text: line})
	if n := len(l.st.Lines); n > maxStateLines {
		l.st.Lines = append(l.st.Lines[:0], l.st.Lines[n-maxStateLines:]...)
	}
	l.dirty = true
}

// iterationStarted: iteration n's agent (named agent) starts.
func (l *live) iterationStarted(n int, agent string) {
	if l == nil {
		return
	}
	now := time.Now()
	l.mu.Lock()
	l.act.agent, l.st.Agent = agent, agent
	l.st.Phase, l.st.Iteration, l.st.IterStarted, l.st.Updated = phaseRunning, n, now, now
	l.iterSuspendedMS = l.st.SuspendedMS
	l.st.WaitUntil = time.Time{}
	l.st.Activity = l.act.reset(now)
	l.nextBeat = now.Add(l.heartbeat)
	l.dirty, l.redraw = true, true
	l.mu.Unlock()
	l.update(now)
}

// onEvent takes one of the agent's stream events; it runs on the
// stream's reader goroutine.
func (l *live) onEvent(e *streamEvent) {
	if l == nil {
		return
	}
	now := time.Now()
	l.mu.Lock()
	l.st.Activity = l.act.observe(e, now)
	l.st.Updated = now
	wasDirty := l.dirty
	l.dirty = true
	l.mu.Unlock()
	if !wasDirty && l.nudge != nil {
		select {
		case l.nudge <- struct{}{}:
		default:
		}
	}
}

// stateDirty reports whether the state file is out of date.
func (l *live) stateDirty() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dirty
}

// recorded: an iteration's record is made; totals are the run's, with it.
// The iteration has ended: .status.json is looked at once more, in after,
// the copy the iteration's judgement read, and a change goes out before
// the iteration's events.
func (l *live) recorded(rec *iterationRecord, totals workTotals, elapsed time.Duration, after statusCopy) {
	if l == nil {
		return
	}
	now := time.Now()
	if msg, ts, ok := l.status.final(now, after); ok {
		l.statusChanged(msg, ts, now)
	}
	l.mu.Lock()
	l.st.Totals, l.st.Updated = totals, now
	if rec.counted() {
		l.st.Phase = phaseBetween
	}
	l.st.Activity = activity{}
	if rec.Progress != nil {
		l.st.Tasks = rec.Progress
	}
	l.st.Complete = l.st.Complete || rec.Complete
	l.dirty, l.redraw = true, true
	max := l.st.Max
	l.mu.Unlock()
	ev := runEvent{Event: eventIteration, MaxIterations: max, Record: rec, Totals: &totals, ElapsedMS: elapsed.Milliseconds()}
	if rec.counted() {
		l.emit(ev)
	} else {
		l.pub.events.write(l.stamp(ev)) // not notified: the run says why it waits or ends
	}
	if rec.counted() && totals.Iterations%notifyMilestone == 0 {
		l.emit(runEvent{Event: eventMilestone, Totals: &totals, ElapsedMS: elapsed.Milliseconds(), Progress: rec.Progress, Complete: rec.Complete})
	}
	l.update(now)
}

// stamp names the workspace and the run in ev.
func (l *live) stamp(ev runEvent) runEvent {
	ev.Workspace, ev.Run = l.st.Workspace, l.pub.run
	return ev
}

// testsStarted: the test command runs.
func (l *live) testsStarted(cmd string) {
	if l == nil {
		return
	}
	now := time.Now()
	l.mu.Lock()
	l.st.Activity = activity{Kind: actTests, Tool: "Tests", Arg: sanitizeString(clipWidth(cmd, maxToolArg)), Since: now}
	l.dirty, l.redraw = true, true
	l.mu.Unlock()
	l.update(now)
}

// waitLeft: a wait (the delay, a usage-limit wait, a wait for an answer)
// in phase has left to go.
func (l *live) waitLeft(left time.Duration, phase string) {
	if l == nil {
		return
	}
	now := time.Now()
	until := now.Add(left)
	if phase == phaseQuestion {
		until = time.Time{} // no end in sight
	}
	l.mu.Lock()
	if l.st.Phase != phase || until.Sub(l.st.WaitUntil).Abs() > time.Second/2 {
		l.redraw = l.redraw || l.st.Phase != phase
		l.st.Phase, l.st.WaitUntil = phase, until
		l.dirty = true
	}
	l.mu.Unlock()
	l.update(now)
}

// waitEnded: the wait is over.
func (l *live) waitEnded() {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.st.Phase, l.st.WaitUntil, l.st.WaitEndsRun, l.st.PauseAfter = phaseBetween, time.Time{}, false, 0
	l.dirty, l.redraw = true, true
	l.mu.Unlock()
}

// pauseAfter: the delay starting is the pause after streak failed
// iterations in a row.
func (l *live) pauseAfter(streak int) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.st.PauseAfter, l.dirty = streak, true
	l.mu.Unlock()
}

// waitToDeadline: the wait starting ends at the run's deadline.
func (l *live) waitToDeadline() {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.st.WaitEndsRun, l.dirty = true, true
	l.mu.Unlock()
}

// limitReached: the run waits for a usage limit's reset until until, as
// msg says.
func (l *live) limitReached(msg string, until time.Time) {
	if l == nil {
		return
	}
	l.mu.Lock()
	// The wait's end with its phase: never a wait "in 0s" (tryout5).
	l.st.Phase, l.st.WaitUntil = phaseLimit, until
	l.st.Activity = activity{}
	l.dirty, l.redraw = true, true
	l.mu.Unlock()
	l.emit(runEvent{Event: eventLimit, Message: msg})
}

// stopChanged: a stop was requested ("keyboard", "file") or cancelled ("").
func (l *live) stopChanged(source string) {
	now := time.Now()
	l.mu.Lock()
	l.st.StopSource = source
	l.dirty, l.redraw = true, true
	l.mu.Unlock()
	l.update(now)
}

// suspendedAt: the run stopped at at (Ctrl+Z), or, at zero, went on,
// suspended for suspended in all. The state file says it at once, for ps,
// watch and serve: a stopped run writes nothing else.
func (l *live) suspendedAt(at time.Time, suspended time.Duration) {
	if l == nil {
		return
	}
	now := time.Now()
	l.mu.Lock()
	l.st.Suspended = at
	l.setSuspended(suspended)
	data := l.marshal(now)
	l.mu.Unlock()
	if data != nil {
		l.writeState(data)
	}
}

// ended: the run ends. The panel gives way to the run's last line, the
// state file says how the run ended, and the last notification is sent.
func (l *live) ended(end ending, summary string, totals workTotals, elapsed time.Duration) {
	if l == nil {
		return
	}
	now := time.Now()
	l.mu.Lock()
	l.st.Phase, l.st.Ended, l.st.Ending, l.st.Hint, l.st.ExitCode = phaseEnded, true, summary, end.hint, end.code
	l.st.Status = end.status
	l.st.Activity, l.st.Updated, l.st.Totals = activity{}, now, totals
	data := l.marshal(now)
	l.mu.Unlock()
	l.con.dropPanel()
	if data != nil {
		l.writeState(data)
	}
	ev := endEvent(end, summary)
	ev.Totals, ev.ElapsedMS = &totals, elapsed.Milliseconds()
	l.emit(ev)
}

// endedLate corrects the ending in the state file once a signal came as the
// run ended (signallate.go): its exit code, and its summary.
func (l *live) endedLate(code int, summary string) {
	if l == nil {
		return
	}
	now := time.Now()
	l.mu.Lock()
	l.st.Ending, l.st.ExitCode, l.st.Updated = summary, code, now
	data := l.marshal(now)
	l.mu.Unlock()
	if data != nil {
		l.writeState(data)
	}
}

// drain gives the pending notifications up to notifyExitWait to go out,
// less if a signal comes.
func (l *live) drain(abort <-chan os.Signal) {
	if l == nil {
		return
	}
	l.pub.notify.close(notifyExitWait, abort)
}
