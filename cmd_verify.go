package main

// This file implements the verify command: a verifier run on a workspace
// from the command line, with its own supervisor and console, its verdict
// shown and its exit status (0 pass, 1 otherwise). The verifier itself,
// shared with run --verify, is verifier.go's.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"
)

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
  --claude PATH               claude's executable (default:
                              $CLAUDE_ITERATE_CLAUDE, else claude.command,
                              else claude; a relative path is the current
                              directory's, a key's its config file's)
  --model M                   passed to the agent
  -v, --verbose               show the verifier's text and tool calls
  --iteration-timeout D       end a verifier that runs longer than D (default:
                              the iterationTimeout config key)
  --idle-timeout D            end a verifier that prints nothing for D
                              (default: the idleTimeout config key)

Exit status: 0 pass; 1 fail, needs_review or an error; 2 usage error;
130/143 after SIGINT/SIGTERM.

Examples:
  claude-iterate verify demo
  claude-iterate verify demo --depth deep --json
`

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
	// The arguments first: a setting the agent refuses is a usage error,
	// told before a missing CLI (fixing that first would only lead to it).
	args, err := a.verifierArgs(cfg, o.model.s)
	if err != nil {
		return childSpec{}, err
	}
	path, err := findAgentCLI(a, cfg)
	if err != nil {
		return childSpec{}, err
	}
	spec := agentChildSpec(a, cfg, path)
	spec.args, spec.dir = args, dir
	return spec, nil
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
	if err := firstError(o.depth.notBlank("--depth"), o.claude.notBlank("--claude"), o.model.notBlank("--model"), o.agents.check()); err != nil {
		return err
	}
	depth := firstNonEmpty(o.depth.s, depthStandard)
	if err := checkDepth(depth); err != nil {
		return usagef("invalid value %q for flag --depth: %v", depth, err)
	}
	sigs := catchSignals()
	// The settings first: verify needs them, and refuses a broken config
	// file (finding the workspace would only warn about it).
	project, user, err := baseLayers(env.projectRoot)
	if err != nil {
		return err
	}
	w, err := workspaceFromArgsWith(env, pos, needSettings(openWorkspace))
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
	flags := &configLayer{name: layerFlag, values: map[string]any{}}
	if o.claude.set {
		flags.values["claude.command"] = o.claude.s
	}
	if o.iterationTimeout.set {
		flags.values["iterationTimeout"] = o.iterationTimeout.d.String()
	}
	if o.idle.set {
		flags.values["idleTimeout"] = o.idle.d.String()
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
		con.errorf("warning: cannot write the history %s: %v", w.historyPath(), unwrapPathError(err))
		con.faultHint(w.historyPath(), relPath(env.projectRoot, w.historyPath()), err)
	}
	defer hist.close()
	log, err := openRunLog(w.logsPath(), time.Now(), func(err error) { con.errorf("warning: %v", err) })
	if err != nil {
		log = nil
	}
	defer log.Close()
	sup.log = log
	reportLostConsole(con, log)
	root, err := worktreeRoot(env, w) // gitrun.go: the worktree's, when the workspace works in one
	if err != nil {
		return err
	}
	spec.dir = root
	v := &verifier{sup: sup, con: con, log: log, lock: lock, ws: w, root: root, depth: depth,
		spec: spec, agent: spec.name, refusedFix: agentCLIs[spec.name].verifierRefusedHint(),
		timeout: cfg.IterationTimeout, idle: cfg.IdleTimeout, history: hist}
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
			con.errorf("warning: saving %s: %v", w.metadataPath(), unwrapPathError(err))
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

// waitLimitPlain waits for a usage limit's reset outside a run, as long as
// a run would (limitWait); an interrupting signal ends the wait with the
// signal's exit.
func waitLimitPlain(sup *supervisor, con *console, reset time.Time) error {
	now := time.Now()
	d := limitWait(reset, now)
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
