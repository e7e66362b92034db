package main

// This file implements a run's events: what happens in a run, as values
// (runEvent), written as JSON Lines by 'run --events FILE' for programs
// (orchestrators, dashboards, CI) and turned into notifications for people.
// The rules are:
//
//   - One event, two forms: the event stream and the notifications carry
//     the same events (execution_start, iteration with its record,
//     iteration_milestone, status_update, limit_wait, question, answered,
//     verification_passed, verification_failed, completion, error,
//     stopped); a notification is made from its event (notificationFor).
//   - The stream's last line is an "exit" event with the run's exit code
//     and reason, on every way out a signal allows — a usage error in the
//     flags once --events is read (runRun), a setup error, a usage error
//     found late, Ctrl+C, SIGTERM — only SIGKILL can cut it.
//   - Each event is one line written with one write: a reader following
//     the file never sees half an event. A failed write disables the
//     stream with one warning; the run goes on.
//   - Every run also writes its events, the same lines, to runEventsFile
//     in its workspace's state directory, opened once the run holds the
//     workspace's lock and emptied then, so that 'serve' streams the
//     events of a run started without --events (the registry points
//     there). It is a runtime file, written as the tool's others are: a
//     link, a FIFO or a directory in its place is refused with one
//     warning, and the run goes on without it.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Event names.
const (
	eventStart     = "execution_start"
	eventIteration = "iteration"
	eventMilestone = "iteration_milestone"
	eventStatus    = "status_update"
	eventLimit     = "limit_wait"
	eventQuestion  = "question" // the agent asks the user (question.go)
	eventAnswered  = "answered" // the user's answer is taken
	// A verification's verdict (run --verify).
	eventVerifyPassed = "verification_passed"
	eventVerifyFailed = "verification_failed"
	eventCompleted    = "completion"
	eventError        = "error"
	eventStopped      = "stopped"
	eventExit         = "exit" // the stream's last line; never notified
)

// runEvent is one event of a run.
type runEvent struct {
	Event     string    `json:"event"`
	Time      time.Time `json:"time"`
	Workspace string    `json:"workspace,omitempty"`
	Run       string    `json:"run,omitempty"`
	// Mode and MaxIterations: execution_start, iteration.
	Mode          string `json:"mode,omitempty"`
	MaxIterations int    `json:"maxIterations,omitempty"`
	// Record: iteration.
	Record *iterationRecord `json:"record,omitempty"`
	// Totals and ElapsedMS are the run's so far: iteration, milestone, and
	// the run's end.
	Totals    *workTotals `json:"totals,omitempty"`
	ElapsedMS int64       `json:"elapsedMs,omitempty"`
	// Progress and Complete: the agent's status (status_update, milestone).
	Progress *progressRep `json:"progress,omitempty"`
	Complete bool         `json:"complete,omitempty"`
	// Message: the status update, the limit wait, or the run's last line.
	Message string `json:"message,omitempty"`
	// Question and Answer: question, answered; OnQuestion: what the run
	// does about the question (wait, stop, continue).
	Question   string `json:"question,omitempty"`
	Answer     string `json:"answer,omitempty"`
	OnQuestion string `json:"onQuestion,omitempty"`
	// Verdict: verification_passed, verification_failed.
	Verdict *verdict `json:"verdict,omitempty"`
	// Reason, Hint, ExitCode and Signal: the run's end, and exit.
	Reason   string `json:"reason,omitempty"`
	Hint     string `json:"hint,omitempty"`
	ExitCode *int   `json:"exitCode,omitempty"`
	Signal   string `json:"signal,omitempty"`
}

// endEvent is the event of a run's end: completion, error or stopped.
func endEvent(end ending, summary string) runEvent {
	code := end.code
	ev := runEvent{Event: eventError, Message: summary, Reason: end.reason, Hint: end.hint, ExitCode: &code}
	switch {
	case end.status == statusCompleted:
		ev.Event = eventCompleted
	case end.code == exitOK || end.signal != nil:
		ev.Event = eventStopped
	}
	if end.signal != nil {
		ev.Signal = signalName(end.signal)
	}
	return ev
}

// exitEvent is the stream's last event.
func exitEvent(code int, reason string) runEvent {
	return runEvent{Event: eventExit, Reason: reason, ExitCode: &code}
}

// errorExitCode is the exit code an error ends a command with (cli.go's
// report), for the exit event of a run that could not start.
func errorExitCode(err error) int {
	var ue *usageError
	var ie *inputError
	var ee *exitCodeError
	switch {
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue), errors.As(err, &ie):
		return exitUsage
	}
	return exitError
}

// runEventsFile is the run's own event stream, in its workspace's state
// directory.
const runEventsFile = ".events.jsonl"

// eventWriter writes a run's events as JSON Lines. A nil *eventWriter
// writes nothing. The lines are written by a goroutine of their own, in
// order: a reader that stops reading (a paused pager, a FIFO nobody
// drains) holds up the stream, never the run nor its answer to a signal.
type eventWriter struct {
	mu     sync.Mutex
	w      io.Writer
	closer io.Closer
	name   string
	// unsettled is the regular file given to --events until settle has
	// checked it and emptied it.
	unsettled *os.File
	failed    bool
	warn      func(msg string)
	queue     [][]byte      // lines not yet written
	idle      chan struct{} // closed when the writing goroutine has written them all; nil: none runs
	// also gets the same lines, through a queue and a goroutine of its
	// own: the run's events file beside --events (with).
	also *eventWriter
	// held is where the events file is, watched before each write
	// (stillThere): the run's own, or the regular file given to --events
	// (users); no path for standard output, a FIFO or a device.
	held heldPath
	// users: held is the file given to --events, watched by usersStill;
	// viaLink: its path was a symbolic link to it (the user's), followed
	// to see whether it still names the file.
	users, viaLink bool
}

// usersStill reports whether the path given to --events still names f:
// the file itself, or through the link the user gave.
func (ew *eventWriter) usersStill(f *os.File) bool {
	if !ew.viaLink {
		return heldAt(f, ew.held.path)
	}
	fi, err := f.Stat()
	if err != nil {
		return true
	}
	sfi, err := os.Stat(ew.held.path)
	return err == nil && os.SameFile(fi, sfi)
}

// eventsFIFOPoll is how often a FIFO given to --events is tried again while
// nobody reads it.
const eventsFIFOPoll = 50 * time.Millisecond

// openEvents opens the event stream: "-" is standard output. A FIFO is
// opened once a process reads it, as a blocking open would, but the wait
// is told on stderr and an ending signal from sigs ends it.
func openEvents(path string, stdout, stderr io.Writer, sigs *signals) (*eventWriter, error) {
	if path == "-" {
		return &eventWriter{w: stdout, name: "standard output"}, nil
	}
	told := false
	for {
		f, err := openEventsFile(path)
		if err == nil {
			ew := &eventWriter{w: f, closer: f, name: path}
			if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
				ew.unsettled = f
				// Watched: the agent may remove or replace it mid-run.
				if abs, err := filepath.Abs(path); err == nil {
					lfi, lerr := os.Lstat(abs)
					ew.held = heldPath{path: abs, dir: filepath.Dir(abs)}
					ew.users = true
					ew.viaLink = lerr == nil && !os.SameFile(fi, lfi)
				}
			}
			return ew, nil
		}
		if !errors.Is(err, syscall.ENXIO) { // ENXIO: a FIFO nobody reads
			return nil, usagef("invalid value %q for flag --events: %v", path, unwrapPathError(err))
		}
		if !told {
			fmt.Fprintf(stderr, "%s: waiting for a process to read the FIFO %s (Ctrl+C to give up)\n", progName, path)
			told = true
		}
		select {
		case sig := <-sigs.c:
			switch sig {
			case syscall.SIGTSTP:
				stopHere(sigs) // suspend.go: also under a wrapper
				continue
			case syscall.SIGCONT:
				continue
			}
			fmt.Fprintf(stderr, "%s: stopped on %s, waiting for a reader of %s\n", progName, signalName(sig), path)
			return nil, sigs.exitError(sig)
		case <-time.After(eventsFIFOPoll):
		}
	}
}

// openRunEvents opens the run's own events file, path, through the one
// writer (openFile: a link, a FIFO or a directory there is refused, and
// nothing is written through it), and empties it. The run calls it once
// it holds its workspace's lock: a run refused by the lock leaves the
// live run's file alone.
func openRunEvents(path string) (*eventWriter, error) {
	// Emptied anyway: a second name (a hard link an agent made) is let go
	// of first, so that the file elsewhere it names is neither emptied nor
	// written, and this run has its events.
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && linkCount(fi) > 1 {
		os.Remove(path)
	}
	// Not O_TRUNC: the open, which may follow a link made meanwhile inside
	// the workspace, empties nothing before openFile has refused it.
	f, err := openFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "truncate", Path: path, Err: unwrapPathError(err)}
	}
	return &eventWriter{w: f, closer: f, name: path, held: newHeldPath(path, filepath.Dir(path))}, nil
}

// stillThere makes sure the events file is still the one at its path
// (heldfile.go), the run's own or the regular file given to --events: one
// the agent removed or replaced is created anew, exclusively, through the
// one writer (never through a link, never into a FIFO, a directory or a
// file the run did not make), or, refused, no more events are written to
// it; either with one warning. The writing goroutine calls it.
func (ew *eventWriter) stillThere() bool {
	f, ok := ew.w.(*os.File)
	if ew.held.path == "" || !ok {
		return true
	}
	var nf *os.File
	msg := ""
	if ew.users {
		if ew.usersStill(f) {
			return true
		}
		// The user's file: the run says whatever happened, its
		// directory gone too.
		var err error
		if nf, err = createHeld(ew.held.path); err == nil {
			msg = replacedMsg(ew.name, "the next events go to a new file")
		} else {
			why := unwrapPathError(err).Error()
			if errors.Is(err, fs.ErrNotExist) {
				why = "its directory " + filepath.Dir(ew.name) + " is gone"
			}
			msg = replacedMsg(ew.name, why+"; no more events are written to it")
		}
	} else {
		if !ew.held.moved(f) {
			return true
		}
		open := func() (*os.File, error) { return createHeld(ew.held.path) }
		nf, msg = reopenHeld(ew.held.path, open, "the next events go to a new file", "no more events are written to it")
	}
	ew.mu.Lock()
	f.Close()
	if nf == nil {
		ew.failed = true
	} else {
		ew.w, ew.closer = nf, nf
	}
	warn := ew.warn
	ew.mu.Unlock()
	if msg != "" && warn != nil {
		warn(msg)
	}
	return nf != nil
}

// ownEvents opens the run's own events file; a refusal is one warning
// (with the rm hint when something else is there), and the run goes on
// without it ('serve' then makes its iteration events
// from its history).
func ownEvents(r *runner) *eventWriter {
	path := filepath.Join(r.ws.StateDir, runEventsFile)
	ew, err := openRunEvents(path)
	if err != nil {
		r.con.errorf("warning: writing %s: %v ('claude-iterate serve' shows only this run's iterations)", path, unwrapPathError(err))
		r.log.printf("WARNING: writing %s: %v", path, unwrapPathError(err))
		r.con.faultHint(path, relPath(r.env.projectRoot, path), err)
		return nil
	}
	return ew
}

// with returns the writer of ew's events that gives them to also too: ew
// itself, or also when ew is nil.
func (ew *eventWriter) with(also *eventWriter) *eventWriter {
	if ew == nil {
		return also
	}
	ew.also = also
	return ew
}

// onFailure sets what a failed write of ew, or of the writer it gives
// its events to too, says: once each.
func (ew *eventWriter) onFailure(warn func(msg string)) {
	for ; ew != nil; ew = ew.also {
		ew.warn = warn
	}
}

// settle empties the regular file given to --events before the first
// event, once the run knows its workspace (ws, nil if none was found): a
// file of the workspace (its metadata, history, a log, a task file) is
// refused instead, untouched, and nothing is written to it.
func (ew *eventWriter) settle(ws *workspace) error {
	if ew == nil || ew.unsettled == nil {
		return nil
	}
	f := ew.unsettled
	ew.unsettled = nil
	if ws != nil && workspaceHolds(ws, f) {
		ew.mu.Lock()
		ew.failed = true
		ew.mu.Unlock()
		return usagef("invalid value %q for flag --events: a file of workspace %s (give a path outside %s)", ew.name, ws.Name, ws.StateDir)
	}
	if err := f.Truncate(0); err != nil {
		return fmt.Errorf("emptying %s (--events): %w", ew.name, unwrapPathError(err))
	}
	return nil
}

// workspaceHolds reports whether f is a file of ws: below its state
// directory, or one of its task files.
func workspaceHolds(ws *workspace, f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	for _, name := range []string{instructionsFile, todoFile, statusFile, answersFile, settingsFile} {
		if tfi, err := os.Stat(filepath.Join(ws.Dir, name)); err == nil && os.SameFile(fi, tfi) {
			return true
		}
	}
	real, err := filepath.EvalSymlinks(f.Name())
	if err == nil {
		real, err = filepath.Abs(real)
	}
	if err != nil {
		return false
	}
	state, err := filepath.EvalSymlinks(ws.StateDir)
	if err == nil {
		state, err = filepath.Abs(state)
	}
	return err == nil && within(state, real)
}

// write queues ev, stamped with the time and the run, as one line; it never
// waits for the stream.
func (ew *eventWriter) write(ev runEvent) {
	if ew == nil {
		return
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now().UTC()
	}
	data, err := json.Marshal(&ev)
	if err != nil {
		return
	}
	line := append(data, '\n')
	for w := ew; w != nil; w = w.also {
		w.enqueue(line)
	}
}

// enqueue queues line, and starts the writing goroutine when none runs.
func (ew *eventWriter) enqueue(line []byte) {
	ew.mu.Lock()
	defer ew.mu.Unlock()
	if ew.failed {
		return
	}
	ew.queue = append(ew.queue, line)
	if ew.idle == nil {
		ew.idle = make(chan struct{})
		go ew.flush(ew.idle)
	}
}

// flush writes the queued lines, one at a time, until none is left, then
// closes idle.
func (ew *eventWriter) flush(idle chan struct{}) {
	defer close(idle)
	for {
		ew.mu.Lock()
		if len(ew.queue) == 0 || ew.failed {
			ew.queue, ew.idle = nil, nil
			ew.mu.Unlock()
			return
		}
		line := ew.queue[0]
		ew.queue = ew.queue[1:]
		ew.mu.Unlock()
		if !ew.stillThere() {
			continue // said; failed, unless the file was opened anew
		}
		if _, err := ew.w.Write(line); err != nil {
			ew.mu.Lock()
			given := ew.failed // given up already (drain, close): said there
			ew.failed = true
			ew.mu.Unlock()
			if !given && ew.warn != nil {
				ew.warn(fmt.Sprintf("writing events to %s: %v; no more events are written", ew.name, unwrapPathError(err)))
			}
		}
	}
}

// drain waits until the queued lines are written (awaitAtExit: a run ended
// by a signal, bounded, waits at most exitWait; any run stops waiting on an
// ending signal from abort). Lines given up are counted on stderr.
func (ew *eventWriter) drain(abort <-chan os.Signal, bounded bool, stderr io.Writer) {
	if ew == nil {
		return
	}
	ew.also.drain(abort, bounded, stderr) // a file of the workspace's: first, as it is quick
	ew.mu.Lock()
	idle := ew.idle
	ew.mu.Unlock()
	if idle == nil {
		return
	}
	if awaitAtExit(idle, abort, bounded) {
		return
	}
	ew.mu.Lock()
	left := len(ew.queue)
	ew.failed = true // the writing goroutine writes no more than the line it holds
	ew.mu.Unlock()
	fmt.Fprintf(stderr, "%s: gave up writing events to %s: its reader does not read (%s not written)\n", progName, ew.name, plural(left+1, "event"))
}

// close closes the stream's file.
func (ew *eventWriter) close() {
	if ew == nil || ew.closer == nil {
		return
	}
	ew.mu.Lock()
	defer ew.mu.Unlock()
	ew.closer.Close()
	ew.failed = true
}

// notificationFor is the notification of an event.
func notificationFor(ev runEvent) notification {
	ws := ev.Workspace
	switch ev.Event {
	case eventStart:
		return notification{event: ev.Event, title: ws + ": run started", priority: "3", tags: "rocket",
			body: fmt.Sprintf("Running %s (%s mode, up to %s)", ws, ev.Mode, plural(ev.MaxIterations, "iteration"))}
	case eventIteration:
		rec := ev.Record
		nt := notification{event: ev.Event, title: fmt.Sprintf("%s: iteration %d/%d done", ws, rec.Iteration, ev.MaxIterations), priority: "2", tags: "white_check_mark"}
		verb := "done"
		if !rec.OK {
			nt.title = fmt.Sprintf("%s: iteration %d/%d %s", ws, rec.Iteration, ev.MaxIterations, endWord(rec))
			nt.priority, nt.tags, verb = "3", "x", endWord(rec)
		}
		nt.body = fmt.Sprintf("Iteration %d/%d %s in %s, %s%s", rec.Iteration, ev.MaxIterations, verb, roundDuration(rec.duration()), costText(rec.CostUSD, rec.CostEstimated), progressSuffix(rec.Progress))
		if !rec.OK {
			nt.body += "\n" + clip(rec.Reason, 500)
		}
		return nt
	case eventMilestone:
		body := fmt.Sprintf("%s in %s, %s so far", plural(ev.Totals.Iterations, "iteration"), compactDuration(time.Duration(ev.ElapsedMS)*time.Millisecond), costText(ev.Totals.CostUSD, ev.Totals.estimated()))
		if p := ev.Progress; p != nil {
			body += fmt.Sprintf(" · %d/%d items", p.Completed, p.Total)
		}
		return notification{event: ev.Event, title: fmt.Sprintf("%s: %s", ws, plural(ev.Totals.Iterations, "iteration")), priority: "3", tags: "checkered_flag", body: body}
	case eventStatus:
		nt := notification{event: ev.Event, title: ws + ": status update", priority: "2", tags: "bar_chart", body: ev.Message}
		if ev.Complete {
			nt.priority, nt.tags = "4", "tada"
		}
		return nt
	case eventLimit:
		return notification{event: ev.Event, title: ws + ": usage limit", priority: "4", tags: "hourglass", body: ev.Message}
	case eventQuestion, eventAnswered:
		return questionNotification(ev)
	case eventVerifyPassed:
		return notification{event: ev.Event, title: ws + ": verification passed", priority: "3", tags: "white_check_mark",
			body: clip(ev.Verdict.Summary, 1000)}
	case eventVerifyFailed:
		body := ev.Verdict.Verdict + ": " + clip(ev.Verdict.Summary, 1000)
		for _, is := range ev.Verdict.Issues {
			body += "\n- " + clip(is, 300)
		}
		return notification{event: ev.Event, title: ws + ": verification failed", priority: "4", tags: "x", body: clip(body, 3000)}
	}
	body := ev.Message
	if ev.Hint != "" {
		body += "\nhint: " + ev.Hint
	}
	switch ev.Event {
	case eventCompleted:
		return notification{event: ev.Event, title: ws + ": completed", priority: "4", tags: "white_check_mark,tada", body: body}
	case eventStopped:
		return notification{event: ev.Event, title: ws + ": stopped", priority: "3", tags: "stop_sign", body: body}
	}
	return notification{event: eventError, title: ws + ": failed", priority: "5", tags: "rotating_light", body: body}
}

// endWord says how an iteration ended, as lines and notifications say it.
func endWord(rec *iterationRecord) string {
	switch rec.End {
	case endDone:
		return "done"
	case endInterrupted:
		return "interrupted"
	case endLimit:
		return "hit a usage limit"
	case endVerify:
		return "verification: " + rec.Verification.verdictOr("error")
	}
	return "failed"
}

// progressSuffix is " · 3/5 items (2 remaining)", or "".
func progressSuffix(p *progressRep) string {
	if p == nil {
		return ""
	}
	return fmt.Sprintf(" · %d/%d items (%d remaining)", p.Completed, p.Total, p.Total-p.Completed)
}
