package main

import (
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestGitLockedSerialises: the tool's git commands that take git's locks
// run one at a time per repository, across open files of the lock (as
// across processes): never two inside at once.
func TestGitLockedSerialises(t *testing.T) {
	g := &gitRepo{top: t.TempDir()}
	g.common = filepath.Join(g.top, ".git")
	if err := makeDirAll(g.common, 0o755); err != nil {
		t.Fatal(err)
	}
	var inside, most atomic.Int32
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := g.gitLocked(func() error {
				n := inside.Add(1)
				for {
					m := most.Load()
					if n <= m || most.CompareAndSwap(m, n) {
						break
					}
				}
				time.Sleep(20 * time.Millisecond) // a git command's work
				inside.Add(-1)
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if most.Load() != 1 {
		t.Fatalf("%d inside the lock at once", most.Load())
	}
}

// TestCompareURL: a GitHub remote's pull request page; none for another.
func TestCompareURL(t *testing.T) {
	for remote, want := range map[string]string{
		"git@github.com:acme/widgets.git":      "https://github.com/acme/widgets/compare/main...claude-iterate/x?expand=1",
		"https://github.com/acme/widgets":      "https://github.com/acme/widgets/compare/main...claude-iterate/x?expand=1",
		"https://github.com/acme/widgets.git/": "https://github.com/acme/widgets/compare/main...claude-iterate/x?expand=1",
		"https://gitlab.com/acme/widgets.git":  "",
		"/srv/git/widgets.git":                 "",
	} {
		if got := compareURL(remote, "main", "claude-iterate/x"); got != want {
			t.Errorf("compareURL(%q) = %q, want %q", remote, got, want)
		}
	}
}
