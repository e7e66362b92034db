package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// decodeConds decodes a stop configuration from text.
func decodeConds(t testing.TB, text string) (*stopConfig, error) {
	t.Helper()
	doc, err := parseJSONDoc("stop.json", []byte(text))
	if err != nil {
		return nil, err
	}
	return decodeStopConfig(doc, doc.Root, "")
}

// one decodes a single condition.
func one(t *testing.T, text string) *condition {
	t.Helper()
	cfg, err := decodeConds(t, `{"conditions":[`+text+`]}`)
	if err != nil {
		t.Fatalf("decoding %s: %v", text, err)
	}
	return cfg.Conditions[0]
}

// condCase is a condition, the state it is evaluated in, and what it
// must say.
type condCase struct {
	name     string
	cond     string
	state    condState
	met      bool
	progress float64
	reason   string
}

// conditionCases are the evaluation cases of every condition type; dir
// holds a file DONE.
func conditionCases(dir string) []condCase {
	passing := &testResults{Format: formatGoJSON, Passed: 3, names: map[string]bool{"TestA": true, "TestB": true, "TestC": true}}
	failing := &testResults{Format: formatGoJSON, Passed: 1, Failed: 1, ExitCode: 1, names: map[string]bool{"TestA": true, "TestB": false}}
	script := func(ok bool) func(*condition) (bool, string) {
		return func(c *condition) (bool, string) { return ok, "ran " + c.Script }
	}
	return []condCase{
		{"max_iterations below", `{"type":"max_iterations","count":4}`, condState{Iteration: 1}, false, 0.25, "iteration 1 of 4"},
		{"max_iterations reached", `{"type":"max_iterations","count":4}`, condState{Iteration: 4}, true, 1, "max iterations reached (4/4)"},
		{"max_duration below", `{"type":"max_duration","duration":"1h 30m"}`, condState{Elapsed: 45 * time.Minute}, false, 0.5, "45m0s of 1h30m"},
		{"max_duration reached", `{"type":"max_duration","duration":"90s"}`, condState{Elapsed: 2 * time.Minute}, true, 1, "max duration reached (1m30s)"},
		{"max_cost below", `{"type":"max_cost","usd":2}`, condState{Cost: 0.5}, false, 0.25, "$0.50 of $2.00"},
		{"max_cost reached", `{"type":"max_cost","usd":2}`, condState{Cost: 2.01}, true, 1, "max cost reached ($2.01 of $2.00)"},
		{"failure_streak", `{"type":"failure_streak","count":3}`, condState{FailStreak: 3}, true, 1, "3 consecutive failed iterations"},
		{"failure_streak below", `{"type":"failure_streak","count":3}`, condState{FailStreak: 1}, false, 1.0 / 3, "1 of 3 failed iterations in a row"},
		{"test_failure_streak", `{"type":"test_failure_streak","count":2}`, condState{TestFailStreak: 2}, true, 1, "2 consecutive failing test runs"},
		{"test_failure_streak below", `{"type":"test_failure_streak","count":2}`, condState{TestFailStreak: 1}, false, 0.5, "1 of 2 failing test runs in a row"},
		{"all_tests_pass no run", `{"type":"all_tests_pass"}`, condState{}, false, 0, "no test run yet"},
		{"all_tests_pass failing", `{"type":"all_tests_pass"}`, condState{Tests: failing}, false, 0.5, "1 passed, 1 failed, exit status 1"},
		{"all_tests_pass", `{"type":"all_tests_pass"}`, condState{Tests: passing}, true, 1, "all tests pass (3 passed, 0 failed)"},
		{"all_tests_pass zero tests", `{"type":"all_tests_pass"}`, condState{Tests: &testResults{Format: formatSummary}}, false, 0, "0 passed, 0 failed"},
		{"specific_tests_pass waiting", `{"type":"specific_tests_pass","tests":["TestA","TestB"]}`, condState{Tests: failing}, false, 0.5, "1 of 2 pass; waiting for TestB"},
		{"specific_tests_pass", `{"type":"specific_tests_pass","tests":["TestA","TestB"]}`, condState{Tests: passing}, true, 1, "tests pass: TestA, TestB"},
		{"specific_tests_pass unnamed", `{"type":"specific_tests_pass","tests":["TestA"]}`, condState{Tests: &testResults{Format: formatSummary, Passed: 3}}, false, 0, "the test output names no tests (want go test -json, go test -v or TAP)"},
		{"no_progress", `{"type":"no_progress","iterations":2}`, condState{SinceProgress: 2, ProgressWord: "work"}, true, 1, "stagnation (2 iterations without work)"},
		{"no_progress below", `{"type":"no_progress","iterations":2}`, condState{SinceProgress: 1}, false, 0.5, "1 of 2 iterations without progress"},
		{"task_complete", `{"type":"task_complete"}`, condState{TaskComplete: true}, true, 1, "task marked complete in .status.json"},
		{"task_complete not", `{"type":"task_complete"}`, condState{}, false, 0, "not marked complete"},
		{"output_pattern literal", `{"type":"output_pattern","pattern":"<promise>COMPLETE</promise>"}`, condState{ResultText: "done <promise>COMPLETE</promise>"}, true, 1, `output matched "<promise>COMPLETE</promise>"`},
		{"output_pattern literal is not a regex", `{"type":"output_pattern","pattern":"a.c"}`, condState{ResultText: "abc"}, false, 0, `no "a.c" in the last result`},
		{"output_pattern regex", `{"type":"output_pattern","pattern":"^ALL \\d+ DONE$","is_regex":true}`, condState{ResultText: "ALL 12 DONE"}, true, 1, `output matched /^ALL \d+ DONE$/`},
		{"file_created", `{"type":"file_created","path":"DONE"}`, condState{Dir: dir}, true, 1, "DONE exists"},
		{"file_created missing", `{"type":"file_created","path":"NOPE"}`, condState{Dir: dir}, false, 0, "NOPE does not exist"},
		{"file_contains", `{"type":"file_contains","path":"DONE","content":"shipped"}`, condState{Dir: dir}, true, 1, `DONE contains "shipped"`},
		{"file_contains not", `{"type":"file_contains","path":"DONE","content":"broken"}`, condState{Dir: dir}, false, 0, `DONE does not contain "broken"`},
		{"file_contains a device", `{"type":"file_contains","path":"/dev/zero","content":"x"}`, condState{Dir: dir}, false, 0, "cannot read /dev/zero: not a regular file (a device)"},
		{"file_contains missing", `{"type":"file_contains","path":"NOPE","content":"x"}`, condState{Dir: dir}, false, 0, "NOPE does not exist"},
		{"on_error any", `{"type":"on_error"}`, condState{Failed: true, Error: "error_max_turns: out of turns"}, true, 1, "iteration failed: error_max_turns: out of turns"},
		{"on_error no error", `{"type":"on_error"}`, condState{}, false, 0, "no error"},
		{"on_error pattern", `{"type":"on_error","pattern":"overloaded"}`, condState{Failed: true, Error: "529 overloaded"}, true, 1, "iteration failed: 529 overloaded"},
		{"on_error other error", `{"type":"on_error","pattern":"overloaded"}`, condState{Failed: true, Error: "500"}, false, 0, "the error does not match"},
		{"custom_script ok", `{"type":"custom_script","script":"./check"}`, condState{RunScript: script(true)}, true, 1, "ran ./check"},
		{"custom_script fails", `{"type":"custom_script","script":"./check"}`, condState{RunScript: script(false)}, false, 0, "ran ./check"},
		{"user_signal", `{"type":"user_signal"}`, condState{StopRequest: "keyboard"}, true, 1, "stop requested (keyboard)"},
		{"user_signal none", `{"type":"user_signal"}`, condState{}, false, 0, "no stop requested"},
		{"never", `{"type":"never"}`, condState{Iteration: 1000}, false, 0, "never met"},
		{"all partly", `{"type":"all","conditions":[{"type":"max_iterations","count":2},{"type":"task_complete"}]}`, condState{Iteration: 2}, false, 0.5, "max iterations reached (2/2); not marked complete"},
		{"all met", `{"type":"all","conditions":[{"type":"max_iterations","count":2},{"type":"task_complete"}]}`, condState{Iteration: 2, TaskComplete: true}, true, 1, "max iterations reached (2/2) and task marked complete in .status.json"},
		{"any none", `{"type":"any","conditions":[{"type":"max_iterations","count":4},{"type":"max_cost","usd":1}]}`, condState{Iteration: 1, Cost: 0.5}, false, 0.5, "iteration 1 of 4; $0.50 of $1.00"},
		{"any met", `{"type":"any","conditions":[{"type":"max_iterations","count":4},{"type":"task_complete"}]}`, condState{TaskComplete: true}, true, 1, "task marked complete in .status.json"},
		{"not met", `{"type":"not","condition":{"type":"file_created","path":"NOPE"}}`, condState{Dir: dir}, true, 1, "not met: NOPE does not exist"},
		{"not unmet", `{"type":"not","condition":{"type":"file_created","path":"DONE"}}`, condState{Dir: dir}, false, 0, "DONE exists"},
	}
}

func TestConditionEvaluate(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "DONE"), []byte("all good\nstatus: shipped\n"), 0o644)
	for _, tt := range conditionCases(dir) {
		t.Run(tt.name, func(t *testing.T) {
			c := one(t, tt.cond)
			got := c.evaluate(&tt.state)
			if got.Met != tt.met || got.Reason != tt.reason || (got.Progress-tt.progress) > 1e-9 || (tt.progress-got.Progress) > 1e-9 {
				t.Errorf("evaluate(%s) = %+v, want met=%v progress=%v reason=%q", tt.cond, got, tt.met, tt.progress, tt.reason)
			}
			if c.describe() == "" {
				t.Errorf("%s: empty description", tt.cond)
			}
		})
	}
}

// TestEveryTypeTested keeps the cases above complete: every condition type
// that the decoder takes (condSpecs) is evaluated, as the outermost
// condition of a case, both met and not met (never: only not met).
func TestEveryTypeTested(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "DONE"), []byte("status: shipped\n"), 0o644)
	seen := map[string]map[bool]bool{}
	for _, tt := range conditionCases(dir) {
		c := one(t, tt.cond)
		if seen[c.Type] == nil {
			seen[c.Type] = map[bool]bool{}
		}
		seen[c.Type][c.evaluate(&tt.state).Met] = true
	}
	for name := range condSpecs {
		for _, met := range []bool{true, false} {
			if !seen[name][met] && (!met || name != condNever) {
				t.Errorf("condition type %s is never evaluated as met=%v", name, met)
			}
		}
	}
	for name := range seen {
		if _, ok := condSpecs[name]; !ok {
			t.Errorf("a case evaluates a condition of type %q, which condSpecs does not know", name)
		}
	}
}

func TestConditionPriorityOrder(t *testing.T) {
	cfg, err := decodeConds(t, `{
		"conditions": [{"type":"never"}, {"type":"output_pattern","pattern":"x"}, {"type":"max_iterations","count":1}, {"type":"user_signal"}],
		"success": [{"type":"file_created","path":"/nonexistent/x"}, {"type":"task_complete"}],
		"failure": [{"type":"failure_streak","count":1}, {"type":"on_error"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	s := stopSet{cfg: *cfg}
	s.order()
	var got []string
	for _, gc := range s.ordered {
		got = append(got, gc.group+":"+gc.c.Type)
	}
	want := "failure:on_error failure:failure_streak success:task_complete success:file_created conditions:user_signal conditions:max_iterations conditions:output_pattern conditions:never"
	if strings.Join(got, " ") != want {
		t.Errorf("order:\n got %s\nwant %s", strings.Join(got, " "), want)
	}

	// Everything met: the failure list wins, on_error first.
	all := &condState{Iteration: 1, ResultText: "x", StopRequest: "file", TaskComplete: true, Failed: true, Error: "boom", FailStreak: 1}
	v := s.evaluate(all)
	if v.met == nil || v.met.c.Type != condOnError || len(v.reports) != 8 {
		t.Fatalf("verdict %+v", v)
	}
	if e := endingFor(v.met, v.reason); e.code != exitError || e.status != statusFailed || e.reason != "failed: iteration failed: boom" {
		t.Errorf("ending %+v", e)
	}
	// No failure: success beats max_iterations (finishing on the last
	// allowed iteration is a completion).
	all.Failed, all.FailStreak = false, 0
	v = s.evaluate(all)
	if v.met == nil || v.met.c.Type != condTaskComplete {
		t.Fatalf("verdict %+v", v.met)
	}
	if e := endingFor(v.met, v.reason); e.code != exitOK || e.status != statusCompleted || e.reason != "completed: task marked complete in .status.json" {
		t.Errorf("ending %+v", e)
	}
	// Within conditions: user_signal (90) before max_iterations (80)
	// before output_pattern (50), whatever the file order.
	all.TaskComplete = false
	v = s.evaluate(all)
	if e := endingFor(v.met, v.reason); e.code != exitOK || e.status != statusStopped || e.reason != "stopped: stop requested (file)" {
		t.Errorf("ending %+v", e)
	}
	all.StopRequest = ""
	if v = s.evaluate(all); v.met.c.Type != condMaxIterations {
		t.Errorf("met %s, want max_iterations", v.met.c.Type)
	}
	// Nothing met: no verdict, every condition reported.
	if v = s.evaluate(&condState{}); v.met != nil || len(v.reports) != 8 {
		t.Errorf("verdict %+v", v)
	}
}

func TestConditionDecodeErrors(t *testing.T) {
	tests := []struct {
		text, want string
	}{
		{`[]`, `stop.json:1:1: want an object {"conditions": [...], "success": [...], "failure": [...]}, got array`},
		{`{"conditions": {}}`, `stop.json:1:16: conditions: want an array of conditions, got object`},
		{`{"succes": []}`, `stop.json:1:12: succes: unknown key (did you mean "success"?); want conditions, success, failure, test_cmd, test_timeout`},
		{`{"success_conditions": []}`, `success_conditions: unknown key (did you mean "success"?)`},
		{`{"conditions": [3]}`, `stop.json:1:17: conditions[0]: want a condition object {"type": ...}, got 3`},
		{`{"conditions": [{}]}`, `conditions[0]: missing "type" (one of on_error, user_signal, max_cost, `},
		{`{"conditions": [{"type": 1}]}`, `conditions[0].type: want a string, got number`},
		{`{"conditions": [{"type": "max_iteration", "count": 1}]}`, `conditions[0].type: unknown condition type "max_iteration" (did you mean "max_iterations"?)`},
		{`{"conditions": [{"type": "frobnicate"}]}`, `conditions[0].type: unknown condition type "frobnicate" (want one of on_error, `},
		{`{"conditions": [{"type": "max_iterations"}]}`, `conditions[0]: max_iterations needs "count"`},
		{`{"conditions": [{"type": "max_iterations", "count": -3}]}`, `conditions[0].count: must not be negative, got -3`},
		{`{"conditions": [{"type": "max_iterations", "count": 0}]}`, `conditions[0].count: must be at least 1, got 0`},
		{`{"conditions": [{"type": "max_iterations", "count": "5"}]}`, `conditions[0].count: want a whole number, got string`},
		{`{"conditions": [{"type": "max_iterations", "count": 2.5}]}`, `conditions[0].count: want a whole number, got 2.5`},
		{`{"conditions": [{"type": "max_iterations", "cuont": 2}]}`, `conditions[0].cuont: unknown field for max_iterations (did you mean "count"?)`},
		{`{"conditions": [{"type": "never", "count": 2}]}`, `conditions[0].count: never takes no fields`},
		{`{"conditions": [{"type": "max_duration", "duration": "soon"}]}`, `conditions[0].duration: "soon": not a duration (want e.g. 90s, 2h30m)`},
		{`{"conditions": [{"type": "max_duration", "duration": 60}]}`, `conditions[0].duration: want a duration string such as "90s" or "1h 30m", got 60`},
		{`{"conditions": [{"type": "max_duration", "duration": "0s"}]}`, `conditions[0].duration: "0s": must be above 0`},
		{`{"conditions": [{"type": "max_duration", "duration": "-1h"}]}`, `conditions[0].duration: "-1h": must not be negative`},
		{`{"conditions": [{"type": "max_cost", "usd": 0}]}`, `conditions[0].usd: must be above 0, got 0`},
		{`{"conditions": [{"type": "output_pattern", "pattern": ""}]}`, `conditions[0].pattern: must not be empty`},
		{`{"conditions": [{"type": "output_pattern", "pattern": "a(", "is_regex": true}]}`, `stop.json:1:55: conditions[0].pattern: invalid regular expression: missing closing ): ` + "`a(`"},
		{`{"conditions": [{"type": "output_pattern", "pattern": "x", "is_regex": "yes"}]}`, `conditions[0].is_regex: want true or false, got "yes"`},
		{`{"conditions": [{"type": "on_error", "pattern": ""}]}`, `conditions[0].pattern: must not be empty (leave the field out instead)`},
		{`{"conditions": [{"type": "specific_tests_pass", "tests": []}]}`, `conditions[0].tests: want at least one test name`},
		{`{"conditions": [{"type": "specific_tests_pass", "tests": ["a", 2]}]}`, `conditions[0].tests[1]: want a string, got number`},
		{`{"conditions": [{"type": "custom_script", "script": "x", "args": "a b"}]}`, `conditions[0].args: want an array of strings, got string`},
		{`{"conditions": [{"type": "all", "conditions": []}]}`, `conditions[0].conditions: want at least one condition`},
		{`{"conditions": [{"type": "never"}, {"type": "any", "conditions": [{"type": "output_pattern", "pattern": "("}, {"type": "output_pattern", "is_regex": true, "pattern": "("}]}]}`,
			`conditions[1].conditions[1].pattern: invalid regular expression`},
		{`{"conditions": [{"type": "not", "condition": {"type": "nope"}}]}`, `conditions[0].condition.type: unknown condition type "nope"`},
		{`{"conditions": [{"type": "not", "condition": []}]}`, `conditions[0].condition: want a condition object {"type": ...}, got array`},
		{`{"test_cmd": ""}`, `test_cmd: want a non-empty command string, got ""`},
		{`{"test_timeout": "forever"}`, `test_timeout: "forever": not a duration`},
		{`{"conditions": [{"type": "never"}`, `stop.json:1:34: invalid JSON: unexpected end of file`},
		{`{"conditions": [{"type": "never", "type": "never"}]}`, `duplicate key "type"`},
	}
	for _, tt := range tests {
		_, err := decodeConds(t, tt.text)
		if err == nil {
			t.Errorf("%s: no error, want %q", tt.text, tt.want)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s:\n got %v\nwant %s", tt.text, err, tt.want)
		}
	}
}

func TestConditionRoundTrip(t *testing.T) {
	text := `{"conditions":[{"type":"max_iterations","count":3},{"type":"max_duration","duration":"1h 30m"},{"type":"max_cost","usd":2.5},
		{"type":"no_progress","iterations":4},{"type":"never"},{"type":"user_signal"}],
		"success":[{"type":"any","conditions":[{"type":"output_pattern","pattern":"<promise>COMPLETE</promise>"},{"type":"output_pattern","pattern":"^ok$","is_regex":true}]},
		{"type":"all","conditions":[{"type":"all_tests_pass"},{"type":"task_complete"},{"type":"specific_tests_pass","tests":["TestA"]}]},
		{"type":"file_created","path":"DONE"},{"type":"file_contains","path":"x","content":"y"},{"type":"custom_script","script":"./c.sh","args":["-v"],"timeout":"5s"}],
		"failure":[{"type":"on_error"},{"type":"on_error","pattern":"529"},{"type":"failure_streak","count":2},{"type":"test_failure_streak","count":5},
		{"type":"not","condition":{"type":"file_created","path":"keep"}}],
		"test_cmd":"go test -json ./...","test_timeout":"2m"}`
	cfg, err := decodeConds(t, text)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"conditions":[{"type":"max_iterations","count":3},{"type":"max_duration","duration":"1h30m"},{"type":"max_cost","usd":2.5},{"type":"no_progress","iterations":4},{"type":"never"},{"type":"user_signal"}],` +
		`"success":[{"type":"any","conditions":[{"type":"output_pattern","pattern":"\u003cpromise\u003eCOMPLETE\u003c/promise\u003e"},{"type":"output_pattern","pattern":"^ok$","is_regex":true}]},` +
		`{"type":"all","conditions":[{"type":"all_tests_pass"},{"type":"task_complete"},{"type":"specific_tests_pass","tests":["TestA"]}]},` +
		`{"type":"file_created","path":"DONE"},{"type":"file_contains","path":"x","content":"y"},{"type":"custom_script","script":"./c.sh","args":["-v"],"timeout":"5s"}],` +
		`"failure":[{"type":"on_error"},{"type":"on_error","pattern":"529"},{"type":"failure_streak","count":2},{"type":"test_failure_streak","count":5},` +
		`{"type":"not","condition":{"type":"file_created","path":"keep"}}],"test_cmd":"go test -json ./...","test_timeout":"2m"}`
	if string(data) != want {
		t.Errorf("encoded:\n%s\nwant:\n%s", data, want)
	}
	again, err := decodeConds(t, string(data))
	if err != nil {
		t.Fatalf("decoding the encoding: %v", err)
	}
	data2, _ := json.Marshal(again)
	if string(data2) != string(data) {
		t.Errorf("not a round trip:\n%s\n%s", data, data2)
	}
}

func FuzzConditionDecode(f *testing.F) {
	f.Add(`{"conditions":[{"type":"max_iterations","count":3}]}`)
	f.Add(`{"success":[{"type":"any","conditions":[{"type":"output_pattern","pattern":"a|b","is_regex":true},{"type":"not","condition":{"type":"never"}}]}]}`)
	f.Add(`{"failure":[{"type":"on_error","pattern":"x"}],"test_cmd":"true","test_timeout":"1h 2m"}`)
	f.Add(`{"conditions":[{"type":"max_duration","duration":"1.5h"},{"type":"max_cost","usd":1e-3},{"type":"custom_script","script":"s","args":[]}]}`)
	f.Add(`{"conditions":[{"type":"specific_tests_pass","tests":["\u0000"]},{"type":"file_contains","path":"p","content":"\ud800"}]}`)
	f.Fuzz(func(t *testing.T, text string) {
		cfg, err := decodeConds(t, text)
		if err != nil {
			return
		}
		data, err := json.Marshal(cfg)
		if err != nil {
			t.Fatalf("encoding what was accepted: %v", err)
		}
		again, err := decodeConds(t, string(data))
		if err != nil {
			t.Fatalf("the encoding %s of %q does not decode: %v", data, text, err)
		}
		data2, err := json.Marshal(again)
		if err != nil || string(data2) != string(data) {
			t.Fatalf("not a round trip: %s then %s (%v)", data, data2, err)
		}
		for _, list := range [][]*condition{again.Conditions, again.Success, again.Failure} {
			for _, c := range list {
				c.describe()
				files := false
				c.walk(func(c *condition) { files = files || c.Type == condFileContains || c.Type == condFileCreated })
				if !files { // a path such as /dev/zero would be read for ever
					c.evaluate(&condState{Tests: &testResults{}})
				}
			}
		}
	})
}
