package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestExcludeHazard pins which exclude files stop the git work: a named
// pipe or a device (through a link too) and a file over the cap, each
// named; a directory, a small file or none are not; a linked worktree's
// .git file leads to the common directory's info/exclude.
func TestExcludeHazard(t *testing.T) {
	cfg, _ := filepath.EvalSymlinks(t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", cfg)
	top, _ := filepath.EvalSymlinks(t.TempDir()) // the names come out resolved
	common := filepath.Join(top, ".git")
	sub := filepath.Join(top, "a", "b")
	for _, d := range []string{filepath.Join(common, "info"), sub} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exclude := filepath.Join(common, "info", "exclude")
	if err := os.WriteFile(exclude, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := excludeHazard(sub); err != nil {
		t.Fatalf("a clean tree: %v", err)
	}
	if err := os.Mkdir(filepath.Join(top, "a", ".gitignore"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := excludeHazard(sub); err != nil {
		t.Fatalf("a directory .gitignore: %v", err)
	}
	want := func(path, kind string) {
		t.Helper()
		err := excludeHazard(sub)
		if err == nil || !strings.HasPrefix(err.Error(), path+" is "+kind) {
			t.Fatalf("want %s named as %s, got %v", path, kind, err)
		}
		os.Remove(path)
	}
	// a .gitignore on the way up that links to a device
	link := filepath.Join(sub, ".gitignore")
	if err := os.Symlink("/dev/null", link); err != nil {
		t.Fatal(err)
	}
	want(link, "a device")
	// the global excludes file as a named pipe
	global := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "git", "ignore")
	os.MkdirAll(filepath.Dir(global), 0o755)
	if err := syscall.Mkfifo(global, 0o644); err != nil {
		t.Fatal(err)
	}
	want(global, "a named pipe")
	// info/exclude over the cap
	if err := os.Truncate(exclude, excludeFileCap+1); err != nil {
		t.Fatal(err)
	}
	want(exclude, "32.0 MiB")

	// a linked worktree: its .git file names its git directory, whose
	// commondir is the repository's
	wt, _ := filepath.EvalSymlinks(t.TempDir())
	wtGit := filepath.Join(common, "worktrees", "w")
	os.MkdirAll(wtGit, 0o755)
	os.WriteFile(filepath.Join(wtGit, "commondir"), []byte("../..\n"), 0o644)
	os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+wtGit+"\n"), 0o644)
	if got := gitCommonDirOf(filepath.Join(wt, ".git")); got != common {
		t.Fatalf("common dir of the worktree: %q, want %q", got, common)
	}
	if err := syscall.Mkfifo(exclude, 0o644); err != nil {
		t.Fatal(err)
	}
	err := excludeHazard(wt)
	if err == nil || !strings.HasPrefix(err.Error(), exclude+" is a named pipe") {
		t.Fatalf("the worktree's info/exclude: %v", err)
	}
}
