package main

// This file implements the pseudo-terminal harness: testscript commands that
// drive claude-iterate as a person at a terminal would. A real interactive
// bash runs under the pty, so job control is real: the tool runs as the
// terminal's foreground job, Ctrl+Z stops it and bash shows it stopped, fg and
// bg resume it. (A tool started directly as the pty's session leader would be
// in an orphaned process group, where the kernel drops SIGTSTP.) Every step
// waits for an observable effect — screen text, a process state — never for
// time to pass.
//
//	term start                 start bash -i under a new pty (in $WORK, with
//	                           the script's environment)
//	term type TEXT             type TEXT and Enter
//	term key KEY               press one key: ^C, ^Z, ^D, a character, or up, down, esc, enter
//	term wait REGEXP           wait until the screen shows REGEXP (after the
//	                           previous match)
//	term status N              wait for bash's prompt, ask for $? and assert it is N
//	term dump                  log the whole screen
//	term resize COLS ROWS      change the terminal's size (SIGWINCH)
//	term screen [-raw] FILE    write what the terminal shows (or the raw
//	                           bytes it received) to FILE (vt_test.go)
//	procstate PIDFILE STATE    wait until the process is running, stopped or gone
//	signal PIDFILE SIGNAL      send SIGTERM, SIGHUP, SIGINT… to the process

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"github.com/rogpeppe/go-internal/testscript"
)

// termTimeout bounds every wait: generous for -race on 2 loaded cores (a
// wait that is met returns at once, so only a failure waits it out;
// events-stalled needs 200 iterations under -race within it).
const termTimeout = 60 * time.Second

// termCols is the terminal's width when it starts.
const termCols = 200

func ptyCommands() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"term":      cmdTerm,
		"procstate": cmdProcState,
		"signal":    cmdSignal,
	}
}

// termSession is one pty with bash in it.
type termSession struct {
	cmd    *exec.Cmd
	master *os.File

	mu      sync.Mutex
	screen  bytes.Buffer // everything the terminal showed
	cursor  int          // where the next wait starts looking
	resizes []vtResize   // the width changes, for term screen
	update  chan struct{}
	closed  bool
}

var sessions sync.Map // *testscript.TestScript → *termSession

// passedEnv are the script variables the terminal's shell gets.
var passedEnv = []string{"PATH", "HOME", "TMPDIR", "WORK", "FIXTURES", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "GORACE",
	"FAKE_CLAUDE", "FAKE_CODEX", "FAKE_CODEX_ARGV", "CLAUDE_ITERATE_TEST_PANIC", "CLAUDE_ITERATE_RESULT_WATCHDOG", "CLAUDE_ITERATE_LIMIT_MARGIN", "CLAUDE_ITERATE_MOCK_PACE", "CLAUDE_ITERATE_FAILURE_PAUSE",
	// The real-CLI scenarios (realclaude_test.go: offlineEnv and the fake API).
	"CLAUDE_ITERATE_CLAUDE", "ANTHROPIC_BASE_URL", "CLAUDE_CODE_OAUTH_TOKEN", "DISABLE_TELEMETRY", "DISABLE_AUTOUPDATER",
	"DISABLE_ERROR_REPORTING", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "IS_SANDBOX",
	// The real Codex CLI's (realcodex_test.go: codexEnvKeys).
	"CODEX_HOME", "OPENAI_API_KEY", "HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy",
	"NO_PROXY", "no_proxy", "CLAUDE_ITERATE_CODEX"}

// namedKeys are the keys 'term key' takes by name, and what a terminal
// sends for them.
var namedKeys = map[string]string{"up": "\x1b[A", "down": "\x1b[B", "esc": "\x1b", "enter": "\r"}

func cmdTerm(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: term start|type|key|wait|status|dump|resize|screen ...")
	}
	if args[0] == "start" {
		termStart(ts)
		return
	}
	v, ok := sessions.Load(ts)
	if !ok {
		ts.Fatalf("term %s: no terminal (term start first)", args[0])
	}
	s := v.(*termSession)
	switch args[0] {
	case "type":
		if len(args) != 2 {
			ts.Fatalf("usage: term type TEXT")
		}
		s.write(ts, args[1]+"\r")
	case "key":
		if len(args) != 2 {
			ts.Fatalf("usage: term key KEY")
		}
		k := args[1]
		if len(k) == 2 && k[0] == '^' {
			k = string(rune(k[1] & 0x1f))
		}
		if seq, ok := namedKeys[k]; ok {
			s.write(ts, seq)
			return
		}
		if len(k) != 1 {
			ts.Fatalf("term key: %q is not one key", args[1])
		}
		s.write(ts, k)
	case "wait":
		if len(args) != 2 {
			ts.Fatalf("usage: term wait REGEXP")
		}
		s.wait(ts, args[1])
	case "status":
		if len(args) != 2 {
			ts.Fatalf("usage: term status N")
		}
		// Type only once bash has the terminal back: keys typed while the
		// tool is still exiting may be read, or flushed, by someone else.
		s.wait(ts, `bash\$ `)
		// A Ctrl+C sent as the tool ended may reach bash instead: readline
		// reads a key, then handles the signal and drops the line read so
		// far (TestStress seed 28 lost the "e" of echo). An empty line
		// first takes that loss; it leaves $? as it is (and a Ctrl+C at
		// the prompt sets it to 130, what the tool gives for Ctrl+C too).
		s.write(ts, "\recho \"EXIT=$?.\"\r")
		m := s.wait(ts, `EXIT=(\d+)\.`)
		if m[1] != args[1] {
			ts.Fatalf("exit status %s; want %s", m[1], args[1])
		}
	case "foreground":
		if len(args) != 2 {
			ts.Fatalf("usage: term foreground PIDFILE")
		}
		// After fg, bash echoes the job's command line before it gives
		// the job the terminal: a key typed in between goes to bash.
		s.waitForeground(ts, readPID(ts, args[1]))
	case "resize":
		termResize(ts, s, args[1:])
	case "screen":
		termScreen(ts, s, args[1:])
	case "dump":
		s.mu.Lock()
		ts.Logf("screen:\n%s", s.screen.String())
		s.mu.Unlock()
	default:
		ts.Fatalf("term: unknown subcommand %q", args[0])
	}
}

func termStart(ts *testscript.TestScript) {
	if _, ok := sessions.Load(ts); ok {
		ts.Fatalf("term start: already started")
	}
	cmd := exec.Command("bash", "--norc", "--noprofile", "-i")
	cmd.Dir = ts.MkAbs(".")
	env := []string{"TERM=xterm", "PS1=bash$ ", "HISTFILE=/dev/null", "LANG=C.UTF-8"}
	for _, k := range passedEnv {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	cmd.Env = env
	master, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: termCols})
	if err != nil {
		ts.Fatalf("term start: %v", err)
	}
	s := &termSession{cmd: cmd, master: master, update: make(chan struct{})}
	sessions.Store(ts, s)
	go s.read()
	ts.Defer(func() { s.close() })
	s.wait(ts, `bash\$ `)
	// Plain lines: no bracketed-paste escapes around each command.
	s.write(ts, "bind 'set enable-bracketed-paste off'\r")
	s.wait(ts, `bash\$ `)
}

// read copies the terminal's output to the screen buffer.
func (s *termSession) read() {
	buf := make([]byte, 4096)
	for {
		n, err := s.master.Read(buf)
		s.mu.Lock()
		s.screen.Write(buf[:n])
		close(s.update)
		s.update = make(chan struct{})
		if err != nil {
			s.closed = true
		}
		s.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (s *termSession) write(ts *testscript.TestScript, text string) {
	if _, err := s.master.Write([]byte(text)); err != nil {
		ts.Fatalf("writing to the terminal: %v", err)
	}
}

// waitOverlap is how much of what a wait searched it searches again with
// new output: more than any match a scenario waits for.
const waitOverlap = 64 << 10

// wait waits until the screen, after the cursor, matches re, and moves the
// cursor past the match.
func (s *termSession) wait(ts *testscript.TestScript, expr string) []string {
	re, err := regexp.Compile(expr)
	if err != nil {
		ts.Fatalf("term wait: %v", err)
	}
	deadline := time.NewTimer(termTimeout)
	defer deadline.Stop()
	from := s.cursor // where the search starts
	for {
		// The screen only grows, and only this goroutine moves the
		// cursor: what was written is matched without the lock, so that
		// the reader keeps draining the terminal while a long output is
		// searched (an agent's flood: megabytes; holding the lock, the
		// tool's writes stalled for seconds on a loaded machine).
		s.mu.Lock()
		written, update, closed := s.screen.Bytes(), s.update, s.closed
		s.mu.Unlock()
		rest := written[from:]
		if loc := re.FindSubmatchIndex(rest); loc != nil {
			var m []string
			for i := 0; i < len(loc); i += 2 {
				if loc[i] >= 0 {
					m = append(m, string(rest[loc[i]:loc[i+1]]))
				} else {
					m = append(m, "")
				}
			}
			s.cursor = from + loc[1]
			return m
		}
		// Next time, what is new and the lines of the last waitOverlap
		// bytes before it: searching a whole flood again at every read is
		// quadratic, and under -race on a loaded machine slower than the
		// tool writes (stress seed 83: 6 MB, the wait timed out).
		if next := len(written) - waitOverlap; next > from {
			if i := bytes.LastIndexByte(written[from:next], '\n'); i >= 0 {
				from += i + 1
			}
		}
		if closed {
			ts.Fatalf("term wait %q: the terminal closed; screen:\n%s", expr, written)
		}
		select {
		case <-update:
		case <-deadline.C:
			ts.Fatalf("term wait %q: not shown within %s; screen:\n%s", expr, termTimeout, s.screenText())
		}
	}
}

// waitForeground waits until the terminal's foreground process group is
// pid's.
func (s *termSession) waitForeground(ts *testscript.TestScript, pid int) {
	deadline := time.Now().Add(termTimeout)
	for {
		pgid, err := syscall.Getpgid(pid)
		if err != nil {
			ts.Fatalf("term foreground: process %d: %v", pid, err)
		}
		if fg, err := foregroundGroup(s.master); err == nil && fg == pgid {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("term foreground: process %d's group did not get the terminal within %s", pid, termTimeout)
		}
		time.Sleep(5 * time.Millisecond) // polling the kernel's answer, as waitfile does
	}
}

// screenText is all the terminal has written so far.
func (s *termSession) screenText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.screen.String()
}

// close ends the shell and everything in its session.
func (s *termSession) close() {
	if s.cmd.Process != nil {
		for _, p := range descendants(s.cmd.Process.Pid, listProcs()) {
			syscall.Kill(p.pid, syscall.SIGKILL)
		}
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		s.cmd.Process.Kill()
		s.cmd.Wait()
	}
	s.master.Close()
}

// readPID reads a pid written by the fake claude.
func readPID(ts *testscript.TestScript, file string) int {
	pid, err := strconv.Atoi(strings.TrimSpace(ts.ReadFile(file)))
	if err != nil || pid <= 0 {
		ts.Fatalf("%s holds no pid", file)
	}
	return pid
}

// procState returns a process's state letter from /proc, or 0 when it is
// gone (a zombie counts as gone).
func procState(pid int) byte {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 >= len(data) || data[i+2] == 'Z' || data[i+2] == 'X' {
		return 0
	}
	return data[i+2]
}

func cmdProcState(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: procstate PIDFILE running|stopped|gone")
	}
	pid := readPID(ts, args[0])
	want := args[1]
	matches := func(st byte) bool {
		switch want {
		case "gone":
			return st == 0
		case "stopped":
			return st == 'T'
		case "running":
			return st != 0 && st != 'T' && st != 't'
		}
		ts.Fatalf("procstate: unknown state %q", want)
		return false
	}
	deadline := time.Now().Add(termTimeout)
	for {
		st := procState(pid)
		if matches(st) {
			return
		}
		if time.Now().After(deadline) {
			status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
			stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			logs, _ := filepath.Glob(ts.MkAbs("claude-iterate/workspaces/*/logs/*.log"))
			var tail string
			for _, l := range logs {
				data, _ := os.ReadFile(l)
				tail += fmt.Sprintf("--- %s (last 1500 bytes)\n%s\n", l, data[max(0, len(data)-1500):])
			}
			if v, ok := sessions.Load(ts); ok {
				sess := v.(*termSession)
				sess.mu.Lock()
				scr := sess.screen.String()
				sess.mu.Unlock()
				ts.Logf("screen (last 600 bytes): %q", scr[max(0, len(scr)-600):])
			}
			if tp, err := os.ReadFile(ts.MkAbs("tool.pid")); err == nil {
				tool := strings.TrimSpace(string(tp))
				ts.Logf("tool %s status:\n%s", tool, grepLines(fmt.Sprintf("/proc/%s/status", tool), "State|Sig|ShdPnd"))
				tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%s/task/*", tool))
				for _, t := range tasks {
					sc, _ := os.ReadFile(t + "/syscall")
					wc, _ := os.ReadFile(t + "/wchan")
					ts.Logf("task %s: %s syscall=%s wchan=%s", filepath.Base(t), grepLines(t+"/status", "State"), strings.TrimSpace(string(sc)), wc)
				}
			}
			ts.Fatalf("process %d (%s) is in state %q, not %s\nstat: %s\n%s\n%s", pid, args[0], st, want, stat, status, tail)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func cmdSignal(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: signal PIDFILE SIGNAL")
	}
	sigs := map[string]syscall.Signal{"SIGTERM": syscall.SIGTERM, "SIGHUP": syscall.SIGHUP, "SIGINT": syscall.SIGINT, "SIGKILL": syscall.SIGKILL, "SIGTSTP": syscall.SIGTSTP, "SIGCONT": syscall.SIGCONT}
	sig, ok := sigs[args[1]]
	if !ok {
		ts.Fatalf("signal: unknown signal %q", args[1])
	}
	if err := syscall.Kill(readPID(ts, args[0]), sig); err != nil {
		ts.Fatalf("signal: %v", err)
	}
}

// grepLines returns the lines of file matching expr (for failure reports).
func grepLines(file, expr string) string {
	data, _ := os.ReadFile(file)
	re := regexp.MustCompile(expr)
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if re.MatchString(l) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "; ")
}
