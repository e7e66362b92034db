package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// noBlock runs fn and fails the test when it has not returned within a
// few seconds: an open that waits on a FIFO never returns.
func noBlock(t *testing.T, what string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatalf("%s blocked", what)
		return nil
	}
}

// TestDirOpenersRefuse puts a FIFO, a link to one, a device and a link
// leading out of the workspace where the tool opens a directory (tryout6
// #1): every directory opener refuses it at once, without opening it,
// naming what is there; a link to a directory inside is followed.
func TestDirOpenersRefuse(t *testing.T) {
	ws, outside := confinedWorkspace(t)
	fifo := filepath.Join(ws, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	kinds := map[string]string{ // a name in ws, and what is there
		"fifo":     "a named pipe",
		"tofifo":   "", // a link: refused, its target never opened
		"dev":      "", // a link to /dev/null, a device
		"out":      "", // a link out of the workspace
		"in":       "", // a link to real: followed
		"regular":  "a regular file",
		"tooutdev": "",
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(fifo, filepath.Join(ws, "tofifo")))
	must(os.Symlink("/dev/null", filepath.Join(ws, "dev")))
	must(os.Symlink(outside, filepath.Join(ws, "out")))
	must(os.Symlink("real", filepath.Join(ws, "in")))
	must(os.WriteFile(filepath.Join(ws, "regular"), nil, 0o600))
	must(os.Symlink("/dev/zero", filepath.Join(ws, "tooutdev")))
	top, err := openRootDir(ws)
	must(err)
	defer top.Close()
	for name, kind := range kinds {
		dir := filepath.Join(ws, name)
		ok := name == "in"
		err := noBlock(t, "openRootDir "+name, func() error {
			r, err := openRootDir(dir)
			if err == nil {
				r.Close()
			}
			return err
		})
		if wantOK := ok || name == "out"; (err == nil) != wantOK {
			t.Errorf("openRootDir(%s) = %v; want ok %v", name, err, wantOK)
		}
		err = noBlock(t, "openRootBelow "+name, func() error {
			r, err := openRootBelow(top, dir, name)
			if err == nil {
				r.Close()
			}
			return err
		})
		if (err == nil) != ok {
			t.Errorf("openRootBelow(%s) = %v; want ok %v", name, err, ok)
		}
		for call, write := range writerCalls {
			err := noBlock(t, call+" in "+name, func() error { return write(filepath.Join(dir, call)) })
			if (err == nil) != ok {
				t.Errorf("%s in %s = %v; want ok %v", call, name, err, ok)
			}
			if kind != "" && (err == nil || !strings.Contains(err.Error(), dir+" is not a directory ("+kind+")")) {
				t.Errorf("%s in %s = %v; want it naming %s as %s", call, name, err, dir, kind)
			}
		}
		err = noBlock(t, "makeDirAll in "+name, func() error { return makeDirAll(filepath.Join(dir, "sub"), 0o755) })
		if (err == nil) != ok {
			t.Errorf("makeDirAll in %s = %v; want ok %v", name, err, ok)
		}
		err = noBlock(t, "readDir "+name, func() error { _, err := readDir(dir); return err })
		if (err == nil) != (ok || name == "out") {
			t.Errorf("readDir(%s) = %v", name, err)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written outside the workspace: %v", entries)
	}
}

// TestWalkDirSwapped walks entries listed as directories that are now a
// FIFO, a link to a directory and a device: each is an error given to fn,
// at once, and nothing below it is walked; a tree is walked as
// filepath.WalkDir walks it.
func TestWalkDirSwapped(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, link, "/dev/null"} {
		var got error
		err := noBlock(t, "walkDir "+p, func() error {
			return walkDirAt(p, fs.FileInfoToDirEntry(dirInfo{}), func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					got = err
				} else if path != p {
					t.Errorf("walked %s below %s", path, p)
				}
				return nil
			})
		})
		if err != nil || got == nil {
			t.Errorf("walkDir of %s listed as a directory: %v, fn given %v; want fn given the open's error", p, err, got)
		}
	}

	tree := t.TempDir()
	for _, p := range []string{"a/b", "a/c", "d"} {
		if err := os.MkdirAll(filepath.Join(tree, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(tree, "a", "f"), nil, 0o600)
	walk := func(w func(string, fs.WalkDirFunc) error) string {
		var b strings.Builder
		w(tree, func(p string, d fs.DirEntry, err error) error {
			rel, _ := filepath.Rel(tree, p)
			b.WriteString(rel + " ")
			if rel == "a/b" {
				return fs.SkipDir
			}
			return err
		})
		return b.String()
	}
	if got, want := walk(walkDir), walk(filepath.WalkDir); got != want {
		t.Errorf("walkDir walked %q; filepath.WalkDir %q", got, want)
	}
	if err := walkDir(filepath.Join(tree, "missing"), func(string, fs.DirEntry, error) error { return fs.SkipAll }); err != nil {
		t.Errorf("walkDir of a missing tree, fn skipping all = %v", err)
	}
	if err := walkDir(tree, func(string, fs.DirEntry, error) error { return errors.New("stop") }); err == nil || err.Error() != "stop" {
		t.Errorf("walkDir = %v; want fn's error", err)
	}
}

// dirInfo describes a directory.
type dirInfo struct{}

func (dirInfo) Name() string       { return "d" }
func (dirInfo) Size() int64        { return 0 }
func (dirInfo) Mode() fs.FileMode  { return fs.ModeDir | 0o755 }
func (dirInfo) ModTime() time.Time { return time.Time{} }
func (dirInfo) IsDir() bool        { return true }
func (dirInfo) Sys() any           { return nil }

// TestWriteFileReplacing puts a link, a FIFO, a link to a device and a
// directory where a file of the tool's own goes: the first ones are
// replaced by the new file (the link's target untouched) and named; a
// directory is refused and left.
func TestWriteFileReplacing(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("user\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "own.json")
	for kind, make := range map[string]func() error{
		"a symbolic link to " + victim: func() error { return os.Symlink(victim, path) },
		"a named pipe":                 func() error { return syscall.Mkfifo(path, 0o600) },
		"a symbolic link to /dev/null": func() error { return os.Symlink("/dev/null", path) },
		"":                             func() error { return nil }, // nothing there
	} {
		os.Remove(path)
		if err := make(); err != nil {
			t.Fatal(err)
		}
		var replaced, err error
		noBlock(t, "writeFileReplacing over "+kind, func() error {
			replaced, err = writeFileReplacing(path, []byte("new\n"), 0o600, true)
			return nil
		})
		if err != nil {
			t.Errorf("over %q: %v", kind, err)
		}
		if kind == "" && replaced != nil || kind != "" && (replaced == nil || !strings.Contains(replaced.Error(), "not a regular file ("+kind+")")) {
			t.Errorf("over %q: replaced = %v", kind, replaced)
		}
		if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("over %q: %v, %v; want a regular file", kind, fi, err)
		}
		if data, _ := os.ReadFile(path); string(data) != "new\n" {
			t.Errorf("over %q: %q", kind, data)
		}
	}
	if data, _ := os.ReadFile(victim); string(data) != "user\n" {
		t.Errorf("the link's target was written: %q", data)
	}
	os.Remove(path)
	os.Mkdir(path, 0o700)
	if replaced, err := writeFileReplacing(path, []byte("new\n"), 0o600, true); err == nil || replaced != nil || !strings.Contains(err.Error(), "not a regular file (a directory)") {
		t.Errorf("over a directory: %v, %v; want it refused", replaced, err)
	}
	if fi, err := os.Lstat(path); err != nil || !fi.IsDir() {
		t.Errorf("the directory: %v, %v", fi, err)
	}
}
