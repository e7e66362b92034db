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
// path, through a replacement by rename and through its creation, and two
// holders never hold it at once.
func TestLockForUpdateFollowsTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")

	// Missing: the directory stands for the file, and stops doing so once
	// the file is made.
	unlock, err := lockForUpdate(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := openLockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(d, syscall.LOCK_EX|syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Errorf("the directory of a missing file is not locked: %v", err)
	}
	if lockStillHolds(d, path, true) != true {
		t.Error("a missing file's directory lock does not hold")
	}
	os.WriteFile(path, []byte("{}\n"), 0o644)
	if lockStillHolds(d, path, true) {
		t.Error("the directory lock still holds once the file exists")
	}
	syscall.Close(d)
	unlock()

	// Present: the file itself, and no more once it is replaced.
	unlock, err = lockForUpdate(path)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := openLockTarget(path, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Errorf("the file is not locked: %v", err)
	}
	if !lockStillHolds(fd, path, false) {
		t.Error("the lock of the file in place does not hold")
	}
	os.WriteFile(path+".new", []byte("{}\n"), 0o644)
	os.Rename(path+".new", path)
	if lockStillHolds(fd, path, false) {
		t.Error("the lock of a replaced file still holds")
	}
	syscall.Close(fd)

	// A waiter gets the file now in place once the holder lets go.
	got := make(chan func(), 1)
	go func() {
		u, err := lockForUpdate(path)
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
		_, err := lockForUpdate(path)
		if !errors.Is(err, errNotRegular) {
			t.Errorf("%s: got %v, want not a regular file", path, err)
			continue
		}
		if got := err.Error(); !strings.Contains(got, want) {
			t.Errorf("%s: %q does not say %q", path, got, want)
		}
	}
	unlock, err := lockForUpdate(filepath.Join(dir, "none", "config.json"))
	if err != nil {
		t.Errorf("a missing directory: %v", err)
	} else {
		unlock()
	}
}

// TestLockMaking: a missing file is made empty (its directory is never
// locked for it: a run holds a state directory locked), and locked.
func TestLockMaking(t *testing.T) {
	dir := t.TempDir()
	d, err := openLockDir(dir)
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
