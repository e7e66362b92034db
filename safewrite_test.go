package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// writerCalls are the writer's ways to write a file, each as a call that
// writes path.
var writerCalls = map[string]func(path string) error{
	"writeFileAtomic": func(path string) error { return writeFileAtomic(path, []byte("new\n"), 0o600) },
	"createFile": func(path string) error {
		f, err := createFile(path, 0o600)
		if err == nil {
			f.Close()
		}
		return err
	},
	"openFile": func(path string) error {
		f, err := openFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err == nil {
			f.Close()
		}
		return err
	},
	"createFileAtomic": func(path string) error { return createFileAtomic(path, []byte("new\n"), 0o600) },
}

// TestWriterRefuses puts a link, a FIFO and a directory where each of the
// writer's calls writes: every one is refused, naming what is there, and
// the link's target is left as it was.
func TestWriterRefuses(t *testing.T) {
	for name, write := range writerCalls {
		for _, kind := range []string{"link", "fifo", "dir"} {
			dir := t.TempDir()
			victim := filepath.Join(dir, "victim")
			if err := os.WriteFile(victim, []byte("keep\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "file")
			var want string
			switch kind {
			case "link":
				os.Symlink(victim, path)
				want = "a symbolic link"
			case "fifo":
				syscall.Mkfifo(path, 0o600)
				want = "a named pipe"
			case "dir":
				os.Mkdir(path, 0o755)
				want = "a directory"
			}
			err := write(path)
			switch {
			case name == "openEventsFile" && kind == "fifo":
				if !errors.Is(err, syscall.ENXIO) { // nobody reads it: openEvents waits
					t.Errorf("%s on a FIFO = %v; want ENXIO", name, err)
				}
			case name == "createFile":
				if !errors.Is(err, fs.ErrExist) {
					t.Errorf("%s on %s = %v; want it to exist", name, kind, err)
				}
			case err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path):
				t.Errorf("%s on %s = %v; want an error naming %s and %q", name, kind, err, path, want)
			}
			if data, _ := os.ReadFile(victim); string(data) != "keep\n" {
				t.Errorf("%s on %s changed the link's target: %q", name, kind, data)
			}
		}
	}
}

// TestWriterConfined writes below a workspace whose logs directory is a
// link: refused when it leads out of the workspace, followed when it stays
// inside.
func TestWriterConfined(t *testing.T) {
	ws, outside := confinedWorkspace(t)
	logs := filepath.Join(ws, "logs")
	if err := os.Symlink(outside, logs); err != nil {
		t.Fatal(err)
	}
	calls := map[string]func(path string) error{"makeDirAll": func(path string) error { return makeDirAll(filepath.Join(path, "sub"), 0o755) }}
	for name, write := range writerCalls {
		calls[name] = write
	}
	for name, write := range calls {
		err := write(filepath.Join(logs, "x"))
		if err == nil || !strings.Contains(err.Error(), logs+" is a symbolic link leading out of the workspace") {
			t.Errorf("%s through a link out = %v; want it refused, naming %s", name, err, logs)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written outside the workspace: %v", entries)
	}
	os.Remove(logs)
	if err := os.Symlink("real", logs); err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(filepath.Join(logs, "x"), []byte("in\n"), 0o600); err != nil {
		t.Errorf("writeFileAtomic through a link inside = %v; want it written", err)
	}
	if data, _ := os.ReadFile(filepath.Join(ws, "real", "x")); string(data) != "in\n" {
		t.Errorf("real/x = %q; want %q", data, "in\n")
	}
}

// TestWriterSweep: the first temporary file in a directory removes the
// writer's temporary files nobody holds, and only those.
func TestWriterSweep(t *testing.T) {
	dir := t.TempDir()
	write := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stale := write(".state.json.1" + tempSuffix)
	held := write(".state.json.2" + tempSuffix)
	other := write("state.json.3" + tempSuffix)
	f, err := os.Open(held)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := flock(f, syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if err := writeFileAtomic(filepath.Join(dir, "state.json"), []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{stale: false, held: true, other: true} {
		if got := fileExists(p); got != want {
			t.Errorf("%s exists = %v; want %v", filepath.Base(p), got, want)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("the directory holds %d files; want 3 (no temporary file of the write left)", len(entries))
	}
}

// TestTempFileKeptUntilNamed: a temporary file stays locked until it has
// its name, so that another process's sweep (here a goroutine's, through
// a descriptor of its own: flock's locks are per open file) never takes
// it for a stale one and removes it under the rename. Closed before the
// rename, some of these commits failed with "no such file or directory"
// (two runs starting at once lost a registry entry that way).
func TestTempFileKeptUntilNamed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "entry.json")
	for i := range 300 {
		tf, err := newTempFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tf.Write([]byte("{}\n")); err != nil {
			t.Fatal(err)
		}
		sweeper, err := openWriteDir(path)
		if err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		swept := make(chan struct{})
		go func() {
			defer close(swept)
			for {
				select {
				case <-stop:
					return
				default:
					sweeper.removeStale(tf.name)
				}
			}
		}()
		err = tf.commit(path)
		close(stop)
		<-swept
		sweeper.close()
		tf.discard()
		if err != nil {
			t.Fatalf("commit %d beside a sweep: %v", i, err)
		}
	}
}

// confinedWorkspace makes a workspace (with a directory "real" in it) and
// a directory outside it, and confines the tool's writes to the workspace.
func confinedWorkspace(t *testing.T) (ws, outside string) {
	t.Helper()
	base := t.TempDir()
	ws, outside = filepath.Join(base, "ws"), filepath.Join(base, "outside")
	for _, d := range []string{ws, outside, filepath.Join(ws, "real")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	confineWrites(ws)
	return ws, outside
}
