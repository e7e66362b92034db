package main

// This file starts a supervised child — the agent, a test command, a
// condition's script — and reads its output. The rules are: the child runs
// in its own process group; its stdin is a pipe that receives the input (the
// agent's prompt) and is then closed, never the terminal; the environment is
// the tool's minus the variables that make a nested claude refuse to start;
// stdout and stderr are always drained, whatever the child prints, so that
// it never blocks on a full pipe; and every child of a run is started from
// one OS thread that lives as long as the process (the spawner), because
// the parent-death signal fires when the creating thread exits, not the
// process.

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// childSpec is how to start a child.
type childSpec struct {
	path  string   // resolved executable
	argv0 string   // os.Args[0] for the child (the mock agent needs its name)
	args  []string // after argv0
	input []byte   // written to its stdin, which is then closed
	dir   string
	env   []string // added to the inherited environment
	// mergeOutput sends stderr to the stdout pipe (test commands, scripts).
	mergeOutput bool
}

// droppedEnv are variables that make a nested claude refuse to start or
// attach to the parent's session.
var droppedEnv = []string{"CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT"}

// childEnv is the tool's environment less droppedEnv, plus extra.
func childEnv(extra ...string) []string {
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

// stderrTailSize is how much of a child's stderr is kept for error reports.
const stderrTailSize = 4 << 10

// child is one running supervised process.
type child struct {
	pid, pgid int
	started   time.Time
	// name is what messages call the process ("claude", "test command").
	name string
	// isAgent is set for the agent, whose result event arms the after-result
	// watchdog.
	isAgent bool
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
	resultAt   atomic.Int64 // unix nanoseconds of the agent's result event, or 0

	// tail is the end of its stderr, read after stderrDone.
	tail tailBuffer
	// panicked receives what a panic in one of its goroutines (readers,
	// the stdin writer, the waiter) recovered.
	panicked chan any
}

// recoverPanic, deferred in each of c's goroutines, turns a panic into a
// message to the supervisor instead of a crash with the terminal raw.
func (c *child) recoverPanic() {
	if p := recover(); p != nil {
		select {
		case c.panicked <- p:
		default:
		}
	}
}

// who names c in messages: "the agent", or its name ("test command").
func (c *child) who() string {
	if c.isAgent {
		return "the agent"
	}
	return c.name
}

// spawner starts children from one goroutine locked to its OS thread for
// the life of the process: a child's parent-death signal fires when the
// thread that created it exits, so that thread must outlive the child, and
// one long-lived thread spares the creation and destruction of an OS thread
// for every iteration.
type spawner struct {
	reqs chan spawnRequest
}

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

// newSpawner starts a spawner; its thread ends only with the process.
func newSpawner() *spawner {
	s := &spawner{reqs: make(chan spawnRequest)}
	go func() {
		runtime.LockOSThread() // never unlocked: the thread must not be reused or end
		for r := range s.reqs {
			r.done <- trackStart(func() (int, error) {
				if err := r.cmd.Start(); err != nil {
					return 0, err
				}
				return r.cmd.Process.Pid, nil
			})
		}
	}()
	return s
}

// start starts cmd from the spawner's thread.
func (s *spawner) start(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	s.reqs <- spawnRequest{cmd: cmd, done: done}
	return <-done
}

// startChild starts a child in its own session, with spec.input on its
// stdin, from sp's thread; readOut reads its stdout until EOF and closes
// streamDone. The child's raw stderr is copied to stderrLog (unless merged
// into stdout).
func startChild(sp *spawner, spec childSpec, readOut func(c *child), stderrLog io.Writer) (*child, error) {
	cmd := &exec.Cmd{Path: spec.path, Args: append([]string{spec.argv0}, spec.args...), Dir: spec.dir, Env: childEnv(spec.env...)}
	cmd.SysProcAttr = childSysProcAttr()
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
	c := &child{name: "claude", done: make(chan struct{}), streamDone: make(chan struct{}), stderrDone: make(chan struct{}), stdoutR: outR, stderrR: errR, panicked: make(chan any, 4)}
	if spec.mergeOutput {
		c.stderrR = nil
		close(c.stderrDone)
	}

	err = sp.start(cmd)
	if err == nil {
		go func() {
			defer close(c.done)
			defer c.recoverPanic()
			c.waitErr = cmd.Wait()
			forgetChild(cmd.Process.Pid)
		}()
	}
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
	c.pid = cmd.Process.Pid
	c.pgid = c.pid
	c.started = time.Now()
	c.lastOutput.Store(c.started.UnixNano())

	go func() {
		defer c.recoverPanic()
		// A write error means the child exited without reading its input;
		// its outcome says why.
		defer stdinW.Close()
		stdinW.Write(spec.input)
	}()
	go func() {
		defer c.recoverPanic()
		readOut(c)
	}()
	if !spec.mergeOutput {
		go c.readStderr(stderrLog)
	}
	return c, nil
}

// readLines reads the child's stdout line by line until EOF, then closes
// streamDone. each gets every line, or (line nil) the size of one over max;
// out is flushed whenever the next read may block, so that what came so far
// shows at once.
func (c *child) readLines(out io.Writer, max int, each func(line []byte, skipped int64)) {
	defer close(c.streamDone)
	defer c.stdoutR.Close()
	readLines(&touchReader{r: c.stdoutR, t: &c.lastOutput}, out, max, each)
}

// readLines reads r line by line until EOF or an error, calling each for
// every line, or (line nil) with the size of one over max. out is flushed
// whenever the next read may block.
func readLines(r io.Reader, out io.Writer, max int, each func(line []byte, skipped int64)) {
	lr := newLineReader(r, max)
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

// readStderr copies the child's stderr to log and keeps its tail.
func (c *child) readStderr(log io.Writer) {
	defer close(c.stderrDone)
	defer c.stderrR.Close()
	defer c.recoverPanic()
	buf := make([]byte, 32<<10)
	for {
		n, err := c.stderrR.Read(buf)
		if n > 0 {
			c.lastOutput.Store(time.Now().UnixNano())
			c.tail.Write(buf[:n])
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
func (c *child) closeReaders() {
	now := time.Now()
	c.stdoutR.SetReadDeadline(now)
	if c.stderrR != nil {
		c.stderrR.SetReadDeadline(now)
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
