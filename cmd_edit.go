package main

// This file implements the edit command: a workspace's task refined with
// the user through the agent CLI, run interactively (session.go). The
// rules are setup's (cmd_setup.go), and: edit puts the previous task back
// if the session left INSTRUCTIONS.md missing or empty.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
)

// editUsage is the manual of the edit command.
const editUsage = `Usage: claude-iterate edit <workspace> [--claude PATH] [--agent NAME]

Starts claude in this terminal, interactively, with a system prompt that has
it read the workspace's task (INSTRUCTIONS.md, and TODO.md), ask you what to
change and rewrite it (and, in loop mode, bring TODO.md in line). Quit claude
(/exit) when done: edit then says what changed and what to run next. If
claude left INSTRUCTIONS.md missing or empty, edit puts the previous version
back and exits 1.

As with setup, the terminal is claude's while it runs, and the terminal mode
is put back as it was when it exits. edit needs a terminal; without one, edit
<workspace>/INSTRUCTIONS.md with an editor. A workspace being run is not
edited: stop the run first.

Options:
  --claude PATH   the claude executable (default: $CLAUDE_ITERATE_CLAUDE,
                  else config key claude.command, else claude)
  --agent NAME    claude (default: the agent config key) or codex, as setup

The system prompt is prompts/<mode>/edit.md, replaced as setup's is.

Exit status: the session's (0 when it ends well); 1 error; 2 usage
error, or no terminal to run the session in.

Examples:
  claude-iterate edit api-migration
`

func runEdit(env *cliEnv, args []string) error {
	fs := newFlagSet("edit")
	var flags sessionFlags
	flags.register(fs)
	arg, err := parseWorkspaceArg(fs, args, "workspace")
	if err != nil {
		return err
	}
	project, user, base, err := flags.layers(env)
	if err != nil {
		return err
	}
	w, err := needSettings(openWorkspace)(env, base.WorkspacesDir, arg)
	if err != nil {
		var nw *errNoWorkspace
		if errors.As(err, &nw) && (arg != "." || !hasRalphState(env)) { // ".": the ralph-mode run's hint stands
			return withHint(nw, "create it with: claude-iterate setup %s", arg)
		}
		return err
	}
	release, err := claimWorkspace(w, arg, "edit")
	if err != nil {
		return err
	}
	defer release()
	shownTask := relPath(env.projectRoot, w.instructionsPath())
	state, before, err := readTask(w)
	if err != nil {
		return err
	}
	if state != taskWritten {
		return withHint(fmt.Errorf("workspace %s has no task to edit: %s", w.Name, describeTask(shownTask, state)), "write it with: %s", wsCommand(w, "setup"))
	}
	in, out, errOut, err := sessionTerminal(env, "edit")
	if err != nil {
		return failUsage(env, err, "edit the task yourself: %s", shownTask)
	}
	cfg := flags.settings(w, project, user)
	s, err := newSession(env, cfg, w, "edit", string(before), fmt.Sprintf("Help me refine the task of the claude-iterate workspace %q.", w.Name))
	if err != nil {
		return err
	}
	perm := os.FileMode(0o644)
	if fi, err := os.Stat(w.instructionsPath()); err == nil {
		perm = fi.Mode().Perm()
	}
	todoBefore := readOptional(w.todoPath())
	fmt.Fprintf(env.stdout, "Starting claude to refine the task with you; quit it (/exit) when done.\n")
	ended, runErr := s.run(in, out, errOut)

	state, after, err := readTask(w)
	if err != nil {
		return err
	}
	if state != taskWritten {
		if runErr != nil {
			ended = runErr.Error()
		}
		msg := describeTask(shownTask, state)
		if ended != "" {
			msg += " (" + ended + ")"
		}
		if err := writeFileAtomic(w.instructionsPath(), before, perm); err != nil {
			return fmt.Errorf("%s, and putting the previous version back failed: %w", msg, err)
		}
		return withHint(errors.New(msg+": the previous version is put back"), "run it again: claude-iterate edit %s", arg)
	}
	todoChanged := !bytes.Equal(readOptional(w.todoPath()), todoBefore)
	switch {
	case !bytes.Equal(before, after) && todoChanged:
		fmt.Fprintf(env.stdout, "Updated %s and %s\n", shownTask, todoFile)
	case !bytes.Equal(before, after):
		fmt.Fprintf(env.stdout, "Updated %s\n", shownTask)
	case todoChanged:
		fmt.Fprintf(env.stdout, "%s is unchanged; updated %s\n", shownTask, todoFile)
	default:
		fmt.Fprintf(env.stdout, "%s is unchanged\n", shownTask)
	}
	fmt.Fprintf(env.stdout, "Next: %s\n", wsCommand(w, "run"))
	return nil
}
