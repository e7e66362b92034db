package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestLockForUpdateFollowsTheFile: the lock guards the file now at the
// path, through a replacement by rename; a missing file is not locked,
// and is made only where none was made meanwhile; two holders never hold
// it at once.
func TestLockForUpdateFollowsTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")

	// Missing: nothing locked; the maker's file never goes over another.
	unlock, missing, err := lockForUpdate(path)
	if err != nil || !missing {
		t.Fatalf("a missing file: missing %v, %v", missing, err)
	}
	unlock()
	if err := createFileAtomic(path, []byte("{\"a\":1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := createFileAtomic(path, []byte("{\"b\":2}\n"), 0o644); !errors.Is(err, os.ErrExist) {
		t.Errorf("a second make: %v; want it to exist", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "{\"a\":1}\n" {
		t.Errorf("the first file was replaced: %q", data)
	}
	if names, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(names) > 0 {
		t.Errorf("temporary files left: %v", names)
	}

	// Present: the file itself, and no more once it is replaced.
	unlock, missing, err = lockForUpdate(path)
	if err != nil || missing {
		t.Fatalf("a file: missing %v, %v", missing, err)
	}
	fd, err := openLockTarget(path, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Errorf("the file is not locked: %v", err)
	}
	if !lockStillHolds(fd, path) {
		t.Error("the lock of the file in place does not hold")
	}
	os.WriteFile(path+".new", []byte("{}\n"), 0o644)
	os.Rename(path+".new", path)
	if lockStillHolds(fd, path) {
		t.Error("the lock of a replaced file still holds")
	}
	syscall.Close(fd)

	// A waiter gets the file now in place once the holder lets go.
	got := make(chan func(), 1)
	go func() {
		u, _, err := lockForUpdate(path)
		if err != nil {
			t.Error(err)
			u = func() {}
		}
		got <- u
	}()
	unlock()
	u := <-got
	fd, err = openLockTarget(path, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Errorf("the waiter does not hold the file in place: %v", err)
	}
	syscall.Close(fd)
	u()
}

// TestLockForUpdateRefuses: a link, a FIFO or a directory at the path is
// refused at once, named; a missing directory locks nothing.
func TestLockForUpdateRefuses(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("x"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(target, link)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	for path, want := range map[string]string{link: "a symbolic link", fifo: "a named pipe", sub: "a directory"} {
		_, _, err := lockForUpdate(path)
		if !errors.Is(err, errNotRegular) {
			t.Errorf("%s: got %v, want not a regular file", path, err)
			continue
		}
		if got := err.Error(); !strings.Contains(got, want) {
			t.Errorf("%s: %q does not say %q", path, got, want)
		}
	}
	unlock, missing, err := lockForUpdate(filepath.Join(dir, "none", "config.json"))
	if err != nil || !missing {
		t.Errorf("a missing directory: missing %v, %v", missing, err)
	} else {
		unlock()
	}
}

// TestLockMaking: a missing file is made empty and locked, without its
// directory, which a run holds locked.
func TestLockMaking(t *testing.T) {
	dir := t.TempDir()
	d, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(d)
	if err := syscall.Flock(d, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err) // as a run holds its state directory
	}
	path := filepath.Join(dir, "ANSWERS.md")
	unlock, err := lockMaking(path, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	fi, err := os.Lstat(path)
	if err != nil || fi.Size() != 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("made %v, %v; want an empty 0600 file", fi, err)
	}
	fd, err := openLockTarget(path, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Errorf("the made file is not locked: %v", err)
	}
}
