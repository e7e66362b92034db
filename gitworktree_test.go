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
	compare := func(remote string) string { return compareURL(remote, "main", "claude-iterate/x") }
	checkStrings(t, "compareURL", compare, map[string]string{
		"git@github.com:acme/widgets.git":      "https://github.com/acme/widgets/compare/main...claude-iterate/x?expand=1",
		"https://github.com/acme/widgets":      "https://github.com/acme/widgets/compare/main...claude-iterate/x?expand=1",
		"https://github.com/acme/widgets.git/": "https://github.com/acme/widgets/compare/main...claude-iterate/x?expand=1",
		"https://gitlab.com/acme/widgets.git":  "",
		"/srv/git/widgets.git":                 "",
	})
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

// TestStageWayOf: a commit stages itself (--include, --only) only the
// files the index holds as plain files; a new, unmerged, intent-to-add or
// submodule path gets a git add first, and a staged deletion neither.
func TestStageWayOf(t *testing.T) {
	const h = "0123456789abcdef0123456789abcdef01234567"
	for _, c := range []struct {
		entry string
		want  stageWay
	}{
		{"1 .M N... 100644 100644 100644 " + h + " " + h + " a b.txt", stageUpdate},
		{"1 M. N... 100644 100644 100644 " + h + " " + h + " a.txt", stageUpdate},
		{"1 .D N... 100644 100644 000000 " + h + " " + h + " a.txt", stageUpdate},
		{"1 A. N... 000000 100644 100644 " + h + " " + h + " a.txt", stageUpdate},
		{"1 .T N... 100644 100644 120000 " + h + " " + h + " a.txt", stageUpdate},
		{"1 D. N... 100644 000000 000000 " + h + " " + h + " a.txt", stageDone},
		{"1 .A N... 000000 000000 100644 " + h + " " + h + " a.txt", stageAdd},
		{"1 .M SC.. 160000 160000 160000 " + h + " " + h + " sub", stageAdd},
		{"u UU N... 100644 100644 100644 100644 " + h + " " + h + " " + h + " a.txt", stageAdd},
		{"2 R. N... 100644 100644 100644 " + h + " " + h + " R100 b.txt", stageAdd},
		{"? new.txt", stageAdd},
		{"1 M", stageAdd},
		{"1 MMM N... 100644 100644 100644 " + h + " " + h + " a.txt", stageAdd}, // not two letters
	} {
		if got := stageWayOf(c.entry); got != c.want {
			t.Errorf("%q: %d, want %d", c.entry, got, c.want)
		}
	}
}
