package main

import (
	"slices"
	"strings"
	"testing"
)

func TestTestParser(t *testing.T) {
	tests := []struct {
		name     string
		output   string
		exit     int
		format   string
		passed   int
		failed   int
		names    string // "name=pass ..." sorted, or "" for none
		allPass  bool
		runFails bool
	}{
		{"go test -json", `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"--- FAIL: TestA (0.00s)\n"}
{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"fail","Package":"p","Test":"TestB"}
{"Action":"skip","Package":"p","Test":"TestC"}
{"Action":"fail","Package":"p"}`, 1, formatGoJSON, 1, 1, "TestA=true TestB=false", false, true},
		{"go test -json, all pass", `{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"pass","Package":"p","Test":"TestA/sub"}
{"Action":"pass","Package":"p"}`, 0, formatGoJSON, 2, 0, "TestA/sub=true TestA=true", true, false},
		{"go test -json, build failure", `{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"output","Package":"q","Output":"q.go:3: undefined: x\n"}
{"Action":"fail","Package":"q"}`, 1, formatGoJSON, 1, 1, "TestA=true q=false", false, true},
		{"same name in two packages", `{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"fail","Package":"q","Test":"TestA"}`, 1, formatGoJSON, 0, 1, "TestA=false", false, true},
		{"go test -v", "=== RUN   TestA\n--- PASS: TestA (0.00s)\n    --- FAIL: TestA/x (0.00s)\n--- SKIP: TestS (0.00s)\nFAIL\nexit status 1\nFAIL\tp\t0.01s", 1, formatGoV, 1, 1, "TestA/x=false TestA=true", false, true},
		{"plain go test output is not TAP", "ok  \tgithub.com/x/y\t0.01s\n--- FAIL: TestB (0.00s)\nFAIL", 1, formatGoV, 0, 1, "TestB=false", false, true},
		{"TAP", "TAP version 13\n1..4\nok 1 - adds\nnot ok 2 - subtracts\nok 3 # SKIP no network\nnot ok 4 - flaky # TODO later\n", 1, formatTAP, 1, 1, "adds=true subtracts=false", false, true},
		{"TAP without descriptions", "1..2\nok 1\nok 2\n", 0, formatTAP, 2, 0, "test 1=true test 2=true", true, false},
		{"pytest summary", "tests/test_x.py ..F\n==== 1 failed, 2 passed in 0.12s ====", 1, formatSummary, 2, 1, "", false, true},
		{"jest summary", "Test Suites: 1 passed, 1 total\nTests:       7 passed, 7 total", 0, formatSummary, 7, 0, "", true, false},
		{"mocha summary", "  5 passing (20ms)\n  2 failing\n", 2, formatSummary, 5, 2, "", false, true},
		{"exit status only, pass", "building...\nall good", 0, formatExit, 1, 0, "make test=true", true, false},
		{"exit status only, fail", "error", 2, formatExit, 0, 1, "make test=false", false, true},
		{"summary with failures but exit 0", "3 passed, 1 failed", 0, formatSummary, 3, 1, "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newTestParser()
			for _, line := range strings.Split(tt.output, "\n") {
				p.line([]byte(line))
			}
			r := p.results("make test", tt.exit)
			if r.Format != tt.format || r.Passed != tt.passed || r.Failed != tt.failed {
				t.Errorf("got %s %d passed %d failed, want %s %d %d", r.Format, r.Passed, r.Failed, tt.format, tt.passed, tt.failed)
			}
			var names []string
			for n, ok := range r.names {
				names = append(names, n+"="+map[bool]string{true: "true", false: "false"}[ok])
			}
			if tt.format == formatSummary && r.names != nil {
				t.Errorf("summary results have names %v", r.names)
			}
			if tt.names != "" {
				slices.Sort(names)
				if strings.Join(names, " ") != tt.names {
					t.Errorf("names %q, want %q", strings.Join(names, " "), tt.names)
				}
			}
			if r.allPass() != tt.allPass || r.runFailed() != tt.runFails {
				t.Errorf("allPass %v runFailed %v, want %v %v", r.allPass(), r.runFailed(), tt.allPass, tt.runFails)
			}
		})
	}
	timedOut := &testResults{Format: formatGoJSON, Passed: 3, Err: "test command timed out after 1s"}
	if timedOut.allPass() || !timedOut.runFailed() || timedOut.summary() != "test command timed out after 1s" {
		t.Errorf("a timed-out run: %+v", timedOut)
	}
}

func FuzzTestParser(f *testing.F) {
	f.Add(`{"Action":"pass","Package":"p","Test":"TestA"}`, 0)
	f.Add("ok 1 - a\nnot ok 2 b # todo\n", 1)
	f.Add("--- PASS: TestA (0.00s)", 0)
	f.Add("3 passed, 1 failed", 1)
	f.Fuzz(func(t *testing.T, out string, exit int) {
		p := newTestParser()
		for _, line := range strings.Split(out, "\n") {
			p.line([]byte(line))
		}
		r := p.results("cmd", exit)
		if r.Passed < 0 || r.Failed < 0 || (r.allPass() && r.runFailed()) {
			t.Fatalf("inconsistent %+v", r)
		}
		_ = r.summary()
	})
}
