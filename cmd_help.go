package main

// This file implements the help command and the program's manual (what
// claude-iterate with no command, -h or --help prints); each command's own
// manual is in its cmd_<command>.go.

import (
	"fmt"
	"io"
	"strings"
)

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
