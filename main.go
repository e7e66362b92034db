// Claude-iterate runs an AI coding CLI (Anthropic's claude, in -p mode) in a
// loop on one task until the task is done, and can always be stopped cleanly:
// after the current iteration (a .stop file, the s key), at once (Ctrl+C
// twice), or suspended and resumed (Ctrl+Z / fg), with no stray process, no
// broken terminal and no lost log line.
//
// Usage:
//
//	claude-iterate init   <workspace> [--mode loop|iterative] [--instructions FILE|-] [flags]
//	claude-iterate setup  <workspace> [--mode loop|iterative]    (write the task with claude)
//	claude-iterate edit   <workspace>                            (refine it with claude)
//	claude-iterate run    [<workspace>] [flags]
//	claude-iterate stop   [<workspace>] [--cancel]
//	claude-iterate list   [--archived]
//	claude-iterate status [<workspace>] [--json] [--archived]
//	claude-iterate reset  [<workspace>] [--all]
//	claude-iterate clean  <workspace> [-f] [--no-archive]
//	claude-iterate archive list | restore <archive> [<workspace>]
//	claude-iterate config [<workspace>] [--json]
//	claude-iterate version
//	claude-iterate help [<command>]
//
// A workspace is a directory holding one task: INSTRUCTIONS.md (the task),
// TODO.md and .status.json (kept by the agent), .metadata.json (kept by the
// tool), an optional .stop file, and one log per run under logs/. A workspace
// argument is a name, resolved under the workspaces directory (by default
// claude-iterate/workspaces in the current directory), or a path (it contains
// a slash, or is ".").
//
// Exit status: 0 when the task completed or the run stopped for a
// non-failure reason (max iterations, a stop request); 1 on errors and failure
// conditions; 2 on usage errors; 129, 130 or 143 when ended by SIGHUP, SIGINT
// (Ctrl+C) or SIGTERM, after cleanup — by re-raising the signal, so a calling
// shell loop stops too.
//
// Run 'claude-iterate help <command>' for each command's flags and examples.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
)

// Exit codes, as documented in the package comment (SPEC §2.3).
const (
	exitOK     = 0
	exitError  = 1
	exitUsage  = 2
	exitSIGHUP = 129
	exitSIGINT = 130
	exitSIGTRM = 143
)

// version is the program's version; release builds set it with
// -ldflags "-X main.version=v1.2.3".
var version = "devel"

const progName = "claude-iterate"

func main() {
	code := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	exitBySignal(code)
	os.Exit(code)
}

// command is one subcommand: its name, one-line summary, full usage text and
// implementation.
type command struct {
	name    string
	summary string
	usage   string
	run     func(env *cliEnv, args []string) error
}

// cliEnv is what every command receives: its streams and the project root.
type cliEnv struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// projectRoot is the directory the tool was started in.
	projectRoot string
}

// commands lists the subcommands in the order help shows them.
var commands []*command

func init() {
	commands = []*command{initCommand, setupCommand, editCommand, runCommand, stopCommand, listCommand, statusCommand, resetCommand, cleanCommand, archiveCommand, configCommand, versionCommand, helpCommand}
}

func lookupCommand(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
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
  Ctrl+Z / fg              suspend and resume the tool, the agent and its tools

Exit status:
  0  completed, or stopped for a non-failure reason (max iterations, stop request)
  1  error, or a failure condition met
  2  usage error
  129, 130, 143  ended by SIGHUP, SIGINT (Ctrl+C), SIGTERM, after cleanup

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
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, mainUsage, b.String())
}

var versionCommand = &command{
	name:    "version",
	summary: "print the version",
	usage: `Usage: claude-iterate version

Prints the program's version, Go version and platform.
`,
	run: func(env *cliEnv, args []string) error {
		fs := newFlagSet("version")
		if _, err := parseFlags(fs, args, 0); err != nil {
			return err
		}
		fmt.Fprintf(env.stdout, "claude-iterate %s (%s %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return nil
	},
}

var helpCommand = &command{
	name:    "help",
	summary: "show help for a command",
	usage: `Usage: claude-iterate help [<command>]

Shows the manual of a command, or the list of commands.
`,
	run: func(env *cliEnv, args []string) error {
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
			return usagef("unknown command %q", pos[0])
		}
		io.WriteString(env.stdout, c.usage)
		return nil
	},
}

// run is the whole program but for the final exit; it returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "%s: finding the current directory: %v\n", progName, err)
		return exitError
	}
	env := &cliEnv{stdin: stdin, stdout: stdout, stderr: stderr, projectRoot: wd}

	if len(args) == 0 {
		printMainUsage(stderr)
		return exitUsage
	}
	name, rest := args[0], args[1:]
	switch name {
	case "-h", "-help", "--help":
		printMainUsage(stdout)
		return exitOK
	case "-version", "--version":
		name = "version"
	case mockAgentCommand:
		return runMockAgent(rest, stdin, stdout, stderr)
	}
	c := lookupCommand(name)
	if c == nil {
		fmt.Fprintf(stderr, "%s: unknown command %q\n", progName, name)
		fmt.Fprintf(stderr, "Run '%s --help' for the list of commands.\n", progName)
		return exitUsage
	}
	return report(env, c, c.run(env, rest))
}

// report prints err the house way and maps it to an exit code.
func report(env *cliEnv, c *command, err error) int {
	if err == nil {
		return exitOK
	}
	var ue *usageError
	var ee *exitCodeError
	var he *hintError
	var ie *inputError
	switch {
	case errors.Is(err, errHelp):
		io.WriteString(env.stdout, c.usage)
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue):
		fmt.Fprintf(env.stderr, "%s: %s\n", progName, ue.msg)
		fmt.Fprintf(env.stderr, "%s", shortUsage(c.usage))
		fmt.Fprintf(env.stderr, "Run '%s help %s' for details.\n", progName, c.name)
		return exitUsage
	case errors.As(err, &ie):
		fmt.Fprintf(env.stderr, "%s: %v\n", progName, ie.err)
		return exitUsage
	case errors.As(err, &he):
		fmt.Fprintf(env.stderr, "%s: %v\n", progName, he.err)
		fmt.Fprintf(env.stderr, "%s: hint: %s\n", progName, he.hint)
		return exitError
	}
	fmt.Fprintf(env.stderr, "%s: %v\n", progName, err)
	return exitError
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
// printed.
type exitCodeError struct{ code int }

func (e *exitCodeError) Error() string { return fmt.Sprintf("exit status %d", e.code) }
