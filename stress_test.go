package main

// TestStress runs seeded, reproducible stopping scenarios through the real
// binary in a pseudo-terminal: a random agent (one that traps SIGINT, ignores
// it, hangs, double-forks a daemon, floods its output, or signals the tool at
// the iteration's boundary, deletes .lock, scrubs its environment and
// daemonizes, changes the terminal's modes, leaves orphans) meets a random way of stopping (Ctrl+C once or
// twice, SIGTERM, SIGHUP, Ctrl+\, Ctrl+Z then fg or bg, the s key, the stop
// command) after a random delay, the tool run directly or under bash -c.
// Every run must end with the right exit status, the terminal's modes as
// they were, no process left, no .stop file, and a complete last section
// in the log.
//
// It runs when CLAUDE_ITERATE_STRESS is set (.ci/run sets it), as
// CLAUDE_ITERATE_STRESS=N runs (default 50); CLAUDE_ITERATE_STRESS_SEED
// replays one seed. Each generated scenario is a testscript file named by
// its seed, kept on failure in the test's output.

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// stressAgents are the agents' scripts; each prints AGENT READY once it is
// working, and writes its pid to agent.pid.
var stressAgents = map[string]string{
	"trap":   "pid agent.pid\ntrap-int 200ms\ntext AGENT READY\nwait-file go\nresult ok\n",
	"ignore": "pid agent.pid\nignore INT\ntext AGENT READY\nwait-file go\nresult ok\n",
	"hang":   "pid agent.pid\ntext AGENT READY\nwait-file go\nresult ok\n",
	"daemon": "pid agent.pid\ndaemon daemon.pid\ngrandchild gc.pid\ntext AGENT READY\nwait-file go\nresult ok\n",
	"flood":  "pid agent.pid\n" + strings.Repeat("bigline 200000\n", 20) + "text AGENT READY\n" + strings.Repeat("bigline 100000\n", 20) + "wait-file go\nresult ok\n",
	// Hostile agents (issue 21): one deletes .lock, one scrubs its
	// environment and daemonizes, one opens the terminal by name and turns
	// ISIG off (hiding the cursor), one leaves orphans, short- and
	// long-lived.
	"dellock": "pid agent.pid\nrm claude-iterate/workspaces/task/.lock\ntext AGENT READY\nwait-file go\nresult ok\n",
	"scrub":   "pid agent.pid\ndaemon-scrubbed daemon.pid\ngrandchild gc.pid\ntext AGENT READY\nwait-file go\nresult ok\n",
	"tty":     "pid agent.pid\nsh sh stty.sh\ntext AGENT READY\nwait-file go\nresult ok\n",
	"orphans": "pid agent.pid\nsh sh orphans.sh\ntext AGENT READY\nwait-file go\nresult ok\n",
}

// stressChecks are what each agent's run must show while it runs (after
// AGENT READY), and at its end (after the terminal check).
var stressChecks = map[string][2]string{
	"dellock": {"status 1 claude-iterate run task -m 1\nstderr 'already being run'\nexec claude-iterate status task\nstdout 'Status: +running'\n", ""},
	"scrub":   {"", "gone daemon.pid gc.pid\n"},
	"orphans": {"", "gone long.1 long.2\n"},
}

// stressFiles are the scripts the hostile agents run.
const stressFiles = `-- stty.sh --
tty=$(readlink /proc/$(cat tool.pid)/fd/0)
stty -isig < "$tty"
printf '\033[?25l' > "$tty"
-- orphans.sh --
for i in 1 2 3 4 5 6 7 8; do (exec sleep 0.1 &); done
for i in 1 2; do (sh -c 'echo $$ > long.'$i'.tmp; mv long.'$i'.tmp long.'$i'; exec sleep 3600' &); done
while [ ! -e long.1 ] || [ ! -e long.2 ]; do sleep 0.01; done
`

// stressLaunchers are the ways the tool is started at the shell's prompt,
// as a format of its command line: directly, so that it leads its job, or
// under a wrapper that leads it (its exit status is the tool's).
var stressLaunchers = []struct{ name, line string }{
	{"direct", "%s"},
	{"under bash -c", "bash -c ''%s; exit $?''"},
}

// stressAction is a way of stopping and what it must end in.
type stressAction struct {
	name   string
	steps  string // script lines after AGENT READY
	status int
	reason string // regexp of the log's Reason line
}

var stressActions = []stressAction{
	// A key's signal comes from the terminal's line discipline, which
	// runs after the write that typed it: "Interrupted" shows it came
	// before the agent is let go.
	{"ctrl-c", "term key ^C\nterm wait Interrupted\ncp empty go\n", 130, `stopped: interrupted \(SIGINT\)`},
	{"ctrl-c-twice", "term key ^C\nterm wait 'press Ctrl\\+C again'\nterm key ^C\n", 130, `stopped: interrupted \(SIGINT\)`},
	{"sigterm", "signal tool.pid SIGTERM\ncp empty go\n", 143, `stopped: interrupted \(SIGTERM\)`},
	{"sighup", "signal tool.pid SIGHUP\ncp empty go\n", 129, `stopped: interrupted \(SIGHUP\)`},
	{"ctrl-backslash", "term key ^\\\n", 131, `stopped: interrupted \(SIGQUIT\)`},
	{"suspend-fg", "term key ^Z\nterm wait 'Stopped +(bash -c .)?claude-iterate'\nterm type fg\nterm wait 'claude-iterate run task.*\\r\\n'\nterm foreground tool.pid\nterm key ^C\nterm wait Interrupted\ncp empty go\n", 130, `stopped: interrupted \(SIGINT\)`},
	{"suspend-bg", "term key ^Z\nterm wait 'Stopped +(bash -c .)?claude-iterate'\nterm type bg\nterm wait 'claude-iterate run task.* &'\nsignal tool.pid SIGTERM\ncp empty go\nterm type 'wait %1'\n", 143, `stopped: interrupted \(SIGTERM\)`},
	{"s-key", "term key s\nterm wait 'Stop requested'\ncp empty go\n", 0, `stopped: stop requested \(keyboard\)`},
	{"stop-command", "exec claude-iterate stop task\ncp empty go\n", 0, `stopped: stop requested \(file\)`},
}

func TestStress(t *testing.T) {
	unignoreSignals()
	runs := os.Getenv("CLAUDE_ITERATE_STRESS")
	if runs == "" {
		t.Skip("set CLAUDE_ITERATE_STRESS=N to run N seeded stopping scenarios (.ci/run does)")
	}
	n, err := strconv.Atoi(runs)
	if err != nil || n <= 0 {
		n = 50
	}
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = uint64(i + 1)
	}
	if s := os.Getenv("CLAUDE_ITERATE_STRESS_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("CLAUDE_ITERATE_STRESS_SEED=%q: %v", s, err)
		}
		seeds = []uint64{seed}
	}
	dir := t.TempDir()
	for _, seed := range seeds {
		script := stressScript(seed)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%d.txtar", seed)), []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := becomeSubreaper(); err != nil {
		t.Logf("cannot become a subreaper: %v", err)
	}
	t.Cleanup(func() {
		if n := sweepDescendants(true, nil, 0); n > 0 {
			t.Errorf("%d processes were left running by the stress runs", n)
		}
	})
	t.Logf("replay one run with CLAUDE_ITERATE_STRESS=1 CLAUDE_ITERATE_STRESS_SEED=<seed>; the seed is in the failing subtest's name")
	runGeneratedScripts(t, dir, nil)
}

// stressScript generates the scenario of one seed.
func stressScript(seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	names := []string{"daemon", "flood", "hang", "ignore", "trap", "dellock", "scrub", "tty", "orphans"}
	agent := names[rng.IntN(len(names))]
	action := stressActions[rng.IntN(len(stressActions))]
	delay := rng.IntN(300)
	// Drawn last, so that a seed keeps the agent, action and delay it
	// had before wrappers (issue 34): the tool run directly, or under a
	// wrapper that then leads the job.
	launcher := stressLaunchers[rng.IntN(len(stressLaunchers))]
	var b strings.Builder
	fmt.Fprintf(&b, "# seed %d: agent %s, action %s after %d ms, %s\n", seed, agent, action.name, delay, launcher.name)
	b.WriteString("env FAKE_CLAUDE=fake.txt\n")
	b.WriteString("exec claude-iterate init task --instructions task.md\n")
	b.WriteString("term start\n")
	b.WriteString("term type 'stty -g > before.txt'\n")
	fmt.Fprintf(&b, "term type '%s'\n", fmt.Sprintf(launcher.line, "claude-iterate run task -v --no-delay -m 1 --interrupt-grace 1s"))
	b.WriteString("term wait 'AGENT READY'\n")
	b.WriteString("waitfile tool.pid\n")
	b.WriteString(stressChecks[agent][0])
	// The random moment: time passing is the subject here, not a wait for
	// something to happen.
	fmt.Fprintf(&b, "exec sleep %d.%03d\n", delay/1000, delay%1000)
	b.WriteString(action.steps)
	fmt.Fprintf(&b, "term status %d\n", action.status)
	// Under a wrapper that died of the signal (Ctrl+\), the shell is back
	// before the tool has ended.
	b.WriteString("gone agent.pid tool.pid\n")
	if agent == "daemon" {
		b.WriteString("gone daemon.pid gc.pid\n")
	}
	b.WriteString("term type 'stty -g > after.txt; echo SAVED-\"0\"'\n")
	b.WriteString("term wait 'SAVED-0\\r'\n")
	b.WriteString("cmp before.txt after.txt\n")
	b.WriteString(stressChecks[agent][1])
	b.WriteString("! exists claude-iterate/workspaces/task/.stop\n")
	b.WriteString("exec sh -c 'cat claude-iterate/workspaces/task/logs/*.log'\n")
	b.WriteString("stdout 'RUN ENDED'\n")
	fmt.Fprintf(&b, "stdout 'Reason: %s'\n", action.reason)
	fmt.Fprintf(&b, "stdout 'Exit code: %d'\n", action.status)
	b.WriteString("\n-- task.md --\ndo it\n-- empty --\n")
	b.WriteString("-- fake.txt --\nppid tool.pid\n" + stressAgents[agent])
	b.WriteString(stressFiles)
	return b.String()
}
