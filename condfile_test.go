package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestFileConditionsRejected: a file condition whose completion was
// refused (stopSet.rejected) is not met again until an iteration creates
// or changes its file, nor after a removal; a file made again is met again.
// A file under a not keeps its state, and the files of an all may come from
// different iterations until a completion is refused; then the claim is
// made again by changing every one of them.
func TestFileConditionsRejected(t *testing.T) {
	dir := t.TempDir()
	created := one(t, `{"type":"file_created","path":"DONE"}`)
	contains := one(t, `{"type":"file_contains","path":"DONE","content":"yes"}`)
	blocked := one(t, `{"type":"not","condition":{"type":"file_created","path":"BLOCKED"}}`)
	both := one(t, `{"type":"all","conditions":[{"type":"file_created","path":"A"},{"type":"file_created","path":"B"}]}`)
	failure := one(t, `{"type":"file_created","path":"ERROR"}`)
	s := &stopSet{ordered: []groupedCondition{{groupSuccess, created}, {groupSuccess, contains}, {groupSuccess, blocked}, {groupFailure, failure}}}
	if warns := s.takeFileStarts(dir); len(warns) != 0 {
		t.Fatalf("warnings for a file that is not there: %q", warns)
	}
	st := &condState{Dir: dir}
	write := func(name, text string, mod time.Time) {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(path, mod, mod)
	}
	met := func(n int, c *condition, want bool, reason string) {
		t.Helper()
		r := c.evaluate(st)
		if r.Met != want || reason != "" && r.Reason != reason {
			t.Fatalf("after iteration %d: %s met=%v (%s), want %v (%s)", n, c.Type, r.Met, r.Reason, want, reason)
		}
	}
	t0 := time.Now().Add(-time.Hour)
	write("DONE", "yes\n", t0)
	write("BLOCKED", "why\n", t0)
	write("A", "a\n", t0)
	write("ERROR", "e\n", t0)
	met(1, created, true, "DONE exists")
	met(1, contains, true, "")
	met(1, blocked, false, "")
	s.rejected(dir, 1)
	const unchanged = "DONE unchanged since its completion was refused at iteration 1: it counts when an iteration creates or changes it"
	met(2, created, false, unchanged)
	met(2, contains, false, "")
	met(2, blocked, false, "") // BLOCKED is still there
	met(2, failure, true, "")  // a failure condition is a state
	met(3, created, false, unchanged)
	write("DONE", "yes\n", t0.Add(time.Second)) // the same bytes, written again: a new claim
	met(4, created, true, "DONE exists")
	met(4, contains, true, "")
	os.Remove(filepath.Join(dir, "DONE"))
	met(5, created, false, "DONE does not exist")
	write("DONE", "yes\n", t0.Add(2*time.Second))
	met(6, created, true, "DONE exists")

	// An all whose files come from different iterations, no completion
	// refused between: met; once refused, not until one changes.
	os.Remove(filepath.Join(dir, "A"))
	s = &stopSet{ordered: []groupedCondition{{groupSuccess, both}}}
	s.takeFileStarts(dir)
	write("A", "a\n", t0)
	met(1, both, false, "")
	write("B", "b\n", t0) // A from iteration 1, B from 2
	met(2, both, true, "")
	s.rejected(dir, 2)
	met(3, both, false, "")
	write("A", "a\n", t0.Add(2*time.Second))
	met(4, both, false, "") // the claim again: every file of it
	write("B", "b\n", t0.Add(2*time.Second))
	met(4, both, true, "")
}
