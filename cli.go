package main

// This file implements the command line around the commands: the command
// table, dispatch, and the reporting of errors (help and version are
// commands: cmd_help.go, cmd_version.go). The rules are: diagnostics go to
// stderr as "claude-iterate: <message>", optionally followed by
// "claude-iterate: hint: <what to do>"; stdout carries only a command's
// real output (and the help it was asked for); a usage error prints the
// command's short usage and exits 2; a command's error becomes its exit
// status here, in report, and nowhere else: a run's own status (decided by
// endings.go) reaches report as an exitCodeError.

import (
	"errors"
	"fmt"
	"io"
	"os"
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
	// ownScreen: the command sanitizes what it shows itself, for it draws
	// on the terminal (a panel, colours), or its log goes raw to a file,
	// or its output must stay a file (serve's Sync); every other command's
	// output goes through a screenWriter (sanitize.go), whole.
	ownScreen bool
	run       func(env *cliEnv, args []string) error
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
		{name: "run", summary: "run the agent in a loop on a workspace's task", usage: runUsage, waits: true, ownScreen: true, run: runRun},
		{name: "stop", summary: "ask a run to stop after its current iteration", usage: stopUsage, run: runStop},
		{name: "verify", summary: "check with a read-only verifier whether the task is really done", usage: verifyUsage, waits: true, ownScreen: true, run: runVerify},
		{name: "answer", summary: "answer the question the agent asked", usage: answerUsage, run: runAnswer},
		{name: "watch", summary: "show the live panel of a run in progress, or every run (--all)", usage: watchUsage, waits: true, ownScreen: true, run: runWatch},
		{name: "logs", summary: "print a workspace's run log, or follow a run in progress", usage: logsUsage, waits: true, ownScreen: true, run: runLogs},
		{name: "ps", summary: "list the runs going on on this machine, in every project", usage: psUsage, run: runPS},
		{name: "serve", summary: "serve a web page and a JSON API over the runs going on, for a browser or a phone", usage: serveUsage, waits: true, ownScreen: true, run: runServe},
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
	if !c.ownScreen {
		// No path or name the command prints (a project root named with
		// an escape sequence) drives the terminal.
		out, errOut := &screenWriter{w: stdout}, &screenWriter{w: stderr}
		defer out.flush()
		defer errOut.flush()
		env.stdout, env.stderr = out, errOut
	}
	warnUserConfig(sanitizingWriter{stderr})
	return report(env, c, c.run(env, rest))
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
	// An error may quote the agent (its question, a file it named): never
	// raw on the terminal.
	stderr := sanitizingWriter{env.stderr}
	switch {
	case errors.Is(err, errHelp):
		printManual(env.stdout, c.manual())
		return exitStatus{code: exitOK}
	case errors.As(err, &ee):
		return exitStatus{code: ee.code, signal: ee.signal}
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "%s: %s\n", progName, ue.msg)
		printManual(env.stderr, shortUsage(c.manual()))
		fmt.Fprintf(env.stderr, "Run '%s help %s' for details.\n", progName, c.name)
		return exitStatus{code: exitUsage}
	case errors.As(err, &ie):
		if errors.As(ie.err, &he) { // a usage fault with what to do (an agent CLI not installed)
			fmt.Fprintf(stderr, "%s: %v\n%s: hint: %s\n", progName, he.err, progName, he.hint)
			return exitStatus{code: exitUsage}
		}
		fmt.Fprintf(stderr, "%s: %v\n", progName, ie.err)
		return exitStatus{code: exitUsage}
	case errors.As(err, &he):
		fmt.Fprintf(stderr, "%s: %v\n", progName, he.err)
		fmt.Fprintf(stderr, "%s: hint: %s\n", progName, he.hint)
		return exitStatus{code: exitError}
	}
	fmt.Fprintf(stderr, "%s: %v\n", progName, err)
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
