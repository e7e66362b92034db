package main

// This file implements the command line around the commands: the command
// table, dispatch, help, version, and the reporting of errors. The rules are:
// diagnostics go to stderr as "claude-iterate: <message>", optionally
// followed by "claude-iterate: hint: <what to do>"; stdout carries only a
// command's real output (and the help it was asked for); a usage error
// prints the command's short usage and exits 2; the exit code of every
// outcome is decided here, in report, and nowhere else.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
)

// command is one subcommand: its name, one-line summary, full usage text and
// implementation.
type command struct {
	name    string
	summary string
	usage   string
	// usageOf builds the usage text when asked, for a manual built from
	// tables (config's lists every key): not at every start.
	usageOf func() string
	// waits: the command mostly waits (on an agent, a run, a log), for as
	// long as it runs; main gives it one P (mostlyWaits).
	waits bool
	run   func(env *cliEnv, args []string) error
}

// manual is c's full usage text.
func (c *command) manual() string {
	if c.usageOf != nil {
		return c.usageOf()
	}
	return c.usage
}

// cliEnv is what every command receives: its streams and the project root.
type cliEnv struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// projectRoot is the nearest directory upwards from the one the tool
	// was started in that holds claude-iterate/ or .claude-iterate.json,
	// else the one it was started in; rootMarker is what marked it ("" for
	// none).
	projectRoot, rootMarker string
}

// commandTable lists the subcommands in the order help shows them.
func commandTable() []*command {
	return []*command{
		{name: "init", summary: "create a workspace for a task", usage: initUsage, run: runInit},
		{name: "setup", summary: "write a workspace's task with claude, interactively", usage: setupUsage, waits: true, run: runSetup},
		{name: "edit", summary: "refine a workspace's task with claude, interactively", usage: editUsage, waits: true, run: runEdit},
		{name: "run", summary: "run the agent in a loop on a workspace's task", usage: runUsage, waits: true, run: runRun},
		{name: "stop", summary: "ask a run to stop after its current iteration", usage: stopUsage, run: runStop},
		{name: "verify", summary: "check with a read-only verifier whether the task is really done", usage: verifyUsage, waits: true, run: runVerify},
		{name: "answer", summary: "answer the question the agent asked", usage: answerUsage, run: runAnswer},
		{name: "watch", summary: "show the live panel of a run in progress, or every run (--all)", usage: watchUsage, waits: true, run: runWatch},
		{name: "logs", summary: "print a workspace's run log, or follow a run in progress", usage: logsUsage, waits: true, run: runLogs},
		{name: "ps", summary: "list the runs going on on this machine, in every project", usage: psUsage, run: runPS},
		{name: "serve", summary: "serve a web page and a JSON API over the runs going on, for a browser or a phone", usage: serveUsage, waits: true, run: runServe},
		{name: "list", summary: "list the named workspaces (not those at a path) and their progress", usage: listUsage, run: runList},
		{name: "status", summary: "show one workspace in detail, including why its last run stopped", usage: statusUsage, run: runStatus},
		{name: "history", summary: "show what each iteration did: a table and a chart per run", usage: historyUsage, run: runHistory},
		{name: "merge", summary: "bring a workspace's branch into the branch it was made from", usage: mergeUsage, run: runMerge},
		{name: "pr", summary: "push a workspace's branch and open a pull request", usage: prUsage, run: runPR},
		{name: "reset", summary: "forget a workspace's runs, keeping its task", usage: resetUsage, run: runReset},
		{name: "clean", summary: "archive a workspace, then remove it", usage: cleanUsage, run: runClean},
		{name: "archive", summary: "list archived workspaces, or restore one", usage: archiveUsage, run: runArchive},
		{name: "template", summary: "save a workspace's task as a template, list, show or delete templates", usage: templateUsage, run: runTemplate},
		{name: "config", summary: "show the effective configuration and where each value comes from", usageOf: configUsage, run: runConfig},
		{name: "completion", summary: "print a shell completion script (bash, zsh or fish)", usage: completionUsage, run: runCompletion},
		{name: "version", summary: "print the version", usage: versionUsage, run: runVersion},
		{name: "help", summary: "show help for a command", usage: helpUsage, run: runHelp},
	}
}

// suggestCommand returns the command name most likely meant, or "".
func suggestCommand(name string) string {
	var names []string
	for _, c := range commandTable() {
		names = append(names, c.name)
	}
	return closestName(name, names)
}

// mostlyWaits reports whether the command args name is one that mostly
// waits, for as long as it runs (a run, watch, logs -f, an interactive
// claude): with one P, Go's scheduler does not spin when many of them
// share a few CPUs, and one run's stream is as fast (scripts/bench.sh
// shows both). The other commands keep every CPU (history parses a long
// file in parallel), and skip the resize: it costs page faults at each
// start, and a page fault is dear on some virtual machines.
func mostlyWaits(args []string) bool {
	if len(args) == 0 {
		return false
	}
	c := lookupCommand(args[0])
	return c != nil && c.waits
}

func lookupCommand(name string) *command {
	for _, c := range commandTable() {
		if c.name == name {
			return c
		}
	}
	return nil
}

// exitStatus is how the process ends: with code, or, when signal is set, by
// that signal (re-raised with its default action, so that a calling shell
// sees the process died of it), code being the fallback.
type exitStatus struct {
	code   int
	signal syscall.Signal
}

// run is the whole program but for the final exit.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) exitStatus {
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "%s: finding the current directory: %v\n", progName, err)
		return exitStatus{code: exitError}
	}
	root, marker := findProjectRoot(wd)
	env := &cliEnv{stdin: stdin, stdout: stdout, stderr: stderr, projectRoot: root, rootMarker: marker}

	if len(args) == 0 {
		printMainUsage(stderr)
		return exitStatus{code: exitUsage}
	}
	name, rest := args[0], args[1:]
	switch name {
	case "-h", "-help", "--help":
		printMainUsage(stdout)
		return exitStatus{code: exitOK}
	case "-version", "--version":
		name = "version"
	case mockAgentCommand:
		return exitStatus{code: runMockAgent(rest, stdin, stdout, stderr)}
	case completeCommand:
		return exitStatus{code: runComplete(env, rest)}
	}
	c := lookupCommand(name)
	if c == nil {
		fmt.Fprintf(stderr, "%s: unknown command %q\n", progName, name)
		if s := suggestCommand(name); s != "" {
			fmt.Fprintf(stderr, "%s: hint: did you mean '%s %s'?\n", progName, progName, s)
		}
		fmt.Fprintf(stderr, "Run '%s --help' for the list of commands.\n", progName)
		return exitStatus{code: exitUsage}
	}
	warnUserConfig(stderr)
	return report(env, c, c.run(env, rest))
}

const mainUsage = `claude-iterate runs the claude CLI in a loop on one task until it is done.

Usage:
  claude-iterate <command> [arguments]

Commands:
%s
Stopping a run:
  s (in the terminal)      stop after the current iteration; press again to cancel
  claude-iterate stop      the same, from another shell (or: touch <workspace>/.stop)
  Ctrl+C                   stop now: the agent gets SIGINT and time to clean up
  Ctrl+C twice             force: kill the agent and everything it started
  Ctrl+\                   force at once (SIGQUIT)
  Ctrl+Z / fg              suspend and resume the tool, the agent and its tools

Exit status:
  0  completed, or stopped for a non-failure reason (max iterations, stop request)
  1  error, a failure condition met, or max iterations reached right after a
     failed iteration
  2  usage error
  129, 130, 131, 143  ended by SIGHUP, SIGINT (Ctrl+C), SIGQUIT (Ctrl+\), SIGTERM, after cleanup

Examples:
  claude-iterate init demo --instructions TASK.md
  claude-iterate run demo
  claude-iterate run demo --dry-run          # the whole loop with a built-in mock agent
  claude-iterate run demo --test-cmd 'go test ./...' --until-tests-pass
  claude-iterate run --prompt PROMPT.md --until-output '<promise>COMPLETE</promise>' -m 10
                                             # ralph mode: PROMPT.md verbatim each iteration

Run 'claude-iterate help <command>' for more about a command.
`

func printMainUsage(w io.Writer) {
	var b strings.Builder
	for _, c := range commandTable() {
		fmt.Fprintf(&b, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, mainUsage, b.String())
}

// versionUsage is the manual of the version command.
const versionUsage = `Usage: claude-iterate version

Prints the program's version, Go version and platform.
`

func runVersion(env *cliEnv, args []string) error {
	fs := newFlagSet("version")
	if _, err := parseFlags(fs, args, 0); err != nil {
		return err
	}
	_, err := fmt.Fprintf(env.stdout, "claude-iterate %s (%s %s/%s)\n", programVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return writeError(err)
}

// programVersion is the version set at link time, else the module version
// that go install recorded in the build info, else "devel".
func programVersion() string {
	bi, _ := debug.ReadBuildInfo()
	return versionFrom(version, bi)
}

// versionFrom picks the version: linked, else from the build info, else
// "devel".
func versionFrom(linked string, bi *debug.BuildInfo) string {
	if linked != "" {
		return linked
	}
	if bi != nil && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// helpUsage is the manual of the help command.
const helpUsage = `Usage: claude-iterate help [<command>]

Shows the manual of a command, or the list of commands.
`

func runHelp(env *cliEnv, args []string) error {
	fs := newFlagSet("help")
	pos, err := parseFlags(fs, args, 1)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		printMainUsage(env.stdout)
		return nil
	}
	c := lookupCommand(pos[0])
	if c == nil {
		if s := suggestCommand(pos[0]); s != "" {
			return usagef("unknown command %q (did you mean %q?)", pos[0], s)
		}
		return usagef("unknown command %q", pos[0])
	}
	io.WriteString(env.stdout, c.manual())
	return nil
}

// report prints err the house way and maps it to how the process ends.
func report(env *cliEnv, c *command, err error) exitStatus {
	if err == nil {
		return exitStatus{code: exitOK}
	}
	var ue *usageError
	var ee *exitCodeError
	var he *hintError
	var ie *inputError
	switch {
	case errors.Is(err, errHelp):
		io.WriteString(env.stdout, c.manual())
		return exitStatus{code: exitOK}
	case errors.As(err, &ee):
		return exitStatus{code: ee.code, signal: ee.signal}
	case errors.As(err, &ue):
		fmt.Fprintf(env.stderr, "%s: %s\n", progName, ue.msg)
		fmt.Fprintf(env.stderr, "%s", shortUsage(c.manual()))
		fmt.Fprintf(env.stderr, "Run '%s help %s' for details.\n", progName, c.name)
		return exitStatus{code: exitUsage}
	case errors.As(err, &ie):
		if errors.As(ie.err, &he) { // a usage fault with what to do (an agent CLI not installed)
			fmt.Fprintf(env.stderr, "%s: %v\n%s: hint: %s\n", progName, he.err, progName, he.hint)
			return exitStatus{code: exitUsage}
		}
		fmt.Fprintf(env.stderr, "%s: %v\n", progName, ie.err)
		return exitStatus{code: exitUsage}
	case errors.As(err, &he):
		fmt.Fprintf(env.stderr, "%s: %v\n", progName, he.err)
		fmt.Fprintf(env.stderr, "%s: hint: %s\n", progName, he.hint)
		return exitStatus{code: exitError}
	}
	fmt.Fprintf(env.stderr, "%s: %v\n", progName, err)
	return exitStatus{code: exitError}
}

// shortUsage returns the first paragraph of a usage text (the Usage: lines).
func shortUsage(usage string) string {
	if i := strings.Index(usage, "\n\n"); i >= 0 {
		return usage[:i+1]
	}
	return usage
}

// usageError is a bad command line: reported with the command's short usage,
// exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// inputError is bad input found in a file (a fault in stop conditions):
// reported as it is, without the command's usage, exit 2.
type inputError struct{ err error }

func (e *inputError) Error() string { return e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

// hintError is an error followed by a line telling the user what to do.
type hintError struct {
	err  error
	hint string
}

func (e *hintError) Error() string { return e.err.Error() + " (hint: " + e.hint + ")" }
func (e *hintError) Unwrap() error { return e.err }

func withHint(err error, format string, args ...any) error {
	return &hintError{err: err, hint: fmt.Sprintf(format, args...)}
}

// exitCodeError ends a command with a given exit code, its message already
// printed. With signal set, the process ends by re-raising that signal.
type exitCodeError struct {
	code   int
	signal syscall.Signal
}

func (e *exitCodeError) Error() string { return fmt.Sprintf("exit status %d", e.code) }
