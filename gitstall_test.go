package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFindStallFile: the walk finds a .gitignore git would wait on deep in
// the tree, never one inside .git, nor a regular one.
func TestFindStallFile(t *testing.T) {
	top := t.TempDir()
	for _, d := range []string{".git/x", "a/b", "c"} {
		if err := os.MkdirAll(filepath.Join(top, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(top, "c", ".gitignore"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(top, ".git", "x", ".gitignore"), 0o644); err != nil {
		t.Skip("no mkfifo:", err)
	}
	// A nested checkout (another workspace's worktree: .git is a file),
	// whose files git status does not read; and a worktree at top, whose
	// own .git is a file, is walked.
	nested := filepath.Join(top, "n", "wt")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(nested, ".git"), []byte("gitdir: /elsewhere\n"), 0o644)
	if err := syscall.Mkfifo(filepath.Join(nested, ".gitignore"), 0o644); err != nil {
		t.Fatal(err)
	}
	if p, why := findStallFile(top); p != "" {
		t.Fatalf("found %q (%s), want none: .git is not walked, nor a nested checkout, and a regular file is fine", p, why)
	}
	if p, _ := findStallFile(nested); p != filepath.Join(nested, ".gitignore") {
		t.Fatalf("findStallFile(a worktree) = %q, want its .gitignore", p)
	}
	want := filepath.Join(top, "a", "b", ".gitignore")
	if err := syscall.Mkfifo(want, 0o644); err != nil {
		t.Fatal(err)
	}
	p, why := findStallFile(top)
	if p != want || !strings.Contains(why, "is a named pipe, not a regular file") || !strings.Contains(why, "rm "+want) {
		t.Fatalf("findStallFile = %q, %q; want %q named with its fix", p, why, want)
	}
	err := gitStalled("git status", filepath.Join(top, "a"))
	if !strings.Contains(err.Error(), "git status did not answer within ") || !strings.Contains(err.Error(), want) {
		t.Fatalf("gitStalled = %v", err)
	}
}

// TestGitVerb: the command is named past git's -c options.
func TestGitVerb(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "-z"}, "status"},
		{[]string{"-c", "user.name=x", "-c", "user.email=y", "commit", "-m", "m"}, "commit"},
		{[]string{"-C", "dir", "add"}, "add"},
		{[]string{"--literal-pathspecs", "add", "-A"}, "add"},
		{nil, ""},
	} {
		if got := gitVerb(c.args); got != c.want {
			t.Errorf("gitVerb(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}

// TestScanFailedRetry: a git status that timed out with no file found is
// tried once more, even right after a pause in which git did not run (a
// pause is not a failure); a second time-out in a row ends git for the
// run, and a scan that answered starts the count again.
func TestScanFailedRetry(t *testing.T) {
	var warned []string
	g := &gitTree{top: "/x", warn: func(msg string) { warned = append(warned, msg) }}
	timeout := &gitStallError{what: "git status"}
	g.paused("a file git waits on")
	g.paused("a file git waits on")
	g.scanFailed(timeout)
	if g.failed {
		t.Fatal("the first time-out after a pause ended git for the run")
	}
	g.scanned()
	g.scanFailed(timeout)
	if g.failed {
		t.Fatal("a time-out after a scan that answered ended git for the run")
	}
	g.scanFailed(timeout)
	if !g.failed {
		t.Fatal("a second time-out in a row did not end git for the run")
	}
	if last := warned[len(warned)-1]; !strings.Contains(last, "for the rest of this run") {
		t.Errorf("the last warning is %q", last)
	}
}
