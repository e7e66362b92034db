package main

import (
	"reflect"
	"strings"
	"testing"
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
