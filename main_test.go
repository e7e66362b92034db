package main

import (
	"errors"
	"flag"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

var updateScripts = flag.Bool("u", false, "update testscript files with the actual output")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"claude-iterate": main,
		"claude":         fakeClaudeMain,
		"codex":          fakeCodexMain,
		"own-children":   ownChildrenMain,
		"orphan-behind":  orphanBehindMain,
		"ttin-probe":     ttinProbeMain,
		"sigkey-probe":   sigkeyProbeMain,
		"maxrss-probe":   maxrssProbeMain,
	})
}

// unignoreSignals gives the tools the tests start the signal dispositions
// of an interactive shell's: under nohup (SIGHUP) or as a background job of
// a script (SIGINT, SIGQUIT) the test process starts with them ignored, and
// an ignored signal is inherited across exec — the scenarios that send them
// would then test nohup's behaviour instead of theirs. A signal caught here
// is reset to its default in the children; for the test process, catching
// one that was ignored changes nothing. (signal-nohup.txtar runs nohup
// itself.)
func unignoreSignals() {
	for _, sig := range []os.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM} {
		if signal.Ignored(sig) {
			signal.Notify(make(chan os.Signal, 1), sig)
		}
	}
}

// scriptEnv is what every scenario's environment holds: a user config
// directory and a state directory (the registry of live runs) of its own
// (the latter beside $WORK, out of the scenarios' git trees and listings),
// no second of sleep at each race-enabled
// binary's exit (the scripts run hundreds of them), and no pause after a
// failed iteration (the scenarios provoke hundreds; run-failure-pause.txtar
// sets $CLAUDE_ITERATE_FAILURE_PAUSE to see it).
func scriptEnv(env *testscript.Env) {
	env.Setenv("CLAUDE_ITERATE_FAILURE_PAUSE", "0s")
	env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, ".config"))
	env.Setenv("XDG_STATE_HOME", env.WorkDir+".state")
	env.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
}

func TestScript(t *testing.T) {
	t.Parallel()
	unignoreSignals()
	// Leaked descendants of the tools under test re-parent here, where they
	// stay observable (the gone command) and are ended at the end.
	if err := becomeSubreaper(); err != nil {
		t.Logf("cannot become a subreaper: %v", err)
	}
	t.Cleanup(func() {
		if n := sweepDescendants(true, nil, 0); n > 0 {
			t.Errorf("%d processes were left running by the scripts", n)
		}
	})
	fixtures, err := filepath.Abs("testdata/fixtures")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 scriptDir(t),
		RequireExplicitExec: true,
		UpdateScripts:       *updateScripts,
		Setup: func(env *testscript.Env) error {
			env.Setenv("FIXTURES", fixtures)
			scriptEnv(env)
			return nil
		},
		Cmds:      scriptCommands(),
		Condition: scriptCondition,
	})
}

// runGeneratedScripts runs the scripts a test wrote in dir, with the
// scenarios' environment and cmds (the scenarios' commands when nil).
// With $CLAUDE_ITERATE_SCRIPTS set (a quick pass of chosen scenarios, as
// scripts/mutation.sh makes), the generated ones are skipped unless the
// expression matches the test's name.
func runGeneratedScripts(t *testing.T, dir string, cmds map[string]func(ts *testscript.TestScript, neg bool, args []string)) {
	if filter := os.Getenv("CLAUDE_ITERATE_SCRIPTS"); filter != "" {
		if re, err := regexp.Compile(filter); err != nil || !re.MatchString(t.Name()) {
			t.Skipf("$CLAUDE_ITERATE_SCRIPTS=%q: the scenarios %s generates are not among them", filter, t.Name())
		}
	}
	if cmds == nil {
		cmds = scriptCommands()
	}
	testscript.Run(t, testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			scriptEnv(env)
			return nil
		},
		Cmds: cmds,
	})
}

// scriptDir is the directory of the scripts to run: all of them, or with
// $CLAUDE_ITERATE_SCRIPTS set (a regular expression), those whose names
// match it, for a quick pass (scripts/mutation.sh runs one per mutant).
func scriptDir(t *testing.T) string {
	const all = "testdata/script"
	filter := os.Getenv("CLAUDE_ITERATE_SCRIPTS")
	if filter == "" {
		return all
	}
	re, err := regexp.Compile(filter)
	if err != nil {
		t.Fatalf("$CLAUDE_ITERATE_SCRIPTS: %v", err)
	}
	names, err := filepath.Glob(filepath.Join(all, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range names {
		if !re.MatchString(strings.TrimSuffix(filepath.Base(name), ".txtar")) {
			continue
		}
		abs, err := filepath.Abs(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(abs, filepath.Join(dir, filepath.Base(name))); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// scriptCommands are the custom testscript commands.
func scriptCommands() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	cmds := map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"status":   cmdStatus,
		"gone":     cmdGone,
		"waitfile": cmdWaitFile,
		"httpsink": cmdHTTPSink, "within": cmdWithin, // httpsink_test.go
		"maxrss": cmdMaxRSS, // memcheck_test.go
	}
	for k, v := range ptyCommands() {
		cmds[k] = v
	}
	for k, v := range archiveCommands() {
		cmds[k] = v
	}
	for k, v := range serveCommands() { // serve_test.go
		cmds[k] = v
	}
	return cmds
}

// cmdStatus runs a command and asserts its exact exit status; a death by
// signal n counts as 128+n, as a shell reports it.
//
//	status N command [args...]
func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: status N command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("status: bad exit status %q", args[0])
	}
	got := shellStatus(ts.Exec(args[1], args[2:]...))
	if got < 0 {
		ts.Fatalf("status: running %s: %v", args[1], err)
	}
	if got != want {
		ts.Fatalf("%s exited with status %d; want %d", args[1], got, want)
	}
}

// shellStatus maps a command's error to a shell-style status: 128+n for a
// death by signal n, -1 when it did not run.
func shellStatus(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return -1
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ee.ExitCode()
}

// fileExists reports whether path exists.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// cmdGone asserts that the processes whose pids are in the files are dead
// (or zombies), waiting up to a deadline for a SIGKILL to take effect.
//
//	gone PIDFILE...
func cmdGone(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: gone PIDFILE...")
	}
	for _, f := range args {
		pid, err := strconv.Atoi(strings.TrimSpace(ts.ReadFile(f)))
		if err != nil || pid <= 0 {
			ts.Fatalf("gone: %s holds no pid", f)
		}
		deadline := time.Now().Add(5 * time.Second)
		for procState(pid) != 0 {
			if time.Now().After(deadline) {
				syscall.Kill(pid, syscall.SIGKILL)
				ts.Fatalf("process %d (from %s) is still running", pid, f)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// cmdWaitFile waits until a file (a glob) exists and, if given, its content
// matches a regular expression.
//
//	waitfile GLOB [REGEXP]
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: waitfile GLOB [REGEXP]")
	}
	var re *regexp.Regexp
	if len(args) == 2 {
		re = regexp.MustCompile(args[1])
	}
	deadline := time.Now().Add(termTimeout)
	for {
		matches, _ := filepath.Glob(ts.MkAbs(args[0]))
		for _, m := range matches {
			data, err := os.ReadFile(m)
			if err == nil && (re == nil || re.Match(data)) {
				return
			}
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitfile: %s did not show %v within %s", args[0], re, termTimeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
