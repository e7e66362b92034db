package main

// This file runs the test command (--test-cmd) and the scripts of
// custom_script conditions, and reads test results. The rules are: a child
// runs under the same supervision as the agent (Ctrl+C, Ctrl+Z, SIGTERM, a
// timeout), its output goes to the log (and the screen with -v), and the
// results are read from the output as it streams, so a chatty test suite
// costs no memory: go test -json first, then go test -v's "--- PASS:"
// lines, TAP ("ok 1 - name" / "not ok 2 - name"), then a "N passed,
// N failed" summary line; failing all of these, the whole command is one
// test, passing on exit status 0.

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// defaultTestTimeout bounds one run of the test command.
const defaultTestTimeout = 10 * time.Minute

// Test output formats.
const (
	formatGoJSON  = "go test -json"
	formatGoV     = "go test -v"
	formatTAP     = "TAP"
	formatSummary = "summary line"
	formatExit    = "exit status"
)

// testResults is one run of the test command.
type testResults struct {
	Format         string
	Passed, Failed int
	// names maps each named test to whether it passed; nil when the output
	// names no tests.
	names    map[string]bool
	ExitCode int
	Err      string // the run did not finish: timeout, could not start
}

// runFailed reports whether the run counts as a failing one.
func (t *testResults) runFailed() bool { return t.Err != "" || t.ExitCode != 0 || t.Failed > 0 }

// allPass reports whether every test passed (and there was at least one).
func (t *testResults) allPass() bool { return !t.runFailed() && t.Passed > 0 }

// summary describes the run in a few words.
func (t *testResults) summary() string {
	if t.Err != "" {
		return t.Err
	}
	s := fmt.Sprintf("%d passed, %d failed", t.Passed, t.Failed)
	if t.Format == formatExit {
		s = fmt.Sprintf("exit status %d", t.ExitCode)
	} else if t.ExitCode != 0 {
		s += fmt.Sprintf(", exit status %d", t.ExitCode)
	}
	return s
}

// testParser reads test results from output lines.
type testParser struct {
	goJSON map[string]bool // test (or failed package) → passed
	goV    map[string]bool
	tap    map[string]bool
	// packages that reported a failing test, and those that failed
	// without one (a build failure), from go test -json.
	pkgTestFailed map[string]bool
	pkgFailed     []string

	summaryPassed, summaryFailed int
	haveSummary                  bool
}

func newTestParser() *testParser {
	return &testParser{goJSON: map[string]bool{}, goV: map[string]bool{}, tap: map[string]bool{}, pkgTestFailed: map[string]bool{}}
}

var (
	goVLine     = lazyRegexp(`^\s*--- (PASS|FAIL|SKIP): (\S+)`)
	tapLine     = lazyRegexp(`^(not )?ok\s+(\d+)\b\s*(?:-\s*)?([^#]*?)\s*(#.*)?$`)
	tapSkip     = lazyRegexp(`(?i)^#\s*(skip|todo)\b`)
	summaryWord = lazyRegexp(`(?i)\b(\d+) (passed|passing|failed|failing)\b`)
)

// record sets a test's result; a name seen twice passes only if both runs
// passed (the same test name in two packages).
func record(m map[string]bool, name string, passed bool) {
	if old, ok := m[name]; ok {
		passed = passed && old
	}
	m[name] = passed
}

// line reads one line of output.
func (p *testParser) line(b []byte) {
	if len(b) > 0 && b[0] == '{' {
		var ev struct {
			Action, Package, Test string
		}
		if json.Unmarshal(b, &ev) == nil && ev.Action != "" {
			switch {
			case ev.Test != "" && (ev.Action == "pass" || ev.Action == "fail"):
				record(p.goJSON, ev.Test, ev.Action == "pass")
				if ev.Action == "fail" {
					p.pkgTestFailed[ev.Package] = true
				}
			case ev.Test == "" && ev.Action == "fail" && !p.pkgTestFailed[ev.Package]:
				p.pkgFailed = append(p.pkgFailed, ev.Package)
			}
			return
		}
	}
	s := string(b)
	if m := goVLine().FindStringSubmatch(s); m != nil {
		if m[1] != "SKIP" {
			record(p.goV, m[2], m[1] == "PASS")
		}
		return
	}
	if m := tapLine().FindStringSubmatch(s); m != nil {
		directive := strings.TrimSpace(m[4])
		if tapSkip().MatchString(directive) {
			return // skipped, or a known failure (TODO)
		}
		name := m[3]
		if name == "" {
			name = "test " + m[2]
		}
		record(p.tap, name, m[1] == "")
		return
	}
	if ms := summaryWord().FindAllStringSubmatch(s, -1); ms != nil {
		p.haveSummary = true
		for _, m := range ms {
			n, _ := strconv.Atoi(m[1])
			switch strings.ToLower(m[2]) {
			case "passed", "passing":
				p.summaryPassed = n
			default:
				p.summaryFailed = n
			}
		}
	}
}

// results returns the results of a run that ended with exitCode.
func (p *testParser) results(command string, exitCode int) *testResults {
	t := &testResults{ExitCode: exitCode}
	named := func(format string, m map[string]bool) *testResults {
		t.Format, t.names = format, m
		for _, passed := range m {
			if passed {
				t.Passed++
			} else {
				t.Failed++
			}
		}
		return t
	}
	switch {
	case len(p.goJSON) > 0 || len(p.pkgFailed) > 0:
		for _, pkg := range p.pkgFailed {
			record(p.goJSON, pkg, false)
		}
		return named(formatGoJSON, p.goJSON)
	case len(p.goV) > 0:
		return named(formatGoV, p.goV)
	case len(p.tap) > 0:
		return named(formatTAP, p.tap)
	case p.haveSummary:
		t.Format, t.Passed, t.Failed = formatSummary, p.summaryPassed, p.summaryFailed
		return t
	}
	return named(formatExit, map[string]bool{command: exitCode == 0})
}

// childResult is how a test command or script ended.
type childResult struct {
	exitCode int
	err      string // it did not finish: timeout, could not start, interrupted
	elapsed  time.Duration
	// readerLeft: its output's reader still runs (childEnd.readerLeft), and
	// what it fills is not to be read.
	readerLeft bool
}

// sideRunner runs a run's children other than the agent: the test command
// and the scripts of custom_script conditions.
type sideRunner struct {
	sup         *supervisor
	con         *console
	log         *runLog
	live        *live
	lock        *runLock
	dir         string // the project root
	testCmd     string
	testTimeout time.Duration
}

// runChild runs a shell-free command (spec) to its end under the run's
// supervision, with a timeout. Its output (stdout and stderr together) goes
// to the log, and to the screen with -v, and line by line to onLine.
func (r *sideRunner) runChild(name string, spec childSpec, timeout time.Duration, onLine func(line []byte)) childResult {
	spec.dir = r.dir
	spec.mergeOutput = true
	spec.env = append(spec.env, r.lock.markers()...)
	out := r.con.transcript(r.log)
	started := time.Now()
	if r.sup.startBlocked() {
		return childResult{exitCode: -1, err: "interrupted"}
	}
	c, err := startChild(spec, func(c *child) {
		c.readLines(out, 1<<20, func(line []byte, skipped int64) {
			if skipped > 0 {
				fmt.Fprintf(out, "[output line of %d bytes skipped]\n", skipped)
				return
			}
			fmt.Fprintf(out, "%s\n", line)
			if onLine != nil {
				onLine(line)
			}
		})
	}, nil)
	if err != nil {
		return childResult{exitCode: -1, err: fmt.Sprintf("cannot start %s: %v", name, unwrapPathError(err)), elapsed: time.Since(started)}
	}
	r.lock.addChild(c)
	c.name, c.timeout = name, timeout
	end := r.sup.watch(c)
	r.lock.dropChild(c.pid)
	cr := childResult{elapsed: time.Since(started) - end.suspended, readerLeft: end.readerLeft}
	code, signal := childExit(c.waitErr)
	cr.exitCode = code
	switch {
	case r.sup.ending():
		cr.err = "interrupted"
	case end.hang != "":
		cr.err = end.hang
	case signal != "":
		cr.err = name + " " + signal
	}
	return cr
}

// runTests runs the test command once.
func (r *sideRunner) runTests() *testResults {
	cmd := r.testCmd
	r.con.progressf("Running tests: %s", cmd)
	r.live.testsStarted(cmd)
	r.log.section("TESTS", "Command: "+cmd, "Started: "+logTime(time.Now()))
	p := newTestParser()
	cr := r.runChild("test command", childSpec{path: "/bin/sh", argv0: "sh", args: []string{"-c", cmd}}, r.testTimeout, p.line)
	if cr.readerLeft {
		p = newTestParser() // its reader still fills the other one
	}
	t := p.results(cmd, cr.exitCode)
	t.Err = cr.err
	mark := "✓"
	if t.runFailed() {
		mark = "✗"
	}
	if t.Err != "" {
		r.con.progressf("%s Tests: %s", mark, t.summary())
	} else {
		r.con.progressf("%s Tests: %s (%s) in %s", mark, t.summary(), t.Format, roundDuration(cr.elapsed))
	}
	r.log.printf("TESTS: %s (%s)", t.summary(), t.Format)
	r.log.Flush()
	return t
}

// testTimeout is the bound of one test run: the flag's, the conditions',
// or the default.
func testTimeout(flag durationFlag, cfg *stopConfig) time.Duration {
	if flag.set {
		return flag.d
	}
	if cfg.TestTimeout > 0 {
		return cfg.TestTimeout
	}
	return defaultTestTimeout
}

// runScript runs a custom_script condition's script: met on exit 0.
func (r *sideRunner) runScript(c *condition) (bool, string) {
	if r.sup.ending() {
		return false, "not run: interrupted"
	}
	timeout := c.Timeout
	if timeout == 0 {
		timeout = defaultScriptTimeout
	}
	r.log.printf("SCRIPT: %s", strings.Join(append([]string{c.Script}, c.Args...), " "))
	var first string
	path := resolvePath(r.dir, c.Script)
	cr := r.runChild(c.Script, childSpec{path: path, argv0: c.Script, args: c.Args}, timeout, func(line []byte) {
		if first == "" {
			first = strings.TrimSpace(string(line))
		}
	})
	r.log.Flush()
	switch {
	case cr.err != "":
		return false, cr.err
	case cr.exitCode == 0:
		if first != "" {
			return true, fmt.Sprintf("%s succeeded: %s", c.Script, clip(first, 200))
		}
		return true, c.Script + " succeeded"
	}
	return false, fmt.Sprintf("%s exited with status %d", c.Script, cr.exitCode)
}
