package main

// This file starts the agent — the AI coding CLI, claude in -p mode — for one
// iteration, and reads its stream. The rules are: the prompt goes to the
// agent's stdin, which is then closed (an argument over 128 KiB fails with
// E2BIG, and arguments show in ps); the output format is always stream-json
// with --verbose, whatever the output level, because the tool needs the
// result event; every event is decoded, observed for the outcome and
// formatted for the transcript, and a line that cannot be decoded or is over
// the line cap is noted and skipped, never fatal.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"time"
)

// notFoundMessage is what every command that starts claude says when there
// is none.
const notFoundMessage = "claude CLI not found: install it or set --claude / claude.command"

// agentLookupError explains why agent's command cmd, which exec.LookPath
// failed to find with err, cannot be used: not found in $PATH (a name:
// the install hint, install), or a path (given where from says: "--claude",
// "$CLAUDE_ITERATE_CODEX", a config key and its file) that does not exist,
// or is no program (a directory, not executable). The message names the
// agent once and the path's problem; the hint, where the path came from.
func agentLookupError(agent, cmd, from, install string, err error) error {
	if !strings.ContainsRune(cmd, '/') && errors.Is(err, exec.ErrNotFound) {
		if agent == agentClaude {
			return withHint(errors.New(notFoundMessage), "looked for %q in $PATH", cmd)
		}
		return withHint(fmt.Errorf("%s CLI not found: looked for %q in $PATH", agent, cmd), "%s", install)
	}
	set := fmt.Sprintf("set %s to the %s program", from, agent)
	if errors.Is(err, fs.ErrNotExist) {
		return withHint(fmt.Errorf("%s CLI %s does not exist", agent, cmd), "%s", set)
	}
	reason := err
	var ee *exec.Error
	if errors.As(err, &ee) {
		reason = unwrapPathError(ee.Err)
	}
	if errors.Is(err, fs.ErrPermission) {
		set = fmt.Sprintf("make it executable (chmod +x %s), or %s", shellQuote(cmd), set)
	}
	return withHint(fmt.Errorf("%s CLI %s cannot be run: %v", agent, cmd, reason), "%s", set)
}

// startAgent starts the agent. Its formatted transcript goes to transcript,
// its raw stderr to stderrLog; what it did is recorded in the returned
// outcome, complete once the child's streamDone and stderrDone are closed;
// onEvent (if set) sees every event, on the reader's goroutine.
func startAgent(spec childSpec, transcript, stderrLog io.Writer, onEvent func(*streamEvent)) (*child, *iterationOutcome, error) {
	o := &iterationOutcome{costEstimated: spec.costEstimated}
	c, err := startChild(spec, func(c *child) {
		defer close(c.streamDone)
		defer c.stdoutR.Close()
		onResult := func() { c.resultAt.Store(time.Now().UnixNano()) }
		r := &touchReader{r: c.stdoutR, t: &c.lastOutput}
		if spec.decoder != nil {
			decodeAgentStream(r, transcript, o, onResult, onEvent, spec.decoder())
			return
		}
		decodeStream(r, transcript, o, onResult, onEvent)
		if spec.costEstimated && o.result != nil {
			o.result.costEstimated = true
		}
	}, stderrLog)
	if err != nil {
		return nil, nil, err
	}
	c.isAgent = true
	// An agent whose output closed without a result has nothing more to
	// say: the after-result watchdog's grace starts then (supervisor.go).
	go func() {
		<-c.streamDone
		<-c.stderrDone
		c.closedAt.Store(time.Now().UnixNano())
	}()
	return c, o, nil
}

// agentStartFailed is the outcome of an agent, run from spec, that did not
// start (err) at started.
func agentStartFailed(spec childSpec, err error, started time.Time) *iterationOutcome {
	return &iterationOutcome{startErr: fmt.Errorf("starting %s: %w", spec.path, unwrapPathError(err)), elapsed: time.Since(started), costEstimated: spec.costEstimated}
}

// agentEnded completes o, the outcome of the agent c started from spec at
// started, once the supervisor's watch has seen it end: its exit, the
// calls refused late, its hang, whether sup is ending the run, and how
// long it ran (suspensions aside). When its reader was left running, that
// reader still fills o: the outcome is a new, empty one.
func agentEnded(c *child, o *iterationOutcome, end childEnd, spec childSpec, sup *supervisor, started time.Time) *iterationOutcome {
	if end.readerLeft {
		o = &iterationOutcome{costEstimated: spec.costEstimated} // its reader still fills the other one
	}
	o.finish(c.waitErr, c.tail.String())
	o.lateRefused(spec)
	o.hang = end.hang
	o.interrupted = sup.ending()
	o.elapsed = time.Since(started) - end.suspended
	return o
}

// The scenario that proves a panic in a reader goroutine ends the run
// cleanly needs a panic on demand: with testPanicEnv set, an event of type
// testPanicEvent panics the stream reader. Neither occurs outside tests.
const (
	testPanicEnv   = "CLAUDE_ITERATE_TEST_PANIC"
	testPanicEvent = "claude-iterate-test-panic"
)

// decodeStream reads a stream-json stream until EOF: each event is observed
// into o, shown to onEvent (if set) and formatted to transcript; onResult
// is called when a result event arrives.
func decodeStream(r io.Reader, transcript io.Writer, o *iterationOutcome, onResult func(), onEvent func(*streamEvent)) {
	take := eventTaker(transcript, o, onResult, onEvent)
	decodeLines(r, transcript, o, "stream-json", func(line []byte) error {
		e, err := decodeEvent(line)
		if err != nil {
			return err
		}
		if e.badField != "" {
			fmt.Fprintf(transcript, "[stream-json %s event: field %s has an unexpected type and is ignored]\n", e.Type, e.badField)
		}
		if e.Type == testPanicEvent && os.Getenv(testPanicEnv) != "" {
			panic("test panic in the stream reader")
		}
		take(e, line)
		return nil
	})
}

// decodeLines reads an agent's stream until EOF, a line at a time: a line
// over the limit is counted in o and noted in transcript, a blank one
// passed over, and any other one given to decode, whose error counts it as
// malformed and notes it. kind names the lines in the notes.
func decodeLines(r io.Reader, transcript io.Writer, o *iterationOutcome, kind string, decode func(line []byte) error) {
	readLines(r, transcript, maxLineBytes, func(line []byte, skipped int64) {
		if skipped > 0 {
			o.skipped++
			fmt.Fprintf(transcript, "[%s line of %d bytes skipped: over the %d MiB limit]\n", kind, skipped, maxLineBytes>>20)
			return
		}
		if len(bytes.TrimSpace(line)) == 0 {
			return
		}
		if err := decode(line); err != nil {
			o.malformed++
			fmt.Fprintf(transcript, "[malformed %s line (%v): %s]\n", kind, err, clip(string(line), 200))
		}
	})
}

// eventTaker returns what takes each event decoded from a line: it is
// observed into o (onResult called when that reports the result), shown to
// onEvent (if set) and formatted to transcript.
func eventTaker(transcript io.Writer, o *iterationOutcome, onResult func(), onEvent func(*streamEvent)) func(e *streamEvent, line []byte) {
	f := newFormatter(transcript)
	return func(e *streamEvent, line []byte) {
		if o.observe(e) && onResult != nil {
			onResult()
		}
		if onEvent != nil {
			onEvent(e)
		}
		formatSafely(f, e, line, transcript)
	}
}

// formatSafely formats one event; a bug that panics on some input costs
// that event's display, never the run (nor the terminal's mode, which only
// the main goroutine's cleanup restores).
func formatSafely(f *formatter, e *streamEvent, line []byte, transcript io.Writer) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(transcript, "[internal error formatting a %s event: %v]\n", e.Type, p)
		}
	}()
	f.format(e, line)
}

// decodeAgentStream reads the stream of an agent whose adapter has a
// decoder (agentcli.go) as decodeStream reads claude's: each event the
// decoder makes of a line is observed into o, shown to onEvent and
// formatted; a line it cannot decode is noted and skipped.
func decodeAgentStream(r io.Reader, transcript io.Writer, o *iterationOutcome, onResult func(), onEvent func(*streamEvent), dec streamDecoder) {
	take := eventTaker(transcript, o, onResult, onEvent)
	var line []byte
	each := func(e *streamEvent) { take(e, line) }
	decodeLines(r, transcript, o, "agent", func(l []byte) error {
		line = l
		return decodeSafely(dec, l, each)
	})
}

// decodeSafely decodes one line; a decoder's panic on some input costs
// that line, never the run.
func decodeSafely(dec streamDecoder, line []byte, emit func(*streamEvent)) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error decoding it: %v", p)
		}
	}()
	return dec.decode(line, emit)
}
