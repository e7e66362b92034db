package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLogBudget: past its budget the log drops transcripts, with one note
// and one warning, and still takes the run's sections; its reserve file is
// kept until the run's end (the agent would take its room), and freed at
// close.
func TestLogBudget(t *testing.T) {
	l, dir, warnings := openTestLog(t)
	reserve := filepath.Join(dir, ".reserve")
	if fi, err := os.Stat(reserve); err != nil || fi.Size() != logReserve {
		t.Fatalf("reserve file: %v, %v; want %d bytes", fi, err, logReserve)
	}
	l.budget = 100
	l.Write([]byte(strings.Repeat("a", 150) + "\n"))
	l.Flush() // looks at the budget
	l.Write([]byte("dropped transcript\n"))
	if _, err := os.Stat(reserve); err != nil {
		t.Errorf("reserve file freed before the run's end: %v", err)
	}
	l.section("RUN ENDED", "Reason: test")
	l.Close()
	checkLogText(t, l.path, []string{"[transcripts are no longer logged: the log passed 0 MiB]", "RUN ENDED"}, "dropped transcript")
	if len(*warnings) != 1 {
		t.Errorf("warnings = %q; want one", *warnings)
	}
	if _, err := os.Stat(reserve); !os.IsNotExist(err) {
		t.Errorf("reserve file still there after the log stopped: %v", err)
	}
}

// TestLogSpaceLooks: the log looks at its device's free space once per
// logSpaceCheck bytes written, and at a flush once per logSpaceInterval,
// not at every flush; a look that finds it low stops the transcripts.
func TestLogSpaceLooks(t *testing.T) {
	l, err := openRunLog(t.TempDir(), time.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	looks, free := 0, int64(1<<40)
	l.free = func(string) (int64, bool) { looks++; return free, true }
	l.Flush()
	if looks != 1 {
		t.Fatalf("first flush: %d looks, want 1", looks)
	}
	for range 100 {
		l.Write([]byte("a line\n"))
		l.Flush()
	}
	if looks != 1 {
		t.Fatalf("100 flushes within a second: %d looks, want 1", looks)
	}
	l.Write(make([]byte, logSpaceCheck-int(l.written)-1))
	l.Write([]byte("x")) // now at the next look's mark
	if looks != 1 {
		t.Fatalf("short of %d bytes: %d looks, want 1", logSpaceCheck, looks)
	}
	l.Write([]byte("\n"))
	if looks != 2 {
		t.Fatalf("after %d bytes: %d looks, want 2", logSpaceCheck, looks)
	}
	free = 0
	l.lock()
	l.spaceChecked = l.spaceChecked.Add(-logSpaceInterval)
	l.unlock()
	l.Flush()
	if looks != 3 || !l.full {
		t.Fatalf("a flush a second later: %d looks, full %v; want 3, true", looks, l.full)
	}
}

// checkLogText fails unless the log at path holds each of want, and not
// dropped: a transcript written when transcripts were no longer logged.
func checkLogText(t *testing.T, path string, want []string, dropped string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := string(data)
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("log lacks %q:\n%s", w, got)
		}
	}
	if strings.Contains(got, dropped) {
		t.Errorf("log holds %q, written when transcripts were no longer logged:\n%s", dropped, got)
	}
}

// openTestLog opens a run log in a new directory, dir; the warnings it
// gives are kept in *warnings.
func openTestLog(t *testing.T) (l *runLog, dir string, warnings *[]string) {
	t.Helper()
	dir, warnings = t.TempDir(), new([]string)
	l, err := openRunLog(dir, time.Now(), func(err error) { *warnings = append(*warnings, err.Error()) })
	if err != nil {
		t.Fatal(err)
	}
	return l, dir, warnings
}

// TestLogHeldUp: a holder of the log's lock stuck (a write that does not
// return) holds up no other writer past logLockWait, and then none at all:
// the run's supervisor writes the log between its answers to signals
// (tryout6 #1). One warning; once the holder lets go, the log goes on and
// says that some of it was lost.
func TestLogHeldUp(t *testing.T) {
	l, _, warnings := openTestLog(t)
	l.printf("before")
	if !l.lock() { // the stuck holder
		t.Fatal("lock of a free log failed")
	}
	start := time.Now()
	l.printf("lost 1")
	if d := time.Since(start); d < logLockWait || d > logLockWait+3*time.Second {
		t.Errorf("a write behind a stuck holder took %s; want about %s", d, logLockWait)
	}
	start = time.Now()
	l.printf("lost 1, again")
	l.Flush()
	if d := time.Since(start); d > time.Second {
		t.Errorf("writes after the first timed out took %s; want no wait", d)
	}
	if len(*warnings) != 1 || !strings.Contains((*warnings)[0], "a write does not return") {
		t.Errorf("warnings = %q; want one, of the held-up log", *warnings)
	}
	l.unlock()
	l.printf("after")
	l.Close()
	checkLogText(t, l.path, []string{"before", "[some of this log was lost: a write to it did not return for a while]\nafter"}, "lost 1")
	if len(*warnings) != 1 {
		t.Errorf("warnings = %q; want one", *warnings)
	}
}

// TestLogReserveReplaced: a file the agent put in the place of the
// log's reserve file is not removed at the log's close, even when it got
// the reserve's freed inode number (sameWritten).
func TestLogReserveReplaced(t *testing.T) {
	l, dir, _ := openTestLog(t)
	reserve := filepath.Join(dir, ".reserve")
	if err := os.Remove(reserve); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(reserve, []byte("the agent's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if data, err := os.ReadFile(reserve); err != nil || string(data) != "the agent's\n" {
		t.Errorf("the agent's file at the reserve's path: %q, %v; want it left", data, err)
	}
}
