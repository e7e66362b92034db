package main

// This file runs claude-iterate against the real claude CLI: the scenarios in
// testdata/realclaude/*.txtar, one subtest each, drive the binary (the test
// binary registered as claude-iterate in TestMain, as in TestScript) with
// claude.command pointing at the CLI named by $CLAUDE_ITERATE_TEST_CLAUDE
// (scripts/install-claude.sh installs the tested version). The CLI talks to a
// fake Messages API on loopback (fakeapi_test.go), started per scenario from
// the scenario's "api" file (in which $WORK stands for the scenario's
// directory), so the runs are offline, fast and repeatable.
//
// The scenarios run one at a time, so that "no process is left" can be
// checked precisely: every process still alive below the test process,
// other than the scenario's own terminal shell, was left by the run. For
// the same reason TestRealClaude is not parallel with the other tests.
//
// Commands added to the pty harness and TestScript's (status, gone,
// waitfile, term…):
//
//	api served N        the fake API answered exactly N model requests
//	api tool-errors N   exactly N tool results came back as errors
//	noprocs             no process is left running (the terminal's shell aside)
//
// Condition: [root] — the test runs as root.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// realClaudeEnv names the variable holding the CLI under test.
const realClaudeEnv = "CLAUDE_ITERATE_TEST_CLAUDE"

// offlineEnv keeps the real CLI offline and quiet: the fake API, a dummy
// subscription token (so it reads the usage-limit headers as a subscriber
// would), no telemetry, update checks or other calls home.
var offlineEnv = []string{
	"CLAUDE_CODE_OAUTH_TOKEN=sk-ant-oat01-fake-token-for-tests",
	"DISABLE_TELEMETRY=1",
	"DISABLE_AUTOUPDATER=1",
	"DISABLE_ERROR_REPORTING=1",
	"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	// Root may use bypass mode only in a declared sandbox; the scenario
	// about the refusal empties it.
	"IS_SANDBOX=1",
}

func TestRealClaude(t *testing.T) {
	cli := realCLI(t, realClaudeEnv, "scripts/install-claude.sh", "claude")
	runRealScenarios(t, "testdata/realclaude", cmdAPI, func(env *testscript.Env) error {
		return setupRealClaude(env, cli)
	})
}

// realCLI returns the CLI named by the variable envName (set to the last
// line that installer prints), or skips the test; name names the CLI in the
// test's log.
func realCLI(t *testing.T, envName, installer, name string) string {
	cli := os.Getenv(envName)
	if cli == "" {
		t.Skipf("$%s is not set: run %s and set it to the path it prints last, e.g.\n"+
			"\t%s=$(%s | tail -n1) go test -run %s ./...", envName, installer, envName, installer, t.Name())
	}
	if !filepath.IsAbs(cli) {
		t.Fatalf("$%s=%s: want an absolute path", envName, cli)
	}
	out, err := exec.Command(cli, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", cli, err)
	}
	t.Logf("%s CLI under test: %s (%s)", name, strings.TrimSpace(string(out)), cli)
	return cli
}

// runRealScenarios runs the real-CLI scenarios in dir one after the other,
// each set up by setup, with the commands api and noprocs besides the pty
// harness's and TestScript's, and the condition [root]. What is left
// running when they are done fails the test.
func runRealScenarios(t *testing.T, dir string, api func(*testscript.TestScript, bool, []string), setup func(*testscript.Env) error) {
	unignoreSignals()
	if err := becomeSubreaper(); err != nil {
		t.Logf("cannot become a subreaper: %v", err)
	}
	t.Cleanup(func() {
		if left := killLeftovers(0); len(left) > 0 {
			t.Errorf("processes were left running by the real-CLI scenarios: %s", strings.Join(left, ", "))
		}
	})
	p := testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		UpdateScripts:       *updateScripts,
		Setup:               setup,
		Cmds:                scriptCommands(),
		Condition: func(cond string) (bool, error) {
			if cond == "root" {
				return os.Geteuid() == 0, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	}
	p.Cmds["api"] = api
	p.Cmds["noprocs"] = cmdNoProcs
	if deadline, ok := t.Deadline(); ok {
		p.Deadline = deadline
	}
	testscript.RunT(serialT{t}, p)
}

// setupRealClaude gives one scenario its environment and its fake API.
func setupRealClaude(env *testscript.Env, cli string) error {
	if err := setupRealHome(env); err != nil {
		return err
	}
	env.Setenv("CLAUDE_ITERATE_CLAUDE", cli)
	for _, kv := range offlineEnv {
		k, v, _ := strings.Cut(kv, "=")
		env.Setenv(k, v)
	}
	script, err := scenarioAPIScript(env, parseAPIScript)
	if err != nil {
		return err
	}
	api := startFakeAPI(script, func(format string, args ...any) { env.T().Log(fmt.Sprintf(format, args...)) })
	env.Defer(api.close)
	env.Values[fakeAPIKey{}] = api
	env.Setenv("ANTHROPIC_BASE_URL", api.url())
	return nil
}

// setupRealHome gives a real-CLI scenario a HOME of its own and
// TestScript's environment.
func setupRealHome(env *testscript.Env) error {
	home := filepath.Join(env.WorkDir, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	env.Setenv("HOME", home)
	scriptEnv(env)
	return nil
}

// scenarioAPIScript reads a scenario's "api" file (none: an empty script)
// with parse. Only $WORK is replaced, by the scenario's directory: the tool
// calls' shell commands keep their own $ signs.
func scenarioAPIScript(env *testscript.Env, parse func(string) ([]apiStep, error)) ([]apiStep, error) {
	data, err := os.ReadFile(filepath.Join(env.WorkDir, "api"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return parse(strings.ReplaceAll(string(data), "$WORK", env.WorkDir))
}

// fakeAPIKey finds a scenario's fake API in its testscript values.
type fakeAPIKey struct{}

// cmdAPI asserts what the fake API saw.
//
//	api served N | api tool-errors N
func cmdAPI(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: api served|tool-errors N")
	}
	want, err := strconv.Atoi(args[1])
	if err != nil {
		ts.Fatalf("api: bad count %q", args[1])
	}
	api := ts.Value(fakeAPIKey{}).(*fakeAPI)
	api.mu.Lock()
	served, toolErrors := api.served, api.toolErrors
	api.mu.Unlock()
	switch args[0] {
	case "served":
		if served != want {
			ts.Fatalf("the fake API answered %d model requests; want %d", served, want)
		}
	case "tool-errors":
		if len(toolErrors) != want {
			ts.Fatalf("%d tool results were errors; want %d: %q", len(toolErrors), want, toolErrors)
		}
	default:
		ts.Fatalf("api: unknown check %q", args[0])
	}
}

// cmdNoProcs asserts that no process is left: nothing runs below the test
// process but this scenario's terminal shell. Leftovers are killed, then
// reported.
//
//	noprocs
func cmdNoProcs(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: noprocs")
	}
	shell := 0
	if v, ok := sessions.Load(ts); ok {
		shell = v.(*termSession).cmd.Process.Pid
	}
	if left := killLeftovers(shell); len(left) > 0 {
		ts.Fatalf("processes left running: %s", strings.Join(left, ", "))
	}
}

// killLeftovers kills every live process below the test process but except
// (0: none), reaps the dead ones re-parented to it, and describes the live
// ones it found.
func killLeftovers(except int) []string {
	self := os.Getpid()
	var left []string
	for _, p := range descendants(self, listProcs()) {
		switch {
		case p.pid == except:
		case p.state == 'Z':
			if p.ppid == self {
				reap(p.pid)
			}
		default:
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.pid))
			left = append(left, fmt.Sprintf("%d (%s)", p.pid, strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))))
			syscall.Kill(p.pid, syscall.SIGKILL)
		}
	}
	return left
}

// serialT runs testscript's scenarios one after the other: its Parallel
// does nothing.
type serialT struct{ *testing.T }

func (t serialT) Parallel() {}

func (t serialT) Run(name string, f func(testscript.T)) {
	t.T.Run(name, func(t *testing.T) { f(serialT{t}) })
}

func (t serialT) Verbose() bool { return testing.Verbose() }

// TestPassedEnvCoversOfflineEnv keeps the terminal harness's shell in the
// same offline environment as the scenarios' exec commands.
func TestPassedEnvCoversOfflineEnv(t *testing.T) {
	for _, kv := range append(offlineEnv, "CLAUDE_ITERATE_CLAUDE=", "ANTHROPIC_BASE_URL=") {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(passedEnv, k) {
			t.Errorf("passedEnv lacks %s, which the real-CLI scenarios set", k)
		}
	}
}
