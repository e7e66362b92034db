package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lockFileRecord reads w's .lock as a run would, and checks that the file
// is JSON padded with spaces and ended by a newline.
func lockFileRecord(t *testing.T, w *workspace) (runRecord, []byte) {
	t.Helper()
	data, err := os.ReadFile(w.lockPath())
	if err != nil {
		t.Fatal(err)
	}
	var rec runRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatalf(".lock is not a record: %v\n%q", err, data)
	}
	if !bytes.HasSuffix(data, []byte("\n")) {
		t.Fatalf(".lock does not end with a newline: %q", data)
	}
	return rec, data
}

// TestLockWrittenOverItself: a run writes its .lock over the last record,
// padded to its length, never leaving a longer record's tail: not the
// previous run's, not one another process wrote, not its own before a
// child was dropped.
func TestLockWrittenOverItself(t *testing.T) {
	dir := t.TempDir()
	w := &workspace{Name: "w", Dir: dir, StateDir: dir}
	// The previous run left a long record.
	long := `{"pid":1,"runId":"` + strings.Repeat("x", 500) + `","ended":true}` + "\n"
	if err := os.WriteFile(w.lockPath(), []byte(long), 0o600); err != nil {
		t.Fatal(err)
	}
	l, prev, err := acquireRunLock(w)
	if err != nil {
		t.Fatal(err)
	}
	defer l.release()
	if prev.PID != 1 {
		t.Fatalf("previous record: %+v", prev)
	}
	rec, _ := lockFileRecord(t, w)
	if rec.PID != os.Getpid() || rec.RunID != l.record.RunID {
		t.Fatalf("after acquiring: %+v", rec)
	}

	self, parent := os.Getpid(), os.Getppid()
	l.addChild(&child{pid: self})
	l.addChild(&child{pid: parent})
	rec, two := lockFileRecord(t, w)
	if len(rec.Children) != 2 {
		t.Fatalf("two children added: %+v", rec.Children)
	}
	// Without a start tick from its starter, a child's start time is read
	// from the system.
	if start, ok := processStart(self); !ok || rec.Children[0].Start != start {
		t.Fatalf("recorded start %d, the system says %d", rec.Children[0].Start, start)
	}
	l.dropChild(parent)
	l.mu.Lock()
	l.write()
	l.mu.Unlock()
	rec, one := lockFileRecord(t, w)
	if len(rec.Children) != 1 || rec.Children[0].PID != self {
		t.Fatalf("one child dropped: %+v", rec.Children)
	}
	if len(one) != len(two) || !bytes.HasSuffix(bytes.TrimRight(one, "\n"), []byte(" ")) {
		t.Fatalf("the shorter record is not padded over the longer one:\n%q\n%q", two, one)
	}

	// Another process overwrites it with something longer: the look-around
	// puts the record back, whole.
	f, err := os.OpenFile(w.lockPath(), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte(long), 0)
	f.Close()
	l.lookAround()
	rec, data := lockFileRecord(t, w)
	if rec.PID != self || len(data) >= len(long) {
		t.Fatalf("the overwritten .lock is not put back whole: %q", data)
	}
	if _, err := os.Stat(filepath.Join(dir, lockFile+".new")); err == nil {
		t.Fatal("a .lock.new was left behind")
	}
}
