package main

// This file keeps what a run is doing now — runState — and shows it: the
// live panel on a terminal, heartbeat lines elsewhere, the state file that
// 'claude-iterate watch' follows, and the notifications. The rules are:
//
//   - The loop tells it of its events through a handful of calls (an
//     iteration starts or ends, a wait, a stop request, the end); the
//     agent's stream events come from the reader goroutine, already decoded.
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

// Phases of a run.
const (
	phaseStarting = "starting" // before the first iteration
	phaseRunning  = "running"  // an agent runs
	phaseBetween  = "between"  // after an iteration: tests, conditions
	phaseDelay    = "delay"    // the delay between iterations
	phaseLimit    = "limit"    // waiting for a usage limit's reset
	phaseEnded    = "ended"
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

// runState is what a run is doing: the panel's model, and the content of
// the state file.
type runState struct {
	PID         int          `json:"pid"`
	Workspace   string       `json:"workspace"`
	Mode        string       `json:"mode"`
	Started     time.Time    `json:"started"`
	SuspendedMS int64        `json:"suspendedMs"`
	Phase       string       `json:"phase"`
	Interrupted string       `json:"interrupted,omitempty"` // the signal's name
	Iteration   int          `json:"iteration"`             // the running, or last started, iteration
	Done        int          `json:"done"`                  // iterations counted
	Max         int          `json:"max"`
	IterStarted time.Time    `json:"iterationStarted"`
	IterTotalMS int64        `json:"iterationsMs"` // the counted iterations' total duration
	Tasks       *progressRep `json:"tasks,omitempty"`
	Complete    bool         `json:"complete,omitempty"`
	Cost        float64      `json:"costUsd"`
	Activity    activity     `json:"activity"`
	WaitUntil   time.Time    `json:"waitUntil"`
	StopSource  string       `json:"stopSource,omitempty"`
	Keyboard    bool         `json:"keyboard"` // the s key works in the run's terminal
	Updated     time.Time    `json:"updated"`  // the last sign of life
	Lines       []stateLine  `json:"lines,omitempty"`
	Ended       bool         `json:"ended"`
	Ending      string       `json:"ending,omitempty"`
	Hint        string       `json:"hint,omitempty"`
	ExitCode    int          `json:"exitCode"`
}

// stateLine is one scrolling line of the run's output.
type stateLine struct {
	Seq  int    `json:"seq"`
	Text string `json:"text"`
}

// elapsed is the run's time at now, time suspended excluded.
func (st *runState) elapsed(now time.Time) time.Duration {
	if st.Started.IsZero() {
		return 0
	}
	return max(0, now.Sub(st.Started)-time.Duration(st.SuspendedMS)*time.Millisecond)
}

// eta estimates the time left, from the average iteration, once one is
// done. In loop mode (one item per iteration) the items left bound the
// iterations left.
func (st *runState) eta(now time.Time) (time.Duration, bool) {
	if st.Done == 0 || st.Max == 0 || st.Ended {
		return 0, false
	}
	avg := time.Duration(st.IterTotalMS) * time.Millisecond / time.Duration(st.Done)
	left := st.Max - st.Done
	if st.Mode == modeLoop && st.Tasks != nil && st.Tasks.Total > 0 {
		left = min(left, st.Tasks.Total-st.Tasks.Completed)
	}
	if left <= 0 {
		return 0, false
	}
	d := avg * time.Duration(left)
	if st.Phase == phaseRunning {
		d -= min(now.Sub(st.IterStarted), avg)
	}
	return max(d, 0), true
}

// tasksText shows the tasks' progress: "35/60", or "".
func (st *runState) tasksText() string {
	switch {
	case st.Tasks != nil && st.Complete:
		return fmt.Sprintf("%d/%d, complete", st.Tasks.Completed, st.Tasks.Total)
	case st.Tasks != nil:
		return fmt.Sprintf("%d/%d", st.Tasks.Completed, st.Tasks.Total)
	case st.Complete:
		return "complete"
	}
	return ""
}

// nowLine says in one line what the run is doing at now: "running
// iteration 3, 2/50 done: Bash: go test ./... · 42s".
func (st *runState) nowLine(now time.Time) string {
	label, _ := stateLabel(st)
	return fmt.Sprintf("%s, %d/%d done: %s", label, st.Done, st.Max, nowText(st, now, true))
}

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
	lastWrite time.Time
	statePath string
	writeErr  bool
	notify    *notifier
	status    *statusWatch
	// statusNotify: status updates are notified (statusWatch.enabled).
	statusNotify bool
}

// startLive starts the run's live view, once the run is set up and the
// keyboard open: it hooks into the console, the stop request and the
// supervisor's poll, announces the run and draws the panel.
func (r *runner) startLive() {
	now := time.Now()
	l := &live{con: r.con, log: r.log, statePath: filepath.Join(r.ws.StateDir, runStateFile), heartbeat: defaultHeartbeat}
	if r.opts.heartbeat.set {
		l.heartbeat = r.opts.heartbeat.d
	}
	l.st = runState{PID: os.Getpid(), Workspace: r.ws.Name, Mode: r.mode, Started: r.start, Phase: phaseStarting,
		Max: r.maxIterations, Keyboard: r.sup.kb != nil, Updated: now}
	l.act.root = r.env.projectRoot
	l.opts = panelOpts{color: r.con.color, oneLine: r.con.level == outputVerbose}
	l.status = newStatusWatch(r.ws.statusPath(), time.Duration(r.cfg.count("notification.statusWatch.debounceMs"))*time.Millisecond,
		r.cfg.values["notification.statusWatch.notifyOnlyMeaningful"].(bool))
	if ts, ok := l.status.prime(); ok {
		l.setTasks(ts)
	}
	l.statusNotify = r.cfg.values["notification.statusWatch.enabled"].(bool)
	if u := r.cfg.str("notifyUrl"); u != "" {
		events := r.cfg.list("notifyEvents")
		r.log.printf("[notifications: %s, events: %v]", redactURL(u), events)
		l.notify = newNotifier(u, events, func(msg string) { r.log.printf("WARNING: %s", msg) })
		l.notify.onScreen(func(msg string) { r.con.errorf("%s", msg) })
	}
	r.live = l
	// Without a panel to keep current or notifications to send, nothing
	// is shown between an iteration's start and end.
	r.sup.quiet = !r.con.panelWanted() && l.notify == nil
	if r.sup.quiet {
		l.nudge = make(chan struct{}, 1)
		r.sup.nudge, r.sup.pending = l.nudge, l.stateDirty
	}
	r.con.onLine = l.addLine
	changed := r.stop.changed
	r.stop.changed = func(source string) {
		changed(source)
		l.stopChanged(source)
	}
	poll := r.sup.onPoll
	r.sup.onPoll = func() {
		poll()
		l.tick(time.Now(), r.sup.interrupt, r.sup.suspended)
	}
	l.notify.send(noteStart(r.ws.Name, r.mode, r.maxIterations))
	l.mu.Lock()
	l.dirty, l.redraw = true, true
	l.mu.Unlock()
	l.update(now)
}

// beats reports whether heartbeat lines are printed: plain output, not
// quiet, a heartbeat set.
func (l *live) beats() bool {
	return !l.con.panelWanted() && l.con.level != outputQuiet && l.heartbeat > 0
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
	if ms := suspended.Milliseconds(); ms != l.st.SuspendedMS {
		l.st.SuspendedMS = ms
		l.dirty = true
	}
	if l.beats() && l.st.Phase == phaseRunning && !now.Before(l.nextBeat) {
		l.nextBeat = now.Add(l.heartbeat)
		heartbeat = fmt.Sprintf("… iteration %d: %s, %s", l.st.Iteration, compactDuration(now.Sub(l.st.IterStarted)), nowText(&l.st, now, false))
	}
	l.mu.Unlock()
	if msg, ts, ok := l.status.poll(now); ok {
		l.mu.Lock()
		l.setTasks(ts)
		l.st.Updated = now
		l.dirty, l.redraw = true, true
		l.mu.Unlock()
		l.log.printf("[status update: %s]", msg)
		if l.statusNotify {
			l.notify.send(noteStatus(l.st.Workspace, msg, ts.Complete))
		}
	}
	if heartbeat != "" {
		l.con.progressf("%s", heartbeat)
	}
	l.update(now)
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
		l.con.refreshForeground()
		l.con.setPanel(lines)
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

// writeState writes the state file; a failure is one warning in the log.
func (l *live) writeState(data []byte) {
	// Not fsynced: the file is for watching a live run, and is rewritten
	// within a second of every event.
	if err := writeFileAtomicSync(l.statePath, data, 0o600, false); err != nil && !l.writeErr {
		l.writeErr = true
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

// iterationStarted: iteration n's agent starts.
func (l *live) iterationStarted(n int) {
	if l == nil {
		return
	}
	now := time.Now()
	l.mu.Lock()
	l.st.Phase, l.st.Iteration, l.st.IterStarted, l.st.Updated = phaseRunning, n, now, now
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

// iterationDone: an iteration was counted (r.iter, r.cost are up to date).
func (l *live) iterationDone(r *runner, o *iterationOutcome, ts taskStatus, failed bool) {
	if l == nil {
		return
	}
	now := time.Now()
	l.mu.Lock()
	l.st.Phase, l.st.Done, l.st.Cost, l.st.Updated = phaseBetween, r.iter, r.cost, now
	l.st.IterTotalMS += o.elapsed.Milliseconds()
	l.st.Activity = activity{}
	if ts.Source != "" {
		l.setTasks(ts)
	}
	l.dirty, l.redraw = true, true
	l.mu.Unlock()
	_, why := o.failed()
	l.notify.send(noteIteration(r.ws.Name, r.iter, r.maxIterations, failed, why, o.elapsed, o.cost(), ts))
	if r.iter%notifyMilestone == 0 {
		l.notify.send(noteMilestone(r.ws.Name, r.iter, r.elapsed(), r.cost, ts))
	}
	l.update(now)
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

// waitLeft: a wait (the delay, or a usage-limit wait) has left to go.
func (l *live) waitLeft(left time.Duration, limit bool) {
	if l == nil {
		return
	}
	now := time.Now()
	phase := phaseDelay
	if limit {
		phase = phaseLimit
	}
	until := now.Add(left)
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
	l.st.Phase, l.st.WaitUntil = phaseBetween, time.Time{}
	l.dirty, l.redraw = true, true
	l.mu.Unlock()
}

// limitReached: the run waits for a usage limit's reset; msg says until
// when.
func (l *live) limitReached(msg string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.st.Phase = phaseLimit
	l.st.Activity = activity{}
	l.dirty, l.redraw = true, true
	ws := l.st.Workspace
	l.mu.Unlock()
	l.notify.send(noteLimit(ws, msg))
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

// ended: the run ends. The panel gives way to the run's last line, the
// state file says how the run ended, and the last notification is sent.
func (l *live) ended(end ending, summary string) {
	if l == nil {
		return
	}
	now := time.Now()
	l.mu.Lock()
	l.st.Phase, l.st.Ended, l.st.Ending, l.st.Hint, l.st.ExitCode = phaseEnded, true, summary, end.hint, end.code
	l.st.Activity, l.st.Updated = activity{}, now
	data := l.marshal(now)
	ws := l.st.Workspace
	l.mu.Unlock()
	l.con.dropPanel()
	if data != nil {
		l.writeState(data)
	}
	l.notify.send(noteEnd(ws, end, summary))
}

// drain gives the pending notifications up to notifyExitWait to go out,
// less if a signal comes.
func (l *live) drain(abort <-chan os.Signal) {
	if l == nil {
		return
	}
	l.notify.close(notifyExitWait, abort)
}
