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

// TestHeadSHA: the commit after a commit is read from the loose ref HEAD
// names, or HEAD itself when detached; anything else is left to git.
func TestHeadSHA(t *testing.T) {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	common := t.TempDir()
	wt := filepath.Join(common, "worktrees", "x")
	write := func(path, text string) {
		if err := makeDirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeFileAtomicSync(path, []byte(text), 0o644, false); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(wt, "HEAD"), "ref: refs/heads/claude-iterate/x\n")
	if got := headSHA(wt, common); got != "" {
		t.Errorf("packed ref: %q, want \"\" (git is asked)", got)
	}
	write(filepath.Join(common, "refs", "heads", "claude-iterate", "x"), sha+"\n")
	if got := headSHA(wt, common); got != sha {
		t.Errorf("loose ref: %q, want %q", got, sha)
	}
	write(filepath.Join(wt, "HEAD"), sha+"\n")
	if got := headSHA(wt, common); got != sha {
		t.Errorf("detached: %q, want %q", got, sha)
	}
	for _, head := range []string{"ref: refs/heads/../../etc\n", "ref: refs/heads/.invalid\n", "not a sha\n"} {
		write(filepath.Join(wt, "HEAD"), head)
		if got := headSHA(wt, common); got != "" {
			t.Errorf("HEAD %q: %q, want \"\"", head, got)
		}
	}
}
