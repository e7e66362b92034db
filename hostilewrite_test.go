package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// The hostile-write scenarios: every file the tool writes, with a symbolic
// link (to a file outside the workspace holding the file's own content, so
// that a read through it passes and the write is what is tried), a FIFO
// and a directory put in its place in turn, under the command that writes
// it. Each is a testscript script made from the table below, so that a
// failure prints the script.

// hostileWrite is a file the tool writes, as a path from the project root,
// and the command that writes it.
type hostileWrite struct {
	name  string // for the script's name
	path  string
	setup string // script lines run before the hostile file is put there
	cmd   string
	kinds []string // hostileWriteKinds when empty
}

// hostileWriteKinds are what is put where a file is written.
var hostileWriteKinds = []string{"link", "fifo", "dir"}

const hostileWS = "claude-iterate/workspaces/demo"

var hostileWrites = []hostileWrite{
	{name: "reserve", path: hostileWS + "/logs/.reserve", setup: "mkdir " + hostileWS + "/logs", cmd: "claude-iterate run demo -m 1"},
	{name: "logsdir", path: hostileWS + "/logs", cmd: "claude-iterate run demo -m 1", kinds: []string{"linkdir", "fifo", "file"}},
	{name: "metadata-run", path: hostileWS + "/.metadata.json", cmd: "claude-iterate run demo -m 1"},
	{name: "metadata-config", path: hostileWS + "/.metadata.json", cmd: "claude-iterate config set --workspace demo defaultDelay 5"},
	{name: "runstate", path: hostileWS + "/.run-state.json", cmd: "claude-iterate run demo -m 1"},
	{name: "history", path: hostileWS + "/history.jsonl", cmd: "claude-iterate run demo -m 1"},
	{name: "ownevents", path: hostileWS + "/.events.jsonl", cmd: "claude-iterate run demo -m 1"},
	{name: "lock", path: hostileWS + "/.lock", cmd: "claude-iterate run demo -m 1"},
	{name: "sysprompt", path: hostileWS + "/.system-prompt.md", cmd: "claude-iterate run demo -m 1",
		setup: "mkdir " + hostileWS + "/prompts\nexec sh -c 'head -c 200000 /dev/zero | tr \"\\0\" s > " + hostileWS + "/prompts/system.md'"},
	{name: "answer", path: hostileWS + "/.answer.json", cmd: "claude-iterate answer demo yes", setup: askFirst},
	{name: "answers", path: hostileWS + "/ANSWERS.md", cmd: "claude-iterate answer demo yes", setup: askFirst},
	{name: "report", path: hostileWS + "/verification-report.md", cmd: "claude-iterate verify demo", setup: "env FAKE_CLAUDE=pass.txt"},
	{name: "stop", path: hostileWS + "/.stop", cmd: "claude-iterate stop demo"},
	{name: "projectconfig", path: ".claude-iterate.json", cmd: "claude-iterate config set defaultDelay 5"},
	{name: "userconfig", path: ".config/claude-iterate/config.json", cmd: "claude-iterate config set --user defaultDelay 5"},
	{name: "template", path: "claude-iterate/templates/t1/INSTRUCTIONS.md", cmd: "claude-iterate template save demo t1 -f", setup: "exec claude-iterate template save demo t1"},
	{name: "templatemeta", path: "claude-iterate/templates/t1/template.json", cmd: "claude-iterate template save demo t1 -f", setup: "exec claude-iterate template save demo t1"},
	{name: "archivedir", path: "claude-iterate/archive", cmd: "claude-iterate archive save demo", kinds: []string{"fifo", "file"}},
	// --events is named by the user, as a redirection is: a link there is
	// followed (events-link.txtar); a directory is refused.
	{name: "events", path: "ev.jsonl", cmd: "claude-iterate run demo -m 1 --events ev.jsonl", kinds: []string{"dir"}},
}

// askFirst leaves a question pending, for answer.
const askFirst = "env FAKE_CLAUDE=ask.txt\nexec claude-iterate run demo -m 1 --no-delay --on-question stop"

// TestHostileWrites is not parallel, as TestHostileFiles is not.
func TestHostileWrites(t *testing.T) {
	dir := t.TempDir()
	for _, f := range hostileWrites {
		kinds := f.kinds
		if len(kinds) == 0 {
			kinds = hostileWriteKinds
		}
		for _, kind := range kinds {
			script := fmt.Sprintf(`# %[1]s as %[2]s under %[3]q: one line naming it, never a hang, nothing outside touched
exec claude-iterate init demo --instructions task.md
exec claude-iterate run demo -m 1
%[4]s
hostilewrite %[2]s %[5]s
writerun %[6]s %[3]s

-- task.md --
do it
-- ask.txt --
write `+hostileWS+`/.status.json {"complete": false, "question": "Tabs or spaces?"}
result asked
-- pass.txt --
verdict All good.\n`+"```json"+`\n{"verdict": "pass", "summary": "Done.", "issues": [], "confidence": "high"}\n`+"```"+`
result not a verifier
`, f.name, kind, f.cmd, f.setup, f.path, filepath.Base(f.path))
			writeScenario(t, dir, f.name+"-"+kind, script)
		}
	}
	runGeneratedScripts(t, dir, map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"hostilewrite": cmdHostileWrite,
		"writerun":     cmdWriteRun,
	})
}

// cmdHostileWrite puts a hostile file at PATH: a symbolic link to a file
// of $WORK/outside holding PATH's content (linkdir: to the directory
// $WORK/outside), a FIFO, a directory holding a file, or (file) a regular
// file where a directory belongs. It records what $WORK/outside holds.
//
//	hostilewrite link|linkdir|fifo|dir|file PATH
func cmdHostileWrite(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: hostilewrite link|linkdir|fifo|dir|file PATH")
	}
	path := ts.MkAbs(args[1])
	outside := ts.MkAbs("outside")
	ts.Check(os.MkdirAll(outside, 0o755))
	ts.Check(os.MkdirAll(filepath.Dir(path), 0o755))
	victim := filepath.Join(outside, filepath.Base(path))
	content, err := os.ReadFile(path)
	if err != nil {
		content = []byte("not yours\n")
	}
	ts.Check(os.WriteFile(victim, content, 0o644))
	ts.Check(os.RemoveAll(path))
	switch args[0] {
	case "link":
		ts.Check(os.Symlink(victim, path))
	case "linkdir":
		ts.Check(os.Symlink(outside, path))
	case "fifo":
		ts.Check(syscall.Mkfifo(path, 0o600))
	case "dir":
		ts.Check(os.Mkdir(path, 0o755))
		ts.Check(os.WriteFile(filepath.Join(path, "keep"), []byte("kept\n"), 0o644))
	case "file":
		ts.Check(os.WriteFile(path, []byte("a file\n"), 0o644))
	default:
		ts.Fatalf("hostilewrite: unknown kind %q", args[0])
	}
	ts.Check(os.WriteFile(ts.MkAbs(".outside-before"), []byte(treeListing(ts, outside)), 0o600))
}

// treeListing lists the files under dir with their contents.
func treeListing(ts *testscript.TestScript, dir string) string {
	var lines []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			lines = append(lines, p+": "+err.Error())
			return nil
		}
		line := p + " " + d.Type().String()
		if d.Type().IsRegular() {
			data, _ := os.ReadFile(p)
			line += fmt.Sprintf(" %q", data)
		}
		lines = append(lines, line)
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// cmdWriteRun runs a command, bounded in time, with the hostile file in
// place: it must end with exit 1 (2 for a flag's value) and one error line
// naming NAME, or exit 0
// with a warning naming it; never hang or crash; and leave $WORK/outside
// as it was.
//
//	writerun NAME command [args...]
func cmdWriteRun(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: writerun NAME command [args...]")
	}
	got, stderr := runBounded(ts, args[1:])
	if after := treeListing(ts, ts.MkAbs("outside")); after != ts.ReadFile(".outside-before") {
		ts.Fatalf("%s touched what is outside the workspace:\n%s", args[1], after)
	}
	var named []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if strings.HasPrefix(l, progName+": ") && !strings.HasPrefix(l, progName+": hint: ") && strings.Contains(l, args[0]) {
			named = append(named, l)
		}
	}
	switch {
	case (got == 1 || got == 2) && len(named) == 1: // 2: a bad --events
	case got == 0 && len(named) >= 1 && strings.Contains(strings.Join(named, "\n"), "warning"):
	default:
		ts.Fatalf("exit %d with %d lines naming %s; want exit 1 and one error line, or exit 0 and a warning", got, len(named), args[0])
	}
}
