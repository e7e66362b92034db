package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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

// TestDropKilledLock: the index.lock a git killed at its time bound left
// is removed; never one when git failed otherwise (another git holds it),
// nor one older than the command, nor anything but a regular file.
func TestDropKilledLock(t *testing.T) {
	stall := &gitStallError{what: "git add"}
	started := time.Now()
	for _, c := range []struct {
		name    string
		gitDir  bool
		err     error
		age     time.Duration
		fifo    bool
		removed bool
	}{
		{"killed at its bound", true, stall, 0, false, true},
		{"wrapped", true, fmt.Errorf("commit: %w", stall), 0, false, true},
		{"failed otherwise", true, errors.New("exit status 128"), 0, false, false},
		{"older than the command", true, stall, -time.Minute, false, false},
		{"not a regular file", true, stall, 0, true, false},
		{"no git directory", false, stall, 0, false, false},
	} {
		dir := t.TempDir()
		lock := filepath.Join(dir, "index.lock")
		if c.fifo {
			if err := syscall.Mkfifo(lock, 0o644); err != nil {
				t.Skip("no mkfifo:", err)
			}
		} else if err := os.WriteFile(lock, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		mtime := started.Add(c.age)
		if err := os.Chtimes(lock, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		gitDir := dir
		if !c.gitDir {
			gitDir = ""
		}
		dropKilledLock(gitDir, c.err, started)
		_, err := os.Lstat(lock)
		if gone := errors.Is(err, os.ErrNotExist); gone != c.removed {
			t.Errorf("%s: removed = %v, want %v", c.name, gone, c.removed)
		}
	}
}
