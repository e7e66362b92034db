package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// startSleeper starts a sleep with extra environment entries, ended when
// the test ends, and returns it as a record lists it.
func startSleeper(t *testing.T, env ...string) recordedProc {
	t.Helper()
	cmd := exec.Command("sleep", "3600")
	cmd.Env = append(os.Environ(), env...)
	if err := startOwn(cmd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		waitOwn(cmd)
	})
	start, ok := processStart(cmd.Process.Pid)
	if !ok {
		t.Fatalf("no start time for %d", cmd.Process.Pid)
	}
	return recordedProc{PID: cmd.Process.Pid, Start: start}
}

// pidsOf lists the pids of procs.
func pidsOf(procs []recordedProc) []int {
	var pids []int
	for _, p := range procs {
		pids = append(pids, p.PID)
	}
	return pids
}

// TestFindLeftovers: which processes a run ends after an earlier run of its
// workspace, and which record it trusts; each case flips one decision.
func TestFindLeftovers(t *testing.T) {
	if !envReadable {
		t.Skip("environments are not readable here")
	}
	dir := t.TempDir()
	w := &workspace{Name: "w", Dir: dir, StateDir: dir}
	l, _, err := acquireRunLock(w)
	if err != nil {
		t.Fatal(err)
	}
	defer l.release()
	if l.dirID == "" || l.record.Dir != l.dirID || l.record.Start == 0 {
		t.Fatalf("the record names no directory or start: %+v", l.record)
	}
	other := workspaceIDEnv + "=1:1"
	plain := startSleeper(t)                              // recorded, no marker (scrubbed)
	marked := startSleeper(t, workspaceIDEnv+"="+l.dirID) // this workspace's marker, not recorded
	foreign := startSleeper(t, other)                     // recorded, but another workspace's
	parent, _ := processStart(os.Getppid())               // recorded, an ancestor of this run
	earlier := runRecord{PID: 999999999, RunID: "1-1", Dir: l.dirID, Start: 1,
		Children: []recordedProc{plain, foreign, {PID: os.Getppid(), Start: parent}, {PID: plain.PID + 1, Start: 1}}}

	lo := findLeftovers(l, earlier, true)
	if got := pidsOf(lo.procs); !slices.Equal(got, []int{plain.PID, marked.PID}) || lo.pid != earlier.PID || lo.ignored != "" {
		t.Errorf("trusted record: ending %v (pid %d, ignored %q); want %v", got, lo.pid, lo.ignored, []int{plain.PID, marked.PID})
	}

	// A record that ended cleanly: nothing is looked for.
	ended := earlier
	ended.Ended = true
	if lo := findLeftovers(l, ended, true); len(lo.procs) != 0 || lo.ignored != "" {
		t.Errorf("ended record: ending %v, ignored %q", pidsOf(lo.procs), lo.ignored)
	}

	// A process started before the run the record names is not its own.
	late := earlier
	late.Start = plain.Start + 1
	if got := pidsOf(findLeftovers(l, late, true).procs); !slices.Equal(got, []int{marked.PID}) {
		t.Errorf("record of a run started after its children: ending %v; want %v", got, []int{marked.PID})
	}

	// A record written for another directory (a copy): ignored and said;
	// only this workspace's marker is looked for.
	copied := earlier
	copied.Dir = "1:1"
	lo = findLeftovers(l, copied, true)
	if got := pidsOf(lo.procs); !slices.Equal(got, []int{marked.PID}) || lo.pid != 0 || !strings.Contains(lo.ignored, "another directory") {
		t.Errorf("copied record: ending %v (pid %d, ignored %q); want %v", got, lo.pid, lo.ignored, []int{marked.PID})
	}

	// A record naming no directory (an older version's) is not trusted
	// either.
	old := earlier
	old.Dir = ""
	if lo := findLeftovers(l, old, true); !slices.Equal(pidsOf(lo.procs), []int{marked.PID}) || !strings.Contains(lo.ignored, "older version") {
		t.Errorf("record without a directory: ending %v (ignored %q); want %v", pidsOf(lo.procs), lo.ignored, []int{marked.PID})
	}

	// The run a record names is alive: nothing of it is ended.
	live := earlier
	live.PID, live.Start = plain.PID, plain.Start
	lo = findLeftovers(l, live, true)
	if got := pidsOf(lo.procs); !slices.Equal(got, []int{marked.PID}) || !strings.Contains(lo.ignored, "still running") {
		t.Errorf("record of a live run: ending %v (ignored %q); want %v", got, lo.ignored, []int{marked.PID})
	}

	// No record, and a workspace that never ran: nothing is looked for;
	// one that ran: its marker is.
	if lo := findLeftovers(l, runRecord{}, false); len(lo.procs) != 0 {
		t.Errorf("no record, never ran: ending %v", pidsOf(lo.procs))
	}
	if got := pidsOf(findLeftovers(l, runRecord{}, true).procs); !slices.Equal(got, []int{marked.PID}) {
		t.Errorf("no record: ending %v; want %v", got, []int{marked.PID})
	}

	// endProcs ends them, and never a process whose start time changed.
	stale := recordedProc{PID: foreign.PID, Start: foreign.Start + 1}
	endProcs([]recordedProc{plain, marked, stale})
	if sameProcess(plain) || sameProcess(marked) {
		t.Errorf("endProcs left %v running", []int{plain.PID, marked.PID})
	}
	if !sameProcess(foreign) {
		t.Errorf("endProcs ended %d, recorded with another start time", foreign.PID)
	}
}

// TestLockNotPutIntoAReplacedDirectory: a run whose workspace directory was
// replaced by a copy does not put its .lock (its record) into the copy,
// whose own run it would lock out; it still keeps its own directory's.
func TestLockNotPutIntoAReplacedDirectory(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "w")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	w := &workspace{Name: "w", Dir: dir, StateDir: dir}
	l, _, err := acquireRunLock(w)
	if err != nil {
		t.Fatal(err)
	}
	defer l.release()

	// The agent deletes .lock: the run puts it back.
	os.Remove(w.lockPath())
	l.lookAround()
	if _, err := os.Stat(w.lockPath()); err != nil {
		t.Fatalf("a deleted .lock was not put back: %v", err)
	}

	// The directory is replaced by a copy without .lock.
	if err := os.Rename(dir, dir+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	l.lookAround()
	if _, err := os.Stat(w.lockPath()); err == nil {
		t.Fatalf("the run put its .lock into the directory that replaced its own")
	}
	if _, err := os.Stat(filepath.Join(dir+".old", lockFile)); err != nil {
		t.Fatalf("the run's own .lock is gone: %v", err)
	}
}
