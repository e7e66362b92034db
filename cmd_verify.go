package main

// This file implements verification: a verifier (claude -p with the
// verification prompt) judges whether the task is done, and ends with a
// verdict (verdict.go). The rules are:
//
//   - The verifier is read-only: --disallowedTools names the write tools
//     (Write, Edit, MultiEdit, NotebookEdit), after the user's claude args
//     and the workspace's permissions (claude.permissionMode,
//     claude.allowedTools less the write tools), so that it may run what
//     the workspace's agent may. Its refused calls are named with the fix.
//   - A failed verification's findings go to the next iteration's prompt,
//     and are kept in the metadata until an iteration got them: the next
//     run's first prompt carries them too.
//   - It runs through the machinery of an iteration: startAgent under the
//     supervisor, so refused calls, a usage limit (waited for, then the
//     verification is retried), Ctrl+C and the hang protections behave as
//     in run. The verify command builds that machinery for itself; run
//     --verify uses the run's (loop.go's verifyClaim).
//   - Each verification is a record in the history (End "verification",
//     not an iteration; its cost counts), the metadata's last verdict,
//     time and attempts, and the report <workspace>/verification-report.md.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// verifyReportFile is the report's name in the workspace.
const verifyReportFile = "verification-report.md"

// verifyUsage is the manual of the verify command.
const verifyUsage = `Usage: claude-iterate verify [<workspace>] [flags]

Runs a verifier: claude -p with a verification prompt that asks it to read
the task (INSTRUCTIONS.md, TODO.md, .status.json) and the project, run what
it needs (tests, builds), and end with a verdict:
  {"verdict": "pass"|"fail"|"needs_review", "summary": "…",
   "issues": ["…"], "confidence": "high"|"medium"|"low"}
The verifier is read-only: it runs with --disallowedTools Write Edit
MultiEdit NotebookEdit, after the claude.args of the configuration and the
workspace's permissions (claude.permissionMode, and claude.allowedTools less
those tools), so that it may run what the agent may; its refused calls are
named with the fix. A missing or unreadable verdict is needs_review, with
the verifier's text kept. The findings of a fail or needs_review go to the
first prompt of the next run.

The report goes to <workspace>/verification-report.md; the verdict to the
history ('claude-iterate history') and the metadata ('status'). Refused tool
calls, a usage limit (waited for, then retried), Ctrl+C and the hang
protections behave as in 'run'. 'run --verify' verifies a claimed completion
before it ends the run (config verification.autoVerify).

Options:
  --depth D                   quick, standard (default) or deep: how hard the
                              verifier looks
  --json                      print the verdict as JSON on standard output
  --agent NAME                the verifier's agent CLI: claude or codex
                              (default: verification.agent, else the agent
                              key); codex runs in its read-only sandbox
                              (--sandbox read-only), with agents.codex.args
  --claude PATH               claude's executable (default claude)
  --model M                   passed to the agent
  -v, --verbose               show the verifier's text and tool calls
  --iteration-timeout D       end a verifier that runs longer than D
  --idle-timeout D            end a verifier that prints nothing for D

Exit status: 0 pass; 1 fail, needs_review or an error; 2 usage error;
130/143 after SIGINT/SIGTERM.

Examples:
  claude-iterate verify demo
  claude-iterate verify demo --depth deep --json
`

// verifier runs verifications of a workspace with a machinery: a run's,
// or the verify command's own.
type verifier struct {
	sup           *supervisor
	con           *console
	log           *runLog
	lock          *runLock
	ws            *workspace
	root, depth   string
	spec          childSpec // the agent and the verifier's arguments
	agent         string    // its name
	refusedFix    string    // its adapter's fix for refused calls; "": claude's
	timeout, idle time.Duration
	onEvent       func(*streamEvent)
	history       *historyWriter
	failures      int    // failed verifications in this run (run --verify)
	hinted        bool   // the fix for its refused calls was shown
	report        string // the report keep wrote last; "" if it could not
}

// verification is one verifier's run, judged.
type verification struct {
	verdict verdict
	outcome *iterationOutcome
	refused []string
	started time.Time
	// failed: the verifier itself failed (no verdict to judge); why.
	failed bool
	why    string
}

// verifierSpec is the verify command's verifier: --agent, else
// verification.agent, else the agent key's; read-only (its adapter's
// verifierArgs).
func verifierSpec(o *verifyOptions, cfg *settings, dir string) (childSpec, error) {
	name := firstNonEmpty(cfg.Verification.Agent, cfg.Agent)
	if o.agents.agent.set {
		name = o.agents.agent.s
	}
	a, err := lookupAgent(name, "agent")
	if err != nil {
		return childSpec{}, err
	}
	if o.claude.set && a.name() != agentClaude {
		return childSpec{}, usagef("--claude names claude's executable, and the verifier's agent is %s: name its executable with agents.%s.command", a.name(), a.name())
	}
	path, err := findAgentCLI(a, cfg)
	if err != nil {
		return childSpec{}, err
	}
	spec := agentChildSpec(a, cfg, path)
	if spec.args, err = a.verifierArgs(cfg, o.model.s); err != nil {
		return childSpec{}, err
	}
	spec.dir = dir
	return spec, nil
}

// verifierArgs are the verifier's arguments: the user's claude args, the
// workspace's permissions less the write tools, the read-only restriction,
// the stream-json options.
func verifierArgs(cfg *settings, model string) []string {
	args := append([]string{}, cfg.ClaudeArgs...)
	args = append(args, permissionArgsOf(cfg.PermissionMode, withoutWriteTools(cfg.AllowedTools))...)
	args = append(append(args, "--disallowedTools"), writeTools...)
	args = append(args, "-p", "--output-format", "stream-json", "--verbose")
	if model != "" {
		args = append(args, "--model", model)
	}
	return args
}

// prompt is the verification prompt.
func (v *verifier) prompt() (string, error) {
	data, err := embeddedPrompts.ReadFile("prompts/verify/verify.md")
	if err != nil {
		return "", err
	}
	task, err := readRegularFile(v.ws.instructionsPath(), taskFileCap)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("reading the task: %w", err)
	}
	tmpl := strings.NewReplacer("{{depth}}", v.depth, "{{depthRules}}", depthRules[v.depth]).Replace(string(data))
	return expandPrompt(tmpl, v.root, v.ws.Dir, string(task)), nil
}

// run runs the verifier once, to its end.
func (v *verifier) run() (*verification, error) {
	prompt, err := v.prompt()
	if err != nil {
		return nil, err
	}
	spec := v.spec
	spec.input = []byte(prompt)
	spec.env = append(spec.env[:len(spec.env):len(spec.env)], v.lock.markers()...)
	vr := &verification{started: time.Now()}
	v.log.section("VERIFICATION ("+v.depth+")", "Started: "+logTime(vr.started))
	c, o, err := startAgent(spec, v.con.transcript(v.log), v.log, v.onEvent)
	if err != nil {
		vr.outcome = &iterationOutcome{startErr: fmt.Errorf("starting %s: %w", spec.path, err), elapsed: time.Since(vr.started)}
		vr.failed, vr.why = vr.outcome.failed()
		return vr, nil
	}
	v.lock.addChild(c)
	c.timeout, c.idle = v.timeout, v.idle
	end := v.sup.watch(c)
	if end.readerLeft {
		o = &iterationOutcome{} // its reader still fills the other one
	}
	o.finish(c.waitErr, c.tail.String())
	o.stderrRefused(spec)
	o.hang = end.hang
	o.interrupted = v.sup.ending()
	o.elapsed = time.Since(vr.started) - end.suspended
	vr.outcome = o
	vr.refused = describeDenials(o.denials(), v.root)
	vr.failed, vr.why = o.failed()
	if !vr.failed {
		vr.verdict = parseVerdict(o.resultText())
	}
	return vr, nil
}

// keep records a judged verification: the report, the metadata, the
// history; it returns the record. The metadata is saved by the caller.
func (v *verifier) keep(vr *verification, runID string, iteration int) *iterationRecord {
	reason := ""
	if vr.failed {
		reason = "verifier failed: " + vr.why
	} else if vr.verdict.Verdict != verdictPass {
		reason = fmt.Sprintf("verification %s: %s", vr.verdict.Verdict, clip(vr.verdict.Summary, 300))
	}
	rec := newRecord(recordInput{run: runID, iteration: max(iteration, 1), started: vr.started, outcome: vr.outcome,
		end: endVerify, reason: reason, refused: vr.refused, agent: v.agent})
	rec.OK = !vr.failed && vr.verdict.Verdict == verdictPass
	if !vr.failed {
		vd := vr.verdict
		rec.Verification = &vd
	}
	v.history.append(rec)
	m := v.ws.meta
	m.workTotals.add(rec)
	if m.Verification == nil {
		m.Verification = &verificationState{}
	}
	now := time.Now().UTC().Truncate(time.Second)
	m.Verification.Attempts++
	m.Verification.LastTime = &now
	m.Verification.LastVerdict, m.Verification.LastSummary = firstNonEmpty(vr.verdict.Verdict, "error"), firstNonEmpty(vr.verdict.Summary, vr.why)
	if !vr.failed && vr.verdict.Verdict == verdictPass {
		m.Verification.Findings = nil // the task passed: nothing left to fix
	}
	fix := ""
	if len(vr.refused) > 0 {
		fix = firstNonEmpty(v.refusedFix, verifierRefusedHint(vr.outcome.denials(), v.ws))
	}
	v.report = ""
	if !vr.failed {
		path := filepath.Join(v.ws.Dir, verifyReportFile)
		if err := writeFileAtomicSync(path, reportText(v.ws, vr.verdict, v.depth, now, vr.outcome.cost(), vr.refused, fix), 0o600, true); err != nil {
			v.con.errorf("warning: writing %s: %v", path, unwrapPathError(err))
		} else {
			v.report = path
		}
	}
	v.log.printf("VERDICT: %s: %s", rec.Verification.verdictOr("error"), firstNonEmpty(vr.verdict.Summary, vr.why))
	for _, is := range vr.verdict.Issues {
		v.log.printf("  ISSUE: %s", is)
	}
	v.log.printf("Cost: $%.4f", rec.CostUSD)
	v.log.Flush()
	if len(vr.refused) > 0 {
		v.con.noticef("verifier: %s", denialSummary(vr.refused, maxDenialsShown))
		v.log.printf("HINT: %s", fix)
		if !v.hinted && v.con.level != outputQuiet {
			v.hinted = true
			v.con.noticef("hint: %s", fix)
		}
	}
	return rec
}

// verifierRefusedHint is the fix for the verifier's refused calls ds: the
// tools to add to claude.allowedTools (the verifier gets the workspace's
// permissions, less the write tools), or, when it tried only to write,
// why that is refused.
func verifierRefusedHint(ds []permissionDenial, w *workspace) string {
	var tools []string
	for _, d := range ds {
		if name := d.ToolName; name != "" && !isWriteTool(name) && !slices.Contains(tools, name) {
			tools = append(tools, name)
		}
	}
	if len(tools) == 0 {
		return "the verifier only reads: its writes are refused by design (" + andList(writeTools) + " are disallowed)"
	}
	target := ""
	if !w.Ralph {
		target = " --workspace " + shellQuote(w.Name)
	}
	var cmds []string
	for _, t := range tools {
		cmds = append(cmds, "claude-iterate config set claude.allowedTools "+shellQuote(t)+" --add"+target)
	}
	return "the verifier gets claude.allowedTools and claude.permissionMode less the write tools (it only reads): to let it check the work, " +
		strings.Join(cmds, " && ")
}

// verdictOr is the verdict's name, or def for none.
func (vd *verdict) verdictOr(def string) string {
	if vd == nil {
		return def
	}
	return vd.Verdict
}

// verifyOptions are the verify command's flags.
type verifyOptions struct {
	depth, claude, model   stringFlag
	asJSON, verbose        bool
	iterationTimeout, idle durationFlag
	agents                 agentFlags
}

func runVerify(env *cliEnv, args []string) error {
	o := &verifyOptions{}
	fs := newFlagSet("verify")
	fs.Var(&o.depth, "depth", "")
	fs.Var(&o.claude, "claude", "")
	fs.Var(&o.model, "model", "")
	fs.BoolVar(&o.asJSON, "json", false, "")
	fs.BoolVar(&o.verbose, "v", false, "")
	fs.BoolVar(&o.verbose, "verbose", false, "")
	fs.Var(&o.iterationTimeout, "iteration-timeout", "")
	fs.Var(&o.idle, "idle-timeout", "")
	o.agents.register(fs, false)
	pos, err := parseFlags(fs, args, 1)
	if err != nil {
		return err
	}
	if err := o.agents.check(); err != nil {
		return err
	}
	depth := firstNonEmpty(o.depth.s, depthStandard)
	if err := checkDepth(depth); err != nil {
		return usagef("invalid value %q for flag --depth: %v", depth, err)
	}
	sigs := catchSignals()
	w, err := workspaceFromArgs(env, pos)
	if err != nil {
		return err
	}
	lock, prev, err := acquireRunLock(w)
	if err != nil {
		var el *errLocked
		if errors.As(err, &el) {
			return withHint(err, "%s", el.hintOr("verify once the run has ended (run --verify verifies within a run)"))
		}
		return err
	}
	defer lock.release()
	lock.markEnvironment()
	project, user, err := baseLayers(env.projectRoot)
	if err != nil {
		return err
	}
	flags := &configLayer{name: layerFlag, values: map[string]any{}}
	if o.claude.set {
		flags.values["claude.command"] = o.claude.s
	}
	cfg := resolveSettings(flags, envLayer(), w.meta.configLayer, project, user)
	level := cfg.OutputLevel
	if o.verbose {
		level = outputVerbose
	}
	out := env.stdout
	if o.asJSON {
		out = env.stderr // standard output carries the verdict alone
	}
	con := newConsole(out, env.stderr, level)
	defer con.settle()
	if err := ignoreRuntimeFiles(w); err != nil {
		con.errorf("warning: %v", err)
	}
	endLeftovers(con, env.projectRoot, w, lock, prev)
	spec, err := verifierSpec(o, cfg, env.projectRoot)
	if err != nil {
		return err
	}
	becomeSubreaper()
	startReaper()
	sup := &supervisor{sigs: sigs, interruptGrace: defaultInterruptGrace, resultWatchdog: resultWatchdogDefault, con: con}
	if d, err := time.ParseDuration(os.Getenv(resultWatchdogEnv)); err == nil && d > 0 {
		sup.resultWatchdog = d
	}
	hist, err := openHistory(w.historyPath(), func(msg string) { con.errorf("warning: %s", msg) })
	if err != nil {
		con.errorf("warning: cannot write the history: %v", err)
	}
	defer hist.close()
	log, err := openRunLog(w.logsPath(), time.Now(), func(err error) { con.errorf("warning: %v", err) })
	if err != nil {
		log = nil
	}
	defer log.Close()
	sup.log = log
	root := worktreeRoot(env, w) // gitrun.go: the worktree's, when the workspace works in one
	spec.dir = root
	v := &verifier{sup: sup, con: con, log: log, lock: lock, ws: w, root: root, depth: depth,
		spec: spec, agent: spec.name, refusedFix: agentCLIs[spec.name].verifierRefusedHint(),
		timeout: o.iterationTimeout.d, idle: o.idle.d, history: hist}
	con.progressf("Verifying %s (%s)", w.Name, depth)
	for {
		vr, err := v.run()
		if err != nil {
			return err
		}
		if vr.outcome.interrupted || sup.startBlocked() {
			if sup.interrupt != nil {
				con.errorf("stopped: interrupted (%s)", signalName(sup.interrupt))
				return sigs.exitError(sup.interrupt)
			}
			return errors.New(sup.fault)
		}
		if limited, reset := vr.outcome.usageLimit(time.Now()); limited {
			if e := waitLimitPlain(sup, con, reset); e != nil {
				return e
			}
			continue
		}
		rec := v.keep(vr, lock.record.RunID, 1)
		if !vr.failed && vr.verdict.Verdict != verdictPass {
			w.meta.Verification.Findings = &verifyFindings{Verdict: vr.verdict} // for the next run's first prompt
		}
		if err := w.save(); err != nil {
			con.errorf("warning: saving %s: %v", w.metadataPath(), err)
		}
		if vr.failed {
			return withHint(fmt.Errorf("the verifier failed: %s", vr.why), "the log has its output: %s", relPath(env.projectRoot, logPathOf(log)))
		}
		vd := vr.verdict
		if o.asJSON {
			data, _ := json.Marshal(&vd)
			fmt.Fprintf(env.stdout, "%s\n", data)
		}
		report := ""
		if v.report != "" {
			report = relPath(env.projectRoot, v.report)
		}
		showVerdict(con, vd, rec.CostUSD, report)
		if vd.Verdict != verdictPass {
			return &exitCodeError{code: exitError}
		}
		return nil
	}
}

// showVerdict prints a verdict: the command's output, at every level, on
// the console's output (standard output, but with --json standard error,
// as standard output then carries the JSON verdict alone), and where the
// report is ("": it could not be written).
func showVerdict(con *console, vd verdict, cost float64, report string) {
	line := fmt.Sprintf("Verdict: %s", vd.Verdict)
	if vd.Confidence != "" {
		line += " (confidence " + vd.Confidence + ")"
	}
	con.say(false, fmt.Sprintf("%s, %s: %s", line, formatCost(cost), sanitizeString(clip(vd.Summary, 600))))
	for _, is := range vd.Issues {
		con.say(false, "  - "+sanitizeString(clip(is, 600)))
	}
	if report != "" { // not written: a warning said why
		con.progressf("Report: %s", report)
	}
}

// waitLimitPlain waits for a usage limit's reset outside a run; an
// interrupting signal ends the wait with the signal's exit.
func waitLimitPlain(sup *supervisor, con *console, reset time.Time) error {
	now := time.Now()
	margin := limitMargin
	if m, err := time.ParseDuration(os.Getenv(limitMarginEnv)); err == nil && m >= 0 {
		margin = m
	}
	d := defaultLimitWait
	switch {
	case reset.After(now):
		d = reset.Sub(now) + margin
	case !reset.IsZero():
		d = margin
	}
	con.noticef("usage limit reached: waiting until %s, then retrying the verification", formatClock(now.Add(d), now))
	if sup.sleep(d, func(time.Duration) bool { return false }) {
		con.errorf("stopped: interrupted (%s)", signalName(sup.interrupt))
		return sup.sigs.exitError(sup.interrupt)
	}
	return nil
}

// logPathOf is the log's path, "" without a log.
func logPathOf(l *runLog) string {
	if l == nil {
		return ""
	}
	return l.path
}

// mockVerifier plays the verifier in a dry run: it reads the status and
// passes, at the mock agent's pace.
func mockVerifier(emit func(map[string]any), step func() (int, bool), text func(string) map[string]any,
	toolUse func(id, name string, input map[string]any) map[string]any, toolResult func(id, content string) map[string]any,
	statusPath, session string) int {
	result := "The mock verifier read the status: every item is done.\n" +
		`{"verdict": "pass", "summary": "Every item is done (mock verifier).", "issues": [], "confidence": "low"}`
	for _, e := range []map[string]any{
		{"type": "system", "subtype": "init", "session_id": session, "model": "mock", "tools": []string{"Read", "Bash"}, "cwd": "."},
		toolUse("toolu_read", "Read", map[string]any{"file_path": statusPath}),
		toolResult("toolu_read", "{\"complete\": true}"),
		text(result),
	} {
		emit(e)
		if code, stop := step(); stop {
			return code
		}
	}
	emit(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": result,
		"num_turns": 2, "total_cost_usd": 0.0045, "session_id": session})
	return 0
}

// andList is "a, b and c".
func andList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
