package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// tmpfsMountable reports whether a scenario may mount a small tmpfs in a
// mount namespace of its own (unshare --mount, as root): the scenarios of a
// full device need one, and are skipped, saying so, where it is refused.
var tmpfsMountable = sync.OnceValue(func() bool {
	dir, err := os.MkdirTemp("", "tmpfs-probe-")
	if err != nil {
		return false
	}
	defer os.Remove(dir)
	return exec.Command("unshare", "--mount", "mount", "-t", "tmpfs", "-o", "size=64k,nr_inodes=16", "tmpfs", dir).Run() == nil
})

// scriptCondition answers the scenarios' own conditions: [tmpfs].
func scriptCondition(cond string) (bool, error) {
	if cond == "tmpfs" {
		return tmpfsMountable(), nil
	}
	if cond == "browser" {
		return browserCondition() // browser_test.go
	}
	if cond == "ipv4addr" {
		// an IPv4 address a phone could reach, as serve --listen
		// 0.0.0.0 lists them: a container with no network has none
		// (serve-listen-all.txtar)
		return len(machineAddrs(true)) > 0, nil
	}
	return false, errUnknownCondition(cond)
}

// errUnknownCondition is a condition no scenario may use.
type errUnknownCondition string

func (e errUnknownCondition) Error() string { return "unknown condition " + string(e) }

// TestLogFullDevice: a log write that finds the device full (/dev/full)
// stops the transcripts with one warning and keeps the error, without
// disabling the log: its reserve stays until the run's end, and the
// sections after it are still tried.
func TestLogFullDevice(t *testing.T) {
	l, dir, warnings := openTestLog(t)
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	real, at := l.f, l.at
	l.f, l.at = full, newHeldPath(full.Name(), "/dev") // held at its path: not taken for replaced
	l.w.Reset(full)
	l.Write([]byte("a transcript\n"))
	l.Flush()
	l.section("ITERATION 2")
	l.Flush()
	if err := l.noSpaceErr(); !isNoSpace(err) {
		t.Fatalf("noSpaceErr = %v; want no space left", err)
	}
	if l.failed || !l.full {
		t.Errorf("failed %v, full %v; want the log on, transcripts off", l.failed, l.full)
	}
	if len(*warnings) != 1 || !strings.Contains((*warnings)[0], "no space left on device; transcripts are no longer logged") {
		t.Errorf("warnings = %q; want one, of the full device", *warnings)
	}
	reserve := filepath.Join(dir, ".reserve")
	if _, err := os.Stat(reserve); err != nil {
		t.Errorf("the reserve was freed before the run's end: %v", err)
	}
	// The device has room again (the reserve freed): the end is logged.
	l.f, l.at = real, at
	l.w.Reset(real)
	full.Close()
	l.releaseReserve()
	if _, err := os.Stat(reserve); !os.IsNotExist(err) {
		t.Errorf("the reserve is still there at the run's end: %v", err)
	}
	l.Write([]byte("a transcript past the full device\n"))
	l.section("RUN ENDED", "Reason: test")
	l.Close()
	checkLogText(t, l.path, []string{"[some of this log was lost: no space left on its device]\n", "RUN ENDED\nReason: test\n"}, "past the full device")
}

// TestHistoryFullDevice: records a full device refuses are kept, in order,
// and written at the close; a torn record is written again whole, on a
// line of its own.
func TestHistoryFullDevice(t *testing.T) {
	path := filepath.Join(t.TempDir(), historyFile)
	var warnings []string
	h, err := openHistory(path, func(msg string) { warnings = append(warnings, msg) })
	if err != nil {
		t.Fatal(err)
	}
	h.append(&iterationRecord{Run: "r", Iteration: 1})
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	real := h.f
	h.f, h.at = full, newHeldPath(full.Name(), "/dev") // held at its path: not taken for replaced
	h.append(&iterationRecord{Run: "r", Iteration: 2})
	h.append(&iterationRecord{Run: "r", Iteration: 3})
	if err := h.noSpaceErr(); !isNoSpace(err) {
		t.Fatalf("noSpaceErr = %v; want no space left", err)
	}
	if len(h.pending) != 2 || len(warnings) != 1 {
		t.Fatalf("%d pending, warnings %q; want 2 and one warning", len(h.pending), warnings)
	}
	full.Close()
	real.Write([]byte(`{"run":"r","itera`)) // a record the device cut short
	h.f, h.at, h.torn = real, newHeldPath(path, filepath.Dir(path)), true
	h.close()
	var got []int
	skipped, err := eachRecord(path, func(rec *iterationRecord) { got = append(got, rec.Iteration) })
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[1 2 3]" || skipped != 1 {
		t.Errorf("records %v, %d skipped; want [1 2 3], the torn one skipped", got, skipped)
	}
	if len(warnings) != 1 {
		t.Errorf("warnings = %q; want only the first", warnings)
	}
}

// TestDiskFullEnding: a full device ends the run with an error over an
// ending that would hide it, keeps a signal's ending, an error and a
// completion (which says it), and changes nothing while there is room.
func TestDiskFullEnding(t *testing.T) {
	root := t.TempDir()
	ws := &workspace{Name: "task", Dir: filepath.Join(root, "task"), StateDir: filepath.Join(root, "task")}
	os.Mkdir(ws.StateDir, 0o755)
	stopped := &ending{code: exitOK, status: statusStopped, reason: "stopped: max iterations reached (3/3)"}
	completed := &ending{code: exitOK, status: statusCompleted, reason: "completed: task marked complete"}
	failed := &ending{code: exitError, status: statusFailed, reason: "failed: boom"}
	signalled := &ending{code: 143, status: statusInterrupted, reason: "stopped: interrupted (SIGTERM)", signal: syscall.SIGTERM}

	room := &diskCheck{ws: ws, root: root}
	for _, end := range []*ending{nil, stopped, completed, failed, signalled} {
		if got := room.orFull(end); got != end {
			t.Errorf("with room, %v became %v", end, got)
		}
	}

	full := &diskCheck{ws: ws, root: root}
	full.saveFailed(newConsole(io.Discard, io.Discard, outputQuiet), &os.PathError{Op: "write", Path: filepath.Join(ws.StateDir, ".metadata.json.tmp-1"), Err: syscall.ENOSPC})
	const why = "writing task/.metadata.json: no space left on device"
	for _, c := range []struct {
		end        *ending
		code       int
		status     string
		reason     string
		sameEnding bool
	}{
		{nil, exitError, statusFailed, "error: the disk is full: " + why, false},
		{stopped, exitError, statusFailed, "error: the disk is full: " + why + " (the run was ending: stopped: max iterations reached (3/3))", false},
		{completed, exitOK, statusCompleted, "completed: task marked complete (and the disk is full: " + why + ")", false},
		{failed, exitError, statusFailed, "failed: boom", true},
		{signalled, 143, statusInterrupted, "stopped: interrupted (SIGTERM)", true},
	} {
		got := full.orFull(c.end)
		if got == nil || got.code != c.code || got.status != c.status || got.reason != c.reason || (got == c.end) != c.sameEnding {
			t.Errorf("full, %+v:\n got %+v\nwant code %d, status %s, reason %q", c.end, got, c.code, c.status, c.reason)
		}
	}
	if stopped.reason != "stopped: max iterations reached (3/3)" || completed.code != exitOK || completed.reason != "completed: task marked complete" {
		t.Error("orFull changed the ending it was given")
	}
	// A non-space failure is not a full device.
	other := &diskCheck{ws: ws, root: root}
	other.saveFailed(newConsole(io.Discard, io.Discard, outputQuiet), &os.PathError{Op: "write", Path: "x", Err: syscall.EACCES})
	if got := other.orFull(stopped); got != stopped {
		t.Errorf("EACCES taken for a full device: %+v", got)
	}
}

// TestHistoryPendingBound: a device that stays full keeps at most
// maxPending records waiting, the first ones.
func TestHistoryPendingBound(t *testing.T) {
	h, err := openHistory(filepath.Join(t.TempDir(), historyFile), func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	real := h.f
	h.f, h.at = full, newHeldPath(full.Name(), "/dev")
	for i := 1; i <= maxPending+2; i++ {
		h.append(&iterationRecord{Run: "r", Iteration: i})
	}
	if len(h.pending) != maxPending || !strings.Contains(string(h.pending[0]), `"iteration":1,`) {
		t.Errorf("%d records pending (the first %.40q); want %d, from the first", len(h.pending), h.pending[0], maxPending)
	}
	h.f = real
	full.Close()
	h.close()
}
