package main

// This file starts a supervised child — the agent, a test command, a
// condition's script — and reads its output. The rules are: the child runs
// in its own process group; its stdin is a pipe that receives the input (the
// agent's prompt) and is then closed, never the terminal; the environment is
// the tool's minus the variables that make a nested claude refuse to start;
// stdout and stderr are always drained, whatever the child prints, so that
// it never blocks on a full pipe; and every child is started from a thread
// that lives as long as the process, because the parent-death signal fires
// when the creating thread exits, not the process (startChild).

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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
	// pipes are its standard streams made in advance (makeChildPipes), off
	// the path from one agent's exit to the next one's start; nil: made at
	// the start. startChild takes them over, and closes them if the child
	// cannot start.
	pipes *childPipes
	// name is what messages call it ("codex"); "" is "claude".
	name string
	// decoder makes the decoder of an agent's stream when its CLI's is
	// not claude's stream-json (agentcli.go); nil: claude's.
	decoder func() streamDecoder
	// costEstimated marks the agent's cost an estimate (costEstimator):
	// codex's, or the mock of a dry run standing in for it; with a result
	// or without one (the outcome's costEstimated).
	costEstimated bool
	// stderrRefusals finds in the end of an agent's stderr the calls its
	// CLI refused without a word in its stream (codex's rejected patches);
	// nil: none are.
	stderrRefusals func(tail string) []permissionDenial
	// sessionRefusals judges, once the agent has ended, the calls its CLI
	// refused: those its stream and stderr showed (shown), and after them
	// the more ones only its session tells (codex's commands refused at
	// once, codexrollout.go); nil: shown stand.
	sessionRefusals func(args, env []string, session string, shown []permissionDenial) (refused []permissionDenial, more int)
}

// childPipes are a child's standard streams: for each, the tool's end and
// the child's (childPipe). Closed ends are nil.
type childPipes struct {
	stdinW, stdinR, outR, outW, errR, errW *os.File
	merged                                 bool // stderr is the stdout pipe
}

// makeChildPipes makes the pipes of a child's standard streams; with
// merged, its stderr is its stdout pipe.
func makeChildPipes(merged bool) (*childPipes, error) {
	p := &childPipes{merged: merged}
	var err error
	if p.stdinW, p.stdinR, err = childPipe(false); err != nil {
		return nil, err
	}
	if p.outR, p.outW, err = childPipe(true); err != nil {
		p.close()
		return nil, err
	}
	p.errR, p.errW = p.outR, p.outW
	if !merged {
		if p.errR, p.errW, err = childPipe(true); err != nil {
			p.close()
			return nil, err
		}
	}
	return p, nil
}

// close closes every end p still holds (p may be nil).
func (p *childPipes) close() {
	if p == nil {
		return
	}
	for _, f := range []*os.File{p.stdinW, p.stdinR, p.outR, p.outW} {
		if f != nil {
			f.Close()
		}
	}
	if !p.merged {
		for _, f := range []*os.File{p.errR, p.errW} {
			if f != nil {
				f.Close()
			}
		}
	}
	*p = childPipes{}
}

// droppedEnv are variables that make a nested claude refuse to start or
// attach to the parent's session.
var droppedEnv = []string{"CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT"}

// childEnv is the tool's environment less droppedEnv, plus extra, which
// overrides a variable of the same name: one entry per name, as exec.Cmd
// makes it.
func childEnv(extra ...string) []string {
	base := baseEnv()
	env := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		if !envNamed(extra, envName(kv)) {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// baseEnv is the tool's environment less droppedEnv, computed once: the
// tool never changes its environment, and an agent starts with it every
// iteration. os.Environ has one entry per name already (the first, as
// getenv finds it).
var baseEnv = sync.OnceValue(func() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !envNamed(droppedEnv, envName(kv)) {
			env = append(env, kv)
		}
	}
	return env
})

// envName is the name of an environment entry "name=value".
func envName(kv string) string {
	k, _, _ := strings.Cut(kv, "=")
	return k
}

// envNamed reports whether list (entries, or bare names) names k.
func envNamed(list []string, k string) bool {
	for _, kv := range list {
		if envName(kv) == k {
			return true
		}
	}
	return false
}

// stderrTailSize is how much of a child's stderr is kept for error reports.
const stderrTailSize = 4 << 10

// child is one running supervised process.
type child struct {
	pid, pgid int
	started   time.Time
	// startTick is its start time as /proc shows it (clock ticks since
	// boot), when the clock read the same tick before and after it started
	// (bootTick); 0: unknown.
	startTick uint64
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
	// closedAt is when the agent's stdout and stderr had both reached end
	// of file (unix nanoseconds), or 0: without a result, it arms the same
	// watchdog as a result does.
	closedAt atomic.Int64

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

// watchdogFrom is when c's after-result watchdog started (unix
// nanoseconds), or 0: at its result event, or, without one, when its
// output closed (an agent with nothing more to say that does not exit).
func (c *child) watchdogFrom() int64 {
	if at := c.resultAt.Load(); at != 0 {
		return at
	}
	return c.closedAt.Load()
}

// resumedAfter moves c's idle clock to now and its watchdog's start by d,
// the time the run was suspended: neither counts that time.
func (c *child) resumedAfter(d time.Duration, now time.Time) {
	c.lastOutput.Store(now.UnixNano())
	for _, t := range []*atomic.Int64{&c.resultAt, &c.closedAt} {
		if at := t.Load(); at != 0 {
			t.Store(at + int64(d))
		}
	}
}

// startChild starts a child in its own session, with spec.input on its
// stdin; readOut reads its stdout until EOF and closes streamDone. The
// child's raw stderr is copied to stderrLog (unless merged into stdout).
//
// It starts the child from the calling goroutine's thread. The child's
// parent-death signal fires when that thread exits, not the process, and
// a Go thread exits only when a goroutine ends while locked to it
// (runtime.LockOSThread without the unlock): the tool never does that
// (shape_test.go holds every LockOSThread to a deferred unlock), so the
// thread lives as long as the process. Starting from a thread of its own
// would cost two thread switches per child, on the iteration's critical
// path.
func startChild(spec childSpec, readOut func(c *child), stderrLog io.Writer) (*child, error) {
	p := spec.pipes
	if p == nil || p.outR == nil || p.merged != spec.mergeOutput {
		p.close()
		var err error
		if p, err = makeChildPipes(spec.mergeOutput); err != nil {
			return nil, err
		}
	}
	stdinW, stdinR, outR, outW, errR, errW := p.stdinW, p.stdinR, p.outR, p.outW, p.errR, p.errW
	fail := func(err error) (*child, error) {
		p.close()
		return nil, err
	}
	// The input goes into the pipe before the child starts, as much of it
	// as the pipe holds (64 KiB unless the system is short of pipe memory):
	// the child finds it there, and no goroutine has to feed it. The pipe
	// is closed once the child runs, off the path to its start.
	rest := fillPipe(stdinW, spec.input)
	// os.StartProcess, not exec.Cmd: the environment is whole already
	// (childEnv), and exec.Cmd would sort it out again every iteration.
	argv := append([]string{spec.argv0}, spec.args...)
	attr := &os.ProcAttr{Dir: spec.dir, Env: childEnv(spec.env...), Files: []*os.File{stdinR, outW, errW}, Sys: childSysProcAttr()}
	c := &child{name: firstNonEmpty(spec.name, "claude"), done: make(chan struct{}), streamDone: make(chan struct{}), stderrDone: make(chan struct{}), stdoutR: outR, stderrR: errR, panicked: make(chan any, 4)}
	if spec.mergeOutput {
		c.stderrR = nil
		close(c.stderrDone)
	}

	before := bootTick()
	var proc *os.Process
	err := trackStart(func() (pid int, err error) {
		if proc, err = os.StartProcess(spec.path, argv, attr); err != nil {
			return 0, err
		}
		return proc.Pid, nil
	})
	if err != nil {
		return fail(err)
	}
	c.startTick = sameTick(before, bootTick())
	if len(rest) == 0 {
		stdinW.Close()
	}
	go func() {
		defer close(c.done)
		defer c.recoverPanic()
		c.waitErr = waitProcess(proc)
	}()
	stdinR.Close()
	outW.Close()
	if !spec.mergeOutput {
		errW.Close()
	}
	*p = childPipes{} // the child's now; the tool's ends close as they finish
	c.pid = proc.Pid
	c.pgid = c.pid
	c.started = time.Now()
	c.lastOutput.Store(c.started.UnixNano())

	if len(rest) > 0 {
		go func() {
			defer c.recoverPanic()
			// A write error means the child exited without reading its
			// input; its outcome says why.
			defer stdinW.Close()
			stdinW.Write(rest)
		}()
	}
	go func() {
		defer c.recoverPanic()
		readOut(c)
	}()
	if !spec.mergeOutput {
		go c.readStderr(stderrLog)
	}
	return c, nil
}

// sameTick is the tick two bootTick calls around a start agree on, or 0
// (unknown) when the start straddled two ticks.
func sameTick(before, after uint64) uint64 {
	if before != after {
		return 0
	}
	return before
}

// fillPipe writes to w, a non-blocking pipe end, as much of data as the
// pipe takes at once, and returns the rest.
func fillPipe(w *os.File, data []byte) []byte {
	rc, err := w.SyscallConn()
	if err != nil {
		return data
	}
	rc.Write(func(fd uintptr) bool {
		for len(data) > 0 {
			n, err := syscall.Write(int(fd), data)
			if err == syscall.EINTR {
				continue
			}
			if err != nil || n <= 0 {
				break
			}
			data = data[n:]
		}
		return true // never wait: the rest is written once the child runs
	})
	return data
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
	defer lr.close()
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
	bp := stderrBuffers.Get().(*[]byte)
	defer stderrBuffers.Put(bp)
	buf := *bp
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

// stderrBuffers keeps the read buffers of children's stderr (see
// readBuffers).
var stderrBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

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
