package main

// This file implements the run command: the iteration loop. The rules are:
// one agent at a time; an iteration is never cut short by a graceful stop
// (the .stop file, the s key), only by a signal or a hang protection; every
// wait — the agent, the delay between iterations, a usage-limit wait — is
// one event loop that answers signals, keys and the stop file; and every way
// out of a run goes through finish, which sweeps leftover processes, deletes
// .stop, writes the metadata and the log's last lines, restores the terminal
// and prints why the run ended.

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"
)

var runCommand = &command{
	name:    "run",
	summary: "run the agent in a loop on a workspace's task",
	usage: `Usage: claude-iterate run [<workspace>] [flags]
       claude-iterate run --prompt PROMPT.md [flags]      (ralph mode)

Runs the agent (claude -p) again and again on the workspace's task until
.status.json says it is complete, a stop condition is met, or a stop is
requested. Each iteration sends the prompt on the agent's standard input and
reads its stream-json output.

With --prompt and no workspace (ralph mode), the current directory is the
workspace, state lives in .claude-iterate/, and PROMPT.md is sent verbatim
each iteration, re-read every time so it can be edited while the loop runs.

Options:
  -m, --max-iterations N      stop after N iterations (default 50 loop, 20 iterative)
  -d, --delay SECS            seconds between iterations (default 2)
  --no-delay                  no pause between iterations
  --stagnation-threshold N    iterative mode: stop after N iterations without
                              work (default 2; 0 never)
  -v, --verbose               show the agent's text and tool calls as they stream
  -q, --quiet                 print errors only
  --output LEVEL              quiet, progress (default) or verbose
  --dry-run                   run the whole loop against a built-in mock agent;
                              creates the named workspace if it does not exist
  --prompt FILE               ralph mode: send FILE verbatim each iteration
  --claude PATH               the agent executable (default claude; also
                              claude.command, $CLAUDE_ITERATE_CLAUDE)
  --model M                   passed to the agent
  --max-turns N               passed to the agent
  --dangerously-skip-permissions
                              passed to the agent (never saved); as root the
                              real CLI refuses it unless IS_SANDBOX=1

Stop conditions (checked after each iteration; see Conditions below):
  --until-output TEXT         complete when the iteration's final result
                              contains TEXT (e.g. '<promise>COMPLETE</promise>')
  --until-regex RE            complete when the final result matches RE
  --until-file PATH           complete when PATH exists
                              (each --until-* may be repeated: any one completes)
  --test-cmd CMD              run CMD (with sh -c) after each iteration
  --until-tests-pass          complete when every test of --test-cmd passes
  --max-test-failures N       end the run (exit 1) after N failing test runs
                              in a row
  --test-timeout D            end a test run that takes longer (default 10m)
  --max-duration D            stop after D (e.g. 2h30m, "1h 30m"); also bounds
                              a usage-limit wait
  --max-cost USD              stop once the run has cost USD (e.g. 2.50)
  --max-failures N            end the run (exit 1) after N failed iterations in
                              a row (default 3)
  --conditions FILE           stop conditions as JSON (below); replaces the
                              "stop" config key, and the flags above add to it

Hang protection:
  --iteration-timeout D       end an iteration that runs longer than D
  --idle-timeout D            end an iteration whose agent prints nothing for D
  --interrupt-grace D         after Ctrl+C, how long the agent may clean up
                              before it is killed (default 10s)
  --no-keyboard               do not read keys from the terminal

Stopping:
  s                           stop after the current iteration (again: cancel)
  claude-iterate stop <ws>    the same from another shell
  Ctrl+C                      interrupt the agent, wait for it, exit 130
  Ctrl+C twice                kill the agent and all it started, exit 130
  Ctrl+Z, fg, bg              suspend and resume everything

Conditions:
  A conditions file (or the "stop" key of .claude-iterate.json or of a
  workspace's config) holds up to three lists and the test command:

    {"success":    [...],   the task is done: exit 0, status completed
     "failure":    [...],   give up: exit 1, status failed
     "conditions": [...],   stop: exit 0, status stopped
     "test_cmd": "go test -json ./...", "test_timeout": "5m"}

  Each condition is {"type": T, fields...}; T is one of
    max_iterations {count}           max_duration {duration: "1h 30m"}
    max_cost {usd}                   failure_streak {count}
    test_failure_streak {count}      no_progress {iterations}
    all_tests_pass                   specific_tests_pass {tests: [names]}
    task_complete                    output_pattern {pattern, is_regex}
    file_created {path}              file_contains {path, content}
    on_error {pattern (optional)}    custom_script {script, args, timeout}
    user_signal                      never
    all {conditions: [...]}          any {conditions: [...]}
    not {condition: {...}}

  After each iteration the first met condition ends the run and names the
  reason: failure conditions first, then success, then the others; within
  a list by priority (on_error, user_signal, max_*, streaks and no_progress,
  tests and task_complete, output_pattern, files, custom_script, all/any,
  not, never). The loop's own stops are conditions too: -m is
  max_iterations, --max-failures failure_streak, stagnation no_progress,
  the s key and the .stop file user_signal, and .status.json's "complete"
  is task_complete, a success condition that any success condition you
  give replaces (add {"type":"task_complete"} to keep it).
  output_pattern sees only the iteration's final result text, never the
  prompt or tool output. Paths and scripts are relative to the current
  directory; a custom_script is met when it exits 0 (default timeout 1m).
  Test results are read from go test -json or -v output, TAP, or an
  "N passed, N failed" line; otherwise the test command is one test that
  passes on exit status 0. 'claude-iterate status' shows each condition's
  progress.

Exit status: 0 completed or stopped; 1 error or failure condition; 2 usage
error; 129/130/143 after SIGHUP/SIGINT/SIGTERM.

Examples:
  claude-iterate run demo
  claude-iterate run demo --dry-run
  claude-iterate run demo -v -m 5 --max-duration 1h
  claude-iterate run --prompt PROMPT.md --until-output '<promise>COMPLETE</promise>' -m 10
  claude-iterate run demo --test-cmd 'go test -json ./...' --until-tests-pass
  claude-iterate run demo --conditions stop.json
`,
}

func init() { runCommand.run = runRun }

// runOptions are the run command's flags.
type runOptions struct {
	maxIterations, stagnation, maxTurns, maxFailures countFlag
	delay                                            secondsFlag
	noDelay, verbose, quiet, skipPerms, dryRun       bool
	noKeyboard                                       bool
	output, prompt, claude, model                    stringFlag
	maxDuration, iterationTimeout, idleTimeout       durationFlag
	interruptGrace                                   durationFlag

	// Stop conditions.
	maxCost                            usdFlag
	untilOutput, untilRegex, untilFile listFlag // each may be repeated
	testCmd, conditions                stringFlag
	untilTestsPass                     bool
	maxTestFailures                    countFlag
	testTimeout                        durationFlag
}

func parseRunFlags(args []string) (*runOptions, []string, error) {
	o := &runOptions{}
	fs := newFlagSet("run")
	fs.Var(&o.maxIterations, "m", "")
	fs.Var(&o.maxIterations, "max-iterations", "")
	fs.Var(&o.delay, "d", "")
	fs.Var(&o.delay, "delay", "")
	fs.BoolVar(&o.noDelay, "no-delay", false, "")
	fs.Var(&o.stagnation, "stagnation-threshold", "")
	fs.BoolVar(&o.verbose, "v", false, "")
	fs.BoolVar(&o.verbose, "verbose", false, "")
	fs.BoolVar(&o.quiet, "q", false, "")
	fs.BoolVar(&o.quiet, "quiet", false, "")
	fs.Var(&o.output, "output", "")
	fs.BoolVar(&o.skipPerms, "dangerously-skip-permissions", false, "")
	fs.BoolVar(&o.dryRun, "dry-run", false, "")
	fs.Var(&o.prompt, "prompt", "")
	fs.Var(&o.claude, "claude", "")
	fs.Var(&o.model, "model", "")
	fs.Var(&o.maxTurns, "max-turns", "")
	fs.Var(&o.maxDuration, "max-duration", "")
	fs.Var(&o.iterationTimeout, "iteration-timeout", "")
	fs.Var(&o.idleTimeout, "idle-timeout", "")
	fs.Var(&o.maxFailures, "max-failures", "")
	fs.Var(&o.interruptGrace, "interrupt-grace", "")
	fs.BoolVar(&o.noKeyboard, "no-keyboard", false, "")
	fs.Var(&o.maxCost, "max-cost", "")
	o.untilRegex.check = func(s string) error {
		if _, err := regexp.Compile(s); err != nil {
			return errors.New(regexpErrorText(err))
		}
		return nil
	}
	fs.Var(&o.untilOutput, "until-output", "")
	fs.Var(&o.untilRegex, "until-regex", "")
	fs.Var(&o.untilFile, "until-file", "")
	fs.Var(&o.testCmd, "test-cmd", "")
	fs.BoolVar(&o.untilTestsPass, "until-tests-pass", false, "")
	fs.Var(&o.maxTestFailures, "max-test-failures", "")
	fs.Var(&o.testTimeout, "test-timeout", "")
	fs.Var(&o.conditions, "conditions", "")
	pos, err := parseFlags(fs, args, 1)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range []struct {
		name string
		v    stringFlag
	}{{"--test-cmd", o.testCmd}, {"--conditions", o.conditions}} {
		if f.v.set && strings.TrimSpace(f.v.s) == "" {
			return nil, nil, usagef("invalid value %q for flag %s: empty", f.v.s, f.name)
		}
	}
	for _, f := range []struct {
		name string
		v    durationFlag
	}{{"--max-duration", o.maxDuration}, {"--test-timeout", o.testTimeout}} {
		if f.v.set && f.v.d == 0 {
			return nil, nil, usagef("invalid value %q for flag %s: must be above 0", "0", f.name)
		}
	}
	if o.maxTestFailures.set && o.maxTestFailures.n == 0 {
		return nil, nil, usagef("invalid value \"0\" for flag --max-test-failures: must be at least 1")
	}
	if o.verbose && o.quiet {
		return nil, nil, usagef("-v/--verbose and -q/--quiet contradict each other")
	}
	if o.output.set {
		if err := checkOutputLevel(o.output.s); err != nil {
			return nil, nil, usagef("invalid value %q for flag --output: %v", o.output.s, err)
		}
		if o.verbose || o.quiet {
			return nil, nil, usagef("--output and -v/-q contradict each other")
		}
	}
	if o.noDelay && o.delay.set {
		return nil, nil, usagef("--no-delay and -d/--delay contradict each other")
	}
	if o.maxFailures.set && o.maxFailures.n == 0 {
		return nil, nil, usagef("invalid value \"0\" for flag --max-failures: must be at least 1")
	}
	if o.claude.set && o.claude.s == "" {
		return nil, nil, usagef("invalid value \"\" for flag --claude: empty")
	}
	if len(pos) == 0 && !o.prompt.set {
		return nil, nil, usagef("missing workspace (or --prompt FILE for ralph mode)")
	}
	return o, pos, nil
}

// flagSettings is the flag layer of the configuration.
func (o *runOptions) flagSettings() *configLayer {
	l := &configLayer{name: layerFlag, values: map[string]any{}}
	if o.maxIterations.set {
		l.values["defaultMaxIterations"] = o.maxIterations.n
	}
	if o.delay.set {
		l.values["defaultDelay"] = o.delay.d.Seconds()
	}
	if o.noDelay {
		l.values["defaultDelay"] = 0.0
	}
	if o.stagnation.set {
		l.values["defaultStagnationThreshold"] = o.stagnation.n
	}
	switch {
	case o.output.set:
		l.values["outputLevel"] = o.output.s
	case o.verbose:
		l.values["outputLevel"] = outputVerbose
	case o.quiet:
		l.values["outputLevel"] = outputQuiet
	}
	if o.claude.set {
		l.values["claude.command"] = o.claude.s
	}
	return l
}

// Defaults of the hang and interrupt protections.
const (
	defaultMaxFailures     = 3
	defaultInterruptGrace  = 10 * time.Second
	terminateTimeout       = 5 * time.Second
	resultWatchdogDefault  = 30 * time.Second
	pollInterval           = 100 * time.Millisecond
	drainWait              = 200 * time.Millisecond
	readerCloseWait        = 2 * time.Second
	stopFilePollInterval   = time.Second
	resultWatchdogEnv      = "CLAUDE_ITERATE_RESULT_WATCHDOG" // tests shorten it
	limitMarginEnv         = "CLAUDE_ITERATE_LIMIT_MARGIN"    // tests shorten it
	notFoundMessage        = "claude CLI not found: install it or set --claude / claude.command"
	dryRunTotalItems       = 3
	dryRunDefaultDelay     = time.Second
	dryRunDemoInstructions = "# Demo task\n\nA dry run: the built-in mock agent completes three items, one per iteration.\n"
)

// runner is one run's state. Its fields are owned by the goroutine running
// the loop; the agent's readers touch only the agent.
type runner struct {
	env   *cliEnv
	ws    *workspace
	opts  *runOptions
	cfg   *settings
	con   *console
	log   *runLog
	kb    *keyboard
	sigs  chan os.Signal
	spec  agentSpec // path, argv0 and leading args; prompt set per iteration
	mode  string
	start time.Time

	maxIterations, stagnation, maxFailures int
	delay, interruptGrace, resultWatchdog  time.Duration
	stops                                  stopSet

	iter           int // iterations counted in this run
	failStreak     int
	sinceProgress  int // iterations without progress (no_progress)
	bestCompleted  int // the highest progress.completed seen (loop mode)
	testFailStreak int
	lastTests      *testResults
	cost           float64
	suspended      time.Duration
	stopSource     string // "keyboard" or "file" while a stop is requested
	lastStopPoll   time.Time
	statusWarned   bool
	interruptSig   os.Signal
	systemPrompt   string
}

// ending is how a run ends.
type ending struct {
	code   int
	reason string
	status string
	hint   string
}

func runRun(env *cliEnv, args []string) (err error) {
	opts, pos, err := parseRunFlags(args)
	if err != nil {
		return err
	}
	r := &runner{env: env, opts: opts, sigs: make(chan os.Signal, 8), start: time.Now()}
	// Signals first: before the terminal changes and before any child starts.
	notifySignals(r.sigs)
	becomeSubreaper()
	if err := r.setup(pos); err != nil {
		return err
	}
	if !opts.noKeyboard {
		r.kb = openKeyboard(env.stdin)
	}
	defer r.kb.close()
	end := r.protectedLoop()
	return r.finish(end)
}

// protectedLoop runs the loop, turning a panic into an error ending so that
// cleanup still runs and no stack trace reaches the user.
func (r *runner) protectedLoop() (end ending) {
	defer func() {
		if p := recover(); p != nil {
			r.log.printf("INTERNAL ERROR: %v", p)
			end = ending{code: exitError, reason: fmt.Sprintf("error: internal error: %v", p), status: statusFailed}
		}
	}()
	return r.loop()
}

// setup resolves the workspace, configuration and agent, and opens the log.
func (r *runner) setup(pos []string) error {
	env, opts := r.env, r.opts
	project, user, err := baseLayers(env.projectRoot)
	if err != nil {
		return err
	}
	base := resolveSettings(opts.flagSettings(), envLayer(), project, user)
	var ws *workspace
	switch {
	case len(pos) == 1:
		ws, err = openWorkspace(env.projectRoot, base.str("workspacesDir"), pos[0])
		if err != nil && opts.dryRun && !isWorkspacePath(pos[0]) {
			var nw *hintError
			if errors.As(err, &nw) {
				ws, err = r.createDemo(base.str("workspacesDir"), pos[0])
			}
		}
	default:
		ws = ralphWorkspace(env.projectRoot)
		if err = ws.load(); errors.Is(err, os.ErrNotExist) {
			ws.meta = &metadata{Name: ws.Name, Mode: modeLoop, Created: time.Now().UTC().Truncate(time.Second), Status: statusNew}
			err = ws.save()
		}
	}
	if err != nil {
		return err
	}
	r.ws = ws
	r.mode = ws.meta.Mode
	if pid := ws.runningPID(); pid != 0 && pid != os.Getpid() {
		return withHint(fmt.Errorf("workspace %s is already being run (pid %d)", ws.Name, pid), "stop that run first: claude-iterate stop %s", ws.Name)
	}
	r.cfg = resolveSettings(opts.flagSettings(), envLayer(), ws.meta.configLayer, project, user)
	r.con = newConsole(env.stdout, env.stderr, r.cfg.str("outputLevel"))

	r.maxIterations = r.cfg.count("defaultMaxIterations")
	if r.maxIterations == 0 {
		r.maxIterations = defaultMaxIterationsFor(r.mode)
	}
	r.delay = r.cfg.seconds("defaultDelay")
	if opts.dryRun && r.cfg.sources["defaultDelay"] == layerDefault {
		r.delay = dryRunDefaultDelay
	}
	r.stagnation = r.cfg.count("defaultStagnationThreshold")
	r.maxFailures = defaultMaxFailures
	if opts.maxFailures.set {
		r.maxFailures = opts.maxFailures.n
	}
	r.interruptGrace = defaultInterruptGrace
	if opts.interruptGrace.set {
		r.interruptGrace = opts.interruptGrace.d
	}
	r.resultWatchdog = resultWatchdogDefault
	if d, err := time.ParseDuration(os.Getenv(resultWatchdogEnv)); err == nil && d > 0 {
		r.resultWatchdog = d
	}
	if ts, _ := readTaskStatus(ws); ts.HasProgress {
		r.bestCompleted = ts.Completed
	}
	if err := r.buildStops(); err != nil {
		return err
	}

	if err := r.checkTask(); err != nil {
		return err
	}
	if err := r.resolveAgent(); err != nil {
		return err
	}
	if opts.skipPerms {
		r.con.noticef("warning: --dangerously-skip-permissions: the agent will run every tool without asking")
	}
	r.log, err = openRunLog(ws.logsPath(), r.start, func(err error) { r.con.errorf("warning: %v", err) })
	if err != nil {
		r.con.errorf("warning: cannot create a log in %s: %v; running without a log", ws.logsPath(), unwrapPathError(err))
		r.log = nil
	}
	r.writeLogHeader()
	now := time.Now().UTC().Truncate(time.Second)
	ws.meta.Status, ws.meta.PID, ws.meta.LastRun, ws.meta.LastRunIterations = statusRunning, os.Getpid(), &now, 0
	ws.meta.Conditions = r.stops.initialReports()
	return ws.save()
}

// buildStops builds the run's stop conditions: --conditions FILE or the
// "stop" config key, then those the flags add, then the loop's own. Faults
// are refused here, before the first iteration.
func (r *runner) buildStops() error {
	opts := r.opts
	var cfg stopConfig
	if opts.conditions.set {
		doc, err := readJSONDoc(opts.conditions.s)
		if err != nil {
			var fe *fileError
			if errors.As(err, &fe) {
				return &inputError{err}
			}
			return usagef("invalid value %q for flag --conditions: %v", opts.conditions.s, unwrapPathError(err))
		}
		c, err := decodeStopConfig(doc, doc.Root, "")
		if err != nil {
			return &inputError{err}
		}
		cfg = *c
	} else if c, ok := r.cfg.values["stop"].(*stopConfig); ok {
		cfg = *c
	}
	// The lists are appended to below: never into the config's arrays.
	cfg.Conditions, cfg.Success, cfg.Failure = slices.Clone(cfg.Conditions), slices.Clone(cfg.Success), slices.Clone(cfg.Failure)

	if opts.testCmd.set {
		cfg.TestCmd = opts.testCmd.s
	}
	if opts.maxDuration.set {
		cfg.Conditions = append(cfg.Conditions, &condition{Type: condMaxDuration, Duration: opts.maxDuration.d})
	}
	if opts.maxCost.set {
		cfg.Conditions = append(cfg.Conditions, &condition{Type: condMaxCost, USD: opts.maxCost.usd})
	}
	for _, p := range opts.untilOutput.vals {
		cfg.Success = append(cfg.Success, &condition{Type: condOutputPattern, Pattern: p})
	}
	for _, p := range opts.untilRegex.vals {
		cfg.Success = append(cfg.Success, &condition{Type: condOutputPattern, Pattern: p, IsRegex: true, re: regexp.MustCompile(p)})
	}
	for _, p := range opts.untilFile.vals {
		cfg.Success = append(cfg.Success, &condition{Type: condFileCreated, Path: p})
	}
	if opts.untilTestsPass {
		if cfg.TestCmd == "" {
			return usagef("--until-tests-pass needs a test command: add --test-cmd CMD")
		}
		cfg.Success = append(cfg.Success, &condition{Type: condAllTestsPass})
	}
	if opts.testTimeout.set && cfg.TestCmd == "" {
		return usagef("--test-timeout needs a test command: add --test-cmd CMD")
	}
	if opts.maxTestFailures.set {
		if cfg.TestCmd == "" {
			return usagef("--max-test-failures needs a test command: add --test-cmd CMD")
		}
		cfg.Failure = append(cfg.Failure, &condition{Type: condTestFailureStreak, Count: opts.maxTestFailures.n})
	}

	// The loop's own stops.
	if len(cfg.Success) == 0 {
		cfg.Success = append(cfg.Success, &condition{Type: condTaskComplete, builtin: true})
	}
	cfg.Conditions = append(cfg.Conditions, &condition{Type: condMaxIterations, Count: r.maxIterations, builtin: true})
	if r.mode == modeIterative && r.stagnation > 0 {
		cfg.Conditions = append(cfg.Conditions, &condition{Type: condNoProgress, Iterations: r.stagnation, builtin: true})
	}
	cfg.Conditions = append(cfg.Conditions, &condition{Type: condUserSignal, builtin: true})
	cfg.Failure = append(cfg.Failure, &condition{Type: condFailureStreak, Count: r.maxFailures, builtin: true})

	r.stops = stopSet{cfg: cfg}
	r.stops.order()
	for _, gc := range r.stops.ordered {
		if gc.c.Type == condMaxIterations && gc.group == groupConditions {
			r.maxIterations = min(r.maxIterations, gc.c.Count) // for "Iteration 2/5"
		}
	}
	var fault error
	for _, gc := range r.stops.ordered {
		gc.c.walk(func(c *condition) {
			if fault != nil {
				return
			}
			switch c.Type {
			case condAllTestsPass, condSpecificTestsPass, condTestFailureStreak:
				if cfg.TestCmd == "" {
					fault = &inputError{c.errorf("", "%s needs a test command: give --test-cmd CMD, or \"test_cmd\" next to \"%s\"", c.Type, gc.group)}
				}
			case condCustomScript:
				if err := checkScript(resolvePath(r.env.projectRoot, c.Script)); err != nil {
					fault = &inputError{c.errorf("script", "%s: %v", c.Script, err)}
				}
			}
		})
	}
	return fault
}

// checkScript makes sure a custom_script can be run.
func checkScript(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return errors.New("no such file")
	case err != nil:
		return unwrapPathError(err)
	case fi.IsDir():
		return errors.New("is a directory")
	case fi.Mode()&0o111 == 0:
		return fmt.Errorf("not executable (chmod +x %s)", path)
	}
	return nil
}

// createDemo makes the workspace of a first dry run.
func (r *runner) createDemo(workspacesDir, name string) (*workspace, error) {
	w, err := locateWorkspace(r.env.projectRoot, workspacesDir, name)
	if err != nil {
		return nil, err
	}
	w.meta = &metadata{Name: name, Mode: modeLoop, Created: time.Now().UTC().Truncate(time.Second), Status: statusNew}
	created, err := createWorkspaceDir(w)
	if err != nil {
		return nil, err
	}
	if err := writeWorkspaceFiles(w, dryRunDemoInstructions); err != nil {
		removeCreated(w, created)
		return nil, err
	}
	if err := w.load(); err != nil {
		return nil, err
	}
	fmt.Fprintf(r.env.stdout, "Created demo workspace %s (%s) for the dry run\n", name, relPath(r.env.projectRoot, w.Dir))
	return w, nil
}

// checkTask makes sure there is something to send.
func (r *runner) checkTask() error {
	if r.opts.prompt.set {
		_, err := r.readPromptFile()
		return err
	}
	data, err := os.ReadFile(r.ws.instructionsPath())
	if err != nil {
		return withHint(fmt.Errorf("reading the task: %w", err), "write it with claude: claude-iterate setup %s, or write it to %s", r.ws.Name, r.ws.instructionsPath())
	}
	if string(data) == starterInstructions && !r.opts.dryRun {
		return withHint(fmt.Errorf("%s still holds the template", relPath(r.env.projectRoot, r.ws.instructionsPath())), "describe the task in it first (or with claude: claude-iterate setup %s), or try: claude-iterate run %s --dry-run", r.ws.Name, r.ws.Name)
	}
	return nil
}

func (r *runner) readPromptFile() (string, error) {
	data, err := os.ReadFile(r.opts.prompt.s)
	if err != nil {
		return "", fmt.Errorf("reading prompt file: %w", err)
	}
	if strings.TrimSpace(string(data)) == "" {
		return "", fmt.Errorf("prompt file %s is empty", r.opts.prompt.s)
	}
	return string(data), nil
}

// resolveAgent finds the agent and builds its fixed arguments.
func (r *runner) resolveAgent() error {
	var args []string
	if r.opts.dryRun {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("finding this program for the dry run: %w", err)
		}
		r.spec = agentSpec{path: exe, argv0: progName}
		args = append(args, mockAgentCommand)
		r.spec.env = []string{mockEnvStatus + "=" + r.ws.statusPath(), fmt.Sprintf("%s=%d", mockEnvTotal, dryRunTotalItems)}
	} else {
		cmd := r.cfg.str("claude.command")
		path, err := exec.LookPath(cmd)
		if err != nil {
			return withHint(errors.New(notFoundMessage), "looked for %q in $PATH", cmd)
		}
		r.spec = agentSpec{path: path, argv0: cmd}
	}
	args = append(args, r.cfg.list("claude.args")...)
	args = append(args, "-p", "--output-format", "stream-json", "--verbose")
	if !r.opts.prompt.set {
		tmpl, _, err := promptTemplate(r.ws, r.env.projectRoot, r.mode, "system")
		if err != nil {
			return err
		}
		r.systemPrompt = expandPrompt(tmpl, r.env.projectRoot, r.ws.Dir, "")
		args = append(args, "--append-system-prompt", r.systemPrompt)
	}
	if r.opts.skipPerms {
		args = append(args, "--dangerously-skip-permissions")
	}
	if r.opts.model.set {
		args = append(args, "--model", r.opts.model.s)
	}
	if r.opts.maxTurns.set {
		args = append(args, "--max-turns", fmt.Sprint(r.opts.maxTurns.n))
	}
	r.spec.args = args
	r.spec.dir = r.env.projectRoot
	return nil
}

func (r *runner) writeLogHeader() {
	if r.log == nil {
		return
	}
	r.log.section("CLAUDE ITERATE - EXECUTION LOG", "Started: "+logTime(r.start))
	meta := []string{
		"Workspace: " + r.ws.Name,
		"Path: " + r.ws.Dir,
		"Mode: " + r.mode,
		fmt.Sprintf("Max Iterations: %d", r.maxIterations),
		"Start Time: " + logTime(r.start),
		"Agent: " + r.spec.path,
		"PID: " + fmt.Sprint(os.Getpid()),
	}
	if r.opts.dryRun {
		meta = append(meta, "Dry run: built-in mock agent")
	}
	r.log.section("RUN METADATA", meta...)
	var conds []string
	for _, gc := range r.stops.ordered {
		conds = append(conds, fmt.Sprintf("[%s] %s", gc.group, gc.c.describe()))
	}
	if r.stops.cfg.TestCmd != "" {
		conds = append(conds, fmt.Sprintf("Test command: %s (timeout %s)", r.stops.cfg.TestCmd, shortDuration(r.testTimeout())))
	}
	r.log.section("STOP CONDITIONS", conds...)
	if r.opts.prompt.set {
		p, _ := r.readPromptFile()
		r.log.section("PROMPT (ralph mode: "+r.opts.prompt.s+", re-read every iteration)", strings.TrimRight(p, "\n"))
	} else {
		data, _ := os.ReadFile(r.ws.instructionsPath())
		r.log.section("INSTRUCTIONS", strings.TrimRight(string(data), "\n"))
		r.log.section("SYSTEM PROMPT", strings.TrimRight(r.systemPrompt, "\n"))
	}
	r.log.Flush()
}

// buildPrompt returns this iteration's prompt.
func (r *runner) buildPrompt() (string, error) {
	if r.opts.prompt.set {
		return r.readPromptFile()
	}
	data, err := os.ReadFile(r.ws.instructionsPath())
	if err != nil {
		return "", fmt.Errorf("reading the task: %w", err)
	}
	tmpl, _, err := promptTemplate(r.ws, r.env.projectRoot, r.mode, "iteration")
	if err != nil {
		return "", err
	}
	return expandPrompt(tmpl, r.env.projectRoot, r.ws.Dir, string(data)), nil
}

// loop runs iterations until something ends the run.
func (r *runner) loop() ending {
	if r.opts.dryRun {
		r.con.progressf("Dry run: the built-in mock agent stands in for claude")
	}
	r.con.progressf("Running %s (%s mode, up to %d iterations); press s to stop after the current iteration", r.ws.Name, r.mode, r.maxIterations)
	var given []string
	for _, gc := range r.stops.ordered {
		if !gc.c.builtin {
			given = append(given, groupVerb[gc.group]+" "+gc.c.describe())
		}
	}
	if len(given) > 0 {
		r.con.progressf("Stop conditions: %s", strings.Join(given, "; "))
	}
	for {
		if end := r.checkDeadline(); end != nil {
			return *end
		}
		o, err := r.iterate()
		if err != nil {
			return ending{code: exitError, reason: "error: " + err.Error(), status: statusFailed}
		}
		if o.interrupted {
			return r.interruptEnding()
		}
		if limited, reset := o.usageLimit(time.Now()); limited {
			r.log.Flush()
			if end := r.waitForLimit(reset); end != nil {
				return *end
			}
			continue // the iteration is not counted, and is retried
		}
		if end := r.afterIteration(o); end != nil {
			return *end
		}
		if end := r.wait(r.delay, nil); end != nil {
			return *end
		}
	}
}

// afterIteration counts an iteration, runs the tests, and evaluates the
// stop conditions: it returns the run's ending if one is met.
func (r *runner) afterIteration(o *iterationOutcome) *ending {
	r.iter++
	m := r.ws.meta
	m.Iterations++
	m.LastRunIterations++
	r.cost += o.cost()
	m.TotalCostUSD += o.cost()
	failed, why := o.failed()
	if failed {
		m.FailedIterations++
	}
	ts, warn := readTaskStatus(r.ws)
	if warn != nil && ts.Source != statusFile && !r.statusWarned && !r.ws.Ralph {
		r.statusWarned = true
		r.con.noticef("warning: %v; progress falls back to %s", warn, firstNonEmpty(ts.Source, "nothing"))
		r.log.printf("WARNING: %v", warn)
	}
	if failed {
		r.failStreak++
		r.con.noticef("iteration %d failed: %s (%d/%d consecutive failures)", r.iter, why, r.failStreak, r.maxFailures)
		if o.stderrTail != "" {
			r.log.printf("AGENT STDERR (last lines):\n%s", o.stderrTail)
			r.con.noticef("agent stderr: %s", clip(lastLines(o.stderrTail, 3), 600))
		}
	} else {
		r.failStreak = 0
	}
	r.reportIteration(o, ts, failed)
	if f := o.fatal(); f != nil {
		return &ending{code: exitError, reason: "error: " + f.msg, status: statusFailed, hint: f.hint}
	}
	r.trackProgress(ts)
	if r.stops.cfg.TestCmd != "" {
		r.saveMetadata() // 'status' shows the iteration while the tests run
		t := r.runTests()
		if r.interruptSig != nil {
			end := r.interruptEnding()
			return &end
		}
		r.lastTests = t
		if t.runFailed() {
			r.testFailStreak++
		} else {
			r.testFailStreak = 0
		}
	}
	r.pollStopFile(true)
	v := r.stops.evaluate(&condState{
		Iteration: r.iter, Elapsed: time.Since(r.start) - r.suspended, Cost: r.cost,
		FailStreak: r.failStreak, Failed: failed, Error: why, ResultText: o.resultText(),
		TaskComplete: ts.Complete, SinceProgress: r.sinceProgress, ProgressWord: r.progressWord(),
		Tests: r.lastTests, TestFailStreak: r.testFailStreak, StopRequest: r.stopSource,
		Dir: r.env.projectRoot, RunScript: r.runScript,
	})
	if r.interruptSig != nil { // while a script ran
		end := r.interruptEnding()
		return &end
	}
	m.Conditions = v.reports
	r.saveMetadata()
	r.log.printf("CONDITIONS:")
	for _, c := range v.reports {
		r.log.printf("  [%s] %s: %.0f%%, %s", c.Group, c.Condition, c.Progress*100, c.Reason)
	}
	if v.met == nil {
		r.showConditions(v.reports)
		return nil
	}
	end := endingFor(v.met, v.reason)
	return &end
}

// showConditions prints where the conditions the user gave stand.
func (r *runner) showConditions(reports []condReport) {
	var parts []string
	for i, gc := range r.stops.ordered {
		if !gc.c.builtin && i < len(reports) {
			parts = append(parts, fmt.Sprintf("%s (%.0f%%)", reports[i].Reason, reports[i].Progress*100))
		}
	}
	if len(parts) > 0 {
		r.con.progressf("  Conditions: %s", clip(strings.Join(parts, " · "), 400))
	}
}

func (r *runner) saveMetadata() {
	if err := r.ws.save(); err != nil {
		r.con.errorf("warning: saving %s: %v", r.ws.metadataPath(), err)
	}
}

// trackProgress counts iterations without progress: in loop mode, since
// progress.completed last grew; in iterative mode, since the last
// worked:true (an iteration that does not say is not counted).
func (r *runner) trackProgress(ts taskStatus) {
	if r.mode == modeIterative {
		switch {
		case ts.Worked != nil && !*ts.Worked:
			r.sinceProgress++
		case ts.Worked != nil && *ts.Worked:
			r.sinceProgress = 0
		}
		return
	}
	if ts.HasProgress && ts.Completed > r.bestCompleted {
		r.bestCompleted = ts.Completed
		r.sinceProgress = 0
		return
	}
	r.sinceProgress++
}

func (r *runner) progressWord() string {
	if r.mode == modeIterative {
		return "work"
	}
	return "progress"
}

// reportIteration prints and logs an iteration's end.
func (r *runner) reportIteration(o *iterationOutcome, ts taskStatus, failed bool) {
	progress := ""
	if ts.HasProgress {
		progress = fmt.Sprintf(" · %d/%d items (%d remaining)", ts.Completed, ts.Total, ts.Total-ts.Completed)
	}
	mark, verb := "✓", "done"
	if failed {
		mark, verb = "✗", "failed"
	}
	r.con.progressf("%s Iteration %d/%d %s in %s, $%.4f%s", mark, r.iter, r.maxIterations, verb, roundDuration(o.elapsed), o.cost(), progress)
	status := "success"
	if failed {
		_, why := o.failed()
		status = "error: " + why
	}
	r.log.printf("\nSTATUS: %s", status)
	r.log.printf("Completed: %s", logTime(time.Now()))
	if ts.HasProgress {
		r.log.printf("Remaining: %d", ts.Total-ts.Completed)
	}
	r.log.printf("Cost: $%.4f", o.cost())
	r.log.printf("")
	r.log.Flush()
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

func roundDuration(d time.Duration) time.Duration {
	switch {
	case d > time.Minute:
		return d.Round(time.Second)
	case d > time.Second:
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}

// checkDeadline ends the run once a max_duration condition (at the top
// level of a list) is met: checked before each iteration and during waits
// too, so that a long usage-limit wait cannot outlast it.
func (r *runner) checkDeadline() *ending {
	st := &condState{Elapsed: time.Since(r.start) - r.suspended}
	for i := range r.stops.ordered {
		gc := &r.stops.ordered[i]
		if gc.c.Type != condMaxDuration {
			continue
		}
		if res := gc.c.evaluate(st); res.Met {
			end := endingFor(gc, res.Reason)
			return &end
		}
	}
	return nil
}

// checkStopRequest looks at the stop file, and ends the run if a stop is
// requested, through the first user_signal condition. It serves the waits
// between iterations; after an iteration, user_signal is evaluated with
// every other condition.
func (r *runner) checkStopRequest() *ending {
	r.pollStopFile(true)
	if r.stopSource == "" {
		return nil
	}
	st := &condState{StopRequest: r.stopSource}
	for i := range r.stops.ordered {
		gc := &r.stops.ordered[i]
		if gc.c.Type == condUserSignal {
			end := endingFor(gc, gc.c.evaluate(st).Reason)
			return &end
		}
	}
	return nil
}

// pollStopFile notices the stop file appearing or disappearing, at most
// once a second unless now is set.
func (r *runner) pollStopFile(now bool) {
	if !now && time.Since(r.lastStopPoll) < stopFilePollInterval {
		return
	}
	r.lastStopPoll = time.Now()
	exists := stopFileExists(r.ws.stopPath())
	switch {
	case exists && r.stopSource == "":
		r.stopSource = "file"
		r.showStopState()
	case !exists && r.stopSource == "file":
		r.stopSource = ""
		r.showStopState()
	}
}

// toggleStop is the s key.
func (r *runner) toggleStop() {
	if r.stopSource == "" {
		r.stopSource = "keyboard"
	} else {
		if r.stopSource == "file" {
			removeStopFile(r.ws.stopPath())
		}
		r.stopSource = ""
	}
	r.showStopState()
}

func (r *runner) showStopState() {
	if r.stopSource != "" {
		r.con.progressf("Stop requested (press s to cancel)")
		r.log.printf("[stop requested (%s)]", r.stopSource)
	} else {
		r.con.progressf("Stop cancelled: the run goes on")
		r.log.printf("[stop cancelled]")
	}
}

// interruptEnding is the ending after a signal.
func (r *runner) interruptEnding() ending {
	return ending{code: exitCodeFor(r.interruptSig), reason: fmt.Sprintf("stopped: interrupted (%s)", signalName(r.interruptSig)), status: statusInterrupted}
}

// iterate runs one agent to its end.
func (r *runner) iterate() (*iterationOutcome, error) {
	n := r.iter + 1
	prompt, err := r.buildPrompt()
	if err != nil {
		return nil, err
	}
	started := time.Now()
	r.con.progressf("▶ Iteration %d/%d started at %s", n, r.maxIterations, started.Format("15:04:05"))
	r.log.section(fmt.Sprintf("ITERATION %d", n), "Started: "+logTime(started))
	r.log.printf("CLAUDE OUTPUT:")
	spec := r.spec
	spec.prompt = []byte(prompt)
	transcript := r.con.transcript(r.log)
	a, err := startAgent(spec, transcript, r.log)
	if err != nil {
		return &iterationOutcome{startErr: fmt.Errorf("starting %s: %w", spec.path, err), elapsed: time.Since(started)}, nil
	}
	a.timeout, a.idle = r.opts.iterationTimeout.d, r.opts.idleTimeout.d
	res := r.supervise(a)
	r.endAgent(a, res)
	o := a.outcome
	o.finish(a.waitErr, a.tail.String())
	o.hang = res.hang
	o.interrupted = r.interruptSig != nil
	o.elapsed = time.Since(started) - res.suspended
	if o.skipped > 0 || o.malformed > 0 {
		r.log.printf("[%d malformed and %d oversized stream-json lines]", o.malformed, o.skipped)
	}
	return &o, nil
}
