package main

// This file reads a verifier's verdict and writes its report. The rules
// are: the verdict is a JSON object with the key "verdict" in the
// verifier's final result text, alone or in a ```json fence; the last such
// object wins; a verdict that is missing, broken, or not one of pass, fail
// and needs_review is needs_review, with the text kept; the report is
// <workspace>/verification-report.md, 0600, rewritten by each
// verification.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// Verdicts.
const (
	verdictPass        = "pass"
	verdictFail        = "fail"
	verdictNeedsReview = "needs_review"
)

// Verification depths.
const (
	depthQuick    = "quick"
	depthStandard = "standard"
	depthDeep     = "deep"
)

// depthRules say how hard the verifier looks.
var depthRules = map[string]string{
	depthQuick: "Check quickly: read the task and the changed files, and run the project's\n" +
		"fastest check (a build, or the tests it names) once.",
	depthStandard: "Check each requirement of the task against the project: read the code\n" +
		"that implements it, and run the build and the tests.",
	depthDeep: "Check thoroughly: each requirement against the code, the build and the\n" +
		"whole test suite; try the edge cases and the error paths the task implies,\n" +
		"and look for what the agent may have skipped, stubbed or hard-coded.",
}

func checkDepth(s string) error {
	if _, ok := depthRules[s]; ok {
		return nil
	}
	return fmt.Errorf("unknown depth %q (want quick, standard or deep)", s)
}

// maxVerdictText bounds the text searched for the verdict (its end), and
// maxVerdictTries the objects tried, so that a text of nested braces costs
// little.
const (
	maxVerdictText  = 64 << 10
	maxVerdictTries = 2000
)

// verdict is a verifier's judgement.
type verdict struct {
	Verdict    string   `json:"verdict"`
	Summary    string   `json:"summary"`
	Issues     []string `json:"issues"`
	Confidence string   `json:"confidence,omitempty"`
	// Text is the verifier's final text, kept when it held no verdict.
	Text string `json:"text,omitempty"`
}

// verdictWire is the verdict as the verifier writes it: lenient types.
type verdictWire struct {
	Verdict    *string         `json:"verdict"`
	Summary    any             `json:"summary"`
	Issues     json.RawMessage `json:"issues"`
	Confidence any             `json:"confidence"`
}

// parseVerdict finds the last verdict object in text.
func parseVerdict(text string) verdict {
	s := text
	if len(s) > maxVerdictText {
		s = s[len(s)-maxVerdictText:]
	}
	for end, tries := len(s), 0; end > 0 && tries < maxVerdictTries; tries++ {
		i := strings.LastIndexByte(s[:end], '{')
		if i < 0 {
			break
		}
		end = i
		var w verdictWire
		dec := json.NewDecoder(strings.NewReader(s[i:]))
		if dec.Decode(&w) != nil || w.Verdict == nil {
			continue
		}
		v := verdict{Verdict: strings.ToLower(strings.TrimSpace(*w.Verdict)), Summary: anyText(w.Summary), Confidence: anyText(w.Confidence)}
		v.Issues = issuesOf(w.Issues)
		switch v.Verdict {
		case verdictPass, verdictFail, verdictNeedsReview:
		default:
			v.Summary = strings.TrimSpace(fmt.Sprintf("unknown verdict %q. %s", *w.Verdict, v.Summary))
			v.Verdict, v.Text = verdictNeedsReview, text
		}
		return v
	}
	return verdict{Verdict: verdictNeedsReview, Summary: "the verifier gave no verdict", Issues: []string{}, Text: text}
}

// anyText is a JSON value as text: a string as is, anything else encoded.
func anyText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(x)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// issuesOf reads "issues": an array of strings (other elements encoded),
// or one string.
func issuesOf(raw json.RawMessage) []string {
	out := []string{}
	var list []any
	if json.Unmarshal(raw, &list) == nil {
		for _, e := range list {
			if t := anyText(e); t != "" {
				out = append(out, t)
			}
		}
		return out
	}
	if t := anyText(rawAny(raw)); t != "" {
		out = append(out, t)
	}
	return out
}

func rawAny(raw json.RawMessage) any {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	return v
}

// verificationState is the metadata's record of verifications.
type verificationState struct {
	LastVerdict string     `json:"lastVerdict,omitempty"`
	LastSummary string     `json:"lastSummary,omitempty"`
	LastTime    *time.Time `json:"lastTime,omitempty"`
	Attempts    int        `json:"attempts"` // every verification of the workspace
	// Findings are the last failed verification's, until an iteration's
	// prompt has had them: the next run's first prompt carries them.
	Findings *verifyFindings `json:"findings,omitempty"`
}

// verifyFindings are a failed verification's findings, for the prompt.
type verifyFindings struct {
	Verdict verdict `json:"verdict"`
	// Attempt counts the run's failed verifications (run --verify); 0 for
	// the verify command's.
	Attempt int `json:"attempt,omitempty"`
}

// note is the prompt's note of the findings.
func (f *verifyFindings) note() string { return verificationNote(f.Verdict, f.Attempt) }

// verificationNote is the next prompt's note after a failed verification:
// of run --verify's attempt, or (attempt 0) of the verify command.
func verificationNote(v verdict, attempt int) string {
	var b strings.Builder
	if attempt > 0 {
		fmt.Fprintf(&b, "A verifier checked your claim that the task is complete (attempt %d), and its verdict is %s.\n", attempt, v.Verdict)
	} else {
		fmt.Fprintf(&b, "A verifier checked the task (claude-iterate verify), and its verdict is %s.\n", v.Verdict)
	}
	fmt.Fprintf(&b, "Its summary:\n%s\n", v.Summary)
	if len(v.Issues) > 0 {
		b.WriteString("The issues it found:\n")
		for _, is := range v.Issues {
			fmt.Fprintf(&b, "- %s\n", is)
		}
	}
	if v.Text != "" {
		fmt.Fprintf(&b, "Its final text:\n%s\n", clip(v.Text, 8000))
	}
	b.WriteString("Fix only these issues; do not redo or change work that is not named. ")
	if attempt > 0 {
		b.WriteString("Then mark the task complete again.\n")
	} else {
		b.WriteString("Then mark the task complete when it is.\n")
	}
	return b.String()
}

// reportText is the verification report.
func reportText(ws *workspace, v verdict, depth string, at time.Time, cost float64, refused []string, fix string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Verification report: %s\n\n", ws.Name)
	fmt.Fprintf(&b, "- Verdict: **%s**\n", v.Verdict)
	if v.Confidence != "" {
		fmt.Fprintf(&b, "- Confidence: %s\n", v.Confidence)
	}
	fmt.Fprintf(&b, "- Depth: %s\n- Time: %s\n- Cost: %s\n", depth, at.Format(time.RFC3339), formatCost(cost))
	fmt.Fprintf(&b, "\n## Summary\n\n%s\n", firstNonEmpty(v.Summary, "(none)"))
	b.WriteString("\n## Issues\n\n")
	if len(v.Issues) == 0 {
		b.WriteString("None.\n")
	}
	for _, is := range v.Issues {
		fmt.Fprintf(&b, "- %s\n", is)
	}
	if len(refused) > 0 {
		b.WriteString("\n## Refused tool calls\n\n")
		for _, r := range refused {
			fmt.Fprintf(&b, "- %s\n", r)
		}
		if fix != "" {
			fmt.Fprintf(&b, "\nThe fix: %s.\n", fix)
		}
	}
	if v.Text != "" {
		fmt.Fprintf(&b, "\n## The verifier's final text (no verdict found in it)\n\n%s\n", v.Text)
	}
	return b.Bytes()
}

// verificationSettings are the verification keys of the configuration.
type verificationSettings struct {
	Auto        bool
	MaxAttempts int
	Depth       string
	Agent       string // "": the run's agent
}

// print shows the last verification in status's layout.
func (vs *verificationState) print(out io.Writer) {
	if vs == nil || vs.LastTime == nil {
		return
	}
	fmt.Fprintf(out, "Verified:    %s at %s (%s): %s\n", vs.LastVerdict, vs.LastTime.Local().Format(time.DateTime),
		plural(vs.Attempts, "verification"), sanitizeString(clip(oneLine(vs.LastSummary), 300)))
}
