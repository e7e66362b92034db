package main

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseVerdict(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		want       verdict
	}{
		{"alone", `{"verdict":"pass","summary":"ok","issues":[],"confidence":"high"}`,
			verdict{Verdict: "pass", Summary: "ok", Issues: []string{}, Confidence: "high"}},
		{"fenced after text", "I checked.\n```json\n{\"verdict\": \"fail\", \"summary\": \"s\", \"issues\": [\"a\", \"b\"]}\n```\n",
			verdict{Verdict: "fail", Summary: "s", Issues: []string{"a", "b"}}},
		{"the last wins", `{"verdict":"pass","summary":"first"} then {"verdict":"fail","summary":"second"}`,
			verdict{Verdict: "fail", Summary: "second", Issues: []string{}}},
		{"nested objects in the last", `{"verdict":"fail","summary":"x","issues":[{"file":"a.go"}]}`,
			verdict{Verdict: "fail", Summary: "x", Issues: []string{`{"file":"a.go"}`}}},
		{"an object without verdict after it", `{"verdict":"pass","summary":"v"} and {"other":1}`,
			verdict{Verdict: "pass", Summary: "v", Issues: []string{}}},
		{"case and spaces", `{"verdict":" PASS ","summary":"ok"}`, verdict{Verdict: "pass", Summary: "ok", Issues: []string{}}},
		{"issues as one string", `{"verdict":"fail","issues":"one"}`, verdict{Verdict: "fail", Issues: []string{"one"}}},
		{"unknown verdict", `{"verdict":"maybe","summary":"hm"}`,
			verdict{Verdict: "needs_review", Summary: `unknown verdict "maybe". hm`, Issues: []string{}, Text: `{"verdict":"maybe","summary":"hm"}`}},
		{"none", "all fine", verdict{Verdict: "needs_review", Summary: "the verifier gave no verdict", Issues: []string{}, Text: "all fine"}},
		{"broken", `{"verdict": "pass", "summary": `, verdict{Verdict: "needs_review", Summary: "the verifier gave no verdict", Issues: []string{}, Text: `{"verdict": "pass", "summary": `}},
		{"empty", "", verdict{Verdict: "needs_review", Summary: "the verifier gave no verdict", Issues: []string{}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseVerdict(tt.text); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseVerdict(%q) =\n%#v, want\n%#v", tt.text, got, tt.want)
			}
		})
	}
}

func FuzzParseVerdict(f *testing.F) {
	f.Add(`{"verdict":"pass"}`)
	f.Add("```json\n{\"verdict\":\"fail\",\"issues\":[1,{}]}\n```")
	f.Add(strings.Repeat("{", 100))
	f.Fuzz(func(t *testing.T, text string) {
		v := parseVerdict(text)
		switch v.Verdict {
		case verdictPass, verdictFail, verdictNeedsReview:
		default:
			t.Fatalf("verdict %q", v.Verdict)
		}
		if v.Issues == nil {
			t.Fatal("nil issues")
		}
	})
}

func TestQuestionNotes(t *testing.T) {
	w := &workspace{Name: "w", Dir: "/ws", StateDir: "/ws"}
	n := promptNotes{answers: []pendingAnswer{{Question: "Q?", Answer: "A."}}, early: "task marked complete", earlyAt: 1, minimum: 3, verifyNote: "VERIFY\n"}
	text := n.text(w)
	for _, want := range []string{"# Notes from claude-iterate", "Your question:\nQ?\nThe answer:\nA.\n", "/ws/ANSWERS.md", "The last iteration (1) claimed", "from iteration 3 on", "VERIFY"} {
		if !strings.Contains(text, want) {
			t.Errorf("notes lack %q:\n%s", want, text)
		}
	}
	if (&promptNotes{}).text(w) != "" {
		t.Error("empty notes add text")
	}
}

// TestParseVerdictBounds pins the bounds of the search: the verdict is
// looked for in the text's last maxVerdictText bytes, through at most
// maxVerdictTries objects from the end.
func TestParseVerdictBounds(t *testing.T) {
	pass := `{"verdict":"pass","summary":"ok"}`
	for _, tt := range []struct {
		name, text, want string
	}{
		{"tries: the last one reaches it", pass + strings.Repeat("{}", maxVerdictTries-1), verdictPass},
		{"tries: one too many objects after it", pass + strings.Repeat("{}", maxVerdictTries), verdictNeedsReview},
		{"text: within the end searched", strings.Repeat("x", 100) + pass + strings.Repeat("x", maxVerdictText-len(pass)), verdictPass},
		{"text: before the end searched", pass + strings.Repeat("x", maxVerdictText), verdictNeedsReview},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseVerdict(tt.text); got.Verdict != tt.want {
				t.Errorf("parseVerdict(…%d bytes) = %q, want %q", len(tt.text), got.Verdict, tt.want)
			}
		})
	}
}

// TestVerificationNote pins what the next prompt says of a verdict:
// run --verify's attempt or the verify command's, its issues, its text.
func TestVerificationNote(t *testing.T) {
	fail := verdict{Verdict: "fail", Summary: "two gaps", Issues: []string{"no test", "no doc"}, Text: "raw"}
	if got, want := verificationNote(fail, 2), "A verifier checked your claim that the task is complete (attempt 2), and its verdict is fail.\n"+
		"Its summary:\ntwo gaps\nThe issues it found:\n- no test\n- no doc\nIts final text:\nraw\n"+
		"Fix only these issues; do not redo or change work that is not named. Then mark the task complete again.\n"; got != want {
		t.Errorf("attempt 2:\n%s\nwant:\n%s", got, want)
	}
	pass := verdict{Verdict: "pass", Summary: "fine", Issues: []string{}}
	if got, want := verificationNote(pass, 0), "A verifier checked the task (claude-iterate verify), and its verdict is pass.\n"+
		"Its summary:\nfine\n"+
		"Fix only these issues; do not redo or change work that is not named. Then mark the task complete when it is.\n"; got != want {
		t.Errorf("verify:\n%s\nwant:\n%s", got, want)
	}
}

// TestReportText pins the verification report's sections: confidence,
// issues or None, refused calls and their fix, the final text.
func TestReportText(t *testing.T) {
	ws := &workspace{Name: "w"}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	got := string(reportText(ws, verdict{Verdict: "fail", Summary: "s", Issues: []string{"a"}, Confidence: "high", Text: "T"}, "deep", at, 0.5, []string{"Write x"}, "allow it"))
	want := "# Verification report: w\n\n- Verdict: **fail**\n- Confidence: high\n- Depth: deep\n- Time: 2026-01-02T03:04:05Z\n- Cost: $0.5000\n" +
		"\n## Summary\n\ns\n\n## Issues\n\n- a\n\n## Refused tool calls\n\n- Write x\n\nThe fix: allow it.\n" +
		"\n## The verifier's final text (no verdict found in it)\n\nT\n"
	if got != want {
		t.Errorf("full report:\n%s\nwant:\n%s", got, want)
	}
	got = string(reportText(ws, verdict{Verdict: "pass", Issues: []string{}}, "quick", at, 0, []string{"Bash(rm)"}, ""))
	want = "# Verification report: w\n\n- Verdict: **pass**\n- Depth: quick\n- Time: 2026-01-02T03:04:05Z\n- Cost: $0.0000\n" +
		"\n## Summary\n\n(none)\n\n## Issues\n\nNone.\n\n## Refused tool calls\n\n- Bash(rm)\n"
	if got != want {
		t.Errorf("short report:\n%s\nwant:\n%s", got, want)
	}
	if got := string(reportText(ws, verdict{Verdict: "pass", Issues: []string{}}, "quick", at, 0, nil, "")); strings.Contains(got, "Refused") {
		t.Errorf("a report without refused calls has their section:\n%s", got)
	}
}
