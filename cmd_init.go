package main

// This file implements the init command: a new workspace for a task. The
// rules are: every argument is checked before anything is created; an
// existing workspace is never overwritten; what init made is removed if it
// fails half way; and the task comes from a file, standard input ("-"), or a
// template the user must fill in before the first run.

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

const starterInstructions = `# Task

Describe the task here: what to build or change, where, and how to tell that
it is done. The agent reads this file at every iteration.
`

const starterTODO = `# TODO

<!-- The agent keeps this checklist: one "- [ ] item" line per step, checked
     as "- [x] item" when done. -->
`

// initUsage is the manual of the init command.
const initUsage = `Usage: claude-iterate init <workspace> [--mode loop|iterative] [--instructions FILE|-] [flags]

Creates a workspace: a directory holding INSTRUCTIONS.md (the task), a starter
TODO.md, .workspace.json (its mode and config), .metadata.json, and a
.gitignore that keeps the tool's runtime files (metadata, lock, history,
logs, ...) out of git; the task files and .workspace.json stay committable.
A clone of the repository needs no init: 'run' (or any command) takes the
workspace up from them. <workspace> is a name (letters, digits, '.', '_',
'-'; up to 64 characters; no '..', not ending in '.' or '.lock', so that
its branch claude-iterate/<name> is a git branch), created under the
workspaces directory
(claude-iterate/workspaces by default), or a path: ".", or starting with "/"
or "./". An existing workspace is never overwritten.

Options:
  --mode loop|iterative       loop: one item per iteration, progress n/total
                              (default); iterative: as much as possible per
                              iteration, stops on stagnation
  --instructions FILE         the task, copied to INSTRUCTIONS.md; "-" reads
                              standard input. Without it, INSTRUCTIONS.md is a
                              template to edit before 'run'
  -m, --max-iterations N      iterations per run, N at least 1 (default 50 loop, 20 iterative)
  -d, --delay SECS            seconds between iterations (default 2)
  --stagnation-threshold N    iterations in a row without progress that stop
                              a run (default 2 iterative, 5 loop; 0 never);
                              saved as defaultStagnationThreshold (iterative)
                              or loopStagnationThreshold (loop)
  --template NAME             start from template NAME (its task, mode and
                              config; see 'help template'); the flags here
                              override its config
  --notify-url URL            POST notifications of this workspace's runs here
                              ('' : none, whatever the user config says)
  --permission-mode MODE      claude's --permission-mode for its runs, e.g.
                              acceptEdits (claude.permissionMode)
  --allowed-tools LIST        claude's --allowedTools for its runs, e.g.
                              'Edit,Write,Bash(go test:*)' (claude.allowedTools)
  --worktree                  its runs work in a git worktree of their own,
                              on branch claude-iterate/<workspace>
                              (git.worktree; see 'help run'); another branch
                              or start: the first run's --branch, --base
  --agent NAME                the agent CLI of its runs: claude or codex (agent)
  --fallback-agent NAME       agents that take over at a usage limit, in
                              order (fallbackAgents)

The options after --mode are saved as this workspace's configuration
("config" in .workspace.json; a notify URL with credentials in
.metadata.json, out of git), above the project and user config files.

Exit status: 0 created; 1 error (it exists, an unreadable file); 2 usage
error.

Examples:
  claude-iterate init api-migration --instructions TASK.md
  echo 'Fix every lint warning in ./src' | claude-iterate init lint --instructions -
  claude-iterate init ./tasks/refactor --mode iterative -m 10
  claude-iterate init api --instructions TASK.md --permission-mode acceptEdits
`

// worktreeFlagsAtInit refuses init's --branch and --base (given as
// branch, base), which only the run that makes the workspace's worktree
// takes; worktree: init was given --worktree.
func worktreeFlagsAtInit(arg string, worktree bool, branch, base stringFlag) error {
	var flags []string
	run := "claude-iterate run " + shellQuote(arg)
	if !worktree {
		run += " --worktree"
	}
	if branch.set {
		flags, run = append(flags, "--branch"), run+" --branch "+shellQuote(branch.s)
	}
	if base.set {
		flags, run = append(flags, "--base"), run+" --base "+shellQuote(base.s)
	}
	return &inputError{withHint(fmt.Errorf("init does not take %s: the run that makes the workspace's worktree names its branch and start", strings.Join(flags, " and ")),
		"init without it, then: %s", run)}
}

func runInit(env *cliEnv, args []string) error {
	fs := newFlagSet("init")
	mode := fs.String("mode", modeLoop, "")
	var instructions stringFlag
	fs.Var(&instructions, "instructions", "")
	var template stringFlag
	fs.Var(&template, "template", "")
	worktree := fs.Bool("worktree", false, "")
	// --branch and --base name a new worktree's branch and start, which
	// its first run makes: refused here with the command that takes them.
	var branch, base stringFlag
	fs.Var(&branch, "branch", "")
	fs.Var(&base, "base", "")
	var sf settingFlags
	sf.register(fs)
	arg, err := parseWorkspaceArg(fs, args, "workspace name")
	if err != nil {
		return err
	}
	if branch.set || base.set {
		return worktreeFlagsAtInit(arg, *worktree, branch, base)
	}
	if err := checkModeFlag(*mode); err != nil {
		return err
	}
	if sf.maxIterations.set && sf.maxIterations.n == 0 {
		return errZeroIterations
	}
	if err := checkPermissionFlags(sf.permissionMode, sf.allowedTools); err != nil {
		return err
	}
	if err := sf.agents.check(); err != nil {
		return err
	}
	if err := firstError(instructions.notBlank("--instructions"), template.notBlank("--template")); err != nil {
		return err
	}
	if template.set && instructions.set {
		return usagef("--template and --instructions contradict each other: the template holds the task")
	}
	if err := sf.checkNotifyURL(); err != nil {
		return err
	}
	if err := refuseGitDir(env.projectRoot, "the project root"); err != nil { // gitworktree.go
		return err
	}
	dir, err := workspacesDir(env)
	if err != nil {
		return err
	}
	w, err := locateNewWorkspace(env.projectRoot, dir, arg)
	if err != nil {
		return err
	}
	if err := refuseGitDir(w.Dir, "the workspace"); err != nil {
		return err
	}

	// Read everything before creating anything.
	text := starterInstructions
	if instructions.set {
		text, err = readInstructions(env.stdin, instructions.s)
		if err != nil {
			return err
		}
	}
	cfg := map[string]any{}
	if template.set {
		t, err := findTemplate(env, template.s, false)
		if err != nil {
			return err
		}
		text = t.instructions
		modeSet := false
		fs.Visit(func(f *flag.Flag) { modeSet = modeSet || f.Name == "mode" })
		if !modeSet {
			*mode = t.Mode
		}
		for k, v := range t.Config {
			cfg[k] = v // the flags below override it
		}
	}
	sf.addTo(cfg, stagnationKey(*mode))
	worktreeSet := false
	fs.Visit(func(f *flag.Flag) { worktreeSet = worktreeSet || f.Name == "worktree" })
	if worktreeSet {
		cfg["git.worktree"] = *worktree // --worktree=false says false, over a template's
	}
	if *worktree {
		// The worktree is made by the first run; a project it cannot be
		// made in is refused now, not at that run.
		if err := checkGitVersion(); err != nil {
			return err
		}
		if _, err := openGitRepo(env.projectRoot, "--worktree"); err != nil {
			return err
		}
		if why := branchNameFault(w.Name); why != "" { // a path's directory name; a name's is checked
			return usagef("workspace %s cannot have --worktree's branch %s%s (%s): init it without --worktree, and give its first run --worktree --branch NAME", arg, branchPrefix, w.Name, why)
		}
	}
	if err := checkInitAgents(env, cfg); err != nil {
		return err
	}
	w.meta = &metadata{Name: w.Name, Mode: *mode, Created: time.Now().UTC().Truncate(time.Second), Status: statusNew}
	if len(cfg) > 0 {
		w.meta.Config = cfg
	}

	created, err := createWorkspaceDir(w, arg)
	if err != nil {
		return err
	}
	if err := writeWorkspaceFiles(w, text); err != nil {
		removeCreated(w, created)
		return fmt.Errorf("creating workspace %s: %w", w.Dir, err)
	}
	if err := ignoreRuntimeFiles(w); err != nil {
		fmt.Fprintf(env.stderr, "%s: warning: %v\n", progName, err)
	}
	shown := relPath(env.projectRoot, w.Dir)
	if note := projectRootNote(env); note != "" {
		fmt.Fprintln(env.stdout, note)
	}
	fmt.Fprintf(env.stdout, "Created workspace %s (%s, %s mode)\n", w.Name, shown, *mode)
	warnNearName(env, dir, arg)
	if !instructions.set && !template.set {
		fmt.Fprintf(env.stdout, "Next: describe the task in %s, then run: claude-iterate run %s\n", filepath.Join(shown, instructionsFile), shellQuote(arg))
	} else {
		fmt.Fprintf(env.stdout, "Next: claude-iterate run %s\n", shellQuote(arg))
	}
	return nil
}

// readInstructions reads the task from a file, or standard input for "-".
func readInstructions(stdin io.Reader, path string) (string, error) {
	var data []byte
	var err error
	name := path
	if path == "-" {
		name = "standard input"
		data, err = readStream(stdin, taskFileCap)
	} else {
		var fi os.FileInfo
		fi, err = os.Stat(path)
		if err == nil && fi.IsDir() {
			return "", fmt.Errorf("instructions file %s is a directory", path)
		}
		data, err = readRegularFile(path, taskFileCap)
	}
	if err == nil {
		err = taskText(data) // run's rule too (fileCache)
	}
	if err != nil && path == "-" {
		return "", fmt.Errorf("reading instructions from %s: %w", name, unwrapPathError(err))
	}
	if err != nil {
		return "", readFault("instructions file", path, path, err, false)
	}
	if strings.TrimSpace(string(data)) == "" {
		return "", fmt.Errorf("instructions from %s are empty", name)
	}
	s := string(data)
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s, nil
}

// checkInitAgents refuses agent settings of a new workspace (cfg) that no
// run could use over the project and user config: a usage error naming
// the key (agentSettingsFaults).
func checkInitAgents(env *cliEnv, cfg map[string]any) error {
	l := &configLayer{name: layerWorkspace, values: map[string]any{}}
	if err := checkConfigObject("", cfg, l.values); err != nil {
		return err
	}
	project, user, err := baseLayers(env.projectRoot)
	if err != nil {
		return err
	}
	_, agents := cfg["agent"]
	_, fallbacks := cfg["fallbackAgents"]
	for _, f := range agentSettingsFaults(resolveSettings(l, project, user)) {
		if _, ok := cfg[f.key]; ok || agents || fallbacks {
			return usagef("%s: %s", f.key, f.msg)
		}
	}
	return nil
}

// settingFlags are the flags that init and run both take, each of which
// sets a configuration key: init keeps them in the workspace's config, run
// for its own run.
type settingFlags struct {
	maxIterations, stagnation               countFlag
	delay                                   secondsFlag
	notifyURL, permissionMode, allowedTools stringFlag
	agents                                  agentFlags
}

// register adds the flags to fs.
func (s *settingFlags) register(fs *flag.FlagSet) {
	fs.Var(&s.maxIterations, "m", "")
	fs.Var(&s.maxIterations, "max-iterations", "")
	fs.Var(&s.delay, "d", "")
	fs.Var(&s.delay, "delay", "")
	fs.Var(&s.stagnation, "stagnation-threshold", "")
	fs.Var(&s.notifyURL, "notify-url", "")
	fs.Var(&s.permissionMode, "permission-mode", "")
	fs.Var(&s.allowedTools, "allowed-tools", "")
	s.agents.register(fs, true)
}

// checkNotifyURL refuses a --notify-url that cannot be notified; the
// message leaves the value out, which may hold a password.
func (s *settingFlags) checkNotifyURL() error {
	if s.notifyURL.set {
		if err := checkNotifyURL(s.notifyURL.s); err != nil {
			return usagef("invalid value for flag --notify-url: %v", err)
		}
	}
	return nil
}

// addTo sets the configuration keys of the flags given in values;
// --stagnation-threshold sets stagnationKeys.
func (s *settingFlags) addTo(values map[string]any, stagnationKeys ...string) {
	if s.maxIterations.set {
		values["defaultMaxIterations"] = s.maxIterations.n
	}
	if s.delay.set {
		values["defaultDelay"] = s.delay.d.Seconds()
	}
	if s.stagnation.set {
		for _, k := range stagnationKeys {
			values[k] = s.stagnation.n
		}
	}
	if s.notifyURL.set {
		values["notifyUrl"] = s.notifyURL.s
	}
	addPermissionSettings(values, s.permissionMode, s.allowedTools)
	s.agents.addTo(values)
}

// checkModeFlag refuses a --mode (init, setup) that names no mode.
func checkModeFlag(s string) error {
	if !validMode(s) {
		return usagef("invalid value %q for flag --mode: want loop or iterative", s)
	}
	return nil
}
