package main

// This file finds and ends what an earlier run of a workspace left running
// when that run did not end cleanly (a kill -9 of the tool, a crash). The
// rules are:
//
//   - Every process a run starts (the agent, a test command, git) carries
//     two markers in its environment, which its own children inherit:
//     CLAUDE_ITERATE_RUN, the run's id, and CLAUDE_ITERATE_WORKSPACE_ID,
//     the identity of the workspace's state directory (its device and
//     inode, dirIdentity). A copy of the workspace is another directory,
//     so another marker.
//   - A lock record is trusted only in the directory it was written for
//     (the record names it), and only when the run it names is not alive.
//     A record of an unfinished run found elsewhere — a workspace copied
//     with cp -a while it ran, or a workspace directory replaced by such a
//     copy — is ignored, and the run says so: the processes it names are
//     another run's.
//   - An earlier run did not end cleanly when its trusted record says so,
//     or, without a trusted record (deleted by the agent or by git clean,
//     or copied from elsewhere), when the metadata shows a run or a record
//     of an unfinished run was found: that costs one look through the
//     processes, only then.
//   - The run that holds the lock then ends (SIGTERM, then SIGKILL) every
//     process whose environment carries this workspace's marker, found
//     through /proc (no run of this workspace is going on, as this one
//     holds its lock, so such a process is a leftover, of whichever run:
//     this finds them when the record is gone); and the processes of a
//     trusted record still alive with their recorded start time and
//     started after the run the record names (a process that scrubbed its
//     environment is found only there), unless their environment carries
//     another workspace's marker. Never this process nor one of its
//     ancestors (a leftover agent that started this run), and never a
//     process whose start time changed since it was found (a reused pid).
//   - On macOS, where another process's environment cannot be read, the
//     record is all there is, and the run says so in one line.

import (
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"
)

// workspaceIDEnv carries the workspace's identity to every process a run
// starts.
const workspaceIDEnv = "CLAUDE_ITERATE_WORKSPACE_ID"

// dirIdentity names a directory by its device and inode, which a copy of it
// does not share; "" when the system does not say.
func dirIdentity(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d:%d", uint64(st.Dev), uint64(st.Ino))
}

// markers are the environment entries of every process the run starts:
// its id, and its workspace's identity.
func (l *runLock) markers() []string {
	if l == nil {
		return nil
	}
	m := []string{runIDEnv + "=" + l.record.RunID}
	if l.dirID != "" {
		m = append(m, workspaceIDEnv+"="+l.dirID)
	}
	return m
}

// markEnvironment puts the run's markers in the tool's own environment, so
// that every command it runs inherits them (git, a probe of the CLI), not
// only the children given them explicitly (childSpec.env). Only a run's
// process calls it: it holds one run for its life.
func (l *runLock) markEnvironment() {
	for _, kv := range l.markers() {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
}

// leftovers is what a run found of an earlier run that did not end
// cleanly.
type leftovers struct {
	procs []recordedProc // to end
	// pid is the earlier run's, from its record; 0 without a trusted one.
	pid int
	// ignored says why a record of an unfinished run was not trusted.
	ignored string
	// blind: the earlier run's processes could not be looked for by their
	// marker (macOS).
	blind bool
}

// findLeftovers finds what earlier runs of the workspace left running. l
// is the lock this run holds; prev is the record it found in .lock; ran
// reports that the workspace's metadata shows a run going on, or ever run.
func findLeftovers(l *runLock, prev runRecord, ran bool) leftovers {
	var lo leftovers
	trusted := prev.RunID != "" && prev.Dir != "" && prev.Dir == l.dirID
	if prev.RunID != "" && !prev.Ended {
		switch {
		case prev.Dir == "":
			lo.ignored = "it names no directory (written by an older version?)"
		case !trusted:
			lo.ignored = "it was written for another directory (a copy of a workspace?)"
		case prev.PID != os.Getpid() && prev.Start != 0 && sameProcess(recordedProc{PID: prev.PID, Start: prev.Start}):
			trusted, lo.ignored = false, fmt.Sprintf("the run it names (pid %d) is still running", prev.PID)
		}
	}
	if trusted && prev.Ended || !trusted && !ran && prev.RunID == "" {
		return lo
	}
	var mine map[int]bool // listed once there is a process to end
	seen := map[int]bool{}
	add := func(p recordedProc) {
		if mine == nil {
			mine = selfAndAncestors()
		}
		if !mine[p.PID] && !seen[p.PID] {
			seen[p.PID] = true
			lo.procs = append(lo.procs, p)
		}
	}
	if trusted {
		lo.pid = prev.PID
		for _, c := range prev.Children {
			if !sameProcess(c) || startsOrdered && prev.Start != 0 && c.Start < prev.Start {
				continue
			}
			if ws, ok := envValue(c.PID, workspaceIDEnv); ok && ws != l.dirID {
				continue // another workspace's: its own next run ends it
			}
			add(c)
		}
	}
	if !envReadable {
		lo.blind = true
	} else if l.dirID != "" {
		for _, pid := range processesWithEnv(workspaceIDEnv + "=" + l.dirID) {
			if start, ok := processStart(pid); ok {
				add(recordedProc{PID: pid, Start: start})
			}
		}
	}
	return lo
}

// sameProcess reports whether p is alive with its recorded start time: the
// same process, not a later one with its pid.
func sameProcess(p recordedProc) bool {
	start, ok := processStart(p.PID)
	return ok && start == p.Start
}

// selfAndAncestors are this process and its ancestors, which are never
// ended as leftovers.
func selfAndAncestors() map[int]bool {
	parent := map[int]int{}
	for _, p := range listProcs() {
		parent[p.pid] = p.ppid
	}
	mine := map[int]bool{}
	for pid := os.Getpid(); pid > 1 && !mine[pid]; pid = parent[pid] {
		mine[pid] = true
	}
	return mine
}

// endLeftovers ends what earlier runs of w left running, and says so on
// con. l is the lock this run holds, prev the record it found.
func endLeftovers(con *console, root string, w *workspace, l *runLock, prev runRecord) {
	ran := w.meta != nil && w.meta.Status != "" && w.meta.Status != statusNew
	lo := findLeftovers(l, prev, ran)
	if lo.ignored != "" {
		con.errorf("warning: ignored the record of an unfinished run in %s: %s; no process was ended", relPath(root, w.lockPath()), lo.ignored)
	}
	if lo.blind && (prev.RunID == "" || !prev.Ended) && ran {
		con.errorf("warning: an earlier run of %s may have left processes running: on this system they are found only through the record in %s, not by %s in their environment", w.Name, lockFile, workspaceIDEnv)
	}
	if len(lo.procs) == 0 {
		return
	}
	who := " (its record in .lock gone)"
	if lo.pid > 0 {
		who = fmt.Sprintf(" (pid %d)", lo.pid)
	}
	pids := lo.pids()
	con.errorf("an earlier run of %s%s was killed and left %s running (pid %s): ending them", w.Name, who, processesText(len(pids)), describePIDs(pids))
	endProcs(lo.procs)
}

// endProcs ends the given processes: SIGTERM, then SIGKILL for those still
// alive after sweepTermWait; a process whose start time changed (it ended,
// and its pid was reused) is never signalled.
func endProcs(procs []recordedProc) {
	for _, p := range procs {
		if sameProcess(p) {
			syscall.Kill(p.PID, syscall.SIGTERM)
			syscall.Kill(p.PID, syscall.SIGCONT)
		}
	}
	deadline := time.Now().Add(sweepTermWait)
	for time.Now().Before(deadline) {
		alive := 0
		for _, p := range procs {
			if sameProcess(p) {
				alive++
			}
		}
		if alive == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, p := range procs {
		if sameProcess(p) {
			syscall.Kill(p.PID, syscall.SIGKILL)
		}
	}
}

// pids are the leftovers' pids, in order.
func (lo leftovers) pids() []int {
	pids := make([]int, len(lo.procs))
	for i, p := range lo.procs {
		pids[i] = p.PID
	}
	return pids
}

// processesText is "1 process" or "n processes".
func processesText(n int) string {
	if n == 1 {
		return "1 process"
	}
	return fmt.Sprintf("%d processes", n)
}

// leftText says that who (a killed run) left the processes pids running, and
// that stop, the command given, ends them.
func leftText(who string, pids []int, stop string) string {
	it := map[bool]string{true: "it", false: "them"}[len(pids) == 1]
	return fmt.Sprintf("%s left %s running (pid %s): '%s' ends %s", who, processesText(len(pids)), describePIDs(pids), stop, it)
}

// leftPIDs are the pids of the processes that a killed run of w left
// running, found as its next run would find them (findLeftovers), ending
// nothing: none while a run holds the workspace, whose processes they
// are. It looks through the processes only when the last run did not end
// cleanly.
func leftPIDs(w *workspace) []int {
	if w.runningPID() != 0 {
		return nil
	}
	fi, err := os.Stat(w.StateDir)
	if err != nil {
		return nil
	}
	var prev runRecord
	if f, _, err := openRegular(w.lockPath()); err == nil {
		prev = readRecord(f)
		f.Close()
	}
	ran := w.meta != nil && w.meta.Status != "" && w.meta.Status != statusNew
	return findLeftovers(&runLock{dirID: dirIdentity(fi)}, prev, ran).pids()
}

// endKilledRun ends what a killed run of w left running, for stop, and
// says so on out; it reports whether there was any. It holds the
// workspace's lock meanwhile, as a run would: no run can start and have
// its processes taken for leftovers, and the processes ended are those the
// next run would end (findLeftovers: the workspace's marker in their
// environment, or the killed run's record, start times checked). The lock
// is released with the killed run's record left in .lock: the next run
// still takes that run's totals back and recovers its work in its name.
func endKilledRun(out io.Writer, w *workspace, label string) bool {
	if len(leftPIDs(w)) == 0 {
		return false
	}
	l, prev, err := acquireRunLock(w)
	if err != nil {
		return false // a run took it meanwhile: its stop is the usual one
	}
	defer l.releaseAs(prev)
	lo := findLeftovers(l, prev, true)
	if len(lo.procs) == 0 {
		return false
	}
	pids := lo.pids()
	endProcs(lo.procs)
	fmt.Fprintf(out, "The run of workspace %s was killed, and left %s running (pid %s): ended %s\n", label, processesText(len(pids)), describePIDs(pids), map[bool]string{true: "it", false: "them"}[len(pids) == 1])
	return true
}
