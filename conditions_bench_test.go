package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkConditions measures evaluating a realistic stop set after an
// iteration: the loop's own stops, tests, files, the result's text and a
// combination, none of them met.
func BenchmarkConditions(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "STATUS"), []byte(strings.Repeat("work in progress\n", 200)), 0o644); err != nil {
		b.Fatal(err)
	}
	cfg, err := decodeConds(b, `{
		"failure": [{"type":"failure_streak","count":3}, {"type":"on_error","pattern":"overloaded"}, {"type":"max_cost","usd":20}],
		"success": [{"type":"task_complete"},
			{"type":"all","conditions":[{"type":"all_tests_pass"}, {"type":"file_contains","path":"STATUS","content":"shipped"}]},
			{"type":"output_pattern","pattern":"^ALL \\d+ DONE$","is_regex":true}],
		"conditions": [{"type":"max_iterations","count":50}, {"type":"max_duration","duration":"2h"}, {"type":"no_progress","iterations":5},
			{"type":"user_signal"}, {"type":"specific_tests_pass","tests":["TestParse","TestFormat"]}, {"type":"file_created","path":"DONE"},
			{"type":"not","condition":{"type":"output_pattern","pattern":"<promise>COMPLETE</promise>"}}]}`)
	if err != nil {
		b.Fatal(err)
	}
	set := stopSet{cfg: *cfg}
	set.order()
	st := &condState{
		Iteration: 7, Elapsed: 25 * time.Minute, Cost: 3.5, FailStreak: 1, Failed: true, Error: "error_max_turns: out of turns",
		ResultText:    strings.Repeat("I changed the parser and ran the tests. ", 50) + "<promise>COMPLETE</promise>",
		SinceProgress: 2, ProgressWord: "progress", TestFailStreak: 1, Dir: dir,
		Tests: &testResults{Format: formatGoJSON, Passed: 41, Failed: 1, ExitCode: 1, names: map[string]bool{"TestParse": true, "TestFormat": false}},
	}
	if v := set.evaluate(st); v.met != nil || len(v.reports) != 13 {
		b.Fatalf("verdict: met %v, %d reports", v.met, len(v.reports))
	}
	b.ReportAllocs()
	for b.Loop() {
		set.evaluate(st)
	}
}
