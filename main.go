// Claude-iterate runs an AI coding CLI (Anthropic's claude, in -p mode) in a
// loop on one task until the task is done, and can always be stopped cleanly:
// after the current iteration (a .stop file, the s key), at once (Ctrl+C
// twice), or suspended and resumed (Ctrl+Z / fg), with no stray process, no
// broken terminal and no lost log line.
//
// Usage:
//
//	claude-iterate init     <workspace> [--mode loop|iterative] [--instructions FILE|-] [--template NAME] [flags]
//	claude-iterate setup    <workspace> [--mode loop|iterative]    (write the task with claude)
//	claude-iterate edit     <workspace>                            (refine it with claude)
//	claude-iterate run      [<workspace>] [flags]
//	claude-iterate stop     [<workspace>] [--cancel]
//	claude-iterate verify   <workspace> [--depth quick|standard|deep] [--json]
//	claude-iterate answer   <workspace> TEXT|-
//	claude-iterate watch    [<workspace>] | --all
//	claude-iterate ps       [--json] [--project]
//	claude-iterate logs     <workspace> [-f] [--run N] [--list]
//	claude-iterate serve    [--port N] [--listen ADDR] [--read-only]
//	claude-iterate list     [--archived]
//	claude-iterate status   [<workspace>] [--json] [--archived]
//	claude-iterate history  [<workspace>] [--json] [--run ID] [--last N]
//	claude-iterate merge    <workspace> [--squash]
//	claude-iterate pr       <workspace> [--remote NAME] [--draft]
//	claude-iterate reset    [<workspace>] [--all]
//	claude-iterate clean    <workspace> [-f] [--no-archive]
//	claude-iterate archive  list | save | show | restore | delete
//	claude-iterate template save | list | show | delete
//	claude-iterate config   [<workspace>] [--json] | set KEY VALUE | unset KEY
//	claude-iterate completion bash|zsh|fish
//	claude-iterate version
//	claude-iterate help [<command>]
//
// A workspace is a directory holding one task: INSTRUCTIONS.md (the task),
// TODO.md and .status.json (kept by the agent), .metadata.json (kept by the
// tool), an optional .stop file, history.jsonl (one record per iteration:
// what it did, what it cost, which files it changed) and one log per run
// under logs/. A workspace argument is a name, resolved under the
// workspaces directory (by default claude-iterate/workspaces in the project
// root: the nearest directory upwards holding claude-iterate/,
// .claude-iterate/ or .claude-iterate.json), or a path (it contains a
// slash, or is ".").
//
// Exit status: 0 when the task completed or the run stopped for a
// non-failure reason (max iterations, a stop request); 1 on errors, failure
// conditions, and max iterations reached right after a failed iteration; 2
// on usage errors; 129, 130, 131 or 143 when ended by SIGHUP, SIGINT
// (Ctrl+C), SIGQUIT (Ctrl+\) or SIGTERM, after cleanup — by re-raising the
// signal, so a calling shell loop stops too.
//
// Run 'claude-iterate help <command>' for each command's flags and examples.
package main

import (
	"os"
	"runtime"
)

// Exit codes, as documented above.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
	// A run ended by a signal exits with 128 + the signal's number
	// (exitCodeFor): 129 SIGHUP, 130 SIGINT, 131 SIGQUIT, 143 SIGTERM.
)

// version is the program's version; release builds may set it with
// -ldflags "-X main.version=v1.2.3". Empty: the module version recorded by
// go install, or "devel".
var version = ""

const progName = "claude-iterate"

func main() {
	// GOMAXPROCS in the environment wins.
	if os.Getenv("GOMAXPROCS") == "" && mostlyWaits(os.Args[1:]) {
		runtime.GOMAXPROCS(1)
	}
	st := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	if st.signal != 0 {
		// Returns only if the signal did not end the process.
		raiseDefault(st.signal)
	}
	os.Exit(st.code)
}
