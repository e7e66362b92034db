package main

// This file implements the help command and the program's manual (what
// claude-iterate with no command, -h or --help prints); each command's own
// manual is in its cmd_<command>.go.

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
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
  claude-iterate run demo --dry-run    # the loop with a built-in mock agent
  claude-iterate run demo --test-cmd 'go test ./...' --until-tests-pass
  # ralph mode: PROMPT.md verbatim each iteration
  claude-iterate run --prompt PROMPT.md -m 10 \
      --until-output '<promise>COMPLETE</promise>'

Run 'claude-iterate help <command>' for more about a command.
`

func printMainUsage(w io.Writer) {
	var b strings.Builder
	name := 0 // the summaries' column: after the longest name
	for _, c := range commandTable() {
		name = max(name, len(c.name))
	}
	for _, c := range commandTable() {
		fmt.Fprintf(&b, "  %-*s  %s\n", name, c.name, c.summary)
	}
	printManual(w, fmt.Sprintf(mainUsage, b.String()))
}

// helpUsage is the manual of the help command.
const helpUsage = `Usage: claude-iterate help [<command>]

Shows the manual of a command, or the list of commands.

Exit status: 0; 2 for an unknown command.
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
	printManual(env.stdout, c.manual())
	return nil
}

// helpWidth is the width every manual is printed within: a terminal's
// default, and what a manual page keeps to.
const helpWidth = 80

// printManual writes a manual (a command's, or the program's) within
// helpWidth columns.
func printManual(w io.Writer, text string) {
	io.WriteString(w, wrapManual(text, helpWidth))
}

// wrapManual folds the lines of a manual longer than width. A line
// continues under where its text starts: an option's or a key's
// description column (after a run of two spaces), else its indentation
// ("Usage: " counts as such). In a section named Examples, a command is
// folded with a backslash, outside quotes, so that it still pastes into a
// shell, and a trailing comment goes on a line of its own. The manuals are
// written as they read best; this keeps a long line (a config key's
// description, made from the key table) from running past a terminal.
func wrapManual(text string, width int) string {
	var b strings.Builder
	examples := false
	lines := strings.SplitAfter(text, "\n")
	for i, line := range lines {
		body := strings.TrimSuffix(line, "\n")
		if body != "" && body[0] != ' ' {
			examples = strings.HasPrefix(body, "Examples:")
		}
		if utf8.RuneCountInString(body) <= width {
			b.WriteString(line)
			continue
		}
		indent := len(body) - len(strings.TrimLeft(body, " "))
		var folded []string
		if examples && !strings.HasPrefix(strings.TrimSpace(body), "#") {
			folded = foldCommand(body, indent, width)
		} else {
			hang := hangColumn(body, indent, width)
			folded = foldText(body, hang, width)
			if hang == 0 && i+1 < len(lines) && continuesProse(lines[i+1]) {
				// A paragraph's line: what it folds joins the next
				// line, rather than standing alone, short.
				rest := folded[len(folded)-1]
				lines[i+1] = rest + " " + strings.TrimLeft(lines[i+1], " ")
				b.WriteString(strings.Join(folded[:len(folded)-1], "\n") + "\n")
				continue
			}
		}
		b.WriteString(strings.Join(folded, "\n"))
		if strings.HasSuffix(line, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// continuesProse reports whether next (a line with its newline) goes on
// the paragraph of a line of prose (not indented): it is text, not
// indented either, and not a section's title.
func continuesProse(next string) bool {
	body, ok := strings.CutSuffix(next, "\n")
	return ok && body != "" && body[0] != ' ' && !strings.HasSuffix(body, ":")
}

// hangColumn is where the continuation of a long manual line starts: the
// column after the first run of two or more spaces that follows text (an
// option's description), or after "Usage: ", else the line's indentation.
func hangColumn(body string, indent, width int) int {
	if strings.HasPrefix(body, "Usage: ") {
		return len("Usage: ")
	}
	rest := body[indent:]
	if i := strings.Index(rest, "  "); i > 0 {
		j := i
		for j < len(rest) && rest[j] == ' ' {
			j++
		}
		if col := indent + utf8.RuneCountInString(rest[:j]); col <= width/2 {
			return col
		}
	}
	return indent
}

// foldText breaks body at spaces into lines of at most width columns, the
// lines after the first indented to hang.
func foldText(body string, hang, width int) []string {
	var lines []string
	for utf8.RuneCountInString(body) > width {
		cut := breakAt(body, width, hang, false)
		if cut < 0 {
			break // one word longer than the line: left whole
		}
		lines = append(lines, strings.TrimRight(body[:cut], " "))
		body = strings.Repeat(" ", hang) + strings.TrimLeft(body[cut:], " ")
	}
	return append(lines, body)
}

// foldCommand folds an example's command line: a trailing comment (after
// two spaces and #) on a line of its own, the command broken outside
// quotes with a backslash, continued 4 columns further in.
func foldCommand(body string, indent, width int) []string {
	var comment string
	if i := strings.Index(body, "  #"); i > 0 {
		body, comment = strings.TrimRight(body[:i], " "), strings.TrimSpace(body[i:])
	}
	var lines []string
	hang := indent + 4
	for utf8.RuneCountInString(body) > width {
		cut := breakAt(body, width-2, hang, true)
		if cut < 0 {
			break
		}
		lines = append(lines, strings.TrimRight(body[:cut], " ")+` \`)
		body = strings.Repeat(" ", hang) + strings.TrimLeft(body[cut:], " ")
	}
	lines = append(lines, body)
	if comment != "" {
		lines = append(lines, foldText(strings.Repeat(" ", hang)+comment, hang+2, width)...)
	}
	return lines
}

// breakAt returns the byte offset of the last space in body at which a
// line of at most width columns can end, past column min (and outside
// quotes when quoted is set), or -1.
func breakAt(body string, width, min int, quoted bool) int {
	cut, col := -1, 0
	var quote rune
	for i, r := range body {
		if col > width {
			break
		}
		switch {
		case quoted && quote == 0 && (r == '\'' || r == '"'):
			quote = r
		case quoted && r == quote:
			quote = 0
		case r == ' ' && quote == 0 && col > min:
			cut = i
		}
		col++
	}
	return cut
}
