package main

// This file implements verification: a verifier (the agent CLI, claude -p
// or codex exec, with the verification prompt) judges whether the task is done, and ends with a
// verdict (verdict.go). The rules are:
//
//   - The verifier is read-only, as its adapter makes it (verifierArgs):
//     for claude, --disallowedTools names the write tools (Write, Edit,
//     MultiEdit, NotebookEdit), after the user's claude args and the
//     workspace's permissions (claude.permissionMode, claude.allowedTools
//     less the write tools), so that it may run what the workspace's agent
//     may; for codex, its read-only sandbox. Its refused calls are named
//     with the fix.
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

// prompt is the verification prompt.
func (v *verifier) prompt() (string, error) {
	data, err := embeddedPrompts.ReadFile("prompts/verify/verify.md")
	if err != nil {
		return "", err
	}
	task, err := readRegularFile(v.ws.instructionsPath(), taskFileCap)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("reading the task %s: %w", v.ws.instructionsPath(), unwrapPathError(err))
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
		vr.outcome = agentStartFailed(spec, err, vr.started)
		vr.failed, vr.why = vr.outcome.failed()
		return vr, nil
	}
	v.lock.addChild(c)
	c.timeout, c.idle = v.timeout, v.idle
	end := v.sup.watch(c)
	o = agentEnded(c, o, end, spec, v.sup, vr.started)
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
		target = " --workspace " + wsCmdArg(w)
	}
	var cmds []string
	for _, t := range tools {
		cmds = append(cmds, "claude-iterate config set claude.allowedTools "+shellQuote(t)+" --add"+target)
	}
	return "the verifier gets claude.allowedTools and claude.permissionMode less the write tools (it only reads): to let it check the work, " +
		strings.Join(cmds, " && ")
}
