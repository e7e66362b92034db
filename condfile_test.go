package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestFileConditionsJudgedPerIteration: a file condition is met in the
// iteration that creates or changes its file, and not in the next one
// that leaves it as it was (stopSet.judged), nor after a removal; a file
// made again is met again.
func TestFileConditionsJudgedPerIteration(t *testing.T) {
	dir := t.TempDir()
	created := one(t, `{"type":"file_created","path":"DONE"}`)
	contains := one(t, `{"type":"file_contains","path":"DONE","content":"yes"}`)
	s := &stopSet{ordered: []groupedCondition{{groupSuccess, created}, {groupSuccess, contains}}}
	if warns := s.takeFileStarts(dir); len(warns) != 0 {
		t.Fatalf("warnings for a file that is not there: %q", warns)
	}
	path := filepath.Join(dir, "DONE")
	st := &condState{Dir: dir}
	check := func(n int, want bool, reason string) {
		t.Helper()
		for _, c := range []*condition{created, contains} {
			r := c.evaluate(st)
			if r.Met != want {
				t.Fatalf("after iteration %d: %s met=%v (%s), want %v", n, c.Type, r.Met, r.Reason, want)
			}
			if c == created && reason != "" && r.Reason != reason {
				t.Fatalf("after iteration %d: reason %q, want %q", n, r.Reason, reason)
			}
		}
		s.judged(dir, n)
	}
	write := func(text string, mod time.Time) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(path, mod, mod)
	}
	t0 := time.Now().Add(-time.Hour)
	write("yes\n", t0)
	check(1, true, "DONE exists")
	check(2, false, "DONE unchanged since iteration 1: it counts when an iteration creates or changes it")
	check(3, false, "DONE unchanged since iteration 1: it counts when an iteration creates or changes it")
	write("yes\n", t0.Add(time.Second)) // the same bytes, written again: a new claim
	check(4, true, "DONE exists")
	os.Remove(path)
	check(5, false, "DONE does not exist")
	write("yes\n", t0.Add(2*time.Second))
	check(6, true, "DONE exists")
}
