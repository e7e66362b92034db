package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// The hostile-file scenarios: every file the tool reads, as each kind of
// hostile file, under each command. Each scenario is a testscript script
// made from the table below, so that a failure prints the script.

// hostileFile is a file the tool reads, as a path from the project root.
type hostileFile struct {
	name string // for the script's name
	path string
}

var hostileFiles = []hostileFile{
	{"instructions", "claude-iterate/workspaces/demo/INSTRUCTIONS.md"},
	{"prompt", "claude-iterate/workspaces/demo/prompts/iteration.md"},
	{"projectconfig", ".claude-iterate.json"},
	{"userconfig", ".config/claude-iterate/config.json"},
	{"metadata", "claude-iterate/workspaces/demo/.metadata.json"},
	{"runstate", "claude-iterate/workspaces/demo/.run-state.json"},
	{"lock", "claude-iterate/workspaces/demo/.lock"},
	{"statusjson", "claude-iterate/workspaces/demo/.status.json"},
	{"todo", "claude-iterate/workspaces/demo/TODO.md"},
	{"history", "claude-iterate/workspaces/demo/history.jsonl"},
}

// hostileKinds are the kinds of hostile file the hostile command makes.
var hostileKinds = []string{"fifo", "zero", "sparse"}

// hostileCommands are the commands run on a workspace with a hostile file.
var hostileCommands = map[string]string{
	"run":     "claude-iterate run demo -m 1",
	"status":  "claude-iterate status demo",
	"list":    "claude-iterate list",
	"watch":   "claude-iterate watch demo",
	"stop":    "claude-iterate stop demo",
	"history": "claude-iterate history demo",
}

// TestHostileFiles is not parallel: TestScript ends every descendant of the
// test process when it ends, which would cut these scenarios short.
func TestHostileFiles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range hostileFiles {
		for _, kind := range hostileKinds {
			for cmd, line := range hostileCommands {
				script := fmt.Sprintf(`# %[1]s as %[2]s under %[3]s: one line naming the file, never a hang
exec claude-iterate init demo --instructions task.md
exec claude-iterate run demo -m 1
hostilerun -base %[6]s
hostile %[2]s %[4]s
hostilerun %[5]s %[6]s

-- task.md --
do it
`, f.name, kind, cmd, f.path, filepath.Base(f.path), line)
				writeScenario(t, dir, f.name+"-"+kind+"-"+cmd, script)
			}
		}
	}
	runGeneratedScripts(t, dir, map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"hostile":    cmdHostile,
		"hostilerun": cmdHostileRun,
	})
}

// writeScenario writes a generated scenario, dir/name.txtar.
func writeScenario(t *testing.T, dir, name, script string) {
	if err := os.WriteFile(filepath.Join(dir, name+".txtar"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
}

// cmdHostile replaces a file with a hostile one: a FIFO, a symbolic link to
// /dev/zero or a 4 GiB sparse file.
//
//	hostile fifo|zero|sparse PATH
func cmdHostile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: hostile fifo|zero|sparse PATH")
	}
	path := ts.MkAbs(args[1])
	ts.Check(os.MkdirAll(filepath.Dir(path), 0o755))
	os.Remove(path)
	switch args[0] {
	case "fifo":
		ts.Check(syscall.Mkfifo(path, 0o600))
	case "zero":
		ts.Check(os.Symlink("/dev/zero", path))
	case "sparse":
		f, err := os.Create(path)
		ts.Check(err)
		ts.Check(f.Truncate(4 << 30))
		ts.Check(f.Close())
	default:
		ts.Fatalf("hostile: unknown kind %q", args[0])
	}
}

// cmdHostileRun runs a command, bounded in time (a hang is a failure, not a
// stuck test), and checks its end. With -base it records the command's end
// with no hostile file. Without, the command must end as it did then (it
// does not read the file), or as it did with a warning naming NAME besides,
// or name NAME: exit 1 with one error line naming it, or exit 0 with a
// warning naming it. Never a hang or a Go runtime
// dump.
//
//	hostilerun -base|NAME command [args...]
func cmdHostileRun(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: hostilerun -base|NAME command [args...]")
	}
	got, stderr := runBounded(ts, args[1:])
	if got != 0 && got != 1 {
		ts.Fatalf("%s exited with status %d; want 0 or 1", args[1], got)
	}
	base := ts.MkAbs(".hostile-base")
	// Digits vary from run to run (times, pids): not part of the end.
	end := fmt.Sprintf("%d\n%s", got, regexp.MustCompile(`[0-9]+`).ReplaceAllString(stderr, "N"))
	if args[0] == "-base" {
		ts.Check(os.WriteFile(base, []byte(end), 0o600))
		return
	}
	data, err := os.ReadFile(base)
	if err == nil && string(data) == end {
		return // the command does not read the file
	}
	// Or it ends as it did, with a warning naming the file besides (a
	// broken config left out: watch with no run still says so).
	var rest []string
	warned := false
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, progName+": warning: ") && strings.Contains(l, args[0]) {
			warned = true
			continue
		}
		rest = append(rest, l)
	}
	if err == nil && warned && string(data) == fmt.Sprintf("%d\n%s", got, regexp.MustCompile(`[0-9]+`).ReplaceAllString(strings.Join(rest, "\n"), "N")) {
		return
	}
	var named []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if strings.HasPrefix(l, progName+": ") && !strings.HasPrefix(l, progName+": hint: ") || strings.Contains(l, "WARNING") || strings.Contains(l, "warning") {
			named = append(named, l)
		}
	}
	if len(named) == 0 || !strings.Contains(strings.Join(named, "\n"), args[0]) || got == 1 && len(named) != 1 {
		ts.Fatalf("exit %d with %d error or warning lines; want one naming %s", got, len(named), args[0])
	}
}

// runBounded runs a command, bounded in time (a hang is a failure, not a
// stuck test), and fails the scenario if it hung or crashed (a Go runtime
// dump). It returns the command's exit status and stderr.
func runBounded(ts *testscript.TestScript, command []string) (status int, stderr string) {
	status = shellStatus(ts.Exec("timeout", append([]string{"-k", "2", "60"}, command...)...))
	stderr = ts.ReadFile("stderr")
	if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "fatal error") || strings.Contains(stderr, "panic:") {
		ts.Fatalf("%s crashed", command[0])
	}
	if status == 124 || status == 137 {
		ts.Fatalf("%s hung", command[0])
	}
	return status, stderr
}
