package main

// This file implements the workspace lifecycle around runs: setup and edit
// write the task with the user through the agent CLI run interactively, and
// reset forgets the runs. The rules are: a command that changes a workspace
// refuses while a run holds it (claimWorkspace); setup and edit need a
// terminal, hand it to the CLI (see runAttached) and print nothing while it
// runs; what they report afterwards comes from the files, never from the
// CLI's exit status — INSTRUCTIONS.md written, not empty and not init's
// template is success; setup removes a workspace it created if the session
// left nothing in it, and edit puts the previous task back if the session
// left INSTRUCTIONS.md missing or empty. reset changes only the run fields
// of .metadata.json (and, with --all, removes .status.json and TODO.md): the
// task, the logs and the agent's files stay.

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
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
  --claude PATH           the claude executable (default: config key
                          claude.command, or $CLAUDE_ITERATE_CLAUDE)
  --agent NAME            claude (default: the agent config key) or codex:
                          codex's terminal UI gets agents.codex.args, the
                          system prompt as -c developer_instructions, and
                          the first message

claude gets the arguments of claude.args, then --append-system-prompt with
the built-in prompts/<mode>/setup.md — a project may replace it with
.claude-iterate/prompts/<mode>/setup.md, a workspace with
<workspace>/prompts/setup.md — then a short first message.

Examples:
  claude-iterate setup api-migration
  claude-iterate setup refactor --mode iterative
  claude-iterate init nightly -m 200 && claude-iterate setup nightly
`

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
  --claude PATH   the claude executable (default: config key claude.command,
                  or $CLAUDE_ITERATE_CLAUDE)
  --agent NAME    claude (default: the agent config key) or codex, as setup

The system prompt is prompts/<mode>/edit.md, replaced as setup's is.

Examples:
  claude-iterate edit api-migration
`

// claimWorkspace makes sure that no run holds w before a command changes
// it, and holds it until release is called: a run that starts meanwhile
// fails at once. arg is the workspace as the user gave it ("" for the
// ralph-mode one), for the hint, and doing is what the command does
// ("reset"). The claim shares the state directory's lock, which a run holds
// alone for its whole life, so a claim that gets it knows that no run holds
// the workspace; then it takes the run lock (.lock), waiting for another
// command's claim to end, so that two commands that change the workspace
// at once (two 'config set --workspace') take turns instead of taking one
// another for a run. The metadata is read again once the claim is held: a
// command changes it as the last one left it. The lock's record, which a
// later run reads to clean up after a killed one, is left as it is.
func claimWorkspace(w *workspace, arg, doing string) (release func(), err error) {
	busy := func(pid int) error {
		msg := fmt.Sprintf("cannot %s workspace %s: a run holds it", doing, w.Name)
		if pid > 0 {
			msg += fmt.Sprintf(" (pid %d)", pid)
		}
		return withHint(errors.New(msg), "stop the run first: %s", strings.TrimSpace("claude-iterate stop "+arg))
	}
	dir, err := openDir(w.StateDir)
	if errors.Is(err, os.ErrNotExist) {
		return func() {}, nil // no state directory yet: nothing to hold
	}
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", w.StateDir, unwrapPathError(err))
	}
	if err := flock(dir, syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		dir.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			pid := 0
			if f, _, err := openRegular(w.lockPath()); err == nil {
				pid = readRecord(f).PID
				f.Close()
			}
			return nil, busy(pid)
		}
		return nil, fmt.Errorf("locking %s: %w", w.StateDir, err)
	}
	f, err := openLockFile(w.lockPath())
	if err != nil {
		dir.Close()
		if errors.Is(err, os.ErrNotExist) {
			return func() {}, nil // the state directory went meanwhile
		}
		return nil, fmt.Errorf("opening the run lock: %w", err)
	}
	// No run holds it: another command's claim does, or a status looks
	// for an instant.
	if err := flock(f, syscall.LOCK_EX); err != nil {
		f.Close()
		dir.Close()
		return nil, fmt.Errorf("locking %s: %w", w.lockPath(), err)
	}
	release = func() { f.Close(); dir.Close() }
	if err := w.load(); err != nil && !errors.Is(err, os.ErrNotExist) {
		release()
		return nil, err
	}
	return release, nil
}

// claimWait is how long a run waits for another command's claim of its
// workspace (a config set takes a moment) before it says that one holds it.
const claimWait = 2 * time.Second

// claimHolds reports whether what holds w's state directory is claims,
// not a run: a run holds its lock alone, claims share it.
func claimHolds(w *workspace) bool {
	_, held, err := lockStateDir(w, syscall.LOCK_SH)
	return err == nil && !held
}

// hintOr is the hint for a workspace held: runHint for a run, else to wait
// for the command that holds it.
func (e *errLocked) hintOr(runHint string) string {
	if e.claim {
		return "run it again once that command is done"
	}
	return runHint
}

// failUsage prints err and hint the house way and ends the command with exit
// status 2: for a command line that cannot work where it was given (no
// terminal, no confirmation), a usage error whose fix is not in the usage.
func failUsage(env *cliEnv, err error, hint string, args ...any) error {
	fmt.Fprintf(env.stderr, "%s: %v\n", progName, err)
	fmt.Fprintf(env.stderr, "%s: hint: %s\n", progName, fmt.Sprintf(hint, args...))
	return &exitCodeError{code: exitUsage}
}

// taskState is what a workspace's INSTRUCTIONS.md holds.
type taskState int

const (
	taskMissing  taskState = iota // no file
	taskEmpty                     // white space only
	taskTemplate                  // init's template, as init wrote it
	taskWritten                   // a task
)

// classifyTask says what the content of an existing INSTRUCTIONS.md holds.
func classifyTask(data []byte) taskState {
	trimmed := bytes.TrimSpace(data)
	switch {
	case len(trimmed) == 0:
		return taskEmpty
	case string(trimmed) == strings.TrimSpace(starterInstructions):
		return taskTemplate
	}
	return taskWritten
}

// readTask reads a workspace's INSTRUCTIONS.md and says what it holds.
func readTask(w *workspace) (taskState, []byte, error) {
	data, err := readRegularFile(w.instructionsPath(), taskFileCap)
	if errors.Is(err, os.ErrNotExist) {
		return taskMissing, nil, nil
	}
	if err != nil {
		return taskMissing, nil, fmt.Errorf("reading %s: %w", w.instructionsPath(), unwrapPathError(err))
	}
	return classifyTask(data), data, nil
}

// describeTask says what is wrong with INSTRUCTIONS.md at shown in state.
func describeTask(shown string, state taskState) string {
	switch state {
	case taskMissing:
		return shown + " does not exist"
	case taskEmpty:
		return shown + " is empty"
	case taskTemplate:
		return shown + " still holds the template"
	}
	return shown + " holds a task"
}

// session is the interactive agent (claude, or the config's agent) of
// setup or edit.
type session struct {
	path, name string
	argv       []string
	dir        string
}

// newSession prepares the agent session of setup or edit (kind names its
// system prompt template): the configured agent, command and arguments, the
// system prompt and a first message (its adapter's sessionArgs).
func newSession(env *cliEnv, cfg *settings, w *workspace, kind, instructions, first string) (*session, error) {
	a, err := lookupAgent(cfg.Agent, "agent")
	if err != nil {
		return nil, err
	}
	path, err := findAgentCLI(a, cfg)
	if err != nil {
		return nil, err
	}
	tmpl, _, err := promptTemplate(w, env.projectRoot, w.meta.Mode, kind)
	if err != nil {
		return nil, err
	}
	argv := append([]string{a.executable(cfg)}, a.sessionArgs(cfg, expandPrompt(tmpl, env.projectRoot, w.Dir, instructions), first)...)
	return &session{path: path, name: a.name(), argv: argv, dir: env.projectRoot}, nil
}

// run runs the session on the terminal and says how the agent ended: ""
// when it exited with status 0.
func (s *session) run(in, out, errOut *os.File) (string, error) {
	ws, err := runAttached(in, out, errOut, s.path, s.argv, s.dir, childEnv())
	if err != nil {
		return "", fmt.Errorf("running %s: %w", s.path, err)
	}
	switch {
	case ws.Exited() && ws.ExitStatus() == 0:
		return "", nil
	case ws.Exited():
		return fmt.Sprintf("%s exited with status %d", s.name, ws.ExitStatus()), nil
	case ws.Signaled():
		name := signalName(ws.Signal())
		if !strings.HasPrefix(name, "SIG") {
			name = fmt.Sprintf("signal %d (%s)", int(ws.Signal()), name)
		}
		return s.name + " was ended by " + name, nil
	}
	return "", nil
}

// sessionTerminal returns the terminal a session runs on: standard input
// and output must both be one.
func sessionTerminal(env *cliEnv, cmd string) (in, out, errOut *os.File, err error) {
	in, ok := env.stdin.(*os.File)
	if !ok || !isTerminal(in) {
		return nil, nil, nil, fmt.Errorf("%s talks with you through claude, in a terminal: standard input is not one", cmd)
	}
	out, ok = env.stdout.(*os.File)
	if !ok || !isTerminal(out) {
		return nil, nil, nil, fmt.Errorf("%s talks with you through claude, in a terminal: standard output is not one", cmd)
	}
	errOut, ok = env.stderr.(*os.File)
	if !ok {
		errOut = out
	}
	return in, out, errOut, nil
}

// claudeFlagLayer is the configuration the --claude and --agent flags of
// setup and edit set.
func claudeFlagLayer(f stringFlag, agents *agentFlags) *configLayer {
	l := &configLayer{name: layerFlag, values: map[string]any{}}
	if f.set {
		l.values["claude.command"] = f.s
	}
	agents.addTo(l.values)
	return l
}

// checkClaudeFlag refuses an empty --claude.
func checkClaudeFlag(f stringFlag) error {
	if f.set && strings.TrimSpace(f.s) == "" {
		return usagef("invalid value %q for flag --claude: empty", f.s)
	}
	return nil
}

// readOptional reads a file that may not exist (nil then).
func readOptional(path string) []byte {
	if path == "" {
		return nil
	}
	data, _ := readRegularFile(path, agentFileCap)
	return data
}

func runSetup(env *cliEnv, args []string) error {
	fs := newFlagSet("setup")
	var mode, claude stringFlag
	var agents agentFlags
	fs.Var(&mode, "mode", "")
	fs.Var(&claude, "claude", "")
	agents.register(fs, false)
	pos, err := parseFlags(fs, args, 1)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("missing workspace name")
	}
	if mode.set && mode.s != modeLoop && mode.s != modeIterative {
		return usagef("invalid value %q for flag --mode: want loop or iterative", mode.s)
	}
	if err := checkClaudeFlag(claude); err != nil {
		return err
	}
	if err := agents.check(); err != nil {
		return err
	}
	arg := pos[0]
	project, user, err := baseLayers(env.projectRoot)
	if err != nil {
		return err
	}
	base := resolveSettings(envLayer(), project, user)
	w, err := locateWorkspace(env.projectRoot, base.WorkspacesDir, arg)
	if err != nil {
		return err
	}
	exists := true
	if err := loadWorkspace(env, w, true); errors.Is(err, os.ErrNotExist) {
		exists = false
	} else if err != nil {
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
			return withHint(fmt.Errorf("workspace %s has a task already (%s)", w.Name, shownTask), "refine it with: claude-iterate edit %s", arg)
		}
	} else {
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
	cfg := resolveSettings(claudeFlagLayer(claude, &agents), envLayer(), w.meta.configLayer, project, user)
	s, err := newSession(env, cfg, w, "setup", "", fmt.Sprintf("Help me write the task of the claude-iterate workspace %q: interview me.", w.Name))
	if err != nil {
		return err
	}

	var created []string
	if !exists {
		created, err = createWorkspaceDir(w, pos[0])
		if err != nil {
			return err
		}
		if err := w.save(); err != nil {
			removeCreated(w, created)
			return fmt.Errorf("creating workspace %s: %w", w.Dir, err)
		}
		fmt.Fprintf(env.stdout, "Created workspace %s (%s, %s mode)\n", w.Name, relPath(env.projectRoot, w.Dir), w.meta.Mode)
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
		fmt.Fprintf(env.stdout, "Next: claude-iterate run %s\n", arg)
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

// leftEmpty reports whether a workspace setup created holds nothing but what
// setup wrote: .metadata.json, .workspace.json, and at most an
// INSTRUCTIONS.md without a task.
func leftEmpty(w *workspace) bool {
	entries, err := readDir(w.Dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.Name() != metadataFile && e.Name() != settingsFile && e.Name() != instructionsFile {
			return false
		}
	}
	return true
}

func runEdit(env *cliEnv, args []string) error {
	fs := newFlagSet("edit")
	var claude stringFlag
	var agents agentFlags
	fs.Var(&claude, "claude", "")
	agents.register(fs, false)
	pos, err := parseFlags(fs, args, 1)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("missing workspace")
	}
	if err := checkClaudeFlag(claude); err != nil {
		return err
	}
	if err := agents.check(); err != nil {
		return err
	}
	arg := pos[0]
	project, user, err := baseLayers(env.projectRoot)
	if err != nil {
		return err
	}
	base := resolveSettings(envLayer(), project, user)
	w, err := openWorkspace(env, base.WorkspacesDir, arg)
	if err != nil {
		var nw *errNoWorkspace
		if errors.As(err, &nw) {
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
		return withHint(fmt.Errorf("workspace %s has no task to edit: %s", w.Name, describeTask(shownTask, state)), "write it with: claude-iterate setup %s", arg)
	}
	in, out, errOut, err := sessionTerminal(env, "edit")
	if err != nil {
		return failUsage(env, err, "edit the task yourself: %s", shownTask)
	}
	cfg := resolveSettings(claudeFlagLayer(claude, &agents), envLayer(), w.meta.configLayer, project, user)
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
	fmt.Fprintf(env.stdout, "Next: claude-iterate run %s\n", arg)
	return nil
}
