package main

// This file implements the setup command: a workspace's task written with
// the user through the agent CLI, run interactively (session.go). The rules
// are: it refuses while a run holds the workspace (claimWorkspace); it
// needs a terminal, hands it to the CLI and prints nothing while the CLI
// runs; what it reports afterwards comes from the files, never from the
// CLI's exit status: INSTRUCTIONS.md written, not empty and not init's
// template is success (task.go); it removes a workspace it created if the
// session left nothing in it.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"time"
)

// setupUsage is the manual of the setup command.
const setupUsage = `Usage: claude-iterate setup <workspace> [--mode loop|iterative] [--claude PATH] [--agent NAME]

Creates the workspace if needed (as 'init' does), then starts claude in this
terminal — interactively, not in -p mode — with a system prompt that has it
interview you about the task and write <workspace>/INSTRUCTIONS.md (and, in
loop mode, a first TODO.md). Talk with it, and quit it (/exit) once the task
is written: setup then says what to run next. If nothing was written, setup
exits 1, and removes the workspace it created if claude left it empty.

While claude runs, the terminal is claude's: Ctrl+C and Ctrl+Z go to it, and
claude-iterate only waits, printing nothing. When claude exits, the terminal
mode is put back as it was.

setup needs a terminal; without one, give the task from a file:
claude-iterate init <workspace> --instructions FILE. A workspace that has a
task already is refined with 'claude-iterate edit'. To give a new workspace
other options (-m, -d, --notify-url...), create it with 'init' first, then run
setup on it.

Options:
  --mode loop|iterative   the mode of a new workspace (default loop)
  --claude PATH           the claude executable (default:
                          $CLAUDE_ITERATE_CLAUDE, else config key
                          claude.command, else claude)
  --agent NAME            claude (default: the agent config key) or codex:
                          codex's terminal UI gets agents.codex.args, the
                          system prompt as -c developer_instructions, and
                          the first message

claude gets the arguments of claude.args, then --append-system-prompt with
the built-in prompts/<mode>/setup.md — a project may replace it with
.claude-iterate/prompts/<mode>/setup.md, a workspace with
<workspace>/prompts/setup.md — then a short first message.

Exit status: the session's (0 when it ends well); 1 error; 2 usage
error, or no terminal to run the session in.

Examples:
  claude-iterate setup api-migration
  claude-iterate setup refactor --mode iterative
  claude-iterate init nightly -m 200 && claude-iterate setup nightly
`

const (
	taskMissing  taskState = iota // no file
	taskEmpty                     // white space only
	taskTemplate                  // init's template, as init wrote it
	taskWritten                   // a task
)

func runSetup(env *cliEnv, args []string) error {
	fs := newFlagSet("setup")
	var mode stringFlag
	var flags sessionFlags
	fs.Var(&mode, "mode", "")
	flags.register(fs)
	arg, err := parseWorkspaceArg(fs, args, "workspace name")
	if err != nil {
		return err
	}
	if err := refuseGitDir(env.projectRoot, "the project root"); err != nil { // gitworktree.go
		return err
	}
	if mode.set {
		if err := checkModeFlag(mode.s); err != nil {
			return err
		}
	}
	project, user, base, err := flags.layers(env)
	if err != nil {
		return err
	}
	w, err := locateWorkspace(env.projectRoot, base.WorkspacesDir, arg)
	if err == nil {
		err = linkedWorkspace(env, w)
	}
	if err != nil {
		return err
	}
	exists := true
	if err = loadWorkspace(env, w, true); errors.Is(err, os.ErrNotExist) {
		exists, err = false, nil
	} else if err == nil {
		err = settingsFault(w) // the session needs its mode and config
	}
	if err != nil {
		return err
	}
	shownTask := relPath(env.projectRoot, w.instructionsPath())
	if exists {
		if mode.set && mode.s != w.meta.Mode {
			return usagef("workspace %s exists, in %s mode: --mode applies only to a new workspace", w.Name, w.meta.Mode)
		}
		release, err := claimWorkspace(w, arg, "set up")
		if err != nil {
			return err
		}
		defer release()
		state, _, err := readTask(w)
		if err != nil {
			return err
		}
		if state == taskWritten {
			return withHint(fmt.Errorf("workspace %s has a task already (%s)", w.Name, shownTask), "refine it with: %s", wsCommand(w, "edit"))
		}
	} else {
		if err := checkNewName(arg); err != nil {
			return err
		}
		m := modeLoop
		if mode.set {
			m = mode.s
		}
		w.meta = &metadata{Name: w.Name, Mode: m, Created: time.Now().UTC().Truncate(time.Second), Status: statusNew}
	}
	in, out, errOut, err := sessionTerminal(env, "setup")
	if err != nil {
		if exists {
			return failUsage(env, err, "describe the task in %s yourself", shownTask)
		}
		return failUsage(env, err, "give the task from a file instead: claude-iterate init %s --instructions FILE", arg)
	}
	cfg := flags.settings(w, project, user)
	s, err := newSession(env, cfg, w, "setup", "", fmt.Sprintf("Help me write the task of the claude-iterate workspace %q: interview me.", w.Name))
	if err != nil {
		return err
	}

	var created []string
	if !exists {
		created, err = createWorkspaceDir(w, arg)
		if err != nil {
			return err
		}
		if err := w.save(); err != nil {
			removeCreated(w, created)
			return fmt.Errorf("creating workspace %s: %w", w.Dir, err)
		}
		if note := projectRootNote(env); note != "" {
			fmt.Fprintln(env.stdout, note)
		}
		fmt.Fprintf(env.stdout, "Created workspace %s (%s, %s mode)\n", w.Name, relPath(env.projectRoot, w.Dir), w.meta.Mode)
		warnNearName(env, base.WorkspacesDir, arg)
	}
	todoBefore := readOptional(w.todoPath())
	fmt.Fprintf(env.stdout, "Starting claude to write the task with you; quit it (/exit) once %s is written.\n", shownTask)
	ended, runErr := s.run(in, out, errOut)

	state, _, err := readTask(w)
	if err != nil {
		return err
	}
	if state == taskWritten {
		wrote := shownTask
		if todo := readOptional(w.todoPath()); todo != nil && !bytes.Equal(todo, todoBefore) {
			wrote += " and " + todoFile
		}
		fmt.Fprintf(env.stdout, "Wrote %s\n", wrote)
		fmt.Fprintf(env.stdout, "Next: %s\n", wsCommand(w, "run"))
		return nil
	}
	if runErr != nil {
		ended = runErr.Error()
	}
	msg := "nothing was written: " + describeTask(shownTask, state)
	if ended != "" {
		msg += " (" + ended + ")"
	}
	if !exists && leftEmpty(w) {
		removeCreated(w, created)
		return withHint(errors.New(msg+"; the new workspace was removed"), "run it again: claude-iterate setup %s, or give the task from a file: claude-iterate init %s --instructions FILE", arg, arg)
	}
	return withHint(errors.New(msg), "run it again: claude-iterate setup %s, or describe the task in %s yourself", arg, shownTask)
}
