package main

import (
	"slices"
	"testing"
	"time"
)

// TestOwnPaths pins whose each dirty file is on the user's checkout: a
// file dirty at the iteration's start is the user's, unless it is as the
// agent left it after a failed commit of this run; the agent's leftovers
// are taken whether or not the iteration touched them again, and dropped
// once they are clean.
func TestOwnPaths(t *testing.T) {
	st := func(n int) fileStamp { return fileStamp{exists: true, mod: time.Unix(int64(n), 0), size: int64(n)} }
	snap := func(m map[string]fileStamp) *gitSnapshot { return &gitSnapshot{dirty: m} }
	s := &runGitSetup{}

	// iteration 1: wip.txt was the user's before; new.txt is the agent's
	before := snap(map[string]fileStamp{"wip.txt": st(1)})
	after := snap(map[string]fileStamp{"wip.txt": st(2), "new.txt": st(3)})
	take, out := s.ownPaths(before, after, []string{"new.txt", "wip.txt"})
	if !slices.Equal(take, []string{"new.txt"}) || !slices.Equal(out, []string{"wip.txt"}) {
		t.Fatalf("iteration 1: take %q, left out %q", take, out)
	}
	s.committed(after, take, false) // the hook refused it

	// iteration 2 starts with new.txt as the agent left it, and a file
	// the agent changed and someone then changed again (edited.txt)
	s.left.files["edited.txt"] = st(5)
	before = snap(map[string]fileStamp{"wip.txt": st(2), "new.txt": st(3), "edited.txt": st(6)})
	after = snap(map[string]fileStamp{"wip.txt": st(2), "new.txt": st(3), "edited.txt": st(7), "more.txt": st(4)})
	take, out = s.ownPaths(before, after, []string{"edited.txt", "more.txt"})
	if !slices.Equal(take, []string{"more.txt", "new.txt"}) || !slices.Equal(out, []string{"edited.txt"}) {
		t.Fatalf("iteration 2: take %q, left out %q", take, out)
	}
	s.committed(after, take, true)
	if _, ok := s.left.files["new.txt"]; ok {
		t.Fatal("a committed leftover is still the agent's leftover")
	}

	// a leftover the agent undid (clean again) is forgotten
	s.left.files["gone.txt"] = st(8)
	edited := map[string]fileStamp{"edited.txt": st(7)}
	take, out = s.ownPaths(snap(edited), snap(edited), nil)
	if len(take) != 0 || !slices.Equal(out, []string{"edited.txt"}) || len(s.left.files) != 1 {
		t.Fatalf("take %q, left out %q, leftovers %v", take, out, s.left.files)
	}
}

// TestChangedUnknown: what an iteration changed is unknown (nil, no
// list) when either snapshot is, or when the project is not in a git
// repository (a nil tree): never a panic on the missing one.
func TestChangedUnknown(t *testing.T) {
	dir := t.TempDir()
	dirty := &gitSnapshot{dirty: map[string]fileStamp{"a.go": {exists: true, size: 1}}}
	clean := &gitSnapshot{dirty: map[string]fileStamp{}}
	var none *gitTree
	if got := none.changed(dirty, clean); got != nil {
		t.Errorf("no repository: changed = %q, want nil", got)
	}
	g := &gitTree{top: dir, root: dir}
	if got := g.changed(nil, dirty); got != nil {
		t.Errorf("no snapshot before: changed = %q, want nil", got)
	}
	if got := g.changed(dirty, nil); got != nil {
		t.Errorf("no snapshot after: changed = %q, want nil", got)
	}
	if got := g.changed(dirty, clean); !slices.Equal(got, []string{"a.go"}) {
		t.Errorf("changed = %q, want [a.go]", got)
	}
}
