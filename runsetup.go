package main

// This file sets a run up: the workspace, the configuration, the stop
// conditions, the agent's command line, the prompt and the log. Every fault
// found here is reported before the first iteration, and no agent starts.

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Defaults and test hooks of a run.
const (
	defaultMaxFailures     = 3
	resultWatchdogEnv      = "CLAUDE_ITERATE_RESULT_WATCHDOG" // tests shorten it
	dryRunTotalItems       = 3
	dryRunDefaultDelay     = time.Second
	dryRunDemoInstructions = "# Demo task\n\nA dry run: the built-in mock agent completes three items, one per iteration.\n"
)

// setup resolves the workspace, configuration and agent, and opens the log.
func (r *runner) setup(pos []string) error {
	env, opts := r.env, r.opts
	if err := checkPromptFlag(&r.promptCache, opts.prompt); err != nil {
		return err // before anything is written: no .claude-iterate/ for a typo
	}
	project, user, err := baseLayers(env.projectRoot)
	if err != nil {
		return err
	}
	if project != nil {
		u, _ := project.values["notifyUrl"].(string)
		r.projectSecret = urlHoldsSecret(u)
	}
	base := resolveSettings(opts.flagSettings(), envLayer(), project, user)
	var ws *workspace
	switch {
	case len(pos) == 1 && !(opts.prompt.set && ralphDot(env, pos[0])): // list's ".", with --prompt: the ralph-mode run
		ws, err = needSettings(openKeep(!opts.dryRun))(env, base.WorkspacesDir, pos[0]) // the run needs its mode and config
		var nw *errNoWorkspace
		if errors.As(err, &nw) && nw.near != "" && opts.dryRun {
			// A typo's demo workspace would hide the one meant.
			return withHint(nw, "a dry run makes a demo workspace only for a name near no other: to make %s, claude-iterate init %s first", pos[0], pos[0])
		}
		if err != nil && opts.dryRun && !isWorkspacePath(pos[0]) {
			var nw *errNoWorkspace // none there: not one that cannot be read
			if errors.As(err, &nw) {
				ws, err = createDemo(r.env, base.WorkspacesDir, pos[0], base.OutputLevel == outputQuiet)
			}
		}
	default:
		ws = ralphWorkspace(env.projectRoot)
		if err = linkedWorkspace(env, ws); err != nil {
			return err
		}
		if err = ws.load(); errors.Is(err, os.ErrNotExist) {
			ws.meta = &metadata{Name: ws.Name, Mode: modeLoop, Created: time.Now().UTC().Truncate(time.Second), Status: statusNew}
			if _, serr := os.Lstat(ws.StateDir); errors.Is(serr, os.ErrNotExist) && !opts.dryRun {
				r.newState = ws.StateDir // removed if the set-up fails (removeNewState)
			}
			if err = agentsFound(env, ws.Name, opts, base, opts.dryRun); err == nil && !opts.dryRun { // no .claude-iterate/ for a missing agent
				err = ws.save()
			}
		}
	}
	if err != nil {
		return err
	}
	if err := checkStopPath(ws.stopPath()); err != nil {
		return withHint(err, "remove it (%s), then run again", removeCommand(ws.stopPath(), relPath(env.projectRoot, ws.stopPath())))
	}
	if opts.dryRun {
		if ws, err = r.useScratch(ws); err != nil {
			return err
		}
	} else if err := agentsFound(env, ws.Name, opts, resolveSettings(opts.flagSettings(), envLayer(), ws.meta.configLayer, project, user), false); err != nil {
		return err // before the run holds the workspace: nothing recorded
	}
	r.ws, r.mode = ws, ws.meta.Mode
	lock, prev, err := acquireRunLock(ws)
	if err != nil {
		var el *errLocked
		if errors.As(err, &el) {
			return withHint(err, "%s", el.hintOr("stop that run first: "+wsCommand(ws, "stop")))
		}
		return err
	}
	r.lock = lock
	lock.markEnvironment()
	r.cfg = resolveSettings(opts.flagSettings(), envLayer(), ws.meta.configLayer, project, user)
	r.con = newConsole(env.stdout, env.stderr, r.cfg.OutputLevel)
	lock.warn = func(msg string) { r.con.errorf("warning: %s", msg) }
	if !opts.dryRun {
		if err := ignoreRuntimeFiles(ws); err != nil { // a workspace made before the tool did so
			r.con.errorf("warning: %v", err)
		}
	}
	endLeftovers(r.con, env.projectRoot, ws, lock, prev)
	if prev.RunID != "" && !prev.Ended {
		// The metadata of a killed run may lag its history by the
		// iterations of its last second (saveMetadata): the records say.
		var t workTotals
		if _, err := eachRecord(ws.historyPath(), t.add); err == nil {
			if t.Iterations >= ws.meta.Iterations && t.CostUSD >= ws.meta.CostUSD && t != ws.meta.workTotals {
				ws.meta.workTotals = t
			}
		}
	}

	r.maxIterations = r.cfg.MaxIterations
	if r.maxIterations == 0 {
		r.maxIterations = defaultMaxIterationsFor(r.mode)
	}
	r.delay = r.cfg.Delay
	if opts.dryRun && r.cfg.isDefault("defaultDelay") {
		r.delay = dryRunDefaultDelay
	}
	r.stagnation = r.cfg.Stagnation
	if r.mode == modeLoop {
		r.stagnation = r.cfg.LoopStagnation
		if opts.prompt.set && r.cfg.isDefault(stagnationKey(r.mode)) {
			r.stagnation = 0 // ralph mode: the prompt is the user's and need not ask for progress
		}
	}
	r.minIterations, r.onQuestion = r.cfg.MinIterations, r.cfg.OnQuestion
	if r.minIterations > r.maxIterations {
		return usagef("min iterations (%d) above max iterations (%d): the run could never complete", r.minIterations, r.maxIterations)
	}
	r.maxFailures = defaultMaxFailures
	if opts.maxFailures.set {
		r.maxFailures = opts.maxFailures.n
	}
	if opts.interruptGrace.set {
		r.sup.interruptGrace = opts.interruptGrace.d
	}
	if d, err := time.ParseDuration(os.Getenv(resultWatchdogEnv)); err == nil && d > 0 {
		r.sup.resultWatchdog = d
	}
	ts, found, _ := readTaskStatusCopy(ws)
	if ts.HasProgress {
		r.count.bestCompleted = ts.Completed
	}
	r.checks.status.begin(ws.statusPath(), found, opts.acceptComplete)
	if err := r.buildStops(); err != nil {
		return err
	}

	if err := r.checkTask(); err != nil {
		return err
	}
	if err := setupGitWork(r); err != nil { // gitrun.go: the agent's project root; checkoutlock.go
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
		if fi, lerr := os.Lstat(ws.logsPath()); lerr == nil && !fi.IsDir() {
			r.con.errorf("hint: %s removes it; the next run makes the directory", removeCommand(ws.logsPath(), relPath(r.env.projectRoot, ws.logsPath())))
		}
		r.log = nil
	}
	if r.log != nil && !opts.dryRun {
		ws.meta.LastLog = r.log.path
	}
	r.writeLogHeader()
	r.stop = &stopRequest{path: ws.stopPath(), ws: ws} // told of changes once the live view is up (startLive)
	r.sup.con, r.sup.log = r.con, r.log
	r.history, err = openHistory(ws.historyPath(), func(msg string) { r.con.errorf("warning: %s", msg) })
	if err != nil {
		r.con.errorf("warning: cannot write the history %s: %v; running without it", ws.historyPath(), unwrapPathError(err))
		r.con.faultHint(ws.historyPath(), relPath(r.env.projectRoot, ws.historyPath()), err)
	}
	exclude := []string{ws.StateDir}
	if !ws.Ralph {
		exclude = append(exclude, ws.Dir)
	}
	r.git = startGitWork(r.gitSetup, r.workRoot(), exclude, scanReuse(&r.stops, r.checks.verifier), r.con, r.log, prev.RunID, r.lock.record.RunID) // gitrun.go
	now := time.Now().UTC().Truncate(time.Second)
	ws.meta.Status, ws.meta.PID, ws.meta.LastRun, ws.meta.LastRunIterations = statusRunning, os.Getpid(), &now, 0
	ws.meta.Conditions = r.stops.initialReports()
	err = ws.save()
	ws.held, ws.warnReplaced = err == nil, r.lock.warn
	return err
}

// setupFailed records a run that failed before its first iteration, once
// it held the workspace: the metadata says so as on every other way out
// (status failed, the reason, the exit status; SPEC.md §2: on every exit
// path), instead of showing the earlier run's ending; the log, if open,
// ends with its RUN ENDED. The metadata is saved also for what the set-up
// made (a worktree). Not for a usage fault: setupRefused.
func (r *runner) setupFailed(err error) {
	if r.lock == nil || r.ws == nil || r.ws.meta == nil {
		return // not this run's workspace to write
	}
	code, reason := errorExitCode(err), "error: "+err.Error()
	if he := (*hintError)(nil); errors.As(err, &he) {
		reason = "error: " + he.err.Error() // the hint is no reason
	}
	m, now := r.ws.meta, time.Now().UTC().Truncate(time.Second)
	m.Status, m.LastStopReason, m.LastExitCode, m.PID = statusFailed, reason, &code, 0
	m.LastRun, m.LastRunIterations = &now, 0
	// Not held: the run's first save failed, and that is the error to
	// report, once (a second save would fail the same way).
	if serr := r.ws.save(); r.ws.held && serr != nil && !isGone(serr) {
		fmt.Fprintf(r.env.stderr, "%s: warning: saving %s: %v\n", progName, r.ws.metadataPath(), unwrapPathError(serr))
	}
	r.log.section("RUN ENDED", "Ended: "+logTime(time.Now()), "Reason: "+reason, fmt.Sprintf("Exit code: %d", code))
	r.log.Close()
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
			return usagef("%v", readFault("conditions file", opts.conditions.s, opts.conditions.s, err, false))
		}
		c, err := decodeStopConfig(doc, doc.Root, "")
		if err != nil {
			return &inputError{err}
		}
		cfg = *c
	} else if c := r.cfg.Stop; c != nil {
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
	if r.stagnation > 0 {
		cfg.Conditions = append(cfg.Conditions, &condition{Type: condNoProgress, Iterations: r.stagnation, builtin: true})
	}
	cfg.Conditions = append(cfg.Conditions, &condition{Type: condUserSignal, builtin: true})
	cfg.Failure = append(cfg.Failure, &condition{Type: condFailureStreak, Count: r.maxFailures, builtin: true})

	r.stops = stopSet{cfg: cfg}
	r.stops.order()
	r.testTimeout = testTimeout(opts.testTimeout, &cfg)
	for _, gc := range r.stops.ordered {
		if gc.c.Type == condMaxIterations && gc.group == groupConditions {
			r.maxIterations = min(r.maxIterations, gc.c.Count) // for "Iteration 2/5"
		}
		if gc.c.Type == condFailureStreak && gc.group == groupFailure {
			r.maxFailures = min(r.maxFailures, gc.c.Count) // for "(1/2 consecutive failures)"
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
					fault = &inputError{scriptFault(r.env.projectRoot, c, err)}
				}
			}
		})
	}
	if ie, ok := fault.(*inputError); ok && !opts.conditions.set {
		return ie.err // from a config file's "stop" key: exit 1, as its other faults
	}
	return fault
}

// checkTask makes sure there is something to send.
func (r *runner) checkTask() error {
	if r.opts.prompt.set {
		_, err := r.readPromptFile()
		return err
	}
	data, err := readRegularFile(r.ws.instructionsPath(), taskFileCap)
	if err != nil {
		path := r.ws.instructionsPath()
		err = fmt.Errorf("reading the task %s: %w", path, unwrapPathError(err))
		// A file there but refused wants another fix than writing it.
		return withHint(err, "%s", firstNonEmpty(fileFaultHint(path, relPath(r.env.projectRoot, path), err), "write it with claude: "+wsCommand(r.ws, "setup")+", or write it to "+path))
	}
	if strings.TrimSpace(string(data)) == "" {
		return withHint(fmt.Errorf("%s is empty", relPath(r.env.projectRoot, r.ws.instructionsPath())), "describe the task in it (or with claude: %s)", wsCommand(r.ws, "setup"))
	}
	if string(data) == starterInstructions && !r.opts.dryRun {
		return withHint(fmt.Errorf("%s still holds the template", relPath(r.env.projectRoot, r.ws.instructionsPath())), "describe the task in it first (or with claude: %s), or try: %s", wsCommand(r.ws, "setup"), wsCommand(r.ws, "run", "--dry-run"))
	}
	return nil
}

func (r *runner) readPromptFile() (string, error) {
	data, err := r.promptCache.read(r.opts.prompt.s)
	if err != nil {
		return "", readFault("prompt file", r.opts.prompt.s, r.opts.prompt.s, err, false)
	}
	if strings.TrimSpace(string(data)) == "" {
		return "", fmt.Errorf("prompt file %s is empty", r.opts.prompt.s)
	}
	return string(data), nil
}

// resolveAgent finds the run's agents (agent, then fallbackAgents) and
// builds their fixed arguments; the first is the one that starts.
func (r *runner) resolveAgent() error {
	if err := checkAgentConfig(r.cfg, r.env.projectRoot, r.ws.Name); err != nil {
		return err
	}
	chain, err := agentChain(r.cfg)
	if err != nil {
		return err
	}
	if err := checkAgentSettings(r.opts, r.cfg, chain); err != nil {
		return err
	}
	if !r.opts.prompt.set {
		tmpl, source, err := promptTemplate(r.ws, r.env.projectRoot, r.mode, "system")
		if err != nil {
			return err
		}
		r.systemPrompt, r.systemPromptSource = expandPrompt(tmpl, r.workRoot(), r.ws.Dir, ""), relPath(r.env.projectRoot, source)
	}
	if err := checkAgentFlags(r.runPlan, chain); err != nil {
		return err
	}
	r.agents = make([]runAgent, len(chain))
	for i, a := range chain {
		spec, err := r.agentSpec(a)
		if err != nil {
			return err
		}
		r.agents[i] = runAgent{cli: a, spec: spec}
	}
	r.agent, r.spec = r.agents[0].cli, r.agents[0].spec
	if r.cfg.Verification.Auto {
		r.checks.verifier, err = r.newVerifier()
		if err != nil {
			return err
		}
	}
	return nil
}

// agentSpec finds agent a and builds its child spec; a dry run's agent is
// the built-in mock, which speaks claude's stream-json whatever a is (a's
// arguments are still built, so that what a refuses is refused).
func (r *runner) agentSpec(a agentCLI) (childSpec, error) {
	var pre []string
	if r.opts.dryRun {
		exe, err := os.Executable()
		if err != nil {
			return childSpec{}, fmt.Errorf("finding this program for the dry run: %w", err)
		}
		r.spec = childSpec{path: exe, argv0: progName}
		pre = append(pre, mockAgentCommand)
		r.spec.env = []string{mockEnvStatus + "=" + r.ws.statusPath(), fmt.Sprintf("%s=%d", mockEnvTotal, dryRunTotalItems)}
		r.spec.costEstimated = estimatesCost(a) // shown ≈, as the agent's own would be
	} else {
		path, err := findAgentCLI(a, r.cfg)
		if err != nil {
			return childSpec{}, err
		}
		r.spec = agentChildSpec(a, r.cfg, path)
	}
	args, err := a.iterationArgs(r.runPlan)
	if err != nil {
		return childSpec{}, err
	}
	r.spec.args = append(pre, args...)
	r.spec.dir = r.workRoot()
	return r.spec, nil
}

// newVerifier makes the verifier of run --verify: the run's agent (or
// verification.agent) with the verifier's arguments; the machinery is
// wired in startLive.
func (r *runner) newVerifier() (*verifier, error) {
	a, spec := r.agent, r.spec
	if n := r.cfg.Verification.Agent; n != "" && n != a.name() {
		var err error
		if a, err = lookupAgent(n, "verification.agent"); err != nil {
			return nil, err
		}
		if spec, err = r.agentSpec(a); err != nil {
			return nil, err
		}
		r.spec = r.agents[0].spec // agentSpec's scratch
	}
	args, err := a.verifierArgs(r.cfg, r.opts.model.s)
	if err != nil {
		return nil, err
	}
	spec.args = args
	if r.opts.dryRun {
		spec.args = append([]string{mockAgentCommand}, spec.args...)
	}
	if r.opts.skipPerms && a.name() == agentClaude {
		spec.args = append(spec.args, "--dangerously-skip-permissions")
	}
	return &verifier{root: r.workRoot(), ws: r.ws, depth: r.cfg.Verification.Depth, spec: spec, agent: a.name(), refusedFix: a.verifierRefusedHint(),
		timeout: r.cfg.IterationTimeout, idle: r.cfg.IdleTimeout}, nil
}

// buildPrompt returns this iteration's prompt.
func (r *runner) buildPrompt() (string, error) {
	if r.opts.prompt.set {
		p, err := r.readPromptFile()
		return p + r.checks.notes.text(r.ws), err
	}
	data, err := r.promptCache.read(r.ws.instructionsPath())
	if err != nil {
		return "", fmt.Errorf("reading the task %s: %w", r.ws.instructionsPath(), unwrapPathError(err))
	}
	tmpl, _, err := promptTemplate(r.ws, r.env.projectRoot, r.mode, "iteration")
	if err != nil {
		return "", err
	}
	return expandPrompt(tmpl, r.workRoot(), r.ws.Dir, string(data)) + r.checks.notes.text(r.ws), nil
}

// carryFindings gives the run's first iteration the findings of a failed
// verification that no iteration has had yet (an earlier run's, or the
// verify command's), and says so.
func (r *runner) carryFindings() {
	vs := r.ws.meta.Verification
	if vs == nil || vs.Findings == nil {
		return
	}
	f := vs.Findings
	r.checks.notes.verifyNote = f.note()
	r.con.progressf("Findings of the last verification (%s: %s) go to the first iteration's prompt",
		f.Verdict.Verdict, sanitizeString(clip(oneLine(f.Verdict.Summary), 200)))
}

// inherited names, before the first iteration, what the run inherits: a
// file a file condition names, a .status.json that says complete, a stop
// requested, a question pending.
// It returns the run's ending when the pending question ends it
// (--on-question stop), or the wait for its answer does.
func (r *runner) inherited() *ending {
	ws := r.ws
	say := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		r.con.noticef("%s", msg)
		r.log.printf("[%s]", msg)
	}
	for _, w := range r.stops.takeFileStarts(r.workRoot()) {
		say("warning: %s", w)
	}
	if r.projectSecret {
		// config set refuses it there; an older version, or a hand, wrote it.
		say("warning: %s holds a notify URL with credentials, and the project config can go into git: keep it in the user config (claude-iterate config set notifyUrl URL --user, then claude-iterate config unset notifyUrl --project)", projectConfigName)
	}
	if r.checks.status.inheritedComplete() {
		if r.checks.status.acceptComplete {
			say("%s says complete from before this run: accepted (--accept-complete), the run completes after its first iteration unless the agent takes it back", statusFile)
		} else {
			say("%s says complete from before this run: not this run's completion, which the agent must mark again (--accept-complete accepts it; %s starts the task over)", statusFile, wsCommand(ws, "reset", "--all"))
		}
	}
	if r.realWS != nil && stopFileExists(r.realWS.stopPath()) {
		// The dry run's copy leaves the request out (runOwnFiles): it is
		// the next real run's, which it would stop.
		say("a stop was requested before this run (%s): a real run would stop after its first iteration; this dry run goes on and leaves it (to cancel: %s)", stopFile, wsCommand(ws, "stop", "--cancel"))
	}
	if stopFileExists(ws.stopPath()) {
		cancel := wsCommand(ws, "stop", "--cancel")
		if r.sup.kb != nil {
			cancel = "press s, or " + cancel
		}
		say("a stop was requested before this run (%s): the run stops after its first iteration (to cancel: %s)", stopFile, cancel)
		r.stop.source = stopByFile // named: not again as a change
		r.live.stopChanged(stopByFile)
	}
	d := r.checks.asks
	d.take() // an answer given while no run waited for it
	q := ws.pendingQuestion()
	if q == nil {
		return nil
	}
	what := map[string]string{onQuestionWait: "the run waits for it", onQuestionStop: "the run stops", onQuestionContinue: "the run goes on"}[r.onQuestion]
	say("a question asked before this run waits for an answer: %s (--on-question %s: %s; answer with: %s)",
		clip(oneLine(q.Pending), 300), r.onQuestion, what, answerCommand(ws))
	switch r.onQuestion {
	case onQuestionStop:
		return d.stopEnding(q.Pending)
	case onQuestionWait:
		r.live.question(q.Pending, r.onQuestion, answerCommand(ws))
		return r.waitForAnswer()
	}
	r.live.question(q.Pending, r.onQuestion, answerCommand(ws))
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
		"Agents: " + agentChainText(r.agents),
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
		conds = append(conds, fmt.Sprintf("Test command: %s (timeout %s)", r.stops.cfg.TestCmd, shortDuration(r.testTimeout)))
	}
	r.log.section("STOP CONDITIONS", conds...)
	if r.opts.prompt.set {
		p, _ := r.readPromptFile()
		r.log.section("PROMPT (ralph mode: "+r.opts.prompt.s+", re-read every iteration)", strings.TrimRight(p, "\n"))
	} else {
		data, _ := readRegularFile(r.ws.instructionsPath(), taskFileCap)
		r.log.section("INSTRUCTIONS", strings.TrimRight(string(data), "\n"))
		r.log.section("SYSTEM PROMPT", strings.TrimRight(r.systemPrompt, "\n"))
	}
	r.log.Flush()
}
