package main

// This file runs one iteration's agent and judges its outcome. The rules
// are: the prompt goes to the agent's stdin, which is then closed (an
// argument over 128 KiB fails with E2BIG, and arguments show in ps); the
// output format is always stream-json with --verbose; the environment is the
// tool's minus the variables that make a nested claude refuse to start;
// stdout and stderr are always drained, whatever the agent prints; and the
// outcome comes from the last result event, not from the exit status alone
// (the real CLI exits 0 after SIGINT and 1 on results that carry
// is_error:true).

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// agentSpec is how to start the agent.
type agentSpec struct {
	path   string   // resolved executable
	argv0  string   // os.Args[0] for the child (the mock agent needs its name)
	args   []string // after argv0
	prompt []byte
	dir    string
	env    []string // added to the inherited environment
	// mergeOutput sends stderr to the stdout pipe (test commands, scripts).
	mergeOutput bool
}

// droppedEnv are variables that make a nested claude refuse to start or
// attach to the parent's session.
var droppedEnv = []string{"CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT"}

func agentEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, d := range droppedEnv {
			if k == d {
				drop = true
			}
		}
		if !drop {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// stderrTailSize is how much of the agent's stderr is kept for error reports.
const stderrTailSize = 4 << 10

// agent is one running agent process, or another child supervised the same
// way (a test command, a condition's script).
type agent struct {
	pid, pgid int
	started   time.Time
	// name is what messages call the process ("claude").
	name string
	// timeout and idle are its hang protections (0: none).
	timeout, idle time.Duration
	// done is closed once the process has exited and been reaped; waitErr
	// is then its status.
	done    chan struct{}
	waitErr error
	// streamDone and stderrDone are closed when the readers reach EOF.
	streamDone, stderrDone chan struct{}
	stdoutR, stderrR       *os.File

	lastOutput atomic.Int64 // unix nanoseconds of the last byte read
	resultAt   atomic.Int64 // unix nanoseconds of the result event, or 0

	// Written by the readers, read after streamDone / stderrDone.
	outcome iterationOutcome
	tail    tailBuffer
}

// startAgent starts the agent. Its formatted transcript goes to transcript,
// its raw stderr to stderrLog.
func startAgent(spec agentSpec, transcript, stderrLog io.Writer) (*agent, error) {
	return startChild(spec, func(a *agent) { a.readStream(transcript) }, stderrLog)
}

// startChild starts a child in its own process group, with the prompt on
// its stdin; readOut reads its stdout until EOF and closes streamDone.
func startChild(spec agentSpec, readOut func(a *agent), stderrLog io.Writer) (*agent, error) {
	cmd := &exec.Cmd{Path: spec.path, Args: append([]string{spec.argv0}, spec.args...), Dir: spec.dir, Env: agentEnv(spec.env...)}
	cmd.SysProcAttr = agentSysProcAttr()
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return nil, err
	}
	errR, errW := outR, outW
	if !spec.mergeOutput {
		errR, errW, err = os.Pipe()
		if err != nil {
			stdinR.Close()
			stdinW.Close()
			outR.Close()
			outW.Close()
			return nil, err
		}
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, outW, errW
	a := &agent{name: "claude", done: make(chan struct{}), streamDone: make(chan struct{}), stderrDone: make(chan struct{}), stdoutR: outR, stderrR: errR}
	if spec.mergeOutput {
		a.stderrR = nil
		close(a.stderrDone)
	}

	// Pdeathsig fires when the thread that started the child exits, not the
	// process: start and wait from one goroutine locked to its thread, and
	// let that thread end only once the child is reaped.
	startErr := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			startErr <- err
			return
		}
		startErr <- nil
		a.waitErr = cmd.Wait()
		close(a.done)
	}()
	err = <-startErr
	stdinR.Close()
	outW.Close()
	if !spec.mergeOutput {
		errW.Close()
	}
	if err != nil {
		stdinW.Close()
		outR.Close()
		if !spec.mergeOutput {
			errR.Close()
		}
		return nil, err
	}
	a.pid = cmd.Process.Pid
	a.pgid = a.pid
	a.started = time.Now()
	a.lastOutput.Store(a.started.UnixNano())

	go func() {
		// A write error means the agent exited without reading its prompt;
		// its outcome says why.
		stdinW.Write(spec.prompt)
		stdinW.Close()
	}()
	go readOut(a)
	if !spec.mergeOutput {
		go a.readStderr(stderrLog)
	}
	return a, nil
}

// readLines reads the child's stdout line by line until EOF, then closes
// streamDone. each gets every line, or (line nil) the size of one over max;
// out is flushed whenever the next read may block, so that what came so far
// shows at once.
func (a *agent) readLines(out io.Writer, max int, each func(line []byte, skipped int64)) {
	defer close(a.streamDone)
	defer a.stdoutR.Close()
	lr := newLineReader(&touchReader{r: a.stdoutR, t: &a.lastOutput}, max)
	flush := func() {
		if fl, ok := out.(interface{ Flush() }); ok {
			fl.Flush()
		}
	}
	defer flush()
	for {
		if lr.r.Buffered() == 0 {
			flush()
		}
		line, skipped, err := lr.next()
		if err != nil {
			return
		}
		each(line, skipped)
	}
}

// readStream decodes stdout until EOF.
func (a *agent) readStream(transcript io.Writer) {
	f := newFormatter(transcript)
	a.readLines(transcript, maxLineBytes, func(line []byte, skipped int64) {
		if skipped > 0 {
			a.outcome.skipped++
			fmt.Fprintf(transcript, "[stream-json line of %d bytes skipped: over the %d MiB limit]\n", skipped, maxLineBytes>>20)
			return
		}
		if len(bytes.TrimSpace(line)) == 0 {
			return
		}
		e, err := decodeEvent(line)
		if err != nil {
			a.outcome.malformed++
			fmt.Fprintf(transcript, "[malformed stream-json line (%v): %s]\n", err, clip(string(line), 200))
			return
		}
		a.outcome.observe(e, a)
		formatSafely(f, e, line, transcript)
	})
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

// touchReader records the time of every successful read.
type touchReader struct {
	r io.Reader
	t *atomic.Int64
}

func (t *touchReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		t.t.Store(time.Now().UnixNano())
	}
	return n, err
}

func (a *agent) readStderr(log io.Writer) {
	defer close(a.stderrDone)
	defer a.stderrR.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := a.stderrR.Read(buf)
		if n > 0 {
			a.lastOutput.Store(time.Now().UnixNano())
			a.tail.Write(buf[:n])
			if log != nil {
				log.Write(buf[:n])
			}
		}
		if err != nil {
			return
		}
	}
}

// closeReaders ends the readers at once: the pipes are held open by a
// process the sweep could not end.
func (a *agent) closeReaders() {
	now := time.Now()
	a.stdoutR.SetReadDeadline(now)
	if a.stderrR != nil {
		a.stderrR.SetReadDeadline(now)
	}
}

// tailBuffer keeps the last stderrTailSize bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > stderrTailSize {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-stderrTailSize:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// iterationOutcome is what one iteration's agent did.
type iterationOutcome struct {
	result        *streamEvent // the last result event
	rateLimit     *rateLimitInfo
	syntheticText string // the CLI's own error message, if any
	events        int
	malformed     int
	skipped       int

	exitCode   int
	exitSignal string
	stderrTail string
	// hang names the hang protection that ended the agent, if one did.
	hang string
	// interrupted is set when a signal ended the iteration.
	interrupted bool
	// elapsed is the iteration's duration, time suspended excluded.
	elapsed  time.Duration
	startErr error
}

// observe records what matters of e.
func (o *iterationOutcome) observe(e *streamEvent, a *agent) {
	o.events++
	switch e.Type {
	case "result":
		o.result = e
		a.resultAt.Store(time.Now().UnixNano())
	case "rate_limit_event":
		if e.RateLimitInfo != nil && e.RateLimitInfo.Status == "rejected" {
			o.rateLimit = e.RateLimitInfo
		}
	case "assistant":
		if e.Message != nil && e.Message.Model == "<synthetic>" {
			for _, b := range e.Message.blocks() {
				if b.Type == "text" {
					o.syntheticText = b.Text
				}
			}
		}
	}
}

// finish records the process's exit.
func (o *iterationOutcome) finish(waitErr error, stderrTail string) {
	o.stderrTail = stderrTail
	o.exitCode, o.exitSignal = childExit(waitErr)
}

// childExit decodes a child's wait error: its exit code (-1 when a signal
// ended it) and, then, the signal ("signal: killed").
func childExit(waitErr error) (code int, signal string) {
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) {
		code = ee.ExitCode()
		if code < 0 {
			signal = ee.String()
		}
	}
	return code, signal
}

// failed reports whether the iteration is a failed one, and why.
func (o *iterationOutcome) failed() (bool, string) {
	switch {
	case o.startErr != nil:
		return true, o.startErr.Error()
	case o.hang != "":
		return true, o.hang
	case o.result == nil:
		if o.exitSignal != "" {
			return true, "agent " + o.exitSignal + " without a result"
		}
		if o.exitCode != 0 {
			return true, fmt.Sprintf("agent exited with status %d without a result", o.exitCode)
		}
		return true, "agent exited without a result"
	case o.result.IsError || o.result.Subtype != "success":
		text := o.result.resultText()
		if text == "" {
			text = "no result text"
		}
		return true, fmt.Sprintf("%s: %s", o.result.Subtype, clip(text, 300))
	}
	return false, ""
}

// cost is the iteration's reported cost in USD.
func (o *iterationOutcome) cost() float64 {
	if o.result != nil && o.result.TotalCostUSD != nil {
		return *o.result.TotalCostUSD
	}
	return 0
}

// resultText is the final result's text ("" when there is none).
func (o *iterationOutcome) resultText() string {
	if o.result == nil || o.result.Result == nil {
		return ""
	}
	return *o.result.Result
}

// usageLimit reports whether the iteration hit a usage limit, and when it
// resets (zero when unknown). Only the result and the CLI's own error text
// are read, never tool output.
func (o *iterationOutcome) usageLimit(now time.Time) (bool, time.Time) {
	succeeded := o.result != nil && !o.result.IsError && o.result.Subtype == "success"
	if succeeded {
		return false, time.Time{}
	}
	var reset time.Time
	if o.rateLimit != nil && o.rateLimit.ResetsAt > 0 {
		reset = time.Unix(o.rateLimit.ResetsAt, 0)
	}
	texts := []string{o.syntheticText}
	if o.result != nil {
		texts = append(texts, o.result.resultText())
	}
	hit := o.rateLimit != nil || (o.result != nil && o.result.APIErrorStatus != nil && *o.result.APIErrorStatus == 429)
	for _, t := range texts {
		if !isLimitText(t) {
			continue
		}
		hit = true
		if reset.IsZero() {
			if r, ok := limitResetFromText(t, now); ok {
				reset = r
			}
		}
	}
	return hit, reset
}

// fatalError is an agent failure that no retry can fix.
type fatalError struct {
	msg, hint string
}

// fatal reports whether the outcome is a known fatal one.
func (o *iterationOutcome) fatal() *fatalError {
	texts := []string{o.syntheticText, o.stderrTail}
	if o.result != nil {
		texts = append(texts, o.result.resultText())
	}
	all := strings.Join(texts, "\n")
	switch {
	case strings.Contains(all, "--dangerously-skip-permissions cannot be used with root"):
		return &fatalError{"claude refuses --dangerously-skip-permissions when run as root", "set IS_SANDBOX=1 only inside a sandbox (a container or VM), or run as a normal user"}
	case strings.Contains(all, "Not logged in"):
		return &fatalError{"claude is not logged in", "run claude once and /login, or set ANTHROPIC_API_KEY"}
	case strings.Contains(all, "Invalid API key"):
		return &fatalError{"claude reports an invalid API key", "check ANTHROPIC_API_KEY, or run claude and /login"}
	case strings.Contains(all, "requires --verbose"):
		return &fatalError{"claude rejected the stream-json options", "check claude.args for conflicting options; claude --version should be 1.0 or later"}
	}
	return nil
}
